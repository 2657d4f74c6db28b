-- Tests of dbt.source-fanout (fixtures/dbt/static/gen.py).
local F = "../../fixtures/dbt/static/"
return { rule = "dbt.source-fanout", cases = {
  { name = "raw.payments read by 3 models without a staging model",
    inputs = { F .. "evaluator" },
    expect = { { node = "source.ev.raw.payments",
                 message = "Source raw.payments is read directly by 3 models (fct_payments, fct_refunds, rpt_cash)",
                 evidence = { readers = 3 } } } },
  { name = "four readers needed: quiet", inputs = { F .. "evaluator" },
    options = { min_models = 4 }, expect = {} },
  { name = "stg_payments added: quiet", inputs = { F .. "evaluator-tidy" }, expect = {} },
} }
