-- Cheap instructions forever: only the wall clock stops it (the test runs
-- it with no instruction budget and a short timeout).
return {
  id = "t.slow", title = "Slow", severity = "info", sources = { "*" },
  check = function(bundle, ctx)
    local x = 0
    while true do
      pcall(function() x = x + 1 end)
    end
  end,
}
