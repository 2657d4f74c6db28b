-- Tests of dbt.source-freshness (fixtures/dbt/gen.py).
local F = "../../fixtures/dbt/"
return { rule = "dbt.source-freshness", cases = {
  { name = "one warn, one error, one failed check",
    inputs = { F .. "freshness/sources.json" },
    expect = {
      { node = "source.shop.app.orders", severity = "warning",
        message = "Source app.orders was last loaded 15h 00m ago (warn after 12h 00m, error after 1d 00h)",
        evidence = { age_h = 15, warn_after_h = 12, error_after_h = 24, status = "warn" } },
      { node = "source.shop.app.payments", severity = "error", evidence = { age_h = 30 } },
      { node = "source.shop.app.refunds", severity = "error",
        message = "The freshness check of source app.refunds failed: Database Error" } } },
  { name = "fresh sources stay quiet",
    inputs = { F .. "healthy/sources.json" }, expect = {} },
  { name = "build runs are not freshness checks",
    inputs = { F .. "failures" }, expect = {} },
} }
