-- Tests of mixed.change-outcome: optipipe rules test rules/mixed
-- Nightly Spark logs of one app (fixtures/spark-nightly, gen.py): history
-- inputs go into the case's private run store, with the decisions given.
-- The window vertex of fixtures/flink-nightly/steady/day-5.json (Flink
-- vertex ids of these fixtures change with the job; matched by name).
local WINDOW_DAY5 = "5056b5afc18be6f76446a8c684542066"

local function p(scenario, n)
  return ("../../fixtures/spark-nightly/%s/night-%02d.log.gz"):format(scenario, n)
end

-- The finding spark.shuffle-partitions makes on those nights (the harness
-- runs only the rule under test on history inputs, so the test gives it).
local function proposed()
  return { { rule = "spark.shuffle-partitions", node = "stage-1-0",
    message = "spark.sql.shuffle.partitions is 600 but the stage read 2.4 MiB",
    changes = { { target = "nightly-orders", key = "spark.sql.shuffle.partitions",
                  from = "600", to = 16 } } } }
end

local function decided(scenario, n, status)
  return { input = p(scenario, n), findings = proposed(), decisions = { {
    rule = "spark.shuffle-partitions", node = "stage-1-0", status = status } } }
end

local function approved(scenario, n)
  return decided(scenario, n, "approved")
end

local function proposed_on(scenario, n)
  return { input = p(scenario, n), findings = proposed() }
end

-- A finding of `rule` on night n of scenario with `changes`, approved.
local function approved_finding(scenario, n, rule, node, changes)
  return { input = p(scenario, n), findings = { { rule = rule, node = node, changes = changes } },
           decisions = { { rule = rule, status = "approved" } } }
end

local function SPILL()
  return { { target = "nightly-orders", key = "spark.sql.files.maxPartitionBytes",
             from = "128m", to = "64m" } }
end
local function SPEC()
  return { { target = "nightly-orders", key = "spark.speculation", to = "true" } }
end

return { rule = "mixed.change-outcome", cases = {
  { name = "the spill a finding measured is judged, not only time: spill gone, time the same",
    history = { p("spill", 1), p("spill", 2), p("spill", 3),
                approved_finding("spill", 4, "spark.spill", "stage-1-0", SPILL()) },
    inputs = { p("spill", 5) },
    expect = { { severity = "info",
      message = "spill 0 B against a median of 80.2 MiB over the 4 runs before it (-100%): "
        .. "effective. Its aggregate at Orders.scala:57 time: no measurable effect",
      recommendation = "Keep it",
      evidence = { outcome = "effective", metric = "spill", after = 0,
                   verdicts = { { metric = "spill", outcome = "effective" },
                                { metric = "aggregate at Orders.scala:57 time",
                                  outcome = "no effect" } } } } } },
  { name = "a change applied on the first run: no effect yet, and when it becomes ineffective",
    history = { p("speculation", 1), p("speculation", 2),
                approved_finding("speculation", 3, "spark.config", nil, SPEC()) },
    inputs = { p("speculation", 4) },
    expect = { { severity = "info", message = ": no measurable effect.",
                 recommendation = "After 3 runs with it and still no gain",
                 evidence = { outcome = "no effect", after_runs = 1 } } } },
  { name = "the second run with it: already said, quiet",
    history = { p("speculation", 1), p("speculation", 2),
                approved_finding("speculation", 3, "spark.config", nil, SPEC()), p("speculation", 4) },
    inputs = { p("speculation", 5) },
    expect = {} },
  { name = "the third run with it and still no gain: ineffective, revert",
    history = { p("speculation", 1), p("speculation", 2),
                approved_finding("speculation", 3, "spark.config", nil, SPEC()),
                p("speculation", 4), p("speculation", 5) },
    inputs = { p("speculation", 6) },
    expect = { { severity = "warning",
                 message = "is applied in the last 3 runs: run time",
                 recommendation = "Revert it",
                 evidence = { outcome = "ineffective", after_runs = 3 } } } },
  { name = "ineffective_after is an option",
    history = { p("speculation", 1), p("speculation", 2),
                approved_finding("speculation", 3, "spark.config", nil, SPEC()),
                p("speculation", 4), p("speculation", 5) },
    inputs = { p("speculation", 6) }, options = { ineffective_after = 5 },
    expect = {} },
  { name = "back to its old value after three runs with it: reverted",
    history = { p("speculation", 1), p("speculation", 2),
                approved_finding("speculation", 3, "spark.config", nil, SPEC()),
                p("speculation", 4), p("speculation", 5), p("speculation", 6) },
    inputs = { p("speculation", 7) },
    expect = { { severity = "info", message = "is reverted: back to its old value in this run",
                 evidence = { outcome = "reverted",
                              applied_since = "application_1700000000000_0704" } } } },
  { name = "an approved change applied on the next run: effective, with the numbers",
    history = { p("partitions", 4), p("partitions", 5), p("partitions", 6), approved("partitions", 7) },
    inputs = { p("partitions", 8) },
    expect = { { severity = "info",
      message = "The approved change spark.sql.shuffle.partitions 600 -> 16 (spark.shuffle-partitions finding",
      evidence = { outcome = "effective", metric = "aggregate at Orders.scala:57 time",
                   before_runs = 4, approved_on = "application_1700000000000_0107" } } } },
  { name = "applied on a slower stage: worse, and the revert as a change",
    history = { p("worse-partitions", 1), p("worse-partitions", 2), p("worse-partitions", 3),
                approved("worse-partitions", 4) },
    inputs = { p("worse-partitions", 5) },
    expect = { { severity = "warning", message = ": worse.",
      recommendation = "Revert it: spark.sql.shuffle.partitions 16 -> 600.",
      evidence = { outcome = "worse" },
      changes = { { key = "spark.sql.shuffle.partitions", to = "600" } } } } },
  { name = "the same change without a decision: quiet",
    history = { p("partitions", 5), p("partitions", 6), proposed_on("partitions", 7) },
    inputs = { p("partitions", 8) },
    expect = {} },
  { name = "a dismissed change: quiet",
    history = { p("partitions", 6), decided("partitions", 7, "dismissed") },
    inputs = { p("partitions", 8) },
    expect = {} },
  { name = "approved but not applied yet: quiet",
    history = { p("partitions", 5), approved("partitions", 6) },
    inputs = { p("partitions", 7) },
    expect = {} },
  { name = "min_effect is an option: a 90% bar makes it no effect",
    history = { p("partitions", 5), p("partitions", 6), approved("partitions", 7) },
    inputs = { p("partitions", 8) },
    options = { min_effect = 0.9 },
    expect = { { severity = "info", message = ": no measurable effect.",
                 evidence = { outcome = "no effect" } } } },
  { name = "a Flink scale-down applied (the vertex now has the target parallelism): effective",
    history = { "../../fixtures/flink-nightly/steady/day-3.json",
                "../../fixtures/flink-nightly/steady/day-4.json",
                { input = "../../fixtures/flink-nightly/steady/day-5.json",
                  findings = { { rule = "flink.scale-down", node = WINDOW_DAY5,
                    changes = { { target = "Window", key = "parallelism", from = 4, to = 2 } } } },
                  decisions = { { rule = "flink.scale-down", status = "approved" } } } },
    inputs = { "../../fixtures/flink-nightly/rescaled/day-6.json" },
    expect = { { severity = "info", message = ": effective, on fewer subtasks.",
                 evidence = { outcome = "effective", metric = "backpressure", after = 0 } } } },
  { name = "the same scale-down not applied yet: quiet",
    history = { "../../fixtures/flink-nightly/steady/day-4.json",
                { input = "../../fixtures/flink-nightly/steady/day-5.json",
                  findings = { { rule = "flink.scale-down", node = WINDOW_DAY5,
                    changes = { { target = "Window", key = "parallelism", from = 4, to = 2 } } } },
                  decisions = { { rule = "flink.scale-down", status = "approved" } } } },
    inputs = { "../../fixtures/flink-nightly/steady/day-6.json" },
    expect = {} },
  { name = "without a run store: quiet",
    inputs = { p("partitions", 8) },
    expect = {} },
} }
