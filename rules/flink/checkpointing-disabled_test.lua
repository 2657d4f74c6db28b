local F = "../../fixtures/flink/"
return { rule = "flink.checkpointing-disabled", cases = {
  { name = "keyed window without checkpoints",
    inputs = { F .. "checkpointing-disabled.json" },
    expect = { { message = "Long.MAX_VALUE",
                 evidence = { stateful_vertex = "b7fc9219b8858198aa2f4a9d12e44024" },
                 changes = { { key = "execution.checkpointing.interval", to = "1 min" } } } } },
  { name = "a stateless pipeline without checkpoints stays quiet",
    inputs = { F .. "stateless-no-checkpoints.json" }, expect = {} },
  { name = "checkpointing on stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
