-- Tests of team.flink-retained over the project's Flink exports.
local F = "../../../fixtures/flink/"
return { rule = "team.flink-retained", cases = {
  { name = "one retained (Flink 1.20 key)", inputs = { F .. "retained-one.json" },
    expect = { { message = "retains 1 completed checkpoint(s); the team minimum is 3",
                 changes = { { key = "execution.checkpointing.num-retained", from = "1", to = 3 } } } } },
  { name = "not set: Flink's default of one", inputs = { F .. "retained-default.json" },
    expect = { { message = "not set", changes = { { key = "state.checkpoints.num-retained", to = 3 } } } } },
  { name = "three retained is enough", inputs = { F .. "healthy.json" }, expect = {} },
  { name = "a laxer team", inputs = { F .. "retained-one.json" }, options = { min_retained = 1 },
    expect = {} },
} }
