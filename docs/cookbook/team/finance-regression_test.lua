-- Tests of team.finance-regression: a project history written inline.
-- Runs that share a history_key form a history; the newest (by
-- history_order, else started_at) is checked and sees the others.
local function build(i, revenue_ms, orders_ms)
  return { source = "dbt", id = "inv-" .. i, name = "shop: dbt build",
           history_key = "shop", history_order = i,
           nodes = {
             { id = "model.shop.revenue", kind = "model", name = "revenue",
               status = "succeeded", duration_ms = revenue_ms,
               attrs = { file = "models/finance/revenue.sql" } },
             { id = "model.shop.orders", kind = "model", name = "orders",
               status = "succeeded", duration_ms = orders_ms,
               attrs = { file = "models/marts/orders.sql" } },
           } }
end

return { rule = "team.finance-regression", cases = {
  { name = "revenue 50% slower than its median",
    inputs = { build(1, 60000, 60000), build(2, 62000, 60000), build(3, 58000, 60000),
               build(4, 90000, 200000) },
    expect = { { node = "model.shop.revenue", message = "revenue took 1m 30s, 50% more",
                 evidence = { median_ms = 60000, regression = 0.5, runs = 3 } } } },
  { name = "orders is not in the finance folder; 10% on revenue is within the limit",
    inputs = { build(1, 60000, 60000), build(2, 60000, 60000), build(3, 60000, 60000),
               build(4, 66000, 200000) },
    expect = {} },
  { name = "a stricter limit from the options",
    inputs = { build(1, 60000, 60000), build(2, 60000, 60000), build(3, 60000, 60000),
               build(4, 66000, 60000) },
    options = { max_regression = 0.05 },
    expect = { { node = "model.shop.revenue" } } },
  { name = "the project's regression fixture, marts folder",
    inputs = { "../../../fixtures/dbt/regression" }, options = { folder = "models/marts/" },
    expect = { { node = "model.shop.fct_orders" } } },
  { name = "too little history", inputs = { build(1, 60000, 60000), build(2, 90000, 60000) },
    expect = {} },
} }
