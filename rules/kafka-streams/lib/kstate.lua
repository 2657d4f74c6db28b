-- kstate: what the state-store rules share about the Kafka Streams and
-- Samza model (docs/model-kafka-streams.md): stores grouped by task, a
-- task's state, the scrape samples of a node, and each engine's setting
-- names. Read-only over the run; pure Lua for the sandbox.
local graph = require "optipipe.graph"
local units = require "optipipe.units"

local M = {}

-- The engine's own setting for a purpose, per source. Samza's standby
-- tasks need host affinity; its restore is shortened by host affinity too.
local KEYS = {
  ["kafka-streams"] = {
    standbys = "num.standby.replicas",
    recovery_lag = "acceptable.recovery.lag",
    warmups = "max.warmup.replicas",
    probing = "probing.rebalance.interval.ms",
    config_setter = "rocksdb.config.setter",
  },
  samza = {
    standbys = "job.standbytasks.replication.factor",
    host_affinity = "job.host-affinity.enabled",
  },
}

--- The setting name for purpose on run's engine, or nil.
function M.key(run, purpose)
  return (KEYS[run.source] or {})[purpose]
end

--- The setting's value as a number (nil when unset or not a number).
function M.cfg_num(run, purpose)
  local k = M.key(run, purpose)
  return k and tonumber((run.config or {})[k]) or nil
end

--- The setting's raw value (nil when unset).
function M.cfg(run, purpose)
  local k = M.key(run, purpose)
  return k and (run.config or {})[k] or nil
end

--- Kafka Streams' defaults (StreamsConfig), used when the config was not
--- given with the scrapes: said so in the messages that use them.
M.DEFAULTS = {
  recovery_lag = 10000,
  probing = 600000,
}

--- Whether a task or store node is a standby (attrs.role).
function M.is_standby(n)
  return (n.attrs or {}).role == "standby"
end

--- The store nodes of run, in model order.
function M.stores(run)
  return graph.of_kind(run, "store")
end

--- The bytes a store holds: live SST files, else all SST files.
function M.store_bytes(s)
  return s.metrics.live_sst_bytes or s.metrics.total_sst_bytes
end

-- The task a store belongs to: its parent task node, else its task_id.
local function task_key(run, s)
  for _, p in ipairs(s.parents or {}) do
    local t = run.by_id[p]
    if t and t.kind == "task" then
      return t.id, t
    end
  end
  local a = s.attrs or {}
  if a.task_id then
    return (a.thread_id or a.instance or "") .. "/" .. a.task_id, nil
  end
  return nil
end

--- Per task, its state: { key, node (task node or nil), task_id, standby,
--- bytes, keys, restore_time_ms, stores = { store nodes } }, in model
--- order. bytes / keys / restore_time_ms are nil when no store had them.
function M.tasks(run)
  local out, by = {}, {}
  for _, s in ipairs(M.stores(run)) do
    local key, node = task_key(run, s)
    if key then
      local t = by[key]
      if not t then
        t = { key = key, node = node, stores = {},
              task_id = (node and node.attrs or {}).task_id or (s.attrs or {}).task_id,
              standby = M.is_standby(node or s) }
        by[key] = t
        out[#out + 1] = t
      end
      t.stores[#t.stores + 1] = s
      local b, k, r = M.store_bytes(s), s.metrics.estimated_keys, s.metrics.restore_time_ms
      if b then t.bytes = (t.bytes or 0) + b end
      if k then t.keys = (t.keys or 0) + k end
      if r then t.restore_time_ms = (t.restore_time_ms or 0) + r end
    end
  end
  return out
end

--- The task nodes of run (kind task), in model order.
function M.task_nodes(run)
  return graph.of_kind(run, "task")
end

-- run -> { [node id] = its samples, oldest first }, built once per run:
-- rules ask per node, and a scan per node would be nodes x samples.
local by_node = setmetatable({}, { __mode = "k" })

--- The samples (run.series.samples) of node id, oldest first (shared
--- between calls: read them, never modify).
function M.samples(run, id)
  local ix = by_node[run]
  if not ix then
    ix = {}
    for _, r in ipairs((run.series or {}).samples or {}) do
      if type(r.node) == "string" and type(r.t_ms) == "number" then
        local l = ix[r.node]
        if not l then
          l = {}
          ix[r.node] = l
        end
        l[#l + 1] = r
      end
    end
    for _, l in pairs(ix) do
      table.sort(l, function(a, b) return a.t_ms < b.t_ms end)
    end
    by_node[run] = ix
  end
  return ix[id] or {}
end

--- xs (t_ms) and ys of metric over node id's samples that have it.
function M.series(run, id, metric)
  local xs, ys = {}, {}
  for _, r in ipairs(M.samples(run, id)) do
    local v = r[metric]
    if type(v) == "number" and v == v then
      xs[#xs + 1], ys[#ys + 1] = r.t_ms, v
    end
  end
  return xs, ys
end

--- The changelog partitions of each store: { [store id] = { changelog
--- nodes } }, matched by instance, store name and the partition the task
--- id ends in (`0_3` reads partition 3 of `<app>-<store>-changelog`).
function M.changelogs(run)
  local by = {}
  for _, n in ipairs(run.nodes) do
    local a = n.attrs or {}
    if n.kind == "changelog" and a.store and a.partition then
      local k = (a.instance or "") .. "\0" .. a.store .. "\0" .. a.partition
      by[k] = by[k] or {}
      by[k][#by[k] + 1] = n
    end
  end
  local out = {}
  for _, s in ipairs(M.stores(run)) do
    local a = s.attrs or {}
    local part = a.task_id and a.task_id:match("_(%d+)$")
    local c = part and a.store and by[(a.instance or "") .. "\0" .. a.store .. "\0" .. part]
    if c then
      out[s.id] = c
    end
  end
  return out
end

--- The node's task id for messages: the task id and the instance.
function M.label(n)
  local a = n.attrs or {}
  local what = a.store and ("store '%s' of task %s"):format(a.store, a.task_id or "?")
    or a.task_id and ("task %s"):format(a.task_id) or (n.name or n.id)
  if a.instance then
    what = what .. " on " .. a.instance
  end
  return what
end

--- Bytes as text, or keys when only they are known.
function M.size_text(bytes, keys)
  if bytes then
    return units.format_bytes(bytes)
  end
  return units.format_count(keys, "key")
end

return M
