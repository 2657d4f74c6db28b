-- Tests of spark.recomputation (fixtures/spark/detect/gen.py).
local F = "../../fixtures/spark/detect/"
return { rule = "spark.recomputation", cases = {
  { name = "two 23-minute stages scan the same 160 GiB: persist it, up to 23 min saved",
    inputs = { F .. "recompute.zstd" },
    expect = { { severity = "warning", node = "stage-1-0",
                 message = "Scan parquet db.events (160 GiB) was read again by stage 1",
                 recommendation = "StorageLevel.DISK_ONLY",
                 evidence = { first_stage = "stage-0-0", reread_stages = 1,
                              reread_bytes = 171798691840,
                              reread_ms = 1380140,
                              input = "Scan parquet db.events @ s3://lake/events PartitionFilters: []" } } } },
  { name = "re-reads below min_input_gib: quiet",
    inputs = { F .. "recompute.zstd" }, options = { min_input_gib = 200 }, expect = {} },
  { name = "the first reader persisted its data: quiet",
    inputs = { F .. "recompute-cached.zstd" }, expect = {} },
  { name = "one table read for two different partitions is not the same input: quiet",
    inputs = { F .. "recompute-distinct.zstd" }, expect = {} },
  { name = "df.rdd scanned 3 times (no Location): the same call site, bytes and records: likely",
    inputs = { "../../fixtures/spark/expert/rescan-rdd.zstd" },
    expect = { { severity = "warning", node = "stage-1-0",
                 message = "Scan parquet at \"javaToPython at NativeMethodAccessorImpl.java:0\" "
                   .. "(160 GiB) was read again by 2 stages (1, 2)",
                 evidence = { certainty = "likely", reread_stages = 2,
                              first_input_records = 1280000 } } } },
  { name = "the same call site reading different byte counts: quiet",
    inputs = { "../../fixtures/spark/expert/rescan-rdd-distinct.zstd" }, expect = {} },
} }
