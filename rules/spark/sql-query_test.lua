-- Tests of spark.sql-query (fixtures/spark/detect/gen.py).
local F = "../../fixtures/spark/detect/"
local SUMMARY = 'SQL query 0 "daily orders report" took 5m 38s over 1 stage, heaviest operators '
  .. "by task time: WholeStageCodegen (1) 3h 00m, BroadcastExchange 1m 35s"
-- One query reading 20 GiB of a table partitioned by year, whole
-- (PartitionFilters: []), with one more operator above the scan.
local function scan_query(above)
  above.sql, above.op = "sql-0", 0
  return { source = "spark", id = "app-q", engine_version = "3.3.0", config = {}, metrics = {},
    nodes = { { id = "sql-0", kind = "sql", name = "import tempfile\nfile = tempfile.Named()",
                parents = {}, duration_ms = 60000,
                metrics = { stages = 1 }, attrs = {} } },
    series = { sql_operators = { above,
      { sql = "sql-0", op = 1, name = "Scan parquet db.t",
        detail = "FileScan parquet db.t[a#1,year#2] Batched: true, PartitionFilters: [], "
          .. "ReadSchema: struct<a:int>",
        partition_filters = "[]", partition_columns = "year#2", files_bytes = 20 * 2^30,
        partitions_read = 400, location = "InMemoryFileIndex[s3://lake/t]" } } } }
end

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
      -- its unpruned scan has no predicate on a partition column: nothing
      -- could prune it (issue #26), quiet
    } },
  { name = "a Filter on the partition column above the scan did not prune: fires (issue #26)",
    inputs = { scan_query({ name = "Filter", detail = "Filter (cast(year#2 as string) = 2021)" }) },
    expect = { { node = "sql-0", message = "although the query filters on its partition column year; "
                   .. "SQL query 0 \"import tempfile\" took 1m 00s",
                 evidence = { partition_column = "year", pruning = "filter" } } } },
  { name = "an inner join on the partition column: dynamic partition pruning could apply",
    inputs = { scan_query({ name = "SortMergeJoin", detail = "SortMergeJoin [year#2], [d_year#9], Inner" }) },
    expect = { { message = "joins on its partition column year", evidence = { pruning = "join" } } } },
  { name = "a left outer join keeping every row of the table needs every partition: quiet",
    inputs = { scan_query({ name = "SortMergeJoin", detail = "SortMergeJoin [year#2], [d_year#9], LeftOuter" }) },
    expect = {} },
  { name = "a full table copy (no predicate, no join): quiet",
    inputs = { scan_query({ name = "Project", detail = "Project [a#1, year#2]" }) },
    expect = {} },
  { name = "raised thresholds: the same query is quiet",
    inputs = { F .. "sql.zstd" },
    options = { min_files = 100000, max_broadcast_mib = 8192, min_join_rows = 1e10,
                min_full_scan_gib = 1000 },
    expect = {} },
  { name = "scans without SQL metric values (nothing counted): quiet",
    inputs = { F .. "recompute-distinct.zstd" }, expect = {} },
} }
