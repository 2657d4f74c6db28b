-- mixed.change-outcome: the closed loop. A change a team approved (a
-- finding of an earlier run of the same job, in the run store, with
-- decision "approved" and changes) is checked on the first later run that
-- has it applied: effective, no effect, or worse (then: revert), with the
-- numbers before and after, for the metric the finding measured (spill,
-- skew, busy time, checkpoint time, bytes billed) and for time, each with
-- its verdict. Still no gain after ineffective_after applied runs:
-- ineffective (revert). Applied, then back to the old value: reverted.
-- docs/rules/mixed.change-outcome.md
local stats = require "optipipe.stats"
local units = require "optipipe.units"
local history = require "optipipe.history"

local MAD_TO_SIGMA = 1.4826

-- The node of run a change on node id is about: the same id, else the
-- same name (ids may shift between runs).
local function find_node(run, id, name)
  for _, n in ipairs(run.nodes or {}) do
    if n.id == id then
      return n
    end
  end
  for _, n in ipairs(run.nodes or {}) do
    if name and n.name == name then
      return n
    end
  end
  return nil
end

local function same(a, b)
  if a == nil or b == nil then
    return false
  end
  local x, y = tonumber(a), tonumber(b)
  if x and y then
    return x == y
  end
  return tostring(a) == tostring(b)
end

-- Whether run has change c of finding f applied: a vertex's parallelism,
-- a node attr (dbt config) or a run config key now holds c.to.
local function applied_one(run, f, c, node_name)
  local n = f.node and find_node(run, f.node, node_name)
  if c.key == "parallelism" then
    return n ~= nil and same(n.parallelism, c.to)
  end
  if n and n.attrs and n.attrs[c.key] ~= nil then
    return same(n.attrs[c.key], c.to)
  end
  return same((run.config or {})[c.key], c.to)
end

local function applied(run, f, node_name)
  for _, c in ipairs(f.changes) do
    if not applied_one(run, f, c, node_name) then
      return false
    end
  end
  return true
end

-- What the outcome is measured with: for a finding on a node, that node's
-- time (found by id, else by name) — where the change acts; else the run
-- time. For a streaming (Flink) run without a time prediction, the worst
-- backpressure (of the node, else of every vertex). Lower is better.
local function metric_of(run_source, f, node_name)
  local function nodes_of(r)
    local n = f.node and find_node(r, f.node, node_name)
    return n and { n } or (not f.node and r.nodes) or {}
  end
  if run_source == "flink" and not (f.impact and f.impact.time_saved_ms) then
    return { name = "backpressure", fmt = units.format_pct, absolute = true, get = function(r)
      local worst
      for _, n in ipairs(nodes_of(r)) do
        local v = (n.metrics or {}).backpressure_ratio
        if v and (not worst or v > worst) then
          worst = v
        end
      end
      return worst
    end }
  end
  if f.node and node_name then
    return { name = ("%s time"):format(node_name), fmt = units.format_duration,
      get = function(r)
        local n = find_node(r, f.node, node_name)
        return n and n.duration_ms
      end }
  end
  return { name = "run time", fmt = units.format_duration, get = function(r)
    return r.duration_ms
  end }
end

-- The node of the finding in r (by id, else name), or nil.
local function node_of(r, f, node_name)
  return f.node and find_node(r, f.node, node_name)
end

-- max / median of a stage's task run times (what spark.skew measures).
local function task_skew(n)
  local d = n and n.dist and n.dist.executor_run_ms
  if d and d.max and d.p50 and d.p50 > 0 then
    return d.max / d.p50
  end
  return nil
end

-- The first of the node's metrics (names) that it has.
local function node_metric(names)
  return function(r, f, node_name)
    local n = node_of(r, f, node_name)
    for _, k in ipairs(names) do
      local v = n and n.metrics and n.metrics[k]
      if v then
        return v
      end
    end
    return nil
  end
end

local function run_metric(names)
  return function(r)
    for _, k in ipairs(names) do
      local v = r.metrics and r.metrics[k]
      if v then
        return v
      end
    end
    return nil
  end
end

-- What each rule's findings measure (lower is better), judged beside time
-- (metric_of). One row per rule; absolute: a ratio judged in points.
local CHECKPOINT_TIME = { name = "checkpoint duration (p50)", fmt = units.format_duration,
  get = run_metric({ "checkpoint_duration_p50_ms", "checkpoint_duration_avg_ms",
                     "last_checkpoint_duration_ms" }) }
local MEASURES = {
  ["spark.spill"] = { name = "spill", fmt = units.format_bytes,
    get = node_metric({ "memory_spill_bytes", "disk_spill_bytes" }) },
  ["spark.skew"] = { name = "task skew (slowest / median)", fmt = units.format_ratio,
    get = function(r, f, node_name) return task_skew(node_of(r, f, node_name)) end },
  ["spark.gc"] = { name = "GC time", fmt = units.format_duration,
    get = node_metric({ "gc_ms" }) },
  ["flink.bottleneck"] = { name = "busy", fmt = units.format_pct, absolute = true,
    get = node_metric({ "busy_ratio_max", "busy_ratio" }) },
  ["flink.source-bound"] = { name = "busy", fmt = units.format_pct, absolute = true,
    get = node_metric({ "busy_ratio_max", "busy_ratio" }) },
  ["flink.checkpoint-trend"] = CHECKPOINT_TIME,
  ["flink.checkpoint-phases"] = CHECKPOINT_TIME,
  ["dbt.cost"] = { name = "bytes billed", fmt = units.format_bytes,
    get = node_metric({ "bytes_billed", "bytes_processed" }) },
}

-- The measured metric of finding f in the form metric_of gives, or nil.
local function measure_of(f, node_name)
  local m = MEASURES[f.rule]
  if not m then
    return nil
  end
  return { name = m.name, fmt = m.fmt, absolute = m.absolute,
           get = function(r) return m.get(r, f, node_name) end }
end

local function describe_changes(changes)
  local parts = {}
  for i, c in ipairs(changes) do
    parts[i] = ("%s %s -> %s"):format(c.key, c.from ~= nil and tostring(c.from) or "unset",
      tostring(c.to))
  end
  return table.concat(parts, ", ")
end

local function reverts(f)
  local out = {}
  for i, c in ipairs(f.changes) do
    out[i] = { target = c.target, key = c.key, from = c.to, to = c.from }
    if c.from == nil then
      return nil
    end
  end
  return out
end

-- Whether every change lowers a parallelism (a scale-down: the goal is the
-- same health with fewer subtasks).
local function scale_down(f)
  for _, c in ipairs(f.changes) do
    local a, b = tonumber(c.from), tonumber(c.to)
    if c.key ~= "parallelism" or not a or not b or b >= a then
      return false
    end
  end
  return true
end

-- Outcome from the before values (runs without the change) and after. A
-- ratio metric (backpressure, 0..1) changes by points, others relatively.
local function outcome(before, after, o, metric)
  local med, mad = stats.median(before), stats.mad(before)
  if not med or (med <= 0 and not metric.absolute) then
    return nil -- nothing before to improve on (a spill of 0 B stays 0 B)
  end
  local change = metric.absolute and after - med or (after - med) / med
  local beyond_noise = math.abs(after - med) > o.mad_threshold * MAD_TO_SIGMA * mad
  if change <= -o.min_effect and beyond_noise then
    return "effective", med, change
  end
  if change >= o.min_effect and beyond_noise then
    return "worse", med, change
  end
  return "no effect", med, change
end

-- The runs before the change: from the finding's run back, those without
-- it applied, at most n.
local function before_values(hist, from, f, node_name, metric, n)
  local older = {}
  for i = from, #hist do
    older[#older + 1] = hist[i]
  end
  local vals = history.values(history.filter(older, function(h)
    return (h.status == "succeeded" or h.status == "running") and not applied(h, f, node_name)
  end), metric.get)
  while #vals > n do
    vals[#vals] = nil
  end
  return vals
end

local function round3(x)
  return math.floor(x * 1000 + 0.5) / 1000
end

local function change_text(v)
  return ("%s%s%s"):format(v.change < 0 and "-" or "+", units.format_pct(math.abs(v.change)),
    v.metric.absolute and " points" or "")
end

-- One metric's verdict, for the message after the first: "its spill: ...".
local function verdict_text(v)
  return ("%s: %s, %s against a median of %s (%s)"):format(v.metric.name,
    v.res == "no effect" and "no measurable effect" or v.res, v.metric.fmt(v.after),
    v.metric.fmt(v.med), change_text(v))
end

local function revert_text(f)
  return reverts(f) and ("Revert it: %s."):format(describe_changes(reverts(f)))
    or ("Revert it: restore what %s was before."):format(f.changes[1].key)
end

-- The overall outcome of the verdicts: worse when one is worse, effective
-- when one is and none is worse, else no effect.
local function overall(verdicts)
  local res = "no effect"
  for _, v in ipairs(verdicts) do
    if v.res == "worse" then
      return "worse"
    end
    if v.res == "effective" then
      res = "effective"
    end
  end
  return res
end

-- verdicts: { { metric, res, med, after, change, nbefore }, ... }, the
-- finding's own metric first (when it has one), then time. n_after: the
-- applied runs the after values are the median of (1: this run).
local function report(ctx, run, h, f, verdicts, n_after, ineffective)
  local v1 = verdicts[1]
  local res = overall(verdicts)
  local saved = f.impact and f.impact.time_saved_ms
  local predicted = saved and v1.metric.fmt == units.format_duration
    and ("; the finding predicted -%s"):format(units.format_duration(saved)) or ""
  local head = ("The approved change %s (%s finding %s of run %s) is applied in %s: "
    .. "%s %s against a median of %s over the %s before it (%s%s)"):format(
    describe_changes(f.changes), f.rule, f.fingerprint and f.fingerprint:sub(1, 8) or "?",
    h.id, n_after == 1 and "this run" or ("the last %d runs"):format(n_after),
    v1.metric.name, v1.metric.fmt(v1.after), v1.metric.fmt(v1.med),
    units.format_count(v1.nbefore, "run"), change_text(v1), predicted)
  local others = {}
  for i = 2, #verdicts do
    others[#others + 1] = verdict_text(verdicts[i])
  end
  local tail = #others > 0 and (" Its " .. table.concat(others, "; its ") .. ".") or ""
  local node = f.node and run.by_id and run.by_id[f.node] and f.node or nil
  local vs = {}
  for i, v in ipairs(verdicts) do
    vs[i] = { metric = v.metric.name, outcome = v.res, before = v.med, after = v.after,
              change_ratio = round3(v.change) }
  end
  if ineffective then
    res = "ineffective"
  end
  local ev = { outcome = res, metric = v1.metric.name, before = v1.med, after = v1.after,
               change_ratio = round3(v1.change), before_runs = v1.nbefore,
               after_runs = n_after, verdicts = vs,
               approved_on = h.id, fingerprint = f.fingerprint, predicted_saved_ms = saved }
  if ineffective then
    ctx.report {
      node = node, severity = "warning", evidence = ev, changes = reverts(f),
      message = head .. ": still no measurable gain after " .. units.format_count(n_after, "run")
        .. " with it, so it is ineffective." .. tail,
      recommendation = revert_text(f) .. " It did not bring what the finding expected; "
        .. "look again at what the finding measured.",
    }
  elseif res == "worse" then
    ctx.report {
      node = node, severity = "warning", evidence = ev, changes = reverts(f),
      message = head .. (v1.res == "worse" and ": worse." or ".") .. tail,
      recommendation = revert_text(f),
    }
  elseif res == "effective" then
    ctx.report { node = node, severity = "info", evidence = ev,
      message = head .. (v1.res ~= "effective" and "." or
        scale_down(f) and ": effective, on fewer subtasks." or ": effective.") .. tail,
      recommendation = "Keep it; nothing to do." }
  else
    ctx.report { node = node, severity = "info", evidence = ev,
      message = head .. ": no measurable effect." .. tail,
      recommendation = ("Keep it only if it helps something else; otherwise revert it. "
        .. "After %s with it and still no gain it is reported as ineffective."):format(
          units.format_count(ctx.options.ineffective_after, "run")) }
  end
end

-- The change is no longer applied in run: a key back at its old value is
-- reverted (said once, on the first run without it).
local function report_reverted(ctx, run, h, f, since)
  local back = true
  for _, c in ipairs(f.changes) do
    local now = c.key == "parallelism" and nil or (run.config or {})[c.key]
    if not ((c.from == nil and now == nil) or same(now, c.from)) then
      back = false
    end
  end
  ctx.report {
    severity = "info",
    message = ("The approved change %s (%s finding %s of run %s, applied since run %s) is %s "
      .. "in this run."):format(describe_changes(f.changes), f.rule,
        f.fingerprint and f.fingerprint:sub(1, 8) or "?", h.id, since,
        back and "reverted: back to its old value" or "no longer applied"),
    recommendation = back and "If the revert was meant, dismiss the finding that proposed it "
      .. "so it is not proposed again; otherwise apply it again."
      or "Check which value the job should have; the approved one is " .. describe_changes(f.changes) .. ".",
    evidence = { outcome = back and "reverted" or "changed", approved_on = h.id,
                 applied_since = since, fingerprint = f.fingerprint },
  }
end

-- The approved findings with changes of the earlier runs, newest first,
-- one per fingerprint, with the index of the run they were found on.
local function approved(hist)
  local out, seen = {}, {}
  for i, h in ipairs(hist) do
    for _, f in ipairs(h.findings or {}) do
      local d = f.decision
      local key = f.fingerprint or (f.rule .. "/" .. tostring(f.node))
      if d and d.status == "approved" and f.changes and #f.changes > 0 and not seen[key] then
        seen[key] = true
        out[#out + 1] = { i = i, h = h, f = f }
      end
    end
  end
  return out
end

-- One metric's verdict: the before runs (without the change, from the
-- approval back) against the median of the applied runs' values.
local function verdict(hist, a, f, name, metric, applied_runs, o)
  local afters = {}
  for _, r in ipairs(applied_runs) do
    local v = metric.get(r)
    if v then
      afters[#afters + 1] = v
    end
  end
  if #afters == 0 then
    return nil
  end
  local after = stats.median(afters)
  local before = before_values(hist, a.i, f, name, metric, o.before_runs)
  local res, med, change = outcome(before, after, o, metric)
  if not res then
    return nil
  end
  return { metric = metric, res = res, med = med, after = after, change = change,
           nbefore = #before }
end

-- The verdicts of finding f: its own metric (MEASURES) first, then time
-- (or, for Flink, backpressure).
local function verdicts_of(run, hist, a, f, name, applied_runs, o)
  local vs = {}
  for _, metric in ipairs({ measure_of(f, name) or false, metric_of(run.source, f, name) }) do
    local v = metric and verdict(hist, a, f, name, metric, applied_runs, o)
    if v then
      vs[#vs + 1] = v
    end
  end
  return vs
end

local function node_name(h, id)
  for _, n in ipairs(h.nodes or {}) do
    if n.id == id then
      return n.name
    end
  end
  return nil
end

return {
  id = "mixed.change-outcome",
  title = "Outcome of an approved change",
  severity = "info",
  sources = { "spark", "flink", "dbt" },
  tags = { "history", "closed-loop" },
  description = "Checks an approved change on the first later run of the job that has it "
    .. "applied, on the metric its finding measured and on time: effective, no effect or "
    .. "worse; ineffective when the gain has not come after a few runs; reverted when the "
    .. "key went back.",
  options = {
    max_history = 30,  -- earlier runs read (newest first)
    before_runs = 5,   -- runs without the change the baseline is the median of
    min_effect = 0.1,  -- relative change of the metric that counts as an effect
    mad_threshold = 3, -- and it must exceed this many robust sigmas of the before runs
    ineffective_after = 3, -- applied runs without a gain before it is ineffective
  },
  check = function(run, ctx)
    local o = ctx.options
    if run.status ~= "succeeded" and run.status ~= "running" then
      return
    end
    local hist = history.earlier(run, ctx, o.max_history)
    for _, a in ipairs(approved(hist)) do
      local f, name = a.f, node_name(a.h, a.f.node)
      if not applied(a.h, f, name) then
        -- the runs since the approval that have it, oldest first
        local applied_runs, since = {}, nil
        for j = a.i - 1, 1, -1 do
          if applied(hist[j], f, name) then
            applied_runs[#applied_runs + 1] = hist[j]
            since = since or hist[j].id
          end
        end
        if applied(run, f, name) then
          applied_runs[#applied_runs + 1] = run
          local k = #applied_runs
          if k == 1 or k == o.ineffective_after then
            local vs = verdicts_of(run, hist, a, f, name, applied_runs, o)
            if #vs > 0 and k == o.ineffective_after and overall(vs) == "no effect"
                and not scale_down(f) then
              report(ctx, run, a.h, f, vs, k, true)
            elseif #vs > 0 and k == 1 then
              if vs[1].res == "no effect" and scale_down(f) then
                vs[1].res = "effective" -- as healthy as before, on fewer subtasks
              end
              report(ctx, run, a.h, f, vs, 1, false)
            end
          end
        elseif since and applied(hist[1], f, name) then
          report_reverted(ctx, run, a.h, f, since)
        end
      end
    end
  end,
}
