local F = "../../fixtures/flink/"
return { rule = "flink.incremental-checkpoints", cases = {
  { name = "incremental off in the config (1.18 key name)",
    inputs = { F .. "rocksdb-full-checkpoints.json" },
    expect = { { message = "uploads the full 20.2 GiB",
                 evidence = { config_incremental = false, checkpoints_full = 10 },
                 changes = { { key = "state.backend.incremental", from = "false", to = "true" } } } } },
  { name = "config says incremental, every checkpoint is full-size (2.0)",
    inputs = { F .. "rocksdb-sizes-equal.json" },
    expect = { { message = "execution.checkpointing.incremental is true, yet",
                 recommendation = "EmbeddedRocksDBStateBackend(false)" } } },
  { name = "below min_state stays quiet",
    inputs = { F .. "rocksdb-full-checkpoints.json" }, options = { min_state = "100 gb" }, expect = {} },
  { name = "incremental RocksDB stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
  { name = "heap backend is another rule's", inputs = { F .. "hashmap-large-state.json" }, expect = {} },
} }
