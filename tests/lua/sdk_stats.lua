-- Tests of sdk/lua/optipipe/stats.lua: plain assertions with reference
-- values worked out by hand (and matching numpy where numpy has the same
-- function). Run by tests/unit/test_lua_sdk.c in a state with only
-- base/string/table/math/utf8 opened.
local stats = require "optipipe.stats"

local function near(got, want, tol, what)
  tol = tol or 1e-9
  assert(type(got) == "number", what .. ": expected a number, got " .. tostring(got))
  assert(math.abs(got - want) <= tol * math.max(1, math.abs(want)),
    ("%s: got %.17g, want %.17g"):format(what, got, want))
end

-- A read-only proxy like the ones the engine hands to rules: reads work
-- through __index/__len, any write raises.
local function ro(t)
  return setmetatable({}, {
    __index = function(_, k)
      local v = t[k]
      if type(v) == "table" then
        return ro(v)
      end
      return v
    end,
    __newindex = function() error("read-only table", 2) end,
    __len = function() return #t end,
  })
end

-- Empty input is nil everywhere.
for _, f in ipairs { "sum", "mean", "median", "mad", "stddev", "min", "max" } do
  assert(stats[f]({}) == nil, f .. "({}) should be nil")
end
assert(stats.percentile({}, 50) == nil)
assert(stats.linreg({}, {}) == nil)
assert(stats.theil_sen({}, {}) == nil)
assert(stats.robust_trend({}, {}) == nil)

-- The classic {2,4,4,4,5,5,7,9}: mean 5, population stddev exactly 2,
-- sample stddev sqrt(32/7).
local d = { 2, 4, 4, 4, 5, 5, 7, 9 }
assert(stats.sum(d) == 40 and math.type(stats.sum(d)) == "integer")
near(stats.mean(d), 5, nil, "mean")
near(stats.stddev(d), 2, nil, "population stddev")
near(stats.stddev(d, true), math.sqrt(32 / 7), nil, "sample stddev")
near(stats.median(d), 4.5, nil, "median of 8")
assert(stats.min(d) == 2 and stats.max(d) == 9)
near(stats.sum({ 0.5, 0.25 }), 0.75, nil, "float sum")

-- Percentiles interpolate between closest ranks like numpy's default:
-- np.percentile([1,2,3,4,5], 90) == 4.6; [15,20,35,40,50] at 40 == 29.
near(stats.percentile({ 1, 2, 3, 4, 5 }, 0), 1, nil, "p0")
near(stats.percentile({ 1, 2, 3, 4, 5 }, 25), 2, nil, "p25")
near(stats.percentile({ 1, 2, 3, 4, 5 }, 90), 4.6, nil, "p90")
near(stats.percentile({ 1, 2, 3, 4, 5 }, 100), 5, nil, "p100")
local unsorted = { 50, 15, 40, 20, 35 }
near(stats.percentile(unsorted, 40), 29, nil, "p40 unsorted")
assert(unsorted[1] == 50 and unsorted[2] == 15 and unsorted[5] == 35, "input was reordered")
near(stats.median({ 1, 2, 3, 4 }), 2.5, nil, "median of 4")
near(stats.percentile({ 7 }, 90), 7, nil, "single value")
assert(not pcall(stats.percentile, { 1 }, 101), "p > 100 must raise")
assert(not pcall(stats.percentile, { 1 }, -1), "p < 0 must raise")

-- MAD of {1,1,2,2,4,6,9}: median 2, deviations {1,1,0,0,2,4,7} -> 1.
near(stats.mad({ 1, 1, 2, 2, 4, 6, 9 }), 1, nil, "mad")
near(stats.mad({ 5, 5, 5 }), 0, nil, "mad of constant")

near(stats.stddev({ 7 }), 0, nil, "stddev of one")
assert(stats.stddev({ 7 }, true) == nil, "sample stddev of one is nil")

-- NaN is skipped; other non-numbers raise naming the element.
near(stats.mean({ 1, 0 / 0, 3 }), 2, nil, "mean skips NaN")
assert(stats.mean({ 0 / 0 }) == nil, "only NaN is empty")
local ok, err = pcall(stats.mean, { 1, "2" })
assert(not ok and err:find("element 2", 1, true), tostring(err))
ok, err = pcall(stats.sum, nil)
assert(not ok and err:find("expected an array", 1, true), tostring(err))

-- Integer sums that could overflow fall back to floats.
near(stats.sum({ math.maxinteger, math.maxinteger }), 2.0 * math.maxinteger, 1e-12, "big sum")

-- OLS of x = 1..5, y = {2,4,5,4,5}: sxx 10, sxy 6 -> slope 0.6, intercept
-- 2.2; residuals -0.8 0.6 1 -0.6 -0.2 -> SSres 2.4, SStot 6 -> r2 0.6;
-- slope_se = sqrt(2.4 / 3 / 10).
local xs, ys = { 1, 2, 3, 4, 5 }, { 2, 4, 5, 4, 5 }
local l = stats.linreg(xs, ys)
near(l.slope, 0.6, nil, "linreg slope")
near(l.intercept, 2.2, nil, "linreg intercept")
near(l.r2, 0.6, nil, "linreg r2")
near(l.slope_se, math.sqrt(0.08), nil, "linreg slope_se")
assert(l.n == 5)
l = stats.linreg({ 0, 1, 2, 3 }, { 1, 4, 7, 10 })
near(l.slope, 3, nil, "exact slope")
near(l.intercept, 1, nil, "exact intercept")
near(l.r2, 1, nil, "exact r2")
l = stats.linreg({ 1, 2, 3 }, { 4, 4, 4 })
near(l.slope, 0, nil, "flat slope")
near(l.r2, 1, nil, "flat line through flat data")
assert(stats.linreg({ 1 }, { 1 }) == nil, "one point has no line")
assert(stats.linreg({ 2, 2, 2 }, { 1, 2, 3 }) == nil, "vertical data has no line")
assert(stats.linreg({ 1, 2 }, { 1, 3 }).slope_se == nil, "no slope_se for 2 points")
ok, err = pcall(stats.linreg, { 1, 2, 3 }, { 1, 2 })
assert(not ok and err:find("ys has 2 elements", 1, true), tostring(err))
ok, err = pcall(stats.linreg, { 1, 2 }, { 1, 2, 3 })
assert(not ok and err:find("ys has more", 1, true), tostring(err))

-- Theil-Sen ignores the outlier: slopes between x = 1..5, y = {1,2,3,4,100}
-- are six 1s and 24.75, 32.67, 48.5, 96 -> median 1; intercept
-- median(y - x) = median{0,0,0,0,95} = 0. r2 of y = x: SSres 95^2 = 9025,
-- SStot 21^2+20^2+19^2+18^2+78^2 = 7610 -> 1 - 9025/7610.
local ts = stats.theil_sen({ 1, 2, 3, 4, 5 }, { 1, 2, 3, 4, 100 })
near(ts.slope, 1, nil, "theil_sen slope")
near(ts.intercept, 0, nil, "theil_sen intercept")
assert(ts.n == 5)
local rt = stats.robust_trend({ 1, 2, 3, 4, 5 }, { 1, 2, 3, 4, 100 })
near(rt.slope, 1, nil, "robust slope")
near(rt.intercept, 0, nil, "robust intercept")
near(rt.r2, 1 - 9025 / 7610, nil, "robust r2")
near(rt.resid_mad, 0, nil, "robust resid_mad")
assert(rt.n == 5)

-- Repeated x: pairs with equal x are skipped. Points (1,1) (1,3) (2,2)
-- (2,4): slopes 1, 3, -1, 1 -> median 1; intercept median{0,2,0,2} = 1.
ts = stats.theil_sen({ 1, 1, 2, 2 }, { 1, 3, 2, 4 })
near(ts.slope, 1, nil, "theil_sen repeated x slope")
near(ts.intercept, 1, nil, "theil_sen repeated x intercept")
assert(stats.theil_sen({ 3, 3, 3 }, { 1, 2, 3 }) == nil, "all x equal")
assert(stats.robust_trend({ 1 }, { 2 }) == nil, "one point")

-- Scatter around the trend: y = {3,3,6,10,8} at x = 1..5. The ten pairwise
-- slopes sorted are -2, 0, 1, 5/4, 3/2, 5/3, 7/3, 3, 7/2, 4 -> median
-- (3/2 + 5/3)/2 = 19/12. y - 19x/12 = 17/12, -1/6, 5/4, 11/3, 1/12 ->
-- intercept 5/4. Residuals 1/6, -17/12, 0, 29/12, -7/6 have median 0 and
-- absolute values 0, 1/6, 7/6, 17/12, 29/12 -> resid_mad 7/6.
-- SSres = (4 + 289 + 841 + 196)/144 = 1330/144, SStot = 38 -> r2 =
-- 1 - 1330/5472.
rt = stats.robust_trend({ 1, 2, 3, 4, 5 }, { 3, 3, 6, 10, 8 })
near(rt.slope, 19 / 12, nil, "scatter slope")
near(rt.intercept, 5 / 4, nil, "scatter intercept")
near(rt.resid_mad, 7 / 6, nil, "scatter resid_mad")
near(rt.r2, 1 - 1330 / 5472, nil, "scatter r2")

-- Beyond 200 points the slope comes from a deterministic subsample: a clean
-- line y = 2x + 5 with every 10th point an outlier still gives slope 2
-- and intercept 5, and two calls agree exactly.
local bx, by = {}, {}
for i = 1, 1000 do
  bx[i] = i
  by[i] = (i % 10 == 0) and 1e6 or 2 * i + 5
end
local big = stats.robust_trend(bx, by)
near(big.slope, 2, nil, "subsampled slope")
near(big.intercept, 5, nil, "subsampled intercept")
assert(big.n == 1000)
local again = stats.robust_trend(bx, by)
assert(again.slope == big.slope and again.intercept == big.intercept and again.r2 == big.r2)

-- Read-only proxies work and are not written to.
local p = ro { 5, 1, 4, 2, 3 }
near(stats.median(p), 3, nil, "median of proxy")
near(stats.percentile(p, 25), 2, nil, "percentile of proxy")
near(stats.mad(p), 1, nil, "mad of proxy")
near(stats.sum(p), 15, nil, "sum of proxy")
near(stats.linreg(ro { 1, 2, 3, 4, 5 }, ro { 2, 4, 5, 4, 5 }).slope, 0.6, nil, "linreg of proxies")
near(stats.robust_trend(ro { 1, 2, 3, 4, 5 }, ro { 1, 2, 3, 4, 100 }).slope, 1, nil, "robust of proxies")
assert(p[1] == 5 and p[5] == 3, "proxy source reordered")

-- regression: the history rules' median + MAD test.
local ro5 = { 100, 102, 98, 101, 99 }
local o = { min_history = 3, min_ratio = 1.5, min_increase = 10, mad_threshold = 5 }
local r = stats.regression(300, ro5, o)
near(r.median, 100, nil, "regression median")
near(r.ratio, 3, nil, "regression ratio")
near(r.delta, 200, nil, "regression delta")
assert(r.n == 5 and r.mad == 1)
assert(stats.regression(140, ro5, o) == nil, "under min_ratio")
assert(stats.regression(300, { 100, 100 }, o) == nil, "too few values")
assert(stats.regression(300, { 10, 100, 400, 50, 900 }, o) == nil, "inside the MAD band")
assert(stats.regression(300, ro5, { min_history = 3, min_ratio = 1.5, min_increase = 500,
  mad_threshold = 5 }) == nil, "under min_increase")
assert(stats.regression(0 / 0, ro5, o) == nil, "NaN current")
local f = stats.regression(40, ro5, { min_history = 3, min_ratio = 1.5, min_increase = 10,
  mad_threshold = 5, falls = true })
near(f.ratio, 2.5, nil, "falls ratio")
near(f.delta, 60, nil, "falls delta")
assert(stats.regression(0, ro5, { min_history = 3, min_ratio = 1.5, min_increase = 10,
  mad_threshold = 5, falls = true }).ratio == math.huge, "fell to zero")
assert(stats.regression(90, ro5, { min_history = 3, min_ratio = 1.5, min_increase = 10,
  mad_threshold = 5, falls = true }) == nil, "a small fall")

-- The module table is all functions: no state a rule could trip over.
for k, v in pairs(stats) do
  assert(type(v) == "function", "stats." .. k .. " is not a function")
end
