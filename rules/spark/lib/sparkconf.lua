-- sparkconf: the one table of Spark keys the rules read or propose: the
-- version that introduced each (a rule never proposes a key the app's
-- Spark lacks) and its default in each version (so `changes.from` is the
-- value the app really ran with). Sources: docs/configuration.md and
-- docs/sql-performance-tuning.md of each Spark release; the RAPIDS
-- Accelerator's docs/configs.md for spark.rapids.*. docs/spark.md
-- "Versions" lists them. sparkutil reads it (conf, has_key, change).
-- Vendors' own defaults (Databricks, EMR, Dataproc) are in sparkplatform,
-- which sparkutil.conf asks first.

local M = {}

-- key = { since = "major.minor" (nil: every version),
--         default = value | { { "since", value }, ... } (ascending) |
--                   function(run, su) (depends on other settings),
--         before = name the setting had before `since` }
M.KEYS = {
  ["spark.executor.memory"] = { default = "1g" },
  ["spark.executor.cores"] = { default = "1" },
  ["spark.executor.instances"] = { default = "2" },
  ["spark.task.cpus"] = { default = "1" },
  ["spark.default.parallelism"] = {},
  ["spark.serializer"] = { default = "org.apache.spark.serializer.JavaSerializer" },
  ["spark.speculation"] = { default = "false" },
  -- the unified memory manager (SPARK-10000) came in 1.6 with 0.75;
  -- SPARK-15796 lowered it to 0.6 in 2.0
  ["spark.memory.fraction"] = { since = "1.6", default = { { "1.6", "0.75" }, { "2.0", "0.6" } } },
  ["spark.executor.memoryOverhead"] = { since = "2.3", before = "spark.yarn.executor.memoryOverhead",
    default = function(run, su)
      local mem = su.executor_memory(run)
      return ("%dm"):format(math.max(384, math.floor(mem * 0.10 / su.MIB)))
    end },
  ["spark.sql.shuffle.partitions"] = { default = "200" },
  ["spark.sql.files.maxPartitionBytes"] = { since = "2.0", default = "128m" },
  -- adaptive query execution as the rules mean it (SPARK-31412, 3.0; the
  -- experimental 2.x engine behind the same flag had none of these knobs)
  ["spark.sql.adaptive.enabled"] = { since = "3.0", default = { { "3.0", "false" }, { "3.2", "true" } } },
  ["spark.sql.adaptive.coalescePartitions.enabled"] = { since = "3.0", default = "true" },
  ["spark.sql.adaptive.advisoryPartitionSizeInBytes"] = { since = "3.0", default = "64m" },
  ["spark.sql.adaptive.skewJoin.enabled"] = { since = "3.0", default = "true" },
  ["spark.sql.adaptive.skewJoin.skewedPartitionFactor"] = { since = "3.0" },
  ["spark.dynamicAllocation.enabled"] = { since = "1.2", default = "false" },
  ["spark.dynamicAllocation.minExecutors"] = { since = "1.2", default = "0" },
  ["spark.dynamicAllocation.maxExecutors"] = { since = "1.2", default = "infinity" },
  ["spark.dynamicAllocation.executorIdleTimeout"] = { since = "1.2", default = "60s" },
  ["spark.dynamicAllocation.schedulerBacklogTimeout"] = { since = "1.2", default = "1s" },
  ["spark.dynamicAllocation.executorAllocationRatio"] = { since = "2.4", default = "1" },
  ["spark.dynamicAllocation.shuffleTracking.enabled"] = { since = "3.0",
    default = { { "3.0", "false" }, { "3.4", "true" } } },
  ["spark.shuffle.service.enabled"] = { since = "1.2", default = "false" },
  ["spark.decommission.enabled"] = { since = "3.1", default = "false" },
  ["spark.storage.decommission.shuffleBlocks.enabled"] = { since = "3.1", default = "false" },
  ["spark.kubernetes.executor.request.cores"] = { since = "2.4" },
  -- RAPIDS Accelerator (a plugin: no Spark version; defaults of 24.x/25.x)
  ["spark.rapids.sql.concurrentGpuTasks"] = { default = "2" },
  ["spark.rapids.memory.gpu.allocFraction"] = { default = "1.0" },
  ["spark.rapids.sql.batchSizeBytes"] = { default = "1g" },
}

-- (major, minor) of "3.3.0-amzn-0", "1.6.1"; nil when not a version.
function M.parse_version(v)
  local a, b = tostring(v or ""):match("^(%d+)%.(%d+)")
  if not a then
    return nil
  end
  return tonumber(a), tonumber(b)
end

-- Whether version (a, b) is at least "x.y"; an unknown version (a nil)
-- counts as the newest: nothing is withheld for want of a version.
function M.at_least(a, b, since)
  if not since or not a then
    return true
  end
  local x, y = M.parse_version(since)
  return a > x or (a == x and b >= y)
end

-- The default of key for version (a, b): the last entry not newer than it
-- (an unknown version takes the oldest entry, as Spark logs without a
-- version are old ones).
function M.default(key, a, b)
  local e = M.KEYS[key]
  local d = e and e.default
  if type(d) ~= "table" then
    return d
  end
  local out = d[1][2]
  if a then
    for _, p in ipairs(d) do
      if M.at_least(a, b, p[1]) then
        out = p[2]
      end
    end
  end
  return out
end

return M
