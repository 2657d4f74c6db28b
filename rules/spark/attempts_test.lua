-- Tests of spark.attempts (fixtures/spark/expert/gen.py; the real EMR
-- attempts are in tests/e2e/spark_expert.sh).
local F = "../../fixtures/spark/expert/"
return { rule = "spark.attempts", cases = {
  { name = "three attempts, each finished all 3 jobs: the app ran 3 times",
    inputs = { F .. "attempts-1.zstd", F .. "attempts-2.zstd", F .. "attempts-3.zstd" },
    expect = { { severity = "warning",
                 message = "The app ran 3 times: attempts 1, 2 each finished all 3 jobs (96 tasks)",
                 recommendation = "spark.yarn.maxAppAttempts=1",
                 evidence = { attempts = 3, redone_attempts = 2, jobs_per_attempt = 3 } } } },
  { name = "an attempt that failed in its first job, then a retry: told, not a redo",
    inputs = { F .. "retry-1.zstd", F .. "retry-2.zstd" },
    expect = { { severity = "info", message = "The app ran 2 times: attempt 1 failed (the log ends without",
                 evidence = { attempts = 2, redone_attempts = 0 } } } },
  { name = "one attempt: quiet", inputs = { F .. "attempts-3.zstd" }, expect = {} },
} }
