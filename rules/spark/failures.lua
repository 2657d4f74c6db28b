-- spark.failures: failed jobs, failed stage attempts, failed task attempts
-- grouped by stage and reason, and executors lost, each with Spark's own
-- reason. Dr. Elephant's failure heuristics read the same events; its
-- remedies are kept where the reason points at configuration (out of
-- memory in the heap -> spark.executor.memory; killed by YARN/Kubernetes
-- for exceeding memory limits -> spark.executor.memoryOverhead).
-- docs/rules/spark.failures.md
local su = require "sparkutil"

-- Reasons that are not failures of the task itself.
local BENIGN = { TaskKilled = true, TaskCommitDenied = true, Resubmitted = true }

local function is_oom(s)
  return s and (s:find("OutOfMemoryError", 1, true) or s:find("Java heap space", 1, true)
    or s:find("GC overhead limit", 1, true))
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

local function memory_changes(run, text)
  if is_container_kill(text) then
    local cur, set = su.conf(run, "spark.executor.memoryOverhead")
    local b = su.parse_mem(cur) or 384 * su.MIB
    return { { target = su.target(run), key = "spark.executor.memoryOverhead",
               from = cur, to = su.mem_string(b + su.GIB) } },
      ("The container was killed for using more memory than it asked for: raise "
        .. "spark.executor.memoryOverhead from %s%s to %s (off-heap, Python and native "
        .. "memory live there)."):format(cur, set and "" or " (the default)",
        su.mem_string(b + su.GIB))
  elseif is_oom(text) then
    local mem = su.executor_memory(run)
    local to = su.round_mem(mem * 1.5)
    return { { target = su.target(run), key = "spark.executor.memory",
               from = su.mem_string(mem), to = su.mem_string(to) } },
      ("The heap ran out: raise spark.executor.memory from %s to %s, or give each task "
        .. "less data (more partitions)."):format(su.mem_string(mem), su.mem_string(to))
  end
  return {}, nil
end

local function task_failures(run, ctx)
  local o = ctx.options
  for _, f in ipairs(run.series.task_failures or {}) do
    if not BENIGN[f.reason] and f.count >= o.min_task_failures then
      local n = run.by_id[f.stage]
      local tasks = n and (n.parallelism or 0) or 0
      local changes, fix = memory_changes(run, f.detail)
      local aborted = n and n.status == "failed"
      ctx.report {
        node = n and f.stage or nil,
        severity = aborted and "error" or "warning",
        message = ("%s: %s failed with %s%s%s."):format(
          n and su.stage_label(n) or f.stage, su.count(f.count, "task attempt"), f.reason,
          f.detail ~= "" and (": " .. f.detail) or "",
          aborted and "; the stage failed" or " (retried)"),
        recommendation = fix or (f.reason == "ExecutorLostFailure"
          and "The executor running these tasks died; Spark reran them elsewhere. See the "
            .. "executor losses for why."
          or f.reason == "FetchFailed"
          and "Shuffle output was lost (usually its executor died): check the executor "
            .. "losses, and keep shuffle files available with the external shuffle service "
            .. "or decommissioning."
          or ("Fix the cause in the code or the data; see the stack trace in the Spark UI "
            .. "for %s."):format(f.stage)),
        evidence = { reason = f.reason, failed_attempts = f.count, tasks = tasks,
                     executor_id = f.executor_id, detail = f.detail },
        changes = changes,
      }
    end
  end
end

local function failed_jobs(run, ctx)
  for _, n in ipairs(run.nodes) do
    if n.kind == "job" and n.status == "failed" then
      local reason = n.attrs.failure_reason or "unknown"
      local first = reason:match("^[^\n]*") or reason
      local changes, fix = memory_changes(run, reason)
      ctx.report {
        node = n.id,
        severity = "error",
        message = ("Job %s (%s) failed: %s"):format(n.id:gsub("^job%-", ""), n.name, first),
        recommendation = fix or "See the failed stage and its task failures above.",
        evidence = { job = n.id, stages = n.attrs.stage_ids },
        changes = changes,
      }
    end
  end
end

local function executor_losses(run, ctx)
  local lost, reasons, ids = 0, {}, {}
  for _, e in ipairs(run.series.executors or {}) do
    if e.removed_at and not benign_removal(e.removed_reason) then
      lost = lost + 1
      ids[#ids + 1] = e.executor_id
      local r = e.removed_reason
      reasons[r] = (reasons[r] or 0) + 1
    end
  end
  if lost == 0 then
    return
  end
  local top, top_n = nil, 0
  for r, k in pairs(reasons) do
    if k > top_n or (k == top_n and r < top) then
      top, top_n = r, k
    end
  end
  local changes, fix = memory_changes(run, top)
  table.sort(ids)
  ctx.report {
    message = ("%s lost (%s); most often: %s"):format(su.count(lost, "executor was", "executors were"),
      table.concat(ids, ", "), top),
    recommendation = fix or "Running tasks and cached or shuffle data on them were lost "
      .. "and recomputed; check the cluster manager's logs for these containers.",
    evidence = { executors_lost = lost, reason = top, reason_count = top_n },
    changes = changes,
  }
end

return {
  id = "spark.failures",
  title = "Failed jobs, stages and tasks, and lost executors",
  severity = "warning",
  sources = { "spark" },
  tags = { "reliability" },
  options = { min_task_failures = 1 },
  check = function(run, ctx)
    failed_jobs(run, ctx)
    task_failures(run, ctx)
    executor_losses(run, ctx)
  end,
}
