-- Tests of kafka-streams.standbys on synthetic models (docs/model-kafka-streams.md).
local GB = 1024 * 1024 * 1024

-- Tasks of one thread: tasks = { { tid, bytes, role } }; lags = { [partition] = lag }
-- of the restore consumer's changelog partitions of store "counts".
local function app(tasks, o)
  o = o or {}
  local th = "app-1-StreamThread-1"
  local nodes = { { id = th, kind = "thread", name = th,
                    metrics = { standby_updating_tasks = o.updating }, attrs = {} } }
  for _, t in ipairs(tasks) do
    local task = th .. "/" .. t[1]
    nodes[#nodes + 1] = { id = task, kind = "task", parents = { th }, metrics = {},
                          attrs = { task_id = t[1], role = t[3] or "active" } }
    nodes[#nodes + 1] = { id = task .. "/counts", kind = "store", parents = { task },
                          metrics = { live_sst_bytes = t[2] },
                          attrs = { task_id = t[1], store = "counts", role = t[3] or "active" } }
  end
  for p, lag in pairs(o.lags or {}) do
    nodes[#nodes + 1] = { id = "c/orders-counts-changelog-" .. p, kind = "changelog",
                          metrics = { records_lag = lag },
                          attrs = { topic = "orders-counts-changelog", partition = tostring(p),
                                    store = "counts" } }
  end
  return { source = "kafka-streams", id = "orders-1", config = o.config or {}, nodes = nodes,
           metrics = { instances = 3 } }
end

local big = { { "0_0", 30 * GB }, { "0_1", 20 * GB } }

return { rule = "kafka-streams.standbys", cases = {
  { name = "50 GiB and num.standby.replicas = 0",
    inputs = { app(big, { config = { ["num.standby.replicas"] = "0" } }) },
    expect = { { node = "app-1-StreamThread-1/0_0",
                 message = "keeps 50 GiB of state (task 0_0 alone 30 GiB) and num.standby.replicas is 0",
                 evidence = { state_bytes = 50 * GB, standby_replicas = 0 },
                 changes = { { key = "num.standby.replicas", from = "0", to = 1 } } } } },
  { name = "no config, no standby seen on the thread",
    inputs = { app(big, { updating = 0 }) },
    expect = { { message = "no standby task was seen on 1 thread (num.standby.replicas is not in the inputs)" } } },
  { name = "no config, no roles, no state updater: unknown, quiet",
    inputs = { { source = "kafka-streams", id = "o", nodes = {
      { id = "t/0_0/s", kind = "store", metrics = { live_sst_bytes = 50 * GB }, attrs = { task_id = "0_0", store = "s" } } } } },
    expect = {} },
  { name = "no config, a standby task seen: quiet",
    inputs = { app({ { "0_0", 30 * GB }, { "0_1", 20 * GB, "standby" } }) }, expect = {} },
  { name = "the thread updates standbys: quiet", inputs = { app(big, { updating = 2 }) }, expect = {} },
  { name = "standbys configured: quiet",
    inputs = { app(big, { config = { ["num.standby.replicas"] = "1" } }) }, expect = {} },
  { name = "small state: quiet",
    inputs = { app({ { "0_0", 1 * GB } }, { config = { ["num.standby.replicas"] = "0" } }) },
    expect = {} },
  { name = "a standby 2M records behind its changelog",
    inputs = { app({ { "0_0", 1 * GB }, { "0_1", 1 * GB, "standby" }, { "0_2", 1 * GB, "standby" } },
                   { config = { ["num.standby.replicas"] = "1" }, lags = { [1] = 2000000, [2] = 50 } }) },
    expect = { { node = "app-1-StreamThread-1/0_1/counts",
                 message = "1 of 2 standby stores are more than 10,000 records behind their changelog "
                   .. "(acceptable.recovery.lag, Kafka Streams' default)",
                 evidence = { max_lag_records = 2000000, lagging = 1, acceptable_recovery_lag = 10000 } } } },
  { name = "acceptable.recovery.lag raised: caught up",
    inputs = { app({ { "0_1", 1 * GB, "standby" } },
                   { config = { ["num.standby.replicas"] = "1", ["acceptable.recovery.lag"] = "5000000" },
                     lags = { [1] = 2000000 } }) },
    expect = {} },
} }
