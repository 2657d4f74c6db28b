-- flink.checkpoint-trend: checkpoint durations creeping towards the
-- timeout (or the interval when checkpoints run back to back), durations
-- already above half the timeout, and failed checkpoints.
-- docs/rules/flink.checkpoint-trend.md
local fu = require "flinkutil"
local stats = require "optipipe.stats"
local units = require "optipipe.units"

local fmt_d, fmt_b, pct = units.format_duration, units.format_bytes, units.format_pct

local FLINK_DEFAULT_TIMEOUT = 600000

-- What a checkpoint must finish within: the timeout, or the interval when
-- min-pause is 0 and the interval is shorter (checkpoints then run back to
-- back and the job never gets a pause).
local function limit_of(run)
  local timeout = fu.timeout_ms(run)
  local assumed = timeout == nil
  timeout = timeout or FLINK_DEFAULT_TIMEOUT
  local interval, pause = fu.interval_ms(run), fu.min_pause_ms(run)
  if interval and pause == 0 and interval < timeout then
    return interval, "the checkpoint interval (min-pause is 0, so checkpoints would run back to back)",
      timeout, assumed
  end
  return timeout, assumed and "the default checkpoint timeout (config not exported)"
    or "the checkpoint timeout", timeout, assumed
end

local function sizes_of(run, cks)
  local xs, ys = {}, {}
  for _, c in ipairs(cks) do
    local s = c.state_size_bytes or c.checkpointed_size_bytes
    if s and c.trigger_ms then
      xs[#xs + 1], ys[#ys + 1] = c.trigger_ms, s
    end
  end
  return xs, ys
end

-- Relative growth of y over the observed span along a robust line.
local function rel_growth(xs, ys)
  if #xs < 3 then
    return nil
  end
  local tr = stats.robust_trend(xs, ys)
  local med = stats.median(ys)
  if not tr or not med or med <= 0 then
    return nil
  end
  return tr.slope * (xs[#xs] - xs[1]) / med
end

local function backpressured(run)
  for _, n in ipairs(run.nodes) do
    local bp = fu.ratio(n, "backpressure_ratio")
    if bp and bp > 0.5 then
      return n, bp
    end
  end
  return nil
end

-- Why durations grow: state growth, or alignment under backpressure.
local function cause(run, cks, dur_growth)
  local sx, sy = sizes_of(run, cks)
  local size_growth = rel_growth(sx, sy)
  if size_growth and size_growth >= 0.1 and size_growth >= 0.5 * dur_growth then
    return "state", size_growth
  end
  local px, py = {}, {}
  for _, c in ipairs(cks) do
    local d = (c.processed_data_bytes or 0) + (c.persisted_data_bytes or 0)
    px[#px + 1], py[#py + 1] = c.trigger_ms, d
  end
  local data_growth = rel_growth(px, py)
  local bpn, bp = backpressured(run)
  if (data_growth and data_growth > 0.5) or bpn then
    return "alignment", size_growth, bpn, bp
  end
  return "unclear", size_growth
end

local function trend_changes(run, why)
  if why == "alignment" and fu.cfg_bool(run, "execution.checkpointing.unaligned.enabled") ~= true then
    return { { target = "job", key = fu.key(run, "execution.checkpointing.unaligned.enabled"),
               from = fu.cfg(run, "execution.checkpointing.unaligned.enabled"), to = "true" } }
  end
  if why == "state" and fu.backend(run) == "rocksdb" and fu.incremental(run) == false then
    return { { target = "job", key = fu.key(run, "execution.checkpointing.incremental"),
               from = "false", to = "true" } }
  end
  return nil
end

local function cause_text(why, size_growth, bpn, bp)
  if why == "state" then
    return (" State growth drives it: the checkpointed state grew %s over the same period."):format(
      pct(size_growth, 0))
  elseif why == "alignment" then
    local s = " Alignment drives it, not state (size "
      .. (size_growth and ("changed %s"):format(pct(size_growth, 0)) or "unknown") .. ")"
    if bpn then
      s = s .. (": barriers queue behind backpressure ('%s' is backpressured %s)"):format(
        bpn.name or bpn.id, pct(bp))
    else
      s = s .. ": in-flight data processed during alignment keeps growing"
    end
    return s .. "."
  end
  return " Neither the state size nor the in-flight data explains it."
end

local function cause_advice(why)
  if why == "state" then
    return "Bound the state: state TTL (StateTtlConfig, SQL table.exec.state.ttl) or "
      .. "smaller keys; use RocksDB with incremental checkpoints; give the stateful "
      .. "vertex more parallelism so each subtask uploads less."
  elseif why == "alignment" then
    return "Fix the backpressure first (see flink.bottleneck); meanwhile unaligned "
      .. "checkpoints (execution.checkpointing.unaligned.enabled: true, with "
      .. "execution.checkpointing.aligned-checkpoint-timeout to start aligned) let "
      .. "barriers overtake the queued data."
  end
  return "Look at the per-subtask checkpoint details (sync/async duration, start delay) "
    .. "in the Web UI to see which phase grows."
end

local function report_trend(ctx, run, cks, o)
  local xs, ys = {}, {}
  for _, c in ipairs(cks) do
    if c.trigger_ms and c.end_to_end_duration_ms then
      xs[#xs + 1], ys[#ys + 1] = c.trigger_ms, c.end_to_end_duration_ms
    end
  end
  if #xs < o.min_points then
    return false
  end
  local tr = stats.robust_trend(xs, ys)
  local med = stats.median(ys)
  local span = xs[#xs] - xs[1]
  if not tr or span <= 0 or tr.slope <= 0 then
    return false
  end
  local growth = tr.slope * span
  if tr.r2 < o.min_r2 or growth < o.min_growth * med or growth < o.noise_factor * tr.resid_mad then
    return false
  end
  local limit, limit_name = limit_of(run)
  local now_fit = tr.slope * xs[#xs] + tr.intercept
  local left = (limit - now_fit) / tr.slope
  local horizon = units.parse_duration(o.horizon)
  if left > horizon or left > o.max_extrapolation * span then
    return false
  end
  local why, size_growth, bpn, bp = cause(run, cks, growth / med)
  local per_hour = tr.slope * 3600000
  local msg
  if left <= 0 then
    msg = ("Checkpoint durations have grown to %s (fitted), past %s of %s"):format(
      fmt_d(now_fit), limit_name, fmt_d(limit))
  else
    msg = ("Checkpoint durations grow %s per hour (from %s to %s over %s in %s) "
      .. "and would reach %s of %s in about %s"):format(
        fmt_d(per_hour), fmt_d(tr.slope * xs[1] + tr.intercept), fmt_d(now_fit),
        units.format_count(#xs, "checkpoint"),
        fmt_d(span), limit_name, fmt_d(limit), fmt_d(left))
  end
  msg = msg .. "; checkpoints would then expire and, with few tolerable failures, fail the job over."
    .. cause_text(why, size_growth, bpn, bp)
  ctx.report {
    message = msg,
    recommendation = cause_advice(why) .. " Raising the timeout only postpones the failure.",
    evidence = {
      duration_slope_ms_per_h = per_hour, duration_now_ms = now_fit, limit_ms = limit,
      time_left_ms = math.max(left, 0), r2 = tr.r2, checkpoints = #xs, span_ms = span,
      cause = why, state_growth_ratio = size_growth,
    },
    changes = trend_changes(run, why),
  }
  return true
end

local function report_half(ctx, run, cks, o)
  local _, _, timeout, assumed = limit_of(run)
  local recent = {}
  for i = math.max(1, #cks - 2), #cks do
    recent[#recent + 1] = cks[i].end_to_end_duration_ms
  end
  local med = #recent > 0 and stats.median(recent)
  if not med or med <= o.half_timeout_ratio * timeout then
    return
  end
  ctx.report {
    message = ("Recent checkpoints take %s (median of the last %d), %s of the %s%s checkpoint "
      .. "timeout: a slower one expires."):format(fmt_d(med), #recent, pct(med / timeout, 0),
        fmt_d(timeout), assumed and " default" or ""),
    recommendation = "Find what makes them slow before they expire: state size (incremental "
      .. "RocksDB checkpoints, state TTL), backpressure delaying barriers (unaligned "
      .. "checkpoints) or slow checkpoint storage. Raising the timeout only postpones it.",
    evidence = { duration_ms = med, timeout_ms = timeout, ratio = med / timeout },
  }
end

local function report_failures(ctx, run)
  local failed = fu.checkpoints(run, "FAILED")
  if #failed == 0 then
    return
  end
  local ids, last = {}, failed[#failed]
  for _, c in ipairs(failed) do
    ids[#ids + 1] = "#" .. c.id
  end
  local all = fu.checkpoints(run, "COMPLETED")
  ctx.report {
    message = ("%d of the last %s failed (%s); the latest: %s"):format(
      #failed, units.format_count(#failed + #all, "checkpoint"), table.concat(ids, ", "), last.failure_message or "no message"),
    recommendation = (last.failure_message or ""):find("expired", 1, true)
      and "They expired: they take longer than the timeout. See why they are slow "
        .. "(state size, backpressure, storage) rather than raising the timeout."
      or "Read the failure message and the JobManager log for the failing subtask.",
    evidence = { failed = #failed, completed = #all, latest_failure = last.failure_message,
                 failed_total = run.metrics.checkpoints_failed },
  }
end

return {
  id = "flink.checkpoint-trend",
  title = "Checkpoint durations creep towards the timeout",
  severity = "warning",
  sources = { "flink" },
  tags = { "checkpoints", "reliability" },
  options = {
    horizon = "24h",            -- report crossings projected within this time
    min_points = 6,             -- completed checkpoints needed for a trend
    min_r2 = 0.5,               -- how well the robust line must fit
    min_growth = 0.25,          -- growth over the span, relative to the median
    noise_factor = 3,           -- growth over the span vs. the residual MAD
    max_extrapolation = 20,     -- project at most this many spans ahead
    half_timeout_ratio = 0.5,
  },
  description = "Fits completed checkpoint durations against time with a "
    .. "Theil-Sen line and projects when they cross the timeout.",
  check = function(run, ctx)
    local cks = fu.checkpoints(run, "COMPLETED")
    local trend = false
    if #cks > 0 then
      trend = report_trend(ctx, run, cks, ctx.options)
      if not trend then
        report_half(ctx, run, cks, ctx.options)
      end
    end
    report_failures(ctx, run)
  end,
}
