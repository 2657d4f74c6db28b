-- flink.state-skew: one subtask holds most of a vertex's checkpointed
-- state: hot keys, not a lack of capacity. docs/rules/flink.state-skew.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local pct, fmt_b = units.format_pct, units.format_bytes

local function size_of(r)
  return r.state_size_bytes or r.checkpointed_size_bytes
end

-- Total, largest record and median size of a vertex's subtasks.
local function spread(recs)
  local sizes, total, top = {}, 0, nil
  for _, r in ipairs(recs) do
    local s = size_of(r)
    if s then
      sizes[#sizes + 1] = s
      total = total + s
      if not top or s > size_of(top) then
        top = r
      end
    end
  end
  if #sizes < 2 then
    return nil
  end
  table.sort(sizes)
  local mid = #sizes // 2
  local median = #sizes % 2 == 1 and sizes[mid + 1] or (sizes[mid] + sizes[mid + 1]) / 2
  return total, top, median, #sizes
end

return {
  id = "flink.state-skew",
  title = "One subtask holds most of a vertex's state",
  severity = "warning",
  sources = { "flink" },
  tags = { "state", "skew", "performance" },
  options = {
    min_share = 0.5,      -- the largest subtask's share of the vertex's state
    skew_factor = 4,      -- and at least this many times the median subtask
    min_state = "1 gb",   -- vertex state below this is not worth it
  },
  description = "Keyed state is split by key group; when one subtask checkpoints most "
    .. "of a vertex's state, a few keys hold it, and more parallelism does not split them.",
  check = function(run, ctx)
    local o = ctx.options
    local d = fu.subtask_details(run)
    if not d then
      return
    end
    local id = d.ids[1]
    local floor = units.parse_bytes(o.min_state)
    for _, n in ipairs(run.nodes) do
      local total, top, median, count = spread(d[id][n.id] or {})
      if total and total >= floor and size_of(top) / total >= o.min_share
          and size_of(top) >= o.skew_factor * median then
        local share = size_of(top) / total
        ctx.report {
          node = n.id,
          message = ("Subtask %d of '%s' holds %s of the vertex's state in checkpoint #%d "
            .. "(%s of %s over %s; the median subtask holds %s): a few keys carry "
            .. "most of the state. This is key skew, not a lack of capacity: more parallelism "
            .. "moves other keys away but leaves the hot key groups on one subtask."):format(
              top.subtask, n.name or n.id, pct(share), id, fmt_b(size_of(top)), fmt_b(total),
              units.format_count(count, "subtask"), fmt_b(median)),
          recommendation = "Find the hot keys (count records or state entries per key, e.g. "
            .. "top keys in a side output) and spread them: salt the key and combine the "
            .. "partial results in a second step, pre-aggregate before the keyBy, or for SQL "
            .. "use two-phase aggregation (table.optimizer.agg-phase-strategy: TWO_PHASE with "
            .. "mini-batch). Check for null or default key values that all land in one key "
            .. "group, and bound what each key keeps with state TTL.",
          evidence = {
            checkpoint_id = id, subtask = top.subtask, share_ratio = share,
            subtask_state_bytes = size_of(top), vertex_state_bytes = total,
            median_state_bytes = median, subtasks = count, parallelism = n.parallelism,
          },
        }
      end
    end
  end,
}
