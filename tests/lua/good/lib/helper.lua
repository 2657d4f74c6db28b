-- A pack-local module: require "helper" from good/*.lua.
local M = { calls = 0 }
function M.greet(who) return "hello " .. who end
return M
