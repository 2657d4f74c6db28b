-- optipipe.history: what the history rules (spark.regression,
-- flink.regression, mixed.change-outcome) share about a job's earlier
-- runs: one way to get them, and the differences between two runs' config.
--
-- Pure Lua 5.4 (base/table/math/string) so it runs inside the sandbox;
-- arguments are read, never modified. docs/lua-helpers.md#optipipehistory.

local M = {}

local DEFAULT_LIMIT = 30

--- The earlier runs of run's job, newest first, at most limit (default 30):
--- the run store's (ctx.history, docs/history.md) when it has any, else the
--- inputs given together with run (run.history, which is oldest first).
function M.earlier(run, ctx, limit)
  limit = limit or DEFAULT_LIMIT
  if type(ctx.history) == "function" then
    local h = ctx.history(run, { limit = limit })
    if #h > 0 then
      return h
    end
  end
  local out, hist = {}, run.history or {}
  for i = #hist, 1, -1 do
    if #out >= limit then
      break
    end
    out[#out + 1] = hist[i]
  end
  return out
end

--- The earlier runs of runs (newest first) that pass keep(run), in order.
function M.filter(runs, keep)
  local out = {}
  for _, h in ipairs(runs) do
    if keep(h) then
      out[#out + 1] = h
    end
  end
  return out
end

--- f(h) for each run of runs that gives a number, in order (nil skipped).
function M.values(runs, f)
  local out = {}
  for _, h in ipairs(runs) do
    local v = f(h)
    if type(v) == "number" and v == v then
      out[#out + 1] = v
    end
  end
  return out
end

--- The config keys whose value differs between before and after (string
--- maps), sorted, as { key, from, to } (from or to nil when unset), leaving
--- out keys for which ignore(key) is true.
function M.config_diff(before, after, ignore)
  local keys, seen = {}, {}
  local function add(k)
    if not seen[k] and not (ignore and ignore(k)) then
      seen[k] = true
      keys[#keys + 1] = k
    end
  end
  for k, v in pairs(after or {}) do
    if (before or {})[k] ~= v then
      add(k)
    end
  end
  for k in pairs(before or {}) do
    if (after or {})[k] == nil then
      add(k)
    end
  end
  table.sort(keys)
  local out = {}
  for i, k in ipairs(keys) do
    out[i] = { key = k, from = (before or {})[k], to = (after or {})[k] }
  end
  return out
end

--- "k: a -> b, k2: unset -> c" for a config_diff result, at most max entries
--- (then "and N more").
function M.describe_diff(diff, max)
  local parts = {}
  for i, d in ipairs(diff) do
    if i > max then
      parts[#parts + 1] = ("and %d more"):format(#diff - max)
      break
    end
    parts[#parts + 1] = ("%s %s -> %s"):format(d.key, d.from or "unset", d.to or "unset")
  end
  return table.concat(parts, ", ")
end

return M
