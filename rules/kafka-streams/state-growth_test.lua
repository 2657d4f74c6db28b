-- Tests of kafka-streams.state-growth: inline daily runs of one app (a
-- history by history_key), docs/model-kafka-streams.md.
local GB, DAY = 1024 * 1024 * 1024, 86400000
local T0 = 1767225600000 -- 2026-01-01

-- Day k: two tasks holding bytes (split 3:1) and the thread's input rate.
local function day(k, bytes, input, extra)
  local th = "app-1-StreamThread-1"
  local r = { source = "kafka-streams", id = "orders-" .. k, name = "orders", started_at = T0 + k * DAY,
    metrics = extra or {},
    nodes = { { id = th, kind = "thread", metrics = { process_records_per_s = input }, attrs = { instance = "pod-1" } },
              { id = th .. "/0_0/s", kind = "store", metrics = { live_sst_bytes = bytes * 3 / 4 },
                attrs = { task_id = "0_0", store = "s", instance = "pod-1" } },
              { id = th .. "/0_1/s", kind = "store", metrics = { live_sst_bytes = bytes / 4 },
                attrs = { task_id = "0_1", store = "s", instance = "pod-1" } } },
    history_key = "orders", history_order = k }
  return r
end

local function days(f)
  local t = {}
  for k = 1, 6 do
    t[k] = f(k)
  end
  return t
end

return { rule = "kafka-streams.state-growth", cases = {
  { name = "10 GiB a day on a flat input: missing cleanup",
    inputs = days(function(k) return day(k, (20 + 10 * k) * GB, 5000) end),
    expect = { { message = "The app's state grew from 30 GiB to 80 GiB (+166.7%, about 10 GiB a day) over "
                   .. "6 runs in 5d 00h, while its input stayed flat (+0%): old state is never removed.",
                 recommendation = "tombstones",
                 evidence = { per_day = 10 * GB, runs = 6, input_growth_ratio = 0 } } } },
  { name = "growing with the input: capacity, and the disk date",
    inputs = days(function(k) return day(k, (20 + 10 * k) * GB, 1000 * (2 + k), { state_disk_capacity_bytes = 200 * GB }) end),
    expect = { { message = "with its input (+166.7%): this is load",
                 recommendation = "Plan the capacity",
                 evidence = { disk_full_at = T0 + 18 * DAY } } } },
  { name = "the objective date from the largest task",
    inputs = days(function(k) return day(k, (20 + 10 * k) * GB, 5000) end),
    options = { recovery_time_objective = "1 h" },
    expect = { { message = "makes its largest task's restore exceed 1h 00m (175.8 GiB at 50 MiB/s) about 2026-01-22",
                 evidence = { objective_crossed_at = T0 + 6 * DAY + (175.78125 - 60) / 7.5 * DAY } } } },
  { name = "no input rate: cannot tell",
    inputs = days(function(k) return day(k, (20 + 10 * k) * GB, nil) end),
    expect = { { message = "the input rate was not in the runs" } } },
  { name = "steady state is quiet",
    inputs = days(function(k) return day(k, (50 + k % 2) * GB, 5000) end), expect = {} },
  { name = "run store: five stored days and the sixth, 10 GiB a day",
    history = { "../../fixtures/state-history/day-1.json", "../../fixtures/state-history/day-2.json",
                "../../fixtures/state-history/day-3.json", "../../fixtures/state-history/day-4.json",
                "../../fixtures/state-history/day-5.json" },
    inputs = { "../../fixtures/state-history/day-6.json" },
    expect = { { message = "grew from 30 GiB to 80 GiB (+166.7%, about 10 GiB a day) over 6 runs",
                 evidence = { runs = 6, input_growth_ratio = 0 } } } },
  { name = "too few runs", inputs = { day(1, 20 * GB, 1), day(2, 40 * GB, 1) }, expect = {} },
} }
