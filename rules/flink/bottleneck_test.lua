-- Tests of flink.bottleneck over the project's synthetic exports
-- (fixtures/flink/gen.py).
local F = "../../fixtures/flink/"
return { rule = "flink.bottleneck", cases = {
  { name = "window operator is the bottleneck, not the backpressured source",
    inputs = { F .. "window-bottleneck.json" },
    expect = { { node = "5bc2c20be5e3b649f0c952aff38554c2", severity = "warning",
                 message = "is the bottleneck: busy 97%",
                 -- a single operator: no chain advice before the sizing (a
                 -- table has one value per key: the two checks are one text)
                 recommendation = "Raise the parallelism of this vertex only, from 4 to 16: "
                   .. "ceil(4 × busy 97% × 2× demand / 70% target utilization) = 12; "
                   .. "rounded up to 16, a divisor of max parallelism 128, so key groups "
                   .. "spread evenly. Apply it with pipeline.jobvertex-parallelism-overrides: "
                   .. "5bc2c20be5e3b649f0c952aff38554c2:16",
                 evidence = { busy_ratio = 0.97, upstream_backpressure_ratio = 0.9,
                              target_parallelism = 16, records_in_per_s = 12000 },
                 changes = { { key = "parallelism", from = 4, to = 16 } } } } },
  { name = "two polls with the source's backlog: the demand is measured (1.1x), 4 -> 8 not 16",
    inputs = { F .. "window-bottleneck-rates.json" },
    expect = { { node = "587afed74a0eea19b3476834a996a6d1",
                 recommendation = "the autoscaler's formula with the demand the sources' backlogs measure",
                 evidence = { sizing = "measured", target_parallelism = 8, demand_factor = 1.1 },
                 changes = { { key = "parallelism", from = 4, to = 8 } } } } },
  { name = "one poll: the demand is estimated from the backpressure, and said so",
    inputs = { F .. "window-bottleneck.json" },
    expect = { { evidence = { sizing = "estimated", demand_factor = 2 },
                 recommendation = "two polls with the sources' pendingRecords measure it" } } },
  { name = "target utilization changes the size (rounded to a divisor of 128)",
    inputs = { F .. "window-bottleneck.json" },
    options = { target_utilization = 0.9 },
    expect = { { node = "5bc2c20be5e3b649f0c952aff38554c2",
                 changes = { { key = "parallelism", from = 4, to = 16 } },
                 recommendation = "= 9; rounded up to 16" } } },
  { name = "backpressured source that is not the cause: the enrichment is",
    inputs = { F .. "source-backpressured.json" },
    expect = { { node = "2949ccccf995562734dbb9d683ce4ce2",
                 message = "'Source: Kafka clicks', which is backpressured 97%",
                 recommendation = "break the chain at a suspect (.disableChaining() or "
                   .. ".startNewChain() on that operator) or set pipeline.operator-chaining: false "
                   .. "while measuring",
                 evidence = { busy_ratio = 0.94 },
                 -- not keyed (REBALANCE input): no key-group rounding
                 changes = { { target = "Enrich with user profile -> Map", key = "parallelism",
                               from = 8, to = 22 } } } } },
  { name = "a chain: find the busy operator first",
    inputs = { F .. "source-backpressured.json" },
    expect = { { node = "2949ccccf995562734dbb9d683ce4ce2",
                 message = "It is a chain of 2 operators ('Enrich with user profile', 'Map')",
                 recommendation = "If the whole chain is busy, raise the parallelism" } } },
  { name = "skewed subtasks: fix the keys, not the parallelism",
    inputs = { F .. "skewed-window.json" },
    expect = { { node = "b2ed8638afccdfc4e71fca39564a614a",
                 message = "the busiest subtask is 4.2× the median (busy 99% vs 23.5%); one "
                   .. "subtask gets 6.7× the median records. The hot subtask limits the whole "
                   .. "vertex, so more parallelism will not help",
                 recommendation = "key distribution",
                 evidence = { busy_ratio = 0.99 } } } },
  { name = "windows stalled by watermarks get no parallelism advice",
    inputs = { F .. "watermark-idle-partition.json" }, expect = {} },
  { name = "demo export: the window operator", inputs = { "../../fixtures/demo/flink-window-bottleneck.json" },
    expect = { { node = "473ae7b7c8eede2cdbe5a3f4ab74c987",
                 -- ratios are written like every other pack's (issue #19)
                 recommendation = "ceil(4 × busy 97% × 2× demand / 70% target utilization) = 12",
                 changes = { { key = "parallelism", to = 16 } } } } },
  { name = "an empty plan in /jobs/<jid> (deploying): the full /plan still gives the DAG",
    inputs = { F .. "plan-deploying.json" },
    expect = { { node = "d71a34dc4f54cf26a0506e081744c5ee",
                 changes = { { key = "parallelism", from = 4, to = 16 } } } } },
  { name = "an async I/O operator with a full queue is flink.async-io's",
    inputs = { F .. "async-io.json" }, expect = {} },
  { name = "healthy job stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
  { name = "no backpressure anywhere stays quiet", inputs = { F .. "watermark-lagging.json" }, expect = {} },
} }
