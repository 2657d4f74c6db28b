-- flink.state-backend: HashMapStateBackend holding enough state to
-- threaten the TaskManager heap. docs/rules/flink.state-backend.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local fmt_b = units.format_bytes

-- Slots that share the state: with slot sharing every slot runs one
-- subtask of each vertex, so the widest vertex sets the slot count.
local function slots_of(run)
  local slots = 0
  for _, n in ipairs(run.nodes) do
    slots = math.max(slots, n.parallelism or 0)
  end
  if slots == 0 then
    slots = tonumber(fu.cfg(run, "parallelism.default") or "") or 1
  end
  return slots
end

local function state_of(run)
  local c = fu.latest_completed(run)
  local s = c and (c.state_size_bytes or c.checkpointed_size_bytes)
  return s or run.metrics.checkpoint_state_size_max_bytes, c
end

return {
  id = "flink.state-backend",
  title = "Heap state backend with large state",
  severity = "warning",
  sources = { "flink" },
  tags = { "state", "memory", "configuration" },
  options = {
    max_state_per_slot = "300 mb", -- checkpointed size; on the heap it is several times larger
  },
  description = "HashMapStateBackend keeps every key's state as Java objects on "
    .. "the TaskManager heap; past a few hundred MB per slot that means long GC "
    .. "pauses and OutOfMemoryError.",
  check = function(run, ctx)
    if fu.backend(run) ~= "hashmap" then
      return
    end
    local state, c = state_of(run)
    if not state then
      return
    end
    local slots = slots_of(run)
    local per_slot = state / slots
    local limit = units.parse_bytes(ctx.options.max_state_per_slot)
    if per_slot <= limit then
      return
    end
    local changes = {
      { target = "job", key = fu.key(run, "state.backend.type"),
        from = fu.cfg(run, "state.backend.type"), to = "rocksdb" },
      { target = "job", key = fu.key(run, "execution.checkpointing.incremental"),
        from = fu.cfg(run, "execution.checkpointing.incremental"), to = "true" },
    }
    ctx.report {
      message = ("HashMapStateBackend keeps all %s of state on the JVM heap: about %s per "
        .. "slot over %s (limit %s per slot)%s. Heap objects take several times the "
        .. "checkpointed size, so GC pauses grow and a spike ends in OutOfMemoryError."):format(
          fmt_b(state), fmt_b(per_slot), units.format_count(slots, "slot"), fmt_b(limit),
          c and (" in checkpoint #%d"):format(c.id) or ""),
      recommendation = "Switch to EmbeddedRocksDBStateBackend (state.backend.type: rocksdb) "
        .. "with incremental checkpoints: state moves to managed memory and local disk, "
        .. "checkpoints upload only changed files. Switching backends needs a savepoint and "
        .. "downtime: stop-with-savepoint (canonical format), change the config, restore from "
        .. "the savepoint. Give the TaskManagers local SSDs for RocksDB.",
      evidence = { state_bytes = state, slots = slots, state_per_slot_bytes = per_slot,
                   limit_bytes = limit },
      changes = changes,
    }
  end,
}
