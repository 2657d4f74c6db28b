-- team.flink-retained: every Flink job keeps at least 3 completed
-- checkpoints, so two bad ones in a row still leave one to restore from.
-- docs/cookbook.md
local NEW, OLD = "execution.checkpointing.num-retained", -- Flink 1.20+
                 "state.checkpoints.num-retained"         -- before

-- The key this run's Flink version reads.
local function key_for(run)
  local major, minor = (run.engine_version or ""):match("^(%d+)%.(%d+)")
  if major and (tonumber(major) * 100 + tonumber(minor)) < 120 then
    return OLD
  end
  return NEW
end

return {
  id = "team.flink-retained",
  title = "Flink job keeps fewer than 3 checkpoints",
  severity = "warning",
  sources = { "flink" },
  tags = { "checkpoints", "reliability" },
  options = { min_retained = 3 },
  description = "Reads num-retained from the job's configuration (Flink's "
    .. "default is 1) and asks for at least min_retained.",
  check = function(run, ctx)
    if not run.config["execution.checkpointing.interval"] then
      return -- checkpointing off, or the cluster config was not exported
    end
    local key = key_for(run)
    local raw = run.config[NEW] or run.config[OLD]
    local n = math.tointeger(tonumber(raw or "1")) or 1
    local want = ctx.options.min_retained
    if n >= want then
      return
    end
    ctx.report {
      message = ("%s retains %d completed checkpoint(s)%s; the team minimum is %d.")
        :format(run.name or run.id, n, raw and "" or " (not set: Flink's default)", want),
      recommendation = ("Set %s to %d."):format(key, want),
      evidence = { num_retained = n, min_retained = want },
      changes = { { target = "job", key = key, from = raw, to = want } },
    }
  end,
}
