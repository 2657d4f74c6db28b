-- flink.checkpointing-disabled: a stateful streaming job without
-- checkpoints. docs/rules/flink.checkpointing-disabled.md
local fu = require "flinkutil"

local STATEFUL = { "Window", "Aggregate", "Join", "Deduplicate", "Rank", "KeyedProcess",
                   "Reduce", "CoProcess", "CepOperator", "Match" }

-- Keyed exchanges, windows, joins, aggregations: operators with state.
local function stateful(run)
  for _, n in ipairs(run.nodes) do
    if fu.is_keyed(n) then
      return n
    end
    local t = (n.name or "") .. " " .. (n.attrs.description or "")
    for _, p in ipairs(STATEFUL) do
      if t:find(p, 1, true) then
        return n
      end
    end
  end
  return nil
end

return {
  id = "flink.checkpointing-disabled",
  title = "Checkpointing is off on a stateful job",
  severity = "warning",
  sources = { "flink" },
  tags = { "checkpoints", "reliability", "configuration" },
  options = { interval = "1 min" },
  description = "Without checkpoints a failure restarts the job from scratch: "
    .. "keyed state and source offsets are lost.",
  check = function(run, ctx)
    if fu.checkpointing_enabled(run) ~= false then
      return
    end
    if (fu.cfg(run, "execution.runtime-mode") or "STREAMING") == "BATCH" then
      return
    end
    local n = stateful(run)
    if not n then
      return
    end
    ctx.report {
      message = ("Checkpointing is disabled (interval = Long.MAX_VALUE) but the job keeps "
        .. "state ('%s'%s): any failure restarts it from scratch, losing its state and "
        .. "re-reading or skipping input."):format(n.name or n.id,
          fu.is_keyed(n) and " has a keyed input" or ""),
      recommendation = ("Enable checkpointing (execution.checkpointing.interval: %s, or "
        .. "env.enableCheckpointing(...) in code) with durable checkpoint storage."):format(
          ctx.options.interval),
      evidence = { stateful_vertex = n.id },
      changes = { { target = "job", key = "execution.checkpointing.interval",
                    to = ctx.options.interval } },
    }
  end,
}
