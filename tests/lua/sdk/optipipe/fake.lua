-- A stand-in SDK module: require "optipipe.fake".
local M = {}
function M.answer() return 42 end
return M
