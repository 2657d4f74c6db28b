-- Tests of kafka-streams.restore-after-rebalance on synthetic models (docs/model-kafka-streams.md).
local MIN = 60000
local th = "app-1-StreamThread-1"

-- Task 0_0 (active, restoring) with remaining = the newest of rems, one sample
-- per entry of rems every 5 minutes; ago: the thread's last rebalance.
local function restoring(rems, ago)
  local task = th .. "/0_0"
  local samples = {}
  for i, r in ipairs(rems) do
    samples[i] = { t_ms = (i - 1) * 5 * MIN, node = task, restore_remaining_records = r }
  end
  return { source = "kafka-streams", id = "orders-1",
           nodes = { { id = th, kind = "thread", metrics = { last_rebalance_ago_ms = ago } },
                     { id = task, kind = "task", parents = { th },
                       metrics = { restore_remaining_records = rems[#rems] },
                       attrs = { task_id = "0_0", role = "active", restore_state = "restoring" } } },
           series = { samples = samples } }
end

-- A standby store of task 0_2 and its changelog partition 2 whose lag is lags
-- (one sample every 5 minutes).
local function warmup(lags, config)
  local store = th .. "/0_2/counts"
  local log = th .. "-restore-consumer/orders-counts-changelog-2"
  local samples = {}
  for i, l in ipairs(lags) do
    samples[i] = { t_ms = (i - 1) * 5 * MIN, node = log, records_lag = l }
  end
  return { source = "kafka-streams", id = "orders-1", config = config or {},
           nodes = { { id = store, kind = "store", metrics = {},
                       attrs = { task_id = "0_2", store = "counts", role = "standby" } },
                     { id = log, kind = "changelog", metrics = { records_lag = lags[#lags] },
                       attrs = { topic = "orders-counts-changelog", partition = "2", store = "counts" } } },
           series = { samples = samples } }
end

return { rule = "kafka-streams.restore-after-rebalance", cases = {
  { name = "restoring for 20 minutes of scrapes",
    inputs = { restoring({ 9000000, 8400000, 7800000, 7200000, 6600000 }) },
    expect = { { node = th .. "/0_0",
                 message = "Active task 0_0 has been restoring for 20m 00s of scrapes and still has "
                   .. "6,600,000 records to go at 2,000 records/s: another 55m 00s; 1 active task is "
                   .. "restoring longer than 10m 00s.",
                 evidence = { restoring_ms = 20 * MIN, remaining_records = 6600000,
                              restore_records_per_s = 2000, tasks_restoring_long = 1 } } } },
  { name = "one scrape: since the last rebalance",
    inputs = { restoring({ 500000 }, 30 * MIN) },
    expect = { { message = "restoring since its thread's last rebalance 30m 00s ago" } } },
  { name = "not progressing",
    inputs = { restoring({ 500000, 500000, 500000 }) },
    expect = { { message = "and the remaining count did not fall" } } },
  { name = "a restore that started in the last scrape is short",
    inputs = { restoring({ -1, -1, -1, 500000 }) }, expect = {} },
  { name = "a short restore is quiet", inputs = { restoring({ 500000, 100000 }) }, expect = {} },
  { name = "idle tasks are quiet",
    inputs = { { source = "kafka-streams", id = "o",
                 nodes = { { id = "t", kind = "task", metrics = {}, attrs = { restore_state = "idle" } } } } },
    expect = {} },
  { name = "a warm-up 2M behind for 20 minutes, not shrinking",
    inputs = { warmup({ 1800000, 1900000, 1950000, 2000000, 2100000 }) },
    expect = { { node = th .. "/0_2/counts",
                 message = "longer than a probing rebalance (10m 00s, Kafka Streams' default): it never gets "
                   .. "within 10,000 records (acceptable.recovery.lag)",
                 evidence = { lag_records = 2100000, first_lag_records = 1800000, stores_not_catching_up = 1 } } } },
  { name = "a warm-up that catches up is quiet",
    inputs = { warmup({ 2000000, 1500000, 1000000, 500000, 100000 }) }, expect = {} },
  { name = "a window shorter than the probing interval says nothing",
    inputs = { warmup({ 2000000, 2100000, 2200000, 2300000, 2400000 },
                      { ["probing.rebalance.interval.ms"] = "3600000" }) },
    expect = {} },
  { name = "within acceptable.recovery.lag is caught up",
    inputs = { warmup({ 9000, 9500, 9800 }) }, expect = {} },
} }
