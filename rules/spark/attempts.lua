-- spark.attempts: an app the cluster manager ran more than once (YARN and
-- EMR retry a failed driver: spark.yarn.maxAppAttempts). The attempts are
-- one run (docs/model-spark.md "Attempts"); this rule says what the
-- earlier ones cost and why they failed. When an earlier attempt had
-- finished every job the last one ran, the work was done again in full:
-- the app ran N times, and a non-idempotent write (an append, an insert
-- into) ran N times too. docs/rules/spark.attempts.md
local su = require "sparkutil"
local sd = require "sparkdetect"

local function attempt_list(earlier)
  local ids = {}
  for _, a in ipairs(earlier) do
    ids[#ids + 1] = tostring(a.attempt)
  end
  return sd.list(ids, 8)
end

return {
  id = "spark.attempts",
  title = "The app ran more than once (driver attempts), and what the earlier ones cost",
  severity = "warning",
  sources = { "spark" },
  tags = { "reliability", "cost" },
  description = "Runs whose log holds several App Attempt IDs: the earlier attempts failed "
    .. "and the cluster manager started the app again.",
  options = {},
  check = function(run, ctx)
    local all = run.series.attempts or {}
    local last, earlier = nil, {}
    for _, a in ipairs(all) do
      if a.analyzed then
        last = a
      else
        earlier[#earlier + 1] = a
      end
    end
    if not last or #earlier == 0 then
      return
    end
    local cost, redone, reasons, seen = 0, {}, {}, {}
    for _, a in ipairs(earlier) do
      cost = cost + (a.duration_ms or 0)
      if (a.jobs or 0) > 0 and (a.failed_jobs or 0) == 0 and (a.jobs or 0) >= (last.jobs or 0) then
        redone[#redone + 1] = a
      end
      local r = a.end_reason or "no reason in its log"
      if not seen[r] then
        seen[r] = true
        reasons[#reasons + 1] = r
      end
    end
    local n = #all
    local why = table.concat(reasons, "; ")
    if #redone == #earlier then
      ctx.report {
        message = ("The app ran %d times: attempt%s %s each finished all %s (%s) and then "
          .. "failed (%s), so attempt %s did the same work again. The earlier attempts took "
          .. "%s, %s of the app's time in all."):format(n, #earlier > 1 and "s" or "",
          attempt_list(earlier), su.count(earlier[1].jobs, "job"),
          su.count(earlier[1].tasks or 0, "task"), why, tostring(last.attempt), su.dur(cost),
          su.pct(cost / (cost + (last.duration_ms or 0)))),
        recommendation = "The failure came after the work: read the driver's log of the "
          .. "failed attempts (yarn logs -applicationId " .. run.id .. ", the first "
          .. "attempts' AM container) for what failed after the last job (code after the "
          .. "last action, an exit code, the SparkContext's stop). Until it is fixed, every "
          .. "write ran " .. n .. " times: make the writes idempotent (overwrite, not append), "
          .. "or set spark.yarn.maxAppAttempts=1 for a job whose retry cannot help.",
        evidence = { attempts = n, redone_attempts = #redone, jobs_per_attempt = earlier[1].jobs,
                     earlier_attempts_ms = cost, end_reasons = why },
        impact = { time_saved_ms = math.floor(cost) },
      }
    else
      ctx.report {
        severity = "info",
        message = ("The app ran %d times: attempt%s %s failed (%s) and cost %s before "
          .. "attempt %s ran."):format(n, #earlier > 1 and "s" or "", attempt_list(earlier),
          why, su.dur(cost), tostring(last.attempt)),
        recommendation = "Fix what stopped the earlier attempts (spark.failures names the "
          .. "failed jobs and tasks of the attempt analyzed; the earlier attempts' own "
          .. "failures are in their logs): each retry starts the app from the beginning.",
        evidence = { attempts = n, redone_attempts = #redone, earlier_attempts_ms = cost,
                     end_reasons = why },
        impact = { time_saved_ms = math.floor(cost) },
      }
    end
  end,
}
