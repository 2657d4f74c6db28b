-- working_set.lua - shows why the engine benchmark (engine.sh) is slow on a
-- shared VM: the same 250,000 node visits over plain tables and over
-- read-only proxies (an empty table whose own metatable's __index is the
-- real table, as core/sbx.c builds them), for models of growing size.
-- Per visit the work is constant; what grows is the working set, and past a
-- few MiB every visit misses the caches (docs/sandbox.md "Performance").
-- Not a test. Usage: lua5.4 tests/bench/working_set.lua [plain|proxy]...
local VISITS = 250000

local function ro() error("read-only", 2) end

local function proxy(real, len)
  local mt = { __index = real, __newindex = ro, __metatable = "read-only" }
  if len then mt.__len = function() return len end end
  return setmetatable({}, mt)
end

-- One model of n nodes shaped like a Flink vertex of the benchmark bundle.
local function model(n, wrap)
  local nodes = {}
  for i = 1, n do
    local metrics = { records_in = i * 10, records_out = i * 9, bytes_in = i * 1000,
                      bytes_out = i * 900, accumulated_busy_ms = 1000,
                      accumulated_idle_ms = 500, accumulated_backpressured_ms = 100,
                      records_in_per_s = 0.1, records_out_per_s = 0.1 }
    local parents = { i > 1 and string.format("%032x", i - 1) or nil }
    local node = { id = string.format("%032x", i), kind = "vertex", name = "Operator " .. i,
                   status = "running", raw_status = "RUNNING", started_at = 1700000000000,
                   duration_ms = 3600000, parallelism = 4, max_parallelism = 128,
                   metrics = wrap(metrics), parents = wrap(parents, #parents) }
    nodes[i] = wrap(node)
  end
  return nodes, n
end

local function pass(nodes, n)
  local worst, worst_v = nil, -1
  for j = 1, n do
    local node = nodes[j]
    local m = node.metrics
    local v = (m.records_in or 0) + #node.parents + (node.parallelism or 0)
    if v > worst_v then worst, worst_v = node, v end
  end
  return worst
end

local modes = { plain = function(t) return t end, proxy = proxy }
local chosen = #arg > 0 and arg or { "plain", "proxy" }
print("nodes   passes  mode    MiB    ms (250,000 visits)")
for _, n in ipairs({ 1000, 2000, 3000, 4000, 5000, 6000, 10000 }) do
  for _, name in ipairs(chosen) do
    local nodes, count = model(n, assert(modes[name], "mode: plain or proxy"))
    collectgarbage("collect")
    collectgarbage("stop")
    local t0 = os.clock()
    for _ = 1, VISITS // n do pass(nodes, count) end
    local ms = (os.clock() - t0) * 1000
    print(string.format("%-7d %-7d %-7s %-6.1f %.0f", n, VISITS // n, name,
                        collectgarbage("count") / 1024, ms))
    collectgarbage("restart")
  end
end
