-- flink.state-growth: a job's checkpointed state (and RocksDB keys) over
-- its stored runs: growing with a flat input is missing cleanup (state
-- TTL, timers), growing with the input is capacity; and the date its
-- largest shard's restore crosses the recovery objective or fills a
-- TaskManager's local disk. docs/rules/flink.state-growth.md
local fu = require "flinkutil"
local history = require "optipipe.history"
local units = require "optipipe.units"

local fmt_b, pct = units.format_bytes, units.format_pct

local function is_source(n)
  if n.parents and #n.parents > 0 then
    return false
  elseif n.parents then
    return true
  end
  return (n.name or ""):match("^Source") ~= nil -- stored runs keep no parents
end

-- One run's point: checkpointed state (median of the retained history),
-- RocksDB keys, the sources' input rate, the widest parallelism.
local function point(run)
  local m = run.metrics or {}
  local keys, input, widest = nil, nil, 1
  for _, n in ipairs(run.nodes or {}) do
    widest = math.max(widest, n.parallelism or 1)
    if n.metrics.estimated_keys then
      keys = (keys or 0) + n.metrics.estimated_keys
    end
    if is_source(n) and fu.source_rate(n) then
      input = (input or 0) + fu.source_rate(n)
    end
  end
  return { t = m.captured_at or run.ended_at or run.started_at,
           bytes = m.checkpoint_state_size_p50_bytes, keys = keys, input = input, widest = widest }
end

local WHY = {
  cleanup = "while its input stayed flat (%s): state is kept that nothing reads again",
  capacity = "with its input (%s): this is load, not a leak",
  faster = "faster than its input (%s): part of it is never cleaned up",
  unknown = "(no source rate in the runs: load and leak cannot be told apart)",
}

local ADVICE = {
  cleanup = "Bound the state: state TTL (StateTtlConfig; table.exec.state.ttl for SQL) with "
    .. "the RocksDB compaction filter cleanup, timers that clear what a key no longer needs, "
    .. "windows with an allowed lateness no longer than needed, and no keys that embed a "
    .. "timestamp or session id.",
  capacity = "Plan the capacity: more parallelism (max parallelism leaves room), local recovery "
    .. "and faster restore before the date below.",
}
ADVICE.faster = ADVICE.cleanup .. " " .. ADVICE.capacity
ADVICE.unknown = ADVICE.faster

local function dates(run, g, p, o)
  local out, ev = {}, {}
  local shard = p.bytes / p.widest
  local shard_per_day = g.per_day / p.widest
  local bw = units.parse_bytes(o.restore_bandwidth)
  local rto = units.parse_duration(o.recovery_time_objective)
  local at = history.crossing(g.newest_t, shard, shard_per_day, bw * rto / 1000)
  if at then
    out[#out + 1] = ("makes the largest shard's restore exceed %s (%s per subtask at %s/s) about %s"):format(
      units.format_duration(rto), fmt_b(bw * rto / 1000), fmt_b(bw), history.date(at))
    ev.objective_crossed_at = at
  end
  local disk = units.parse_bytes(o.local_disk)
  local slots = tonumber(fu.cfg(run, "taskmanager.numberOfTaskSlots") or "1") or 1
  if disk > 0 then
    local tm_at = history.crossing(g.newest_t, shard * slots, shard_per_day * slots, disk)
    if tm_at then
      out[#out + 1] = ("fills a TaskManager's %s local disk (%s) about %s"):format(fmt_b(disk),
        units.format_count(slots, "slot"), history.date(tm_at))
      ev.disk_full_at = tm_at
    end
  end
  return out, ev
end

return {
  id = "flink.state-growth",
  title = "Checkpointed state keeps growing from run to run",
  severity = "warning",
  sources = { "flink" },
  tags = { "state", "history", "capacity" },
  options = {
    min_runs = 4,
    min_span = "1 d",
    min_growth = 0.25,
    flat_input = 0.1,
    restore_bandwidth = "200 mb",      -- as flink.recovery-time
    recovery_time_objective = "15 min",
    local_disk = "0",                  -- a TaskManager's RocksDB disk; 0: unknown
  },
  description = "Fits a robust line through the checkpointed state of the job's runs in the "
    .. "run store and compares it with the sources' input rate.",
  check = function(run, ctx)
    local o = ctx.options
    local g, p, measure = history.measure_growth(run, ctx, point, o)
    if not g then
      return
    end
    local show = measure == "bytes" and fmt_b or function(v) return units.format_count(v, "key") end
    local when, ev = {}, {}
    if measure == "bytes" then
      when, ev = dates(run, g, p, o)
    end
    history.growth_evidence(g, ev)
    local why = WHY[g.kind]:format(history.input_change(g))
    ctx.report {
      message = ("The job's %s grew from %s to %s (+%s, about %s a day) over %s in %s, %s.%s"):format(
        measure == "bytes" and "checkpointed state (median checkpoint)" or "RocksDB keys",
        show(g.first), show(g.last), pct(g.growth), show(g.per_day), units.format_count(g.n, "run"),
        units.format_duration(g.span_ms), why,
        #when > 0 and (" At this rate it " .. table.concat(when, ", and ") .. ".") or ""),
      recommendation = ADVICE[g.kind],
      evidence = ev,
    }
  end,
}
