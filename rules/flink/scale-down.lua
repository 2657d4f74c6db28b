-- flink.scale-down: vertices far below their capacity while nothing is
-- backpressured get a lower parallelism, sized the way the Flink
-- autoscaler sizes a scale-down. docs/rules/flink.scale-down.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local pct, fmt_n = units.format_pct, units.format_num

local function is_source(n)
  return #n.parents == 0
end

-- The busy time the current rate needs at the target utilization, as a
-- parallelism (never below 1), then aligned: keyed vertices to a divisor
-- of the key groups, sources to a divisor of their partitions.
local function target(n, busy, o)
  local p = n.parallelism
  local raw = math.max(1, math.ceil(p * busy / o.target_utilization - 1e-9))
  local to, why = raw, nil
  if fu.is_keyed(n) and n.max_parallelism and n.max_parallelism > 0 then
    to = fu.divisor_at_least(raw, n.max_parallelism)
    if to ~= raw then
      why = ("rounded up to %d, a divisor of max parallelism %d, so key groups spread evenly"):format(
        to, n.max_parallelism)
    end
  elseif is_source(n) then
    local parts, from = fu.source_partitions(n, o)
    if parts then
      to = fu.divisor_at_least(raw, parts)
      if to ~= raw then
        why = ("rounded up to %d, a divisor of the %d source partitions (%s), so every "
          .. "subtask reads as many partitions"):format(to, parts,
            from == "option" and "option source_partitions"
              or "counted from its Kafka offset metrics")
      end
    end
  end
  return to, raw, why
end

-- The parents a vertex reads through FORWARD (ship_strategy lists one
-- strategy per input, in input order).
local function forward_parents(n)
  local out, i = {}, 0
  for st in ((n.attrs.ship_strategy or "") .. ","):gmatch("([^,]*),") do
    i = i + 1
    if st == "FORWARD" and n.parents[i] then
      out[#out + 1] = n.parents[i]
    end
  end
  return out
end

-- Vertices joined by FORWARD keep one parallelism (Flink needs it): the
-- lower end is raised to the other's target, and when one end stays as it
-- is, so does the other.
local function align_forward(run, plan)
  local changed = true
  while changed do
    changed = false
    for _, n in ipairs(run.nodes) do
      for _, pid in ipairs(forward_parents(n)) do
        local a, b = plan[n.id], plan[pid]
        if a and b and a.to ~= b.to then
          local low, high, other = a, b, run.by_id[pid]
          if a.to > b.to then
            low, high, other = b, a, n
          end
          low.to, changed = high.to, true
          low.why = ("raised to %d to match '%s', connected by FORWARD"):format(
            high.to, other.name or other.id)
        elseif (a == nil) ~= (b == nil) then
          plan[n.id], plan[pid], changed = nil, nil, true
        end
      end
    end
  end
end

-- Whether any vertex is backpressured, and whether every one was measured.
local function pressure(run, o)
  local any, known = false, 0
  for _, n in ipairs(run.nodes) do
    local bp = fu.ratio(n, "backpressure_ratio")
    if bp then
      known = known + 1
      if bp > o.bp_ok then
        any = true
      end
    end
  end
  return any, known == #run.nodes
end

local function slots(run, plan)
  local now, after = 0, 0
  for _, n in ipairs(run.nodes) do
    local p = n.parallelism or 0
    now = math.max(now, p)
    after = math.max(after, plan[n.id] and plan[n.id].to or p)
  end
  return now, after
end

local function flowing(n)
  local m = n.metrics
  local r = is_source(n) and m.records_out_per_s or m.records_in_per_s
  return r ~= nil and r > 0, r
end

local function report(ctx, run, n, e, slots_now, slots_after)
  local o = ctx.options
  local _, rate = flowing(n)
  ctx.report {
    node = n.id,
    severity = "info",
    message = ("'%s' is busy at most %s at parallelism %d and nothing in the job is "
      .. "backpressured: it handles %s records/s with a fraction of its capacity. "
      .. "Parallelism %d covers the current rate at %s target utilization.%s"):format(
        n.name or n.id, pct(e.busy), n.parallelism, fmt_n(math.floor(rate + 0.5)), e.to,
        pct(o.target_utilization),
        slots_after < slots_now
          and (" Lowered like this, the job needs %s instead of %d (one slot sharing group)."):format(
            units.format_count(slots_after, "slot"), slots_now)
          or ""),
    recommendation = ("Lower the parallelism of this vertex from %d to %d: ceil(%d × busy %s / "
      .. "%s target utilization) = %d%s. Apply it with pipeline.jobvertex-parallelism-overrides: "
      .. "%s:%d (Flink 1.17+) or .setParallelism(%d), restarting from a savepoint%s. "
      .. "This is one capture: check that the rate here is the "
      .. "peak (or let the autoscaler, job.autoscaler.enabled: true, follow the load)."):format(
        n.parallelism, e.to, n.parallelism, pct(e.busy), pct(o.target_utilization), e.raw,
        e.why and ("; " .. e.why) or "", n.id, e.to, e.to,
        fu.is_keyed(n) and " (keyed state is redistributed by key group)" or ""),
    evidence = {
      busy_ratio = e.busy, parallelism = n.parallelism, target_parallelism = e.to,
      target_utilization = o.target_utilization, records_per_s = rate,
      max_parallelism = n.max_parallelism, slots = slots_now, slots_after = slots_after,
      partitions = is_source(n) and fu.source_partitions(n, o) or nil,
    },
    changes = { { target = n.name or n.id, key = "parallelism", from = n.parallelism, to = e.to } },
  }
end

return {
  id = "flink.scale-down",
  title = "A vertex holds far more parallelism than its rate needs",
  severity = "info",
  sources = { "flink" },
  tags = { "cost", "parallelism" },
  options = {
    target_utilization = 0.7,  -- the autoscaler's job.autoscaler.utilization.target
    busy_low = 0.4,            -- below target - boundary (0.7 - 0.3): worth scaling down
    bp_ok = 0.1,               -- Flink's OK backpressure level ends at 0.1
    min_parallelism = 8,       -- smaller vertices free too few slots for a restart
    min_reduction = 0.5,       -- only targets at most this share of the current parallelism
    source_partitions = 0,     -- partitions the sources read (0: from the metric names)
  },
  description = "A vertex that is mostly idle while nothing is backpressured can run "
    .. "with fewer subtasks: the job gives slots back.",
  check = function(run, ctx)
    if run.status ~= "running" and run.status ~= "unknown" then
      return
    end
    local o = ctx.options
    local any_bp, all_known = pressure(run, o)
    if any_bp or not all_known then
      return
    end
    local plan = {}
    for _, n in ipairs(run.nodes) do
      local busy = fu.ratio(n, "busy_ratio")
      local p = n.parallelism
      if busy and p and p >= o.min_parallelism and busy < o.busy_low and flowing(n) then
        local to, raw, why = target(n, busy, o)
        if to <= p * o.min_reduction then
          plan[n.id] = { to = to, raw = raw, why = why, busy = busy }
        end
      end
    end
    align_forward(run, plan)
    local now, after = slots(run, plan)
    for _, n in ipairs(run.nodes) do
      local e = plan[n.id]
      if e and e.to < n.parallelism then
        report(ctx, run, n, e, now, after)
      end
    end
  end,
}
