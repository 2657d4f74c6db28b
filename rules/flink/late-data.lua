-- flink.late-data: windows that drop records as late (numLateRecordsDropped
-- rising): results silently miss data. Not retention: there the windows
-- fire late, here they fired too early for these records.
-- docs/rules/flink.late-data.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local pct, fmt_d, fmt_n = units.format_pct, units.format_duration, units.format_num

local quote = fu.quote

local function rate_text(x)
  return fmt_n(x >= 10 and math.floor(x + 0.5) or x)
end

local function measured(n)
  if n.attrs.late_rate_source == "samples" then
    return "between the polls of the export"
  end
  return "averaged over the vertex's running time (one poll: it may be history)"
end

local function message(run, n, rate, share)
  local m = n.metrics
  local size = fu.window_size_ms(n)
  return ("%s%s drops %s records/s as late (%s, %s; %s since start). A late record "
    .. "arrives after the watermark passed the end of its window, and the window "
    .. "has already fired without it, so the results miss data silently.%s"):format(
      quote(n), size and (" (window %s)"):format(fmt_d(size)) or "",
      rate_text(rate), share and (pct(share, 2) .. " of its input") or "input rate unknown",
      measured(n), fmt_n(math.floor(m.late_records_dropped + 0.5)),
      m.watermark_lag_ms and (" Its watermark trails capture time by %s."):format(
        fmt_d(m.watermark_lag_ms)) or "")
end

local function recommendation(run, n)
  local bound = fu.out_of_orderness_ms(run)
  local sql = fu.is_sql(run)
  local accept = sql and "accept them for a while (legacy group windows: "
      .. "table.exec.emit.allow-lateness with table.exec.emit.late-fire.enabled: true), "
    or "accept them for a while with .allowedLateness(Duration.ofMinutes(...)) on the "
      .. "window (its state is kept that much longer and the window fires an update for "
      .. "each late record), "
  return ("Decide what late records should do: %skeep them apart with "
    .. ".sideOutputLateData(tag) to count and reconcile, or widen the watermark's "
    .. "out-of-orderness bound%s (forBoundedOutOfOrderness(...); SQL: WATERMARK FOR ts AS "
    .. "ts - INTERVAL ...) when the delay is systematic, which delays every result by the "
    .. "same amount. First check why they are late: one partition behind the others "
    .. "(WatermarkStrategy.withWatermarkAlignment keeps fast ones from running ahead) or "
    .. "idleness that moved the watermark past a slow partition. This is not "
    .. "flink.watermark-retention's problem: more retention would not keep these records."):format(
      accept, bound and (" (now %s)"):format(fmt_d(bound)) or "")
end

return {
  id = "flink.late-data",
  title = "Windows drop late records",
  severity = "warning",
  sources = { "flink" },
  tags = { "watermarks", "correctness" },
  options = {
    min_rate = 1,          -- records/s dropped that always count
    min_share = 0.001,     -- or this share of the vertex's input (0.1 %)
  },
  description = "numLateRecordsDropped rising on a window operator: records "
    .. "arrive after their window fired and are thrown away.",
  check = function(run, ctx)
    local o = ctx.options
    for _, n in ipairs(run.nodes) do
      local m = n.metrics
      local rate = m.late_records_dropped_per_s
      if rate and rate > 0 and (m.late_records_dropped or 0) > 0 then
        local input = m.records_in_per_s
        local share = input and input > 0 and rate / input or nil
        if rate >= o.min_rate or (share and share >= o.min_share) then
          ctx.report {
            node = n.id,
            message = message(run, n, rate, share),
            recommendation = recommendation(run, n),
            evidence = {
              late_records_dropped = m.late_records_dropped,
              late_records_dropped_per_s = rate,
              late_share = share,
              rate_source = n.attrs.late_rate_source,
              records_in_per_s = input,
              window_ms = fu.window_size_ms(n),
              watermark_lag_ms = m.watermark_lag_ms,
              out_of_orderness_ms = fu.out_of_orderness_ms(run),
            },
          }
        else
          ctx.log(("%s: %s late records/s, below min_rate and min_share"):format(n.id, rate_text(rate)))
        end
      end
    end
  end,
}
