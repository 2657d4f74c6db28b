local F = "../../fixtures/flink/"
return { rule = "flink.retained-checkpoints", cases = {
  { name = "num-retained not set (Flink 1.18 key)",
    inputs = { F .. "retained-default.json" },
    expect = { { message = "is not set, Flink's default is 1",
                 changes = { { key = "state.checkpoints.num-retained", to = 2 } } } } },
  { name = "num-retained 1 (Flink 1.20 key)",
    inputs = { F .. "retained-one.json" },
    expect = { { changes = { { key = "execution.checkpointing.num-retained", from = "1", to = 2 } } } } },
  { name = "min_retained 4 flags three",
    inputs = { F .. "healthy.json" }, options = { min_retained = 4 },
    expect = { { evidence = { num_retained = 3 } } } },
  { name = "cluster config not exported: quiet, not guessed",
    inputs = { F .. "window-bottleneck.json" }, expect = {} },
  { name = "three retained stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
