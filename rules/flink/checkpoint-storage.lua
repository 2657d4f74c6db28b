-- flink.checkpoint-storage: checkpoints on the JobManager heap or a local
-- path. docs/rules/flink.checkpoint-storage.md
local fu = require "flinkutil"

-- A path other TaskManagers (and a restarted JobManager) cannot reach.
local function local_path(p)
  if not p or p == "" or fu.is_placeholder(p) then -- "<checkpoint-not-externally-addressable>"
    return false
  end
  if p:match("^file:") or p:sub(1, 1) == "/" or p:find("/tmp/", 1, true) then
    return true
  end
  return not p:match("^[%a][%w+.-]*:") -- no scheme: a local path
end

-- The RPC frame size key of the run's Flink version (Pekko since 1.18).
local function framesize_key(run)
  local major, minor = fu.version(run)
  if major and (major < 1 or (major == 1 and minor < 18)) then
    return "akka.framesize"
  end
  return "pekko.framesize"
end

-- JobManagerCheckpointStorage with a directory: the metadata, and the
-- state inlined in it, is written there and survives; the limits are the
-- JobManager's memory and the RPC frame size.
local function jobmanager_with_dir(run, ctx, dir, storage_key, dir_key)
  ctx.report {
    message = ("Checkpoints use JobManagerCheckpointStorage with a checkpoint directory (%s): "
      .. "the checkpoint metadata, with every operator's state inlined in it, is written "
      .. "there and survives the loss of the JobManager. The limits are elsewhere: all state "
      .. "is sent to the JobManager in RPC messages (%s, 10 MB by default) and held in its "
      .. "heap while the metadata is written, and each state handle is capped at 5 MB by "
      .. "default: the job fails to checkpoint as the state grows."):format(dir, framesize_key(run)),
    recommendation = ("Set %s: filesystem and keep %s as it is (%s): TaskManagers then write "
      .. "their state files to that directory themselves and send the JobManager only "
      .. "handles, so neither its heap nor the RPC frame size bounds the state."):format(
        storage_key, dir_key, dir),
    evidence = { storage = "jobmanager", dir = dir },
    changes = { { target = "job", key = storage_key, from = "jobmanager", to = "filesystem" } },
  }
end

return {
  id = "flink.checkpoint-storage",
  title = "Checkpoints are not on durable shared storage",
  severity = "warning",
  sources = { "flink" },
  tags = { "checkpoints", "reliability", "configuration" },
  options = {},
  description = "Checkpoints on the JobManager heap or a local disk do not "
    .. "survive the loss of that machine and cannot be read by other TaskManagers.",
  check = function(run, ctx)
    if fu.checkpointing_enabled(run) == false then
      return -- flink.checkpointing-disabled covers it
    end
    local storage = fu.cfg(run, "execution.checkpointing.storage")
    local dir = fu.cfg(run, "execution.checkpointing.dir")
    local latest = fu.latest_completed(run)
    local path = latest and latest.external_path
    local dir_key = fu.key(run, "execution.checkpointing.dir")
    local storage_key = fu.key(run, "execution.checkpointing.storage")
    if storage == "jobmanager" and dir and dir ~= "" and not local_path(dir) then
      jobmanager_with_dir(run, ctx, dir, storage_key, dir_key)
      return
    end
    if storage == "jobmanager" and not (dir and dir ~= "") then
      -- No change: FileSystemCheckpointStorage needs a directory only the
      -- user can name, and a placeholder is no change to approve.
      ctx.report {
        message = "Checkpoints are stored in the JobManager's heap "
          .. "(JobManagerCheckpointStorage) and no checkpoint directory is set: they are lost "
          .. "with the JobManager, limited by its memory and RPC frame size, and unusable for "
          .. "recovery after a restart.",
        recommendation = ("Store checkpoints on durable shared storage (S3, GCS, HDFS, ABFS) "
          .. "reachable from the JobManager and every TaskManager: set %s to a path there "
          .. "and %s: filesystem."):format(dir_key, storage_key),
        evidence = { storage = storage },
      }
      return
    end
    local where = (local_path(dir) and dir) or (local_path(path) and path)
    if not where then
      return
    end
    ctx.report {
      message = ("Checkpoints go to a local path (%s): other TaskManagers cannot read it and it "
        .. "disappears with the machine or pod, so a failover cannot restore from it."):format(where),
      recommendation = ("Point %s at durable shared storage (S3, GCS, HDFS, ABFS) reachable "
        .. "from every TaskManager and the JobManager. A mounted network volume (NFS, a "
        .. "shared PV) works too, but then say so with a scheme-qualified path."):format(dir_key),
      evidence = { storage = storage, dir = dir, latest_path = path },
    }
  end,
}
