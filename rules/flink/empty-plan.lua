-- flink.empty-plan: a running job whose plan shows nothing to judge (no
-- vertices, or vertices without a single edge): still deploying, or a
-- restore that keeps failing. Said, instead of every capacity and
-- watermark rule staying silent. docs/rules/flink.empty-plan.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local fmt_d = units.format_duration

-- Vertex states that mean "not running yet" (Flink's ExecutionState).
local STARTING = { created = true, scheduled = true, deploying = true, initializing = true,
                   reconciling = true }

local function starting(run)
  local n = 0
  for _, v in ipairs(run.nodes) do
    if STARTING[(v.raw_status or ""):lower()] then
      n = n + 1
    end
  end
  return n
end

-- The newest exception of the history, if any: a restore that fails shows
-- there (state incompatible, a checkpoint that is gone).
local function latest_exception(run)
  local last
  for _, e in ipairs(run.series.exceptions or {}) do
    if e.timestamp_ms and (not last or e.timestamp_ms >= last.timestamp_ms) then
      last = e
    end
  end
  return last
end

return {
  id = "flink.empty-plan",
  title = "A running job with no plan to check",
  severity = "warning",
  sources = { "flink" },
  tags = { "reliability", "inputs" },
  options = {},
  description = "A running job whose export has no vertices, or vertices without a "
    .. "single edge, cannot be checked for bottlenecks, backpressure or watermarks: it "
    .. "is still deploying, or it keeps failing to restore.",
  check = function(run, ctx)
    if run.status ~= "running" or fu.plan_known(run) then
      return
    end
    local nv, st = #run.nodes, starting(run)
    local ex = latest_exception(run)
    local what = nv == 0 and "no vertices at all"
      or ("%d vertices without a single edge between them"):format(nv)
    local why
    if ex then
      why = (" Its newest exception, %s before the capture: %s. A restore that keeps "
        .. "failing looks like this: the job is RUNNING but its tasks never come up."):format(
          fmt_d(math.max(0, (run.metrics.captured_at or ex.timestamp_ms) - ex.timestamp_ms)),
          ((ex.root_cause or ex.exception or ex.exception_class or "unknown"):gsub("%.$", "")))
    elseif st > 0 then
      why = (" %d of them %s still starting (created, scheduled, deploying or "
        .. "initializing): the export was taken while the job deployed."):format(
          st, st == 1 and "is" or "are")
    else
      why = " The export was probably taken while the job deployed."
    end
    ctx.report {
      message = ("The job is running, but its export shows %s: the DAG is unknown, so no "
        .. "bottleneck, backpressure or watermark check could run.%s"):format(what, why),
      recommendation = ex
        and "Fix what the exception history says first (/jobs/<jid>/exceptions): a job "
          .. "that cannot restore its state (a missing or incompatible checkpoint, a "
          .. "changed operator uid) keeps restarting without running. Export it again once "
          .. "every vertex is RUNNING (optipipe fetch flink URL)."
        or "Export the job again once every vertex is RUNNING (optipipe fetch flink URL): "
          .. "the plan (/jobs/<jid>/plan) and the vertex metrics then show where it spends "
          .. "its time.",
      evidence = { vertices = nv, vertices_starting = st,
                   latest_exception = ex and (ex.root_cause or ex.exception) or nil },
    }
  end,
}
