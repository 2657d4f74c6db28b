-- sparkdetect: what spark.executor-memory, spark.recomputation and
-- spark.sql-query share: out-of-memory evidence from the failure and
-- executor series, the SQL operators of one execution (series
-- sql_operators) and the stage nodes by the scan they read.
-- Model names: docs/model-spark.md ("Peaks", "SQL plans", "Scans").
local graph = require "optipipe.graph"

local M = {}

-- The heap ran out: a task failed with java.lang.OutOfMemoryError.
local HEAP_OOM = { "OutOfMemoryError" }
-- The container was killed for its size (heap + overhead): YARN's and
-- Kubernetes' words, and the exit code of a SIGKILL.
local KILLED = { "exceeding physical memory limits", "exceeding memory limits",
  "OOMKilled", "exit code 137", "exit status: 137", "Exit status: 137" }

local function has_any(text, words)
  for _, w in ipairs(words) do
    if text:find(w, 1, true) then
      return w
    end
  end
  return nil
end

-- { heap = {n, first}, killed = {n, first} }: the task failures and
-- executor removals that say the JVM ran out of memory, each with a
-- count and its first text.
function M.oom_evidence(run)
  local out = { heap = { n = 0 }, killed = { n = 0 } }
  local function add(kind, text, n)
    local e = out[kind]
    e.n = e.n + (n or 1)
    e.first = e.first or text
  end
  for _, f in ipairs(run.series.task_failures or {}) do
    local d = f.detail or ""
    if has_any(d, KILLED) then
      add("killed", d, f.count)
    elseif has_any(d, HEAP_OOM) then
      add("heap", d, f.count)
    end
  end
  for _, e in ipairs(run.series.executors or {}) do
    local r = e.removed_reason or ""
    if has_any(r, KILLED) then
      add("killed", ("executor %s: %s"):format(e.executor_id, r), 1)
    end
  end
  return out
end

-- The operators of each SQL execution: { ["sql-3"] = { op, ... } }.
function M.operators(run)
  local by = {}
  for _, op in ipairs(run.series.sql_operators or {}) do
    local list = by[op.sql]
    if not list then
      list = {}
      by[op.sql] = list
    end
    list[#list + 1] = op
  end
  return by
end

-- SQL execution nodes (kind "sql").
function M.sqls(run)
  return graph.of_kind(run, "sql")
end

-- 'SQL query 3 "daily report"' for messages: the description's first
-- line, cut at 60 characters (notebooks put whole cells there).
function M.sql_label(n)
  local id = n.id:gsub("^sql%-", "")
  local name = n.name ~= n.id and (n.name or ""):match("^%s*([^\n]*)") or ""
  name = name:gsub("%s+$", "")
  if #name > 60 then
    local cut = 57
    while cut > 1 and (name:byte(cut + 1) or 0) >= 0x80 and (name:byte(cut + 1) or 0) < 0xC0 do
      cut = cut - 1 -- never inside a UTF-8 character
    end
    name = name:sub(1, cut) .. "..."
  end
  if name == "" then
    return "SQL query " .. id
  end
  return ("SQL query %s \"%s\""):format(id, name)
end

-- Databricks sizes executors by the worker type, not spark.executor.memory.
function M.databricks(run)
  if run.attrs and run.attrs.platform then
    return run.attrs.platform == "databricks"
  end
  for k in pairs(run.config) do
    if k:find("^spark%.databricks%.") then
      return true
    end
  end
  return false
end

-- The time an operator is known to take, ms (its own time metrics).
function M.op_ms(op)
  return math.max(op.duration_ms or 0, op.scan_ms or 0, op.build_ms or 0,
    op.sort_ms or 0, op.collect_ms or 0)
end

-- "3, 5, 7 and 4 more"
function M.list(items, max)
  local out = {}
  for i = 1, math.min(#items, max) do
    out[#out + 1] = tostring(items[i])
  end
  local s = table.concat(out, ", ")
  if #items > max then
    s = s .. (" and %d more"):format(#items - max)
  end
  return s
end

return M
