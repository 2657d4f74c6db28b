-- sources = {"*"}: one call over the bundle; findings per run and bundle-wide.
return {
  id = "t.bundle",
  title = "Bundle",
  severity = "info",
  sources = { "*" },
  check = function(bundle, ctx)
    ctx.report { message = "runs: " .. #bundle.runs }
    for _, run in ipairs(bundle.runs) do
      ctx.report { run = run, message = "run " .. run.source .. "/" .. run.id }
      if run.id == "job-1" then
        ctx.report { run = "job-1", node = "map", message = "by run id" }
      end
    end
  end,
}
