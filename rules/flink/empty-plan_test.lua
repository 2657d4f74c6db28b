-- Tests of flink.empty-plan over the project's synthetic exports
-- (fixtures/flink/gen.py).
local F = "../../fixtures/flink/"
return { rule = "flink.empty-plan", cases = {
  { name = "running, four vertices deploying, no edge in the plan",
    inputs = { F .. "plan-empty.json" },
    expect = { { severity = "warning",
                 message = "4 vertices without a single edge between them",
                 recommendation = "once every vertex is RUNNING",
                 evidence = { vertices = 4, vertices_starting = 4 } } } },
  { name = "the same with a restore that keeps failing: the exception is named",
    inputs = { F .. "plan-empty-restore-failing.json" },
    expect = { { message = "Could not restore keyed state backend",
                 recommendation = "cannot restore its state",
                 evidence = { vertices = 4 } } } },
  { name = "an empty plan with /jobs/<jid>/plan answered: the plan is known, quiet",
    inputs = { F .. "plan-deploying.json" }, expect = {} },
  { name = "healthy job stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
