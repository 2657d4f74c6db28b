-- dbt.regression: a node (and the whole build) far slower than its own
-- history. Baseline = median and MAD of the node's earlier successful
-- runs; a finding needs the ratio, the absolute increase and the MAD test
-- to agree, so normal jitter and nodes without history stay quiet.
-- docs/rules/dbt.regression.md
local du = require "dbtutil"
local stats = require "optipipe.stats"

-- The median + MAD test shared by every history rule (optipipe.stats).
local function regressed(cur, vals, o)
  return stats.regression(cur, vals, { min_history = o.min_history, min_ratio = o.min_ratio,
    min_increase = o.min_increase_s * 1000, mad_threshold = o.mad_threshold })
end

local function node_findings(run, ctx, hist)
  local o = ctx.options
  local found = {}
  local all = du.history_times(run, ctx, hist)
  -- a finding needs cur - median >= min_increase with a median > 0, so a
  -- node that ran no longer than min_increase cannot have one: its
  -- history is not even read (most nodes of a big project)
  local floor = o.min_increase_s * 1000
  for _, n in ipairs(run.nodes) do
    local cur = du.exec_ms(n)
    if n.status == "succeeded" and cur and cur > floor and not n.attrs.untimed then
      local vals = all[n.id] or {}
      local r = regressed(cur, vals, o)
      if r then
        found[#found + 1] = { node = n, cur = cur, vals = vals, r = r }
      end
    end
  end
  table.sort(found, function(a, b)
    return a.r.delta > b.r.delta
  end)
  for _, f in ipairs(found) do
    local n, r = f.node, f.r
    ctx.report {
      node = n.id,
      message = ("%s took %s, %s its median of %s over the %s "
        .. "(+%s; MAD %s)"):format(du.name(n), du.dur(f.cur), du.times(r.ratio),
        du.dur(r.median), du.plural(#f.vals, "previous run"), du.dur(r.delta), du.dur(r.mad)),
      recommendation = ("Compare what changed for %s since the previous run: its "
        .. "SQL (%s), the data volume it reads (rows, bytes processed), its "
        .. "incremental filter or a full refresh, and warehouse contention."):format(
        du.name(n), du.target(n)),
      evidence = {
        current_s = du.secs(f.cur), median_s = du.secs(r.median),
        mad_s = du.secs(r.mad), ratio = math.floor(r.ratio * 100 + 0.5) / 100,
        increase_s = du.secs(r.delta), history_runs = #f.vals,
        history = du.dur_list(f.vals),
      },
      impact = { time_saved_ms = math.floor(r.delta) },
    }
  end
  return found
end

-- The build as a whole: the wall clock against the history's.
local function run_finding(run, ctx, hist, nodes)
  local o = ctx.options
  if not run.duration_ms then
    return
  end
  local vals = {}
  for _, h in ipairs(hist) do
    if h.duration_ms and h.status == "succeeded" then
      vals[#vals + 1] = h.duration_ms
    end
  end
  local r = regressed(run.duration_ms, vals, o)
  if not r then
    return
  end
  local parts = {}
  for i = 1, math.min(#nodes, 3) do
    parts[#parts + 1] = ("%s +%s"):format(du.name(nodes[i].node), du.dur(nodes[i].r.delta))
  end
  local why = #parts > 0 and ("; the largest increases: " .. table.concat(parts, ", "))
    or "; no single node regressed: look at the number of nodes, threads and warehouse load"
  ctx.report {
    message = ("The build took %s, %s its median of %s over the %s%s."):format(
      du.dur(run.duration_ms), du.times(r.ratio), du.dur(r.median),
      du.plural(#vals, "previous run"), why),
    recommendation = #parts > 0
        and ("Start with %s: it accounts for the largest part of the increase."):format(
          du.name(nodes[1].node))
      or "Compare the selected nodes, thread count and warehouse load with the previous runs.",
    evidence = {
      current_s = du.secs(run.duration_ms), median_s = du.secs(r.median),
      ratio = math.floor(r.ratio * 100 + 0.5) / 100, history_runs = #vals,
      history = du.dur_list(vals), regressed_nodes = #nodes,
    },
    impact = { time_saved_ms = math.floor(r.delta) },
  }
end

return {
  id = "dbt.regression",
  title = "Node or build far slower than its own history",
  severity = "warning",
  sources = { "dbt" },
  tags = { "performance", "history" },
  description = "Compares the newest run with the earlier runs of the same project and command.",
  options = {
    min_history = 3,     -- earlier successful runs needed for a baseline
    min_ratio = 1.5,     -- current / median
    min_increase_s = 60, -- current - median, seconds
    mad_threshold = 5,   -- increase must exceed this many robust sigmas (1.4826 MAD)
  },
  check = function(run, ctx)
    if not du.executing(run) then
      return
    end
    local hist = du.history(run, ctx)
    if #hist < ctx.options.min_history then
      return
    end
    local nodes = node_findings(run, ctx, hist)
    run_finding(run, ctx, hist, nodes)
  end,
}
