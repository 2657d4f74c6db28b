return {
  rule = "mixed.incomplete-inputs",
  cases = {
    { name = "a lone /jobs/<jid> response lacks the other endpoints",
      inputs = { "../../fixtures/mixed/flink-lone-job.json" },
      expect = { { message = "flink run", evidence = {} } } },
    { name = "a complete export stays quiet",
      inputs = { "../../fixtures/flink/healthy.json" },
      expect = {} },
  },
}
