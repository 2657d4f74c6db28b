-- require: the SDK folder ("optipipe.<name>") and the pack's lib/ folder.
local helper = require "helper"
local fake = require "optipipe.fake"

return {
  id = "t.require",
  title = "Require",
  severity = "info",
  sources = { "flink" },
  check = function(run, ctx)
    assert(require "helper" == helper, "modules are cached")
    assert(not pcall(function() helper.greet = nil end), "module tables are read-only")
    ctx.report { message = helper.greet("rule") .. " " .. fake.answer() }
  end,
}
