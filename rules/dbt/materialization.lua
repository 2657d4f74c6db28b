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
local function staging(run, n)
  local src = 0
  for _, pid in ipairs(n.parents) do
    local p = run.by_id[pid]
    if p and p.kind == "model" then
      return false
    end
    src = src + 1
  end
  return src <= 1
end

local function view_chains(run, ctx, static)
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
    -- without timings, never a staging view (a rename of one source)
    local pool = {}
    for _, v in ipairs(chain) do
      if not (static and staging(run, v)) then
        pool[#pool + 1] = v
      end
    end
    if #pool == 0 then
      pool = chain
    end
    local pick = pool[(#pool + 1) // 2]
    for _, v in ipairs(pool) do
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

-- Static (a manifest alone, or a run that executed nothing): a view or
-- ephemeral model is not stored, so its query runs inside every query that
-- reads it, and through a view or ephemeral reader inside every query
-- that reads that one. A warehouse therefore runs it once per *path* from
-- it to a materialized reader (table, incremental, seed, snapshot, test,
-- exposure), not once per distinct reader: a view read by 2 views that a
-- table joins runs twice in the table's query.
local INLINED = { view = true, ephemeral = true }
local READS = { exposure = true }
local MAX_PATHS = 1 << 50 -- diamonds double the count per layer: no wrap-around

local function reader(c)
  return du.builds(c) or du.is_test(c) or READS[c.kind] == true
end

-- paths[id] = { models = n, tests = n, via = n (inlined nodes passed) };
-- readers: distinct terminal nodes. Cycles (hand-edited manifests) count
-- nothing on the back edge.
local function exec_paths(run, n, memo, busy)
  local m = memo[n.id]
  if m then
    return m
  end
  if busy[n.id] then
    return { models = 0, tests = 0, readers = {}, via = {} }
  end
  busy[n.id] = true
  local out = { models = 0, tests = 0, readers = {}, via = {} }
  for _, cid in ipairs(n.children) do
    local c = run.by_id[cid]
    if c then
      if INLINED[mat(c) or ""] then
        local sub = exec_paths(run, c, memo, busy)
        out.models = math.min(out.models + sub.models, MAX_PATHS)
        out.tests = math.min(out.tests + sub.tests, MAX_PATHS)
        out.via[cid] = true
        for id in pairs(sub.readers) do
          out.readers[id] = true
        end
        for id in pairs(sub.via) do
          out.via[id] = true
        end
      elseif reader(c) then
        if du.is_test(c) then
          out.tests = out.tests + 1
        else
          out.models = out.models + 1
        end
        out.readers[cid] = true
      end
    end
  end
  busy[n.id] = nil
  memo[n.id] = out
  return out
end

local function count(set)
  local k = 0
  for _ in pairs(set) do
    k = k + 1
  end
  return k
end

local function read_views(run, ctx)
  local o = ctx.options
  local found, memo = {}, {}
  for _, n in ipairs(run.nodes) do
    local m = mat(n)
    -- a view of one source or seed is a rename (staging), cheap to rerun;
    -- a view only tests read is the dbt layout too (no timings say otherwise)
    if INLINED[m or ""] and reads_models(run, n) then
      local p = exec_paths(run, n, memo, {})
      local execs = p.models + p.tests
      if execs >= o.min_view_readers and p.models > 0 then
        local models, tests, names = 0, 0, {}
        for id in pairs(p.readers) do
          local c = run.by_id[id]
          if du.is_test(c) then
            tests = tests + 1
          else
            models = models + 1
            names[#names + 1] = du.name(c)
          end
        end
        found[#found + 1] = { n = n, execs = execs, readers = models + tests, models = models,
                              tests = tests, names = names, via = count(p.via) }
      end
    end
  end
  table.sort(found, function(a, b)
    if a.execs ~= b.execs then
      return a.execs > b.execs
    end
    return a.n.id < b.n.id
  end)
  for i = 1, math.min(#found, o.max_reports) do
    local f = found[i]
    local m = mat(f.n)
    table.sort(f.names)
    local paths = f.execs > f.readers
        and (", once for each of its %d paths through %s to them"):format(f.execs,
          du.plural(f.via, "view or ephemeral model", "views or ephemeral models"))
      or ""
    ctx.report {
      node = f.n.id,
      message = ("%s %s is %s %s%s%s: its query runs %s per build%s."):format(
        m == "view" and "View" or "Ephemeral model", du.name(f.n),
        m == "view" and "queried by" or "inlined into", du.plural(f.readers, "node"),
        f.tests > 0 and (" (%s, %s)"):format(du.plural(f.models, "model"),
          du.plural(f.tests, "test")) or "",
        f.models > 0 and (": " .. du.list(f.names, 4)) or "",
        du.plural(f.execs, "time"), paths),
      recommendation = ("Materialize %s as a table so its query runs once per build and "
        .. "the %s read the result."):format(du.target(f.n), du.plural(f.readers, "reader")),
      evidence = { executions = f.execs, readers = f.readers, reader_models = f.models,
                   reader_tests = f.tests, via_inlined = f.via, materialized = m },
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
    min_view_readers = 5,     -- no timings: a view/ephemeral whose query runs this many times
  },
  check = function(run, ctx)
    if du.static(run) then
      -- a manifest alone, or compile / docs generate / ls with its manifest:
      -- the DAG's shape, no timings (docs/model-dbt.md)
      view_chains(run, ctx, true)
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
