-- Tests of flink.rocksdb-health: the fixture read through the plugin (its
-- RocksDB native metrics, fixtures/flink/gen.py rocksdb_native) and
-- inline vertices.
local F = "../../fixtures/flink/"
local MB, GB = 1024 * 1024, 1024 * 1024 * 1024

-- One vertex with native metrics m (and dist d) on a job with config c.
local function job(m, d, c)
  return { source = "flink", id = "j1", name = "orders", config = c or {},
           nodes = { { id = "v1", kind = "vertex", name = "KeyedProcess", parallelism = 4,
                       metrics = m, dist = d or {}, attrs = { rocksdb_metrics = "native" } } } }
end

local function cold()
  return { block_cache_hit_ratio = 0.45, block_cache_capacity_bytes = 256 * MB,
           block_cache_usage_bytes = 256 * MB, live_sst_bytes = 40 * GB }
end

return { rule = "flink.rocksdb-health", cases = {
  { name = "the fixture: cache, compaction and skew on the keyed vertex",
    inputs = { F .. "rocksdb-native.json" },
    expect = {
      { node = "1857e83ed044465a24d8d7c3ad99efb7",
        message = "hits 40% of the reads (below 80%), full with 256 MiB per subtask; about 576 MiB per subtask would reach 90%",
        changes = { { key = "taskmanager.memory.managed.fraction", to = 0.9 } } },
      { node = "1857e83ed044465a24d8d7c3ad99efb7",
        message = "writes are throttled to 16 MiB/s (actual-delayed-write-rate); 30 GiB wait for compaction",
        changes = { { key = "state.backend.rocksdb.thread.num", to = 4 } } },
      { node = "1857e83ed044465a24d8d7c3ad99efb7",
        message = "One subtask of 'KeyedProcess(OrderAggregate)' stands out of its 4 subtasks in RocksDB: "
          .. "pending_compaction_bytes 30 GiB (the median is 0 B); estimated_keys 30,001,000 (14.6× the median 2,051,000)",
        evidence = { skewed_metrics = 4, subtasks = 4 } } } },
  { name = "managed size configured: scaled",
    inputs = { job(cold(), nil, { ["taskmanager.memory.managed.size"] = "1g" }) },
    expect = { { message = "about 512 MiB per subtask would reach 90%",
                 changes = { { key = "taskmanager.memory.managed.size", from = "1g", to = "2048m" } } } } },
  { name = "a fraction below the ceiling",
    inputs = { job(cold(), nil, { ["taskmanager.memory.managed.fraction"] = "0.2" }) },
    expect = { { changes = { { key = "taskmanager.memory.managed.fraction", from = "0.2", to = 0.4 } } } } },
  { name = "a cache with room: quiet",
    inputs = { job({ block_cache_hit_ratio = 0.45, block_cache_capacity_bytes = 256 * MB,
                     block_cache_usage_bytes = 10 * MB }) }, expect = {} },
  { name = "writes stopped: error",
    inputs = { job({ write_stopped = 1 }) }, expect = { { severity = "error" } } },
  { name = "live SST four times the checkpoint",
    inputs = { job({ live_sst_bytes = 40 * GB, checkpoint_state_size_bytes = 10 * GB, checkpoint_id = 7 }) },
    expect = { { severity = "info", message = "hold 40 GiB of live SST files for a checkpoint of 10 GiB (#7, 4×)" } } },
  { name = "even subtasks, good cache: quiet",
    inputs = { job({ block_cache_hit_ratio = 0.95, block_cache_capacity_bytes = 256 * MB,
                     block_cache_usage_bytes = 256 * MB, live_sst_bytes = 8 * GB },
                   { live_sst_bytes = { 2 * GB, 2 * GB, 2 * GB, 2 * GB } }) }, expect = {} },
  { name = "no native metrics (the healthy fixture): quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
