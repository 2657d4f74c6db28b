-- flink.watermark-retention: event-time windows held open by watermarks
-- (a subtask without a watermark, or one far behind), which looks like a
-- capacity problem but is not. docs/rules/flink.watermark-retention.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local fmt_d, fmt_n, count = units.format_duration, units.format_num, units.format_count

local function quote(n)
  return "'" .. (n.name or n.id) .. "'"
end

local function subtask_list(subs)
  if not subs or #subs == 0 then
    return ""
  end
  return (#subs == 1 and " subtask " or " subtasks ") .. fu.join(subs)
end

local function origin_text(s)
  local o = s.origin
  if not o then
    return ""
  end
  if o.kind == "missing" then
    return (" It starts at %s,%s, which emits no watermark (a source subtask "
      .. "without a partition, or an idle partition)."):format(quote(o.node), subtask_list(o.subtasks))
  end
  return (" It comes from %s,%s, %s behind %s siblings (a slow or idle "
    .. "partition holds the minimum)."):format(quote(o.node), subtask_list(o.subtasks),
      fmt_d(o.behind_ms), #o.subtasks == 1 and "its" or "their")
end

local function message(run, s)
  local n, m = s.node, s.node.metrics
  local win = s.window_ms and (" (window %s)"):format(fmt_d(s.window_ms)) or ""
  if s.kind == "missing" then
    local up = fu.running_ms(run)
    return ("No watermark reaches %s%s: %d of %s still report none "
      .. "(Long.MIN_VALUE)%s%s, so its windows never fire and their state keeps "
      .. "growing.%s"):format(quote(n), win, s.without, count(s.subtasks_total, "subtask"),
        up and (" after %s of running"):format(fmt_d(up)) or "",
        m.records_in and (" while %s came in"):format(count(m.records_in, "record")) or "",
        origin_text(s))
  end
  local times = s.window_ms and (", %s its window"):format(units.format_ratio(s.lag_ms / s.window_ms)) or ""
  local msg = ("The watermark of %s%s trails capture time by %s%s (limit %s) "
    .. "while nothing on the way is backpressured and no source is saturated, so "
    .. "this is not a capacity "
    .. "problem: windows stay open and their state is retained."):format(
      quote(n), win, fmt_d(s.lag_ms), times, fmt_d(s.limit_ms))
  if s.spread_ms then
    msg = msg .. (" Subtask%s %s %s behind the others."):format(
      #s.subtasks == 1 and "" or "s", fu.join(s.subtasks), fmt_d(s.spread_ms))
  end
  if s.out_of_orderness_ms then
    msg = msg .. (" The WatermarkAssigner holds watermarks %s behind the data "
      .. "(its out-of-orderness bound)."):format(fmt_d(s.out_of_orderness_ms))
  end
  return msg .. origin_text(s)
end

local NOT_PARALLELISM = " Raising parallelism will not fix this: the windows wait "
  .. "for the slowest input watermark, not for CPU."

-- Idleness settings help only when some input is idle or behind its
-- siblings: a subtask without a watermark, watermarks that spread, or a
-- source reporting idle time.
local function idle_input(run, s)
  if s.kind == "missing" or s.spread_ms or s.origin then
    return true
  end
  for _, n in ipairs(run.nodes) do
    if #n.parents == 0 and (n.metrics.source_idle_time_max_ms or 0) > 0 then
      return true
    end
  end
  return false
end

local EVEN_LAG = "Every subtask's watermark is equally far behind and no input is idle, "
  .. "so idleness settings will not help: the events themselves carry old timestamps. "
  .. "Check the source's event-time lag (currentEmitEventTimeLag) and the timestamp "
  .. "assigner (is it reading the right field, in milliseconds?); a backfill or a "
  .. "producer that is behind shows the same picture."

local function recommendation(run, s, o)
  if s.out_of_orderness_ms then
    return ("Tighten the out-of-orderness bound to what the data needs (SQL: "
      .. "WATERMARK FOR ts AS ts - INTERVAL '5' SECOND; DataStream: "
      .. "WatermarkStrategy.forBoundedOutOfOrderness(Duration.ofSeconds(5))) "
      .. "and handle the rare later records with allowed lateness or a side "
      .. "output.") .. NOT_PARALLELISM
  end
  if not idle_input(run, s) then
    return EVEN_LAG .. NOT_PARALLELISM
  end
  local sql = fu.is_sql(run)
  return ("Let idle inputs stop holding the watermark back: %s. If the source "
    .. "has more subtasks than partitions, set its parallelism to the "
    .. "partition count.%s"):format(
      sql and ("set table.exec.source.idle-timeout to %s"):format(o.idle_timeout)
        or ("declare idleness on the source, WatermarkStrategy.forBoundedOutOfOrderness(...)"
          .. ".withIdleness(Duration.ofMinutes(1)) (SQL jobs: table.exec.source.idle-timeout)"),
      NOT_PARALLELISM)
end

local function changes(run, s, o)
  if s.out_of_orderness_ms or not idle_input(run, s) then
    return nil
  end
  if fu.is_sql(run) then
    return { { target = "job", key = "table.exec.source.idle-timeout",
               from = fu.cfg(run, "table.exec.source.idle-timeout"), to = o.idle_timeout } }
  end
  local src = s.origin and s.origin.node
  if not src then
    for _, n in ipairs(run.nodes) do
      if #n.parents == 0 then
        src = n
        break
      end
    end
  end
  return { { target = src and (src.name or src.id) or "source",
             key = "WatermarkStrategy.withIdleness", to = o.idle_timeout } }
end

local function evidence(run, s)
  local m = s.node.metrics
  return {
    kind = s.kind,
    watermark_subtasks = m.watermark_subtasks,
    subtasks_without_watermark = m.subtasks_without_watermark,
    watermark_lag_ms = s.lag_ms,
    window_ms = s.window_ms,
    lag_limit_ms = s.limit_ms,
    watermark_spread_ms = s.spread_ms,
    out_of_orderness_ms = s.out_of_orderness_ms,
    running_ms = fu.running_ms(run),
    records_in = m.records_in,
    origin_vertex = s.origin and s.origin.node.id,
    origin_subtasks = s.origin and fu.join(s.origin.subtasks),
  }
end

return {
  id = "flink.watermark-retention",
  title = "Watermarks hold event-time windows open",
  severity = "warning",
  sources = { "flink" },
  tags = { "watermarks", "state", "latency" },
  options = {
    lag_factor = fu.WATERMARK_DEFAULTS.lag_factor,
    min_lag = fu.WATERMARK_DEFAULTS.min_lag,
    min_running = fu.WATERMARK_DEFAULTS.min_running,
    bp_high = fu.WATERMARK_DEFAULTS.bp_high,
    busy_high = fu.WATERMARK_DEFAULTS.busy_high,
    idle_timeout = "1 min",
  },
  description = "A subtask without a watermark, or one far behind its "
    .. "siblings, holds every downstream event-time window open; so does an "
    .. "out-of-orderness bound far larger than the window.",
  check = function(run, ctx)
    local o = ctx.options
    for _, s in ipairs(fu.watermark_stalls(run, o)) do
      ctx.report {
        node = s.node.id,
        message = message(run, s),
        recommendation = recommendation(run, s, o),
        evidence = evidence(run, s),
        changes = changes(run, s, o),
      }
    end
  end,
}
