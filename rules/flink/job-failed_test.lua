-- Tests of flink.job-failed over the project's synthetic exports
-- (fixtures/flink/gen.py); the real HistoryServer archive is checked by
-- tests/e2e/flink_exports.sh.
local F = "../../fixtures/flink/"
return { rule = "flink.job-failed", cases = {
  { name = "a FAILED job: the heap error under the restart strategy's wrapper, the window vertex",
    inputs = { F .. "job-failed.json" },
    expect = { { severity = "error",
                 message = "The job failed in 'Window(TumblingEventTimeWindows(60000)",
                 recommendation = "raise taskmanager.memory.task.heap.size",
                 evidence = { root_cause = "java.lang.OutOfMemoryError: Java heap space",
                              earlier_failures = 3, restart_strategy = "fixed-delay",
                              failing_vertex = "Window(TumblingEventTimeWindows(60000), "
                                .. "EventTimeTrigger, OrderAggregate, PassThroughWindowFunction)" } } } },
  { name = "a running job that failed over stays quiet here (flink.restarts)",
    inputs = { F .. "restarts.json" }, expect = {} },
  { name = "healthy job stays quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
