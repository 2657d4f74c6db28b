local F = "../../fixtures/flink/"
return { rule = "flink.checkpoint-storage", cases = {
  { name = "JobManager heap storage",
    inputs = { F .. "jobmanager-storage.json" },
    expect = { { message = "JobManagerCheckpointStorage",
                 changes = { { key = "state.checkpoint-storage", from = "jobmanager", to = "filesystem" },
                             { key = "state.checkpoints.dir" } } } } },
  { name = "a local file: directory under /tmp",
    inputs = { F .. "local-checkpoint-dir.json" },
    expect = { { message = "local path (file:///tmp/flink-checkpoints)",
                 changes = { { key = "state.checkpoints.dir", from = "file:///tmp/flink-checkpoints" } } } } },
  { name = "checkpointing disabled is another rule's", inputs = { F .. "checkpointing-disabled.json" }, expect = {} },
  { name = "S3 stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
