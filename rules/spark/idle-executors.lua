-- spark.idle-executors: cores held by executors but not running tasks.
-- DataFlint's idleCoresTooHigh: idle = 1 - Σ task time / Σ (executor
-- lifetime x cores), alert above 50 %. From the executor timeline
-- (ExecutorAdded/Removed) and the tasks' launch-to-finish times. Static
-- allocation: fewer executors (or dynamic allocation); dynamic allocation:
-- release idle executors sooner and request fewer per backlog.
-- docs/rules/spark.idle-executors.md
local su = require "sparkutil"
local sizing = require "sparksizing"

return {
  id = "spark.idle-executors",
  title = "Executors sit idle: allocated core time far above what tasks used",
  severity = "warning",
  sources = { "spark" },
  tags = { "cost", "resources" },
  options = {
    max_idle_ratio = 0.5,        -- DataFlint: idle cores above 50 %
    min_core_ms = 3600 * 1000,   -- at least one core-hour allocated
    target_utilization = 0.7,    -- size static allocations for 70 % busy
  },
  check = function(run, ctx)
    local o, m = ctx.options, run.metrics
    local alloc = m.executor_core_ms or 0
    local used = (m.task_time_ms or 0) * (tonumber((su.conf(run, "spark.task.cpus"))) or 1)
    if alloc < o.min_core_ms or (m.executors_added or 0) < 2 then
      return
    end
    local idle = 1 - used / alloc
    if idle < o.max_idle_ratio then
      return
    end
    local dyn = su.conf_bool(run, "spark.dynamicAllocation.enabled")
    local cores = su.executor_cores(run)
    local peak = m.executors_max or 0
    local changes, rec = {}, nil
    local why, withheld = sizing.withhold(run)
    if withheld == "local" then
      return -- no executors: the driver's threads ran the tasks
    end
    if why then
      rec = ("No executor count or allocation change is proposed: %s."):format(why)
    elseif dyn and su.platform(run) ~= "databricks" then
      local ratio = su.conf(run, "spark.dynamicAllocation.executorAllocationRatio")
      local idle_to = su.conf(run, "spark.dynamicAllocation.executorIdleTimeout")
      changes[#changes + 1] = su.change(run, "spark.dynamicAllocation.executorAllocationRatio",
                                        "0.5", ratio)
      changes[#changes + 1] = su.change(run, "spark.dynamicAllocation.executorIdleTimeout",
                                        "30s", idle_to)
      rec = ("Dynamic allocation asked for more executors than the tasks kept busy: %srelease "
        .. "idle ones sooner (executorIdleTimeout %s -> 30s)."):format(
        changes[1] and ("request half as many per backlog (executorAllocationRatio %s -> 0.5) "
          .. "and "):format(ratio) or "", idle_to)
    else
      -- one cluster shape: a smaller fixed size when that is enough,
      -- else releasing idle executors (autoscaling / dynamic allocation);
      -- the other is named, not proposed
      local inst = tonumber(run.config["spark.executor.instances"] or "") or peak
      local want = math.max(1, math.ceil(inst * (1 - idle) / o.target_utilization))
      local rel, follow = su.release_idle(run)
      if want < inst then
        local sized, how = su.executor_count(run, want, inst)
        changes = sized
        rec = ("Run with %s instead of %d (about %s busy): %s. The alternative, not proposed "
          .. "with it (one cluster shape): %s to follow the load."):format(
          su.count(want, "executor"), inst, su.pct(o.target_utilization), how, follow)
      else
        changes = rel
        rec = ("%s to follow the load: %d executors are needed at the peak but sit idle "
          .. "between."):format(follow:gsub("^%l", string.upper), inst)
      end
    end
    ctx.report {
      severity = why and "info" or nil,
      message = ("Executors held %s of core time but tasks used %s: %s of the allocated "
        .. "cores sat idle (%s, up to %d at once, %s each)."):format(
        su.dur(alloc), su.dur(used), su.pct(idle), su.count(m.executors_added, "executor"), peak,
        su.count(cores, "core")),
      recommendation = rec,
      evidence = {
        idle_ratio = su.round(idle, 3), allocated_core_ms = alloc, used_core_ms = used,
        executors = m.executors_added, executors_max = peak, executor_cores = cores,
        dynamic_allocation = dyn, sizing_withheld = withheld,
      },
      changes = changes,
    }
  end,
}
