-- rules/mappings/flink.lua - Flink's RocksDB / ForSt native metrics
-- (state.backend.rocksdb.metrics.* / state.backend.forst.metrics.*) as
-- Flink's Prometheus reporter names them:
--   flink_taskmanager_job_task_operator_<column family>_rocksdb_<property>
-- with labels job_id, job_name, task_id (the vertex), task_name,
-- subtask_index, operator_name, tm_id. Per subtask the column families add
-- up; over the subtasks each metric is a vertex dist, its sum the vertex
-- metric and <name>_max the largest subtask (docs/model-flink.md). The run
-- is the job id, so a REST export of the same job gets these vertex
-- metrics added. Format: docs/mapping-packs.md.

local props = {
  ["estimate_num_keys"] = "estimated_keys",
  ["estimate_pending_compaction_bytes"] = "pending_compaction_bytes",
  ["num_running_compactions"] = "running_compactions",
  ["compaction_pending"] = "compaction_pending",
  ["actual_delayed_write_rate"] = "delayed_write_rate_bytes_per_s",
  ["is_write_stopped"] = "write_stopped",
  ["block_cache_usage"] = "block_cache_usage_bytes",
  ["block_cache_capacity"] = "block_cache_capacity_bytes",
  ["block_cache_pinned_usage"] = "block_cache_pinned_usage_bytes",
  ["total_sst_files_size"] = "total_sst_bytes",
  ["live_sst_files_size"] = "live_sst_bytes",
  ["estimate_live_data_size"] = "live_data_bytes",
  ["mem_table_flush_pending"] = "memtable_flush_pending",
  ["background_errors"] = "background_errors",
  ["size_all_mem_tables"] = "all_memtables_bytes",
}

local function group(backend)
  local metrics = {}
  for k, v in pairs(props) do metrics[k] = { name = v, set = "state_metrics_backend=" .. backend } end
  return { prefix = "flink_taskmanager_job_task_operator_*_" .. backend .. "_", node = "vertex", metrics = metrics }
end

return {
  mapping = 1, name = "flink-prometheus", engine = "flink",
  about = "Flink's Prometheus reporter (PrometheusReporter / PrometheusPushGatewayReporter)",
  run = { job = "{job_name}", id = "{job_id}", instance = { "{tm_id}", "{@target}" } },
  nodes = { vertex = { id = "{task_id}", dist = "{subtask_index}", attrs = { name = "{task_name}" } } },
  groups = { group("rocksdb"), group("forst") },
}
