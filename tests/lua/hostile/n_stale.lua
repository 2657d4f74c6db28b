-- A ctx kept from an earlier call cannot report later.
local saved
return {
  id = "t.stale", title = "Stale ctx", severity = "info", sources = { "spark" },
  check = function(run, ctx)
    if not saved then
      saved = ctx
      return
    end
    local ok, err = pcall(saved.report, { message = "stale" })
    ctx.report { message = "stale report ok=" .. tostring(ok), evidence = { err = tostring(err) } }
  end,
}
