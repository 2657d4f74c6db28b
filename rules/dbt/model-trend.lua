-- dbt.model-trend: models growing slower run after run, and why: when
-- rows and time grow together the data grows (volume); when time grows on
-- flat rows the query got slower (regression). The growth is a robust
-- line (Theil-Sen) through the window, so one slow night (dbt.regression's
-- business) does not make a trend.
-- docs/rules/dbt.model-trend.md
local du = require "dbtutil"
local stats = require "optipipe.stats"

-- Theil-Sen: the median of the slopes between every pair of runs, so one
-- slow (or fast) night barely moves it. Returns the fitted values at the
-- first and the last run.
local function fit(vals)
  local slopes = {}
  for i = 1, #vals - 1 do
    for j = i + 1, #vals do
      slopes[#slopes + 1] = (vals[j] - vals[i]) / (j - i)
    end
  end
  local m = stats.median(slopes)
  local icpt = {}
  for i, v in ipairs(vals) do
    icpt[i] = v - m * (i - 1)
  end
  local first = stats.median(icpt)
  return first, first + m * (#vals - 1)
end

return {
  id = "dbt.model-trend",
  title = "Models growing slower run after run (volume or regression)",
  severity = "info",
  sources = { "dbt" },
  tags = { "performance", "history", "trend" },
  description = "Needs the history of the job.",
  options = {
    window = 30,         -- runs looked at (the newest)
    min_runs = 6,        -- runs with the model's time
    min_growth = 0.3,    -- fitted time at the newest run over the oldest, minus 1
    min_s = 60,          -- the model's current time
    volume_share = 0.5,  -- rows grew at least this share of the time growth → volume
    max_reports = 5,
  },
  check = function(run, ctx)
    local o = ctx.options
    if not du.executing(run) then
      return
    end
    local ids, runs = du.picked_window(run, ctx, o, function(n)
      local ms = du.exec_ms(n)
      return n.kind == "model" and n.status == "succeeded" and ms and ms >= o.min_s * 1000
    end)
    if not ids then
      return
    end
    local times, rows = {}, {}
    du.each_node(runs, ids, function(_, _, n)
      local ms = du.exec_ms(n)
      if n.status == "succeeded" and ms then
        local t = times[n.id] or {}
        times[n.id] = t
        t[#t + 1] = ms
        local r = rows[n.id] or {}
        rows[n.id] = r
        r[#r + 1] = n.metrics.rows_affected or false
      end
    end)
    local found = {}
    for _, id in ipairs(ids) do
      local t = times[id]
      if t and #t >= o.min_runs then
        local e, l = fit(t)
        local g = e > 0 and l / e - 1 or 0
        if g >= o.min_growth then
          local rv = {}
          for _, v in ipairs(rows[id]) do
            if v then
              rv[#rv + 1] = v
            end
          end
          local re, rl, rg
          if #rv == #t then
            re, rl = fit(rv)
            rg = re > 0 and rl / re - 1 or nil
          end
          found[#found + 1] = { n = run.by_id[id], runs = #t, early = e, late = l, g = g,
                                re = re, rl = rl, rg = rg,
                                volume = rg ~= nil and rg >= o.volume_share * g }
        end
      end
    end
    du.largest_first(found, function(f) return f.g end, function(f) return f.n.id end)
    for i = 1, math.min(#found, o.max_reports) do
      local f = found[i]
      local kind = f.volume and "volume" or (f.rg and "regression" or "unknown")
      local why, rec
      if kind == "volume" then
        why = ("with its rows (%s → %s, +%s): the data grows and the time follows"):format(
          du.plural(math.floor(f.re), "row"), du.plural(math.floor(f.rl), "row"), du.pct(f.rg, 0))
        rec = ("%s will keep growing with its data: make it incremental (or, if it is, check "
          .. "that its is_incremental() filter prunes partitions) so a run reads only new rows.")
          :format(du.target(f.n))
      elseif kind == "regression" then
        why = ("while its rows stayed flat (%s → %s): the query got slower, not the data")
          :format(du.plural(math.floor(f.re), "row"), du.plural(math.floor(f.rl), "row"))
        rec = ("Compare %s's compiled SQL and query plan between the oldest and newest runs "
          .. "of the window (a new join or filter, lost partition pruning, a growing "
          .. "incremental lookback), and the warehouse's load at that hour."):format(du.target(f.n))
      else
        why = "(its adapter reports no row counts, so volume and regression cannot be told apart)"
        rec = ("Check whether %s's input grew (row counts in the warehouse) or its query got "
          .. "slower (compiled SQL, plan)."):format(du.target(f.n))
      end
      ctx.report {
        node = f.n.id,
        message = ("%s's time grew %s over the last %d runs (trend %s → %s) %s."):format(
          du.name(f.n), du.pct(f.g, 0), f.runs, du.dur(f.early), du.dur(f.late), why),
        recommendation = rec,
        evidence = { trend = kind, runs = f.runs, time_growth = math.floor(f.g * 1000 + 0.5) / 1000,
                     rows_growth = f.rg and math.floor(f.rg * 1000 + 0.5) / 1000 or nil,
                     early_s = du.secs(f.early), late_s = du.secs(f.late) },
      }
    end
  end,
}
