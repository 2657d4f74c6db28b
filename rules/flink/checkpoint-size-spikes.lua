-- flink.checkpoint-size-spikes: incremental checkpoints that upload far
-- more than usual. docs/rules/flink.checkpoint-size-spikes.md
local fu = require "flinkutil"
local stats = require "optipipe.stats"
local units = require "optipipe.units"

local fmt_b = units.format_bytes

local function incremental(run, cks)
  if fu.incremental(run) == true then
    return true
  end
  for _, c in ipairs(cks) do
    if c.state_size_bytes and c.checkpointed_size_bytes
        and c.checkpointed_size_bytes < 0.9 * c.state_size_bytes then
      return true
    end
  end
  return false
end

-- The vertex that uploaded the most in checkpoint id, from the details.
local function top_vertex(run, id)
  local best
  for _, t in ipairs(run.series.checkpoint_tasks or {}) do
    if t.checkpoint_id == id and t.checkpointed_size_bytes
        and (not best or t.checkpointed_size_bytes > best.checkpointed_size_bytes) then
      best = t
    end
  end
  return best and run.by_id[best.vertex] and best
end

return {
  id = "flink.checkpoint-size-spikes",
  title = "Incremental checkpoint sizes spike",
  severity = "warning",
  sources = { "flink" },
  tags = { "checkpoints", "state", "rocksdb" },
  options = {
    spike_factor = 3,     -- a spike uploads this many times the median
    min_spike = "64 mb",  -- and at least this much above it
    min_points = 8,
  },
  description = "An incremental checkpoint uploads only new SST files; one "
    .. "that uploads many times the median means compaction or update churn "
    .. "rewrote files the earlier checkpoints had shared.",
  check = function(run, ctx)
    local o = ctx.options
    local cks = fu.checkpoints(run)
    local sizes = {}
    for _, c in ipairs(cks) do
      sizes[#sizes + 1] = c.checkpointed_size_bytes
    end
    if #sizes < o.min_points or #sizes ~= #cks or not incremental(run, cks) then
      return
    end
    local med = stats.median(sizes)
    local min_spike = units.parse_bytes(o.min_spike)
    local spikes, worst = {}, nil
    for _, c in ipairs(cks) do
      local s = c.checkpointed_size_bytes
      if s > o.spike_factor * med and s - med > min_spike then
        spikes[#spikes + 1] = ("#%d (%s)"):format(c.id, fmt_b(s))
        if not worst or s > worst.checkpointed_size_bytes then
          worst = c
        end
      end
    end
    if not worst then
      return
    end
    local top, top_id
    for i = #cks, 1, -1 do -- the newest spike with details names the operator
      local c = cks[i]
      if c.checkpointed_size_bytes > o.spike_factor * med then
        top = top_vertex(run, c.id)
        if top then
          top_id = c.id
          break
        end
      end
    end
    local msg = ("%d of %s uploaded far more than usual: %s, up to "
      .. "%s the median %s."):format(#spikes, units.format_count(#cks, "incremental checkpoint"),
        table.concat(spikes, ", "), units.format_ratio(worst.checkpointed_size_bytes / med),
        fmt_b(med))
    if top then
      local v = run.by_id[top.vertex]
      msg = msg .. (" In #%d, '%s' uploaded %s of it."):format(top_id, v.name or v.id,
        fmt_b(top.checkpointed_size_bytes))
    end
    ctx.report {
      node = top and top.vertex or nil,
      message = msg .. " Such checkpoints take longer and can expire.",
      recommendation = "Spikes come from RocksDB compactions rewriting large SST files (the "
        .. "next incremental checkpoint re-uploads them) or from update-heavy state "
        .. "invalidating shared files. Smooth them with the changelog state backend "
        .. "(state.changelog.enabled: true uploads a steady stream of changes), tune compaction "
        .. "(state.backend.rocksdb.compaction.level.target-file-size-base, "
        .. "max-size-level-base), or bound state with TTL so fewer files churn.",
      evidence = { spikes = #spikes, checkpoints = #cks, median_bytes = med,
                   max_bytes = worst.checkpointed_size_bytes, max_id = worst.id,
                   ratio = worst.checkpointed_size_bytes / med },
    }
  end,
}
