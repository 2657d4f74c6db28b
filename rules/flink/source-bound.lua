-- flink.source-bound: the sources themselves are out of capacity (busy,
-- nothing backpressures them) and the job falls behind its input.
-- docs/rules/flink.source-bound.md
local fu = require "flinkutil"
local units = require "optipipe.units"
local graph = require "optipipe.graph"

local pct, fmt_d, fmt_n = units.format_pct, units.format_duration, units.format_num

local quote = fu.quote

local function round(x)
  return fmt_n(math.floor(x + 0.5))
end

local rate_of = fu.source_rate

-- The event-time lag the vertices the source feeds show: capture time -
-- their input watermark (/watermarks), the smallest over the children that
-- read this source alone (another input could hold a child back).
local function fed_watermark_lag_ms(run, n)
  local lag
  for _, id in ipairs(graph.children(run)[n.id] or {}) do
    local c = run.by_id[id]
    local l = c and #c.parents == 1 and c.metrics.watermark_lag_ms
    if l and (not lag or l < lag) then
      lag = l
    end
  end
  return lag
end

-- How far behind the source reads: the event-time lag of what it emits
-- (currentEmitEventTimeLag, else capture time - its output watermark, else
-- the input watermarks of the vertices it feeds), and where it came from.
local function event_lag_ms(run, n)
  local m = n.metrics
  if m.emit_event_time_lag_max_ms then
    return m.emit_event_time_lag_max_ms, "currentEmitEventTimeLag"
  end
  if m.output_watermark_lag_ms then
    return m.output_watermark_lag_ms, "output watermark"
  end
  local l = fed_watermark_lag_ms(run, n)
  return l, l and "watermarks of the vertices it feeds" or nil
end

local function behind_text(e)
  local parts = {}
  if e.backlog_growth then
    parts[#parts + 1] = ("its backlog (pendingRecords, now %s) grows by %s records/s"):format(
      round(e.pending or 0), round(e.backlog_growth))
  end
  if e.lag_ms and e.lag_from == "watermarks of the vertices it feeds" then
    parts[#parts + 1] = ("the watermarks of the vertices it feeds are %s behind the "
      .. "export's capture time (event-time lag)"):format(fmt_d(e.lag_ms))
  elseif e.lag_ms then
    parts[#parts + 1] = ("what it emits is %s behind capture time"):format(fmt_d(e.lag_ms))
  end
  if e.consumer_lag then
    parts[#parts + 1] = ("the Kafka consumer lag is %s"):format(
      units.format_count(math.floor(e.consumer_lag + 0.5), "record"))
  end
  if #parts == 0 then
    return " No lag was exported (pendingRecords, watermarks), so this is capacity at its "
      .. "limit rather than proven lag: any rise in input will become lag."
  end
  return " The job is falling behind its input: " .. table.concat(parts, "; ") .. "."
end

local function evidence_of(run, n, o)
  local m = n.metrics
  local e = { pending = m.pending_records, consumer_lag = m.consumer_lag_max }
  if (m.pending_records_change_per_s or 0) > 0 then
    e.backlog_growth = m.pending_records_change_per_s
  end
  local lag, from = event_lag_ms(run, n)
  if lag and lag >= units.parse_duration(o.min_lag) then
    e.lag_ms, e.lag_from = lag, from
  end
  e.behind = e.backlog_growth ~= nil or e.lag_ms ~= nil
  return e
end

-- Autoscaler-style sizing: the demand is the current rate plus the
-- backlog growth (its TARGET_DATA_RATE = inputRate + d(pendingRecords)/dt),
-- at most max_scale_factor × the current rate in one step.
local function target(n, busy, e, o)
  local p, rate = n.parallelism, rate_of(n)
  local factor = 1
  if rate and rate > 0 and e.backlog_growth then
    factor = math.min((rate + e.backlog_growth) / rate, o.max_scale_factor)
  end
  local to = math.ceil(p * busy * factor / o.target_utilization - 1e-9)
  return math.max(to, p + 1), factor
end

local function chain_text(n)
  local ops = fu.chained_operators(n)
  if #ops == 0 then
    return "Deserialization is a usual cause: measure it with a flame graph "
      .. "(rest.flamegraph.enabled: true) and use a cheaper format or schema."
  end
  return ("%s run%s in the source's thread, chained to it: deserialization and parsing "
    .. "there are a usual cause. Split the chain after the read (startNewChain() or "
    .. "disableChaining() on '%s', with a rebalance()) so that work runs at a parallelism "
    .. "of its own, beyond the partition count; a flame graph (rest.flamegraph.enabled: "
    .. "true) shows which operator takes the time."):format(
      "'" .. table.concat(ops, "', '") .. "'", #ops == 1 and "s" or "", ops[1])
end

local function apply_text(n, to)
  return (" Apply it with pipeline.jobvertex-parallelism-overrides: %s:%d or "
    .. ".setParallelism(%d) on the source."):format(n.id, to, to)
end

-- What to do about the parallelism: raise it to the need, capped at the
-- partitions when they are known (more subtasks than partitions get none).
-- Returns the text and the proposed parallelism (nil: no change helps).
local function sizing(n, busy, need, factor, parts, from, o)
  local p = n.parallelism
  local formula = ("ceil(%d × busy %s × %s demand / %s target utilization) = %d"):format(
    p, pct(busy), units.format_ratio(factor), pct(o.target_utilization), need)
  local src = from == "option" and "option source_partitions"
    or "counted from its Kafka offset metrics"
  if not parts then
    return (" Raise its parallelism from %d to %d (%s), but not beyond the number of "
      .. "partitions (Kafka) or shards it reads: source subtasks without a partition stay "
      .. "idle. If the topic has no more than %s, add partitions first.%s"):format(
        p, need, formula, units.format_count(p, "partition"), apply_text(n, need)), need
  end
  if need <= parts then
    return (" Raise its parallelism from %d to %d (%s): the %d partitions it reads (%s) "
      .. "cover that many subtasks.%s"):format(p, need, formula, parts, src,
        apply_text(n, need)), need
  end
  if parts > p then
    return (" It needs %d subtasks (%s), but it reads %d partitions (%s) and a subtask "
      .. "beyond them gets none: raise its parallelism from %d to %d, and add partitions "
      .. "to the topic (at least %d) to go to %d.%s"):format(need, formula, parts, src, p,
        parts, need, need, apply_text(n, parts)), parts
  end
  return (" It needs %d subtasks (%s), but it reads %d partitions (%s) and already has %d "
    .. "subtasks: more would get no partition. Add partitions to the topic (at least %d), "
    .. "then raise its parallelism to %d."):format(need, formula, parts, src, p, need, need),
    nil
end

local function report(ctx, run, n, busy, o)
  local p = n.parallelism
  local e = evidence_of(run, n, o)
  if not e.behind and busy < o.busy_full then
    ctx.log(("%s: busy %s but no lag exported; below busy_full"):format(n.id, pct(busy)))
    return
  end
  local rate = rate_of(n)
  local parts, from = fu.source_partitions(n, o)
  local need, factor, to
  local text = ""
  if p then
    need, factor = target(n, busy, e, o)
    text, to = sizing(n, busy, need, factor, parts, from, o)
  end
  ctx.report {
    node = n.id,
    severity = e.behind and "warning" or "info",
    message = ("Source %s is out of capacity: busy %s with no backpressure, so nothing "
      .. "downstream slows it — it cannot read faster%s.%s"):format(
        quote(n), pct(busy), rate and (" than its %s records/s"):format(round(rate)) or "",
        behind_text(e)),
    recommendation = ("Give the source more capacity, not the operators after it.%s %s"):format(
      text, chain_text(n)),
    evidence = {
      busy_ratio = busy,
      backpressure_ratio = fu.ratio(n, "backpressure_ratio"),
      ratio_source = n.attrs.ratio_source,
      records_per_s = rate,
      pending_records = e.pending,
      pending_records_change_per_s = e.backlog_growth,
      event_time_lag_ms = e.lag_ms,
      event_time_lag_from = e.lag_from,
      consumer_lag = e.consumer_lag,
      parallelism = p,
      target_parallelism = to,
      needed_parallelism = need,
      partitions = parts,
      partitions_from = from,
      demand_factor = factor,
      chained = #fu.chained_operators(n),
      confidence = e.behind and "high" or "medium",
    },
    changes = to and { { target = n.name or n.id, key = "parallelism", from = p, to = to } } or nil,
  }
end

return {
  id = "flink.source-bound",
  title = "The sources cannot keep up with their input",
  severity = "warning",
  sources = { "flink" },
  tags = { "performance", "parallelism", "lag" },
  options = {
    busy_high = fu.WATERMARK_DEFAULTS.busy_high, -- saturated with proven lag
    busy_full = 0.95,           -- saturated without lag in the export (info)
    min_lag = fu.WATERMARK_DEFAULTS.min_lag,     -- event-time lag counted as behind
    target_utilization = 0.7,   -- the autoscaler's job.autoscaler.utilization.target
    max_scale_factor = 2.0,     -- most demand growth one recommendation assumes
    source_partitions = 0,      -- partitions the sources read (0: from the metric names)
  },
  description = "A source busy near 100 % while nothing backpressures it is the "
    .. "limit of the job: it falls behind its input, and watermarks lag for that "
    .. "reason, not for idleness.",
  check = function(run, ctx)
    if not fu.live(run) or not fu.plan_known(run) then
      return -- without edges every vertex looks like a source (flink.empty-plan)
    end
    local o = ctx.options
    for _, n in ipairs(run.nodes) do
      local busy = fu.saturated_source(n, o)
      if busy then
        report(ctx, run, n, busy, o)
      end
    end
  end,
}
