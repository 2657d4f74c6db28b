local F = "../../fixtures/flink/"
return { rule = "flink.state-backend", cases = {
  { name = "6 GiB of heap state over 4 slots",
    inputs = { F .. "hashmap-large-state.json" },
    expect = { { message = "about 1.5 GiB per slot over 4 slots", recommendation = "savepoint and downtime",
                 evidence = { slots = 4 },
                 changes = { { key = "state.backend.type", from = "hashmap", to = "rocksdb" } } } } },
  { name = "a higher per-slot limit accepts it",
    inputs = { F .. "hashmap-large-state.json" }, options = { max_state_per_slot = "2 gb" }, expect = {} },
  { name = "small heap state stays quiet", inputs = { F .. "source-backpressured.json" }, expect = {} },
  { name = "RocksDB stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
