-- Tests of flink.state-growth: inline daily exports of one job (a history
-- by history_key).
local GB, DAY = 1024 * 1024 * 1024, 86400000
local T0 = 1767225600000 -- 2026-01-01

-- Day k: checkpoint median state bytes, the source's rate, keys.
local function day(k, bytes, rate, keys)
  return { source = "flink", id = ("job-%02d"):format(k), name = "sessions",
    metrics = { captured_at = T0 + k * DAY, checkpoint_state_size_p50_bytes = bytes },
    config = { ["taskmanager.numberOfTaskSlots"] = "2" },
    nodes = { { id = "src", kind = "vertex", name = "Source: clicks", parallelism = 4, parents = {},
                metrics = { records_out_per_s = rate }, attrs = {} },
              { id = "win", kind = "vertex", name = "SessionWindow", parallelism = 8, parents = { "src" },
                metrics = { estimated_keys = keys }, attrs = {} } },
    history_key = "sessions", history_order = k }
end

local function days(f)
  local t = {}
  for k = 1, 6 do
    t[k] = f(k)
  end
  return t
end

return { rule = "flink.state-growth", cases = {
  { name = "40 GiB a day on a flat input: state TTL",
    inputs = days(function(k) return day(k, (100 + 40 * k) * GB, 20000) end),
    expect = { { message = "The job's checkpointed state (median checkpoint) grew from 140 GiB to 340 GiB "
                   .. "(+142.9%, about 40 GiB a day) over 6 runs in 5d 00h, while its input stayed flat (+0%)",
                 recommendation = "StateTtlConfig",
                 evidence = { per_day = 40 * GB, runs = 6 } } } },
  { name = "the objective date from the largest shard, and the local disk",
    inputs = days(function(k) return day(k, (100 + 40 * k) * GB, 20000) end),
    options = { recovery_time_objective = "1 h", local_disk = "200 gb" },
    expect = { { message = "makes the largest shard's restore exceed 1h 00m (703.1 GiB per subtask at "
                   .. "200 MiB/s) about 2026-05-19, and fills a TaskManager's 200 GiB local disk (2 slots) about 2026-01-18",
                 evidence = { disk_full_at = T0 + 6 * DAY + (200 - 85) / 10 * DAY } } } },
  { name = "with the input: capacity",
    inputs = days(function(k) return day(k, (100 + 40 * k) * GB, 5000 * (2 + k)) end),
    expect = { { message = "with its input (+166.7%)", recommendation = "Plan the capacity" } } },
  { name = "keys when no checkpoint size",
    inputs = days(function(k) return day(k, nil, 20000, 1000000 * k) end),
    expect = { { message = "The job's RocksDB keys grew from 1,000,000 keys to 6,000,000 keys" } } },
  { name = "steady state is quiet",
    inputs = days(function(k) return day(k, (200 + k % 2) * GB, 20000) end), expect = {} },
  { name = "one run is no trend", inputs = { day(1, 100 * GB, 1) }, expect = {} },
} }
