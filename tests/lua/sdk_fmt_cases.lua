-- sdk/lua/optipipe/units.lua against tests/unit/fmt_cases.txt, the cases
-- core/fmt.c meets too (tests/unit/test_fmt.c). test_lua_sdk.c passes the
-- file's text as the global FMT_CASES (the bare state has no io).
local units = require "optipipe.units"

local run = {
  count = function(a) return units.format_count(tonumber(a[2]), a[3], a[4] ~= "-" and a[4] or nil) end,
  duration = function(a) return units.format_duration(tonumber(a[2])) end,
  bytes = function(a) return units.format_bytes(tonumber(a[2])) end,
  ratio = function(a) return units.format_ratio(tonumber(a[2])) end,
  percent = function(a) return units.format_pct(tonumber(a[2]), tonumber(a[3])) end,
  number = function(a) return units.format_number(tonumber(a[2])) end,
}

local n, bad = 0, {}
for line in FMT_CASES:gmatch("[^\n]+") do
  if not line:find("^#") then
    local f = {}
    for field in (line .. " | "):gmatch("(.-) | ") do
      f[#f + 1] = field
    end
    local fn = run[f[1]]
    assert(fn, "malformed case: " .. line)
    local got, want = fn(f), f[#f]
    if got ~= want then
      bad[#bad + 1] = ("%s(%s): got %q, want %q"):format(f[1], f[2], tostring(got), want)
    end
    n = n + 1
  end
end
assert(n >= 50, "too few cases: " .. n)
assert(#bad == 0, table.concat(bad, "\n"))
