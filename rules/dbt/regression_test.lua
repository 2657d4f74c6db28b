-- Tests of dbt.regression over the project's synthetic nightly builds
-- (fixtures/dbt/gen.py). History needs several run_results of one project.
local F = "../../fixtures/dbt/"
return { rule = "dbt.regression", cases = {
  { name = "fct_orders took 29 minutes instead of 4; the build 35 instead of 10",
    inputs = { F .. "regression" },
    expect = {
      { node = "model.shop.fct_orders", severity = "warning",
        message = "fct_orders took 29m", recommendation = "models/marts/fct_orders.sql",
        evidence = { history_runs = 5 } },
      { severity = "warning", message = "The build took",
        recommendation = "Start with fct_orders", evidence = { history_runs = 5, regressed_nodes = 1 } } } },
  { name = "the five earlier nights from the run store (ctx.history), the sixth analyzed alone",
    history = { F .. "regression/run_results-2024-05-01.json", F .. "regression/run_results-2024-05-02.json",
                F .. "regression/run_results-2024-05-03.json", F .. "regression/run_results-2024-05-04.json",
                F .. "regression/run_results-2024-05-05.json" },
    inputs = { F .. "regression/run_results-2024-05-06.json", F .. "regression/manifest.json" },
    expect = {
      { node = "model.shop.fct_orders", severity = "warning", message = "fct_orders took 29m",
        evidence = { history_runs = 5 } },
      { severity = "warning", message = "The build took", evidence = { history_runs = 5 } } } },
  { name = "a store with fewer nights than min_history stays quiet",
    history = { F .. "regression/run_results-2024-05-04.json", F .. "regression/run_results-2024-05-05.json" },
    inputs = { F .. "regression/run_results-2024-05-06.json", F .. "regression/manifest.json" },
    expect = {} },
  { name = "normal jitter (up to 25%) stays quiet",
    inputs = { F .. "regression-jitter" }, expect = {} },
  { name = "a single run has no history: quiet",
    inputs = { F .. "regression/run_results-2024-05-06.json", F .. "regression/manifest.json" },
    expect = {} },
  { name = "more history required than there is: quiet",
    inputs = { F .. "regression" }, options = { min_history = 6 }, expect = {} },
  { name = "a higher ratio threshold hides the regression",
    inputs = { F .. "regression" }, options = { min_ratio = 8 }, expect = {} },
  { name = "healthy nightly builds stay quiet",
    inputs = { F .. "healthy" }, expect = {} },
  { name = "docs generate timings are compile-only: quiet",
    inputs = { F .. "compile-only" }, expect = {} },
} }
