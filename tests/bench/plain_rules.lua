-- The plain-Lua reference of tests/bench/engine.sh: the same rule files run
-- by the stand-alone interpreter over plain tables (no sandbox, no limits,
-- no read-only proxies), to show what the rules cost by themselves.
-- Usage: lua5.4 plain_rules.lua MODEL.lua RULE.lua...
-- Prints the CPU milliseconds of all check calls.
local run = dofile(arg[1])
local rules = {}
for i = 2, #arg do rules[#rules + 1] = dofile(arg[i]) end
local t0 = os.clock()
for _, r in ipairs(rules) do
  local ctx = { options = r.options or {}, rule = { id = r.id, severity = r.severity },
                report = function() end, log = function() end }
  r.check(run, ctx)
end
print(string.format("%.0f", (os.clock() - t0) * 1000))
