-- Tests of sdk/lua/optipipe/graph.lua over run-shaped tables: plain ones,
-- read-only proxies (as rules get them) and broken graphs.
local graph = require "optipipe.graph"

local function ids(nodes)
  local out = {}
  for i, n in ipairs(nodes) do
    out[i] = n.id
  end
  return table.concat(out, ",")
end

local function eq(got, want, what)
  assert(got == want, ("%s: got %s, want %s"):format(what, tostring(got), tostring(want)))
end

local function ro(t)
  return setmetatable({}, {
    __index = function(_, k)
      local v = t[k]
      if type(v) == "table" then
        return ro(v)
      end
      return v
    end,
    __newindex = function() error("read-only table", 2) end,
    __len = function() return #t end,
    __pairs = function()
      return function(_, k)
        local nk, v = next(t, k)
        if type(v) == "table" then
          v = ro(v)
        end
        return nk, v
      end, nil, nil
    end,
  })
end

-- a -> b -> d -> e, a -> c -> d, f alone; listed out of order, with a
-- repeated parent and a parent that is not a node ("ghost").
--   index: d=1 b=2 a=3 c=4 e=5 f=6
local run = { source = "test", id = "r1", nodes = {
  { id = "d", parents = { "b", "c", "b" } },
  { id = "b", parents = { "a" } },
  { id = "a", parents = {} },
  { id = "c", parents = { "a" } },
  { id = "e", parents = { "d", "ghost" } },
  { id = "f" },
} }

for _, r in ipairs { run, ro(run) } do
  -- Kahn: ready {a(3), f(6)} -> a; then b(2) c(4) ready -> b, c; d; e; f.
  local order = assert(graph.topo_order(r))
  eq(ids(order), "a,b,c,d,e,f", "topo order")

  local ch = graph.children(r)
  eq(table.concat(ch.a, ","), "b,c", "children of a")
  eq(table.concat(ch.b, ","), "d", "children of b (parent repeated)")
  eq(table.concat(ch.d, ","), "e", "children of d")
  eq(#ch.e, 0, "e has no children")
  eq(#ch.f, 0, "f has no children")
  eq(ch.ghost, nil, "unknown parents are not nodes")

  eq(table.concat(graph.upstream(r, "e"), ","), "d,b,c,a", "upstream of e")
  eq(table.concat(graph.upstream(r, "d"), ","), "b,c,a", "upstream of d")
  eq(#graph.upstream(r, "a"), 0, "upstream of a source")
  eq(table.concat(graph.downstream(r, "a"), ","), "b,c,d,e", "downstream of a")
  eq(table.concat(graph.downstream(r, "c"), ","), "d,e", "downstream of c")
  eq(#graph.downstream(r, "f"), 0, "downstream of isolated node")

  eq(ids(graph.sources(r)), "a,f", "sources")
  eq(ids(graph.sinks(r)), "e,f", "sinks")

  local v, err = graph.upstream(r, "nope")
  eq(v, nil, "unknown id")
  assert(err:find("unknown node nope", 1, true), err)
end

-- Nodes returned are the run's own tables; a node table is accepted as id.
eq(graph.topo_order(run)[1], run.nodes[3], "same node tables")
eq(table.concat(graph.upstream(run, run.nodes[1]), ","), "b,c,a", "node as id")
eq(graph.by_id(run).c, run.nodes[4], "by_id")
local kinds = { nodes = { { id = "s1", kind = "stage" }, { id = "q", kind = "sql" },
                          { id = "s2", kind = "stage" } } }
eq(ids(graph.of_kind(kinds, "stage")), "s1,s2", "of_kind, in model order")
eq(#graph.of_kind(kinds, "task"), 0, "of_kind: none")

-- Inputs are untouched.
eq(#run.nodes[1].parents, 3, "parents not deduplicated in place")
eq(run.nodes[1].children, nil, "no children field added")
eq(run.by_id, nil, "no by_id added")

-- A host-provided by_id/children does not change the answers.
local with_index = { nodes = run.nodes, by_id = graph.by_id(run) }
eq(ids(graph.topo_order(with_index)), "a,b,c,d,e,f", "with by_id")

-- Cycles: nil plus a node that is on the cycle, even when the first stuck
-- node (q) is only downstream of it.
local cyc = { nodes = {
  { id = "q", parents = { "x" } },
  { id = "x", parents = { "z" } },
  { id = "y", parents = { "x" } },
  { id = "z", parents = { "y" } },
  { id = "w" },
} }
local order, err = graph.topo_order(cyc)
eq(order, nil, "cycle")
assert(err == "cycle through x" or err == "cycle through y" or err == "cycle through z", err)
order, err = graph.topo_order { nodes = { { id = "s", parents = { "s" } } } }
eq(order, nil, "self loop")
eq(err, "cycle through s", "self loop message")
-- Walks terminate on cycles and never list the start node.
eq(table.concat(graph.upstream(cyc, "x"), ","), "z,y", "upstream around a cycle")
eq(table.concat(graph.downstream(cyc, "x"), ","), "q,y,z", "downstream around a cycle")

-- Empty run.
eq(#graph.topo_order { nodes = {} }, 0, "empty topo")
eq(#graph.sources { nodes = {} }, 0, "empty sources")

-- Wide and deep: a 3000-node chain listed backwards stays linear-ish.
local chain = { nodes = {} }
local N = 3000
for i = 1, N do
  local k = N - i + 1 -- node n<k> is listed at position i
  chain.nodes[i] = { id = "n" .. k, parents = k > 1 and { "n" .. (k - 1) } or {} }
end
local co = assert(graph.topo_order(chain))
eq(co[1].id, "n1", "chain start")
eq(co[N].id, "n" .. N, "chain end")
eq(#graph.upstream(chain, "n" .. N), N - 1, "chain upstream")

-- Random DAGs (deterministic generator): the order puts parents first,
-- ties follow input order, and upstream/downstream equal the transitive
-- closure computed the slow way.
local seed = 42
local function rnd(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n + 1
end
for _ = 1, 20 do
  local n = rnd(40)
  local perm = {} -- node k (k-th in a hidden topological order) sits at perm[k]
  for k = 1, n do perm[k] = k end
  for k = n, 2, -1 do
    local j = rnd(k)
    perm[k], perm[j] = perm[j], perm[k]
  end
  local g = { nodes = {} }
  local parents_of = {}
  for k = 1, n do
    local ps = {}
    for p = 1, k - 1 do
      if rnd(4) == 1 then ps[#ps + 1] = "v" .. p end
    end
    parents_of["v" .. k] = ps
    g.nodes[perm[k]] = { id = "v" .. k, parents = ps }
  end
  local order = assert(graph.topo_order(g))
  eq(#order, n, "random topo size")
  local pos = {}
  for i, node in ipairs(order) do pos[node.id] = i end
  for _, node in ipairs(g.nodes) do
    for _, p in ipairs(node.parents) do
      assert(pos[p] < pos[node.id], "parent after child")
    end
  end
  -- Slow closure: ancestors by repeated expansion.
  for _, node in ipairs(g.nodes) do
    local anc, frontier = {}, { node.id }
    while #frontier > 0 do
      local nxt = {}
      for _, id in ipairs(frontier) do
        for _, p in ipairs(parents_of[id]) do
          if not anc[p] then anc[p] = true; nxt[#nxt + 1] = p end
        end
      end
      frontier = nxt
    end
    local up, count = graph.upstream(g, node.id), 0
    for _ in pairs(anc) do count = count + 1 end
    eq(#up, count, "upstream size of " .. node.id)
    for _, id in ipairs(up) do
      assert(anc[id], id .. " is not an ancestor of " .. node.id)
      local down = graph.downstream(g, id)
      local found = false
      for _, d in ipairs(down) do found = found or d == node.id end
      assert(found, node.id .. " missing downstream of " .. id)
    end
  end
end

-- Bad arguments raise.
assert(not pcall(graph.topo_order, nil), "nil run")
assert(not pcall(graph.sources, { id = "no nodes" }), "run without nodes")

for k, v in pairs(graph) do
  assert(type(v) == "function", "graph." .. k .. " is not a function")
end
