-- flinkkeys: Flink's renamed configuration keys, said once. Each row is
-- { old key, canonical (1.20/2.x) key, major, minor of the first version
-- with the canonical key } (docs/model-flink.md, "Run config"). Read by
-- flinkutil.key (which spelling to recommend) and, at build time, by the
-- Flink plugin: CMake turns these rows into its C table
-- (flink_keys_gen.h), which maps every old key to its canonical name as an
-- export is read. Keep one row per line in exactly this shape; an old key
-- may appear once, a canonical key more than once (its first row is the
-- spelling recommended to older clusters).
return {
  { "state.backend", "state.backend.type", 1, 17 },
  { "state.checkpoint-storage", "execution.checkpointing.storage", 1, 20 },
  { "state.checkpoints.dir", "execution.checkpointing.dir", 1, 20 },
  { "state.backend.fs.checkpointdir", "execution.checkpointing.dir", 1, 20 },
  { "state.savepoints.dir", "execution.checkpointing.savepoint-dir", 1, 20 },
  { "state.backend.incremental", "execution.checkpointing.incremental", 1, 20 },
  { "state.checkpoints.num-retained", "execution.checkpointing.num-retained", 1, 20 },
  { "state.checkpoints.create-subdir", "execution.checkpointing.create-subdir", 1, 20 },
  { "state.backend.local-recovery", "execution.state-recovery.from-local", 1, 20 },
  { "taskmanager.state.local.root-dirs", "execution.checkpointing.local-backup.dirs", 1, 20 },
  { "execution.checkpointing.unaligned", "execution.checkpointing.unaligned.enabled", 1, 20 },
  { "execution.checkpointing.alignment-timeout", "execution.checkpointing.aligned-checkpoint-timeout", 1, 20 },
  { "execution.checkpointing.checkpoints-after-tasks-finish.enabled", "execution.checkpointing.checkpoints-after-tasks-finish", 1, 20 },
  { "restart-strategy", "restart-strategy.type", 1, 17 },
  { "pipeline.operator-chaining", "pipeline.operator-chaining.enabled", 1, 20 },
}
