-- Tests of sdk/lua/optipipe/history.lua: where earlier runs come from
-- (ctx.history first, run.history reversed otherwise), filters, values and
-- the config diff the history rules name "what changed" with.
local history = require "optipipe.history"

local function eq(got, want, what)
  assert(got == want, ("%s: got %s, want %s"):format(what, tostring(got), tostring(want)))
end

local run = { history = { { id = "a" }, { id = "b" }, { id = "c" } } }

-- No ctx.history: run.history, newest first, at most limit.
local h = history.earlier(run, {}, 2)
eq(#h, 2, "limit")
eq(h[1].id, "c", "newest first")
eq(h[2].id, "b", "then older")
eq(#history.earlier({}, {}), 0, "no history at all")

-- ctx.history wins when it has runs; it gets the limit (default 30).
local asked
local ctx = { history = function(r, o)
  asked = o.limit
  return { { id = "store-1" } }
end }
eq(history.earlier(run, ctx)[1].id, "store-1", "the store first")
eq(asked, 30, "default limit")
local empty = { history = function() return {} end }
eq(history.earlier(run, empty, 5)[1].id, "c", "an empty store falls back")

-- filter and values keep order and skip non-numbers and NaN.
local runs = { { d = 3 }, { d = "x" }, { d = 0 / 0 }, { d = 1 } }
local v = history.values(runs, function(r) return r.d end)
eq(#v, 2, "values skip")
eq(v[1] + v[2], 4, "values")
eq(#history.filter(runs, function(r) return type(r.d) == "number" end), 3, "filter")

-- config_diff: changed, added, removed keys, sorted; ignore leaves keys out.
local d = history.config_diff({ a = "1", b = "2", gone = "x", id = "1" },
  { a = "1", b = "3", new = "y", id = "2" }, function(k) return k == "id" end)
eq(#d, 3, "diff size")
eq(d[1].key .. d[2].key .. d[3].key, "bgonenew", "sorted")
eq(d[1].from .. ">" .. d[1].to, "2>3", "changed")
eq(d[2].to, nil, "removed")
eq(d[3].from, nil, "added")
eq(history.describe_diff(d, 2), "b 2 -> 3, gone x -> unset, and 1 more", "describe")
eq(#history.config_diff(nil, nil), 0, "nothing")

for k, f in pairs(history) do
  assert(type(f) == "function", "history." .. k .. " is not a function")
end

-- date: civil dates from epoch ms (UTC), before and after 1970.
eq(history.date(0), "1970-01-01", "epoch")
eq(history.date(1700000000000), "2023-11-14", "2023")
eq(history.date(951782400000), "2000-02-29", "leap day")
eq(history.date(-86400000), "1969-12-31", "before 1970")

-- growth: the kind by the input's growth; too few runs or span: nil.
local D = 86400000
local o = { min_runs = 4, min_span_ms = 2 * D, min_growth = 0.2, flat_input = 0.1 }
local function pts(vs, ins)
  local t = {}
  for i, v in ipairs(vs) do
    t[i] = { t = i * D, v = v, input = ins and ins[i] or nil }
  end
  return t
end
local g = history.growth(pts({ 100, 110, 120, 130, 140 }, { 50, 50, 50, 50, 50 }), o)
eq(g.kind, "cleanup", "flat input")
eq(g.per_day, 10, "per day")
eq(math.abs(g.growth - 0.4) < 1e-9, true, "growth of the line")
eq(history.growth(pts({ 100, 110, 120, 130, 140 }, { 50, 55, 60, 65, 70 }), o).kind, "capacity", "with input")
eq(history.growth(pts({ 100, 150, 200, 250, 300 }, { 50, 52, 54, 56, 58 }), o).kind, "faster", "faster than input")
eq(history.growth(pts({ 100, 110, 120, 130, 140 }), o).kind, "unknown", "no input")
eq(history.growth(pts({ 100, 101, 102, 101, 103 }), o).kind, "flat", "flat")
eq(history.growth(pts({ 100, 110, 120 }), o), nil, "too few runs")
-- measure_growth: bytes when the run has them, else keys; its earlier
-- runs from run.history; nil when flat or without a measure.
local function at(i, bytes, keys, input)
  return { t = i * D, bytes = bytes, keys = keys, input = input }
end
local function series(f)
  local r = { p = f(5), history = {} }
  for i = 1, 4 do r.history[i] = { p = f(i) } end
  return r
end
local point = function(r) return r.p end
local og = { min_runs = 4, min_span = "2 d", min_growth = 0.2, flat_input = 0.1 }
local mg, mp, mm = history.measure_growth(series(function(i) return at(i, 90 + 10 * i, 5, 50) end), {}, point, og)
eq(mm, "bytes", "bytes first")
eq(mg.kind, "cleanup", "bytes growing on a flat input")
eq(mp.bytes, 140, "the run's point")
eq(mg.n, 5, "the run and its four earlier ones")
mg, mp, mm = history.measure_growth(series(function(i) return at(i, nil, 90 + 10 * i) end), {}, point, og)
eq(mm .. "/" .. mg.kind, "keys/unknown", "keys without bytes, no input")
eq(history.measure_growth(series(function(i) return at(i, 100) end), {}, point, og), nil, "flat: nil")
eq(history.measure_growth(series(function(i) return at(i) end), {}, point, og), nil, "no measure: nil")
-- growth_evidence and input_change
local ev = history.growth_evidence(g, { kept = 1 })
eq(ev.kept .. "/" .. ev.runs .. "/" .. ev.per_day, "1/5/" .. g.per_day, "evidence added to what was there")
eq(ev.state_first, g.first, "state_first")
eq(history.input_change({ input_growth = 0.25 }), "+25%", "input up")
eq(history.input_change({ input_growth = -0.5 }), "-50%", "input down")
eq(history.input_change({}), "", "no input")
-- crossing: when a growing value meets a limit.
eq(history.crossing(0, 100, 10, 200), 10 * D, "ten days")
eq(history.crossing(0, 300, 10, 200), nil, "already over")
eq(history.crossing(0, 100, -1, 200), nil, "not growing")
