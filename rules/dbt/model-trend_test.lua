-- Tests of dbt.model-trend (fixtures/dbt/gen.py, health()).
local F = "../../fixtures/dbt/health/"
local function nights(a, b)
  local out = {}
  for d = a, b do
    out[#out + 1] = F .. ("2024-05-%02d"):format(d)
  end
  return out
end
return { rule = "dbt.model-trend", cases = {
  { name = "fct_sessions grows with its rows (volume), fct_orders on flat rows (regression)",
    inputs = { F },
    expect = {
      { node = "model.shop.fct_sessions", message = "the data grows and the time follows",
        evidence = { trend = "volume", runs = 7 } },
      { node = "model.shop.fct_orders", message = "the query got slower, not the data",
        evidence = { trend = "regression", runs = 7 } } } },
  { name = "the same from the run store (ctx.history)",
    history = nights(1, 6), inputs = nights(7, 7),
    expect = { { node = "model.shop.fct_sessions", evidence = { trend = "volume" } },
               { node = "model.shop.fct_orders", evidence = { trend = "regression" } } } },
  { name = "a higher growth threshold: quiet", inputs = { F },
    options = { min_growth = 0.8 }, expect = {} },
  { name = "steady nightly builds: quiet", inputs = { "../../fixtures/dbt/healthy" }, expect = {} },
  { name = "one slow night is no trend: quiet", inputs = { "../../fixtures/dbt/regression" },
    expect = {} },
} }
