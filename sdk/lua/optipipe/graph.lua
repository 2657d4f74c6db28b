-- optipipe.graph: walking a run's node DAG (node.parents) from rules.
--
-- Pure Lua 5.4 (base/table only) so it runs inside the rule sandbox. Only
-- run.nodes (an array of nodes with id and parents) is needed: each call
-- derives its own index and child lists from node.parents in O(nodes +
-- edges), so run.by_id and node.children may be present or not. Inputs are
-- read, never written, so the read-only model proxies work. Parent ids
-- that name no node of the run are ignored, as are repeated parents.
--
-- Functions that return nodes return the run's own node tables; functions
-- that return ids return fresh arrays the caller may modify.

local M = {}

local function check_run(fname, run)
  if type(run) ~= "table" or type(run.nodes) ~= "table" then
    error(("graph.%s: expected a run (a table with a nodes array)"):format(fname), 3)
  end
end

-- The graph of one run, as plain tables: ids in node order, id -> index,
-- and per index the parent and child indices (deduplicated, in order).
local function build(run)
  local nodes, index, ids = {}, {}, {}
  for i, node in ipairs(run.nodes) do
    nodes[i] = node
    local id = node.id
    ids[i] = id
    if id ~= nil and index[id] == nil then
      index[id] = i
    end
  end
  local n = #nodes
  local parents, children = {}, {}
  for i = 1, n do
    parents[i], children[i] = {}, {}
  end
  for i = 1, n do
    local seen = {}
    local ps = nodes[i].parents
    if type(ps) == "table" then
      for _, pid in ipairs(ps) do
        local p = index[pid]
        if p and not seen[p] then
          seen[p] = true
          local pl = parents[i]
          pl[#pl + 1] = p
        end
      end
    end
  end
  -- Children in node order, whatever order the parents were listed in.
  for i = 1, n do
    for _, p in ipairs(parents[i]) do
      local cl = children[p]
      cl[#cl + 1] = i
    end
  end
  return { nodes = nodes, ids = ids, index = index, n = n,
           parents = parents, children = children }
end

--- { [node id] = { child id, ... } } for every node (an empty array for a
--- node without children). Children are listed in node order.
function M.children(run)
  check_run("children", run)
  local g = build(run)
  local out = {}
  for i = 1, g.n do
    local ids = {}
    for k, c in ipairs(g.children[i]) do
      ids[k] = g.ids[c]
    end
    if g.ids[i] ~= nil and out[g.ids[i]] == nil then
      out[g.ids[i]] = ids
    end
  end
  return out
end

-- Min-heap of node indices: Kahn's algorithm pops the lowest ready index,
-- which makes the order stable (ties go by position in run.nodes).
local function heap_push(h, v)
  local k = #h + 1
  h[k] = v
  while k > 1 do
    local p = k // 2
    if h[p] <= h[k] then
      break
    end
    h[p], h[k] = h[k], h[p]
    k = p
  end
end

local function heap_pop(h)
  local top, n = h[1], #h
  h[1] = h[n]
  h[n] = nil
  n = n - 1
  local k = 1
  while true do
    local l, r, m = 2 * k, 2 * k + 1, k
    if l <= n and h[l] < h[m] then
      m = l
    end
    if r <= n and h[r] < h[m] then
      m = r
    end
    if m == k then
      break
    end
    h[m], h[k] = h[k], h[m]
    k = m
  end
  return top
end

-- A node that really lies on a cycle among the nodes Kahn could not emit:
-- each of them has an unemitted parent, so walking parents must loop.
local function on_cycle(g, emitted)
  local start
  for i = 1, g.n do
    if not emitted[i] then
      start = i
      break
    end
  end
  local visited, i = {}, start
  while not visited[i] do
    visited[i] = true
    for _, p in ipairs(g.parents[i]) do
      if not emitted[p] then
        i = p
        break
      end
    end
  end
  return i
end

--- The run's nodes in topological order (parents before children), ties
--- broken by position in run.nodes. On a cycle returns nil and
--- "cycle through <id>", naming a node that lies on the cycle.
function M.topo_order(run)
  check_run("topo_order", run)
  local g = build(run)
  local indeg, ready = {}, {}
  for i = 1, g.n do
    indeg[i] = #g.parents[i]
    if indeg[i] == 0 then
      heap_push(ready, i)
    end
  end
  local out, emitted = {}, {}
  while #ready > 0 do
    local i = heap_pop(ready)
    emitted[i] = true
    out[#out + 1] = g.nodes[i]
    for _, c in ipairs(g.children[i]) do
      indeg[c] = indeg[c] - 1
      if indeg[c] == 0 then
        heap_push(ready, c)
      end
    end
  end
  if #out < g.n then
    return nil, "cycle through " .. tostring(g.ids[on_cycle(g, emitted)])
  end
  return out
end

-- Breadth-first walk from id along edges (g.parents or g.children).
local function walk(fname, run, id, edges_of)
  check_run(fname, run)
  if type(id) == "table" then
    id = id.id
  end
  local g = build(run)
  local start = g.index[id]
  if not start then
    return nil, ("unknown node %s"):format(tostring(id))
  end
  local edges = edges_of(g)
  local seen, queue, out = { [start] = true }, { start }, {}
  local head = 1
  while head <= #queue do
    local i = queue[head]
    head = head + 1
    for _, j in ipairs(edges[i]) do
      if not seen[j] then
        seen[j] = true
        queue[#queue + 1] = j
        out[#out + 1] = g.ids[j]
      end
    end
  end
  return out
end

--- Ids of every node id depends on, transitively, nearest first (direct
--- parents in their listed order, then theirs, ...), without duplicates
--- and without id itself. id may also be the node table. Returns nil,
--- "unknown node <id>" when id is not a node of the run.
function M.upstream(run, id)
  return walk("upstream", run, id, function(g) return g.parents end)
end

--- Ids of every node that depends on id, transitively, nearest first,
--- without duplicates and without id itself. nil, message like upstream.
function M.downstream(run, id)
  return walk("downstream", run, id, function(g) return g.children end)
end

--- Nodes without parents (entry points), in run.nodes order.
function M.sources(run)
  check_run("sources", run)
  local g = build(run)
  local out = {}
  for i = 1, g.n do
    if #g.parents[i] == 0 then
      out[#out + 1] = g.nodes[i]
    end
  end
  return out
end

--- Nodes without children (final outputs), in run.nodes order.
function M.sinks(run)
  check_run("sinks", run)
  local g = build(run)
  local out = {}
  for i = 1, g.n do
    if #g.children[i] == 0 then
      out[#out + 1] = g.nodes[i]
    end
  end
  return out
end

--- The nodes of run whose kind is kind, in model order.
function M.of_kind(run, kind)
  check_run("of_kind", run)
  local out = {}
  for _, node in ipairs(run.nodes) do
    if node.kind == kind then
      out[#out + 1] = node
    end
  end
  return out
end

--- { [node id] = node } for the run (run.by_id when the host provides it
--- is equivalent; this works on any run-shaped table).
function M.by_id(run)
  check_run("by_id", run)
  local out = {}
  for _, node in ipairs(run.nodes) do
    if node.id ~= nil and out[node.id] == nil then
      out[node.id] = node
    end
  end
  return out
end

return M
