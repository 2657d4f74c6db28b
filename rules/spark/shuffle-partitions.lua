-- spark.shuffle-partitions: spark.sql.shuffle.partitions against the bytes
-- each shuffle task reads. Stages that read a shuffle with exactly that
-- many tasks were cut by the setting (AQE did not coalesce them). Tasks
-- reading more than 1 GiB each spill and straggle; tasks reading a few MiB
-- each spend their time being scheduled. The proposal aims at about
-- 200 MiB per task (the usual 100-200 MB guidance; AQE's advisory size is
-- 64 MiB), rounded to whole waves of the app's cores.
-- docs/rules/spark.shuffle-partitions.md
local su = require "sparkutil"
local st = require "sparktime"

return {
  id = "spark.shuffle-partitions",
  title = "spark.sql.shuffle.partitions does not fit the shuffle size",
  severity = "warning",
  sources = { "spark" },
  tags = { "performance", "partitioning", "config" },
  options = {
    max_task_bytes = 1024 * 1024 * 1024, -- per shuffle task: too big above
    min_task_bytes = su.SHUFFLE_MIN_TASK_BYTES, -- ... too small below (8 MiB)
    target_task_bytes = 200 * 1024 * 1024,
    min_tasks_small = su.SHUFFLE_MIN_TASKS_SMALL, -- "too small" only from 200 tasks
  },
  check = function(run, ctx)
    local o = ctx.options
    local cur, set = su.conf(run, "spark.sql.shuffle.partitions")
    local parts = tonumber(cur)
    if not parts then
      return
    end
    local big, small, nbig, nsmall = nil, nil, 0, 0
    for _, n in ipairs(su.stages(run)) do
      local m = n.metrics
      if (m.shuffle_read_bytes or 0) > 0 and n.parallelism == parts then
        local per = m.shuffle_read_bytes / parts
        if per > o.max_task_bytes then
          nbig = nbig + 1
          if not big or m.shuffle_read_bytes > big.metrics.shuffle_read_bytes then
            big = n
          end
        elseif per < o.min_task_bytes and parts >= o.min_tasks_small then
          nsmall = nsmall + 1
          if not small or m.shuffle_read_bytes > small.metrics.shuffle_read_bytes then
            small = n
          end
        end
      end
    end
    local n, count, dir = big or small, big and nbig or nsmall, big and "large" or "small"
    if not n then
      return
    end
    local bytes = n.metrics.shuffle_read_bytes
    local per = bytes / parts
    local cores = su.total_cores(run)
    local to = su.nice_count(bytes / o.target_task_bytes, cores)
    if not big then
      to = math.max(to, cores or 1)
    end
    if to == parts then
      return
    end
    local aqe = su.conf_bool(run, "spark.sql.adaptive.enabled")
    ctx.report {
      node = n.id,
      message = ("spark.sql.shuffle.partitions is %s%s but %s read %s of shuffle data: %s "
        .. "per task%s."):format(cur, set and "" or " (the default)", su.stage_label(n),
        su.bytes(bytes), su.bytes(per),
        count > 1 and (" (%s alike)"):format(su.count(count, "shuffle stage")) or ""),
      recommendation = ("Set spark.sql.shuffle.partitions to %d (about %s per task%s).%s"):format(
        to, su.bytes(bytes / to), cores and (", %s of %s"):format(
          su.count(math.ceil(to / cores), "wave"), su.count(cores, "core")) or "",
        (not big and not aqe and su.has_key(run, "spark.sql.adaptive.enabled")) and " Or enable spark.sql.adaptive.enabled so that Spark "
          .. "coalesces small partitions itself." or ""),
      evidence = { shuffle_partitions = parts, shuffle_read_bytes = bytes,
                   bytes_per_task = math.floor(per), proposed_partitions = to,
                   stages = count, direction = dir, cores = cores },
      changes = { su.change(run, "spark.sql.shuffle.partitions", tostring(to), cur) },
      -- fewer: the per-task overhead saved; more: cores the stage left idle
      impact = { time_saved_ms = st.ms(big and st.spread(n, parts, to, cores)
        or st.overhead(n, to / parts)) },
    }
  end,
}
