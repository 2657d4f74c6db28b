-- Invalid reports raise errors; the caught ones are counted.
return {
  id = "t.badreport", title = "Bad reports", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    local bad = {
      {},
      { message = "" },
      { message = 42 },
      { message = "x", node = "nope" },
      { message = "x", node = 5 },
      { message = "x", changes = { { key = "k" } } },
      { message = "x", changes = { { to = 1 } } },
      { message = "x", changes = { key = "k", to = 1 } },
      { message = "x", severity = "fatal" },
      { message = "x", bogus = 1 },
      { message = "x", evidence = { f = print } },
      { message = "x", evidence = { 1, 2, 3 } },
      { message = "x", evidence = "text" },
      { message = "x", run = "nope" },
      { message = ("x"):rep(100000) },
    }
    local errs = {}
    for i, f in ipairs(bad) do
      local ok, err = pcall(ctx.report, f)
      if ok then errs[#errs + 1] = "accepted #" .. i else errs[#errs + 1] = tostring(err) end
    end
    ctx.report { message = table.concat(errs, "\n"), evidence = { n = #bad } }
  end,
}
