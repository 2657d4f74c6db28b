-- flink.restarts: a job that keeps failing over. docs/rules/flink.restarts.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local fmt_d = units.format_duration

return {
  id = "flink.restarts",
  title = "The job restarts frequently",
  severity = "warning",
  sources = { "flink" },
  tags = { "reliability" },
  options = { window = "1 h", max_restarts = 3 },
  description = "Counts failovers in the exception history within a window "
    .. "before the capture.",
  check = function(run, ctx)
    local o = ctx.options
    local now = run.metrics.captured_at
    local ex = run.series.exceptions
    if not now or not ex or run.status == "failed" then
      return -- a job that failed for good is flink.job-failed's (it counts these)
    end
    local window = units.parse_duration(o.window)
    local recent, last = 0, nil
    for _, e in ipairs(ex) do
      if e.timestamp_ms and e.timestamp_ms >= now - window and e.timestamp_ms <= now then
        recent = recent + 1
        last = e
      end
    end
    if recent < o.max_restarts then
      return
    end
    local strategy = fu.cfg(run, "restart-strategy.type")
    local changes
    if strategy and not strategy:lower():find("exponential", 1, true) then
      changes = { { target = "job", key = fu.key(run, "restart-strategy.type"), from = strategy,
                    to = "exponential-delay" } }
    end
    ctx.report {
      message = ("The job failed over %s in the last %s%s; the latest, %s ago: %s%s."):format(
        units.format_count(recent, "time"), fmt_d(window),
        run.metrics.restarts and (" (%s in total)"):format(
          units.format_count(run.metrics.restarts, "restart")) or "",
        fmt_d(now - last.timestamp_ms), last.exception or last.exception_class or "unknown",
        last.task and (" in " .. last.task) or ""),
      recommendation = "Fix the cause in the exception history (/jobs/<jid>/exceptions): "
        .. "each failover replays from the last checkpoint. Use an exponential-delay restart "
        .. "strategy so a crash loop backs off instead of hammering external systems.",
      evidence = { failovers = recent, window_ms = window, restarts_total = run.metrics.restarts,
                   latest = last.exception },
      changes = changes,
    }
  end,
}
