-- Tests of dbt.incremental-config (fixtures/dbt/static/gen.py).
local F = "../../fixtures/dbt/static/"
return { rule = "dbt.incremental-config", cases = {
  { name = "fct_sessions: merge without unique_key and on_schema_change",
    inputs = { F .. "evaluator" },
    expect = { { node = "model.ev.fct_sessions", severity = "warning",
                 message = "has no unique_key (strategy merge)",
                 changes = { { target = "models/fct_sessions.sql", key = "on_schema_change",
                               to = "append_new_columns" } } } } },
  { name = "on_schema_change not required: still the key",
    inputs = { F .. "evaluator" }, options = { require_on_schema_change = false },
    expect = { { node = "model.ev.fct_sessions", message = "no unique_key" } } },
  { name = "unique_key and on_schema_change set: quiet",
    inputs = { F .. "evaluator-tidy" }, expect = {} },
} }
