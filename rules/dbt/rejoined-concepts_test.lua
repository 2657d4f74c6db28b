-- Tests of dbt.rejoined-concepts (fixtures/dbt/static/gen.py).
local F = "../../fixtures/dbt/static/"
return { rule = "dbt.rejoined-concepts", cases = {
  { name = "fct_orders reads stg_orders and int_order_items, which only it reads",
    inputs = { F .. "evaluator" },
    expect = { { node = "model.ev.fct_orders",
                 message = "fct_orders reads stg_orders and int_order_items, which reads stg_orders too",
                 evidence = { upstream = "stg_orders", single_use = "int_order_items" } } } },
  { name = "int_order_items folded into fct_orders: quiet",
    inputs = { F .. "evaluator-tidy" }, expect = {} },
} }
