-- mixed.change-outcome: the closed loop. A change a team approved (a
-- finding of an earlier run of the same job, in the run store, with
-- decision "approved" and changes) is checked on the first later run that
-- has it applied: effective, no effect, or worse (then: revert), with the
-- numbers before and after. docs/rules/mixed.change-outcome.md
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
    return nil
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

local function report(ctx, run, h, f, res, metric, before, after, med, change)
  local pct = units.format_pct(math.abs(change)) .. (metric.absolute and " points" or "")
  local saved = f.impact and f.impact.time_saved_ms
  local predicted = saved and metric.fmt == units.format_duration
    and ("; the finding predicted -%s"):format(units.format_duration(saved)) or ""
  local head = ("The approved change %s (%s finding %s of run %s) is applied in this run: "
    .. "%s %s against a median of %s over the %s before it (%s%s%s)"):format(
    describe_changes(f.changes), f.rule, f.fingerprint and f.fingerprint:sub(1, 8) or "?",
    h.id, metric.name, metric.fmt(after), metric.fmt(med),
    units.format_count(#before, "run"), change < 0 and "-" or "+", pct, predicted)
  local node = f.node and run.by_id and run.by_id[f.node] and f.node or nil
  local ev = { outcome = res, metric = metric.name, before = med, after = after,
               change_ratio = math.floor(change * 1000 + 0.5) / 1000, before_runs = #before,
               approved_on = h.id, fingerprint = f.fingerprint, predicted_saved_ms = saved }
  if res == "worse" then
    ctx.report {
      node = node, severity = "warning", evidence = ev, changes = reverts(f),
      message = head .. ": worse.",
      recommendation = reverts(f) and ("Revert it: %s."):format(describe_changes(reverts(f)))
        or ("Revert it: restore what %s was before."):format(f.changes[1].key),
    }
  elseif res == "effective" then
    ctx.report { node = node, severity = "info", evidence = ev,
      message = head .. (scale_down(f) and ": effective, on fewer subtasks." or ": effective."),
      recommendation = "Keep it; nothing to do." }
  else
    ctx.report { node = node, severity = "info", evidence = ev,
      message = head .. ": no measurable effect.",
      recommendation = "Keep it only if it helps something else; otherwise revert it." }
  end
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
    .. "applied: effective, no effect, or worse.",
  options = {
    max_history = 30,  -- earlier runs read (newest first)
    before_runs = 5,   -- runs without the change the baseline is the median of
    min_effect = 0.1,  -- relative change of the metric that counts as an effect
    mad_threshold = 3, -- and it must exceed this many robust sigmas of the before runs
  },
  check = function(run, ctx)
    local o = ctx.options
    if run.status ~= "succeeded" and run.status ~= "running" then
      return
    end
    local hist = history.earlier(run, ctx, o.max_history)
    for _, a in ipairs(approved(hist)) do
      local f, name = a.f, node_name(a.h, a.f.node)
      local first = applied(run, f, name) and not applied(a.h, f, name)
      for j = 1, a.i - 1 do
        first = first and not applied(hist[j], f, name)
      end
      local metric = metric_of(run.source, f, name)
      local after = first and metric.get(run)
      if after then
        local before = before_values(hist, a.i, f, name, metric, o.before_runs)
        local res, med, change = outcome(before, after, o, metric)
        if res == "no effect" and scale_down(f) then
          res = "effective" -- as healthy as before, on fewer subtasks
        end
        if res then
          report(ctx, run, a.h, f, res, metric, before, after, med, change)
        end
      end
    end
  end,
}
