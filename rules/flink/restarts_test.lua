local F = "../../fixtures/flink/"
return { rule = "flink.restarts", cases = {
  { name = "six failovers in the last hour",
    inputs = { F .. "restarts.json" },
    expect = { { message = "failed over 6 times in the last 1h 00m",
                 evidence = { failovers = 6, restarts_total = 6 } } } },
  { name = "a larger budget accepts them",
    inputs = { F .. "restarts.json" }, options = { max_restarts = 10 }, expect = {} },
  { name = "a FAILED job is flink.job-failed's, quiet here",
    inputs = { F .. "job-failed.json" }, expect = {} },
  { name = "one failover a day ago stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
