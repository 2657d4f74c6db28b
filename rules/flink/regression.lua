-- flink.regression: a Flink job worse than its own history (earlier exports
-- of the same job: the run store, else the exports given together). Three
-- signals: a vertex processes fewer records per busy subtask (its capacity,
-- independent of parallelism and arrival rate), checkpoint duration or size
-- trending up across exports over days, and restarts per day up.
-- docs/rules/flink.regression.md
local stats = require "optipipe.stats"
local units = require "optipipe.units"
local history = require "optipipe.history"

local HOUR = 3600000
local DAY = 24 * HOUR

local function round(x, d)
  local m = 10 ^ d
  return math.floor(x * m + 0.5) / m
end

-- Records a vertex processes per second per fully busy subtask (the
-- autoscaler's "true processing rate" per subtask): rate / parallelism /
-- busy ratio. nil when not busy enough to tell (min_busy).
local function capacity(n, min_busy)
  local m = n.metrics or {}
  local rate = m.records_in_per_s or m.records_out_per_s
  local busy = m.busy_ratio
  if not rate or not busy or busy < min_busy or not n.parallelism or n.parallelism < 1 then
    return nil
  end
  return rate / n.parallelism / busy
end

local function vertex(run, cur)
  for _, n in ipairs(run.nodes or {}) do
    if n.id == cur.id then
      return n
    end
  end
  for _, n in ipairs(run.nodes or {}) do
    if n.name == cur.name then
      return n
    end
  end
  return nil
end

local function throughput(run, hist, ctx)
  local o = ctx.options
  for _, n in ipairs(run.nodes) do
    local cur = capacity(n, o.min_busy)
    local vals = cur and history.values(hist, function(h)
      local hn = vertex(h, n)
      return hn and capacity(hn, o.min_busy)
    end) or {}
    local r = cur and stats.regression(cur, vals, { min_history = o.min_history,
      min_ratio = o.min_drop_ratio, min_increase = 0, mad_threshold = o.mad_threshold,
      falls = true })
    if r then
      ctx.report {
        node = n.id,
        message = ("%s processes %s records/s per busy subtask, 1/%s of its median of %s over "
          .. "the %s (parallelism %d, busy %s): each subtask does less work than it used to.")
          :format(n.name, units.format_number(cur), ("%.1f"):format(r.ratio),
            units.format_number(r.median), units.format_count(#vals, "earlier export"),
            n.parallelism, units.format_pct(n.metrics.busy_ratio)),
        recommendation = ("Compare %s with the earlier exports: a code or state-backend change, "
          .. "larger state per key, a slower external system, or data skew; adding "
          .. "parallelism only hides it."):format(n.name),
        evidence = { records_per_busy_subtask_s = round(cur, 3), median = round(r.median, 3),
          drop_ratio = round(r.ratio, 2), history_runs = #vals, parallelism = n.parallelism },
      }
    end
  end
end

local function when(r)
  return r.metrics.captured_at or r.ended_at or r.started_at
end

local function first_metric(r, names)
  for _, k in ipairs(names) do
    local v = r.metrics[k]
    if v then
      return v
    end
  end
  return nil
end

local TRENDS = {
  { what = "checkpoint duration", fmt = units.format_duration, names = {
      "checkpoint_duration_p50_ms", "checkpoint_duration_avg_ms", "last_checkpoint_duration_ms" } },
  { what = "checkpoint size", fmt = units.format_bytes, names = {
      "checkpoint_state_size_p50_bytes", "checkpoint_state_size_avg_bytes",
      "checkpoint_checkpointed_size_p50_bytes", "checkpoint_checkpointed_size_avg_bytes",
      "last_checkpoint_full_size_bytes", "last_checkpoint_size_bytes" } },
}

-- A robust line through one value per export (time of the export, value),
-- the current one included; reports when it rises by min_growth over at
-- least min_span_h hours.
local function trend(run, hist, ctx, t)
  local o = ctx.options
  local key
  for _, k in ipairs(t.names) do
    if run.metrics[k] then
      key = k
      break
    end
  end
  if not key or not when(run) then
    return
  end
  local xs, ys = { when(run) }, { run.metrics[key] }
  for _, h in ipairs(hist) do
    local v = h.metrics[key]
    if v and when(h) then
      xs[#xs + 1], ys[#ys + 1] = when(h), v
    end
  end
  local lo, hi = stats.min(xs), stats.max(xs)
  local line = #xs >= o.min_history + 1 and stats.robust_trend(xs, ys)
  if not line or hi - lo < o.min_span_h * HOUR or line.slope <= 0 or line.r2 < o.min_r2 then
    return
  end
  local a, b = line.intercept + line.slope * lo, line.intercept + line.slope * hi
  if a <= 0 or b / a < o.min_growth then
    return
  end
  local days = (hi - lo) / DAY
  local oldest = ys[#ys]
  for i, x in ipairs(xs) do
    if x == lo then
      oldest = ys[i]
    end
  end
  ctx.report {
    message = ("The %s (%s) rose from %s to %s over %s of exports (%d exports; the trend "
      .. "line grows %s a day, %s over the span, r² %s)."):format(
      t.what, key, t.fmt(oldest), t.fmt(run.metrics[key]), units.format_duration(hi - lo), #xs,
      "+" .. t.fmt(line.slope * DAY), units.format_ratio(b / a), ("%.2f"):format(line.r2)),
    recommendation = t.what == "checkpoint duration"
        and "Find what grows: state size (TTL, incremental checkpoints), backpressure during "
          .. "alignment (unaligned checkpoints) or the storage's throughput; see flink.checkpoint-phases."
      or "State grows without bound: set a state TTL, check windows and joins that never clean "
        .. "up, and use incremental checkpoints for large state.",
    evidence = { metric = key, first = oldest, last = run.metrics[key], growth = round(b / a, 2),
      per_day = round(line.slope * DAY, 0), r2 = round(line.r2, 3), exports = #xs,
      days = round(days, 2) },
  }
end

local function restart_rate(run, hist, ctx)
  local o = ctx.options
  local function rate(r)
    local n, d = r.metrics.restarts, r.duration_ms
    if not n or not d or d < o.min_uptime_h * HOUR then
      return nil
    end
    return n / (d / DAY)
  end
  local cur = rate(run)
  local vals = history.values(hist, rate)
  if not cur or #vals < o.min_history or run.metrics.restarts < o.min_restarts then
    return
  end
  local med = stats.median(vals)
  local r = stats.regression(cur, vals, { min_history = o.min_history, min_ratio = o.min_ratio,
    min_increase = o.min_restarts_per_day, mad_threshold = o.mad_threshold })
  if not r and not (med == 0 and cur >= o.min_restarts_per_day) then
    return
  end
  ctx.report {
    message = ("The job restarted %d times in %s (%.1f a day), against a median of %.1f a day "
      .. "over the %s."):format(run.metrics.restarts, units.format_duration(run.duration_ms), cur,
      med, units.format_count(#vals, "earlier export")),
    recommendation = "Read the exception history (flink.restarts) for what fails now that did "
      .. "not before: a new dependency, a changed schema, a flaky external system.",
    evidence = { restarts = run.metrics.restarts, per_day = round(cur, 2),
      median_per_day = round(med, 2), history_runs = #vals },
  }
end

return {
  id = "flink.regression",
  title = "Job worse than its own history",
  severity = "warning",
  sources = { "flink" },
  tags = { "performance", "history", "checkpoints" },
  description = "Compares an export with the earlier exports of the same job: capacity per "
    .. "subtask, checkpoint duration and size trends, restart rate.",
  options = {
    min_history = 3,          -- earlier exports needed
    max_history = 30,         -- earlier exports read (newest first)
    mad_threshold = 5,        -- a change must exceed this many robust sigmas (1.4826 MAD)
    min_busy = 0.1,           -- busy ratio below which a vertex's capacity is not estimated
    min_drop_ratio = 1.5,     -- median capacity / current
    min_growth = 1.5,         -- checkpoint trend: last / first value of the line
    min_r2 = 0.5,             -- checkpoint trend: fit of the line
    min_span_h = 24,          -- checkpoint trend: the exports span at least this
    min_ratio = 2,            -- restarts: current rate / median
    min_restarts = 3,         -- restarts: at least this many in the current export
    min_restarts_per_day = 1, -- restarts: current - median, per day
    min_uptime_h = 1,         -- restarts: exports of a job younger than this are skipped
  },
  check = function(run, ctx)
    local o = ctx.options
    local hist = history.earlier(run, ctx, o.max_history)
    if #hist < o.min_history then
      return
    end
    throughput(run, hist, ctx)
    for _, t in ipairs(TRENDS) do
      trend(run, hist, ctx, t)
    end
    restart_rate(run, hist, ctx)
  end,
}
