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

local keys = require "sparkconf"
local platform = require "sparkplatform"

-- The major.minor of the run's Spark (LogStart); nil when unknown.
function M.version(run)
  return keys.parse_version(run.engine_version)
end

-- false when the version is unknown (version-gated checks stay quiet).
function M.version_at_least(run, major, minor)
  local a, b = M.version(run)
  if not a then
    return false
  end
  return a > major or (a == major and b >= minor)
end

-- Whether the app's Spark has key (sparkconf: "since"), and when not, the
-- version that brought it. Keys the table does not know pass; so does an
-- unknown version.
function M.has_key(run, key)
  local e = keys.KEYS[key]
  local a, b = M.version(run)
  if e and not keys.at_least(a, b, e.since) then
    return false, e.since
  end
  return true
end

-- The name the app's version gives a setting (spark.yarn.executor.
-- memoryOverhead before 2.3).
function M.key_name(run, key)
  local e = keys.KEYS[key]
  if e and e.before and not M.has_key(run, key) then
    return e.before
  end
  return key
end

-- The value the app ran with, whether it was set (false: a default), and
-- where it came from: "set", "platform default" (sparkplatform: the
-- vendor's), "inferred" (the log shows it, sparkplatform) or "default"
-- (Spark's), with the source or evidence of the two middle ones. nil when
-- nothing is known.
function M.conf(run, key)
  local v = run.config[M.key_name(run, key)]
  if v ~= nil then
    return v, true, "set"
  end
  local pv, how, why = platform.default(run, key)
  if pv ~= nil then
    return pv, false, how, why
  end
  local e = keys.KEYS[key]
  if e and type(e.default) == "function" then
    return e.default(run, M), false, "default"
  end
  return keys.default(key, M.version(run)), false, "default"
end

-- A change of key to `to` for the app, from the value it ran with (or
-- `from`); nil and the version that brought the key when the app's Spark
-- lacks it. Every Spark rule builds its Spark-key changes here.
function M.change(run, key, to, from)
  local ok, since = M.has_key(run, key)
  if not ok and not keys.KEYS[key].before then
    return nil, since
  end
  return { target = M.target(run), key = M.key_name(run, key),
           from = from or (M.conf(run, key)), to = to }
end

-- Whether the run's settings are unknown: its log has no
-- EnvironmentUpdate (run attr incomplete; a rolled part without the first
-- part). Then an unset key's default says nothing of what the app used,
-- and no size may be derived from it.
function M.settings_unknown(run)
  local inc = run.attrs and run.attrs.incomplete
  return inc ~= nil and inc:find("no environment", 1, true) ~= nil
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

-- Which setting made a stage's task count, in one place (issue #17: a
-- rule proposes only a key that controls the stage it talks about):
--   "shuffle": a shuffle read with exactly spark.sql.shuffle.partitions
--              tasks;
--   "aqe":     fewer, and adaptive execution (3.0+) coalescing is on: its
--              advisory partition size decided;
--   "parallelism": an RDD shuffle with spark.default.parallelism tasks;
--   "code":    any other shuffle count: repartition(N), coalesce(N) or an
--              RDD operation's numPartitions in the code;
--   "files":   a file scan split by spark.sql.files.maxPartitionBytes
--              (2.0+);
--   "splits":  a scan before 2.0: the files' blocks decide;
--   "other":   no input (parallelize, range): spark.default.parallelism.
-- Returns { kind, key?, from?, tasks, why? } (why: a sentence for "code"
-- and "splits").
function M.stage_control(run, n)
  local tasks = math.max(n.parallelism or n.metrics.tasks or 1, 1)
  local source = M.stage_source(n)
  if source == "shuffle" then
    local cur = M.conf(run, "spark.sql.shuffle.partitions")
    local parts = tonumber(cur)
    if parts == tasks then
      return { kind = "shuffle", key = "spark.sql.shuffle.partitions", from = cur, tasks = tasks }
    end
    if parts and tasks < parts and M.has_key(run, "spark.sql.adaptive.enabled")
        and M.conf_bool(run, "spark.sql.adaptive.enabled")
        and M.conf_bool(run, "spark.sql.adaptive.coalescePartitions.enabled") then
      return { kind = "aqe", key = "spark.sql.adaptive.advisoryPartitionSizeInBytes",
               from = M.conf(run, "spark.sql.adaptive.advisoryPartitionSizeInBytes"),
               tasks = tasks, partitions = cur }
    end
    local dp = run.config["spark.default.parallelism"]
    if tonumber(dp) == tasks then
      return { kind = "parallelism", key = "spark.default.parallelism", from = dp, tasks = tasks }
    end
    return { kind = "code", tasks = tasks,
      why = ("its %d partitions are not spark.sql.shuffle.partitions (%s)%s: the code set "
        .. "them, with repartition(%d), coalesce(%d) or an RDD operation's numPartitions, "
        .. "and no key changes that"):format(
        tasks, cur, dp and (" nor spark.default.parallelism (" .. dp .. ")") or "", tasks, tasks) }
  elseif source == "input" then
    if M.has_key(run, "spark.sql.files.maxPartitionBytes") and not M.rdd_stage(run, n) then
      return { kind = "files", key = "spark.sql.files.maxPartitionBytes", tasks = tasks,
               from = M.conf(run, "spark.sql.files.maxPartitionBytes") }
    end
    local ok, since = M.has_key(run, "spark.sql.files.maxPartitionBytes")
    return { kind = "splits", tasks = tasks,
      why = ok and ("an RDD read (textFile, hadoopFile): the Hadoop input format splits the "
        .. "files by their blocks; spark.sql.files.maxPartitionBytes splits DataFrame scans "
        .. "only") or ("Spark %s splits input by the files' blocks (spark.sql.files."
        .. "maxPartitionBytes exists from %s)"):format(run.engine_version, since) }
  end
  return { kind = "other", key = "spark.default.parallelism", tasks = tasks,
           from = run.config["spark.default.parallelism"] or tostring(tasks) }
end

-- The change that makes a stage's task count grow by `factor` (> 1: more,
-- smaller tasks), with a sentence saying so; the setting is the one
-- stage_control names. When the code set the count there is no change:
-- the sentence says which call to edit. AQE merges partitions, it cannot
-- split them: a smaller advisory size, or more shuffle partitions when
-- the stage needs more tasks than that.
function M.resize(run, n, factor)
  local c = M.stage_control(run, n)
  local want = c.tasks * factor
  if c.kind == "aqe" and want > tonumber(c.partitions) then
    -- more tasks than the shuffle has partitions: only the key adds them
    c = { kind = "shuffle", key = "spark.sql.shuffle.partitions", from = c.partitions,
          tasks = c.tasks }
  end
  if c.kind == "splits" then
    return M.split_change(run, n, c, want, factor)
  elseif c.kind == "code" then
    local to = M.nice_count(want, factor > 1 and M.total_cores(run) or nil)
    -- a change of the code, reconciled like a key: one value per call site
    return { target = M.code_target(n), key = "numPartitions", from = tostring(c.tasks),
             to = tostring(to) },
      ("repartition(%d) -> repartition(%d) in the code (%s)"):format(c.tasks, to, c.why)
  elseif c.kind == "aqe" or c.kind == "files" then
    local b = M.parse_mem(c.from) or (c.kind == "aqe" and 64 or 128) * MIB
    local to = math.max(MIB, math.min(c.kind == "aqe" and GIB or 2 * GIB, b / factor))
    to = M.mem_string(math.floor(to / MIB) * MIB)
    return M.change(run, c.key, to, c.from),
      ("%s from %s to %s%s"):format(c.key, c.from, to, c.kind == "aqe"
        and (" (adaptive execution coalesced the %s shuffle partitions into %s)"):format(
          c.partitions, M.count(c.tasks, "task")) or "")
  end
  local to = M.nice_count(want, (c.kind == "shuffle" and factor > 1) and M.total_cores(run) or nil)
  return M.change(run, c.key, tostring(to), c.from),
    ("%s from %s to %d"):format(c.key, c.from, to)
end

-- A stage of RDD code: its job belongs to no SQL execution, none of its
-- RDDs is in a SQL Exchange scope (spark_detect's sql_exchange) and it
-- reads through no SQL scan operator (attr scan "Scan parquet db.t").
function M.rdd_stage(run, n)
  if n.attrs.sql_exchange == "true" or (n.attrs.scan or ""):find("Scan ", 1, true) then
    return false
  end
  for _, j in ipairs(run.nodes) do
    if j.id == n.attrs.job then
      return j.attrs.sql == nil
    end
  end
  return false -- no job known: not said to be RDD code
end

-- What a code change applies to: the stage's call site (one line of code,
-- one value however many stages run it), else the stage.
function M.code_target(n)
  if n.name and n.name ~= n.id then
    return n.name
  end
  return M.stage_label(n)
end

-- A read split by the Hadoop input format (RDD reads; every read before
-- Spark 2.0): the split size is the knob, not a repartition() after the
-- read, which shuffles everything read and leaves the read as it was.
-- More tasks: the read's minPartitions (textFile(path, N): the goal size
-- total/N undercuts the block size). Fewer: a larger minimum split size
-- (Hadoop's split size = max(minsize, min(goal, block))).
function M.split_change(run, n, c, want, factor)
  local to = M.nice_count(want, factor > 1 and M.total_cores(run) or nil)
  if factor > 1 then
    return { target = M.code_target(n), key = "minPartitions", from = tostring(c.tasks),
             to = tostring(to) },
      ("read with minPartitions = %d (textFile(path, %d), hadoopFile(..., %d)) instead of "
        .. "the %d splits it got, not a repartition() after the read, which would shuffle "
        .. "all of it (%s)"):format(to, to, to, c.tasks, c.why)
  end
  local bytes = n.metrics.input_bytes or 0
  local split = M.mem_string(math.max(bytes / math.max(to, 1), MIB))
  local key = "spark.hadoop.mapreduce.input.fileinputformat.split.minsize"
  return { target = M.target(run), key = key, to = split },
    ("%s = %s: splits of about that size instead of %d (%s)"):format(key, split, c.tasks, c.why)
end

-- Where the app ran and on what (spark-read's run attrs, docs/model-spark.md
-- "Run attrs"): "databricks", "emr", "dataproc", "kubernetes", "yarn",
-- "standalone", "local", or nil when the log does not say.
function M.platform(run)
  return run.attrs and run.attrs.platform
end

function M.gpu(run)
  return run.attrs ~= nil and run.attrs.accelerator == "gpu"
end

-- A Databricks cluster's size from its usage tags: workers now, and the
-- autoscale range when it autoscales.
local function databricks_cluster(run, have)
  local c = run.config
  local tag = "spark.databricks.clusterUsageTags."
  return {
    auto = (c[tag .. "clusterScalingType"] or "") == "autoscaling",
    workers = c[tag .. "clusterWorkers"] or c[tag .. "clusterTargetWorkers"] or tostring(have),
    min = c[tag .. "clusterMinWorkers"], max = c[tag .. "clusterMaxWorkers"],
  }
end

-- Changes that size the cluster are one choice of shape (a fixed size,
-- or autoscaling / dynamic allocation): the engine keeps one finding's
-- shape per run and drops the others' (the change group, rules-engine.md).
M.SHAPE = "cluster shape"
local function shape(changes, choice)
  for _, c in ipairs(changes) do
    c.group, c.choice = M.SHAPE, choice
  end
  return changes
end

local DATABRICKS = "Databricks runs one executor per worker and sizes the cluster by "
  .. "workers: spark.executor.instances and dynamic allocation are not the knobs there"

-- How to run with `want` executors instead of `have`, said the way the
-- platform sizes clusters: changes and a sentence. Databricks: the
-- cluster's num_workers or autoscale.max_workers; EMR: the Spark key plus
-- the instance groups; Kubernetes: the key plus what each pod requests.
function M.executor_count(run, want, have)
  local p = M.platform(run)
  if p == "databricks" then
    local dc = databricks_cluster(run, have)
    local key, from = "num_workers", dc.workers
    if dc.auto then
      key, from = "autoscale.max_workers", dc.max or tostring(have)
    end
    return shape({ { target = "cluster", key = key, from = from, to = tostring(want) } },
                 dc.auto and "autoscaling" or "fixed"),
      ("set the cluster's %s from %s to %d (%s)"):format(key, from, want, DATABRICKS)
  end
  local dyn = M.conf_bool(run, "spark.dynamicAllocation.enabled")
  local key = dyn and "spark.dynamicAllocation.maxExecutors" or "spark.executor.instances"
  local from = run.config[key] or tostring(have)
  local txt = ("%s from %s to %d"):format(key, from, want)
  if p == "emr" then
    txt = txt .. "; on EMR also shrink the core/task instance groups (or the managed-scaling "
      .. "maximum) to the nodes those executors need: with maximizeResourceAllocation each "
      .. "node runs one executor sized to the node"
  elseif p == "kubernetes" then
    txt = txt .. "; each executor is a pod requesting spark.kubernetes.executor.request.cores "
      .. "(else spark.executor.cores) and spark.executor.memory plus overhead, so fewer pods "
      .. "free that much of the node pool"
  end
  return shape({ M.change(run, key, tostring(want), from) }, dyn and "dynamic" or "fixed"), txt
end

-- Releasing executors that wait (driver work, idle cores), the platform's
-- way: changes and a sentence. Databricks autoscales workers; elsewhere
-- dynamic allocation, which needs shuffle files kept: shuffle tracking
-- (3.0+) or, before it and on YARN, the external shuffle service.
function M.release_idle(run)
  local p = M.platform(run)
  if p == "databricks" then
    local dc = databricks_cluster(run, run.metrics.executors_max or 1)
    return shape({ { target = "cluster", key = "autoscale.min_workers", from = dc.min, to = "1" } },
                 "autoscaling"),
      ("let the cluster autoscale down to autoscale.min_workers 1%s: Databricks then "
        .. "releases idle workers itself"):format(
        dc.auto and "" or (" with max_workers %s"):format(dc.workers))
  end
  if M.conf_bool(run, "spark.dynamicAllocation.enabled") then
    local cur = M.conf(run, "spark.dynamicAllocation.executorIdleTimeout")
    return shape({ M.change(run, "spark.dynamicAllocation.executorIdleTimeout", "30s", cur) },
                 "dynamic"),
      "release idle executors sooner"
  end
  local out = { M.change(run, "spark.dynamicAllocation.enabled", "true", "false") }
  local track = M.conf(run, "spark.dynamicAllocation.shuffleTracking.enabled")
  if track ~= "true" and not M.conf_bool(run, "spark.shuffle.service.enabled") then
    out[#out + 1] = M.change(run, "spark.dynamicAllocation.shuffleTracking.enabled", "true", track)
      or M.change(run, "spark.shuffle.service.enabled", "true")
  end
  return shape(out, "dynamic"), "enable dynamic allocation"
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
