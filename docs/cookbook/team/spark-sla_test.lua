-- Tests of team.spark-sla, with inline runs (docs/writing-rules.md).
local function app(tags, duration_ms)
  return { source = "spark", id = "app-1", name = "nightly-orders",
           duration_ms = duration_ms, config = { ["spark.yarn.tags"] = tags },
           nodes = {
             { id = "stage-1", kind = "stage", name = "scan orders", duration_ms = 600000 },
             { id = "stage-2", kind = "stage", name = "join customers", duration_ms = 1800000 },
           } }
end

return { rule = "team.spark-sla", cases = {
  { name = "50 minutes against a 45 minute SLA",
    inputs = { app("team:orders,sla:45m", 3000000) },
    expect = { { severity = "error", message = "over its SLA of 45m 00s by 5m 00s",
                 recommendation = "join customers (30m 00s), scan orders (10m 00s)",
                 evidence = { sla_ms = 2700000, over_ms = 300000 } } } },
  { name = "within the SLA", inputs = { app("sla:1h", 3000000) }, expect = {} },
  { name = "no SLA tag", inputs = { app("team:orders", 3000000) }, expect = {} },
  { name = "another tag key",
    inputs = { { source = "spark", id = "app-2", duration_ms = 120000,
                 config = { ["spark.kubernetes.driver.label.sla"] = "1 min" } } },
    options = { tag_key = "spark.kubernetes.driver.label.sla", tag_prefix = "" },
    expect = { { evidence = { sla_ms = 60000 } } } },
} }
