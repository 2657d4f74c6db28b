-- spark.critical-path: where the app's wall time goes, as Sparklens shows
-- it. Driver time = the app's duration minus the time covered by jobs
-- (executors can only wait then). The critical path of a job = the longest
-- chain of stages through its DAG, each stage weighing its slowest task:
-- no executor count finishes the job sooner. An estimate of the app's time
-- with E executors (of C cores): driver time + per group of overlapping
-- jobs the longest stage chain, each stage taking max(slowest task,
-- task time / (E x C)) (Graham's bound, where Sparklens replays tasks on
-- slots). The executor count that stops paying off: the fewest executors
-- within `tolerance` of the estimate at the count the app had. A what-if
-- is only as good as the model: when the estimate at the app's own count
-- misses the measured job time by more than `model_tolerance`, the rule
-- says what the model does not see (time no stage ran: driver work
-- between stages and jobs; delay inside stages that task times do not
-- show: scheduling, task launch, waiting for executors) and proposes no
-- count. Cluster sizes are said the platform's way (sparkutil).
-- docs/rules/spark.critical-path.md
local su = require "sparkutil"

-- Jobs with their stages (latest attempts) and times.
local function jobs_of(run)
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
local function longest(job, weight)
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
local function groups(jobs)
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

local function max_task(s)
  local d = s.dist.executor_run_ms
  return d and d.max or 0
end

local function work(s)
  return s.metrics.executor_run_ms or 0
end

-- Estimated wall time of the job groups with `slots` task slots.
local function estimate(gs, slots)
  local t = 0
  for _, g in ipairs(gs) do
    local gt, total = 0, 0
    for _, j in ipairs(g.jobs) do
      gt = math.max(gt, longest(j, function(s)
        return math.max(max_task(s), work(s) / slots)
      end))
      for _, s in ipairs(j.stages) do
        total = total + work(s)
      end
    end
    t = t + math.max(gt, total / slots)
  end
  return t
end

local function critical(gs)
  local t = 0
  for _, g in ipairs(gs) do
    local gt = 0
    for _, j in ipairs(g.jobs) do
      gt = math.max(gt, longest(j, max_task))
    end
    t = t + gt
  end
  return t
end

-- Time no stage of a job group ran (union of stage intervals against
-- the group's span), summed over groups.
local function stage_gaps(gs)
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

-- The model missed the measured job time: what it misses, no proposal.
local function model_miss(run, ctx, gs, base, e0)
  local m = run.metrics
  local measured = m.jobs_wall_ms or 0
  local miss = measured - base
  local gaps = math.min(stage_gaps(gs), math.max(miss, 0))
  local inside = math.max(miss - gaps, 0)
  local parts = {}
  if gaps > 0 then
    parts[#parts + 1] = ("%s when no stage ran (driver work between stages and jobs, job "
      .. "scheduling)"):format(su.dur(gaps))
  end
  if inside > 0 then
    parts[#parts + 1] = ("%s inside stages that task times do not show (scheduling delay, "
      .. "task launch, waiting for executors)"):format(su.dur(inside))
  end
  if miss < 0 then
    parts[#parts + 1] = "the jobs ran faster than their task times allow on these slots "
      .. "(executor counts or cores in the log are incomplete)"
  end
  ctx.report {
    severity = "info",
    message = ("The task-time model puts the jobs at %s with the app's %d executors, but "
      .. "they took %s (%s off, beyond the %s tolerance): it misses %s."):format(
      su.dur(base), e0, su.dur(measured), su.pct(math.abs(miss) / measured),
      su.pct(ctx.options.model_tolerance), table.concat(parts, " and ")),
    recommendation = "No executor count is proposed: a what-if from a model that does not "
      .. "reproduce the measured time would not be trustworthy. Look at the time the model "
      .. "misses first (docs/rules/spark.critical-path.md).",
    evidence = { estimated_jobs_ms = math.floor(base), measured_jobs_ms = measured,
                 model_error = su.round(math.abs(miss) / measured, 3),
                 model_tolerance = ctx.options.model_tolerance,
                 stage_gap_ms = math.floor(gaps), unexplained_in_stages_ms = math.floor(inside),
                 executors = e0 },
  }
end

local function driver_finding(run, ctx, crit)
  local o, m = ctx.options, run.metrics
  local dur, drv = run.duration_ms or 0, m.driver_ms or 0
  if dur < o.min_duration_ms or drv / dur < o.driver_share then
    return
  end
  local changes, release = su.release_idle(run)
  ctx.report {
    message = ("The driver worked alone for %s of the app's %s (%s): no job ran, so every "
      .. "executor waited. Jobs took %s; their critical path is %s."):format(
      su.pct(drv / dur), su.dur(dur), su.dur(drv), su.dur(m.jobs_wall_ms or 0), su.dur(crit)),
    recommendation = ("More executors cannot shorten driver time: move driver-side work "
      .. "(collect/toPandas, loops over small queries, schema inference, file listing) "
      .. "into Spark jobs, and %s so executors are not held while the driver works."):format(
      release),
    evidence = { driver_ms = drv, duration_ms = dur, driver_share = su.round(drv / dur, 3),
                 jobs_wall_ms = m.jobs_wall_ms, critical_path_ms = crit },
    changes = changes,
    impact = { time_saved_ms = 0 },
  }
end

return {
  id = "spark.critical-path",
  title = "Driver time, critical path and the executor count that stops paying off",
  severity = "info",
  sources = { "spark" },
  tags = { "performance", "cost", "resources" },
  options = {
    driver_share = 0.5,        -- driver alone for half the app or more
    min_duration_ms = 120000,  -- apps shorter than 2 minutes stay quiet
    tolerance = 0.1,           -- "about as fast": within 10 % of the estimate
    min_saving = 0.25,         -- propose only when a quarter of the executors go
    min_jobs_ms = 60000,       -- ... and jobs ran at least a minute
    model_tolerance = 0.25,    -- the model within 25 % of the measured job time
  },
  check = function(run, ctx)
    local o, m = ctx.options, run.metrics
    local gs = groups(jobs_of(run))
    if #gs == 0 then
      return
    end
    local crit = critical(gs)
    driver_finding(run, ctx, crit)
    local e0, cores = m.executors_max or 0, su.executor_cores(run)
    if e0 < 2 or (m.jobs_wall_ms or 0) < o.min_jobs_ms then
      return
    end
    local base = estimate(gs, e0 * cores)
    local ideal = e0
    for e = 1, e0 do
      if estimate(gs, e * cores) <= base * (1 + o.tolerance) then
        ideal = e
        break
      end
    end
    if ideal > e0 * (1 - o.min_saving) then
      return
    end
    if math.abs(base - m.jobs_wall_ms) > o.model_tolerance * m.jobs_wall_ms then
      model_miss(run, ctx, gs, base, e0)
      return
    end
    local drv = m.driver_ms or 0
    local at_ideal = estimate(gs, ideal * cores)
    local half = math.max(1, ideal // 2)
    local changes, how = su.executor_count(run, ideal, e0)
    ctx.report {
      severity = "warning",
      message = ("%s would finish about as fast as the %d the app had: the jobs "
        .. "are estimated at %s with %d and %s with %d%s; the critical path "
        .. "through the stages is %s, so no executor count brings the app under %s."):format(
        su.count(ideal, "executor"), e0, su.dur(base), e0, su.dur(at_ideal), ideal,
        half < ideal and (" (%s with %d)"):format(su.dur(estimate(gs, half * cores)), half) or "",
        su.dur(crit), su.dur(drv + crit)),
      recommendation = ("Cap the executors at %d: %s. The other %s mostly waited for "
        .. "the slowest tasks of each stage. Estimated from task times (docs/rules/"
        .. "spark.critical-path.md; the measured job time was %s)."):format(
        ideal, how, su.count(e0 - ideal, "executor"), su.dur(m.jobs_wall_ms or 0)),
      evidence = {
        executors = e0, executor_cores = cores, ideal_executors = ideal,
        estimated_jobs_ms = math.floor(base), estimated_jobs_ms_at_ideal = math.floor(at_ideal),
        measured_jobs_ms = m.jobs_wall_ms, critical_path_ms = crit, driver_ms = drv,
      },
      changes = changes,
    }
  end,
}
