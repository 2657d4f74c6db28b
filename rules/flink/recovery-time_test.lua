local F = "../../fixtures/flink/"
return { rule = "flink.recovery-time", cases = {
  { name = "a 5 TiB shard at 200 MiB/s is about seven hours",
    inputs = { F .. "recovery-large-state.json" },
    expect = { { node = "88cf73fa74f7cd9e9b7c127c18fc6671",
                 message = "7h 17m before replay even starts",
                 changes = { { key = "state.backend.local-recovery", to = "true" },
                             { key = "state.backend.rocksdb.checkpoint.transfer.thread.num", to = 8 } } } } },
  { name = "without details: even spread assumed, no node",
    inputs = { F .. "recovery-no-details.json" },
    expect = { { message = "assuming the 2 TiB of checkpoint #109 spread evenly over 4 subtasks" } } },
  { name = "a faster restore fits the objective",
    inputs = { F .. "recovery-no-details.json" }, options = { restore_bandwidth = "1 gb" }, expect = {} },
  { name = "healthy job stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
