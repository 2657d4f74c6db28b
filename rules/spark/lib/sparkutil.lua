-- sparkutil: what the Spark rules share. Spark's configuration with its
-- documented defaults (so `changes.from` is the value the app really ran
-- with), executor sizing, the stage nodes, the partition keys that govern
-- a stage's task count, and readable numbers. Model names:
-- docs/model-spark.md.

local units = require "optipipe.units"

local M = {}

M.dur = units.format_duration
M.pct = units.format_pct
M.bytes = units.format_bytes
M.count = units.format_count
M.times = units.format_ratio

local MIB = 1024 * 1024
local GIB = 1024 * MIB
M.MIB, M.GIB = MIB, GIB

-- Spark's defaults for the keys the rules read or propose (spark.md §2.4,
-- docs/configuration.md of Spark 3.x). A function gets the run (defaults
-- that changed between versions).
local DEFAULTS = {
  ["spark.executor.memory"] = "1g",
  ["spark.executor.cores"] = "1",
  ["spark.executor.instances"] = "2",
  ["spark.task.cpus"] = "1",
  ["spark.memory.fraction"] = "0.6",
  ["spark.serializer"] = "org.apache.spark.serializer.JavaSerializer",
  ["spark.sql.shuffle.partitions"] = "200",
  ["spark.sql.files.maxPartitionBytes"] = "128m",
  ["spark.sql.adaptive.skewJoin.enabled"] = "true",
  ["spark.sql.adaptive.coalescePartitions.enabled"] = "true",
  ["spark.sql.adaptive.advisoryPartitionSizeInBytes"] = "64m",
  ["spark.speculation"] = "false",
  ["spark.dynamicAllocation.enabled"] = "false",
  ["spark.dynamicAllocation.executorIdleTimeout"] = "60s",
  ["spark.dynamicAllocation.executorAllocationRatio"] = "1",
  ["spark.dynamicAllocation.schedulerBacklogTimeout"] = "1s",
  ["spark.shuffle.service.enabled"] = "false",
  ["spark.executor.memoryOverhead"] = function(run)
    local mem = M.executor_memory(run)
    return ("%dm"):format(math.max(384, math.floor(mem * 0.10 / MIB)))
  end,
  ["spark.sql.adaptive.enabled"] = function(run)
    return M.version_at_least(run, 3, 2) and "true" or "false"
  end,
  ["spark.dynamicAllocation.shuffleTracking.enabled"] = function(run)
    return M.version_at_least(run, 3, 4) and "true" or "false"
  end,
}

-- The major.minor of the run's Spark (LogStart); nil when unknown.
function M.version(run)
  local v = run.engine_version
  if not v then
    return nil
  end
  local a, b = v:match("^(%d+)%.(%d+)")
  if not a then
    return nil
  end
  return tonumber(a), tonumber(b)
end

function M.version_at_least(run, major, minor)
  local a, b = M.version(run)
  if not a then
    return false
  end
  return a > major or (a == major and b >= minor)
end

-- The value the app ran with and whether it was set (false: Spark's
-- default). nil when neither is known.
function M.conf(run, key)
  local v = run.config[key]
  if v ~= nil then
    return v, true
  end
  local d = DEFAULTS[key]
  if type(d) == "function" then
    d = d(run)
  end
  return d, false
end

function M.conf_bool(run, key)
  local v = M.conf(run, key)
  return v ~= nil and tostring(v):lower() == "true"
end

-- Spark reads a bare number as MiB for memory keys ("4096" = 4 GiB).
function M.parse_mem(v)
  if v == nil then
    return nil
  end
  if tostring(v):match("^%s*%d+%s*$") then
    return tonumber(v) * MIB
  end
  return units.parse_bytes(v)
end

function M.executor_memory(run)
  local v = run.config["spark.executor.memory"] or "1g"
  return M.parse_mem(v) or GIB
end

-- Executor cores: the property, else what the executors reported.
function M.executor_cores(run)
  local v = tonumber(run.config["spark.executor.cores"] or "")
  if v and v > 0 then
    return math.floor(v)
  end
  for _, e in ipairs(run.series.executors or {}) do
    if (e.cores or 0) > 0 then
      return e.cores
    end
  end
  return 1
end

-- "6g", "1536m": the shortest exact Spark memory string.
function M.mem_string(b)
  local mib = math.ceil(b / MIB)
  if mib % 1024 == 0 then
    return ("%dg"):format(mib // 1024)
  end
  return ("%dm"):format(mib)
end

-- Rounds a memory proposal up to a whole GiB (or 512 MiB below 4 GiB).
function M.round_mem(b)
  local step = b < 4 * GIB and 512 * MIB or GIB
  return math.ceil(b / step) * step
end

-- Execution memory one task can use: (heap - 300 MiB reserved) x
-- spark.memory.fraction / cores (Spark's unified memory manager).
function M.task_memory(run)
  local frac = tonumber((M.conf(run, "spark.memory.fraction"))) or 0.6
  local heap = M.executor_memory(run)
  return math.max(heap - 300 * MIB, 64 * MIB) * frac / M.executor_cores(run)
end

-- Stage attempt nodes (kind "stage") that ran.
function M.stages(run)
  local out = {}
  for _, n in ipairs(run.nodes) do
    if n.kind == "stage" and (n.status == "succeeded" or n.status == "failed"
        or n.status == "running") then
      out[#out + 1] = n
    end
  end
  return out
end

-- Where a stage's tasks come from: "shuffle" (a shuffle read: the task
-- count is spark.sql.shuffle.partitions for SQL), "input" (file splits:
-- spark.sql.files.maxPartitionBytes) or "other".
function M.stage_source(n)
  local m = n.metrics
  if (m.shuffle_read_bytes or 0) > 0 and (m.shuffle_read_bytes or 0) >= (m.input_bytes or 0) then
    return "shuffle"
  end
  if (m.input_bytes or 0) > 0 then
    return "input"
  end
  return "other"
end

-- A shuffle stage whose task count is spark.sql.shuffle.partitions and
-- whose partitions are small by bytes (under min_bytes each, with at least
-- min_tasks of them). spark.shuffle-partitions sizes such stages by bytes;
-- spark.small-tasks leaves them to it, so that one key never gets two
-- proposed values from two rules. The defaults are that rule's.
M.SHUFFLE_MIN_TASK_BYTES = 8 * MIB
M.SHUFFLE_MIN_TASKS_SMALL = 200
function M.small_shuffle(run, n, min_bytes, min_tasks)
  local parts = tonumber((M.conf(run, "spark.sql.shuffle.partitions")))
  local bytes = n.metrics.shuffle_read_bytes or 0
  return M.stage_source(n) == "shuffle" and parts ~= nil and n.parallelism == parts
    and parts >= (min_tasks or M.SHUFFLE_MIN_TASKS_SMALL)
    and bytes / parts < (min_bytes or M.SHUFFLE_MIN_TASK_BYTES)
end

-- The bytes a stage processed: the largest of its inputs and outputs
-- (Dr. Elephant's denominator for spill).
function M.data_bytes(n)
  local m = n.metrics
  return math.max(m.input_bytes or 0, m.shuffle_read_bytes or 0,
    m.shuffle_write_bytes or 0, m.output_bytes or 0)
end

-- The most cores the app had at once (executor timeline), or nil (local
-- mode: no executors).
function M.total_cores(run)
  local c = run.metrics.executor_cores_max or 0
  if c > 0 then
    return c
  end
  return nil
end

-- A partition count rounded up to a multiple of the cores (so the last
-- wave is full) or to a round number.
function M.nice_count(n, cores)
  n = math.max(1, math.ceil(n))
  if cores and cores > 0 and n >= cores then
    return math.ceil(n / cores) * cores
  end
  local step = n < 100 and 1 or n < 1000 and 10 or 100
  return math.ceil(n / step) * step
end

-- What a change applies to: the application (its --conf / spark-defaults).
function M.target(run)
  return run.name or run.id
end

-- The setting that changes a stage's task count by `factor` (> 1: more,
-- smaller tasks), with a sentence saying so. After a shuffle it is
-- spark.sql.shuffle.partitions, unless adaptive execution coalesced the
-- stage below it: then AQE's advisory partition size decides (it can merge
-- partitions, not split them). File scans: spark.sql.files.maxPartitionBytes.
-- RDD stages: spark.default.parallelism.
function M.resize(run, n, factor)
  local tasks = math.max(n.parallelism or n.metrics.tasks or 1, 1)
  local want = tasks * factor
  local source = M.stage_source(n)
  local t = M.target(run)
  if source == "shuffle" then
    local cur = M.conf(run, "spark.sql.shuffle.partitions")
    local parts = tonumber(cur) or tasks
    local aqe = M.conf_bool(run, "spark.sql.adaptive.enabled")
      and M.conf_bool(run, "spark.sql.adaptive.coalescePartitions.enabled")
    if aqe and tasks < parts and want <= parts then
      local adv = M.conf(run, "spark.sql.adaptive.advisoryPartitionSizeInBytes")
      local b = M.parse_mem(adv) or 64 * MIB
      local to = math.max(MIB, math.min(GIB, b / factor))
      to = math.floor(to / MIB) * MIB
      return { target = t, key = "spark.sql.adaptive.advisoryPartitionSizeInBytes", from = adv,
               to = M.mem_string(to) },
        ("spark.sql.adaptive.advisoryPartitionSizeInBytes from %s to %s (adaptive execution "
          .. "coalesced the %s shuffle partitions into %s)"):format(adv, M.mem_string(to),
          cur, M.count(tasks, "task"))
    end
    local to = M.nice_count(want, factor > 1 and M.total_cores(run) or nil)
    return { target = t, key = "spark.sql.shuffle.partitions", from = cur, to = tostring(to) },
      ("spark.sql.shuffle.partitions from %s to %d"):format(cur, to)
  elseif source == "input" then
    local cur = M.conf(run, "spark.sql.files.maxPartitionBytes")
    local b = M.parse_mem(cur) or 128 * MIB
    local to = math.max(MIB, math.min(2 * GIB, b / factor))
    to = math.floor(to / MIB) * MIB
    return { target = t, key = "spark.sql.files.maxPartitionBytes", from = cur,
             to = M.mem_string(to) },
      ("spark.sql.files.maxPartitionBytes from %s to %s"):format(cur, M.mem_string(to))
  end
  local cur = run.config["spark.default.parallelism"] or tostring(tasks)
  local to = M.nice_count(want, nil)
  return { target = t, key = "spark.default.parallelism", from = cur, to = tostring(to) },
    ("spark.default.parallelism from %s to %d"):format(cur, to)
end

function M.secs(ms)
  return math.floor(ms / 100 + 0.5) / 10
end

function M.round(x, digits)
  local f = 10 ^ (digits or 3)
  return math.floor(x * f + 0.5) / f
end

-- "stage 3 (aggregate at X.scala:57)"
function M.stage_label(n)
  local id = n.attrs.stage_id or n.id
  local att = tonumber(n.attrs.attempt or "0") or 0
  local label = "stage " .. id
  if att > 0 then
    label = label .. " (attempt " .. att .. ")"
  end
  if n.name and n.name ~= n.id then
    label = label .. " \"" .. n.name .. "\""
  end
  return label
end

return M
