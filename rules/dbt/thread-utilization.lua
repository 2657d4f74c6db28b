-- dbt.thread-utilization: busy time / (threads × span). Saturated threads
-- while ready models waited mean more threads would help (how many, and
-- how much, bounded by the critical path); mostly idle threads mean the
-- DAG cannot use them. docs/rules/dbt.thread-utilization.md
local du = require "dbtutil"

-- Worker nodes that waited at least min_node_wait_s for a free thread
-- after their parents ended, and the longest wait.
local function waited(run, ctx)
  local n, max, floor = 0, 0, ctx.options.min_node_wait_s * 1000
  for _, node in ipairs(run.nodes) do
    local w = node.metrics.ready_wait_ms
    if w and w >= floor then
      n, max = n + 1, math.max(max, w)
    end
  end
  return n, max
end

-- "3 threads" or "3 threads (counted from the thread names)": a count
-- inferred from thread ids is a lower bound and says so.
local function threads_text(m)
  local s = du.plural(m.threads, "thread")
  if m.threads_inferred == 1 then
    s = s .. " (counted from the thread names)"
  end
  return s
end

-- Saturated: every thread busy almost all the time and ready nodes
-- waiting for one (needs the manifest's ready-waits).
local function saturated(run, ctx)
  local o, m = ctx.options, run.metrics
  local threads, span, busy = m.threads, m.span_ms, m.busy_ms
  local util, wait, cp = m.utilization_ratio, m.mean_ready_wait_ms, m.critical_path_ms
  if util < o.high_util or (m.peak_concurrency or 0) < threads or not wait or not cp then
    return false
  end
  if wait < o.min_wait_share * span then
    return false
  end
  local nwait, max_wait = waited(run, ctx)
  if nwait == 0 then
    return false
  end
  local hook = m.hook_ms or 0
  local want = math.ceil(busy / math.max(cp, 1))
  want = math.max(threads + 1, math.min(want, threads * o.max_factor))
  local est = math.max(cp, busy / want) + hook
  local gain = span - est
  if gain < o.min_gain_s * 1000 or gain < o.min_gain_share * span then
    return false
  end
  local who = threads == 1 and "The single thread" or ("All " .. threads_text(m))
  if threads == 1 and m.threads_inferred == 1 then
    who = who .. " (counted from the thread names)"
  end
  ctx.report {
    message = ("%s %s busy %s of the %s build while %s waited for a free thread "
      .. "(up to %s; %s on average over all models). With %s it could take about %s "
      .. "(%s less); no thread count can bring it below the critical path of %s."):format(
      who, threads == 1 and "was" or "were", du.pct(util, 0), du.dur(span),
      du.plural(nwait, "ready node"), du.dur(max_wait), du.dur(wait),
      du.plural(want, "thread"), du.dur(est), du.dur(gain), du.dur(cp)),
    recommendation = ("Raise threads from %d to %d in %s (or pass --threads %d), if the "
      .. "warehouse can run that many queries at once (BigQuery slots, Snowflake "
      .. "warehouse size and max_concurrency_level, Postgres connections)."):format(
      threads, want, du.threads_target(run), want),
    evidence = {
      utilization = math.floor(util * 1000 + 0.5) / 1000, threads = threads,
      peak_concurrency = m.peak_concurrency, span_s = du.secs(span),
      busy_s = du.secs(busy), mean_ready_wait_s = du.secs(wait),
      models_waited = nwait, max_ready_wait_s = du.secs(max_wait),
      threads_inferred = m.threads_inferred == 1 or nil,
      critical_path_s = du.secs(cp), estimated_span_s = du.secs(est),
    },
    changes = { { target = du.threads_target(run), key = "threads", from = threads, to = want } },
    impact = { time_saved_ms = math.floor(gain) },
  }
  return true
end

-- Idle: threads that the DAG never (or rarely) used.
local function idle(run, ctx)
  local o, m = ctx.options, run.metrics
  local threads, util, peak = m.threads, m.utilization_ratio, m.peak_concurrency or 0
  -- most builds are DAG-bound; only say so when threads were never used
  if util >= o.low_util or threads < 2 or peak > threads * o.max_peak_share then
    return
  end
  local cp = m.critical_path_ms
  local why = cp
      and (" The critical path (%s, %s of the build) bounds it, not the threads."):format(
        du.dur(cp), du.pct(cp / m.span_ms, 0))
    or ""
  local to = math.max(peak, 1)
  local changes = { { target = du.threads_target(run), key = "threads", from = threads, to = to } }
  local rec = ("No more than %s ever ran at once: threads: %d would schedule this "
    .. "build the same way with fewer open connections. To make it faster, shorten the "
    .. "longest chain (see dbt.critical-path)."):format(du.plural(peak, "node"), to)
  ctx.report {
    severity = "info",
    message = ("The %s were busy %s of the %s build (on average %.1f nodes ran at "
      .. "once, at most %d): the DAG cannot use them.%s"):format(threads_text(m), du.pct(util, 0),
      du.dur(m.span_ms), m.avg_active or 0, peak, why),
    recommendation = rec,
    evidence = {
      utilization = math.floor(util * 1000 + 0.5) / 1000, threads = threads,
      peak_concurrency = peak, span_s = du.secs(m.span_ms), busy_s = du.secs(m.busy_ms),
      threads_inferred = m.threads_inferred == 1 or nil,
      critical_path_s = cp and du.secs(cp) or nil,
    },
    changes = changes,
  }
end

return {
  id = "dbt.thread-utilization",
  title = "Threads saturated (more would help) or idle (the DAG cannot use them)",
  severity = "warning",
  sources = { "dbt" },
  tags = { "performance", "threads" },
  description = "utilization = busy time of worker threads / (threads × span of the node timeline).",
  options = {
    min_span_s = 30,       -- shorter builds are left alone
    high_util = 0.85,      -- saturated at or above
    min_wait_share = 0.05, -- mean ready-wait / span for "models waited"
    min_node_wait_s = 1,   -- a model "waited" when its ready-wait reached this
    max_factor = 4,        -- never suggest more than this many times the threads
    min_gain_s = 20,       -- estimated gain needed, seconds ...
    min_gain_share = 0.2,  -- ... and as a share of the span
    low_util = 0.4,        -- idle below ...
    max_peak_share = 0.5,  -- ... with at most this share of the threads ever busy
  },
  check = function(run, ctx)
    local m = run.metrics
    if not du.executing(run) or not m.threads or not m.utilization_ratio or not m.span_ms then
      return
    end
    if m.span_ms < ctx.options.min_span_s * 1000 or not m.busy_ms then
      return
    end
    if not saturated(run, ctx) then
      idle(run, ctx)
    end
  end,
}
