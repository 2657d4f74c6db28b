-- Tests of dbt.exposure-views (fixtures/dbt/static/gen.py).
local F = "../../fixtures/dbt/static/"
return { rule = "dbt.exposure-views", cases = {
  { name = "the revenue dashboard reads the view rpt_revenue",
    inputs = { F .. "evaluator" },
    expect = { { node = "model.ev.rpt_revenue", severity = "warning",
                 message = "Exposure revenue_dashboard reads rpt_revenue, a view",
                 changes = { { target = "models/rpt_revenue.sql", key = "materialized",
                               from = "view", to = "table" } } } } },
  { name = "rpt_revenue a table: quiet", inputs = { F .. "evaluator-tidy" }, expect = {} },
} }
