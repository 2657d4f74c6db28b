-- The model's tables are built lazily (core/lua_model.c): every way of
-- reading a table that nothing has read yet must show the whole table.
-- Each check below is the first access of what it reads.
return {
  id = "l.first_reads",
  title = "Lazy tables read first through raw views",
  severity = "info",
  sources = { "flink" },
  check = function(run, ctx)
    local bad = {}
    local function want(cond, what) if not cond then bad[#bad + 1] = what end end
    local function keys(t)
      local v = {}
      for k in pairs(t) do v[#v + 1] = tostring(k) end
      table.sort(v)
      return table.concat(v, ",")
    end

    want(#run.nodes == 3, "# before any node")
    want(run.nodes[3.0].id == "sink", "float key")
    want(rawlen(run.nodes) == 3, "rawlen")
    want(select("#", next(run.by_id)) == 2, "next on by_id")
    local n = 0
    for id, node in pairs(run.by_id) do
      n = n + 1
      want(node.id == id, "by_id key")
    end
    want(n == 3, "pairs(by_id)")
    want(run.by_id.map == run.nodes[2], "by_id and nodes share nodes")
    want(run.by_id.nope == nil and run.by_id[1] == nil and run.by_id["map\0"] == nil,
         "absent by_id keys")
    want(keys(run.by_id.map) ==
         "attrs,children,dist,id,kind,max_parallelism,metrics,name,parallelism,parents",
         "pairs(node) before its parts")
    want(rawget(run.by_id.src, "dist") == run.by_id.src.dist, "rawget builds a part")
    want(rawget(run.by_id.src, "nothing") == nil, "rawget absent")
    local k, c = nil, 0
    repeat k = next(run.by_id.sink, k); c = c + 1 until k == nil
    want(c == 9, "next(node) sees 8 keys")
    want(run.nodes[1].ended_at == nil and #run.nodes[1].children == 1,
         "a part after an absent field")
    want(keys(run.series) == "checkpoints", "pairs(series)")
    want(#run.series.checkpoints == 2, "#series")
    n = 0
    for i, node in ipairs(run.nodes) do n = n + 1; want(node == run.nodes[i], "ipairs") end
    want(n == 3, "ipairs count")
    -- pairs and ipairs keep the base library's behaviour for other tables
    local c1 = 0
    for k, v in pairs(setmetatable({}, { __pairs = function(t)
      return function(_, k) if not k then return 1, "x" end end, t, nil end })) do
      c1 = c1 + 1; want(k == 1 and v == "x", "__pairs values")
    end
    want(c1 == 1, "__pairs honoured")
    local c2 = 0
    for _ in pairs({ a = 1, b = 2 }) do c2 = c2 + 1 end
    want(c2 == 2, "pairs of a plain table")
    local c3 = 0
    for i, v in ipairs(setmetatable({}, { __index = function(_, i) if i <= 2 then return i * 10 end end })) do
      c3 = c3 + 1; want(v == i * 10, "ipairs through __index")
    end
    want(c3 == 2, "ipairs honours __index")
    want(not pcall(function() run.by_id.src.attrs.x = 1 end), "write to a lazy part")
    want(not pcall(function() rawset(run.by_id.src.metrics, "x", 1) end), "rawset on a part")
    want(not pcall(function() run.series.x = {} end), "write to series")
    ctx.report { message = #bad == 0 and "lazy ok" or table.concat(bad, "; "),
                 evidence = { src = run.by_id.src.metrics } }
  end,
}
