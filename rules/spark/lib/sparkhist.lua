-- sparkhist: how spark.regression compares one run of an app with its
-- earlier runs: a stage's identity across runs (stage ids shift when a job
-- is added), the resources and input volume a run had, and the config keys
-- that differ on every run anyway. Works on the current run and on the
-- run store's entries alike (docs/history.md: no parents, no series).
-- docs/rules/spark.regression.md

local su = require "sparkutil"

local M = {}

-- "stage-12-1" -> 12, 1 (the node id of a stage attempt, docs/model-spark.md).
local function stage_ids(n)
  local sid, att = tostring(n.id):match("^stage%-(%d+)%-(%d+)$")
  local a = n.attrs or {}
  return tonumber(a.stage_id or sid), tonumber(a.attempt or att) or 0
end

--- The stages of run that succeeded, by identity: "<stage name>#<k>" where
--- k counts the stages of that name in stage-id order (the k-th
--- "count at Orders.scala:57"). Of several attempts of one stage the last
--- counts. Returns a map identity -> node and the identities in order.
function M.stages(run)
  local last, order = {}, {}
  for _, n in ipairs(run.nodes or {}) do
    if n.kind == "stage" then
      local sid, att = stage_ids(n)
      if sid and (not last[sid] or att >= last[sid].att) then
        if not last[sid] then
          order[#order + 1] = sid
        end
        last[sid] = { node = n, att = att }
      end
    end
  end
  table.sort(order)
  local by_key, keys, seen = {}, {}, {}
  for _, sid in ipairs(order) do
    local n = last[sid].node
    local name = n.name or "?"
    seen[name] = (seen[name] or 0) + 1
    if n.status == "succeeded" then
      local key = ("%s#%d"):format(name, seen[name])
      by_key[key] = n
      keys[#keys + 1] = key
    end
  end
  return by_key, keys
end

--- Executor cores the run had at once: the executor timeline's maximum,
--- else executors x spark.executor.cores; nil when unknown.
function M.cores(run)
  local c = su.total_cores(run)
  if c then
    return c
  end
  local ex = run.metrics.executors_max
  local per = tonumber(run.config["spark.executor.cores"] or "")
  if ex and ex > 0 and per and per > 0 then
    return ex * per
  end
  return nil
end

--- "4 x 4" (executors x cores per executor) for messages, or nil.
function M.shape(run)
  local ex, c = run.metrics.executors_max, M.cores(run)
  if ex and ex > 0 and c then
    return ("%d x %d"):format(ex, c // ex)
  end
  return nil
end

--- The resources a run used: executor core-ms (cores x lifetime), else
--- wall time x cores; nil when the cores are unknown.
function M.core_ms(run)
  local v = run.metrics.executor_core_ms
  if v and v > 0 then
    return v
  end
  local c = M.cores(run)
  if c and run.duration_ms then
    return run.duration_ms * c
  end
  return nil
end

--- The input volume of a run (bytes read from storage), nil when none.
function M.input(run)
  local v = run.metrics.input_bytes
  if v and v > 0 then
    return v
  end
  return nil
end

--- What a stage read: input plus shuffle bytes; nil when nothing.
function M.stage_input(n)
  local m = n.metrics or {}
  local v = (m.input_bytes or 0) + (m.shuffle_read_bytes or 0)
  return v > 0 and v or nil
end

--- A stage's work: Σ task run time (executor_run_ms), which does not
--- change with the number of executors; else its wall time.
function M.stage_work(n)
  return (n.metrics or {}).executor_run_ms or n.duration_ms
end

--- Whether a config key changes on every run by itself (ids, hosts,
--- ports, times), so a difference in it says nothing: its name matches one
--- of the Lua patterns.
function M.volatile(patterns)
  return function(key)
    for _, p in ipairs(patterns) do
      if key:match(p) then
        return true
      end
    end
    return false
  end
end

return M
