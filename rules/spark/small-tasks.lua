-- spark.small-tasks: the task count does not fit the work.
-- Many tiny tasks (DataFlint's smallTasks: more than 5 000 tasks with a
-- median under 500 ms) pay scheduling overhead for nothing: fewer
-- partitions. Few huge tasks (Dr. Elephant's long tasks: a median over
-- 5 minutes; DataFlint's 5 GiB partition) serialize the work and risk
-- spills and stragglers: more partitions. The key is the one that made the
-- task count: spark.sql.shuffle.partitions after a shuffle,
-- spark.sql.files.maxPartitionBytes for file scans.
-- docs/rules/spark.small-tasks.md
local su = require "sparkutil"
local st = require "sparktime"

return {
  id = "spark.small-tasks",
  title = "Task count does not fit the work (too many tiny or too few huge tasks)",
  severity = "warning",
  sources = { "spark" },
  tags = { "performance", "partitioning" },
  options = {
    many_tasks = 5000,        -- DataFlint smallTasks: more tasks than this ...
    small_task_ms = 500,      -- ... with a median under this
    target_task_ms = 2000,    -- fewer partitions: aim tasks at this long
    long_task_ms = 300000,    -- Dr. Elephant long tasks: median over 5 min
    huge_partition_bytes = 5 * 1024 * 1024 * 1024, -- DataFlint maxPartitionToBig
    good_task_ms = 150000,    -- more partitions: aim at 150 s (Dr. Elephant)
  },
  check = function(run, ctx)
    local o = ctx.options
    for _, n in ipairs(su.stages(run)) do
      local d = n.dist.executor_run_ms
      local tasks = n.parallelism or n.metrics.tasks or 0
      if tasks == 1 then
        goto next -- one task: spark.single-task-stages (no key makes it more)
      end
      if d and d.count > 0 then
        local med = d.p50
        if tasks > o.many_tasks and med < o.small_task_ms then
          if su.small_shuffle(run, n) then
            goto next -- spark.shuffle-partitions sizes it by bytes
          end
          local factor = math.max(med, 1) / o.target_task_ms
          local change, txt = su.resize(run, n, factor)
          local dd = n.dist.duration_ms
          ctx.report {
            node = n.id,
            message = ("%s ran %s with a median of %s each (%s wall time per task "
              .. "including scheduling): most of the time goes to launching tasks."):format(
              su.stage_label(n), su.count(tasks, "task"), su.dur(med), dd and su.dur(dd.p50) or "?"),
            recommendation = ("Use fewer, larger partitions: %s (tasks of about %s), or "
              .. "coalesce() before this stage."):format(txt, su.dur(o.target_task_ms)),
            evidence = { tasks = tasks, median_task_ms = med, target_task_ms = o.target_task_ms,
                         direction = "fewer" },
            changes = { change },
            impact = { time_saved_ms = st.ms(st.overhead(n, factor)) },
          }
        else
          local big = 0
          for _, k in ipairs({ "input_bytes", "shuffle_read_bytes" }) do
            local x = n.dist[k]
            if x and x.max > big then
              big = x.max
            end
          end
          if med >= o.long_task_ms or big >= o.huge_partition_bytes then
            local factor = math.max(med / o.good_task_ms, big / (o.huge_partition_bytes / 4), 2)
            local change, txt = su.resize(run, n, factor)
            local cores = su.total_cores(run)
            ctx.report {
              node = n.id,
              message = ("%s ran only %s with a median of %s each and up to %s of data "
                .. "per task%s."):format(su.stage_label(n), su.count(tasks, "task"), su.dur(med),
                su.bytes(big), cores and (" while %s available"):format(
                  su.count(cores, "core was", "cores were")) or ""),
              recommendation = ("Use more, smaller partitions: %s, so tasks take about %s "
                .. "and use every core."):format(txt, su.dur(math.max(med / factor, 1000))),
              evidence = { tasks = tasks, median_task_ms = med, max_task_bytes = big,
                           cores = cores, direction = "more" },
              changes = { change },
              impact = { time_saved_ms = st.ms(st.spread(n, tasks, tasks * factor, cores)) },
            }
          end
        end
      end
      ::next::
    end
  end,
}
