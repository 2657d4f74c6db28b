-- Tests of dbt.failures (fixtures/dbt/gen.py).
local F = "../../fixtures/dbt/"
return { rule = "dbt.failures", cases = {
  { name = "one model error, failing and warning tests, a broken test, grouped by cause",
    inputs = { F .. "failures" },
    expect = {
      { node = "model.shop.stg_payments", severity = "error",
        message = "model stg_payments failed (error): Database Error in model stg_payments",
        recommendation = "dbt build --select stg_payments+",
        evidence = { skipped = 7, status = "error" } },
      { node = "model.shop.dim_customers", severity = "error",
        message = "2 tests on dim_customers failed: not_null_dim_customers_email (12 rows), unique_dim_customers_customer_id (3 rows)",
        evidence = { failed_tests = 2, failing_rows = 15, skipped = 4 } },
      { node = "model.shop.stg_orders", severity = "warning",
        message = "1 test on stg_orders warned", evidence = { failing_rows = 5 } },
      { node = "test.shop.assert_revenue_positive.82087f2c2b", severity = "error",
        message = "could not run (its SQL failed)",
        recommendation = "tests/assert_revenue_positive.sql" } } },
  { name = "without a manifest: tests one by one, skips unexplained",
    inputs = { F .. "failures/run_results-2024-05-19.json" },
    expect = {
      { node = "model.shop.stg_payments", evidence = { skipped = 0 } },
      { node = "test.shop.not_null_dim_customers_email.145e66c7f7", severity = "error" },
      { node = "test.shop.unique_dim_customers_customer_id.5355036372", severity = "error" },
      { node = "test.shop.accepted_values_stg_orders_status__placed__shipped__completed.16df0b5b66",
        severity = "warning" },
      { node = "test.shop.assert_revenue_positive.82087f2c2b" },
      { severity = "info", message = "8 nodes were skipped without a failure upstream",
        evidence = { skipped = 8 } } } },
  { name = "healthy builds stay quiet",
    inputs = { F .. "healthy" }, expect = {} },
} }
