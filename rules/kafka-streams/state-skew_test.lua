-- Tests of kafka-streams.state-skew on synthetic models (docs/model-kafka-streams.md).
local GB = 1024 * 1024 * 1024

-- Store "counts" on tasks 0_0.. with live bytes and keys per task.
local function app(bytes, keys, source)
  local nodes = {}
  for i = 1, #bytes do
    local tid = "0_" .. (i - 1)
    nodes[#nodes + 1] = { id = "t1/" .. tid .. "/counts", kind = "store",
                          metrics = { live_sst_bytes = bytes[i], estimated_keys = keys and keys[i] or nil,
                                      block_cache_data_hit_ratio = 0.1 * i },
                          attrs = { task_id = tid, store = "counts" } }
  end
  return { source = source or "kafka-streams", id = "orders-1", nodes = nodes }
end

return { rule = "kafka-streams.state-skew", cases = {
  { name = "one task holds 40 GiB, the median 2 GiB",
    inputs = { app({ 2 * GB, 40 * GB, 2 * GB, 3 * GB, 1 * GB },
                   { 1000000, 30000000, 1200000, 1100000, 900000 }) },
    expect = { { node = "t1/0_1/counts",
                 message = "Skew across the 5 tasks of store 'counts': estimated_keys 30,000,000 on store "
                   .. "'counts' of task 0_1 (27.3× the median 1,100,000); live_sst_bytes 40 GiB on store "
                   .. "'counts' of task 0_1 (20× the median 2 GiB).",
                 evidence = { metric = "estimated_keys", max = 30000000, median = 1100000,
                              tasks = 5, skewed_metrics = 2 } } } },
  { name = "even stores are quiet",
    inputs = { app({ 2 * GB, 3 * GB, 2 * GB, 3 * GB }) }, expect = {} },
  { name = "skewed but small: under the floor",
    inputs = { app({ 1000, 40000, 1000, 1000 }) }, expect = {} },
  { name = "two tasks have no median worth the name",
    inputs = { app({ 1 * GB, 40 * GB }) }, expect = {} },
  { name = "the factor is an option",
    inputs = { app({ 2 * GB, 40 * GB, 2 * GB }) }, options = { skew_factor = 30 }, expect = {} },
  { name = "Samza stores too",
    inputs = { app({ 2 * GB, 40 * GB, 2 * GB }, nil, "samza") },
    expect = { { evidence = { metric = "live_sst_bytes", skew_ratio = 20 } } } },
  { name = "changelog lag by partition and restore by task",
    inputs = { { source = "kafka-streams", id = "o", nodes = {
      { id = "c/x-0", kind = "changelog", metrics = { records_lag = 10 }, attrs = { store = "counts", partition = "0" } },
      { id = "c/x-1", kind = "changelog", metrics = { records_lag = 12 }, attrs = { store = "counts", partition = "1" } },
      { id = "c/x-2", kind = "changelog", metrics = { records_lag = 900000 }, attrs = { store = "counts", partition = "2" } },
      { id = "t/0_0", kind = "task", metrics = { restore_remaining_records = 0 }, attrs = { task_id = "0_0" } },
      { id = "t/0_1", kind = "task", metrics = { restore_remaining_records = 0 }, attrs = { task_id = "0_1" } },
      { id = "t/0_2", kind = "task", metrics = { restore_remaining_records = 5000000 }, attrs = { task_id = "0_2" } } } } },
    expect = { { node = "c/x-2", message = "Skew across the 3 changelog partitions of store 'counts': records_lag 900,000" },
               { node = "t/0_2", message = "Skew across 3 tasks: restore_remaining_records 5,000,000 on task 0_2 (the median is 0)",
                 evidence = { median = 0 } } } },
} }
