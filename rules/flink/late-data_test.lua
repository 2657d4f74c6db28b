-- Tests of flink.late-data over the project's synthetic exports
-- (fixtures/flink/gen.py).
local F = "../../fixtures/flink/"
return { rule = "flink.late-data", cases = {
  { name = "the window drops 120 late records/s between two polls",
    inputs = { F .. "late-data.json" },
    expect = { { node = "5f14c98da5b30ce2e1a585b9d84a121b", severity = "warning",
                 message = "(window 1m 00s) drops 120 records/s as late (3% of its input",
                 recommendation = "allowedLateness",
                 evidence = { late_records_dropped = 252000, late_records_dropped_per_s = 120,
                              late_share = 0.03, rate_source = "samples", window_ms = 60000 } } } },
  { name = "higher thresholds accept the rate",
    inputs = { F .. "late-data.json" }, options = { min_rate = 1000, min_share = 0.5 }, expect = {} },
  { name = "a late counter that does not grow stays quiet",
    inputs = { F .. "source-bound.json" }, expect = {} },
  { name = "healthy job stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
