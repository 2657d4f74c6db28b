-- Tests of spark.regression: optipipe rules test rules/spark
-- Inline nightly runs of one app (a history by history_key); the run-store
-- cases (history = {...}) use fixtures/spark-nightly.
local DAY = 86400000
local MIB = 1048576
local jitter = { 1.00, 1.03, 0.98, 1.01, 0.97, 1.02, 0.99 }

-- One night: n = 1..; o = { slow (join stage factor), input (factor),
-- executors, partitions, join_input (the join's input factor), extra (a stage before the others: ids shift),
-- order }.
local function night(n, o)
  o = o or {}
  local j = jitter[(n - 1) % #jitter + 1]
  local slow, vol, ex = o.slow or 1, o.input or 1, o.executors or 4
  local scan_ms = math.floor(400000 * j * vol)
  local jin = o.join_input or 1
  local join_ms = math.floor(300000 * j * slow * vol * jin)
  local dur = math.floor(600000 * j * (1 + 0.5 * (slow - 1)) * vol * 4 / ex)
  local nodes, sid = {}, 0
  local function stage(name, ms, m)
    m.executor_run_ms = ms
    nodes[#nodes + 1] = { id = ("stage-%d-0"):format(sid), kind = "stage", name = name,
      status = "succeeded", duration_ms = ms // 16, metrics = m, attrs = {} }
    sid = sid + 1
  end
  if o.extra then
    stage("cache at Orders.scala:12", 1000, {})
  end
  stage("scan orders at Orders.scala:41", scan_ms, { input_bytes = 10240 * MIB * vol })
  stage("join at Orders.scala:70", join_ms, { shuffle_read_bytes = 2048 * MIB * vol * jin })
  local id = ("application_1700000000000_%04d"):format(n)
  return { source = "spark", id = id, name = "nightly-orders", status = "succeeded",
    started_at = 1700000000000 + n * DAY, duration_ms = dur, engine_version = "3.5.1",
    config = { ["spark.app.id"] = id, ["spark.executor.cores"] = "4",
               ["spark.sql.shuffle.partitions"] = o.partitions or "64" },
    metrics = { executors_max = ex, executor_cores_max = ex * 4,
                executor_core_ms = dur * ex * 4, input_bytes = 10240 * MIB * vol },
    nodes = nodes, history_key = "nightly-orders", history_order = o.order or n }
end

-- The committed nightly logs (fixtures/spark-nightly/gen.py), for cases
-- over the run store: history = nights 1..7, input night 8.
local function logs(scenario)
  local t = {}
  for n = 1, 7 do
    t[n] = ("../../fixtures/spark-nightly/%s/night-%02d.log.gz"):format(scenario, n)
  end
  return t, { ("../../fixtures/spark-nightly/%s/night-08.log.gz"):format(scenario) }
end
local slower_hist, slower_8 = logs("slower")
local volume_hist, volume_8 = logs("volume")
local steady_hist, steady_8 = logs("steady")

local function nights(k, last)
  local t = {}
  for n = 1, k do
    t[n] = night(n)
  end
  t[#t + 1] = last
  return t
end

return { rule = "spark.regression", cases = {
  { name = "a stage 3x slower with the same input: the stage and the changed key",
    inputs = nights(7, night(8, { slow = 3, partitions = "16" })),
    expect = {
      { node = "stage-1-0", severity = "warning",
        message = "Stage 'join at Orders.scala:70' spent 15m 00s in tasks, 3× its median",
        evidence = { stage = "join at Orders.scala:70#1", ratio = 3, history_runs = 7,
                     input_ratio = 1, changed_keys = { "spark.sql.shuffle.partitions" } } },
      { severity = "warning",
        message = "the stage that grew most: 'join at Orders.scala:70'" },
    } },
  { name = "the changed key is named with both values",
    inputs = nights(7, night(8, { slow = 3, partitions = "16" })),
    expect = {
      { node = "stage-1-0", message = "application_1700000000000_0007: spark.sql.shuffle.partitions 64 -> 16" },
      { message = "spark.sql.shuffle.partitions 64 -> 16" },
    } },
  { name = "the same slowdown with 3x the input is volume growth (info)",
    inputs = nights(7, night(8, { input = 3 })),
    expect = { { severity = "info", message = "as expected: its input grew 3×",
                 evidence = { input_ratio = 3 } } } },
  { name = "one stage read 3x more and took 3x longer, the app did not regress: info on the stage",
    inputs = nights(7, night(8, { join_input = 3 })),
    expect = { { node = "stage-1-0", severity = "info",
                 message = "as expected: volume grew 3× (it read 6 GiB against a median of 2 GiB)" } } },
  { name = "a run on half the executors is not a code regression",
    inputs = nights(7, night(8, { executors = 2 })),
    expect = { { severity = "info",
                 message = "it ran on 8 executor cores against a median of 16" } } },
  { name = "stage ids shift (a stage added before): matched by name, not id",
    inputs = nights(7, night(8, { slow = 3, extra = true })),
    expect = {
      { node = "stage-2-0", message = "Nothing in the config, executors x cores or Spark version changed" },
      { message = "join at Orders.scala:70" },
    } },
  { name = "stage ids shift and nothing is slower: quiet",
    inputs = nights(7, night(8, { extra = true })),
    expect = {} },
  { name = "normal jitter: quiet",
    inputs = nights(7, night(8)),
    expect = {} },
  { name = "two earlier runs are too few for a baseline",
    inputs = nights(2, night(8, { slow = 3 })),
    expect = {} },
  { name = "run store: night 8's aggregate 3x slower, the key that changed",
    history = slower_hist, inputs = slower_8,
    expect = { { node = "stage-1-0", severity = "warning",
      message = "Stage 'aggregate at Orders.scala:57' spent",
      evidence = { changed_keys = { "spark.executor.memory" }, history_runs = 7 } } } },
  { name = "run store: the same slowdown on 3x the input is volume growth",
    history = volume_hist, inputs = volume_8,
    expect = { { node = "stage-1-0", severity = "info", message = "as expected: volume grew 3×" } } },
  { name = "run store: a steady night is quiet",
    history = steady_hist, inputs = steady_8,
    expect = {} },
  { name = "min_history is an option",
    inputs = nights(2, night(8, { slow = 3 })),
    options = { min_history = 2 },
    expect = { { node = "stage-1-0" }, { message = "The app took" } } },
} }
