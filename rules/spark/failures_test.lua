-- Tests of spark.failures (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
return { rule = "spark.failures", cases = {
  { name = "a failed job, failed and retried tasks, an executor killed by YARN",
    inputs = { F .. "failures.zstd" },
    expect = {
      { node = "job-2", severity = "error", message = "failed: Job aborted due to stage failure" },
      { node = "stage-4-0", severity = "error", message = "16 task attempts failed with ExceptionFailure",
        evidence = { reason = "ExceptionFailure", failed_attempts = 16 } },
      { node = "stage-1-0", severity = "warning",
        message = "3 task attempts failed with ExceptionFailure: java.lang.NullPointerException",
        recommendation = "Fix the cause" },
      { node = "stage-2-0", severity = "warning", message = "2 task attempts failed with ExecutorLostFailure",
        changes = { { key = "spark.executor.memoryOverhead", from = "819m", to = "1843m" } } },
      { severity = "warning", message = "1 executor was lost (3)",
        evidence = { executors_lost = 1 },
        changes = { { key = "spark.executor.memoryOverhead", from = "819m", to = "1843m" } } },
    } },
  { name = "only stages with 5+ failed attempts when asked",
    inputs = { F .. "failures.zstd" }, options = { min_task_failures = 5 },
    expect = { { node = "job-2" }, { node = "stage-4-0" }, { message = "executor was lost" } } },
  { name = "a clean run stays quiet", inputs = { F .. "healthy.zstd" }, expect = {} },
} }
