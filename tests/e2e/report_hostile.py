#!/usr/bin/env python3
"""report_hostile.py SRC OUT - writes inputs with hostile names for the
report tests (tests/e2e/report_escape.sh, report_sarif.sh) into OUT:

  OUT/flink.json   the demo Flink export, job and vertex names replaced
  OUT/dbt/         the demo dbt history, fct_orders and a thread renamed
  OUT/rules/       a rule pack whose findings carry hostile evidence keys,
                   change targets, keys and values

Every name carries an HTML tag, a Markdown link to javascript:, a
backtick, a pipe, an ANSI escape (ESC [2J), BEL and a C1 control (CSI).
"""
import json
import os
import sys

EVIL = ("x`|<script>alert(1)</script>](javascript:alert(1)) "
        "\u001b[2J\u0007 **b** @u #1 \u009b!")

RULE = r'''-- evil.names: reports on every node whose name carries "script",
-- repeating the hostile name in every field a finding has.
return {
  id = "evil.names",
  title = "Hostile <b>title</b> `x` | y",
  severity = "warning",
  sources = { "flink", "dbt" },
  description = "<script>alert(1)</script> [x](javascript:alert(1))",
  check = function(run, ctx)
    for _, n in ipairs(run.nodes) do
      if n.name and n.name:find("script", 1, true) then
        ctx.report{
          node = n.id,
          message = "- node " .. n.name .. " [x](javascript:alert(1))",
          recommendation = "set " .. n.name,
          evidence = { [n.name] = n.name, ratio = 2 },
          changes = { { target = n.name, key = "k" .. n.name,
                        from = "```" .. n.name, to = n.name .. "\n+ fake: line" } },
        }
      end
    end
  end,
}
'''


def replace_all(value, mapping):
    """Replaces substrings in every string of a JSON value, keys too."""
    if isinstance(value, str):
        for old, new in mapping:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [replace_all(v, mapping) for v in value]
    if isinstance(value, dict):
        return {replace_all(k, mapping): replace_all(v, mapping) for k, v in value.items()}
    return value


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f)


def main(src, out):
    demo = os.path.join(src, "fixtures", "demo")
    flink = [
        ("Window(TumblingEventTimeWindows(60000), EventTimeTrigger, OrderAggregate, "
         "PassThroughWindowFunction)", "Window " + EVIL),
        ("Sink: JDBC orders_per_minute", "Sink " + EVIL),
        ("orders-per-minute", "job " + EVIL),
    ]
    with open(os.path.join(demo, "flink-window-bottleneck.json"), encoding="utf-8") as f:
        write_json(os.path.join(out, "flink.json"), replace_all(json.load(f), flink))
    dbt = [("fct_orders", "fct_" + EVIL), ("Thread-1 (worker)", "Thread-1 " + EVIL)]
    os.makedirs(os.path.join(out, "dbt"), exist_ok=True)
    for name in sorted(os.listdir(os.path.join(demo, "dbt"))):
        with open(os.path.join(demo, "dbt", name), encoding="utf-8") as f:
            write_json(os.path.join(out, "dbt", name), replace_all(json.load(f), dbt))
    os.makedirs(os.path.join(out, "rules"), exist_ok=True)
    with open(os.path.join(out, "rules", "names.lua"), "w", encoding="utf-8") as f:
        f.write(RULE)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
