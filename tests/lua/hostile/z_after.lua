-- Runs last: everything the earlier rules attacked must be intact.
return {
  id = "t.after", title = "After", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    local problems = {}
    local function want(cond, what) if not cond then problems[#problems + 1] = what end end
    want(#run.nodes == 3, "#nodes")
    want(run.nodes[1].id == "src", "nodes[1]")
    want(run.metrics.checkpoints == 12, "metrics.checkpoints")
    want(run.metrics.new == nil, "metrics.new")
    want(run.name == "wordcount", "name")
    want(run.by_id.map.metrics.busy_ratio == 0.97, "map busy_ratio")
    want(run.by_id.map.parents[1] == "src", "map parents")
    want(run.series.checkpoints[1].status == "COMPLETED", "series")
    want(run.by_id.map.dist.busy_ratio.max == 0.99, "dist")
    want(string.format("%d", 5) == "5", "string.format")
    want(("%d"):format(6) == "6", "string method")
    want(("abc"):upper() == "ABC", "string upper")
    local t = {}
    table.insert(t, 1)
    want(#t == 1, "table.insert")
    want(math.pi > 3.14, "math.pi")
    want(string.extra == nil, "string.extra")
    want(type(os.time) == "function", "os.time")
    want(x_global == nil and y_global == nil, "globals leaked")
    want(type(tostring) == "function", "tostring")
    want(getmetatable("") == false, "string metatable")
    ctx.report { message = #problems == 0 and "clean" or table.concat(problems, ", ") }
  end,
}
