-- Tests of dbt.critical-path (fixtures/dbt/gen.py).
local F = "../../fixtures/dbt/"
return { rule = "dbt.critical-path", cases = {
  { name = "a long chain bounds the build; fct_sessions is half of it",
    inputs = { F .. "critical-path" },
    expect = { { node = "model.shop.fct_sessions", severity = "warning",
                 message = "(raw_events > stg_events > int_sessions > fct_sessions > agg_engagement)",
                 recommendation = "models/marts/fct_sessions.sql",
                 evidence = { chain_nodes = 5, threads = 8, dominant = "fct_sessions" } } } },
  { name = "a chain without a dominant model is reported as info",
    inputs = { F .. "regression-jitter/run_results-2024-05-06.json",
               F .. "regression-jitter/manifest.json" },
    expect = { { node = "model.shop.fct_orders", severity = "info",
                 message = "More threads would not make it shorter" } } },
  { name = "without a manifest there is no DAG: quiet",
    inputs = { F .. "critical-path/run_results-2024-05-12.json" }, expect = {} },
  { name = "a thread-starved build is not bounded by its chain: quiet",
    inputs = { F .. "thread-starved" }, expect = {} },
  { name = "short builds are left alone",
    inputs = { F .. "critical-path" }, options = { min_span_s = 3600 }, expect = {} },
  { name = "healthy builds stay quiet",
    inputs = { F .. "healthy" }, expect = {} },
} }
