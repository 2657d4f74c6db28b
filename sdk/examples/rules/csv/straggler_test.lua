-- Tests of csv.straggler. The .csv input needs the plugin:
--   optipipe rules test --plugin-path build/plugins sdk/examples/rules/csv
-- (inline runs need no plugin: they are in the model's own shape).
return { rule = "csv.straggler", cases = {
  { name = "stage 0 has a 4.3x straggler", inputs = { "../../../../fixtures/csv/tasks.csv" },
    expect = { { node = "stage-0", message = "stage 0: the slowest task took 5400 ms",
                 evidence = { max_ms = 5400, p50_ms = 1255 } } } },
  { name = "even tasks stay quiet",
    inputs = { { source = "csv", id = "t", nodes = {
      { id = "s", name = "s", dist = { duration_ms = { 100, 110, 120 } } } } } },
    expect = {} },
} }
