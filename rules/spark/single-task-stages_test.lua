-- Tests of spark.single-task-stages (fixtures/spark/expert/gen.py).
local F = "../../fixtures/spark/expert/"
return { rule = "spark.single-task-stages", cases = {
  { name = "coalesce(1) before two writes: 28 of 32 job minutes on 1 of 32 cores",
    inputs = { F .. "single-task.zstd" },
    expect = { { severity = "warning", node = "stage-1-0",
                 message = "2 stages of one task each took 28m 00s of the app's 32m 00s of job "
                   .. "time (87.5%) on 1 of its 32 cores",
                 recommendation = "coalesce(1) or repartition(1) before the write",
                 evidence = { stages = 2, cores = 32, cause = "write",
                              single_task_ms = 1680220 } } } },
  { name = "a 2-second single-task count: quiet", inputs = { F .. "single-task-short.zstd" },
    expect = {} },
  { name = "below min_share: quiet", inputs = { F .. "single-task.zstd" },
    options = { min_share = 0.9 }, expect = {} },
  { name = "healthy task counts: quiet", inputs = { "../../fixtures/spark/healthy.zstd" },
    expect = {} },
} }
