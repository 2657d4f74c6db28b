-- Tests of dbt.needless-rebuilds (fixtures/dbt/gen.py, health()).
local F = "../../fixtures/dbt/health/"
local function nights(a, b)
  local out = {}
  for d = a, b do
    out[#out + 1] = F .. ("2024-05-%02d"):format(d)
  end
  return out
end
-- health-fresh (gen.py, health_fresh()): each night a sources.json, then
-- the build's run_results and manifest
local FF = "../../fixtures/dbt/health-fresh/"
local function fresh_nights(a, b, files)
  local out = {}
  for d = a, b do
    for _, f in ipairs(files or { "" }) do
      out[#out + 1] = FF .. ("2024-05-%02d/"):format(d) .. f
    end
  end
  return out
end
return { rule = "dbt.needless-rebuilds", cases = {
  { name = "by freshness: dim_plans' source got nothing new all week though its rows "
      .. "moved; fct_events' source was loaded every night though its rows did not",
    inputs = { FF },
    expect = { { node = "model.shop.dim_plans", severity = "info",
                 message = "and its data (none of its 1 upstream source got new rows since "
                   .. "2024-04-30T09:00:00Z, by `dbt source freshness`) unchanged",
                 evidence = { runs = 7, judged_by = "freshness", sources = 1,
                              sources_loaded_at = "2024-04-30T09:00:00Z" } } } },
  { name = "by freshness from the run store (ctx.history)",
    history = fresh_nights(1, 6), inputs = fresh_nights(7, 7),
    expect = { { node = "model.shop.dim_plans", evidence = { runs = 7 } } } },
  { name = "without sources.json, by rows: the other way round",
    inputs = fresh_nights(1, 7, { "run_results.json", "manifest.json" }),
    expect = { { node = "model.shop.fct_events",
                 evidence = { runs = 7, judged_by = "rows", rows = 2000000 } } } },
  { name = "fct_events rebuilt 7 times unchanged; dim_users changed on night 4: quiet",
    inputs = { F },
    expect = { { node = "model.shop.fct_events", severity = "info",
                 message = "was rebuilt in full in each of the last 7 runs",
                 recommendation = "--select state:modified+ source_status:fresher+",
                 evidence = { runs = 7, rows = 2000000 } } } },
  { name = "the same from the run store (ctx.history)",
    history = nights(1, 6), inputs = nights(7, 7),
    expect = { { node = "model.shop.fct_events", evidence = { runs = 7 } } } },
  { name = "a shorter streak is enough for dim_users",
    inputs = { F }, options = { min_runs = 4 },
    expect = { { node = "model.shop.fct_events" },
               { node = "model.shop.dim_users", evidence = { runs = 4 } } } },
  { name = "one manifest for five nights says nothing of the older ones: quiet",
    inputs = { "../../fixtures/dbt/healthy" }, expect = {} },
} }
