return {
  id = "t.ok_after_stall", title = "Loads after the stall", severity = "info",
  sources = { "*" },
  check = function(bundle, ctx) ctx.report { message = "ok" } end,
}
