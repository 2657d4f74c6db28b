-- spark.failures: failed jobs, failed stage attempts, failed task attempts
-- grouped by stage and reason, and executors lost, each with Spark's own
-- reason. Dr. Elephant's failure heuristics read the same events; its
-- remedies are kept where the reason points at configuration (out of
-- memory in the heap -> spark.executor.memory; killed by YARN/Kubernetes
-- for exceeding memory limits -> spark.executor.memoryOverhead; a RAPIDS
-- GPU out-of-memory -> the RAPIDS settings, never the JVM heap). One cause
-- is one finding: jobs cancelled because the SparkContext shut down are
-- listed in the failure that stopped it, and task attempts lost with
-- their executor in the finding of that executor loss, where executors
-- lost the same way are one finding. Messages carry the first line of a
-- stack trace; the evidence keeps it whole.
-- docs/rules/spark.failures.md
local su = require "sparkutil"

-- Reasons that are not failures of the task itself.
local BENIGN = { TaskKilled = true, TaskCommitDenied = true, Resubmitted = true }

local function is_oom(s)
  return s and (s:find("OutOfMemoryError", 1, true) or s:find("Java heap space", 1, true)
    or s:find("GC overhead limit", 1, true))
end

-- RAPIDS Accelerator retry framework: GpuSplitAndRetryOOM, GpuRetryOOM
-- (com.nvidia.spark.rapids.jni), and the older GpuOOM.
local function is_gpu_oom(s)
  return s and (s:find("GpuSplitAndRetryOOM", 1, true) or s:find("GpuRetryOOM", 1, true)
    or s:find("GpuOOM", 1, true))
end

-- The first line of a reason (a stack trace's exception), as a sentence.
local function first_line(s)
  local l = (s or ""):match("^[^\n]*"):gsub("%s+$", "")
  if l ~= "" and not l:find("[.!?:;]$") then
    l = l .. "."
  end
  return l
end

-- A reason without what differs between executors lost the same way
-- (container ids, hosts, addresses), to group them.
local function signature(s)
  return (s or ""):gsub("container_[%w_]+", "container_*"):gsub("host: [^%s]+", "host: *")
    :gsub("%d+%.%d+%.%d+%.%d+:?%d*", "*")
end

local function is_container_kill(s)
  return s and (s:find("exceeding", 1, true) and s:find("memory", 1, true)
    or s:find("OOMKilled", 1, true) or s:find("exit code 137", 1, true)
    or s:find("Exit code: 137", 1, true) or s:find("exitCode=137", 1, true))
end

-- Executor removals that dynamic allocation or the app's end ask for.
local function benign_removal(r)
  if not r or r == "" then
    return true
  end
  local l = r:lower()
  return l:find("idle", 1, true) or l:find("killed by driver", 1, true)
    or l:find("decommission", 1, true) or l:find("shutdown", 1, true)
    or l:find("stopped", 1, true) or l:find("finished", 1, true)
    or l:find("explicit termination", 1, true)
end

-- GPU memory, not the heap: fewer tasks sharing a GPU, more of its memory
-- for the pool, and smaller batches and partitions.
local function gpu_changes(run)
  local out = {}
  local tasks = su.conf(run, "spark.rapids.sql.concurrentGpuTasks")
  local t = tonumber(tasks) or 2
  if t > 1 then
    out[#out + 1] = su.change(run, "spark.rapids.sql.concurrentGpuTasks", tostring(t // 2), tasks)
  end
  local frac = su.conf(run, "spark.rapids.memory.gpu.allocFraction")
  local f = tonumber(frac) or 1
  if f < 0.9 then
    out[#out + 1] = su.change(run, "spark.rapids.memory.gpu.allocFraction", "0.9", frac)
    local max = tonumber(run.config["spark.rapids.memory.gpu.maxAllocFraction"] or "1") or 1
    if max < 0.9 then
      out[#out + 1] = su.change(run, "spark.rapids.memory.gpu.maxAllocFraction", "1.0",
                                run.config["spark.rapids.memory.gpu.maxAllocFraction"])
    end
  end
  local batch = su.conf(run, "spark.rapids.sql.batchSizeBytes")
  return out, ("A GPU ran out of memory (the RAPIDS Accelerator could not split and retry): "
    .. "JVM heap does not help. Let fewer tasks share a GPU (spark.rapids.sql.concurrentGpuTasks "
    .. "%s -> %d)%s, and give each task less data: a smaller spark.rapids.sql.batchSizeBytes "
    .. "(now %s) and smaller input partitions (spark.sql.files.maxPartitionBytes, now %s)."):format(
    tasks, math.max(1, t // 2), f < 0.9 and (", give the GPU pool more of the GPU's memory "
      .. "(spark.rapids.memory.gpu.allocFraction %s -> 0.9)"):format(frac) or "",
    batch, (su.conf(run, "spark.sql.files.maxPartitionBytes")))
end

-- The RAPIDS settings are one set per app: the first finding that names
-- a GPU out-of-memory carries them, the others say so (issue #26: the same
-- three changes repeated in four findings). seen: per check.
local function memory_changes(run, text, seen)
  if is_gpu_oom(text) then
    local changes, fix = gpu_changes(run)
    if seen and seen.gpu then
      return {}, fix .. " (These settings are proposed once, with the other spark.failures "
        .. "finding on this GPU out-of-memory.)"
    end
    if seen then
      seen.gpu = true
    end
    return changes, fix
  elseif is_container_kill(text) then
    local cur, set = su.conf(run, "spark.executor.memoryOverhead")
    local b = su.parse_mem(cur) or 384 * su.MIB
    local change = su.change(run, "spark.executor.memoryOverhead", su.mem_string(b + su.GIB), cur)
    return { change },
      ("The container was killed for using more memory than it asked for: raise "
        .. "%s from %s%s to %s (off-heap, Python and native "
        .. "memory live there)."):format(change.key, cur, set and "" or " (the default)",
        su.mem_string(b + su.GIB))
  elseif is_oom(text) then
    local mem = su.executor_memory(run)
    local to = su.round_mem(mem * 1.5)
    return { su.change(run, "spark.executor.memory", su.mem_string(to), su.mem_string(mem)) },
      ("The heap ran out: raise spark.executor.memory from %s to %s, or give each task "
        .. "less data (more partitions)."):format(su.mem_string(mem), su.mem_string(to))
  end
  return {}, nil
end

-- Executors lost for a reason that is not the app's or dynamic
-- allocation's doing, grouped by reason signature: { sig = { ids, reason,
-- stages = {}, attempts = 0, aborted } }, and executor id -> group.
local function lost_groups(run)
  local groups, order, by_exec = {}, {}, {}
  for _, e in ipairs(run.series.executors or {}) do
    if e.removed_at and not benign_removal(e.removed_reason) then
      local sig = signature(e.removed_reason)
      local g = groups[sig]
      if not g then
        g = { ids = {}, reason = e.removed_reason, stages = {}, attempts = 0 }
        groups[sig] = g
        order[#order + 1] = g
      end
      g.ids[#g.ids + 1] = e.executor_id
      g.first_removed = math.min(g.first_removed or e.removed_at, e.removed_at)
      by_exec[e.executor_id] = g
    end
  end
  return order, by_exec
end

local function task_failures(run, ctx, by_exec, seen)
  local o = ctx.options
  for _, f in ipairs(run.series.task_failures or {}) do
    local n = run.by_id[f.stage]
    local g = f.reason == "ExecutorLostFailure" and by_exec[f.executor_id]
    if g then -- a consequence of that executor loss: told there
      g.stages[#g.stages + 1] = n and su.stage_label(n) or f.stage
      g.attempts = g.attempts + f.count
      g.aborted = g.aborted or (n and n.status == "failed")
    elseif not BENIGN[f.reason] and f.count >= o.min_task_failures then
      local tasks = n and (n.parallelism or 0) or 0
      local changes, fix = memory_changes(run, f.detail, seen)
      local aborted = n and n.status == "failed"
      local line = first_line(f.detail)
      ctx.report {
        node = n and f.stage or nil,
        severity = aborted and "error" or "warning",
        message = ("%s: %s failed with %s%s%s."):format(
          n and su.stage_label(n) or f.stage, su.count(f.count, "task attempt"), f.reason,
          line ~= "" and (": " .. line:gsub("%.$", "")) or "",
          aborted and "; the stage failed" or " (retried)"),
        recommendation = fix or (f.reason == "FetchFailed"
          and "Shuffle output was lost (usually its executor died): check the executor "
            .. "losses, and keep shuffle files available with the external shuffle service "
            .. "or decommissioning."
          or f.reason == "ExecutorLostFailure"
          and "The executor running these tasks died; Spark reran them elsewhere."
          or ("Fix the cause in the code or the data; see the stack trace in the Spark UI "
            .. "for %s."):format(f.stage)),
        evidence = { reason = f.reason, failed_attempts = f.count, tasks = tasks,
                     executor_id = f.executor_id, detail = f.detail },
        changes = changes,
      }
    end
  end
end

local SHUTDOWN = "cancelled because SparkContext was shut down"

local function job_no(n)
  return (n.id:gsub("^job%-", ""))
end

-- Failed jobs. Those cancelled because the SparkContext shut down are
-- consequences of the failure that stopped it (the last other failed job
-- before them; else the first cancelled job speaks for the others) and
-- are listed in its finding, not reported one by one.
local function failed_jobs(run, ctx, seen)
  local failed, cancelled, cause = {}, {}, nil
  for _, n in ipairs(run.nodes) do
    if n.kind == "job" and n.status == "failed" then
      if (n.attrs.failure_reason or ""):find(SHUTDOWN, 1, true) then
        cancelled[#cancelled + 1] = n
      else
        failed[#failed + 1] = n
        cause = n
      end
    end
  end
  if not cause and cancelled[1] then
    cause = table.remove(cancelled, 1)
    failed[#failed + 1] = cause
  end
  local ids = {}
  for _, n in ipairs(cancelled) do
    ids[#ids + 1] = job_no(n)
  end
  for _, n in ipairs(failed) do
    local reason = n.attrs.failure_reason or "unknown"
    local changes, fix = memory_changes(run, reason, seen)
    local also = ""
    if n == cause and #ids > 0 then
      also = (" %s %s %s then cancelled because the SparkContext was shut down."):format(
        #ids == 1 and "Job" or "Jobs", table.concat(ids, ", "), #ids == 1 and "was" or "were")
    end
    ctx.report {
      node = n.id,
      severity = "error",
      message = ("Job %s (%s) failed: %s%s"):format(job_no(n), n.name, first_line(reason), also),
      recommendation = fix or "See the failed stage and its task failures.",
      evidence = { job = n.id, stages = n.attrs.stage_ids, reason = reason,
                   cancelled_jobs = also ~= "" and table.concat(ids, ",") or nil },
      changes = changes,
    }
  end
end

-- When the last stage attempt ended (nil: no stage has an end).
local function work_end(run)
  local t
  for _, n in ipairs(su.stages(run)) do
    if n.ended_at and (not t or n.ended_at > t) then
      t = n.ended_at
    end
  end
  return t
end

local function executor_losses(run, ctx, groups, seen)
  local done = work_end(run)
  for _, g in ipairs(groups) do
    if g.attempts == 0 and done and g.first_removed >= done then
      -- lost after the last task, no task failed on them: nothing was
      -- lost or recomputed (issue #26)
      table.sort(g.ids)
      ctx.report {
        severity = "info",
        message = ("%s lost after the app's last task had finished (%s): %s. No task "
          .. "failed with %s, so nothing was lost or recomputed."):format(
          su.count(#g.ids, "executor was", "executors were"), table.concat(g.ids, ", "),
          (first_line(g.reason):gsub("%.+$", "")), #g.ids == 1 and "it" or "them"),
        recommendation = "Nothing to rerun: the work was done (the driver was stopping, or the "
          .. "cluster reclaimed the nodes). Check the cluster manager's logs only if "
          .. "executors are also lost while tasks run.",
        evidence = { executors_lost = #g.ids, executors = table.concat(g.ids, ","),
                     reason = g.reason, after_last_task = true,
                     lost_ms_after_last_task = g.first_removed - done },
      }
      goto next
    end
    do
    local changes, fix = memory_changes(run, g.reason, seen)
    table.sort(g.ids)
    local tasks = ""
    if g.attempts > 0 then
      tasks = (" %s of %s failed with %s%s."):format(su.count(g.attempts, "task attempt"),
        table.concat(g.stages, ", "), #g.ids == 1 and "it" or "them",
        g.aborted and " and a stage failed" or " and were retried")
    end
    ctx.report {
      severity = g.aborted and "error" or nil,
      message = ("%s lost (%s): %s%s"):format(su.count(#g.ids, "executor was", "executors were"),
        table.concat(g.ids, ", "), first_line(g.reason), tasks),
      recommendation = fix or "Running tasks and cached or shuffle data on them were lost "
        .. "and recomputed; check the cluster manager's logs for these containers.",
      evidence = { executors_lost = #g.ids, executors = table.concat(g.ids, ","),
                   reason = g.reason, failed_attempts = g.attempts > 0 and g.attempts or nil },
      changes = changes,
    }
    end
    ::next::
  end
end

return {
  id = "spark.failures",
  title = "Failed jobs, stages and tasks, and lost executors",
  severity = "warning",
  sources = { "spark" },
  tags = { "reliability" },
  options = { min_task_failures = 1 },
  check = function(run, ctx)
    local groups, by_exec = lost_groups(run)
    local seen = {}
    failed_jobs(run, ctx, seen)
    task_failures(run, ctx, by_exec, seen)
    executor_losses(run, ctx, groups, seen)
  end,
}
