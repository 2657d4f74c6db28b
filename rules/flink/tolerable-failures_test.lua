local F = "../../fixtures/flink/"
return { rule = "flink.tolerable-failures", cases = {
  { name = "expired checkpoints with zero tolerance",
    inputs = { F .. "checkpoint-slow-failing.json" },
    expect = { { message = "3 recent checkpoints failed (latest #128: Checkpoint expired before completing.)",
                 changes = { { key = "execution.checkpointing.tolerable-failed-checkpoints", from = 0, to = 3 } } } } },
  { name = "zero tolerance but no failures stays quiet",
    inputs = { F .. "checkpointing-disabled.json" }, expect = {} },
  { name = "healthy job stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
