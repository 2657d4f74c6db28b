-- Tests of flink.scale-down over the project's synthetic exports
-- (fixtures/flink/gen.py).
local F = "../../fixtures/flink/"
local SRC, PARSE = "401d74de10cd3158812dc5836a8529ba", "ed56df2a2c250cbf3d62777433c1b54f"
local WIN, SINK = "f27ff91141bf9abeb6c6265631e6e5c9", "ed933ab3185438894d04b98e0f562fea"
return { rule = "flink.scale-down", cases = {
  { name = "every vertex a few percent busy at parallelism 32",
    inputs = { F .. "overprovisioned.json" },
    expect = {
      { node = SRC, severity = "info", message = "busy at most 3% at parallelism 32",
        changes = { { key = "parallelism", from = 32, to = 2 } } },
      { node = PARSE, changes = { { key = "parallelism", from = 32, to = 2 } } },
      -- keyed: ceil(32 x 6% / 70%) = 3, rounded up to a divisor of 128
      { node = WIN, recommendation = "rounded up to 4, a divisor of max parallelism 128",
        message = "the job needs 4 slots instead of 32",
        evidence = { target_parallelism = 4, slots = 32, slots_after = 4 },
        changes = { { key = "parallelism", from = 32, to = 4 } } },
      -- FORWARD from the window: the same parallelism as the window
      { node = SINK, recommendation = "raised to 4 to match 'Window(",
        changes = { { key = "parallelism", from = 32, to = 4 } } } } },
  { name = "sources aligned to their partitions",
    inputs = { F .. "overprovisioned.json" }, options = { source_partitions = 9 },
    expect = {
      { node = SRC, recommendation = "a divisor of the 9 source partitions",
        changes = { { key = "parallelism", to = 3 } } },
      { node = PARSE, changes = { { to = 2 } } }, { node = WIN }, { node = SINK } } },
  { name = "the source's offset metrics name 9 partitions: aligned to a divisor of 9",
    inputs = { F .. "overprovisioned-partitions.json" },
    expect = {
      { node = "4f537f972fa6e9fde46e2e870d30882b",
        recommendation = "a divisor of the 9 source partitions (counted from its Kafka offset metrics)",
        evidence = { partitions = 9, target_parallelism = 3 },
        changes = { { key = "parallelism", from = 32, to = 3 } } },
      { changes = { { to = 2 } } }, { changes = { { to = 4 } } }, { changes = { { to = 4 } } } } },
  { name = "source_partitions overrides the metric names (16: 2 already divides it)",
    inputs = { F .. "overprovisioned-partitions.json" }, options = { source_partitions = 16 },
    expect = {
      { node = "4f537f972fa6e9fde46e2e870d30882b", evidence = { partitions = 16 },
        changes = { { key = "parallelism", from = 32, to = 2 } } },
      { changes = { { to = 2 } } }, { changes = { { to = 4 } } }, { changes = { { to = 4 } } } } },
  { name = "busy above a (low) target utilization: never sized below the rate",
    inputs = { F .. "overprovisioned.json" }, options = { target_utilization = 0.01 },
    expect = {} },
  { name = "the window stays (busy 6% >= busy_low): so does its FORWARD sink",
    inputs = { F .. "overprovisioned.json" }, options = { busy_low = 0.045 },
    expect = { { node = SRC }, { node = PARSE } } },
  { name = "backpressure anywhere: no scale-down", inputs = { F .. "window-bottleneck.json" }, expect = {} },
  { name = "small vertices are not worth a restart", inputs = { F .. "healthy.json" }, expect = {} },
} }
