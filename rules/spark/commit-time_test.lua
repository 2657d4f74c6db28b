-- Tests of spark.commit-time (fixtures/spark/expert/gen.py; the real
-- Databricks case is in tests/e2e/spark_expert.sh).
local F = "../../fixtures/spark/expert/"
return { rule = "spark.commit-time", cases = {
  { name = "an insert into a Hive table: 57 min, its job 4.6 min: the commit named",
    inputs = { F .. "commit-slow.zstd" },
    expect = { { severity = "warning", node = "sql-0",
                 message = "Query sql-0 \"insert into table sales.daily select * from staging\" "
                   .. "(InsertIntoHiveTable) ran",
                 recommendation = "S3A magic committer",
                 evidence = { command = "InsertIntoHiveTable", jobs = 1 } } } },
  { name = "a commit of 12 s: quiet", inputs = { F .. "commit-fast.zstd" }, expect = {} },
  { name = "below min_commit_s: quiet", inputs = { F .. "commit-slow.zstd" },
    options = { min_commit_s = 4000 }, expect = {} },
  { name = "queries without a write command: quiet", inputs = { "../../fixtures/spark/detect/sql.zstd" },
    expect = {} },
} }
