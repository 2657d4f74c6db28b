-- dbtutil: what the dbt rules share. Which runs carry real timings, how
-- long a node took, readable names and lists, the node's file for
-- `changes`, and a node's values in the run's history.
-- Model names: docs/model-dbt.md.

local units = require "optipipe.units"

local M = {}

M.dur = units.format_duration
M.pct = units.format_pct
M.times = units.format_ratio

-- Runs whose node timings measure execution: dbt run/build/test/seed/
-- snapshot, not compile or docs generate (research/dbt.md §2.3), and not
-- a source freshness check.
function M.executing(run)
  if run.metrics.executing == 0 then
    return false
  end
  return not M.is_freshness(run)
end

-- Runs checked as a DAG without timings: a manifest alone, or a run that
-- executed nothing (compile, docs generate, ls) joined to its manifest.
function M.static(run)
  return run.metrics.manifest_only == 1 or run.metrics.static_dag == 1
end

-- A model's materialization (from the manifest), else nil.
function M.mat(n)
  return n and n.kind == "model" and n.attrs.materialized or nil
end

-- Whether the run's nodes carry the manifest (materializations, files):
-- what the DAG rules need.
function M.has_dag(run)
  if M.static(run) then
    return true
  end
  for _, n in ipairs(run.nodes) do
    if n.attrs.materialized then
      return true
    end
  end
  return false
end

-- The run's model nodes reading n directly (sorted by name), and every
-- child.
function M.model_children(run, n)
  local out = {}
  for _, cid in ipairs(n.children) do
    local c = run.by_id[cid]
    if c and c.kind == "model" then
      out[#out + 1] = c
    end
  end
  table.sort(out, function(a, b) return M.name(a) < M.name(b) end)
  return out
end

-- Names of a list of nodes.
function M.names(nodes)
  local out = {}
  for i, n in ipairs(nodes) do
    out[i] = M.name(n)
  end
  return out
end

function M.is_freshness(run)
  local w = run.config.which
  return w == "source-freshness" or w == "freshness"
end

local BUILT = { model = true, seed = true, snapshot = true }

-- Nodes that build a relation (models, seeds, snapshots).
function M.builds(node)
  return BUILT[node.kind] == true
end

function M.is_test(node)
  return node.kind == "test" or node.kind == "unit_test"
end

-- dbt's own status word ("success", "error", "fail", "warn", "skipped").
function M.raw(node)
  return node.attrs.raw_status
end

-- How long the node ran, in ms: its timeline span, else dbt's
-- execution_time (untimed errors), else nil.
function M.ms(node)
  return node.duration_ms or node.metrics.execution_time_ms
end

-- Execution time as dbt reports it (what users compare across runs).
function M.exec_ms(node)
  return node.metrics.execution_time_ms or node.duration_ms
end

function M.name(node)
  return node.name or node.id
end

-- Where a change applies: the model's file when the manifest gave it.
function M.target(node)
  return node.attrs.file or node.id
end

-- "a, b, c and 4 more"
function M.list(names, max)
  max = max or 5
  local out = {}
  for i = 1, math.min(#names, max) do
    out[#out + 1] = names[i]
  end
  local s = table.concat(out, ", ")
  if #names > max then
    s = s .. (" and %d more"):format(#names - max)
  end
  return s
end

-- "1 test", "3 tests", "1,200 rows": units.format_count.
M.plural = units.format_count

-- Seconds with one decimal, for evidence (stable across reruns).
function M.secs(ms)
  return math.floor(ms / 100 + 0.5) / 10
end

-- The earlier runs comparable with run (oldest first): executing runs of
-- the same full_refresh setting. Empty when the engine gives no history.
-- The earlier runs come from the files given together (run.history), else,
-- with a ctx, from the run store (ctx.history, newest first: reversed here).
function M.history(run, ctx)
  local out = {}
  local fr = run.config.full_refresh or "false"
  local src = run.history or {}
  if #src == 0 and ctx and ctx.history then
    local stored = ctx.history(run, { limit = 30 })
    src = {}
    for i = #stored, 1, -1 do
      src[#src + 1] = stored[i]
    end
  end
  for _, h in ipairs(src) do
    if M.executing(h) and (h.config.full_refresh or "false") == fr then
      out[#out + 1] = h
    end
  end
  return out
end

-- The execution times of M.history_values for the runs M.history gave:
-- from the run store, one read (ctx.node_history) instead of rebuilding
-- every stored node table; else from the runs given together. Each list
-- oldest first.
function M.history_times(run, ctx, hist)
  local given = run.history and #run.history > 0
  if given or #hist == 0 or not (ctx and ctx.node_history) then
    return M.history_values(hist)
  end
  local newest_first = ctx.node_history(run, {
    metric = { "execution_time_ms", "duration_ms" }, status = "succeeded",
    runs = hist, limit = #hist })
  return setmetatable({}, { __index = function(t, id)
    local src = newest_first[id]
    if not src then
      return nil
    end
    local list = {}
    for i = #src, 1, -1 do
      list[#list + 1] = src[i]
    end
    t[id] = list
    return list
  end })
end

-- Every node's execution times (ms) over the given runs where it
-- succeeded, oldest first: id -> { ms, ... }. One pass over each run's
-- nodes, so stored runs are loaded once each and need not stay in memory.
function M.history_values(runs)
  local vals = {}
  for _, h in ipairs(runs) do
    local nodes = h.nodes
    for _, n in ipairs(nodes) do
      if n.status == "succeeded" then
        local v = M.exec_ms(n)
        if v then
          local list = vals[n.id]
          if not list then
            list = {}
            vals[n.id] = list
          end
          list[#list + 1] = v
        end
      end
    end
  end
  return vals
end

-- The node's execution times (ms) in the given runs where it succeeded,
-- oldest first.
function M.node_history(runs, id)
  local vals = {}
  for _, h in ipairs(runs) do
    local n = h.by_id[id]
    if n and n.status == "succeeded" then
      local v = M.exec_ms(n)
      if v then
        vals[#vals + 1] = v
      end
    end
  end
  return vals
end

-- The runs of a history rule, oldest first, the current run last: the
-- comparable earlier runs (M.history, at most `limit` of them, the
-- newest) and run itself.
function M.window(run, ctx, limit)
  local hist = M.history(run, ctx)
  local out = {}
  for i = math.max(1, #hist - limit + 1), #hist do
    out[#out + 1] = hist[i]
  end
  out[#out + 1] = run
  return out
end

-- Sorts list in place, largest size(x) first, ties by id(x) ascending (so
-- reports are stable), and returns it.
function M.largest_first(list, size, id)
  table.sort(list, function(a, b)
    local sa, sb = size(a), size(b)
    if sa ~= sb then
      return sa > sb
    end
    return id(a) < id(b)
  end)
  return list
end

-- What a history rule starts from: the ids of run's nodes that pick(n)
-- accepts and M.window(run, ctx, o.window - 1); nil when no node is picked
-- or the window has fewer than o.min_runs runs.
function M.picked_window(run, ctx, o, pick)
  local ids = {}
  for _, n in ipairs(run.nodes) do
    if pick(n) then
      ids[#ids + 1] = n.id
    end
  end
  if #ids == 0 then
    return nil
  end
  local runs = M.window(run, ctx, o.window - 1)
  if #runs < o.min_runs then
    return nil
  end
  return ids, runs
end

-- For each run of `runs` (oldest first), fn(i, run, node) for every id in
-- `ids` (a list) the run has a node of. Each run's nodes are read once
-- (stored runs load them lazily) and not kept.
function M.each_node(runs, ids, fn)
  for i, h in ipairs(runs) do
    local by = h.by_id
    for _, id in ipairs(ids) do
      local n = by[id]
      if n then
        fn(i, h, n)
      end
    end
  end
end

-- Joins formatted durations: "4m 02s, 3m 58s, 4m 05s".
function M.dur_list(vals)
  local out = {}
  for i, v in ipairs(vals) do
    out[i] = M.dur(v)
  end
  return table.concat(out, ", ")
end

-- Where threads are set: the profile target of the run when known.
function M.threads_target(run)
  local t = run.config.target
  if t and t ~= "" then
    return "profiles.yml (target " .. t .. ")"
  end
  return "profiles.yml"
end

return M
