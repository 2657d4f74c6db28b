-- Tests of spark.sql-query (fixtures/spark/detect/gen.py).
local F = "../../fixtures/spark/detect/"
local SUMMARY = 'SQL query 0 "daily orders report" took 5m 38s over 1 stage, heaviest operators '
  .. "by task time: WholeStageCodegen (1) 3h 00m, BroadcastExchange 1m 35s"
return { rule = "spark.sql-query", cases = {
  { name = "one query with small files, a 3 GiB broadcast, a nested-loop join, an unpruned scan",
    inputs = { F .. "sql.zstd" },
    expect = {
      { node = "sql-0", message = "BroadcastExchange shipped 3 GiB to every executor after "
          .. "building it on the driver for 1m 35s; " .. SUMMARY,
        evidence = { broadcast_bytes = 3221225472, stages = 1, stage_ids = "0" } },
      { node = "sql-0", message = "BroadcastNestedLoopJoin compared every row",
        evidence = { output_rows = 5000000000 } },
      { node = "sql-0", message = "Scan parquet sales.orders read 48,000 files of only 2 MiB",
        evidence = { files_read = 48000, mean_file_bytes = 2097152 } },
      { node = "sql-0", message = "read all 730 partitions of a partitioned table without a "
          .. "partition filter (93.8 GiB)",
        evidence = { partitions_read = 730, location = "InMemoryFileIndex[s3://lake/sales/orders]" } },
    } },
  { name = "raised thresholds: the same query is quiet",
    inputs = { F .. "sql.zstd" },
    options = { min_files = 100000, max_broadcast_mib = 8192, min_join_rows = 1e10,
                min_full_scan_gib = 1000 },
    expect = {} },
  { name = "scans without SQL metric values (nothing counted): quiet",
    inputs = { F .. "recompute-distinct.zstd" }, expect = {} },
} }
