-- spark.skew: one task of a stage runs far longer than the typical one.
-- DataFlint's partitionSkew (max > 5 s and max / median > 10) and Dr.
-- Elephant's task skew (max / median >= 2 on a task over 150 s that is most
-- of the stage). When the slow task also read far more data it is data
-- skew (fix the keys, let AQE split it); otherwise a straggler (speculation).
-- docs/rules/spark.skew.md
local su = require "sparkutil"

local function main_input(n)
  local d = n.dist
  if su.stage_source(n) == "shuffle" then
    return "shuffle read", d.shuffle_read_bytes, n.metrics.slowest_task_shuffle_read_bytes
  end
  return "input", d.input_bytes, n.metrics.slowest_task_input_bytes
end

local function changes_for(run, data_skew, source)
  local out = {}
  if data_skew and source == "shuffle read" then
    local aqe = su.conf(run, "spark.sql.adaptive.enabled")
    if aqe ~= "true" then
      out[#out + 1] = su.change(run, "spark.sql.adaptive.enabled", "true", aqe)
    end
    local sj = su.conf(run, "spark.sql.adaptive.skewJoin.enabled")
    if sj ~= "true" then
      out[#out + 1] = su.change(run, "spark.sql.adaptive.skewJoin.enabled", "true", sj)
    end
    if #out == 0 and su.has_key(run, "spark.sql.adaptive.enabled") then
      -- AQE already on: let it split partitions 3x the median (default 5x)
      local f = run.config["spark.sql.adaptive.skewJoin.skewedPartitionFactor"] or "5.0"
      if (tonumber(f) or 5) > 3 then
        out[#out + 1] = su.change(run, "spark.sql.adaptive.skewJoin.skewedPartitionFactor", "3", f)
      end
    end
  elseif not data_skew then
    local spec = su.conf(run, "spark.speculation")
    if spec ~= "true" then
      out[#out + 1] = su.change(run, "spark.speculation", "true", spec)
    end
  end
  return out
end

return {
  id = "spark.skew",
  title = "Task-time skew inside a stage",
  severity = "warning",
  sources = { "spark" },
  tags = { "performance", "skew" },
  options = {
    ratio = 10,              -- max / median task time (DataFlint)
    min_max_ms = 5000,       -- ... and the slowest task over 5 s
    long_ratio = 2,          -- Dr. Elephant: max / median >= 2 ...
    long_max_ms = 150000,    -- ... on a task over 150 s ...
    long_stage_share = 0.75, -- ... that is most of the stage's time
    min_tasks = 4,
    data_ratio = 2,          -- slow task read this x the median: data skew
  },
  check = function(run, ctx)
    local o = ctx.options
    for _, n in ipairs(su.stages(run)) do
      local d = n.dist.executor_run_ms
      if d and d.count >= o.min_tasks and d.p50 > 0 then
        local ratio = d.max / d.p50
        local share = (n.duration_ms and n.duration_ms > 0) and d.max / n.duration_ms or 0
        local hit = (ratio >= o.ratio and d.max >= o.min_max_ms)
          or (ratio >= o.long_ratio and d.max >= o.long_max_ms and share >= o.long_stage_share)
        if hit then
          local m = n.metrics
          local what, dd, slow_bytes = main_input(n)
          local med_bytes = dd and dd.p50 or 0
          local data_ratio = (med_bytes > 0 and slow_bytes) and slow_bytes / med_bytes or nil
          local data_skew = data_ratio ~= nil and data_ratio >= o.data_ratio
          local where = ("task %d"):format(m.slowest_task_index or -1)
          if m.slowest_task_partition then
            where = where .. (" (partition %d)"):format(m.slowest_task_partition)
          end
          if n.attrs.slowest_task_executor then
            where = where .. (" on executor %s"):format(n.attrs.slowest_task_executor)
          end
          local data_txt = ""
          if data_ratio then
            data_txt = (" It read %s of %s against a median of %s (%s)."):format(
              su.bytes(slow_bytes), what, su.bytes(med_bytes), su.times(data_ratio))
          end
          local excess = d.max - d.p50
          local rec
          if data_skew then
            rec = ("Data skew: a few keys hold most of the rows. Spread them (salt the hot "
              .. "keys, or repartition on a better-distributed key)%s. The stage could "
              .. "finish about %s sooner."):format(su.has_key(run, "spark.sql.adaptive.enabled")
              and " and let adaptive query execution split skewed join partitions"
              or (" (Spark %s has no adaptive skew-join splitting: it came in 3.0)"):format(
                run.engine_version), su.dur(excess))
          else
            rec = ("The slow task did not read more data than the others: a straggler (a "
              .. "slow node, GC, a hot executor). Speculative execution reruns such tasks "
              .. "elsewhere; check executor %s's host."):format(
              n.attrs.slowest_task_executor or "?")
          end
          ctx.report {
            node = n.id,
            message = ("%s: its slowest task ran %s, %s the median of %s (%s); "
              .. "%s.%s"):format(su.stage_label(n), su.dur(d.max), su.times(ratio), su.dur(d.p50),
              su.count(math.floor(d.count), "task"), where, data_txt),
            recommendation = rec,
            evidence = {
              max_task_ms = d.max, median_task_ms = d.p50, skew_ratio = su.round(ratio, 2),
              tasks = math.floor(d.count), slowest_task_index = m.slowest_task_index,
              slowest_task_partition = m.slowest_task_partition,
              slowest_task_executor = n.attrs.slowest_task_executor,
              slowest_task_bytes = slow_bytes, median_task_bytes = med_bytes,
              data_ratio = data_ratio and su.round(data_ratio, 2) or nil,
              stage_duration_ms = n.duration_ms, data_skew = data_skew,
            },
            changes = changes_for(run, data_skew, what),
            impact = { time_saved_ms = math.floor(excess) },
          }
        end
      end
    end
  end,
}
