-- Tests of dbt.slow-models (fixtures/dbt/gen.py).
local F = "../../fixtures/dbt/"
return { rule = "dbt.slow-models", cases = {
  { name = "fct_inventory holds 72% of node time, most of it compiling",
    inputs = { F .. "slow-models" },
    expect = { { node = "model.shop.fct_inventory", severity = "info",
                 message = "fct_inventory took 20m 46s, 72% of all node time",
                 recommendation = "compile time",
                 evidence = { compile_s = 660, materialized = "table", rows = 3000000 } } } },
  { name = "a higher share threshold: quiet",
    inputs = { F .. "slow-models" }, options = { min_share = 0.8 }, expect = {} },
  { name = "the largest model of a long chain; the second (25%) is under the share",
    inputs = { F .. "critical-path" },
    expect = { { node = "model.shop.fct_sessions", recommendation = "query plan",
                 evidence = { materialized = "incremental" } } } },
  { name = "a lower share threshold names the second one too",
    inputs = { F .. "critical-path" }, options = { min_share = 0.2 },
    expect = { { node = "model.shop.fct_sessions" }, { node = "model.shop.int_sessions" } } },
  { name = "healthy builds stay quiet",
    inputs = { F .. "healthy" }, expect = {} },
  { name = "docs generate timings are compile-only: quiet",
    inputs = { F .. "compile-only" }, expect = {} },
} }
