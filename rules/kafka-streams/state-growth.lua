-- kafka-streams.state-growth: an app's state bytes (or keys) over its
-- stored runs: growing with a flat input is missing cleanup, growing with
-- the input is capacity; and the date it fills the disk or makes a task's
-- restore exceed the recovery objective. docs/rules/kafka-streams.state-growth.md
local history = require "optipipe.history"
local units = require "optipipe.units"
local ks = require "kstate"

local fmt_b, pct = units.format_bytes, units.format_pct

-- One run's point: active state bytes and keys, the largest task, the
-- input (records/s processed over the threads) and its instances.
local function point(run)
  local bytes, keys, top, input, inst = nil, nil, nil, nil, {}
  for _, t in ipairs(ks.tasks(run)) do
    if not t.standby then
      if t.bytes then
        bytes = (bytes or 0) + t.bytes
        top = math.max(top or 0, t.bytes)
      end
      if t.keys then keys = (keys or 0) + t.keys end
    end
  end
  for _, n in ipairs(run.nodes or {}) do
    if n.kind == "thread" and n.metrics.process_records_per_s then
      input = (input or 0) + n.metrics.process_records_per_s
    end
    local i = (n.attrs or {}).instance
    if i then inst[i] = true end
  end
  local ninst = 0
  for _ in pairs(inst) do ninst = ninst + 1 end
  return { t = run.started_at or run.ended_at, bytes = bytes, keys = keys, top = top, input = input,
           instances = (run.metrics or {}).instances or (ninst > 0 and ninst or 1) }
end

local WHY = {
  cleanup = "while its input stayed flat (%s): old state is never removed",
  capacity = "with its input (%s): this is load, not a leak",
  faster = "faster than its input (%s): part of it is never removed",
  unknown = "(the input rate was not in the runs, so load and leak cannot be told apart)",
}

local ADVICE = {
  cleanup = "Find what keeps old entries: key-value stores need tombstones for dead keys "
    .. "(a punctuator deleting expired entries), window and session stores a retention no "
    .. "longer than queries need, and a join's stores their window; check for keys that "
    .. "embed a timestamp or a session id.",
  capacity = "Plan the capacity: more partitions and instances before the date below, disk "
    .. "for state.dir, and standbys so the larger tasks stay within the recovery objective.",
}
ADVICE.faster = ADVICE.cleanup .. " " .. ADVICE.capacity
ADVICE.unknown = ADVICE.faster

local function dates(g, p, o, run)
  local out, ev = {}, {}
  local disk = (run.metrics or {}).state_disk_capacity_bytes or units.parse_bytes(o.disk_capacity)
  if p.bytes and disk and disk > 0 then
    local per_inst = p.bytes / p.instances
    local at = history.crossing(g.newest_t, per_inst, g.per_day / p.instances, disk)
    if at then
      out[#out + 1] = ("fills the %s state disk of an instance about %s"):format(fmt_b(disk), history.date(at))
      ev.disk_full_at = at
    elseif per_inst >= disk then
      out[#out + 1] = ("already holds more per instance (%s) than its %s disk"):format(fmt_b(per_inst), fmt_b(disk))
    end
  end
  if p.bytes and p.top and p.bytes > 0 then
    local rto = units.parse_duration(o.recovery_time_objective)
    local limit = units.parse_bytes(o.restore_bandwidth) * rto / 1000
    local at = history.crossing(g.newest_t, p.top, g.per_day * p.top / p.bytes, limit)
    if at then
      out[#out + 1] = ("makes its largest task's restore exceed %s (%s at %s/s) about %s"):format(
        units.format_duration(rto), fmt_b(limit), fmt_b(units.parse_bytes(o.restore_bandwidth)), history.date(at))
      ev.objective_crossed_at = at
    end
  end
  return out, ev
end

return {
  id = "kafka-streams.state-growth",
  title = "State keeps growing from run to run",
  severity = "warning",
  sources = { "kafka-streams", "samza" },
  tags = { "state", "history", "capacity" },
  options = {
    min_runs = 4,                     -- stored runs (with this one) to see a trend
    min_span = "1 d",                 -- from the oldest to the newest
    min_growth = 0.25,                -- state up by this share over the span
    flat_input = 0.1,                 -- input moving less than this share is flat
    disk_capacity = "0",              -- state.dir volume per instance; 0: unknown
    restore_bandwidth = "50 mb",      -- as kafka-streams.restore-time
    recovery_time_objective = "15 min",
  },
  description = "Fits a robust line through the state of the app's runs in the run store "
    .. "and compares it with the input's.",
  check = function(run, ctx)
    local o = ctx.options
    local g, p, measure = history.measure_growth(run, ctx, point, o)
    if not g then
      return
    end
    local show = measure == "bytes" and fmt_b or function(v) return units.format_count(v, "key") end
    local when, ev = dates(g, p, o, run)
    history.growth_evidence(g, ev)
    local why = WHY[g.kind]:format(history.input_change(g))
    ctx.report {
      message = ("The app's state grew from %s to %s (+%s, about %s a day) over %s in %s, %s.%s"):format(
        show(g.first), show(g.last), pct(g.growth), show(g.per_day), units.format_count(g.n, "run"),
        units.format_duration(g.span_ms), why,
        #when > 0 and (" At this rate it " .. table.concat(when, ", and ") .. ".") or ""),
      recommendation = ADVICE[g.kind],
      evidence = ev,
    }
  end,
}
