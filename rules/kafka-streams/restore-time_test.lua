-- Tests of kafka-streams.restore-time on synthetic models (docs/model-kafka-streams.md).
local GB = 1024 * 1024 * 1024

-- One instance, one thread, tasks 0_0..0_(n-1) with one store each of
-- bytes[i] and keys[i]; thread_rate: the thread's restore-records-rate.
local function app(bytes, keys, o)
  o = o or {}
  local th = "app-1-StreamThread-1"
  local nodes = { { id = th, kind = "thread", name = th,
                    metrics = { restore_records_per_s = o.thread_rate }, attrs = { thread_id = th } } }
  for i = 1, #bytes do
    local tid = "0_" .. (i - 1)
    local task = th .. "/" .. tid
    nodes[#nodes + 1] = { id = task, kind = "task", parents = { th }, metrics = {},
                          attrs = { task_id = tid, role = o.role or "active", thread_id = th } }
    nodes[#nodes + 1] = { id = task .. "/counts", kind = "store", parents = { task },
                          metrics = { live_sst_bytes = bytes[i], estimated_keys = keys and keys[i] or nil,
                                      restore_time_ms = o.restore_ms and o.restore_ms[i] or nil },
                          attrs = { task_id = tid, store = "counts", store_type = "rocksdb-state" } }
  end
  return { source = o.source or "kafka-streams", id = "orders-1", name = "orders",
           config = o.config or {}, nodes = nodes }
end

return { rule = "kafka-streams.restore-time", cases = {
  { name = "200 GiB at the default 50 MiB/s is over an hour",
    inputs = { app({ 200 * GB, 10 * GB }) },
    expect = { { node = "app-1-StreamThread-1/0_0",
                 message = "holds 200 GiB of SST files; at 50 MiB/s (the restore_bandwidth option",
                 evidence = { task_state_bytes = 200 * GB, tasks_over = 1, active_tasks = 2,
                              estimated_restore_ms = 200 * 1024 / 50 * 1000 },
                 changes = { { key = "num.standby.replicas", to = 1 } } } } },
  { name = "the measured restore-records-rate wins over the bandwidth",
    inputs = { app({ 10 * GB }, { 90000000 }, { thread_rate = 50000 }) },
    expect = { { message = "at the measured 50,000 records/s (restore-records-rate of app-1-StreamThread-1)",
                 evidence = { estimated_restore_ms = 1800000, restore_records_per_s = 50000 } } } },
  { name = "a fast measured rate keeps it inside the objective",
    inputs = { app({ 200 * GB }, { 1000000 }, { thread_rate = 50000 }) }, expect = {} },
  { name = "restore-total between scrapes gives the rate",
    inputs = { (function()
      local r = app({ 10 * GB }, { 60000000 })
      r.series = { samples = {
        { t_ms = 0, node = "app-1-StreamThread-1/0_0", restore_records = 0 },
        { t_ms = 60000, node = "app-1-StreamThread-1/0_0", restore_records = 1200000 } } }
      return r
    end)() },
    expect = { { message = "20,000 records/s (restore-total between scrapes of task 0_0)",
                 evidence = { estimated_restore_ms = 3000000 } } } },
  { name = "batches-counting restore-rate is not a record rate",
    inputs = { (function()
      local r = app({ 1 * GB }, { 60000000 })
      r.attrs = { restore_rate_counts = "batches" }
      r.nodes[2].metrics.restore_rate_per_s = 100
      return r
    end)() },
    expect = {} },
  { name = "standbys configured: no change, still over",
    inputs = { app({ 200 * GB }, nil, { config = { ["num.standby.replicas"] = "1" } }) },
    expect = { { evidence = { tasks_over = 1 } } } },
  { name = "standby tasks are not restored on failover",
    inputs = { app({ 200 * GB }, nil, { role = "standby" }) }, expect = {} },
  { name = "small state stays quiet", inputs = { app({ 1 * GB, 2 * GB }) }, expect = {} },
  { name = "the objective is an option",
    inputs = { app({ 200 * GB }) }, options = { recovery_time_objective = "2 h" }, expect = {} },
  { name = "Samza: the measured restore-time, host affinity",
    inputs = { app({ 1 * GB }, nil, { source = "samza", restore_ms = { 2400000 } }) },
    expect = { { message = "took 40m 00s to restore (the store's restore-time gauge)",
                 recommendation = "job.host-affinity.enabled",
                 changes = { { key = "job.standbytasks.replication.factor", to = 2 } } } } },
  { name = "no state metrics: quiet", inputs = { { source = "kafka-streams", id = "x", nodes = {} } },
    expect = {} },
} }
