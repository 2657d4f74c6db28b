-- flink.checkpoint-storage: checkpoints on the JobManager heap or a local
-- path. docs/rules/flink.checkpoint-storage.md
local fu = require "flinkutil"

local PLACEHOLDER = "s3://<bucket>/flink/checkpoints"

-- A path other TaskManagers (and a restarted JobManager) cannot reach.
local function local_path(p)
  if not p or p == "" or p:sub(1, 1) == "<" then
    return false
  end
  if p:match("^file:") or p:sub(1, 1) == "/" or p:find("/tmp/", 1, true) then
    return true
  end
  return not p:match("^[%a][%w+.-]*:") -- no scheme: a local path
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
    if storage == "jobmanager" then
      ctx.report {
        message = "Checkpoints are stored in the JobManager's heap "
          .. "(JobManagerCheckpointStorage): they are lost with the JobManager, limited by "
          .. "its memory and RPC frame size, and unusable for recovery after a restart.",
        recommendation = ("Store checkpoints on durable shared storage (S3, GCS, HDFS, ABFS): "
          .. "set %s to a bucket path; Flink then uses FileSystemCheckpointStorage."):format(dir_key),
        evidence = { storage = storage, dir = dir },
        changes = {
          { target = "job", key = fu.key(run, "execution.checkpointing.storage"), from = "jobmanager",
            to = "filesystem" },
          { target = "job", key = dir_key, from = dir, to = PLACEHOLDER },
        },
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
      evidence = { dir = dir, latest_path = path },
      changes = { { target = "job", key = dir_key, from = dir or path, to = PLACEHOLDER } },
    }
  end,
}
