-- Tests of dbt.model-fanout (fixtures/dbt/static/gen.py).
local F = "../../fixtures/dbt/static/"
return { rule = "dbt.model-fanout", cases = {
  { name = "dim_customers read by 4 leaf reports",
    inputs = { F .. "evaluator" },
    expect = { { node = "model.ev.dim_customers", severity = "info",
                 message = "is read by 4 leaf models that nothing else reads (rpt_customers_daily",
                 evidence = { leaf_children = 4 } } } },
  { name = "a higher threshold: quiet", inputs = { F .. "evaluator" },
    options = { min_leaves = 5 }, expect = {} },
  { name = "the leaves folded into one report: quiet",
    inputs = { F .. "evaluator-tidy" }, expect = {} },
} }
