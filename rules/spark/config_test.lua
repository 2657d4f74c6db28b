-- Tests of spark.config (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
return { rule = "spark.config", cases = {
  { name = "Java serializer on 5 GiB of shuffle; dynamic allocation without shuffle service",
    inputs = { F .. "bad-config.zstd" },
    expect = {
      { severity = "warning", message = "Dynamic allocation is on but neither",
        changes = { { key = "spark.shuffle.service.enabled", from = "false", to = "true" } } },
      { severity = "info", message = "The app uses Java serialization",
        changes = { { key = "spark.serializer",
                      from = "org.apache.spark.serializer.JavaSerializer",
                      to = "org.apache.spark.serializer.KryoSerializer" } } },
    } },
  { name = "Kryo, static allocation, AQE on: quiet", inputs = { F .. "healthy.zstd" },
    expect = {} },
} }
