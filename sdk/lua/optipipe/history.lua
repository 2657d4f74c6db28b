-- optipipe.history: what the history rules (spark.regression,
-- flink.regression, mixed.change-outcome) share about a job's earlier
-- runs: one way to get them, and the differences between two runs' config.
--
-- Pure Lua 5.4 (base/table/math/string) so it runs inside the sandbox;
-- arguments are read, never modified. docs/lua-helpers.md#optipipehistory.

local stats = require "optipipe.stats"
local units = require "optipipe.units"

local M = {}

local DEFAULT_LIMIT = 30

--- The earlier runs of run's job, newest first, at most limit (default 30):
--- the run store's (ctx.history, docs/history.md) when it has any, else the
--- inputs given together with run (run.history, which is oldest first).
function M.earlier(run, ctx, limit)
  limit = limit or DEFAULT_LIMIT
  if type(ctx.history) == "function" then
    local h = ctx.history(run, { limit = limit })
    if #h > 0 then
      return h
    end
  end
  local out, hist = {}, run.history or {}
  for i = #hist, 1, -1 do
    if #out >= limit then
      break
    end
    out[#out + 1] = hist[i]
  end
  return out
end

--- The earlier runs of runs (newest first) that pass keep(run), in order.
function M.filter(runs, keep)
  local out = {}
  for _, h in ipairs(runs) do
    if keep(h) then
      out[#out + 1] = h
    end
  end
  return out
end

--- f(h) for each run of runs that gives a number, in order (nil skipped).
function M.values(runs, f)
  local out = {}
  for _, h in ipairs(runs) do
    local v = f(h)
    if type(v) == "number" and v == v then
      out[#out + 1] = v
    end
  end
  return out
end

--- The config keys whose value differs between before and after (string
--- maps), sorted, as { key, from, to } (from or to nil when unset), leaving
--- out keys for which ignore(key) is true.
function M.config_diff(before, after, ignore)
  local keys, seen = {}, {}
  local function add(k)
    if not seen[k] and not (ignore and ignore(k)) then
      seen[k] = true
      keys[#keys + 1] = k
    end
  end
  for k, v in pairs(after or {}) do
    if (before or {})[k] ~= v then
      add(k)
    end
  end
  for k in pairs(before or {}) do
    if (after or {})[k] == nil then
      add(k)
    end
  end
  table.sort(keys)
  local out = {}
  for i, k in ipairs(keys) do
    out[i] = { key = k, from = (before or {})[k], to = (after or {})[k] }
  end
  return out
end

--- "k: a -> b, k2: unset -> c" for a config_diff result, at most max entries
--- (then "and N more").
function M.describe_diff(diff, max)
  local parts = {}
  for i, d in ipairs(diff) do
    if i > max then
      parts[#parts + 1] = ("and %d more"):format(#diff - max)
      break
    end
    parts[#parts + 1] = ("%s %s -> %s"):format(d.key, d.from or "unset", d.to or "unset")
  end
  return table.concat(parts, ", ")
end

--- The UTC calendar date "YYYY-MM-DD" of epoch milliseconds ms (civil
--- from days, proleptic Gregorian; the sandbox has no os.date).
function M.date(ms)
  local z = ms // 86400000 + 719468
  local era = (z >= 0 and z or z - 146096) // 146097
  local doe = z - era * 146097
  local yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
  local doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
  local mp = (5 * doy + 2) // 153
  local d = doy - (153 * mp + 2) // 5 + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400 + (m <= 2 and 1 or 0)
  return ("%04d-%02d-%02d"):format(y, m, d)
end

--- How a measure grows over runs and with what: points = { { t = epoch ms,
--- v = the measure, input = what drives it or nil }, ... } in any order.
--- Returns nil with fewer than min_runs points or a span under
--- min_span_ms; else { first, last, growth (last/first - 1 of the robust
--- line's ends), per_day (Theil-Sen slope), input_growth (the same for
--- input, nil when not every point has one), kind } where kind is
--- "cleanup" (grows at least min_growth while the input moved less than
--- flat_input), "capacity" (grows no faster than flat_input above the
--- input's growth), "faster" (both grow, the measure faster), "unknown"
--- (no input) or "flat" (grew less than min_growth).
function M.growth(points, o)
  local pts = {}
  for _, p in ipairs(points) do
    if type(p.t) == "number" and type(p.v) == "number" and p.v == p.v then
      pts[#pts + 1] = p
    end
  end
  table.sort(pts, function(a, b) return a.t < b.t end)
  local n = #pts
  if n < o.min_runs or pts[n].t - pts[1].t < o.min_span_ms then
    return nil
  end
  local function ends(f)
    local xs, ys = {}, {}
    for i, p in ipairs(pts) do
      local y = f(p)
      if type(y) ~= "number" or y ~= y then
        return nil
      end
      xs[i], ys[i] = p.t, y
    end
    local line = stats.theil_sen(xs, ys)
    if not line then
      return nil
    end
    local a, b = line.slope * xs[1] + line.intercept, line.slope * xs[n] + line.intercept
    return a, b, line.slope * 86400000
  end
  local a, b, per_day = ends(function(p) return p.v end)
  if not a or a <= 0 then
    return nil
  end
  local r = { first = a, last = b, growth = b / a - 1, per_day = per_day, n = n,
              span_ms = pts[n].t - pts[1].t, newest_t = pts[n].t }
  local ia, ib = ends(function(p) return p.input end)
  if ia and ia > 0 then
    r.input_growth = ib / ia - 1
  end
  if r.growth < o.min_growth then
    r.kind = "flat"
  elseif not r.input_growth then
    r.kind = "unknown"
  elseif math.abs(r.input_growth) < o.flat_input then
    r.kind = "cleanup"
  elseif r.growth <= r.input_growth + o.flat_input then
    r.kind = "capacity"
  else
    r.kind = "faster"
  end
  return r
end

--- The growth of one measure of run over its earlier runs (M.earlier), as
--- the state-growth rules judge it: point(run) gives { t, bytes, keys,
--- input, ... } for a run; the measure is bytes when run has them, else
--- keys; o holds the rule's min_runs, min_span (a duration text),
--- min_growth and flat_input. Returns M.growth's result (never "flat"),
--- run's point and the measure's name ("bytes" or "keys"), or nil.
function M.measure_growth(run, ctx, point, o)
  local p = point(run)
  local measure = p.bytes and "bytes" or p.keys and "keys"
  if not measure or not p.t then
    return nil
  end
  local pts = { { t = p.t, v = p[measure], input = p.input } }
  for _, h in ipairs(M.earlier(run, ctx)) do
    local q = point(h)
    pts[#pts + 1] = { t = q.t, v = q[measure], input = q.input }
  end
  local g = M.growth(pts, { min_runs = o.min_runs, min_span_ms = units.parse_duration(o.min_span),
                            min_growth = o.min_growth, flat_input = o.flat_input })
  if not g or g.kind == "flat" then
    return nil
  end
  return g, p, measure
end

--- g's figures (M.growth) into the evidence table ev: state_first,
--- state_last, growth_ratio, input_growth_ratio, per_day, runs. Returns ev.
function M.growth_evidence(g, ev)
  ev.state_first, ev.state_last, ev.growth_ratio = g.first, g.last, g.growth
  ev.input_growth_ratio, ev.per_day, ev.runs = g.input_growth, g.per_day, g.n
  return ev
end

--- The input's change of g as a signed share ("+12%", "-3%"), or "" when
--- the runs had no input.
function M.input_change(g)
  if not g.input_growth then
    return ""
  end
  return (g.input_growth >= 0 and "+" or "") .. units.format_pct(g.input_growth)
end

--- When a measure at value now (at epoch ms t) growing per_day crosses
--- limit: epoch ms, or nil when it does not grow or is already over.
function M.crossing(t, value, per_day, limit)
  if not per_day or per_day <= 0 or value >= limit then
    return nil
  end
  return t + (limit - value) / per_day * 86400000
end

return M
