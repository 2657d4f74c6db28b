-- kafka-streams.restore-time: how long rebuilding a task's state stores
-- from their changelogs would take before the task processes again,
-- against a recovery-time objective (Kafka Streams and Samza).
-- docs/rules/kafka-streams.restore-time.md
local ks = require "kstate"
local units = require "optipipe.units"

local fmt_d, fmt_b, num = units.format_duration, units.format_bytes, units.format_num

-- The restore rate measured on run in records/s, and where it came from:
-- the state updater's restore-records-rate (records, KIP-869), else task
-- restore-rate when the run says it counts records, else the growth of
-- restore-total between scrapes. The highest seen: the best the app did.
local function measured_rate(run)
  local best, from
  local function take(v, what)
    if type(v) == "number" and v > 0 and (not best or v > best) then
      best, from = v, what
    end
  end
  local records = (run.attrs or {}).restore_rate_counts == "records"
  for _, n in ipairs(run.nodes) do
    if n.kind == "thread" then
      take(n.metrics.restore_records_per_s, "restore-records-rate of " .. (n.name or n.id))
    elseif n.kind == "task" then
      if records then
        take(n.metrics.restore_rate_per_s, "restore-rate of task " .. ((n.attrs or {}).task_id or n.id))
      end
      local xs, ys = ks.series(run, n.id, "restore_records")
      if #xs >= 2 and xs[#xs] > xs[1] and ys[#ys] > ys[1] then
        take((ys[#ys] - ys[1]) / (xs[#xs] - xs[1]) * 1000,
             "restore-total between scrapes of task " .. ((n.attrs or {}).task_id or n.id))
      end
    end
  end
  return best, from
end

-- A task's restore time in ms and how it was found: Samza's measured
-- restore-time, else its keys at the measured rate, else its bytes at
-- the configured bandwidth.
local function estimate(t, rate, bw)
  if t.restore_time_ms then
    return t.restore_time_ms, "measured"
  end
  if t.keys and rate then
    return t.keys / rate * 1000, "rate"
  end
  if t.bytes then
    return t.bytes / bw * 1000, "bandwidth"
  end
  return nil
end

local function how_text(how, t, rate, from, bw)
  if how == "measured" then
    return ("took %s to restore (the store's restore-time gauge)"):format(fmt_d(t.restore_time_ms))
  elseif how == "rate" then
    return ("holds about %s; at the measured %s records/s (%s) replaying its changelog takes %s")
      :format(units.format_count(t.keys, "key"), num(rate), from, fmt_d(t.keys / rate * 1000))
  end
  return ("holds %s of SST files; at %s/s (the restore_bandwidth option: no restore rate was "
    .. "measured) replaying its changelog takes %s"):format(fmt_b(t.bytes), fmt_b(bw),
      fmt_d(t.bytes / bw * 1000))
end

local function recommendation(run)
  if run.source == "samza" then
    return "Turn on host affinity (job.host-affinity.enabled: true) so a restarted container "
      .. "reuses its local store and replays only the changelog's tail, add standby tasks "
      .. "(job.standbytasks.replication.factor: 2) so a warm copy takes over, and give the "
      .. "input more partitions so each task's store is smaller."
  end
  return "Keep warm copies: num.standby.replicas ≥ 1 makes another instance keep each store "
    .. "up to date, so a failover replays only the standby's lag (it needs at least one more "
    .. "instance than replicas). Keep state.dir on a persistent volume (a StatefulSet) so a "
    .. "restarted instance restores only what changed, make shards smaller with more input "
    .. "partitions (one task per partition), and bound the state (window retention, "
    .. "tombstones for dead keys)."
end

local function changes(run)
  local key = ks.key(run, "standbys")
  local cur = ks.cfg_num(run, "standbys")
  if not key or (cur and cur >= 1) then
    return nil
  end
  local to = run.source == "samza" and 2 or 1
  return { { target = "job", key = key, from = ks.cfg(run, "standbys"), to = to } }
end

return {
  id = "kafka-streams.restore-time",
  title = "Restoring a task's state would take longer than the recovery objective",
  severity = "warning",
  sources = { "kafka-streams", "samza" },
  tags = { "state", "reliability", "recovery" },
  options = {
    recovery_time_objective = "15 min",
    restore_bandwidth = "50 mb",   -- per second, one thread replaying a changelog
  },
  description = "A task that moves to an instance without its state replays its "
    .. "stores' changelogs before it processes again; the largest task sets the outage.",
  check = function(run, ctx)
    local o = ctx.options
    local rto = units.parse_duration(o.recovery_time_objective)
    local bw = units.parse_bytes(o.restore_bandwidth)
    local rate, from = measured_rate(run)
    local worst, worst_ms, worst_how, over, active = nil, nil, nil, 0, 0
    for _, t in ipairs(ks.tasks(run)) do
      if not t.standby then
        local ms, how = estimate(t, rate, bw)
        if ms then
          active = active + 1
          if ms > rto then
            over = over + 1
          end
          if not worst_ms or ms > worst_ms then
            worst, worst_ms, worst_how = t, ms, how
          end
        end
      end
    end
    if not worst or worst_ms <= rto then
      return
    end
    local node = worst.node or worst.stores[1]
    ctx.report {
      node = node.id,
      message = ("Task %s %s before it processes again, above the recovery-time objective of "
        .. "%s; %s over it (of %s)."):format(
          worst.task_id or worst.key, how_text(worst_how, worst, rate, from, bw), fmt_d(rto),
          units.format_count(over, "active task is", "active tasks are"), num(active)),
      recommendation = recommendation(run),
      evidence = { task_state_bytes = worst.bytes, task_keys = worst.keys,
                   restore_records_per_s = worst_how == "rate" and rate or nil,
                   restore_bandwidth_bytes_per_s = worst_how == "bandwidth" and bw or nil,
                   estimated_restore_ms = worst_ms, rto_ms = rto,
                   tasks_over = over, active_tasks = active },
      changes = changes(run),
    }
  end,
}
