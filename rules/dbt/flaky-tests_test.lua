-- Tests of dbt.flaky-tests (fixtures/dbt/gen.py, health()).
local F = "../../fixtures/dbt/health/"
local function nights(a, b)
  local out = {}
  for d = a, b do
    out[#out + 1] = F .. ("2024-05-%02d"):format(d)
  end
  return out
end
return { rule = "dbt.flaky-tests", cases = {
  { name = "not_null_fct_events_id flips 5 times in 7 unchanged runs; unique_dim_users_id "
      .. "fails since dim_users changed (one flip): quiet",
    inputs = { F },
    expect = { { node = "test.shop.not_null_fct_events_id.748ded8fe4", severity = "warning",
                 message = "failed in 3 and passed in 4 of the last 7 runs",
                 evidence = { runs = 7, failed = 3, flips = 5 } } } },
  { name = "the same from the run store (ctx.history)",
    history = nights(1, 6), inputs = nights(7, 7),
    expect = { { node = "test.shop.not_null_fct_events_id.748ded8fe4",
                 evidence = { runs = 7, flips = 5, flip_rate = 0.833 } } } },
  { name = "more flips needed: quiet", inputs = { F }, options = { min_flips = 6 }, expect = {} },
  { name = "four nights are too few to call a test flaky", inputs = nights(1, 4), expect = {} },
  { name = "without a manifest per run nothing is known to be unchanged: quiet",
    inputs = { "../../fixtures/dbt/healthy" }, expect = {} },
} }
