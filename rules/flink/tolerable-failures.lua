-- flink.tolerable-failures: no tolerance for failed checkpoints while
-- checkpoints do fail. docs/rules/flink.tolerable-failures.md
local fu = require "flinkutil"
local units = require "optipipe.units"

return {
  id = "flink.tolerable-failures",
  title = "No tolerable checkpoint failures with recent failures",
  severity = "warning",
  sources = { "flink" },
  tags = { "checkpoints", "reliability", "configuration" },
  options = { tolerable = 3 },
  description = "With execution.checkpointing.tolerable-failed-checkpoints = 0 "
    .. "(the default) one failed checkpoint fails the whole job over.",
  check = function(run, ctx)
    local tol = run.metrics.checkpoint_tolerable_failures
        or tonumber(fu.cfg(run, "execution.checkpointing.tolerable-failed-checkpoints") or "")
    if tol ~= 0 then
      return -- tolerant, or not exported
    end
    local failed = fu.checkpoints(run, "FAILED")
    if #failed == 0 then
      return
    end
    local last = failed[#failed]
    ctx.report {
      message = ("%s failed (latest #%d: %s) and "
        .. "execution.checkpointing.tolerable-failed-checkpoints is 0: every such failure "
        .. "fails the job over and replays from the last checkpoint."):format(
          units.format_count(#failed, "recent checkpoint"), last.id, last.failure_message or "no message"),
      recommendation = ("Tolerate a few failed checkpoints (%d) so one slow or expired "
        .. "checkpoint does not restart the job, and fix why they fail (see "
        .. "flink.checkpoint-trend)."):format(ctx.options.tolerable),
      evidence = { failed = #failed, tolerable = tol, failed_total = run.metrics.checkpoints_failed },
      changes = { { target = "job", key = "execution.checkpointing.tolerable-failed-checkpoints",
                    from = 0, to = ctx.options.tolerable } },
    }
  end,
}
