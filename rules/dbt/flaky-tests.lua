-- dbt.flaky-tests: a test that fails and passes across runs while what it
-- tests did not change: the same state digest (its SQL, the tested model
-- and everything upstream; docs/model-dbt.md "state_digest"). One finding
-- with the flip rate and the failing runs, instead of a failure each
-- night. Reads the history (run.history or the run store).
-- docs/rules/dbt.flaky-tests.md
local du = require "dbtutil"

return {
  id = "dbt.flaky-tests",
  title = "Tests that flip between pass and fail on unchanged inputs",
  severity = "warning",
  sources = { "dbt" },
  tags = { "reliability", "tests", "history" },
  description = "Needs the history of the job with the manifest of each run.",
  options = {
    window = 30,     -- runs looked at (the newest)
    min_runs = 5,    -- runs with the current state digest
    min_flips = 2,   -- status changes among them
    max_reports = 10,
  },
  check = function(run, ctx)
    local o = ctx.options
    if not du.executing(run) then
      return
    end
    local cur = {}
    local ids, runs = du.picked_window(run, ctx, o, function(n)
      if du.is_test(n) and n.metrics.state_digest then
        cur[n.id] = n.metrics.state_digest
        return true
      end
      return false
    end)
    if not ids then
      return
    end
    -- per test: the statuses of the runs with its current digest
    local seq = {}
    du.each_node(runs, ids, function(_, h, n)
      if n.metrics.state_digest == cur[n.id] and
        (n.status == "succeeded" or n.status == "failed") then
        local s = seq[n.id] or {}
        seq[n.id] = s
        s[#s + 1] = { run = h.id, failed = n.status == "failed" }
      end
    end)
    local found = {}
    for _, id in ipairs(ids) do
      local s = seq[id] or {}
      local flips, fails, failed_runs = 0, 0, {}
      for i, e in ipairs(s) do
        if e.failed then
          fails = fails + 1
          failed_runs[#failed_runs + 1] = e.run
        end
        if i > 1 and e.failed ~= s[i - 1].failed then
          flips = flips + 1
        end
      end
      if #s >= o.min_runs and flips >= o.min_flips and fails > 0 and fails < #s then
        found[#found + 1] = { id = id, runs = #s, flips = flips, fails = fails,
                              failed_runs = failed_runs }
      end
    end
    du.largest_first(found, function(f) return f.flips end, function(f) return f.id end)
    for i = 1, math.min(#found, o.max_reports) do
      local f = found[i]
      local n = run.by_id[f.id]
      local target = n.attrs.attached_node and run.by_id[n.attrs.attached_node]
      local rate = f.flips / (f.runs - 1)
      ctx.report {
        node = f.id,
        message = ("%s failed in %d and passed in %d of the last %d runs while it, %s and "
          .. "everything upstream stayed the same (state digest): it flipped %s (flip rate "
          .. "%s)."):format(du.name(n), f.fails, f.runs - f.fails, f.runs,
          target and du.name(target) or "the model it tests", du.plural(f.flips, "time"),
          du.pct(rate, 0)),
        recommendation = ("Find what varies between runs of %s: data still loading when it "
          .. "runs (run it after the load, or filter out the latest partition), a time-relative "
          .. "condition (current_date, now()), a non-deterministic query (limit without order "
          .. "by). Until fixed, set severity: warn on it so it stops failing the build, and "
          .. "track it here."):format(du.name(n)),
        evidence = { runs = f.runs, failed = f.fails, flips = f.flips,
                     flip_rate = math.floor(rate * 1000 + 0.5) / 1000,
                     failed_runs = table.concat(f.failed_runs, ", ") },
      }
    end
  end,
}
