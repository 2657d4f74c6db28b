-- flink.incremental-checkpoints: RocksDB uploading its full state on every
-- checkpoint. docs/rules/flink.incremental-checkpoints.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local fmt_b = units.format_bytes

-- Whether every recent checkpoint uploaded (nearly) its full size.
local function all_full(cks)
  local n = 0
  for _, c in ipairs(cks) do
    if c.state_size_bytes and c.checkpointed_size_bytes then
      if c.checkpointed_size_bytes < 0.99 * c.state_size_bytes then
        return false, 0
      end
      n = n + 1
    end
  end
  return n >= 3, n
end

return {
  id = "flink.incremental-checkpoints",
  title = "RocksDB without incremental checkpoints",
  severity = "warning",
  sources = { "flink" },
  tags = { "checkpoints", "state", "configuration" },
  options = {
    min_state = "512 mb", -- below this a full upload is cheap enough
  },
  description = "With RocksDB, incremental checkpoints upload only the SST "
    .. "files created since the last checkpoint instead of the whole state.",
  check = function(run, ctx)
    if fu.backend(run) ~= "rocksdb" then
      return
    end
    local cks = fu.checkpoints(run)
    local latest = cks[#cks]
    local state = latest and fu.full_size(run, latest)
    if not state or state < units.parse_bytes(ctx.options.min_state) then
      return
    end
    local inc = fu.incremental(run)
    local full, n = all_full(cks)
    local key = fu.key(run, "execution.checkpointing.incremental")
    if inc == true and full then
      ctx.report {
        message = ("%s is true, yet each of the last %s uploaded its full "
          .. "state (%s in #%d): incremental checkpointing is off in effect."):format(
            key, units.format_count(n, "checkpoint"), fmt_b(state), latest.id),
        recommendation = "The job's code probably overrides the config: look for "
          .. "new EmbeddedRocksDBStateBackend(false) or setStateBackend(...) and build the "
          .. "backend with incremental checkpoints enabled (new "
          .. "EmbeddedRocksDBStateBackend(true)), or drop the override.",
        evidence = { state_bytes = state, checkpoints_full = n, config_incremental = true },
      }
      return
    end
    if inc == true or (inc == nil and not fu.has_cluster_config(run) and not full) then
      return -- on, or unknown without evidence
    end
    ctx.report {
      message = ("RocksDB uploads the full %s of state on every checkpoint (%s is %s%s): "
        .. "checkpoint time and storage traffic grow with the whole state, not with what "
        .. "changed."):format(fmt_b(state), key, inc == false and "false" or "not set",
          full and (", and the last %s all full-size"):format(
            units.format_count(n, "checkpoint was", "checkpoints were")) or ""),
      recommendation = ("Enable incremental checkpoints (%s: true): each checkpoint then "
        .. "uploads only new SST files. It takes effect on the next restart; the first "
        .. "checkpoint after it is still full."):format(key),
      evidence = { state_bytes = state, config_incremental = inc,
                   checkpoints_full = n },
      changes = { { target = "job", key = key, from = fu.cfg(run, "execution.checkpointing.incremental"),
                    to = "true" } },
    }
  end,
}
