-- flink.recovery-time: how long a restore would take before replay even
-- starts, against a recovery-time objective. docs/rules/flink.recovery-time.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local fmt_b, fmt_d = units.format_bytes, units.format_duration

-- The largest subtask's local RocksDB files when the native metrics were
-- exported (live-sst-files-size per subtask: skew included), else nil.
local function native_shard(run)
  local best, node
  for _, n in ipairs(run.nodes) do
    local s = n.metrics.live_sst_bytes_max
    if s and (not best or s > best) then
      best, node = s, n
    end
  end
  return best, node
end

-- The largest per-subtask shard: the largest subtask's live SST files
-- (native metrics), else per operator from checkpoint details when
-- exported, else the whole state spread over the widest vertex.
local function largest_shard(run, full)
  local nb, nn = native_shard(run)
  if nb then
    return nb, nn, nil, true
  end
  local best, node
  for _, n in ipairs(run.nodes) do
    local s = n.metrics.checkpoint_state_size_bytes
    if s and n.parallelism and n.parallelism > 0 then
      local shard = s / n.parallelism
      if not best or shard > best then
        best, node = shard, n
      end
    end
  end
  if best then
    return best, node
  end
  local widest = 1
  for _, n in ipairs(run.nodes) do
    widest = math.max(widest, n.parallelism or 1)
  end
  return full / widest, nil, widest
end

local function changes(run)
  local out = {}
  local key = fu.key(run, "execution.state-recovery.from-local")
  if fu.cfg_bool(run, "execution.state-recovery.from-local") ~= true then
    out[#out + 1] = { target = "job", key = key,
                      from = fu.cfg(run, "execution.state-recovery.from-local"), to = "true" }
  end
  local tkey = "state.backend.rocksdb.checkpoint.transfer.thread.num"
  local threads = tonumber(fu.cfg(run, tkey) or "4") or 4
  if fu.backend(run) == "rocksdb" and threads < 8 then
    out[#out + 1] = { target = "job", key = tkey, from = fu.cfg(run, tkey), to = 8 }
  end
  return #out > 0 and out or nil
end

-- s5cmd downloads state files from S3 in parallel, much faster than the
-- Java S3 clients (Flink 2.0+, s3.s5cmd.path).
local function s5cmd_text(run)
  local major = fu.version(run)
  local dir = fu.cfg(run, "execution.checkpointing.dir") or ""
  if not major or major < 2 or not dir:match("^s3[an]?://") or fu.cfg(run, "s3.s5cmd.path") then
    return ""
  end
  return " On S3, let Flink download with s5cmd (install it on the TaskManagers and set "
    .. "s3.s5cmd.path), which is several times faster than the Java S3 client."
end

local function recommendation(run)
  local rocks = fu.backend(run) == "rocksdb"
  return "Make shards smaller or local: more parallelism for the stateful "
    .. "operator (state is redistributed by key group on restore), local recovery so a "
    .. "surviving TaskManager reads its local copy, "
    .. (rocks and "more RocksDB download threads, " or "")
    .. "and state TTL to bound the state." .. s5cmd_text(run)
    .. (rocks and fu.version(run) and fu.version(run) >= 2
          and " ForSt (state.backend.type: forst) keeps the state on the remote storage and "
            .. "needs no download before processing resumes." or "")
    .. " Measure a real restore to calibrate restore_bandwidth."
end

return {
  id = "flink.recovery-time",
  title = "Restoring the state would take longer than the recovery objective",
  severity = "warning",
  sources = { "flink" },
  tags = { "state", "reliability", "recovery" },
  options = {
    restore_bandwidth = "200 mb",        -- per second, per subtask downloading its shard
    recovery_time_objective = "15 min",
  },
  description = "Every subtask downloads its share of the last checkpoint "
    .. "before processing resumes (not with ForSt, whose state stays on remote "
    .. "storage); the biggest share sets the restore time.",
  check = function(run, ctx)
    local o = ctx.options
    if fu.backend(run) == "forst" then
      -- ForSt (2.0, disaggregated state) keeps its files on the remote
      -- storage and reads them from there after a restore: nothing is
      -- downloaded first, so the download model does not apply.
      ctx.log("ForSt keeps state on remote storage: no restore download to estimate")
      return
    end
    local latest = fu.latest_completed(run)
    local full = latest and fu.full_size(run, latest)
    if not full then
      return
    end
    local shard, node, widest, native = largest_shard(run, full)
    local bw = units.parse_bytes(o.restore_bandwidth)
    local rto = units.parse_duration(o.recovery_time_objective)
    local est = shard / bw * 1000
    if est <= rto then
      return
    end
    local where
    if native then
      where = ("for the largest subtask of '%s' (its live SST files, RocksDB native metrics)"):format(
        node.name or node.id)
    elseif node then
      where = ("per subtask of '%s' (%s over %s, from checkpoint #%d)"):format(
        node.name or node.id, fmt_b(node.metrics.checkpoint_state_size_bytes),
        units.format_count(node.parallelism, "subtask"),
        node.metrics.checkpoint_id or latest.id)
    else
      where = ("per subtask, assuming the %s of checkpoint #%d spread evenly over %s "
        .. "(export /jobs/<jid>/checkpoints/details/%d for per-operator sizes)"):format(
          fmt_b(full), latest.id, units.format_count(widest, "subtask"), latest.id)
    end
    ctx.report {
      node = node and node.id or nil,
      message = ("A restore would download about %s %s; at %s/s that is %s before replay "
        .. "even starts, above the recovery-time objective of %s."):format(
          fmt_b(shard), where, fmt_b(bw), fmt_d(est), fmt_d(rto)),
      recommendation = recommendation(run),
      evidence = { state_bytes = full, shard_bytes = shard, restore_bandwidth_bytes_per_s = bw,
                   estimated_restore_ms = est, rto_ms = rto },
      changes = changes(run),
    }
  end,
}
