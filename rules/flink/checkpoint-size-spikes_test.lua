local F = "../../fixtures/flink/"
return { rule = "flink.checkpoint-size-spikes", cases = {
  { name = "two spikes, the operator from the details",
    inputs = { F .. "checkpoint-size-spikes.json" },
    expect = { { node = "1bdda9031513e99210ccca85a61c60e2",
                 message = "2 of 30 incremental checkpoints uploaded far more than usual",
                 evidence = { spikes = 2, max_id = 123 } } } },
  { name = "a higher spike factor accepts them",
    inputs = { F .. "checkpoint-size-spikes.json" }, options = { spike_factor = 20 }, expect = {} },
  { name = "steady incremental sizes stay quiet", inputs = { F .. "healthy.json" }, expect = {} },
  { name = "full checkpoints are not incremental spikes",
    inputs = { F .. "rocksdb-full-checkpoints.json" }, expect = {} },
} }
