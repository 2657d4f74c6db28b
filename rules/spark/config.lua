-- spark.config: settings known to cost time or money, from the app's own
-- Spark properties (Dr. Elephant's configuration heuristic, updated for
-- Spark 3): the Java serializer on an app whose RDD code (not DataFrame/
-- SQL) shuffles much, dynamic allocation
-- with neither shuffle tracking nor the external shuffle service, and
-- adaptive query execution switched off on a SQL app.
-- docs/rules/spark.config.md
local su = require "sparkutil"
local sizing = require "sparksizing"

local KRYO = "org.apache.spark.serializer.KryoSerializer"

-- Shuffle bytes written by stages of jobs outside any SQL execution: RDD
-- code, whose records spark.serializer encodes. DataFrame/SQL shuffles
-- (jobs with attrs.sql) use Spark's own UnsafeRow format whatever the
-- serializer says, so Kryo changes nothing there.
local function rdd_shuffle_bytes(run)
  local sql_job = {}
  for _, n in ipairs(run.nodes) do
    if n.kind == "job" then
      sql_job[n.id] = n.attrs.sql ~= nil
    end
  end
  local b = 0
  for _, n in ipairs(su.stages(run)) do
    -- a stage in an SQL Exchange scope is a SQL shuffle even in a job with
    -- no SQL execution id (Databricks runs many so)
    if not sql_job[n.attrs.job or ""] and n.attrs.sql_exchange ~= "true" then
      b = b + (n.metrics.shuffle_write_bytes or 0)
    end
  end
  return b
end

local function serializer(run, ctx)
  local v, _, from = su.conf(run, "spark.serializer")
  local shuffled = rdd_shuffle_bytes(run)
  if v:find("JavaSerializer", 1, true) and shuffled >= ctx.options.min_shuffle_bytes then
    local all = run.metrics.shuffle_write_bytes or shuffled
    ctx.report {
      severity = "info",
      message = ("The app uses Java serialization (spark.serializer = %s%s) and its RDD code "
        .. "shuffled %s%s."):format(v, run.config["spark.serializer"] and "" or ", the default",
        su.bytes(shuffled), all > shuffled and (" (of %s in all; DataFrame/SQL shuffles do not "
          .. "use the serializer)"):format(su.bytes(all)) or ""),
      recommendation = "Kryo is faster and more compact for RDD shuffles and caching "
        .. "(register your classes with spark.kryo.classesToRegister).",
      evidence = { serializer = v, rdd_shuffle_write_bytes = shuffled, shuffle_write_bytes = all,
                   sources = { ["spark.serializer"] = from } },
      changes = { su.change(run, "spark.serializer", KRYO, v) },
    }
  end
end

local function dynamic_allocation(run, ctx)
  -- Databricks scales workers itself (sparkutil.executor_count); local
  -- mode has no executors to allocate
  if not su.conf_bool(run, "spark.dynamicAllocation.enabled") or su.platform(run) == "databricks"
      or sizing.local_mode(run) then
    return
  end
  local svc, _, svc_from = su.conf(run, "spark.shuffle.service.enabled")
  local track, _, track_from = su.conf(run, "spark.dynamicAllocation.shuffleTracking.enabled")
  local decom = su.conf_bool(run, "spark.decommission.enabled")
    and su.conf_bool(run, "spark.storage.decommission.shuffleBlocks.enabled")
  if svc == "true" or track == "true" or decom then
    return
  end
  local master = run.config["spark.master"] or ""
  local change
  -- shuffle tracking exists from 3.0; before, only the service keeps the files
  if not master:find("^yarn") then
    change = su.change(run, "spark.dynamicAllocation.shuffleTracking.enabled", "true", track)
  end
  change = change or su.change(run, "spark.shuffle.service.enabled", "true", svc)
  local tracks = su.has_key(run, "spark.dynamicAllocation.shuffleTracking.enabled")
  ctx.report {
    message = ("Dynamic allocation is on but %s keeps shuffle files of removed executors."):format(
      tracks and ("neither the external shuffle service (spark.shuffle.service.enabled = %s) "
        .. "nor shuffle tracking (spark.dynamicAllocation.shuffleTracking.enabled = %s)"):format(
        svc, track)
      or ("no external shuffle service (spark.shuffle.service.enabled = %s; Spark %s has no "
        .. "shuffle tracking, it came in 3.0)"):format(svc, run.engine_version)),
    recommendation = ("Removing an executor then loses its shuffle output and the stages "
      .. "that wrote it run again (Spark 3 refuses to start like this). Set %s = true%s."):format(
      change.key, change.key ~= "spark.shuffle.service.enabled" and ""
        or master:find("^yarn") and " (and run the YARN auxiliary shuffle service)"
        or " (and run the cluster's external shuffle service)"),
    evidence = { shuffle_service = svc, shuffle_tracking = track, master = master,
                 sources = { ["spark.shuffle.service.enabled"] = svc_from,
                             ["spark.dynamicAllocation.shuffleTracking.enabled"] = track_from,
                             ["spark.dynamicAllocation.enabled"] =
                               select(3, su.conf(run, "spark.dynamicAllocation.enabled")) } },
    changes = { change },
  }
end

local function adaptive(run, ctx)
  if (run.metrics.sql_executions or 0) == 0 or not su.version_at_least(run, 3, 0) then
    return
  end
  local v, set, from = su.conf(run, "spark.sql.adaptive.enabled")
  if v ~= "false" then
    return
  end
  ctx.report {
    severity = "info",
    message = ("Adaptive query execution is off (spark.sql.adaptive.enabled = false%s) on a "
      .. "SQL app with %s."):format(set and "" or ", the default before Spark 3.2",
      su.count(run.metrics.sql_executions, "query", "queries")),
    recommendation = "AQE coalesces small shuffle partitions, splits skewed joins and "
      .. "switches joins to broadcast at run time; it is the default since Spark 3.2.",
    evidence = { sql_executions = run.metrics.sql_executions,
                 sources = { ["spark.sql.adaptive.enabled"] = from } },
    changes = { su.change(run, "spark.sql.adaptive.enabled", "true", "false") },
  }
end

return {
  id = "spark.config",
  title = "Spark settings that cost time or money",
  severity = "warning",
  sources = { "spark" },
  tags = { "config" },
  options = { min_shuffle_bytes = 1024 * 1024 * 1024 },
  check = function(run, ctx)
    serializer(run, ctx)
    dynamic_allocation(run, ctx)
    adaptive(run, ctx)
  end,
}
