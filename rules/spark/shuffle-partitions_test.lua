-- Tests of spark.shuffle-partitions (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
return { rule = "spark.shuffle-partitions", cases = {
  { name = "200 partitions for 469 GiB of shuffle: 2.3 GiB per task, raise to 2600",
    inputs = { F .. "shuffle-partitions.zstd" },
    expect = { { node = "stage-1-0", severity = "warning",
                 message = "spark.sql.shuffle.partitions is 200 but",
                 recommendation = "Set spark.sql.shuffle.partitions to 2600",
                 evidence = { direction = "large", shuffle_partitions = 200, cores = 200 },
                 changes = { { key = "spark.sql.shuffle.partitions", from = "200", to = "2600" } } } } },
  { name = "600 partitions for 2.4 MiB: lower to one wave of the 16 cores",
    inputs = { F .. "small-tasks.zstd" },
    expect = { { node = "stage-1-0", evidence = { direction = "small" },
                 changes = { { key = "spark.sql.shuffle.partitions", from = "600", to = "16" } } } } },
  { name = "24 MiB per task stays quiet", inputs = { F .. "healthy.zstd" }, expect = {} },
} }
