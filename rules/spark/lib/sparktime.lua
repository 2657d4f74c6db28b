-- sparktime: the wall time a Spark finding would save (impact.time_saved_ms),
-- estimated in one place so that every rule's figure means the same thing:
-- milliseconds of the app's wall clock, an upper bound, 0 when the change
-- saves resources but no time. Task-time sums (executor_run_ms, gc_ms: summed
-- over tasks) become wall time through the stage's own ratio of duration to
-- task time, so a stage that ran 100 tasks at once counts 1/100 of them.
-- docs/json-output.md "impact".
local M = {}

-- Wall ms of x ms of task time in stage n.
function M.stage_wall(n, x)
  local task = n.metrics.task_time_ms or n.metrics.executor_run_ms or 0
  local d = n.duration_ms or 0
  if task <= 0 or d <= 0 or x <= 0 then
    return 0
  end
  return math.min(d, x * d / task)
end

-- Wall ms saved when stage n's tasks, now `tasks` of them, are spread
-- over `to` tasks on `cores` cores (more partitions of a stage that does
-- not fill the cores): duration × (1 − used now / used then).
function M.spread(n, tasks, to, cores)
  local d = n.duration_ms or 0
  if not cores or cores <= 0 or tasks >= cores or to <= tasks then
    return 0
  end
  return d * (1 - tasks / math.min(to, cores))
end

-- Wall ms of stage n's per-task overhead (task time not spent running:
-- scheduling, deserialization, result fetching) that `factor` fewer tasks
-- would not pay (factor < 1: the new task count over the old).
function M.overhead(n, factor)
  local m = n.metrics
  local over = (m.task_time_ms or 0) - (m.executor_run_ms or 0)
  if over <= 0 or factor >= 1 then
    return 0
  end
  return M.stage_wall(n, over * (1 - factor))
end

function M.ms(x)
  return math.max(0, math.floor(x + 0.5))
end

return M
