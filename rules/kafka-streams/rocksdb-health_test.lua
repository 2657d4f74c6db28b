-- Tests of kafka-streams.rocksdb-health on synthetic models (docs/model-kafka-streams.md).
local MB, GB = 1024 * 1024, 1024 * 1024 * 1024
local HOUR = 3600000

-- One store per entry of ms (its metrics) on tasks 0_0, 0_1, ...; samples:
-- { { t_ms, store index, { metric = value } } }.
local function app(ms, o)
  o = o or {}
  local nodes, th = {}, "app-1-StreamThread-1"
  for i, m in ipairs(ms) do
    local tid = "0_" .. (i - 1)
    nodes[#nodes + 1] = { id = th .. "/" .. tid .. "/counts", kind = "store", metrics = m,
                          attrs = { task_id = tid, store = "counts", instance = "pod-1",
                                    store_type = o.store_type or "rocksdb-state" } }
  end
  local samples = {}
  for _, s in ipairs(o.samples or {}) do
    local r = { t_ms = s[1], node = nodes[s[2]].id }
    for k, v in pairs(s[3]) do
      r[k] = v
    end
    samples[#samples + 1] = r
  end
  return { source = o.source or "kafka-streams", id = "orders-1", nodes = nodes,
           config = o.config or {}, series = { samples = samples } }
end

local function cold()
  return { block_cache_data_hit_ratio = 0.45, block_cache_capacity_bytes = 50 * MB,
           block_cache_usage_bytes = 50 * MB, live_sst_bytes = 4 * GB }
end

return { rule = "kafka-streams.rocksdb-health", cases = {
  { name = "a full 50 MiB cache hitting 45%: 100 MiB reaches 90%",
    inputs = { app({ cold() }) },
    expect = { { node = "app-1-StreamThread-1/0_0/counts",
                 message = "The block cache of store 'counts' of task 0_0 on pod-1 hits 45% of the reads "
                   .. "(below 80%), full with 50 MiB of capacity; about 100 MiB would reach 90%.",
                 recommendation = "rocksdb.config.setter",
                 evidence = { hit_ratio = 0.45, cache_needed_bytes = 100 * MB, stores = 1 } } } },
  { name = "one shared cache over two stores is counted once",
    inputs = { app({ cold(), { block_cache_data_hit_ratio = 0.35, block_cache_capacity_bytes = 50 * MB,
                             block_cache_usage_bytes = 50 * MB, live_sst_bytes = 4 * GB } }) },
    expect = { { node = "app-1-StreamThread-1/0_1/counts",
                 message = "2 stores on one instance (shared; lowest: store 'counts' of task 0_1 on pod-1)",
                 evidence = { hit_ratio = 0.4, stores = 2, cache_needed_bytes = 50 * MB * 0.9 / 0.4 } } } },
  { name = "a cache with room left: more memory would not help",
    inputs = { app({ { block_cache_data_hit_ratio = 0.45, block_cache_capacity_bytes = 50 * MB,
                       block_cache_usage_bytes = 10 * MB } }) }, expect = {} },
  { name = "all the data already fits: quiet",
    inputs = { app({ { block_cache_data_hit_ratio = 0.45, block_cache_capacity_bytes = 50 * MB,
                       block_cache_usage_bytes = 50 * MB, live_sst_bytes = 40 * MB } }) }, expect = {} },
  { name = "a good hit ratio is quiet",
    inputs = { app({ { block_cache_data_hit_ratio = 0.97, block_cache_capacity_bytes = 50 * MB,
                       block_cache_usage_bytes = 50 * MB } }) }, expect = {} },
  { name = "Samza: the container cache size, as a change",
    inputs = { app({ cold() }, { source = "samza" }) },
    expect = { { recommendation = "stores.counts.container.cache.size.bytes",
                 changes = { { key = "stores.counts.container.cache.size.bytes", to = 100 * MB } } } } },
  { name = "compaction debt and stalls between scrapes",
    inputs = { app({ { pending_compaction_bytes = 20 * GB } },
      { samples = { { 0, 1, { write_stall_duration_total_ms = 1000 } },
                    { 600000, 1, { write_stall_duration_total_ms = 61000 } } } }) },
    expect = { { node = "app-1-StreamThread-1/0_0/counts",
                 message = "writes stalled 10.0% of the time between the scrapes; 20 GiB wait for compaction",
                 recommendation = "setMaxBackgroundJobs",
                 evidence = { pending_compaction_bytes = 20 * GB } } } },
  { name = "writes stopped is an error",
    inputs = { app({ { write_stopped = 1 } }) },
    expect = { { severity = "error", message = "writes are stopped (is-write-stopped)" } } },
  { name = "a recent stall average with one scrape",
    inputs = { app({ { write_stall_duration_avg_ms = 12 } }) },
    expect = { { message = "write-stall-duration-avg 12.0 ms" } } },
  { name = "small debt, no stalls: quiet",
    inputs = { app({ { pending_compaction_bytes = 1 * GB, write_stall_duration_avg_ms = 0 } }) },
    expect = {} },
  { name = "keys growing for 3 hours without falling: no tombstones",
    inputs = { app({ {} }, { samples = { { 0, 1, { estimated_keys = 1000000 } },
                                          { HOUR, 1, { estimated_keys = 1300000 } },
                                          { 2 * HOUR, 1, { estimated_keys = 1600000 } },
                                          { 3 * HOUR, 1, { estimated_keys = 2000000 } } } }) },
    expect = { { message = "grew from 1,000,000 to 2,000,000 (+100%, about 8,000,000 a day) over 3h 00m",
                 recommendation = "tombstones", evidence = { growth_ratio = 1 } } } },
  { name = "a window store: its retention",
    inputs = { app({ {} }, { store_type = "rocksdb-window-state",
      samples = { { 0, 1, { estimated_keys = 1000 } }, { HOUR, 1, { estimated_keys = 1500 } },
                  { 2 * HOUR, 1, { estimated_keys = 2000 } } } }) },
    expect = { { recommendation = "Materialized.withRetention" } } },
  { name = "keys that fall back are cleaned up",
    inputs = { app({ {} }, { samples = { { 0, 1, { estimated_keys = 1000 } },
                                          { HOUR, 1, { estimated_keys = 3000 } },
                                          { 2 * HOUR, 1, { estimated_keys = 1500 } },
                                          { 3 * HOUR, 1, { estimated_keys = 3000 } } } }) },
    expect = {} },
  { name = "obsolete SST files: three times the live ones",
    inputs = { app({ { total_sst_bytes = 30 * GB, live_sst_bytes = 10 * GB, live_versions = 14 } }) },
    expect = { { severity = "info", message = "keeps 30 GiB of SST files for 10 GiB of live ones (3×)",
                 evidence = { obsolete_bytes = 20 * GB } } } },
  { name = "no RocksDB metrics: quiet", inputs = { app({ {} }) }, expect = {} },
} }
