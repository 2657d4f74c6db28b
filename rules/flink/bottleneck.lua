-- flink.bottleneck: the vertex that causes the backpressure, not the one
-- that shows the most of it, and a per-vertex parallelism sized the way
-- the Flink autoscaler sizes it. docs/rules/flink.bottleneck.md
local fu = require "flinkutil"
local graph = require "optipipe.graph"
local units = require "optipipe.units"

local pct, fmt_n, times = units.format_pct, units.format_num, units.format_ratio
local fmt_d = units.format_duration

local function quote(n)
  return "'" .. (n.name or n.id) .. "'"
end

-- The backpressured parents of every vertex that is not backpressured
-- itself: backpressure propagates upstream, so the first hop below a
-- backpressured vertex that is not blocked is where the pressure starts.
local function candidates(run, o)
  local bp = {}
  for _, n in ipairs(run.nodes) do
    bp[n.id] = fu.ratio(n, "backpressure_ratio")
  end
  local out = {}
  for _, c in ipairs(run.nodes) do
    if bp[c.id] == nil or bp[c.id] <= o.bp_high then
      local up, worst = nil, nil
      for _, pid in ipairs(c.parents) do
        local r = bp[pid]
        if r and r > o.bp_high and (not worst or r > worst) then
          up, worst = run.by_id[pid], r
        end
      end
      if up then
        out[#out + 1] = { node = c, up = up, up_bp = worst, busy = fu.ratio(c, "busy_ratio") }
      end
    end
  end
  table.sort(out, function(a, b)
    return (a.busy or -1) > (b.busy or -1)
  end)
  return out
end

-- max / median of a distribution, nil when it says nothing.
local function skew_of(d)
  if not d or (d.count or 0) < 2 or not d.max then
    return nil
  end
  local med = d.p50
  if not med or med < 0.05 * d.max then
    med = math.max(d.mean or 0, 1e-9)
  end
  return d.max / med
end

-- The demand the sources' backlogs measure, as the autoscaler computes it
-- (research/flink.md §3.1): a source's TARGET_DATA_RATE = its rate +
-- d(pendingRecords)/dt, its CATCH_UP_DATA_RATE = pendingRecords /
-- catch_up; both propagate downstream with the traffic. Kept as ratios to
-- each vertex's current input rate: { [id] = { growth = TDR/rate,
-- catch_up = CATCH_UP/rate } }. nil when no source exported a backlog
-- change (one poll, no pendingRecords): then demand is only estimated.
local function measured_demand(run, o)
  local order = graph.topo_order(run)
  if not order then
    return nil
  end
  local catch_s = units.parse_duration(o.catch_up) / 1000
  local d, any = {}, false
  for _, n in ipairs(order) do
    local m = n.metrics
    if #n.parents == 0 then
      local rate, change = fu.source_rate(n), m.pending_records_change_per_s
      if rate and rate > 0 and change then
        any = true
        d[n.id] = { growth = math.max(rate + change, 0) / rate,
                    catch_up = (m.pending_records or 0) / catch_s / rate }
      else
        d[n.id] = { growth = 1, catch_up = 0 } -- its current rate is its target
      end
    else
      -- weighted by what each input sends (records_out_per_s), else evenly
      local g, cu, w = 0, 0, 0
      for _, pid in ipairs(n.parents) do
        local up, dp = run.by_id[pid], d[pid]
        if dp then
          local wt = (up and up.metrics.records_out_per_s) or 1
          g, cu, w = g + dp.growth * wt, cu + dp.catch_up * wt, w + wt
        end
      end
      d[n.id] = w > 0 and { growth = g / w, catch_up = cu / w } or { growth = 1, catch_up = 0 }
    end
  end
  return any and d or nil
end

-- The scale factor of vertex c: with measured demand the autoscaler's
-- targetCapacity(utilization target, with restart) / true processing rate,
-- where TPR = input rate / busy, i.e. busy × (catch-up + growth / u +
-- growth × restart / catch-up) as ratios of the input rate; without it,
-- busy × what backpressure hides (1 / (1 - upstream bp), at most
-- max_scale_factor) / u. Returns the factor, the demand ratio, the way.
local function scale_factor(c, o, demand)
  local e = demand and demand[c.node.id]
  if e then
    local restart = units.parse_duration(o.restart_time) / units.parse_duration(o.catch_up)
    local f = c.busy * (e.catch_up + e.growth / o.target_utilization + e.growth * restart)
    return f, e.growth, "measured"
  end
  local factor = math.min(1 / math.max(1 - c.up_bp, 1e-9), o.max_scale_factor)
  return c.busy * factor / o.target_utilization, factor, "estimated"
end

-- The autoscaler's sizing (research/flink.md §3.1): true processing rate
-- from busy time, the target rate measured from the sources' backlogs when
-- two polls give them, else the current input rate scaled by what
-- backpressure hides; at target utilization, aligned to key groups.
local function target_parallelism(c, o, demand)
  local n, p = c.node, c.node.parallelism
  local f, factor, how = scale_factor(c, o, demand)
  local raw = math.ceil(p * f - 1e-9)
  local maxp = n.max_parallelism
  local to, why = raw, nil
  if maxp and maxp > 0 then
    if fu.is_keyed(n) then
      to = fu.divisor_at_least(raw, maxp)
      if to ~= raw then
        why = ("rounded up to %d, a divisor of max parallelism %d, so key groups spread evenly"):format(to, maxp)
      end
    elseif raw > maxp then
      to = maxp
    end
    if raw > maxp then
      why = ("capped at max parallelism %d (pipeline.max-parallelism; changing it loses keyed state)"):format(maxp)
    end
  end
  return math.max(to, p), raw, factor, why, how
end

-- How the recommendation computed p' (said in the finding).
local function formula_text(c, o, raw, factor, how, demand)
  local p = c.node.parallelism
  if how == "measured" then
    local e = demand[c.node.id]
    return ("ceil(%d × busy %s × (catch-up %s + demand %s / %s target utilization + "
      .. "restart %s)) = %d, the autoscaler's formula with the demand the sources' "
      .. "backlogs measure between the polls (their rate + pendingRecords growth, and "
      .. "the backlog caught up within %s)"):format(
        p, pct(c.busy), times(e.catch_up), times(factor), pct(o.target_utilization),
        times(factor * units.parse_duration(o.restart_time) / units.parse_duration(o.catch_up)),
        raw, fmt_d(units.parse_duration(o.catch_up)))
  end
  return ("ceil(%d × busy %s × %s demand / %s target utilization) = %d"):format(
    p, pct(c.busy), times(factor), pct(o.target_utilization), raw)
end

local function rate_text(c, p)
  local r = c.node.metrics.records_in_per_s
  if not r or r <= 0 or not c.busy or c.busy <= 0 then
    return ""
  end
  return (" It takes %s records/s; at full busy time one subtask handles about %s records/s."):format(
    fmt_n(math.floor(r + 0.5)), fmt_n(math.floor(r / (c.busy * p) + 0.5)))
end

local function skew_finding(ctx, c, sk_busy, sk_rec)
  local n = c.node
  local parts = {}
  if sk_busy and sk_busy >= ctx.options.skew_factor then
    parts[#parts + 1] = ("the busiest subtask is %s the median (busy %s vs %s)"):format(
      times(sk_busy), pct(n.dist.busy_ratio.max), pct(n.dist.busy_ratio.p50))
  end
  if sk_rec and sk_rec >= ctx.options.skew_factor then
    parts[#parts + 1] = ("one subtask gets %s the median records"):format(times(sk_rec))
  end
  ctx.report {
    node = n.id,
    message = ("%s is the bottleneck (busy %s, no backpressure) behind %s, which is "
      .. "backpressured %s, but its subtasks are skewed: %s. The hot subtask limits "
      .. "the whole vertex, so more parallelism will not help: the hot keys stay on one subtask."):format(
        quote(n), pct(c.busy), quote(c.up), pct(c.up_bp), table.concat(parts, "; ")),
    recommendation = "Fix the key distribution instead of the parallelism: salt hot keys "
      .. "and aggregate in two steps (pre-aggregate by key + random suffix, then by key), or, "
      .. "for SQL aggregates, enable two-phase aggregation (table.optimizer.agg-phase-strategy: "
      .. "TWO_PHASE with table.exec.mini-batch.enabled: true). Check the key choice for "
      .. "null/default values that all land on one subtask.",
    evidence = {
      busy_ratio = c.busy, upstream_backpressure_ratio = c.up_bp,
      upstream_vertex = c.up.id, busy_skew = sk_busy, records_skew = sk_rec,
      parallelism = n.parallelism,
    },
  }
end

-- A chain's busy time is the sum of its operators': say so, and how to
-- find the busy one, before sizing the whole chain.
local function chain_text(run, n)
  local ops = fu.chain_ops(n)
  if not ops then
    return "", ""
  end
  local quoted = {}
  for i, op in ipairs(ops) do
    quoted[i] = "'" .. op .. "'"
  end
  return (" It is a chain of %s (%s): one of them is usually the busy one."):format(
      units.format_count(#ops, "operator"), table.concat(quoted, ", ")),
    ("First find which chained operator is busy: break the chain at a suspect "
      .. "(.disableChaining() or .startNewChain() on that operator) or set %s: false "
      .. "while measuring, and read each operator's busy ratio; fix or scale that operator. "
      .. "If the whole chain is busy, "):format(fu.key(run, "pipeline.operator-chaining.enabled"))
end

local function bottleneck_finding(ctx, run, c, demand)
  local o, n = ctx.options, c.node
  local p = n.parallelism
  local to, raw, factor, why, how = target_parallelism(c, o, demand)
  local remeasure = how == "measured"
    and "The demand is measured: re-measure after the change all the same."
    or ("Re-measure after the change: backpressure hides how much input is really "
      .. "waiting (this step sizes for at most %s the current rate; two polls with the "
      .. "sources' pendingRecords measure it)."):format(times(o.max_scale_factor))
  local confidence = c.busy >= 0.95 and "high" or "medium"
  local chain_msg, chain_rec = chain_text(run, n)
  local raise = chain_rec == "" and "Raise" or "raise"
  ctx.report {
    node = n.id,
    message = ("%s is the bottleneck: busy %s with no backpressure of its own, directly "
      .. "downstream of %s, which is backpressured %s. That upstream backpressure is a "
      .. "symptom; this vertex at parallelism %d is out of capacity.%s%s"):format(
        quote(n), pct(c.busy), quote(c.up), pct(c.up_bp), p, rate_text(c, p), chain_msg),
    recommendation = chain_rec .. (raise .. " the parallelism of this vertex only, from %d to %d: "
      .. "%s%s. Apply it with "
      .. "pipeline.jobvertex-parallelism-overrides: %s:%d (Flink 1.17+, what the "
      .. "autoscaler writes; restart from a savepoint) or .setParallelism(%d) on this "
      .. "operator. Do not raise parallelism.default: the backpressured upstream vertices "
      .. "only wait for this one. %s"):format(
        p, to, formula_text(c, o, raw, factor, how, demand),
        why and ("; " .. why) or "", n.id, to, to, remeasure),
    evidence = {
      busy_ratio = c.busy,
      busy_ratio_avg = n.metrics.busy_ratio,
      upstream_backpressure_ratio = c.up_bp,
      upstream_vertex = c.up.id,
      records_in_per_s = n.metrics.records_in_per_s,
      parallelism = p,
      max_parallelism = n.max_parallelism,
      target_parallelism = to,
      target_utilization = o.target_utilization,
      demand_factor = factor,
      sizing = how,
      true_processing_rate = (n.metrics.records_in_per_s and c.busy > 0)
        and n.metrics.records_in_per_s / c.busy or nil,
      catch_up_factor = how == "measured" and demand[n.id].catch_up or nil,
      confidence = confidence,
    },
    changes = { { target = n.name or n.id, key = "parallelism", from = p, to = to } },
  }
end

local function weak_finding(ctx, c)
  local n = c.node
  ctx.report {
    node = n.id,
    severity = "info",
    message = ("Backpressure from %s (%s) ends at %s, but that vertex is only %s busy: "
      .. "it is not short of CPU. Suspect what it waits on: an external system it "
      .. "calls or writes to, or the network between the two vertices."):format(
        quote(c.up), pct(c.up_bp), quote(n), pct(c.busy)),
    recommendation = "Look at the operator's external calls (async I/O capacity, sink "
      .. "throttling, connection pools) and the network buffers (outPoolUsage of the "
      .. "upstream vertex, inPoolUsage of this one) before changing parallelism; a flame "
      .. "graph (rest.flamegraph.enabled: true) shows where the time goes.",
    evidence = { busy_ratio = c.busy, upstream_backpressure_ratio = c.up_bp,
                 upstream_vertex = c.up.id, idle_ratio = fu.ratio(n, "idle_ratio") },
  }
end

return {
  id = "flink.bottleneck",
  title = "Backpressure points at the real bottleneck",
  severity = "warning",
  sources = { "flink" },
  tags = { "performance", "parallelism", "backpressure" },
  options = {
    bp_high = 0.5,             -- Flink's HIGH backpressure level starts above 0.5
    busy_high = 0.8,           -- busy enough to be out of capacity (Web UI red)
    target_utilization = 0.7,  -- the autoscaler's job.autoscaler.utilization.target
    max_scale_factor = 2.0,    -- most demand growth an estimate assumes (no measured demand)
    catch_up = "30 min",       -- the autoscaler's job.autoscaler.catch-up.duration
    restart_time = "5 min",    -- the autoscaler's job.autoscaler.restart.time
    skew_factor = 2.0,         -- max/median per subtask counted as skew
    lag_factor = fu.WATERMARK_DEFAULTS.lag_factor,
    min_lag = fu.WATERMARK_DEFAULTS.min_lag,
    min_running = fu.WATERMARK_DEFAULTS.min_running,
  },
  description = "Backpressure propagates upstream, so the vertex with the most "
    .. "backpressure is a victim; the bottleneck is the busy vertex right below "
    .. "the backpressured ones.",
  check = function(run, ctx)
    if run.status ~= "running" and run.status ~= "unknown" then
      return
    end
    local o = ctx.options
    local cands = candidates(run, o)
    if #cands == 0 then
      return
    end
    -- Windows whose watermarks stall are flink.watermark-retention's:
    -- no parallelism for them (same condition, same defaults).
    local stalled = {}
    for _, s in ipairs(fu.watermark_stalls(run, o)) do
      stalled[s.node.id] = "watermarks stall its windows"
    end
    -- Async I/O operators whose queue is full are flink.async-io's.
    for _, c in ipairs(cands) do
      if fu.is_async_io(c.node) then
        stalled[c.node.id] = "an async I/O operator (flink.async-io)"
      end
    end
    local reported = 0
    local demand = measured_demand(run, o)
    for _, c in ipairs(cands) do
      if c.busy and c.busy >= o.busy_high then
        if stalled[c.node.id] then
          ctx.log(("%s: %s; no parallelism advice"):format(c.node.id, stalled[c.node.id]))
        else
          local sk_busy = skew_of(c.node.dist.busy_ratio)
          local sk_rec = skew_of(c.node.dist.records_in)
          if (sk_busy or 0) >= o.skew_factor or (sk_rec or 0) >= o.skew_factor then
            skew_finding(ctx, c, sk_busy, sk_rec)
          else
            bottleneck_finding(ctx, run, c, demand)
          end
        end
        reported = reported + 1
      end
    end
    if reported == 0 and cands[1].busy and not stalled[cands[1].node.id] then
      weak_finding(ctx, cands[1])
    end
  end,
}
