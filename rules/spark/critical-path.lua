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

local model = require "sparksizing"
local jobs_of, groups, estimate, critical, stage_gaps =
  model.jobs_of, model.groups, model.estimate, model.critical, model.stage_gaps

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
  local tail = (", and %s so executors are not held while the driver works"):format(release)
  if model.local_mode(run) or su.gpu(run) then
    -- nothing to release in local mode; GPU executors are not sized by CPU time
    changes = {}
    tail = (" (no allocation change is proposed: %s)"):format(
      (model.withhold(run, o.model_tolerance)))
  end
  ctx.report {
    message = ("The driver worked alone for %s of the app's %s (%s): no job ran, so every "
      .. "executor waited. Jobs took %s; their critical path is %s."):format(
      su.pct(drv / dur), su.dur(dur), su.dur(drv), su.dur(m.jobs_wall_ms or 0), su.dur(crit)),
    recommendation = ("More executors cannot shorten driver time: move driver-side work "
      .. "(collect/toPandas, loops over small queries, schema inference, file listing) "
      .. "into Spark jobs%s."):format(tail),
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
    if model.local_mode(run) or su.gpu(run) then
      return -- no executor count for these (sparksizing.withhold)
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
