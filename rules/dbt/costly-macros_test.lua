-- Tests of dbt.costly-macros (fixtures/dbt/static/gen.py).
local F = "../../fixtures/dbt/static/"
return { rule = "dbt.costly-macros", cases = {
  { name = "union_relations over 12 relations, run_query, get_column_values",
    inputs = { F .. "evaluator" },
    expect = {
      { node = "model.ev.int_events", message = "calls dbt_utils.union_relations over 12 relations",
        evidence = { macro = "dbt_utils.union_relations", relations = 12 } },
      { node = "model.ev.int_events", evidence = { macro = "dbt.run_query" } },
      { node = "model.ev.int_status_pivot", evidence = { macro = "dbt_utils.get_column_values" } } } },
  { name = "union_relations over 3 relations, no introspection: quiet",
    inputs = { F .. "evaluator-tidy" }, expect = {} },
  { name = "a higher union threshold leaves the other two",
    inputs = { F .. "evaluator" }, options = { min_union_relations = 13 },
    expect = { { evidence = { macro = "dbt.run_query" } },
               { evidence = { macro = "dbt_utils.get_column_values" } } } },
} }
