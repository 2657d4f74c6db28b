-- Catching the allocation failure does not let the rule go on.
return {
  id = "t.pcall_mem", title = "Memory bomb under pcall", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    local ok = pcall(string.rep, "x", 1 << 30)
    local t = {}
    for i = 1, 100 do pcall(function() t[i] = ("y"):rep(1 << 28) end) end
    ctx.report { message = "survived " .. tostring(ok) }
  end,
}
