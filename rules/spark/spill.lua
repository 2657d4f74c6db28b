-- spark.spill: tasks spilled a large share of the data they processed
-- because their execution memory was too small; the message says whether
-- it reached disk (disk_spill_bytes) or stayed in memory (0 B on disk: on
-- RAPIDS, GPU memory spilled to host memory). Dr. Elephant's
-- execution-memory spill ratio (memory spilled / max(input, output,
-- shuffle read, shuffle write); 0.1 is its "moderate" level), with an
-- absolute floor. The fix, with numbers: more partitions so each task holds
-- less, or more memory per core; on a GPU app (RAPIDS) fewer concurrent GPU
-- tasks instead of JVM heap. docs/rules/spark.spill.md
local su = require "sparkutil"

return {
  id = "spark.spill",
  title = "Tasks spill: too little execution memory per task",
  severity = "warning",
  sources = { "spark" },
  tags = { "performance", "memory" },
  options = {
    min_ratio = 0.1,               -- memory spilled / data processed
    min_spill_bytes = 512 * 1024 * 1024,
    max_memory_factor = 2,         -- memory proposals grow at most this much
  },
  check = function(run, ctx)
    local o = ctx.options
    local per_task = su.task_memory(run)
    local mem = su.executor_memory(run)
    local cores = su.executor_cores(run)
    for _, n in ipairs(su.stages(run)) do
      local m = n.metrics
      local spill = m.memory_spill_bytes or 0
      local data = su.data_bytes(n)
      if spill >= o.min_spill_bytes and data > 0 and spill / data >= o.min_ratio then
        local ratio = spill / data
        local tasks = math.max(n.parallelism or m.tasks or 1, 1)
        local d = n.dist.memory_spill_bytes
        local task_spill = d and d.p90 or spill / tasks
        -- a task needed about its share of execution memory plus what it spilled
        local factor = (per_task + task_spill) / per_task
        local changes, how = {}, nil
        if su.stage_source(n) ~= "other" then
          local change, txt = su.resize(run, n, factor)
          changes[1] = change
          how = "change " .. txt
        end
        local new_mem = su.round_mem(mem * math.min(factor, o.max_memory_factor))
        local mem_txt = ("raise spark.executor.memory from %s to %s (%s of execution memory "
          .. "per task with %s instead of %s)"):format(
          su.mem_string(mem), su.mem_string(new_mem),
          su.bytes(math.max(new_mem - 300 * su.MIB, 0) * (per_task * cores / math.max(mem - 300 * su.MIB, 1)) / cores),
          su.count(cores, "core"), su.bytes(per_task))
        local gpu = su.gpu(run)
        if gpu then -- GPU memory: the heap does not hold these batches
          local t = tonumber((su.conf(run, "spark.rapids.sql.concurrentGpuTasks"))) or 2
          mem_txt = ("let fewer tasks share each GPU (spark.rapids.sql.concurrentGpuTasks %d "
            .. "-> %d): on the RAPIDS Accelerator spill is GPU memory moved to host memory "
            .. "and disk, which JVM heap does not change"):format(t, math.max(1, t // 2))
          if not changes[1] and t > 1 then
            changes[1] = su.change(run, "spark.rapids.sql.concurrentGpuTasks", tostring(t // 2))
          end
        elseif not changes[1] then -- no partitioning key controls the stage: memory does
          changes[1] = su.change(run, "spark.executor.memory", su.mem_string(new_mem),
                                 su.mem_string(mem))
        end
        local disk = m.disk_spill_bytes or 0
        local disk_txt = su.bytes(disk) .. " on disk"
        if disk == 0 then
          -- RAPIDS spills GPU memory to host memory first; a CPU spill
          -- always goes to disk, and Spark 1.x logs no disk size for it
          disk_txt = gpu and "0 B on disk: it stayed in memory"
            or not su.version_at_least(run, 2, 0)
              and "the disk size is not recorded by this Spark version"
            or "no disk size recorded"
        end
        ctx.report {
          node = n.id,
          message = ("%s spilled %s from memory (%s), %s of the %s it processed; "
            .. "each task had about %s of execution memory and spilled up to %s (p90)."):format(
            su.stage_label(n), su.bytes(spill), disk_txt, su.pct(ratio), su.bytes(data),
            su.bytes(per_task), su.bytes(task_spill)),
          recommendation = (how and ("Give each task less data: %s. Or %s."):format(how, mem_txt)
            or gpu and ("Give each task less data, or %s."):format(mem_txt)
            or ("Give each task more memory: %s, or lower spark.executor.cores."):format(mem_txt)),
          evidence = {
            memory_spill_bytes = spill,
            disk_spill_bytes = (disk > 0 or gpu or su.version_at_least(run, 2, 0)) and disk or nil,
            data_bytes = data, spill_ratio = su.round(ratio, 3), tasks = tasks,
            task_memory_bytes = math.floor(per_task), task_spill_p90_bytes = math.floor(task_spill),
            executor_memory_bytes = mem, executor_cores = cores,
          },
          changes = changes,
        }
      end
    end
  end,
}
