-- sparksizing: whether a rule may propose an executor count or executor
-- allocation for a run, in one place (issue #26), and the task-time model
-- of the app's jobs that spark.critical-path sizes with (Sparklens'
-- replay bound; docs/rules/spark.critical-path.md). No sizing when:
--   * the app ran in local mode: it has no executors (spark.master
--     local[*], or the only executor is "driver");
--   * it ran on GPUs (RAPIDS): idle CPU cores say nothing of GPU time,
--     and the log has no GPU time;
--   * the task-time model misses the measured job time by more than
--     MODEL_TOLERANCE: spark.critical-path declares it unreliable, so no
--     rule sizes executors on this run's task times either.
-- Rules ask withhold(run); a rule cannot tell another anything, so the
-- "unreliable" mark is computed the same way by every rule that asks.
local su = require "sparkutil"

local M = {}

M.MODEL_TOLERANCE = 0.25 -- spark.critical-path's model_tolerance default

-- Jobs with their stages (latest attempts) and times.
function M.jobs_of(run)
  local jobs, by = {}, {}
  for _, n in ipairs(run.nodes) do
    if n.kind == "job" then
      local j = { node = n, stages = {}, start = n.started_at, stop = n.ended_at }
      jobs[#jobs + 1] = j
      by[n.id] = j
    end
  end
  for _, n in ipairs(su.stages(run)) do
    local j = by[n.attrs.job or ""]
    if j then
      j.stages[#j.stages + 1] = n
      if n.started_at and (not j.start or n.started_at < j.start) then
        j.start = n.started_at
      end
      if n.ended_at and (not j.stop or n.ended_at > j.stop) then
        j.stop = n.ended_at
      end
    end
  end
  local out = {}
  for _, j in ipairs(jobs) do
    if #j.stages > 0 and j.start and j.stop then
      out[#out + 1] = j
    end
  end
  table.sort(out, function(a, b) return a.start < b.start end)
  return out
end

-- Longest path through a job's stages with weight(stage).
function M.longest(job, weight)
  local memo, in_job = {}, {}
  for _, s in ipairs(job.stages) do
    in_job[s.id] = s
  end
  local function path(s, depth)
    if memo[s.id] then
      return memo[s.id]
    end
    local best = 0
    if depth < 200 then
      for _, p in ipairs(s.parents) do
        if in_job[p] then
          best = math.max(best, path(in_job[p], depth + 1))
        end
      end
    end
    memo[s.id] = weight(s) + best
    return memo[s.id]
  end
  local t = 0
  for _, s in ipairs(job.stages) do
    t = math.max(t, path(s, 0))
  end
  return t
end

-- Groups of overlapping jobs (they share the executors).
function M.groups(jobs)
  local out, cur = {}, nil
  for _, j in ipairs(jobs) do
    if cur and j.start < cur.stop then
      cur.jobs[#cur.jobs + 1] = j
      cur.stop = math.max(cur.stop, j.stop)
    else
      cur = { jobs = { j }, stop = j.stop }
      out[#out + 1] = cur
    end
  end
  return out
end

function M.max_task(s)
  local d = s.dist.executor_run_ms
  return d and d.max or 0
end

function M.work(s)
  return s.metrics.executor_run_ms or 0
end

-- Estimated wall time of the job groups with `slots` task slots.
function M.estimate(gs, slots)
  local t = 0
  for _, g in ipairs(gs) do
    local gt, total = 0, 0
    for _, j in ipairs(g.jobs) do
      gt = math.max(gt, M.longest(j, function(s)
        return math.max(M.max_task(s), M.work(s) / slots)
      end))
      for _, s in ipairs(j.stages) do
        total = total + M.work(s)
      end
    end
    t = t + math.max(gt, total / slots)
  end
  return t
end

function M.critical(gs)
  local t = 0
  for _, g in ipairs(gs) do
    local gt = 0
    for _, j in ipairs(g.jobs) do
      gt = math.max(gt, M.longest(j, M.max_task))
    end
    t = t + gt
  end
  return t
end

-- Time no stage of a job group ran (union of stage intervals against
-- the group's span), summed over groups.
function M.stage_gaps(gs)
  local gap = 0
  for _, g in ipairs(gs) do
    local iv, start = {}, nil
    for _, j in ipairs(g.jobs) do
      start = math.min(start or j.start, j.start)
      for _, s in ipairs(j.stages) do
        if s.started_at and s.ended_at then
          iv[#iv + 1] = { s.started_at, s.ended_at }
        end
      end
    end
    table.sort(iv, function(a, b) return a[1] < b[1] end)
    local covered, cur_a, cur_b = 0, nil, nil
    for _, x in ipairs(iv) do
      if cur_b and x[1] <= cur_b then
        cur_b = math.max(cur_b, x[2])
      else
        if cur_b then
          covered = covered + (cur_b - cur_a)
        end
        cur_a, cur_b = x[1], x[2]
      end
    end
    if cur_b then
      covered = covered + (cur_b - cur_a)
    end
    gap = gap + math.max(0, (g.stop - start) - covered)
  end
  return gap
end

-- Local mode: no executors, only the driver's JVM running tasks.
function M.local_mode(run)
  local p = run.attrs and (run.attrs.cluster_manager or run.attrs.platform)
  if p == "local" then
    return true
  end
  local ex = run.series and run.series.executors or {}
  if #ex == 0 then
    return false
  end
  for _, e in ipairs(ex) do
    if e.executor_id ~= "driver" then
      return false
    end
  end
  return true
end

-- The task-time model at the app's own executor count: { estimate,
-- measured, error, executors, cores, groups }, or nil when the run has
-- fewer than 2 executors or no timed job.
function M.model(run)
  local m = run.metrics
  local e0, cores = m.executors_max or 0, su.executor_cores(run)
  local measured = m.jobs_wall_ms or 0
  if e0 < 2 or measured <= 0 then
    return nil
  end
  local gs = M.groups(M.jobs_of(run))
  if #gs == 0 then
    return nil
  end
  local base = M.estimate(gs, e0 * cores)
  return { estimate = base, measured = measured, error = math.abs(base - measured) / measured,
           executors = e0, cores = cores, groups = gs }
end

-- nil when executor counts and allocation may be proposed for run, else
-- why not (a sentence) and a short word for evidence: "local", "gpu" or
-- "model". tolerance: the model's (default MODEL_TOLERANCE).
function M.withhold(run, tolerance)
  if M.local_mode(run) then
    return "the app ran in local mode: it has no executors to add, remove or release "
      .. "(only the driver's JVM and the thread count of local[N])", "local"
  end
  if su.gpu(run) then
    return "the app ran on GPUs (RAPIDS): idle CPU cores say nothing about GPU time, "
      .. "and the log has no GPU time to size executors by", "gpu"
  end
  local mo = M.model(run)
  tolerance = tolerance or M.MODEL_TOLERANCE
  if mo and mo.error > tolerance then
    return ("the task-time model puts the jobs at %s but they took %s (%s off, beyond "
      .. "the %s tolerance; spark.critical-path): a size from task times would not be "
      .. "trustworthy"):format(su.dur(mo.estimate), su.dur(mo.measured), su.pct(mo.error),
      su.pct(tolerance)), "model"
  end
  return nil
end

return M
