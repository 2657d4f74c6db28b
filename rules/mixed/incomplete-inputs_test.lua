return {
  rule = "mixed.incomplete-inputs",
  cases = {
    { name = "a lone /jobs/<jid> response lacks the other endpoints",
      inputs = { "../../fixtures/mixed/flink-lone-job.json" },
      expect = { { message = "flink run", evidence = {} } } },
    { name = "requests that optipipe fetch could not make are named",
      inputs = { "../../fixtures/mixed/flink-fetch-errors.json" },
      options = { max_listed = 10 },
      expect = { { message = "checkpoints could not be fetched: GET http" } } },
    { name = "a complete export stays quiet",
      inputs = { "../../fixtures/flink/healthy.json" },
      expect = {} },
  },
}
