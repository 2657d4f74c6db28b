-- Tests of spark.skew (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
return { rule = "spark.skew", cases = {
  { name = "one task reads 30x the median shuffle data and runs 40x longer: data skew",
    inputs = { F .. "skew.zstd" },
    expect = { { node = "stage-1-0", severity = "warning",
                 message = "its slowest task ran 1m 40s, 40.9× the median",
                 recommendation = "Data skew",
                 evidence = { slowest_task_index = 17, slowest_task_partition = 17,
                              slowest_task_executor = "2", data_skew = true, tasks = 32,
                              max_task_ms = 100000 },
                 changes = { { key = "spark.sql.adaptive.skewJoin.skewedPartitionFactor",
                               from = "5.0", to = "3" } } } } },
  { name = "the absolute floor keeps short stages quiet",
    inputs = { F .. "skew.zstd" }, options = { min_max_ms = 200000 }, expect = {} },
  { name = "an even stage stays quiet", inputs = { F .. "healthy.zstd" }, expect = {} },
  { name = "spill without skew stays quiet", inputs = { F .. "spill.zstd" }, expect = {} },
} }
