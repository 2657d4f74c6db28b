-- dbt.failures: errors, failing and warning tests (with failure counts)
-- and what was skipped because of them, one finding per root cause: a
-- failed model, the failing tests of one model, a test whose SQL broke.
-- docs/rules/dbt.failures.md
local du = require "dbtutil"

local function first_line(s)
  if not s then
    return "no message"
  end
  return (s:gsub("%s+", " "):sub(1, 300))
end

-- What a test checks, as (id, name): attached_node (also when that model
-- did not run, as in `dbt test`), else its first parent that builds a
-- relation; nil when unknown (no manifest).
local function tested(run, t)
  local a = t.attrs.attached_node
  if a then
    local n = run.by_id[a]
    return a, n and du.name(n) or (a:match("^[^.]+%.[^.]+%.(.+)$") or a)
  end
  for _, pid in ipairs(t.parents) do
    local p = run.by_id[pid]
    if p and du.builds(p) then
      return p.id, du.name(p)
    end
  end
  return nil
end

-- Root causes: failed nodes and models with failing tests.
local function causes(run)
  local errors, tests_of, warns_of, test_errors = {}, {}, {}, {}
  for _, n in ipairs(run.nodes) do
    local s = du.raw(n)
    if du.is_test(n) then
      if s == "fail" or s == "warn" then
        local id, name = tested(run, n)
        id, name = id or n.id, name or du.name(n)
        local map = s == "fail" and tests_of or warns_of
        if not map[id] then
          map[id] = { name = name, tested = id ~= n.id }
        end
        table.insert(map[id], n)
      elseif s == "error" then
        test_errors[#test_errors + 1] = n
      end
    elseif s == "error" or s == "partial success" or s == "runtime error" then
      errors[#errors + 1] = n
    end
  end
  return errors, tests_of, warns_of, test_errors
end

-- For each skipped node, the causes upstream of it (failed ancestors and
-- ancestors with failing tests), walking through other skipped nodes.
local function blame(run, is_cause)
  local by_cause, orphans = {}, {}
  for _, n in ipairs(run.nodes) do
    if du.raw(n) == "skipped" then
      local seen, queue, found = { [n.id] = true }, { n }, {}
      local i = 1
      while queue[i] do
        local cur = queue[i]
        i = i + 1
        for _, pid in ipairs(cur.parents) do
          local p = run.by_id[pid]
          if p and not seen[pid] then
            seen[pid] = true
            if is_cause[pid] then
              found[#found + 1] = pid
            elseif du.raw(p) == "skipped" then
              queue[#queue + 1] = p
            end
          end
        end
      end
      if #found == 0 then
        orphans[#orphans + 1] = n
      end
      for _, c in ipairs(found) do
        by_cause[c] = by_cause[c] or {}
        table.insert(by_cause[c], n)
      end
    end
  end
  return by_cause, orphans
end

local function names_of(nodes)
  local out = {}
  for _, n in ipairs(nodes) do
    out[#out + 1] = du.name(n)
  end
  return out
end

local function skipped_text(list)
  if not list or #list == 0 then
    return "", 0
  end
  return ("; %s skipped because of it: %s"):format(du.plural(#list, "node"),
    du.list(names_of(list), 6)), #list
end

local function test_list(tests)
  local out, rows = {}, 0
  for _, t in ipairs(tests) do
    local f = t.metrics.failures
    rows = rows + (f or 0)
    out[#out + 1] = f and ("%s (%s)"):format(du.name(t), du.plural(math.floor(f), "row"))
      or du.name(t)
  end
  return du.list(out, 6), rows
end

local function sorted_keys(t)
  local k = {}
  for key in pairs(t) do
    k[#k + 1] = key
  end
  table.sort(k)
  return k
end

return {
  id = "dbt.failures",
  title = "Errors, failing tests and what they skipped",
  severity = "error",
  sources = { "dbt" },
  tags = { "reliability", "tests" },
  description = "Grouped by root cause; skipped nodes are traced to failures upstream (needs the manifest's DAG).",
  options = {},
  check = function(run, ctx)
    if du.is_freshness(run) then
      return
    end
    local errors, tests_of, warns_of, test_errors = causes(run)
    local is_cause = {}
    for _, n in ipairs(errors) do
      is_cause[n.id] = true
    end
    for id in pairs(tests_of) do
      is_cause[id] = true
    end
    local by_cause, orphans = blame(run, is_cause)

    for _, n in ipairs(errors) do
      local skipped, k = skipped_text(by_cause[n.id])
      ctx.report {
        node = n.id,
        message = ("%s %s failed (%s): %s%s"):format(n.kind, du.name(n), du.raw(n),
          first_line(n.attrs.message), skipped),
        recommendation = ("Fix %s (%s) and rerun it with its descendants: dbt build "
          .. "--select %s+ (or dbt retry)."):format(du.name(n), du.target(n), du.name(n)),
        evidence = { status = du.raw(n), skipped = k },
      }
    end
    for _, id in ipairs(sorted_keys(tests_of)) do
      local tests = tests_of[id]
      local list, rows = test_list(tests)
      local skipped, k = skipped_text(by_cause[id])
      local on = tests.tested and (" on " .. tests.name) or ""
      ctx.report {
        node = run.by_id[id] and id or tests[1].id,
        message = ("%s%s failed: %s%s"):format(du.plural(#tests, "test"), on, list, skipped),
        recommendation = ("Inspect the failing rows of %s (dbt test --select %s "
          .. "--store-failures) and fix the data or the model; a test that may fail "
          .. "without blocking the build can be configured severity: warn."):format(
          tests.name, tests.name),
        evidence = { failed_tests = #tests, failing_rows = rows, skipped = k },
      }
    end
    for _, id in ipairs(sorted_keys(warns_of)) do
      local tests = warns_of[id]
      local list, rows = test_list(tests)
      local on = tests.tested and (" on " .. tests.name) or ""
      ctx.report {
        node = run.by_id[id] and id or tests[1].id,
        severity = "warning",
        message = ("%s%s warned: %s"):format(du.plural(#tests, "test"), on, list),
        recommendation = ("Look at the rows the %s reports on %s before they become "
          .. "errors, or tighten warn_if/error_if."):format(
          #tests == 1 and "test" or "tests", tests.name),
        evidence = { warned_tests = #tests, failing_rows = rows },
      }
    end
    for _, t in ipairs(test_errors) do
      ctx.report {
        node = t.id,
        message = ("Test %s could not run (its SQL failed): %s"):format(du.name(t),
          first_line(t.attrs.message)),
        recommendation = ("Fix the test's SQL in %s; until then it checks nothing."):format(
          du.target(t)),
        evidence = { status = "error" },
      }
    end
    if #orphans > 0 then
      ctx.report {
        severity = "info",
        message = ("%s skipped without a failure upstream in this run: %s"):format(
          du.plural(#orphans, "node was", "nodes were"), du.list(names_of(orphans), 6)),
        recommendation = "Check --fail-fast, a failed on-run-start hook, or (without a "
          .. "manifest) which upstream node failed in the log.",
        evidence = { skipped = #orphans },
      }
    end
  end,
}
