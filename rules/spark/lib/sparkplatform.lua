-- sparkplatform: where a setting's effective value comes from when the
-- app did not set it. Vendors ship other defaults than Apache Spark's
-- (sparkconf holds those), and a log may show what a setting was even
-- when its properties do not. sparkutil.conf asks here before it takes
-- Spark's own default, and says which of "set", "platform default",
-- "inferred" or "default" the value is (docs/spark.md "Effective values").
local keys = require "sparkconf"

local M = {}

-- The one table of platform defaults: platform (run.attrs.platform) ->
-- key -> { since = Spark "major.minor" (nil: every version), value,
-- source }. Only what the vendor documents as its own default.
M.DEFAULTS = {
  databricks = {
    -- "AQE is enabled by default" in every runtime with Spark 3 (7.3 LTS,
    -- Spark 3.0.1, and later), also on the 3.0/3.1 runtimes where Apache
    -- Spark's default is false
    ["spark.sql.adaptive.enabled"] = { since = "3.0", value = "true",
      source = "https://docs.databricks.com/aws/en/optimizations/aqe" },
    ["spark.sql.adaptive.coalescePartitions.enabled"] = { since = "3.0", value = "true",
      source = "https://docs.databricks.com/aws/en/optimizations/aqe" },
  },
  emr = {
    -- "Spark defaults set by Amazon EMR": dynamic allocation from EMR
    -- 4.4.0 (Spark 1.6), with the shuffle service configured by EMR
    ["spark.dynamicAllocation.enabled"] = { since = "1.6", value = "true",
      source = "https://docs.aws.amazon.com/emr/latest/ReleaseGuide/emr-spark-configure.html" },
    ["spark.shuffle.service.enabled"] = { since = "1.6", value = "true",
      source = "https://docs.aws.amazon.com/emr/latest/ReleaseGuide/emr-spark-configure.html" },
  },
  dataproc = {
    -- Dataproc's spark-defaults.conf: dynamic allocation with the YARN
    -- external shuffle service
    ["spark.dynamicAllocation.enabled"] = { value = "true",
      source = "https://cloud.google.com/dataproc/docs/concepts/cluster-properties" },
    ["spark.shuffle.service.enabled"] = { value = "true",
      source = "https://cloud.google.com/dataproc/docs/concepts/cluster-properties" },
  },
}

-- Evidence in the log for a key's value, when no property says it:
-- key -> function(run) returning value and a reason, or nil.
M.EVIDENCE = {
  -- AQE re-plans (SparkListenerSQLAdaptiveExecutionUpdate) and
  -- AdaptiveSparkPlan operators happen only with AQE on
  ["spark.sql.adaptive.enabled"] = function(run)
    local n = run.metrics and run.metrics.sql_adaptive_updates or 0
    if n > 0 then
      return "true", ("%d SparkListenerSQLAdaptiveExecutionUpdate events"):format(n)
    end
    for _, op in ipairs(run.series and run.series.sql_operators or {}) do
      if op.name == "AdaptiveSparkPlan" or (op.detail or ""):find("isFinalPlan=", 1, true) then
        return "true", "AdaptiveSparkPlan nodes in the SQL plans"
      end
    end
    return nil
  end,
}

-- The value key takes on the run's platform when the app did not set it:
-- value, "platform default" and the source; else value, "inferred" and
-- the evidence; nil when neither applies (Spark's own default then).
function M.default(run, key)
  local p = run.attrs and run.attrs.platform
  local e = p and M.DEFAULTS[p] and M.DEFAULTS[p][key]
  if e then
    local a, b = keys.parse_version(run.engine_version)
    if keys.at_least(a, b, e.since) then
      return e.value, "platform default", e.source
    end
  end
  local ev = M.EVIDENCE[key]
  if ev then
    local v, why = ev(run)
    if v ~= nil then
      return v, "inferred", why
    end
  end
  return nil
end

return M
