-- dbt.needless-rebuilds: a table model rebuilt in full in each of the
-- last runs while neither its SQL nor anything upstream changed (the same
-- state digest: dbt's state comparison) and its input data did not change
-- either: by freshness when the runs have it (none of its upstream
-- sources got new data: the same sources_digest, from the sources.json
-- taken before each build), else by row counts (the same rows each
-- time). The warehouse redid the same work. Reads the history (run.history
-- or the run store). docs/rules/dbt.needless-rebuilds.md
local du = require "dbtutil"
local stats = require "optipipe.stats"

-- Whether rebuild e read the same data as the newest one: by freshness
-- when both know their sources' loads (a source with new data is a
-- reason to rebuild, whatever the row count), else by row count.
local function same_data(e, last)
  if e.data and last.data then
    return e.data == last.data
  end
  return e.rows ~= nil and e.rows == last.rows
end

-- Epoch milliseconds as dbt writes a timestamp (UTC).
local function iso(ms)
  return ms and os.date("!%Y-%m-%dT%H:%M:%SZ", ms // 1000) or "unknown"
end

local function unchanged(f)
  if f.by_fresh then
    return ("its data (none of its %s got new rows since %s, by `dbt source "
      .. "freshness`)"):format(du.plural(f.nsrc, "upstream source"), iso(f.loaded))
  end
  return ("its row count (%s)"):format(du.plural(f.rows, "row"))
end

return {
  id = "dbt.needless-rebuilds",
  title = "Tables rebuilt every run with nothing changed",
  severity = "info",
  sources = { "dbt" },
  tags = { "performance", "cost", "history" },
  description = "Needs the history of the job with the manifest of each run.",
  options = {
    window = 30,      -- runs looked at (the newest)
    min_runs = 5,     -- consecutive unchanged rebuilds, this run included
    min_total_s = 60, -- their time together
    max_reports = 5,
  },
  check = function(run, ctx)
    local o = ctx.options
    if not du.executing(run) then
      return
    end
    local ids, runs = du.picked_window(run, ctx, o, function(n)
      return du.mat(n) == "table" and n.status == "succeeded" and n.metrics.state_digest
        and (n.metrics.rows_affected or n.metrics.sources_digest)
    end)
    if not ids then
      return
    end
    -- per table, per run index: what it was
    local at = {}
    du.each_node(runs, ids, function(i, h, n)
      local t = at[n.id] or {}
      at[n.id] = t
      t[i] = { ok = n.status == "succeeded", digest = n.metrics.state_digest,
               rows = n.metrics.rows_affected, data = n.metrics.sources_digest,
               loaded = n.metrics.sources_max_loaded_at_ms, nsrc = n.metrics.sources_n,
               ms = du.exec_ms(n), run = h.id }
    end)
    local found = {}
    for _, id in ipairs(ids) do
      local t, last = at[id], at[id][#runs]
      local k, total, times, rids, by_fresh = 0, 0, {}, {}, true
      -- the streak of unchanged rebuilds ending with this run
      for i = #runs, 1, -1 do
        local e = t[i]
        if not (e and e.ok and e.digest == last.digest and e.ms and same_data(e, last)) then
          break
        end
        by_fresh = by_fresh and e.data ~= nil and last.data ~= nil
        k = k + 1
        total = total + e.ms
        table.insert(times, 1, e.ms)
        table.insert(rids, 1, e.run)
      end
      if k >= o.min_runs and total >= o.min_total_s * 1000 then
        found[#found + 1] = { n = run.by_id[id], k = k, total = total, times = times,
                              runs = rids, rows = last.rows, by_fresh = by_fresh,
                              loaded = last.loaded, nsrc = last.nsrc }
      end
    end
    du.largest_first(found, function(f) return f.total end, function(f) return f.n.id end)
    for i = 1, math.min(#found, o.max_reports) do
      local f = found[i]
      local saved = f.total - f.times[#f.times] -- one build would have done
      ctx.report {
        node = f.n.id,
        message = ("%s was rebuilt in full in each of the last %d runs with its SQL, "
          .. "everything upstream (state digest) and %s unchanged: %s "
          .. "together (%s a run)."):format(du.name(f.n), f.k, unchanged(f),
          du.dur(f.total), du.dur(stats.median(f.times))),
        recommendation = ("Rebuild %s only when it or its inputs changed: run `dbt build "
          .. "--select state:modified+ source_status:fresher+ --state <last run's target/>` "
          .. "(after `dbt source freshness`), or take it out of the frequent job (a tag and "
          .. "--exclude) and build it on a slower schedule; if its sources do get new rows, "
          .. "make it incremental."):format(du.target(f.n)),
        evidence = { runs = f.k, total_s = du.secs(f.total),
                     median_s = du.secs(stats.median(f.times)), rows = f.rows,
                     judged_by = f.by_fresh and "freshness" or "rows",
                     sources = f.by_fresh and f.nsrc or nil,
                     sources_loaded_at = f.by_fresh and iso(f.loaded) or nil,
                     times = du.dur_list(f.times), run_ids = table.concat(f.runs, ", ") },
        impact = { time_saved_ms = math.floor(saved) },
      }
    end
  end,
}
