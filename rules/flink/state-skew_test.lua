-- Tests of flink.state-skew over the project's synthetic exports
-- (fixtures/flink/gen.py).
local F = "../../fixtures/flink/"
return { rule = "flink.state-skew", cases = {
  { name = "subtask 1 checkpoints 78% of the window's state",
    inputs = { F .. "state-skew.json" },
    expect = { { node = "8379bdcdbee3f981d991c9f25ba2b24f",
                 message = "Subtask 1 of 'Window(",
                 recommendation = "salt the key",
                 evidence = { subtask = 1, share_ratio = 0.78, checkpoint_id = 111 } } } },
  { name = "a higher share threshold", inputs = { F .. "state-skew.json" },
    options = { min_share = 0.8 }, expect = {} },
  { name = "evenly spread state stays quiet", inputs = { F .. "checkpoint-phases-async.json" }, expect = {} },
  { name = "no subtask details: quiet", inputs = { F .. "healthy.json" }, expect = {} },
} }
