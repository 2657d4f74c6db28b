-- Tests of flink.regression: optipipe rules test rules/flink
-- Inline daily exports of one job (a history by history_key).
local DAY = 86400000
local jitter = { 1.00, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99 }

-- Export k (day k): o = { rate (records/s of the window vertex), busy,
-- parallelism, ck_ms, ck_bytes, restarts, uptime_days }.
local function export(k, o)
  o = o or {}
  local j = jitter[(k - 1) % #jitter + 1]
  local p = o.parallelism or 8
  local at = 1700000000000 + k * DAY
  local up = math.floor((o.uptime_days or 1) * DAY)
  return { source = "flink", id = ("job-%02d"):format(k), name = "orders-windows",
    status = "running", started_at = at - up, duration_ms = up,
    metrics = { captured_at = at, restarts = o.restarts or 0,
                checkpoint_duration_p50_ms = math.floor((o.ck_ms or 20000) * j),
                checkpoint_state_size_p50_bytes = math.floor((o.ck_bytes or 4e9) * j) },
    nodes = {
      { id = "v-src", kind = "vertex", name = "Source: orders", parallelism = 4,
        metrics = { records_out_per_s = 40000 * j, busy_ratio = 0.3 }, attrs = {} },
      { id = "v-win", kind = "vertex", name = "Window(orders)", parallelism = p,
        metrics = { records_in_per_s = (o.rate or 40000) * j, busy_ratio = (o.busy or 0.5) },
        attrs = {} },
    },
    history_key = "orders-windows", history_order = k }
end

local function days(n, last, f)
  local t = {}
  for k = 1, n do
    t[k] = f and f(k) or export(k)
  end
  t[#t + 1] = last
  return t
end

-- Daily exports in the run store (fixtures/flink-nightly/gen.py): a new
-- job id every day, the same job name.
local function day(scenario, d)
  return ("../../fixtures/flink-nightly/%s/day-%d.json"):format(scenario, d)
end
local function days_of(scenario, first, last)
  local t = {}
  for d = first, last do
    t[#t + 1] = day(scenario, d)
  end
  return t
end

return { rule = "flink.regression", cases = {
  { name = "run store: checkpoints growing 40% a day over six daily exports",
    history = days_of("checkpoints", 1, 5), inputs = { day("checkpoints", 6) },
    expect = {
      { message = "The checkpoint duration (checkpoint_duration_p50_ms) rose from",
        evidence = { exports = 6 } },
      { message = "The checkpoint size (checkpoint_state_size_p50_bytes) rose from" } } },
  { name = "run store: the window needs 3x the busy time for the same rate",
    history = days_of("steady", 1, 5), inputs = { day("capacity", 6) },
    expect = { { message = "per busy subtask, 1/3.0 of its median" } } },
  { name = "run store: 8 restarts in 6 hours against none before",
    history = days_of("steady", 1, 5), inputs = { day("restarts", 6) },
    expect = { { message = "The job restarted 8 times in 6h 00m" } } },
  { name = "run store: a steady sixth day is quiet",
    history = days_of("steady", 1, 5), inputs = { day("steady", 6) },
    expect = {} },
  { name = "a vertex processes a quarter of its records per busy subtask",
    inputs = days(6, export(7, { rate = 40000, busy = 1.0, parallelism = 16 })),
    expect = { { node = "v-win", message = "Window(orders) processes 2475 records/s per busy subtask",
                 evidence = { history_runs = 6, parallelism = 16 } } } },
  { name = "more parallelism at the same capacity per subtask: quiet",
    inputs = days(6, export(7, { parallelism = 16, busy = 0.25 })),
    expect = {} },
  { name = "checkpoint duration rising over a week",
    inputs = days(6, export(7, { ck_ms = 20000 * 3.5 }), function(k)
      return export(k, { ck_ms = 20000 * (1 + 0.4 * (k - 1)) })
    end),
    expect = { { message = "The checkpoint duration (checkpoint_duration_p50_ms) rose from" } } },
  { name = "checkpoint size rising over a week",
    inputs = days(6, export(7, { ck_bytes = 4e9 * 3.5 }), function(k)
      return export(k, { ck_bytes = 4e9 * (1 + 0.4 * (k - 1)) })
    end),
    expect = { { message = "The checkpoint size (checkpoint_state_size_p50_bytes) rose" } } },
  { name = "restarts up: 6 in a day against none before",
    inputs = days(6, export(7, { restarts = 6 })),
    expect = { { message = "The job restarted 6 times in 1d 00h", evidence = { per_day = 6 } } } },
  { name = "steady exports: quiet",
    inputs = days(6, export(7)),
    expect = {} },
  { name = "too few earlier exports: quiet",
    inputs = days(2, export(7, { restarts = 6, rate = 10000, busy = 1.0 })),
    expect = {} },
} }
