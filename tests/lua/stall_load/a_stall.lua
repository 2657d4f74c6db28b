-- Stalls in C while the file loads.
local n = 40
string.find(("a"):rep(n), ("a?"):rep(n) .. ("a"):rep(n))
return {
  id = "t.stall_load", title = "Stall at load", severity = "info", sources = { "*" },
  check = function(bundle, ctx) end,
}
