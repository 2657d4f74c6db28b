-- Tries every way to write to the model; reports how many got through.
return {
  id = "t.modify_try",
  title = "Modify the model (caught)",
  severity = "info",
  sources = { "flink" },
  check = function(run, ctx)
    local attempts = {
      function() run.nodes[1] = false end,
      function() run.nodes[4] = {} end,
      function() run.metrics.checkpoints = 0 end,
      function() run.metrics.new = 1 end,
      function() run.by_id.map.metrics.busy_ratio = 0 end,
      function() run.by_id.map.parents[1] = "x" end,
      function() rawset(run.nodes, 1, false) end,
      function() rawset(run.metrics, "new", 1) end,
      function() table.insert(run.nodes, {}) end,
      function() table.remove(run.nodes) end,
      function() table.sort(run.nodes, function(a, b) return a.id > b.id end) end,
      function() table.move(run.nodes, 1, 3, 2) end,
      function() setmetatable(run.nodes, nil) end,
      function() getmetatable(run.nodes).__newindex = nil end,
      function() local _, s = pairs(run.metrics); s.checkpoints = 0 end,
      function() local _, s = pairs(run.metrics); rawset(s, "checkpoints", 0) end,
      function() run.name = "x" end,
      function() run.series.checkpoints[1].status = "x" end,
      function() run.config["state.backend"] = "x" end,
      function() run.by_id.map.dist.busy_ratio.max = 0 end,
    }
    local escaped = 0
    for i, f in ipairs(attempts) do
      if pcall(f) then
        escaped = escaped + 1
        ctx.log("write " .. i .. " got through")
      end
    end
    ctx.report { message = "escaped " .. escaped, evidence = { escaped = escaped, tried = #attempts } }
  end,
}
