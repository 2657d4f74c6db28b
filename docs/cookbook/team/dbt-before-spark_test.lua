-- Tests of team.dbt-before-spark: two engines, written inline.
local T = 1700000000000
local function dbt(started, ended)
  return { source = "dbt", id = "inv-1", name = "shop: dbt build",
           started_at = T + started, ended_at = T + ended }
end
local function spark(started)
  return { source = "spark", id = "app-1", name = "nightly-orders",
           started_at = T + started, ended_at = T + started + 600000 }
end

return { rule = "team.dbt-before-spark", cases = {
  { name = "Spark starts ten minutes before dbt ends",
    inputs = { dbt(0, 1800000), spark(1200000) },
    expect = { { run = "app-1", message = "started 10m 00s before the dbt build",
                 evidence = { overlap_ms = 600000, dbt_run = "inv-1" } } } },
  { name = "Spark starts after dbt", inputs = { dbt(0, 1800000), spark(1900000) },
    expect = {} },
  { name = "other application names are not paired",
    inputs = { dbt(0, 1800000), spark(1200000) }, options = { spark_app = "^hourly" },
    expect = {} },
} }
