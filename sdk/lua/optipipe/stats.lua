-- optipipe.stats: descriptive statistics and trend lines for rules.
--
-- Pure Lua 5.4 using only base/table/math, so it runs inside the rule
-- sandbox. Inputs are plain arrays or read-only proxies of them: they are
-- only read through ipairs and never modified (sorting works on a copy).
--
-- Conventions (see docs/lua-helpers.md):
--   * empty input (or, for lines, fewer than two usable points) -> nil;
--   * NaN values are skipped, like the host does for distributions;
--   * a non-number element raises an error naming the function and index.

local M = {}

local floor, abs, sqrt, mtype = math.floor, math.abs, math.sqrt, math.type
local sort = table.sort

-- How many points theil_sen looks at: above this it takes an evenly spaced
-- subsample so the pairwise step stays below ~20k slopes.
local THEIL_SEN_MAX_POINTS = 200

local function is_nan(v)
  return v ~= v
end

-- Copies the numbers of t into a fresh array, skipping NaN.
local function numbers(fname, t)
  if type(t) ~= "table" then
    error(("stats.%s: expected an array, got %s"):format(fname, type(t)), 3)
  end
  local out, n = {}, 0
  for i, v in ipairs(t) do
    if type(v) ~= "number" then
      error(("stats.%s: element %d is a %s, expected a number")
        :format(fname, i, type(v)), 3)
    end
    if not is_nan(v) then
      n = n + 1
      out[n] = v
    end
  end
  return out, n
end

-- Copies the (x, y) pairs of two arrays, skipping pairs with a NaN.
local function pairs_of(fname, xs, ys)
  if type(xs) ~= "table" or type(ys) ~= "table" then
    error(("stats.%s: expected two arrays"):format(fname), 3)
  end
  local x, y, n, count = {}, {}, 0, 0
  for i, xv in ipairs(xs) do
    count = i
    local yv = ys[i]
    if yv == nil then
      error(("stats.%s: ys has %d elements but xs has more"):format(fname, i - 1), 3)
    end
    if type(xv) ~= "number" or type(yv) ~= "number" then
      error(("stats.%s: element %d is not a pair of numbers (x %s, y %s)")
        :format(fname, i, type(xv), type(yv)), 3)
    end
    if not is_nan(xv) and not is_nan(yv) then
      n = n + 1
      x[n], y[n] = xv, yv
    end
  end
  if ys[count + 1] ~= nil then
    error(("stats.%s: xs has %d elements but ys has more"):format(fname, count), 3)
  end
  return x, y, n
end

-- Linear interpolation between closest ranks of a sorted array (numpy's
-- default "linear" method): rank = p/100 * (n - 1), 0-based.
local function quantile_sorted(s, n, p)
  local rank = p / 100 * (n - 1)
  local lo = floor(rank)
  local frac = rank - lo
  local a = s[lo + 1]
  if frac == 0 then
    return a
  end
  return a + (s[lo + 2] - a) * frac
end

local function sorted_copy(fname, t)
  local s, n = numbers(fname, t)
  sort(s)
  return s, n
end

-- Integers stay integers unless the total could overflow (Lua integers
-- wrap silently); then the float sum is returned.
local function sum_of(a, n)
  local si, sf, all_int = 0, 0.0, true
  for i = 1, n do
    local v = a[i]
    sf = sf + v
    if all_int and mtype(v) == "integer" then
      si = si + v
    else
      all_int = false
    end
  end
  if all_int and abs(sf) < 2^62 then
    return si
  end
  return sf
end

local function mean_of(a, n)
  -- Two passes keep the result exact for equal values and limit drift.
  local m = sum_of(a, n) / n
  local c = 0
  for i = 1, n do
    c = c + (a[i] - m)
  end
  return m + c / n
end

local function median_of(a, n)
  local s = {}
  for i = 1, n do
    s[i] = a[i]
  end
  sort(s)
  return quantile_sorted(s, n, 50)
end

--- Sum of the values; nil for an empty array.
function M.sum(t)
  local a, n = numbers("sum", t)
  if n == 0 then
    return nil
  end
  return sum_of(a, n)
end

--- Arithmetic mean; nil for an empty array.
function M.mean(t)
  local a, n = numbers("mean", t)
  if n == 0 then
    return nil
  end
  return mean_of(a, n)
end

--- Smallest value; nil for an empty array.
function M.min(t)
  local a, n = numbers("min", t)
  if n == 0 then
    return nil
  end
  local m = a[1]
  for i = 2, n do
    if a[i] < m then
      m = a[i]
    end
  end
  return m
end

--- Largest value; nil for an empty array.
function M.max(t)
  local a, n = numbers("max", t)
  if n == 0 then
    return nil
  end
  local m = a[1]
  for i = 2, n do
    if a[i] > m then
      m = a[i]
    end
  end
  return m
end

--- p-th percentile (p in 0..100) with linear interpolation between the
--- closest ranks, as numpy.percentile does by default; nil when empty.
function M.percentile(t, p)
  if type(p) ~= "number" or is_nan(p) or p < 0 or p > 100 then
    error("stats.percentile: p must be a number in 0..100, got " .. tostring(p), 2)
  end
  local s, n = sorted_copy("percentile", t)
  if n == 0 then
    return nil
  end
  return quantile_sorted(s, n, p)
end

--- Median (the 50th percentile); nil when empty.
function M.median(t)
  local s, n = sorted_copy("median", t)
  if n == 0 then
    return nil
  end
  return quantile_sorted(s, n, 50)
end

--- Median absolute deviation, unscaled: median(|x - median(x)|). Multiply
--- by 1.4826 to estimate a normal standard deviation. nil when empty.
function M.mad(t)
  local s, n = sorted_copy("mad", t)
  if n == 0 then
    return nil
  end
  local med = quantile_sorted(s, n, 50)
  local d = {}
  for i = 1, n do
    d[i] = abs(s[i] - med)
  end
  sort(d)
  return quantile_sorted(d, n, 50)
end

--- Standard deviation. Population (divide by n, numpy's default) unless
--- sample is true (divide by n - 1; nil for a single value). nil when empty.
function M.stddev(t, sample)
  local a, n = numbers("stddev", t)
  if n == 0 or (sample and n < 2) then
    return nil
  end
  local m = mean_of(a, n)
  local ss = 0
  for i = 1, n do
    local d = a[i] - m
    ss = ss + d * d
  end
  return sqrt(ss / (sample and (n - 1) or n))
end

-- 1 - SSres/SStot of the line y = slope*x + intercept over the points.
-- When every y is equal there is no variance to explain: a line through
-- all points scores 1, any other line 0.
local function r_squared(x, y, n, slope, intercept)
  local my = mean_of(y, n)
  local ss_res, ss_tot = 0, 0
  for i = 1, n do
    local r = y[i] - (slope * x[i] + intercept)
    local d = y[i] - my
    ss_res = ss_res + r * r
    ss_tot = ss_tot + d * d
  end
  if ss_tot == 0 then
    return ss_res == 0 and 1 or 0
  end
  return 1 - ss_res / ss_tot
end

--- Ordinary least squares fit of ys on xs.
--- Returns { slope, intercept, r2, n, slope_se } or nil when there are
--- fewer than two points or every x is equal. slope_se is the standard
--- error of the slope (nil for n = 2): slope +/- 2*slope_se is roughly a
--- 95% confidence interval.
function M.linreg(xs, ys)
  local x, y, n = pairs_of("linreg", xs, ys)
  if n < 2 then
    return nil
  end
  local mx, my = mean_of(x, n), mean_of(y, n)
  local sxx, sxy = 0, 0
  for i = 1, n do
    local dx = x[i] - mx
    sxx = sxx + dx * dx
    sxy = sxy + dx * (y[i] - my)
  end
  if sxx == 0 then
    return nil
  end
  local slope = sxy / sxx
  local intercept = my - slope * mx
  local r2 = r_squared(x, y, n, slope, intercept)
  local se
  if n > 2 then
    local ss_res = 0
    for i = 1, n do
      local r = y[i] - (slope * x[i] + intercept)
      ss_res = ss_res + r * r
    end
    se = sqrt(ss_res / (n - 2) / sxx)
  end
  return { slope = slope, intercept = intercept, r2 = r2, n = n, slope_se = se }
end

-- Theil-Sen on already copied arrays: the median of the slopes between
-- every pair with distinct x, over an evenly spaced subsample of at most
-- THEIL_SEN_MAX_POINTS points (deterministic: same input, same answer).
local function theil_sen_of(x, y, n)
  local idx, m = {}, n
  local cap = THEIL_SEN_MAX_POINTS
  if n > cap then
    m = cap
    for k = 1, m do
      idx[k] = 1 + (k - 1) * (n - 1) // (m - 1)
    end
  else
    for k = 1, m do
      idx[k] = k
    end
  end
  local slopes, ns = {}, 0
  for a = 1, m - 1 do
    local xa, ya = x[idx[a]], y[idx[a]]
    for b = a + 1, m do
      local dx = x[idx[b]] - xa
      if dx ~= 0 then
        ns = ns + 1
        slopes[ns] = (y[idx[b]] - ya) / dx
      end
    end
  end
  if ns == 0 then
    return nil
  end
  sort(slopes)
  local slope = quantile_sorted(slopes, ns, 50)
  local rest = {}
  for i = 1, n do
    rest[i] = y[i] - slope * x[i]
  end
  return slope, median_of(rest, n)
end

--- Theil-Sen line: slope = median of pairwise slopes (robust to up to ~29%
--- outliers), intercept = median(y - slope*x). Returns { slope, intercept,
--- n } or nil with fewer than two points or when every x is equal.
function M.theil_sen(xs, ys)
  local x, y, n = pairs_of("theil_sen", xs, ys)
  if n < 2 then
    return nil
  end
  local slope, intercept = theil_sen_of(x, y, n)
  if not slope then
    return nil
  end
  return { slope = slope, intercept = intercept, n = n }
end

--- Theil-Sen line plus how well it fits: r2 (1 - SSres/SStot of that line;
--- can be below 0 when the robust line fits worse than the mean, which
--- says "no trend") and resid_mad (MAD of the residuals: the typical
--- scatter around the trend). nil like theil_sen.
function M.robust_trend(xs, ys)
  local x, y, n = pairs_of("robust_trend", xs, ys)
  if n < 2 then
    return nil
  end
  local slope, intercept = theil_sen_of(x, y, n)
  if not slope then
    return nil
  end
  local resid = {}
  for i = 1, n do
    resid[i] = y[i] - (slope * x[i] + intercept)
  end
  local med = median_of(resid, n)
  for i = 1, n do
    resid[i] = abs(resid[i] - med)
  end
  return {
    slope = slope,
    intercept = intercept,
    r2 = r_squared(x, y, n, slope, intercept),
    n = n,
    resid_mad = median_of(resid, n),
  }
end

-- The MAD of a normal distribution is 0.6745 sigma.
local MAD_TO_SIGMA = 1.4826

--- Whether cur is far above the robust baseline of vals (earlier values of
--- the same measure): the history rules' one test. o = { min_history,
--- min_ratio, min_increase, mad_threshold [, falls] }: at least min_history
--- values, cur / median >= min_ratio, cur - median >= min_increase (in
--- cur's unit) and cur - median > mad_threshold * 1.4826 * MAD (robust
--- sigmas), so jitter and short histories stay quiet. With falls = true the
--- test is mirrored (median / cur, median - cur: a throughput that fell).
--- Returns { median, mad, ratio, delta, n } or nil.
function M.regression(cur, vals, o)
  local _, n = numbers("regression", vals)
  if type(cur) ~= "number" or is_nan(cur) or n < o.min_history then
    return nil
  end
  local med, mad = M.median(vals), M.mad(vals)
  if med <= 0 then
    return nil
  end
  local ratio, delta = cur / med, cur - med
  if o.falls then
    ratio, delta = cur > 0 and med / cur or math.huge, med - cur
  end
  if ratio < o.min_ratio or delta < o.min_increase
      or delta <= o.mad_threshold * MAD_TO_SIGMA * mad then
    return nil
  end
  return { median = med, mad = mad, ratio = ratio, delta = delta, n = n }
end

return M
