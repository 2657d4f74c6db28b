-- kafka-streams.standbys: large state with no standby replica (every
-- failover replays whole changelogs), or standbys so far behind their
-- changelog that a failover restores anyway.
-- docs/rules/kafka-streams.standbys.md
local ks = require "kstate"
local units = require "optipipe.units"

local fmt_b, num = units.format_bytes, units.format_num

-- Whether the scrapes show no standby: no standby task or store, every
-- thread that reports it updates 0 standby tasks, and something said so
-- (task roles or a thread's count): without either it is unknown.
local function none_seen(run)
  local threads, roles = 0, false
  for _, n in ipairs(run.nodes) do
    if ks.is_standby(n) then
      return false
    end
    roles = roles or (n.attrs or {}).role ~= nil
    if n.kind == "thread" and n.metrics.standby_updating_tasks then
      if n.metrics.standby_updating_tasks > 0 then
        return false
      end
      threads = threads + 1
    end
  end
  return roles or threads > 0, threads
end

-- The app's active state: total and largest task.
local function active_state(run)
  local total, top = 0, nil
  for _, t in ipairs(ks.tasks(run)) do
    if not t.standby and t.bytes then
      total = total + t.bytes
      if not top or t.bytes > top.bytes then
        top = t
      end
    end
  end
  return total, top
end

local function report_missing(run, ctx, o)
  local configured = ks.cfg_num(run, "standbys")
  if configured and configured > 0 then
    return
  end
  local none, threads = none_seen(run)
  if configured == nil and not none then
    return
  end
  local total, top = active_state(run)
  if not top or total < units.parse_bytes(o.min_state) then
    return
  end
  local why = configured and ("%s is %s"):format(ks.key(run, "standbys"), ks.cfg(run, "standbys"))
    or ("no standby task was seen on %s (%s is not in the inputs)"):format(
      threads > 0 and units.format_count(threads, "thread") or
        units.format_count(run.metrics.instances or 1, "instance"), ks.key(run, "standbys"))
  ctx.report {
    node = (top.node or top.stores[1]).id,
    message = ("The app keeps %s of state (task %s alone %s) and %s: a failover replays every "
      .. "moved task's changelog from the start."):format(fmt_b(total), top.task_id or top.key,
        fmt_b(top.bytes), why),
    recommendation = run.source == "samza"
      and "Add standby tasks (job.standbytasks.replication.factor: 2, with host affinity on)."
      or "Set num.standby.replicas to 1 (2 for a tighter objective): each store gets a warm "
        .. "copy on another instance that takes over after its lag. It needs as many spare "
        .. "instances (and disk) as replicas; rack.aware.assignment.tags keeps the copy in "
        .. "another zone.",
    evidence = { state_bytes = total, largest_task_bytes = top.bytes,
                 standby_replicas = configured },
    changes = { { target = "job", key = ks.key(run, "standbys"), from = ks.cfg(run, "standbys"),
                  to = run.source == "samza" and 2 or 1 } },
  }
end

-- The newest lag of each standby store's changelog partitions.
local function standby_lags(run)
  local out, logs = {}, ks.changelogs(run)
  for _, s in ipairs(ks.stores(run)) do
    local lag
    for _, c in ipairs(logs[s.id] or {}) do
      if c.metrics.records_lag then
        lag = (lag or 0) + c.metrics.records_lag
      end
    end
    if ks.is_standby(s) and lag then
      out[#out + 1] = { node = s, lag = lag }
    end
  end
  return out
end

local function report_lagging(run, ctx)
  local limit = ks.cfg_num(run, "recovery_lag")
  local assumed = not limit
  limit = limit or ks.DEFAULTS.recovery_lag
  local lags, behind, worst = standby_lags(run), 0, nil
  for _, l in ipairs(lags) do
    if l.lag > limit then
      behind = behind + 1
      if not worst or l.lag > worst.lag then
        worst = l
      end
    end
  end
  if not worst then
    return
  end
  ctx.report {
    node = worst.node.id,
    message = ("%s of %s standby stores are more than %s records behind their changelog "
      .. "(%s%s); the worst, %s, is %s behind: a failover to it restores that much before "
      .. "processing, and the assignor does not count it as caught up."):format(
        num(behind), num(#lags), num(limit), ks.key(run, "recovery_lag") or "the limit",
        assumed and ", Kafka Streams' default" or "", ks.label(worst.node),
        units.format_count(worst.lag, "record")),
    recommendation = "Give the standbys room to keep up: fewer tasks per thread "
      .. "(num.stream.threads) or more instances, a larger restore consumer fetch "
      .. "(restore.consumer.max.poll.records, restore.consumer.fetch.max.bytes), and check "
      .. "the standby instances' disk: a standby writes every changelog record to RocksDB.",
    evidence = { standby_stores = #lags, lagging = behind, max_lag_records = worst.lag,
                 acceptable_recovery_lag = limit },
  }
end

return {
  id = "kafka-streams.standbys",
  title = "Large state without standby replicas, or standbys that lag",
  severity = "warning",
  sources = { "kafka-streams", "samza" },
  tags = { "state", "reliability", "recovery" },
  options = {
    min_state = "10 gb",   -- active state (all tasks) that deserves a warm copy
  },
  description = "A standby replica keeps a warm copy of a task's stores on another instance; "
    .. "without one, or with one far behind, a failover replays the changelog.",
  check = function(run, ctx)
    report_missing(run, ctx, ctx.options)
    report_lagging(run, ctx)
  end,
}
