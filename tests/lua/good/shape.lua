-- Checks the whole shape of the run table against the model the test builds.
local function eq(got, want, what)
  if got ~= want then
    error(("%s: expected %s, got %s"):format(what, tostring(want), tostring(got)), 2)
  end
end

return {
  id = "t.shape",
  title = "Model shape",
  severity = "info",
  sources = { "flink" },
  tags = { "test" },
  check = function(run, ctx)
    eq(run.source, "flink", "source")
    eq(run.id, "job-1", "id")
    eq(run.name, "wordcount", "name")
    eq(run.status, "running", "status")
    eq(run.raw_status, "RUNNING", "raw_status")
    eq(math.type(run.started_at), "integer", "started_at type")
    eq(run.started_at, 1000, "started_at")
    eq(run.ended_at, 5000, "ended_at")
    eq(run.duration_ms, 4000, "duration_ms")
    eq(run.engine_version, "1.18", "engine_version")
    eq(run.origin, "fixture.json", "origin")
    eq(#run.origins, 1, "#origins")
    eq(run.config["state.backend"], "rocksdb", "config")
    eq(math.type(run.metrics.checkpoints), "integer", "int metric")
    eq(run.metrics.checkpoints, 12, "int metric value")
    eq(math.type(run.metrics.uptime_ratio), "float", "float metric")
    local nan = run.metrics.nan_metric
    eq(nan ~= nan, true, "NaN metric")
    eq(run.metrics.missing, nil, "absent metric")
    eq(#run.nodes, 3, "#nodes")
    eq(run.nodes[1].id, "src", "nodes[1]")
    eq(run.nodes[3].id, "sink", "nodes[3]")
    eq(run.by_id.map, run.nodes[2], "by_id is the same table")
    local map = run.by_id.map
    eq(map.kind, "vertex", "kind")
    eq(map.name, "Map", "node name")
    eq(map.status, nil, "absent node status")
    eq(map.parallelism, 4, "parallelism")
    eq(math.type(map.parallelism), "integer", "parallelism type")
    eq(map.max_parallelism, 128, "max_parallelism")
    eq(run.by_id.sink.parallelism, nil, "absent parallelism")
    eq(#map.parents, 1, "#parents")
    eq(map.parents[1], "src", "parents[1]")
    eq(#map.children, 1, "#children")
    eq(map.children[1], "sink", "children[1]")
    eq(#run.by_id.src.children, 1, "#src.children")
    eq(#run.by_id.sink.children, 0, "#sink.children")
    eq(map.metrics.busy_ratio, 0.97, "node metric")
    eq(math.type(map.metrics.records_in), "integer", "node int metric")
    eq(map.attrs.operator, "Map", "attrs")
    eq(map.dist.busy_ratio.count, 3, "dist count")
    eq(map.dist.busy_ratio.max, 0.99, "dist max")
    eq(map.dist.busy_ratio.min, 0.95, "dist min")
    eq(#run.series.checkpoints, 2, "#series")
    local cp = run.series.checkpoints[1]
    eq(cp.id, 1, "record int")
    eq(math.type(cp.id), "integer", "record int type")
    eq(cp.status, "COMPLETED", "record string")
    eq(cp.ok, true, "record bool")
    eq(run.series.checkpoints[2].duration_ms, 250.5, "record float")
    eq(run.warnings[1], "something odd", "warnings")
    eq(#run.history, 0, "no history")
    eq(run.history_key, nil, "no history key")
    eq(run.superseded, nil, "not superseded")
    eq(map.raw_status, nil, "absent node raw_status")
    -- pairs, ipairs, #, next, rawlen, rawget, table.* read through proxies
    local n = 0
    for i, node in ipairs(run.nodes) do n = n + 1; eq(node, run.nodes[i], "ipairs") end
    eq(n, 3, "ipairs count")
    local keys = {}
    for k in pairs(run.config) do keys[#keys + 1] = k end
    table.sort(keys)
    eq(table.concat(keys, ","), "parallelism.default,state.backend", "pairs")
    eq(next(run.config) ~= nil, true, "next")
    eq(rawlen(run.nodes), 3, "rawlen")
    eq(rawget(run.nodes, 2), map, "rawget")
    eq(select("#", table.unpack(run.nodes)), 3, "table.unpack")
    eq(table.concat(run.warnings, ";"), "something odd", "table.concat")
    eq(type(run.nodes), "table", "type")
    eq(getmetatable(run), "read-only", "getmetatable")
    ctx.report { message = "shape ok", evidence = { nodes = #run.nodes } }
  end,
}
