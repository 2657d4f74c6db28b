-- spark.gc: the JVMs spent a large share of task time collecting garbage.
-- Dr. Elephant's executor GC heuristic (Σ GC time / Σ run time; 0.1 is
-- "moderate", 0.15 "severe") over the whole app, with a floor so that toy
-- apps stay quiet; the worst stages are named. The fix: more heap per
-- task (Dr. Elephant's steps: x2 under 4 GiB, x1.5 under 8 GiB, x1.25
-- above) or fewer cores per executor. docs/rules/spark.gc.md
local su = require "sparkutil"
local st = require "sparktime"

return {
  id = "spark.gc",
  title = "Garbage collection eats task time",
  severity = "warning",
  sources = { "spark" },
  tags = { "performance", "memory" },
  options = {
    max_ratio = 0.1,          -- GC / executor run time
    min_run_ms = 10 * 60000,  -- only apps with 10+ minutes of task time
  },
  check = function(run, ctx)
    local o, m = ctx.options, run.metrics
    local run_ms, gc = m.executor_run_ms or 0, m.gc_ms or 0
    if run_ms < o.min_run_ms or gc / run_ms < o.max_ratio then
      return
    end
    local ratio = gc / run_ms
    local worst, worst_ratio = nil, 0
    for _, n in ipairs(su.stages(run)) do
      local r = (n.metrics.executor_run_ms or 0) > 0
        and (n.metrics.gc_ms or 0) / n.metrics.executor_run_ms or 0
      if r > worst_ratio and (n.metrics.executor_run_ms or 0) >= run_ms * 0.05 then
        worst, worst_ratio = n, r
      end
    end
    local mem = su.executor_memory(run)
    local f = mem < 4 * su.GIB and 2 or mem < 8 * su.GIB and 1.5 or 1.25
    local new_mem = su.round_mem(mem * f)
    local cores = su.executor_cores(run)
    local alt = cores > 1 and (" Or keep the memory and lower spark.executor.cores from %d to %d "
      .. "(more heap per task, more executors for the same cores)."):format(cores,
      math.max(1, cores // 2)) or ""
    ctx.report {
      node = worst and worst.id or nil,
      message = ("Tasks spent %s of their run time in garbage collection (%s of %s)%s."):format(
        su.pct(ratio), su.dur(gc), su.dur(run_ms),
        worst and ("; worst: %s with %s"):format(su.stage_label(worst), su.pct(worst_ratio)) or ""),
      recommendation = ("Give each task more heap: raise spark.executor.memory from %s to %s."
        .. "%s Caching fewer or serialized RDDs (MEMORY_AND_DISK_SER) also helps."):format(
        su.mem_string(mem), su.mem_string(new_mem), alt),
      evidence = {
        gc_ratio = su.round(ratio, 3), gc_ms = gc, executor_run_ms = run_ms,
        worst_stage = worst and worst.id or nil,
        worst_stage_gc_ratio = worst and su.round(worst_ratio, 3) or nil,
        executor_memory_bytes = mem, executor_cores = cores,
      },
      changes = { su.change(run, "spark.executor.memory", su.mem_string(new_mem),
                            su.mem_string(mem)) },
      -- GC beyond max_ratio of each stage's run time, as wall time
      impact = { time_saved_ms = (function()
        local t = 0
        for _, n in ipairs(su.stages(run)) do
          local x = (n.metrics.gc_ms or 0) - o.max_ratio * (n.metrics.executor_run_ms or 0)
          t = t + st.stage_wall(n, x)
        end
        return st.ms(t)
      end)() },
    }
  end,
}
