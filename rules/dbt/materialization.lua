-- dbt.materialization: materializations that cost time. A slow, large
-- `table` rebuilt in full every run → incremental; a chain of views (each
-- query on the last one re-runs them all) or a view feeding many slow
-- models → table. Needs the manifest for materialized / file / parents;
-- a manifest alone gets the static checks (chains, views and ephemeral
-- models that many nodes run again).
-- docs/rules/dbt.materialization.md
local du = require "dbtutil"
local stats = require "optipipe.stats"
local units = require "optipipe.units"

local function mat(n)
  return n and n.kind == "model" and n.attrs.materialized or nil
end

-- Slow in this run and (when there is history) in the median of earlier
-- runs too, so one bad night is left to dbt.regression.
local function slow_tables(run, ctx, hist)
  local o = ctx.options
  local slow = o.slow_table_s * 1000
  for _, n in ipairs(run.nodes) do
    local ms = du.exec_ms(n)
    if mat(n) == "table" and n.status == "succeeded" and ms and ms >= slow then
      local rows, bytes = n.metrics.rows_affected, n.metrics.bytes_processed
      local large = (rows and rows >= o.min_rows) or (bytes and bytes >= units.parse_bytes(o.min_bytes))
      local unknown = rows == nil and bytes == nil
      local vals = du.node_history(hist, n.id)
      local always = #vals == 0 or stats.median(vals) >= slow
      if (large or unknown) and always then
        local size = rows and (units.format_num(rows) .. " rows") or
          (bytes and (units.format_bytes(bytes) .. " processed") or "size unknown")
        local every = #vals > 0
            and (" (median %s over %s)"):format(du.dur(stats.median(vals)),
              du.plural(#vals, "earlier run"))
          or ""
        ctx.report {
          node = n.id,
          message = ("%s is a table rebuilt in full every run: %s%s, %s."):format(
            du.name(n), du.dur(ms), every, size),
          recommendation = ("Make %s incremental (materialized='incremental' with a "
            .. "unique_key and an is_incremental() filter on a loaded-at or event-time "
            .. "column) so each run processes only new rows; run --full-refresh when the "
            .. "logic changes."):format(du.target(n)),
          evidence = { duration_s = du.secs(ms), rows = rows, bytes_processed = bytes,
                       history_runs = #vals },
          changes = { { target = du.target(n), key = "materialized", from = "table",
                        to = "incremental" } },
        }
      end
    end
  end
end

-- Longest chain of views ending at each view (through view parents).
local function view_chains(run, ctx)
  local o = ctx.options
  local depth, prev = {}, {}
  local function chain_len(n, seen)
    if depth[n.id] then
      return depth[n.id]
    end
    seen[n.id] = true
    local best, from = 0, nil
    for _, pid in ipairs(n.parents) do
      local p = run.by_id[pid]
      if mat(p) == "view" and not seen[pid] then
        local d = chain_len(p, seen)
        if d > best then
          best, from = d, p
        end
      end
    end
    seen[n.id] = nil
    depth[n.id], prev[n.id] = best + 1, from
    return best + 1
  end
  -- report maximal chains only: ends that no view child extends
  local ends = {}
  for _, n in ipairs(run.nodes) do
    if mat(n) == "view" and chain_len(n, {}) >= o.max_view_chain then
      local extended = false
      for _, cid in ipairs(n.children) do
        if mat(run.by_id[cid]) == "view" then
          extended = true
        end
      end
      if not extended then
        ends[#ends + 1] = n
      end
    end
  end
  table.sort(ends, function(a, b)
    if depth[a.id] ~= depth[b.id] then
      return depth[a.id] > depth[b.id]
    end
    return a.id < b.id
  end)
  for i = 1, math.min(#ends, o.max_reports) do
    local chain, n = {}, ends[i]
    while n do
      table.insert(chain, 1, n)
      n = prev[n.id]
    end
    -- materialize the view with most children, else the middle one
    local pick = chain[(#chain + 1) // 2]
    for _, v in ipairs(chain) do
      if #v.children > #pick.children then
        pick = v
      end
    end
    local names = {}
    for _, v in ipairs(chain) do
      names[#names + 1] = du.name(v)
    end
    ctx.report {
      node = ends[i].id,
      message = ("%s chained: %s. Every query on %s re-runs all of them."):format(
        du.plural(#chain, "view is", "views are"), table.concat(names, " > "), du.name(ends[i])),
      recommendation = ("Materialize %s as a table (or incremental) to cut the chain; "
        .. "keep the views on either side."):format(du.target(pick)),
      evidence = { chain_length = #chain, chain = table.concat(names, " > ") },
      changes = { { target = du.target(pick), key = "materialized", from = "view", to = "table" } },
    }
  end
end

-- A view with logic (it reads other models, not only sources and seeds:
-- staging views are usually a rename) read by many models that are slow
-- together: each of them recomputes the view's query.
local function reads_models(run, n)
  for _, pid in ipairs(n.parents) do
    local p = run.by_id[pid]
    if p and p.kind == "model" then
      return true
    end
  end
  return false
end

local function busy_views(run, ctx)
  local o = ctx.options
  for _, n in ipairs(run.nodes) do
    if mat(n) == "view" and n.status == "succeeded" and reads_models(run, n) then
      local kids, total, names = 0, 0, {}
      for _, cid in ipairs(n.children) do
        local c = run.by_id[cid]
        if c and du.builds(c) then
          kids = kids + 1
          total = total + (du.ms(c) or 0)
          names[#names + 1] = du.name(c)
        end
      end
      local own = du.ms(n) or 0
      if kids >= o.min_view_children and
        (total >= o.children_total_s * 1000 or own >= o.slow_view_s * 1000) then
        ctx.report {
          node = n.id,
          message = ("View %s feeds %s (%s) that took %s together; each of them "
            .. "runs the view's query again."):format(du.name(n), du.plural(kids, "model"),
            du.list(names, 4),
            du.dur(total)),
          recommendation = ("Materialize %s as a table so its query runs once per build."):format(
            du.target(n)),
          evidence = { children = kids, children_s = du.secs(total), view_s = du.secs(own) },
          changes = { { target = du.target(n), key = "materialized", from = "view", to = "table" } },
        }
      end
    end
  end
end

-- Static (a manifest alone): a view or ephemeral model runs its query for
-- every node that reads it; through a view or ephemeral child, for every
-- node that reads that one. Returns the nodes that execute n's query.
local INLINED = { view = true, ephemeral = true }

local function executions(run, n, seen, out)
  for _, cid in ipairs(n.children) do
    local c = run.by_id[cid]
    if c and not seen[cid] then
      seen[cid] = true
      if INLINED[mat(c) or ""] then
        executions(run, c, seen, out)
      elseif du.builds(c) or du.is_test(c) then
        out[#out + 1] = c
      end
    end
  end
  return out
end

local function read_views(run, ctx)
  local o = ctx.options
  local found = {}
  for _, n in ipairs(run.nodes) do
    local m = mat(n)
    -- as busy_views: a view of one source or seed is a rename, cheap to rerun
    if INLINED[m or ""] and reads_models(run, n) then
      local ex = executions(run, n, { [n.id] = true }, {})
      if #ex >= o.min_view_readers then
        local models, tests, names = 0, 0, {}
        for _, c in ipairs(ex) do
          if du.is_test(c) then
            tests = tests + 1
          else
            models = models + 1
            names[#names + 1] = du.name(c)
          end
        end
        found[#found + 1] = { n = n, ex = ex, models = models, tests = tests, names = names }
      end
    end
  end
  table.sort(found, function(a, b)
    if #a.ex ~= #b.ex then
      return #a.ex > #b.ex
    end
    return a.n.id < b.n.id
  end)
  for i = 1, math.min(#found, o.max_reports) do
    local f = found[i]
    local m = mat(f.n)
    table.sort(f.names)
    ctx.report {
      node = f.n.id,
      message = ("%s %s is %s %s%s%s: each of them runs its query again."):format(
        m == "view" and "View" or "Ephemeral model", du.name(f.n),
        m == "view" and "queried by" or "inlined into", du.plural(#f.ex, "node"),
        f.tests > 0 and (" (%s, %s)"):format(du.plural(f.models, "model"),
          du.plural(f.tests, "test")) or "",
        f.models > 0 and (": " .. du.list(f.names, 4)) or ""),
      recommendation = ("Materialize %s as a table so its query runs once per build and "
        .. "the %s read the result."):format(du.target(f.n), du.plural(#f.ex, "reader")),
      evidence = { readers = #f.ex, reader_models = f.models, reader_tests = f.tests,
                   materialized = m },
      changes = { { target = du.target(f.n), key = "materialized", from = m, to = "table" } },
    }
  end
end

return {
  id = "dbt.materialization",
  title = "Materialization that costs time (table → incremental, view → table)",
  severity = "warning",
  sources = { "dbt" },
  tags = { "performance", "materialization" },
  description = "Needs manifest.json for materializations and the DAG.",
  options = {
    slow_table_s = 600,       -- a table this slow (now and in the history median) ...
    min_rows = 1000000,       -- ... and this large (rows_affected) ...
    min_bytes = "10 GiB",     -- ... or this many bytes processed → incremental
    max_view_chain = 4,       -- views chained this deep → table
    max_reports = 3,          -- chains reported per run
    min_view_children = 3,    -- a view with this many model children ...
    children_total_s = 600,   -- ... slow together ...
    slow_view_s = 60,         -- ... or slow itself → table
    min_view_readers = 5,     -- manifest alone: a view/ephemeral run by this many nodes
  },
  check = function(run, ctx)
    if run.metrics.manifest_only == 1 then
      -- a manifest alone: the DAG's shape, no timings (docs/model-dbt.md)
      view_chains(run, ctx)
      read_views(run, ctx)
      return
    end
    if not du.executing(run) then
      return
    end
    slow_tables(run, ctx, du.history(run))
    view_chains(run, ctx)
    busy_views(run, ctx)
  end,
}
