-- flink.retained-checkpoints: only one retained checkpoint, so a corrupt
-- latest checkpoint has no fallback. docs/rules/flink.retained-checkpoints.md
local fu = require "flinkutil"

return {
  id = "flink.retained-checkpoints",
  title = "Only one checkpoint retained",
  severity = "warning",
  sources = { "flink" },
  tags = { "checkpoints", "reliability", "configuration" },
  options = { min_retained = 2 },
  description = "Flink keeps one completed checkpoint by default; if it is "
    .. "corrupt or partly deleted there is nothing older to restore from.",
  check = function(run, ctx)
    if fu.checkpointing_enabled(run) == false or not fu.has_cluster_config(run) then
      return -- disabled, or the cluster config was not exported
    end
    local raw = fu.cfg(run, "execution.checkpointing.num-retained")
    local n = tonumber(raw or "1") or 1
    local want = ctx.options.min_retained
    if n >= want then
      return
    end
    local key = fu.key(run, "execution.checkpointing.num-retained")
    ctx.report {
      message = ("Only %d completed checkpoint is retained (%s %s): if it is corrupt or its "
        .. "files were removed, the job has no older checkpoint to restore from."):format(
          n, key, raw and ("= " .. raw) or "is not set, Flink's default is 1"),
      recommendation = ("Retain at least %d checkpoints (%s: %d). Older checkpoints cost "
        .. "storage only for files the newer ones do not share."):format(want, key, want),
      evidence = { num_retained = n, configured = raw ~= nil },
      changes = { { target = "job", key = key, from = raw, to = want } },
    }
  end,
}
