-- Backtracks inside string.find (C code: the count hook never fires); on
-- n = 40 it would take days. Only an isolated worker can be stopped here.
return {
  id = "t.stall", title = "Stall in C", severity = "info", sources = { "*" },
  check = function(bundle, ctx)
    local n = 40
    string.find(("a"):rep(n), ("a?"):rep(n) .. ("a"):rep(n))
    ctx.report { message = "finished" }
  end,
}
