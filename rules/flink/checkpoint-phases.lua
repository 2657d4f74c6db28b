-- flink.checkpoint-phases: which phase of a slow checkpoint takes the
-- time (start delay, alignment, sync, async upload), on which vertex and
-- subtask, with the advice for that phase. docs/rules/flink.checkpoint-phases.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local pct, fmt_d = units.format_pct, units.format_duration

local PHASE_NAME = {
  start_delay = "start delay (waiting for the barrier)",
  alignment = "alignment",
  sync = "synchronous snapshot",
  async = "asynchronous upload",
}

local SHORT = { start_delay = "start delay", alignment = "alignment", sync = "sync phase",
                async = "upload" }

local ADVICE = {
  async = function(run)
    local parts = { "The upload of the state to checkpoint storage is the slow part. Check the "
      .. "storage's throughput from the TaskManagers (bandwidth, request rate and throttling; "
      .. "on S3 spread many files over prefixes with entropy injection, s3.entropy.key)." }
    if fu.backend(run) == "rocksdb" and fu.incremental(run) ~= true then
      parts[#parts + 1] = ("Upload less: incremental checkpoints (%s: true) send only the "
        .. "changed files."):format(fu.key(run, "execution.checkpointing.incremental"))
    end
    if fu.cfg_bool(run, "state.changelog.enabled") ~= true then
      parts[#parts + 1] = "The changelog state backend (state.changelog.enabled: true) "
        .. "uploads changes continuously, so the upload at checkpoint time stays short."
    end
    parts[#parts + 1] = "Fewer, larger files upload faster than many small ones: merge them "
      .. "(execution.checkpointing.file-merging.enabled: true, Flink 1.20+) and keep small "
      .. "state inline (state.storage.fs.memory-threshold)."
    return table.concat(parts, " ")
  end,
  alignment = function(run)
    return ("Some input channels deliver their barrier much later than the others and this "
      .. "subtask holds the early channels back while it waits: backpressure or a slow "
      .. "upstream subtask (flink.bottleneck names the vertex). Fix that first; unaligned "
      .. "checkpoints (%s: true, or execution.checkpointing.aligned-checkpoint-timeout to "
      .. "switch only when alignment is slow) let barriers overtake in-flight data."):format(
        fu.key(run, "execution.checkpointing.unaligned.enabled"))
  end,
  start_delay = function(run)
    return ("The barrier reached this subtask late: it queued behind records in "
      .. "backpressured network buffers. Remove the backpressure (flink.bottleneck names the "
      .. "vertex); buffer debloating (taskmanager.network.memory.buffer-debloat.enabled: "
      .. "true) shrinks the in-flight data a barrier waits behind, and unaligned "
      .. "checkpoints (%s: true) let it overtake."):format(
        fu.key(run, "execution.checkpointing.unaligned.enabled"))
  end,
  sync = function(run)
    local t = "The operator is blocked while the state backend takes the synchronous part "
      .. "of the snapshot: RocksDB flushes its memtables, heap state and timers are copied, "
      .. "custom snapshotState() code runs."
    if fu.backend(run) == "rocksdb" then
      t = t .. " Keep timers in RocksDB (state.backend.rocksdb.timer-service.factory: ROCKSDB)."
    elseif fu.backend(run) == "hashmap" then
      t = t .. " Large heap state snapshots faster with RocksDB and incremental checkpoints."
    end
    return t .. " Check the operator's own snapshotState() / CheckpointedFunction code."
  end,
}

-- The change that fits the phase, when there is one to approve.
local function changes(run, phase)
  if phase == "alignment" then
    local key = fu.key(run, "execution.checkpointing.unaligned.enabled")
    if fu.cfg_bool(run, "execution.checkpointing.unaligned.enabled") ~= true
        and fu.cfg(run, "execution.checkpointing.mode") ~= "AT_LEAST_ONCE" then
      return { { target = "job", key = key,
                 from = fu.cfg(run, "execution.checkpointing.unaligned.enabled"), to = "true" } }
    end
  elseif phase == "start_delay" then
    local key = "taskmanager.network.memory.buffer-debloat.enabled"
    if fu.cfg_bool(run, key) ~= true then
      return { { target = "job", key = key, from = fu.cfg(run, key), to = "true" } }
    end
  end
  return nil
end

-- How many of the checkpoints with subtask details had the same phase
-- dominate on this vertex.
local function agreement(d, vid, phase)
  local same, total = 0, 0
  for _, id in ipairs(d.ids) do
    local s = d[id][vid] and fu.slowest_subtask(d[id][vid])
    if s then
      total = total + 1
      if fu.dominant_phase(s) == phase then
        same = same + 1
      end
    end
  end
  return same, total
end

local function breakdown(s)
  local parts = {}
  for _, ph in ipairs(fu.PHASES) do
    parts[#parts + 1] = ("%s %s"):format(SHORT[ph], fmt_d(fu.phase_ms(s, ph)))
  end
  return table.concat(parts, ", ")
end

-- Without per-subtask checkpoint details, the task metric
-- checkpointStartDelayNanos (the model's checkpoint_start_delay_max_ms:
-- how long the newest barrier took to reach the task) still shows the
-- start delay phase. It is judged against the newest completed
-- checkpoint's duration: a vertex whose barrier arrived after at least
-- dominant_share of it spent that share waiting behind in-flight data.
local function start_delay_from_metric(run, ctx, o, limit)
  local last = fu.latest_completed(run)
  local dur = last and last.end_to_end_duration_ms
  if not dur or dur < limit then
    return
  end
  local slow = {}
  for _, n in ipairs(run.nodes) do
    local ms = n.metrics.checkpoint_start_delay_max_ms
    if ms and ms / dur >= o.dominant_share then
      slow[#slow + 1] = { node = n, ms = ms }
    end
  end
  table.sort(slow, function(a, b) return a.ms > b.ms end)
  for i = 1, math.min(#slow, o.max_findings) do
    local e = slow[i]
    ctx.report {
      node = e.node.id,
      message = ("The barrier of the newest checkpoint reached '%s' only after %s "
        .. "(checkpointStartDelayNanos, max over its subtasks): %s of checkpoint #%s's %s "
        .. "went by before this vertex could start its snapshot. The export has no "
        .. "per-subtask checkpoint details, so this is the start delay phase alone."):format(
          e.node.name or e.node.id, fmt_d(e.ms), pct(e.ms / dur), tostring(last.id),
          fmt_d(dur)),
      recommendation = ADVICE.start_delay(run),
      evidence = { phase = "start_delay", phase_ms = e.ms, phase_share = e.ms / dur,
                   phase_from = "checkpointStartDelayNanos", checkpoint_id = last.id,
                   end_to_end_duration_ms = dur, start_delay_ms = e.ms },
      changes = changes(run, "start_delay"),
    }
  end
end

return {
  id = "flink.checkpoint-phases",
  title = "One phase makes the checkpoints slow",
  severity = "warning",
  sources = { "flink" },
  tags = { "checkpoints", "performance", "backpressure" },
  options = {
    min_duration = "30 s",   -- a subtask's checkpoint this long is slow
    dominant_share = 0.5,    -- a phase with this share of the subtask's time is the cause
    max_findings = 3,        -- slowest vertices reported
  },
  description = "Per-subtask checkpoint details split a checkpoint into start delay, "
    .. "alignment, sync and async phases; each has a different cause and fix.",
  check = function(run, ctx)
    local o = ctx.options
    local d = fu.subtask_details(run)
    local limit = units.parse_duration(o.min_duration)
    local interval = fu.interval_ms(run)
    if interval and interval > 0 then
      limit = math.min(limit, interval / 2)
    end
    if not d then
      return start_delay_from_metric(run, ctx, o, limit)
    end
    local id = d.ids[1]
    local slow = {}
    for _, n in ipairs(run.nodes) do
      local s = d[id][n.id] and fu.slowest_subtask(d[id][n.id])
      if s and s.end_to_end_duration_ms >= limit then
        local phase, ms = fu.dominant_phase(s)
        local total = 0
        for _, ph in ipairs(fu.PHASES) do
          total = total + fu.phase_ms(s, ph)
        end
        if total > 0 and ms / total >= o.dominant_share then
          slow[#slow + 1] = { node = n, sub = s, phase = phase, ms = ms, share = ms / total }
        end
      end
    end
    table.sort(slow, function(a, b)
      return a.sub.end_to_end_duration_ms > b.sub.end_to_end_duration_ms
    end)
    for i = 1, math.min(#slow, o.max_findings) do
      local e = slow[i]
      local same, total = agreement(d, e.node.id, e.phase)
      ctx.report {
        node = e.node.id,
        message = ("Checkpoint #%d: subtask %d of '%s' took %s, %s of it in the %s phase "
          .. "(%s). The %s dominated this vertex in %d of the %d latest checkpoints with "
          .. "subtask details."):format(
            id, e.sub.subtask, e.node.name or e.node.id, fmt_d(e.sub.end_to_end_duration_ms),
            pct(e.share), PHASE_NAME[e.phase], breakdown(e.sub), SHORT[e.phase],
            same, total),
        recommendation = ADVICE[e.phase](run),
        evidence = {
          checkpoint_id = id, subtask = e.sub.subtask, phase = e.phase,
          phase_ms = e.ms, phase_share = e.share,
          end_to_end_duration_ms = e.sub.end_to_end_duration_ms,
          sync_ms = e.sub.sync_ms, async_ms = e.sub.async_ms,
          alignment_ms = e.sub.alignment_ms, start_delay_ms = e.sub.start_delay_ms,
          checkpoints_agreeing = same, checkpoints_with_details = total,
        },
        changes = changes(run, e.phase),
      }
    end
  end,
}
