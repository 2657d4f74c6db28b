-- Tests of flink.async-io over the project's synthetic exports
-- (fixtures/flink/gen.py).
local F = "../../fixtures/flink/"
return { rule = "flink.async-io", cases = {
  { name = "DataStream async wait operator with a full queue",
    inputs = { F .. "async-io.json" },
    expect = { { node = "da06d5559accadd58bd7739054469724", severity = "warning",
                 message = "each takes about 200 ms (Little's law)",
                 recommendation = "AsyncDataStream.unorderedWait",
                 evidence = { kind = "datastream", assumed_capacity = 100, in_flight = 400,
                              latency_ms = 200, upstream_backpressure_ratio = 0.88,
                              target_capacity = 200 },
                 changes = { { key = "AsyncDataStream capacity", to = 200 } } } } },
  { name = "SQL async lookup join: capacity and timeout from the plan",
    inputs = { F .. "async-lookup-sql.json" },
    expect = { { node = "6274e1579eef904c32b5f18bad29eded",
                 message = "capacity 100 per subtask, timeout 3m 00s, ordered",
                 recommendation = "table.exec.async-lookup.output-mode: ALLOW_UNORDERED",
                 evidence = { kind = "lookup", capacity = 100, timeout_ms = 180000,
                              output_mode = "ORDERED" },
                 changes = { { target = "job", key = "table.exec.async-lookup.buffer-capacity",
                               from = "100", to = "200" } } } } },
  { name = "a synchronous bottleneck is not async I/O",
    inputs = { F .. "window-bottleneck.json" }, expect = {} },
  { name = "healthy job stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
