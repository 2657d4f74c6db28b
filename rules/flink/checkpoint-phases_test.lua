-- Tests of flink.checkpoint-phases: the project's synthetic exports
-- (fixtures/flink/gen.py) for the upload and start-delay cases, inline
-- runs for alignment and the sync phase.
local F = "../../fixtures/flink/"

-- A running job with one vertex "join" whose checkpoint 5 took `phases`
-- (ms) on subtask 1 and a tenth of that on subtask 0.
local function inline(id, phases, config)
  local subs = {}
  for i, scale in ipairs({ 0.1, 1 }) do
    local r = { checkpoint_id = 5, vertex = "join", subtask = i - 1, status = "completed",
                state_size_bytes = 1000 }
    local total = 0
    for k, v in pairs(phases) do
      r[k .. "_ms"] = math.floor(v * scale)
      total = total + r[k .. "_ms"]
    end
    r.end_to_end_duration_ms = total
    subs[i] = r
  end
  return { source = "flink", id = id, status = "running", engine_version = "1.20.0",
           config = config or {},
           nodes = { { id = "join", kind = "vertex", name = "IntervalJoin", parallelism = 2,
                       parents = {}, metrics = {}, attrs = {} } },
           series = { checkpoint_subtasks = subs,
                      checkpoints = { { id = 5, status = "COMPLETED" } } } }
end

-- A running job of two vertices without checkpoint details: only the
-- newest checkpoint (60 s) and the task metric checkpointStartDelayNanos
-- of each vertex (the model's checkpoint_start_delay_max_ms).
local function metric_only(id, delays, config)
  local nodes = {}
  for i, ms in ipairs(delays) do
    nodes[i] = { id = "v" .. i, kind = "vertex", name = "Vertex " .. i, parallelism = 2,
                 parents = i > 1 and { "v" .. (i - 1) } or {},
                 metrics = { checkpoint_start_delay_max_ms = ms }, attrs = {} }
  end
  return { source = "flink", id = id, status = "running", engine_version = "1.18.1",
           config = config or {}, nodes = nodes,
           series = { checkpoints = { { id = 7, status = "COMPLETED",
                                        end_to_end_duration_ms = 60000 } } } }
end

return { rule = "flink.checkpoint-phases", cases = {
  { name = "no subtask details: checkpointStartDelayNanos shows the start delay",
    inputs = { metric_only("delay", { 200, 48000 }) },
    expect = { { node = "v2", message = "reached 'Vertex 2' only after 48 s",
                 recommendation = "buffer debloating",
                 evidence = { phase = "start_delay", phase_from = "checkpointStartDelayNanos",
                              phase_ms = 48000, checkpoint_id = 7 },
                 changes = { { key = "taskmanager.network.memory.buffer-debloat.enabled",
                               to = "true" } } } } },
  { name = "a small start delay against the checkpoint's time stays quiet",
    inputs = { metric_only("small", { 200, 9000 }) }, expect = {} },
  { name = "a fast checkpoint with a large share of start delay stays quiet (below min_duration)",
    inputs = { metric_only("fast", { 200, 48000 }) }, options = { min_duration = "2 min" },
    expect = {} },
  { name = "slow upload: storage advice, never unaligned checkpoints",
    inputs = { F .. "checkpoint-phases-async.json" },
    expect = { { node = "6b6fbe974c84e5b3a29b8f6e48db4e7d",
                 message = "subtask 2 of 'Window(",
                 recommendation = "state.changelog.enabled: true",
                 evidence = { phase = "async", subtask = 2, checkpoint_id = 111,
                              checkpoints_agreeing = 3, checkpoints_with_details = 3 } } } },
  { name = "barriers behind backpressure: start delay",
    inputs = { F .. "checkpoint-phases-backpressure.json" },
    expect = { { node = "b47e34b767db869ae069220004d50211",
                 message = "in the start delay (waiting for the barrier) phase",
                 recommendation = "flink.bottleneck names the vertex",
                 evidence = { phase = "start_delay", subtask = 2 },
                 changes = { { key = "taskmanager.network.memory.buffer-debloat.enabled",
                               to = "true" } } } } },
  { name = "alignment: unaligned checkpoints",
    inputs = { inline("align", { start_delay = 500, alignment = 90000, sync = 100, async = 3000 }) },
    expect = { { node = "join", evidence = { phase = "alignment", subtask = 1, alignment_ms = 90000 },
                 changes = { { key = "execution.checkpointing.unaligned.enabled", to = "true" } } } } },
  { name = "alignment with unaligned checkpoints already on: no change",
    inputs = { inline("align-on", { alignment = 90000, async = 3000 },
                      { ["execution.checkpointing.unaligned.enabled"] = "true" }) },
    expect = { { node = "join", evidence = { phase = "alignment" } } } },
  { name = "sync phase: snapshot cost",
    inputs = { inline("sync", { start_delay = 50, alignment = 10, sync = 70000, async = 9000 },
                      { ["state.backend.type"] = "rocksdb" }) },
    expect = { { node = "join", recommendation = "state.backend.rocksdb.timer-service.factory: ROCKSDB",
                 evidence = { phase = "sync" } } } },
  { name = "no phase dominates: quiet",
    inputs = { inline("mixed", { start_delay = 20000, alignment = 20000, sync = 20000, async = 20000 }) },
    expect = {} },
  { name = "fast checkpoints stay quiet", inputs = { F .. "state-skew.json" }, expect = {} },
  { name = "half the interval (5 min) caps min_duration", inputs = { F .. "checkpoint-phases-async.json" },
    options = { min_duration = "10 min" }, expect = { { node = "6b6fbe974c84e5b3a29b8f6e48db4e7d" } } },
  { name = "no subtask details: quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
