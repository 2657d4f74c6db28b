local function partial(source, n)
  local w = {}
  for i = 1, n do w[i] = "warning " .. i end
  return { source = source, id = source .. "-1", name = source .. " job", warnings = w }
end

return {
  rule = "mixed.incomplete-inputs",
  cases = {
    { name = "a lone /jobs/<jid> response lacks the other endpoints",
      inputs = { "../../fixtures/mixed/flink-lone-job.json" },
      expect = { { message = "flink run", recommendation = "optipipe fetch flink",
                   evidence = {} } } },
    { name = "requests that optipipe fetch could not make are named",
      inputs = { "../../fixtures/mixed/flink-fetch-errors.json" },
      options = { max_listed = 10 },
      expect = { { message = "checkpoints could not be fetched: GET http" } } },
    { name = "one finding per run, quoting only the first warning",
      inputs = { partial("flink", 8) },
      expect = { { run = "flink-1", message = "8 warnings: warning 1 (and 7 more)",
                   evidence = { warnings = 8 } } } },
    { name = "each run gets the advice of its engine",
      inputs = { partial("spark", 1), partial("dbt", 2), partial("other", 1) },
      expect = { { run = "spark-1", recommendation = "whole event log" },
                 { run = "dbt-1", recommendation = "manifest.json of the same invocation" },
                 { run = "other-1", recommendation = "supply the complete input" } } },
    { name = "a complete export stays quiet",
      inputs = { "../../fixtures/flink/healthy.json" },
      expect = {} },
  },
}
