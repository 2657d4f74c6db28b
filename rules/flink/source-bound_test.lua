-- Tests of flink.source-bound over the project's synthetic exports
-- (fixtures/flink/gen.py).
local F = "../../fixtures/flink/"
return { rule = "flink.source-bound", cases = {
  { name = "saturated source with a growing backlog: more source parallelism",
    inputs = { F .. "source-bound.json" },
    expect = { { node = "1c533833701b8699813e63f135902ae2", severity = "warning",
                 message = "grows by 1,500 records/s",
                 recommendation = "disableChaining() on 'Map (deserialize Avro)'",
                 evidence = { pending_records_change_per_s = 1500, event_time_lag_ms = 2700000,
                              target_parallelism = 8, confidence = "high" },
                 changes = { { key = "parallelism", from = 4, to = 8 } } } } },
  { name = "only /jobs polls: busy from accumulated-busy-time, no lag to show",
    inputs = { F .. "source-bound-jobs-only.json" },
    expect = { { node = "cd14fd284802c3fcb973a1f44b6f5a82", severity = "info",
                 message = "No lag was exported",
                 evidence = { ratio_source = "accumulated", busy_ratio = 0.99, confidence = "medium" },
                 changes = { { key = "parallelism", from = 4, to = 6 } } } } },
  { name = "below busy_full without lag: quiet",
    inputs = { F .. "source-bound-jobs-only.json" }, options = { busy_full = 1.0 }, expect = {} },
  { name = "a source with spare capacity stays quiet", inputs = { F .. "watermark-even-lag.json" }, expect = {} },
  { name = "a backpressured source is a victim, not the limit",
    inputs = { F .. "source-backpressured.json" }, expect = {} },
  { name = "healthy job stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
