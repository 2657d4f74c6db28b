-- kafka-streams.restore-after-rebalance: after a rebalance, active tasks
-- that stay in restoration for long (not processing), and warm-up or
-- standby replicas whose changelog lag never shrinks, so the task never
-- moves to them. docs/rules/kafka-streams.restore-after-rebalance.md
local ks = require "kstate"
local units = require "optipipe.units"
local stats = require "optipipe.stats"

local fmt_d, num = units.format_duration, units.format_num

-- How long task n has been restoring at the newest scrape: over the
-- latest unbroken stretch of samples with remaining records > 0, else
-- (one scrape) up to its thread's last rebalance. Also the records still
-- to restore and their fall per second over the stretch.
local function restoring(run, n)
  local rem = n.metrics.restore_remaining_records
  if (n.attrs or {}).restore_state ~= "restoring" or not rem or rem <= 0 then
    return nil
  end
  local samples, from = ks.samples(run, n.id), nil
  for i = #samples, 1, -1 do
    local v = samples[i].restore_remaining_records
    if type(v) ~= "number" or v <= 0 then
      break
    end
    from = i
  end
  if from and from < #samples then
    local a, b = samples[from], samples[#samples]
    local fall = (a.restore_remaining_records - b.restore_remaining_records) / (b.t_ms - a.t_ms) * 1000
    return b.t_ms - a.t_ms, rem, fall, "scrapes"
  end
  for _, p in ipairs(n.parents or {}) do
    local t = run.by_id[p]
    if t and t.kind == "thread" and t.metrics.last_rebalance_ago_ms then
      return t.metrics.last_rebalance_ago_ms, rem, nil, "rebalance"
    end
  end
  return nil
end

local function check_active(run, ctx, o)
  local limit = units.parse_duration(o.max_restore)
  local worst, count = nil, 0
  for _, n in ipairs(ks.task_nodes(run)) do
    if not ks.is_standby(n) then
      local ms, rem, fall, how = restoring(run, n)
      if ms and ms >= limit then
        count = count + 1
        if not worst or ms > worst.ms then
          worst = { n = n, ms = ms, rem = rem, fall = fall, how = how }
        end
      end
    end
  end
  if not worst then
    return
  end
  local w = worst
  local since = w.how == "scrapes" and ("for %s of scrapes"):format(fmt_d(w.ms))
    or ("since its thread's last rebalance %s ago"):format(fmt_d(w.ms))
  local eta = ""
  if w.fall and w.fall > 0 then
    eta = (" at %s records/s: another %s"):format(num(w.fall), fmt_d(w.rem / w.fall * 1000))
  elseif w.fall then
    eta = ", and the remaining count did not fall"
  end
  ctx.report {
    node = w.n.id,
    message = ("Active %s has been restoring %s and still has %s to go%s; %s "
      .. "restoring longer than %s. A restoring task processes nothing."):format(
        ks.label(w.n), since, units.format_count(w.rem, "record"), eta,
        units.format_count(count, "active task is", "active tasks are"), fmt_d(limit)),
    recommendation = "Avoid the full restore: standby replicas (num.standby.replicas) so a "
      .. "moved task finds a warm copy; keep state.dir on a persistent volume and give each "
      .. "instance a stable group.instance.id (static membership) so a restart is not a "
      .. "rebalance. Make the restore faster: fewer tasks per thread, a larger restore consumer "
      .. "fetch (restore.consumer.max.poll.records), smaller stores (more partitions, retention).",
    evidence = { restoring_ms = w.ms, remaining_records = w.rem, restore_records_per_s = w.fall,
                 tasks_restoring_long = count },
  }
end

-- The changelog lag over time of a store's partitions (summed per scrape).
local function lag_series(run, logs)
  local at = {}
  for _, c in ipairs(logs) do
    local xs, ys = ks.series(run, c.id, "records_lag")
    for i = 1, #xs do
      at[xs[i]] = (at[xs[i]] or 0) + ys[i]
    end
  end
  local xs = {}
  for t in pairs(at) do
    xs[#xs + 1] = t
  end
  table.sort(xs)
  local ys = {}
  for i, t in ipairs(xs) do
    ys[i] = at[t]
  end
  return xs, ys
end

local function check_warmups(run, ctx, o)
  local logs = ks.changelogs(run)
  local lag_limit = ks.cfg_num(run, "recovery_lag") or ks.DEFAULTS.recovery_lag
  local probing = ks.cfg_num(run, "probing") or ks.DEFAULTS.probing
  local stuck, worst = 0, nil
  for _, s in ipairs(ks.stores(run)) do
    if ks.is_standby(s) and logs[s.id] then
      local xs, ys = lag_series(run, logs[s.id])
      local n = #xs
      if n >= 2 and xs[n] - xs[1] >= probing and ys[n] > lag_limit then
        local trend = stats.theil_sen(xs, ys)
        if trend and ys[n] >= ys[1] * (1 - o.min_catch_up) then
          stuck = stuck + 1
          if not worst or ys[n] > worst.lag then
            worst = { s = s, lag = ys[n], first = ys[1], window = xs[n] - xs[1],
                      slope = trend.slope * 1000 }
          end
        end
      end
    end
  end
  if not worst then
    return
  end
  ctx.report {
    node = worst.s.id,
    message = ("The warm-up or standby %s is %s behind its changelog after %s of scrapes (it "
      .. "was %s behind; trend %s records/s), longer than a probing rebalance (%s%s): it never "
      .. "gets within %s (%s), so the task never moves to it; %s."):format(
        ks.label(worst.s), units.format_count(worst.lag, "record"), fmt_d(worst.window),
        num(worst.first), num(worst.slope), fmt_d(probing),
        ks.cfg_num(run, "probing") and "" or ", Kafka Streams' default",
        units.format_count(lag_limit, "record"), ks.key(run, "recovery_lag") or "the limit",
        units.format_count(stuck, "standby store does not catch up", "standby stores do not catch up")),
    recommendation = "The replica writes slower than the active task produces: give it restore "
      .. "throughput (fewer tasks per thread, a larger restore consumer fetch, faster disk for "
      .. "state.dir), or raise acceptable.recovery.lag if a restore of that many records fits the "
      .. "recovery objective. max.warmup.replicas bounds how many warm up at once.",
    evidence = { lag_records = worst.lag, first_lag_records = worst.first, window_ms = worst.window,
                 lag_trend_records_per_s = worst.slope, acceptable_recovery_lag = lag_limit,
                 probing_rebalance_interval_ms = probing, stores_not_catching_up = stuck },
  }
end

return {
  id = "kafka-streams.restore-after-rebalance",
  title = "Tasks restore for long after a rebalance, or warm-up replicas never catch up",
  severity = "warning",
  sources = { "kafka-streams" },
  tags = { "state", "recovery", "rebalance" },
  options = {
    max_restore = "10 min",  -- an active task restoring longer than this
    min_catch_up = 0.1,      -- a replica's lag must fall by this share over the window
  },
  description = "Reads the restore progress of active tasks (restore-remaining-records-total) "
    .. "and the changelog lag of standby stores over the scrapes.",
  check = function(run, ctx)
    check_active(run, ctx, ctx.options)
    check_warmups(run, ctx, ctx.options)
  end,
}
