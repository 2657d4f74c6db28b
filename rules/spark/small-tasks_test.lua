-- Tests of spark.small-tasks (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
return { rule = "spark.small-tasks", cases = {
  { name = "600 tasks of 40 ms: fewer partitions (threshold lowered for a small fixture)",
    inputs = { F .. "small-tasks.zstd" }, options = { many_tasks = 500 },
    expect = { { node = "stage-1-0", message = "ran 600 tasks with a median of",
                 recommendation = "Use fewer, larger partitions",
                 evidence = { tasks = 600, direction = "fewer" },
                 changes = { { key = "spark.sql.shuffle.partitions", from = "600", to = "12" } } } } },
  { name = "below DataFlint's 5000 tasks: quiet", inputs = { F .. "small-tasks.zstd" },
    expect = {} },
  { name = "8 tasks of 25 minutes on 16 cores: more partitions",
    inputs = { F .. "huge-tasks.zstd" },
    expect = { { node = "stage-1-0", message = "ran only 8 tasks with a median of 25m",
                 recommendation = "Use more, smaller partitions",
                 evidence = { tasks = 8, direction = "more", cores = 16 },
                 changes = { { key = "spark.sql.shuffle.partitions", from = "8", to = "112" } } } } },
  { name = "healthy task sizes stay quiet", inputs = { F .. "healthy.zstd" }, expect = {} },
} }
