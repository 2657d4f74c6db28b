-- Tests of dbt.cost (fixtures/dbt/gen.py).
local F = "../../fixtures/dbt/"
return { rule = "dbt.cost", cases = {
  { name = "fct_ad_impressions bills 3.1 TiB and 14 slot-hours, priced at the team's rate",
    inputs = { F .. "cost" }, options = { price_per_tib = 6.25 },
    expect = { { node = "model.shop.fct_ad_impressions", severity = "warning",
                 message = "fct_ad_impressions billed 3.1 TiB (about $19.37 on demand) and used 14.0 slot-hours",
                 evidence = { slot_hours = 14, usd_on_demand = 19.37 } } } },
  { name = "higher limits: quiet",
    inputs = { F .. "cost" }, options = { max_bytes_billed = "5 TiB", max_slot_hours = 20 },
    expect = {} },
  { name = "no price given (the default): bytes and slot time, no money",
    inputs = { F .. "cost" },
    expect = { { node = "model.shop.fct_ad_impressions", message = "billed 3.1 TiB and used" } } },
  { name = "healthy builds stay quiet",
    inputs = { F .. "healthy" }, expect = {} },
} }
