-- Tries to change the shared standard library; globals stay in its own env.
return {
  id = "t.stdlib_try",
  title = "Modify the stdlib (caught)",
  severity = "info",
  sources = { "flink" },
  check = function(run, ctx)
    local attempts = {
      function() string.format = nil end,
      function() string.format = function() return "pwned" end end,
      function() table.insert = function() end end,
      function() math.pi = 3 end,
      function() string.extra = 1 end,
      function() os.time = nil end,
      function() utf8.char = nil end,
      function() rawset(table, "insert", print) end,
      function() setmetatable(string, nil) end,
    }
    local escaped = 0
    for _, f in ipairs(attempts) do
      if pcall(f) then escaped = escaped + 1 end
    end
    x_global = 1        -- lands in this rule's own environment
    _G.y_global = 2
    tostring = nil      -- shadows only in this rule's environment
    ctx.report { message = "escaped " .. escaped, evidence = { escaped = escaped } }
  end,
}
