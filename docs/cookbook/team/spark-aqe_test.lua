-- Tests of team.spark-aqe: inline runs and the project's Spark logs.
local function app(version, aqe)
  return { source = "spark", id = "app-1", name = "etl", engine_version = version,
           config = { ["spark.sql.adaptive.enabled"] = aqe } }
end

return { rule = "team.spark-aqe", cases = {
  { name = "switched off", inputs = { app("3.5.1", "false") },
    expect = { { message = "spark.sql.adaptive.enabled = false",
                 changes = { { key = "spark.sql.adaptive.enabled", from = "false", to = "true" } } } } },
  { name = "Spark 3.1 default", inputs = { app("3.1.2", nil) },
    expect = { { message = "defaults to false", evidence = { configured = false } } } },
  { name = "Spark 3.5 default is on", inputs = { app("3.5.1", nil) }, expect = {} },
  { name = "healthy log", inputs = { "../../../fixtures/spark/healthy.zstd" }, expect = {} },
} }
