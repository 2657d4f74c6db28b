local F = "../../fixtures/flink/"
return { rule = "flink.checkpoint-storage", cases = {
  { name = "JobManager heap storage without a directory: advice, no placeholder change",
    inputs = { F .. "jobmanager-storage.json" },
    expect = { { message = "no checkpoint directory is set",
                 recommendation = "set state.checkpoints.dir to a path there and "
                   .. "state.checkpoint-storage: filesystem" } } },
  { name = "JobManager storage with an S3 directory: switch the storage, keep the directory",
    inputs = { F .. "jobmanager-storage-dir.json" },
    expect = { { message = "survives the loss of the JobManager",
                 recommendation = "keep state.checkpoints.dir as it is (s3://flink-prod/checkpoints)",
                 evidence = { dir = "s3://flink-prod/checkpoints" },
                 changes = { { key = "state.checkpoint-storage", from = "jobmanager",
                               to = "filesystem" } } } } },
  { name = "a local file: directory under /tmp",
    inputs = { F .. "local-checkpoint-dir.json" },
    expect = { { message = "local path (file:///tmp/flink-checkpoints)",
                 evidence = { dir = "file:///tmp/flink-checkpoints" } } } },
  { name = "checkpointing disabled is another rule's", inputs = { F .. "checkpointing-disabled.json" }, expect = {} },
  { name = "S3 stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
