-- rules/mappings/kafka-streams.lua - Kafka Streams' own metric names
-- (RocksDBMetrics, KIP-607, KIP-869, TaskMetrics, the restore consumer's
-- fetch metrics) mapped to the model names the kafka-streams rules read
-- (docs/model-kafka-streams.md), once, then spelled in three exporters'
-- dialects: the Prometheus JMX exporter with its default naming (no rules),
-- Strimzi's metrics reporter, and Micrometer's KafkaStreamsMetrics
-- (Spring Boot's /actuator/prometheus). Format: docs/mapping-packs.md.

-- { kafka streams metric name, model name, extra fields }
local store = {
  { "block-cache-data-hit-ratio", "block_cache_data_hit_ratio" },
  { "block-cache-index-hit-ratio", "block_cache_index_hit_ratio" },
  { "block-cache-filter-hit-ratio", "block_cache_filter_hit_ratio" },
  { "memtable-hit-ratio", "memtable_hit_ratio" },
  { "write-stall-duration-avg", "write_stall_duration_avg_ms" },
  { "write-stall-duration-total", "write_stall_duration_total_ms", { counter = true } },
  { "bytes-written-rate", "bytes_written_per_s" },
  { "bytes-read-rate", "bytes_read_per_s" },
  { "bytes-read-compaction-rate", "compaction_read_bytes_per_s" },
  { "bytes-written-compaction-rate", "compaction_written_bytes_per_s" },
  { "compaction-time-avg", "compaction_time_avg_ms" },
  { "compaction-time-max", "compaction_time_max_ms" },
  { "memtable-bytes-flushed-rate", "memtable_flushed_bytes_per_s" },
  { "number-open-files", "open_files" },
  { "number-file-errors-total", "file_errors", { counter = true } },
  { "num-immutable-mem-table", "immutable_memtables" },
  { "cur-size-active-mem-table", "active_memtable_bytes" },
  { "size-all-mem-tables", "all_memtables_bytes" },
  { "mem-table-flush-pending", "memtable_flush_pending" },
  { "num-running-flushes", "running_flushes" },
  { "compaction-pending", "compaction_pending" },
  { "num-running-compactions", "running_compactions" },
  { "estimate-pending-compaction-bytes", "pending_compaction_bytes" },
  { "total-sst-files-size", "total_sst_bytes" },
  { "live-sst-files-size", "live_sst_bytes" },
  { "num-live-versions", "live_versions" },
  { "block-cache-capacity", "block_cache_capacity_bytes" },
  { "block-cache-usage", "block_cache_usage_bytes" },
  { "block-cache-pinned-usage", "block_cache_pinned_usage_bytes" },
  { "estimate-num-keys", "estimated_keys" },
  { "estimate-table-readers-mem", "table_readers_mem_bytes" },
  { "background-errors", "background_errors" },
}

-- restore-remaining-records-total is a gauge that reads -1 when nothing
-- restores: a sentinel, kept as node attrs.restore_state, never a value
local task = {
  { "restore-total", "restore_records", { counter = true, set = "role=active" } },
  { "restore-rate", "restore_rate_per_s", { set = "role=active" } },
  { "update-total", "update_records", { counter = true, set = "role=standby" } },
  { "update-rate", "update_rate_per_s", { set = "role=standby" } },
  { "restore-remaining-records-total", "restore_remaining_records", {
      sentinel = -1, sentinel_attr = "restore_state=idle",
      value_attr = "restore_state=restoring", sentinel_flag = "restore_state_idle" } },
}

local updater = {
  { "active-restoring-tasks", "active_restoring_tasks" },
  { "standby-updating-tasks", "standby_updating_tasks" },
  { "active-paused-tasks", "active_paused_tasks" },
  { "standby-paused-tasks", "standby_paused_tasks" },
  { "restore-records-rate", "restore_records_per_s" },
  { "restore-ratio", "restore_ratio" },
  { "idle-ratio", "idle_ratio" },
  { "checkpoint-ratio", "checkpoint_ratio" },
}

local coordinator = {
  { "last-rebalance-seconds-ago", "last_rebalance_ago_ms", { scale = 1000 } },
}

local fetch = {
  { "records-lag", "records_lag" },
  { "records-lag-max", "records_lag_max" },
}

-- where each Kafka Streams group goes: metric group, node kind, names,
-- and a label condition (the restore consumer's fetch metrics only)
local groups = {
  { "stream-state-metrics", "store", store },
  { "stream-task-metrics", "task", task },
  { "stream-state-updater-metrics", "thread", updater },
  { "consumer-coordinator-metrics", "thread", coordinator, { client_id = "*-StreamThread-*-consumer" } },
  { "consumer-fetch-manager-metrics", "changelog", fetch, { client_id = "*-restore-consumer" } },
}

-- data must be a tree: every use gets its own copy of a shared table
local function copy(v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = copy(x) end
  return t
end

local function thread_ref() return { "{thread_id}", "{client_id:before=-restore-consumer}", "{client_id:before=-consumer}" } end
local store_ref = "{rocksdb_state_id|rocksdb_window_state_id|rocksdb_session_state_id}"

local nodes = {
  thread = { id = thread_ref(), attrs = { thread_id = thread_ref(), instance = "{@instance}" } },
  task = {
    parent = "thread", id = "{thread_id}/{task_id}",
    attrs = {
      thread_id = "{thread_id}", task_id = "{task_id}", instance = "{@instance}",
      subtopology = "{task_id:before=_}", partition = "{task_id:after=_}",
    },
  },
  store = {
    parent = "task", id = "{thread_id}/{task_id}/" .. store_ref, inherit = "role",
    attrs = {
      thread_id = "{thread_id}", task_id = "{task_id}", store = store_ref, instance = "{@instance}",
      store_type = {
        "rocksdb-state{rocksdb_state_id:drop}",
        "rocksdb-window-state{rocksdb_window_state_id:drop}",
        "rocksdb-session-state{rocksdb_session_state_id:drop}",
      },
    },
  },
  changelog = {
    parent = "thread", id = "{client_id}/{topic}-{partition}",
    attrs = {
      topic = "{topic}", partition = "{partition}", client_id = "{client_id}",
      thread_id = thread_ref(), instance = "{@instance}",
    },
  },
}

local run = {
  -- application.id: the default client.id is "<application.id>-<process uuid>"
  job = {
    "{application_id}",
    "{thread_id:before=-StreamThread-:drop_uuid}",
    "{client_id:before=-StreamThread-:drop_uuid}",
    "{client_id:drop_uuid}",
  },
  instance = { "{thread_id:before=-StreamThread-}", "{client_id:before=-StreamThread-}", "{client_id}", "{@target}" },
  -- KAFKA-20877 (apache/kafka PR #23009, merged 2026-08): task restore-rate
  -- and update-rate counted batches, not records. Releases before 4.3 are
  -- older than the fix; which release carries it is not known here, so a
  -- newer version says "unknown" rather than guess.
  version_attrs = {
    { attr = "restore_rate_counts", below = "4.3", value = "batches",
      otherwise = "unknown", unknown = "unknown" },
  },
}

local function spec(row, extra)
  local s = { name = row[2] }
  for k, v in pairs(row[3] or {}) do s[k] = v end
  for k, v in pairs(extra or {}) do s[k] = v end
  return s
end

local function underscores(s) return (s:gsub("[-.]", "_")) end

-- builds one dialect: prefix(group) names the group's prefix, key(name,
-- row) the exported rest of the name (nil: skip), more(row) any aliases
local function dialect(name, about, prefix, keys, version)
  local gs = {}
  for _, g in ipairs(groups) do
    local metrics = {}
    for _, row in ipairs(g[3]) do
      for _, k in ipairs(keys(row)) do metrics[k] = spec(row) end
    end
    gs[#gs + 1] = { prefix = prefix(g[1]), node = g[2], metrics = metrics, when = copy(g[4]) }
  end
  local r = copy(run)
  r.version = version
  return { mapping = 1, name = name, engine = "kafka-streams", about = about,
           run = r, nodes = copy(nodes), groups = gs }
end

local function domain(group)
  return group:match("^consumer") and "kafka_consumer_" or "kafka_streams_"
end

-- JMX exporter, default naming: <domain>_<type>_<attribute>, '-' -> '_',
-- every value untyped (counter-ness comes from the table)
local jmx = dialect("jmx-exporter",
  "Prometheus JMX exporter with its default naming (no rules)",
  function(g) return domain(g) .. underscores(g) .. "_" end,
  function(row) return { underscores(row[1]) } end,
  nil)

-- Strimzi metrics reporter: <prefix>_<group>_<name> through the Prometheus
-- client's naming, which takes "_total" off a gauge's name and puts it on
-- a counter's: both spellings are mapped. Strings become *_info series
-- whose label carries the value (the version).
local strimzi = dialect("strimzi",
  "Strimzi metrics reporter (io.strimzi.kafka.metrics.prometheus.ClientMetricsReporter)",
  function(g) return domain(g) .. underscores(g) .. "_" end,
  function(row)
    local k = underscores(row[1])
    local bare = k:gsub("_total$", "")
    return bare ~= k and { k, bare } or { k }
  end,
  { "{version}" })
strimzi.groups[#strimzi.groups + 1] = {
  prefix = "kafka_streams_stream_metrics_", metrics = { version_info = { name = "version", info = true } },
}

-- Micrometer KafkaStreamsMetrics: kafka.<group without -metrics>.<name>,
-- dots to underscores; "-total" metrics are FunctionCounters; tags
-- include kafka_version (and spring_id under Spring Boot)
local micrometer = dialect("micrometer",
  "Micrometer KafkaStreamsMetrics (Spring Boot /actuator/prometheus)",
  function(g) return "kafka_" .. underscores((g:gsub("%-metrics$", ""))) .. "_" end,
  function(row) return { underscores(row[1]) } end,
  { "{kafka_version}" })

return { jmx, strimzi, micrometer }
