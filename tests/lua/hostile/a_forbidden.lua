-- Reports one finding per sandbox check, evidence.ok = true when the door
-- is closed. The test expects every check to pass.
local binary = string.char(27) .. "Lua" .. string.char(0x54, 0, 0x19, 0x93, 13, 10, 0x1a, 10)

local checks = {
  io = function() return io == nil end,
  os_execute = function() return os.execute == nil end,
  os_rest = function()
    return os.getenv == nil and os.exit == nil and os.remove == nil and os.rename == nil
      and os.tmpname == nil and os.setlocale == nil
  end,
  os_allowed = function()
    return type(os.time()) == "number" and type(os.clock()) == "number"
      and type(os.date("%Y")) == "string"
  end,
  debug = function() return debug == nil end,
  package = function() return package == nil end,
  dofile = function() return dofile == nil end,
  loadfile = function() return loadfile == nil end,
  coroutine = function() return coroutine == nil end,
  string_dump = function() return string.dump == nil and ("").dump == nil end,
  load_binary = function()
    local f, err = load(binary, "bin", "b")
    return f == nil and tostring(err):find("binary", 1, true) ~= nil
  end,
  load_reader = function() return not pcall(load, function() return nil end) end,
  load_env = function()
    local f = load("return io, os.execute, _G.io, debug")
    local a, b, c, d = f()
    return a == nil and b == nil and c == nil and d == nil
  end,
  load_text = function()
    local f = load("return 1 + 1")
    return f() == 2
  end,
  load_given_env = function()
    local f = load("return x", "chunk", "t", { x = 5 })
    return f() == 5
  end,
  require_os = function() return not pcall(require, "os") end,
  require_io = function() return not pcall(require, "io") end,
  require_path = function() return not pcall(require, "../hostile/a_forbidden") end,
  require_sdk_path = function() return not pcall(require, "optipipe.../x") end,
  collectgarbage = function()
    return collectgarbage() == 0 and collectgarbage("collect") == 0
      and type(collectgarbage("count")) == "number"
  end,
  gc_refused = function()
    local ok, err = pcall(setmetatable, {}, { __gc = function() end })
    return not ok and tostring(err):find("__gc", 1, true) ~= nil
  end,
  gc_true_refused = function() return not pcall(setmetatable, {}, { __gc = true }) end,
  setmetatable_ok = function()
    local t = setmetatable({}, { __index = function() return 7 end })
    return t.anything == 7
  end,
  string_metatable_locked = function() return getmetatable("") == false end,
  string_index_refused = function()
    return not pcall(function() getmetatable("").__index = {} end)
  end,
  string_setmetatable_refused = function() return not pcall(setmetatable, "", {}) end,
  env_metatable_locked = function() return not pcall(setmetatable, _ENV, nil) end,
  rawset_stdlib_refused = function() return not pcall(rawset, string, "format", print) end,
  newproxy = function() return newproxy == nil end,
  warn = function() return warn == nil end,
}

local names = {}
for name in pairs(checks) do names[#names + 1] = name end
table.sort(names)

return {
  id = "t.forbidden",
  title = "Forbidden",
  severity = "info",
  sources = { "flink" },
  check = function(run, ctx)
    for _, name in ipairs(names) do
      local ok, res = pcall(checks[name])
      ctx.report { message = name, evidence = { ok = ok and res == true, err = not ok and tostring(res) or "" } }
    end
  end,
}
