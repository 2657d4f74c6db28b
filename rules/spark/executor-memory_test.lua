-- Tests of spark.executor-memory (fixtures/spark/detect/gen.py).
local F = "../../fixtures/spark/detect/"
-- A driver whose heap peaked at 17 GiB and whose log sets no
-- spark.driver.memory; incomplete: the log lacks its beginning.
local function driver_peak(incomplete)
  return { source = "spark", id = "app-part", engine_version = "3.1.1", config = {},
    attrs = { incomplete = incomplete }, metrics = { driver_peak_jvm_heap_bytes = 17 * 2^30 },
    nodes = {} }
end

return { rule = "spark.executor-memory", cases = {
  { name = "a log without its beginning: the 1g default is not the driver's heap, quiet (issue #26)",
    inputs = { driver_peak("no application start, no environment") }, expect = {} },
  { name = "the same peak in a whole log: the 1g default was the heap",
    inputs = { driver_peak(nil) },
    expect = { { message = "The driver's heap peaked at 17 GiB of its 1g" } } },
  { name = "16g heaps that peaked at 3 GiB shrink to 5g; the 8g driver at 1 GiB to 1536m",
    inputs = { F .. "mem-oversized.zstd" },
    expect = {
      { severity = "info", message = "No executor used more than 18.8% of its 16g heap",
        recommendation = "Lower spark.executor.memory from 16g to 5g",
        evidence = { peak_jvm_heap_bytes = 3221225472, executors_measured = 4,
                     peak_executor = "1" },
        changes = { { key = "spark.executor.memory", from = "16g", to = "5g" } } },
      { severity = "info", message = "The driver never used more than 12.5% of its 8g heap",
        changes = { { key = "spark.driver.memory", from = "8g", to = "1536m" } } } } },
  { name = "a full heap under GC grows (Dr. Elephant's steps, as spark.gc)",
    inputs = { F .. "mem-full.zstd" },
    expect = { { severity = "warning", message = "heap ran full: it peaked at 3.9 GiB of 4g",
                 changes = { { key = "spark.executor.memory", from = "4g", to = "6g" } } } } },
  { name = "heaps used as sized: quiet", inputs = { F .. "mem-fitting.zstd" }, expect = {} },
  { name = "a larger headroom leaves no saving worth proposing: quiet",
    inputs = { F .. "mem-oversized.zstd" }, options = { headroom = 4, max_used_share = 0.1 },
    expect = {} },
  { name = "OutOfMemoryError failures are spark.failures' to advise: quiet",
    inputs = { F .. "mem-heap-oom.zstd" }, expect = {} },
  { name = "containers killed by YARN are spark.failures' to advise: quiet",
    inputs = { F .. "mem-killed.zstd" }, expect = {} },
} }
