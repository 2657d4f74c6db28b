-- flinkutil: what the Flink rules share. Config access with the key names
-- the run's Flink version understands, checkpoint selection, window sizes
-- and watermark bounds parsed from operator names, and the watermark-stall
-- condition that both flink.watermark-retention (to report it) and
-- flink.bottleneck (to not prescribe parallelism for it) evaluate.
-- Model names: docs/model-flink.md.

local units = require "optipipe.units"
local graph = require "optipipe.graph"

local M = {}

M.LONG_MAX = math.maxinteger

-- --- versions and config keys -------------------------------------------

-- Major and minor of run.engine_version ("1.18.1" -> 1, 18), or nil.
function M.version(run)
  local v = run.engine_version
  if type(v) ~= "string" then
    return nil
  end
  local major, minor = v:match("^(%d+)%.(%d+)")
  if not major then
    return nil
  end
  return tonumber(major), tonumber(minor)
end

local function older_than(run, major, minor)
  local a, b = M.version(run)
  if not a then
    return false
  end
  return a < major or (a == major and b < minor)
end

-- Canonical (1.20/2.x) key -> { old key, first version with the new key },
-- from the one table of renames (flinkkeys.lua; the Flink plugin reads it too).
local OLD_KEYS = {}
for _, row in ipairs(require "flinkkeys") do
  OLD_KEYS[row[2]] = OLD_KEYS[row[2]] or { row[1], row[3], row[4] }
end

-- The key to write in a recommendation: the old spelling for clusters
-- older than the rename, the canonical one otherwise (and when unknown).
function M.key(run, canonical)
  local old = OLD_KEYS[canonical]
  if old and older_than(run, old[2], old[3]) then
    return old[1]
  end
  return canonical
end

function M.cfg(run, key)
  return run.config[key]
end

-- true / false / nil (unset).
function M.cfg_bool(run, key)
  local v = run.config[key]
  if v == nil then
    return nil
  end
  v = v:lower()
  return v == "true"
end

function M.cfg_ms(run, key)
  local v = run.config[key]
  if v == nil then
    return nil
  end
  return (units.parse_duration(v))
end

-- Whether /jobmanager/config was exported: without it an absent key means
-- "unknown", not "Flink's default".
function M.has_cluster_config(run)
  return (run.metrics.cluster_config_keys or 0) > 0
end

-- --- checkpoint settings -------------------------------------------------

-- true, false (interval = Long.MAX_VALUE) or nil (nothing exported).
function M.checkpointing_enabled(run)
  local m = run.metrics.checkpointing_enabled
  if m ~= nil then
    return m ~= 0
  end
  if run.config["execution.checkpointing.interval"] then
    return true
  end
  return nil
end

function M.interval_ms(run)
  return run.metrics.checkpoint_interval_ms or M.cfg_ms(run, "execution.checkpointing.interval")
end

function M.timeout_ms(run)
  return run.metrics.checkpoint_timeout_ms or M.cfg_ms(run, "execution.checkpointing.timeout")
end

function M.min_pause_ms(run)
  return run.metrics.checkpoint_min_pause_ms or M.cfg_ms(run, "execution.checkpointing.min-pause")
end

-- "hashmap", "rocksdb", "forst", another name, or nil.
function M.backend(run)
  local b = run.config["state.backend.type"]
  if b == nil then
    return nil
  end
  b = b:lower()
  if b == "filesystem" or b == "jobmanager" or b == "memory" or b:find("hashmap", 1, true) then
    return "hashmap"
  end
  if b:find("rocksdb", 1, true) then
    return "rocksdb"
  end
  if b:find("forst", 1, true) then
    return "forst"
  end
  return b
end

function M.incremental(run)
  return M.cfg_bool(run, "execution.checkpointing.incremental")
end

-- --- checkpoints -----------------------------------------------------------

-- Records of the checkpoints series with that status ("COMPLETED" by
-- default), savepoints left out, in id order.
function M.checkpoints(run, status)
  status = status or "COMPLETED"
  local out = {}
  for _, c in ipairs(run.series.checkpoints or {}) do
    if c.status == status and not c.is_savepoint then
      out[#out + 1] = c
    end
  end
  return out
end

-- The full state size of a checkpoint record: state_size_bytes (1.15+);
-- before 1.15 only the uploaded size is known, which is the full size
-- unless checkpoints are incremental.
function M.full_size(run, c)
  if c.state_size_bytes then
    return c.state_size_bytes
  end
  if M.incremental(run) ~= true then
    return c.checkpointed_size_bytes
  end
  return nil
end

function M.latest_completed(run)
  local cks = M.checkpoints(run)
  return cks[#cks]
end

-- --- nodes -----------------------------------------------------------------

-- The ratio the Web UI shows (max over subtasks), else the mean.
function M.ratio(node, name)
  local m = node.metrics
  return m[name .. "_max"] or m[name]
end

function M.is_keyed(node)
  local s = node.attrs.ship_strategy
  return s ~= nil and s:find("HASH", 1, true) ~= nil
end

local function text_of(node)
  return (node.name or "") .. "\n" .. (node.attrs.description or "")
end

-- Operators whose state waits for event time (watermarks) to be released.
local EVENT_TIME_PATTERNS = {
  "EventTimeWindows", "EventTimeSessionWindows", "GroupWindowAggregate",
  "WindowAggregate", "WindowJoin", "WindowRank", "WindowDeduplicate",
  "IntervalJoin", "OverAggregate", "CepOperator", "Match%(",
  "TumblingGroupWindow", "SlidingGroupWindow", "SessionGroupWindow",
}

function M.is_event_time_op(node)
  local t = text_of(node)
  if t:find("ProcessingTimeWindows", 1, true) then
    return false
  end
  for _, p in ipairs(EVENT_TIME_PATTERNS) do
    if t:find(p) then
      return true
    end
  end
  return false
end

-- Window size (ms) from DataStream names such as
-- TumblingEventTimeWindows(60000) or SQL plans (size=[1 min],
-- TumblingGroupWindow('w$, ts, 60000), RANGE BETWEEN 60000 PRECEDING).
function M.window_size_ms(node)
  local t = text_of(node)
  local n = t:match("EventTimeWindows%((%d+)")
      or t:match("EventTimeSessionWindows%((%d+)")
      or t:match("GroupWindow%([^,]*,[^,]*,%s*(%d+)")
      or t:match("RANGE? BETWEEN (%d+) PRECEDING")
  if n then
    return tonumber(n)
  end
  local s = t:match("max_size=%[([^%]]+)%]") or t:match("[^_]size=%[([^%]]+)%]")
      or t:match("gap=%[([^%]]+)%]")
  if s then
    return (units.parse_duration(s))
  end
  return nil
end

-- The out-of-orderness bound of a SQL WatermarkAssigner
-- ("watermark=[(ts - 5000:INTERVAL SECOND)]", ms) found in any vertex.
function M.out_of_orderness_ms(run)
  for _, n in ipairs(run.nodes) do
    local d = n.attrs.description or ""
    local ms = d:match("WatermarkAssigner%b()") and d:match("watermark=%[%(?[^%]]-%-%s*(%d+):INTERVAL")
    if ms then
      return tonumber(ms), n
    end
  end
  return nil
end

function M.is_sql(run)
  for _, n in ipairs(run.nodes) do
    local t = text_of(n)
    if t:find("TableSourceScan", 1, true) or t:find("WatermarkAssigner", 1, true)
        or (n.name or ""):find("%[%d+%]") then
      return true
    end
  end
  return false
end

-- How long the job has been running at capture time (ms), or nil.
function M.running_ms(run)
  local now = run.metrics.captured_at
  local since = run.metrics.running_at or run.started_at
  if not now or not since then
    return nil
  end
  return now - since
end

-- Subtask indexes of a vertex's watermark records matching pred.
local function subtasks_where(run, vid, kind, pred)
  local out = {}
  for _, w in ipairs(run.series.watermarks or {}) do
    if w.vertex == vid and w.kind == kind and pred(w) then
      out[#out + 1] = w.subtask
    end
  end
  return out
end

local function join(t)
  local s = {}
  for i, v in ipairs(t) do
    s[i] = tostring(v)
  end
  return table.concat(s, ", ")
end

-- --- the watermark-stall condition ----------------------------------------

-- Defaults shared by the two rules that evaluate it.
M.WATERMARK_DEFAULTS = {
  lag_factor = 10,          -- lag above this many window sizes holds windows open
  min_lag = "10 min",       -- lag threshold when the window size is unknown
  min_running = "10 min",   -- watermarks need time to appear after a start
  bp_high = 0.5,            -- backpressure above this explains lag by capacity
  busy_high = 0.8,
}

local function opt(opts, k)
  local v = opts and opts[k]
  if v == nil then
    v = M.WATERMARK_DEFAULTS[k]
  end
  return v
end

local function ms_opt(opts, k)
  return (units.parse_duration(opt(opts, k)))
end

-- Whether the vertex or anything upstream is saturated: then a lagging
-- watermark is a capacity problem (flink.bottleneck's), not a watermark one.
-- nil when no ratios were exported.
local function saturated(run, node, opts)
  local known, hot = false, false
  local ids = graph.upstream(run, node.id)
  table.insert(ids, 1, node.id)
  for _, id in ipairs(ids) do
    local n = run.by_id[id]
    local bp = n and M.ratio(n, "backpressure_ratio")
    local busy = n and M.ratio(n, "busy_ratio")
    if bp or busy then
      known = true
    end
    if (bp and bp > opt(opts, "bp_high")) or (id == node.id and busy and busy >= opt(opts, "busy_high")) then
      hot = n
    end
    -- a source that cannot read faster (flink.source-bound) is capacity too
    if n and id ~= node.id and M.saturated_source(n, opts) then
      hot = n
    end
  end
  if not known then
    return nil
  end
  return hot
end

-- The upstream vertex (nearest first) whose subtasks emit no watermark or
-- lag their siblings by more than limit_ms: where the stall starts.
local function origin(run, node, limit_ms)
  for _, id in ipairs(graph.upstream(run, node.id)) do
    local n = run.by_id[id]
    local m = n and n.metrics or {}
    if (m.subtasks_without_output_watermark or 0) > 0 then
      local subs = subtasks_where(run, id, "output", function(w) return not w.has_watermark end)
      return { node = n, kind = "missing", subtasks = subs }
    end
    if m.output_watermark_spread_ms and m.output_watermark_spread_ms > limit_ms then
      local lo = m.output_watermark_min_ms
      local subs = subtasks_where(run, id, "output", function(w)
        return w.has_watermark and w.watermark_ms < lo + limit_ms
      end)
      return { node = n, kind = "lagging", subtasks = subs, behind_ms = m.output_watermark_spread_ms }
    end
  end
  return nil
end

local function targets(run)
  local out = {}
  for _, n in ipairs(run.nodes) do
    if M.is_event_time_op(n) and n.metrics.watermark_subtasks then
      out[#out + 1] = n
    end
  end
  if #out == 0 then
    for _, n in ipairs(run.nodes) do
      if #n.parents > 0 and n.metrics.watermark_subtasks then
        out[#out + 1] = n
      end
    end
  end
  return out
end

-- Every event-time vertex whose windows are held open by watermarks, as
-- { node, kind = "missing" | "lagging", ...numbers }, in node order.
-- "missing": subtasks of the vertex have no watermark at all while data
-- flows. "lagging": its watermark trails capture time by more than
-- lag_factor window sizes (or min_lag) while nothing on the way is
-- saturated. Needs a running job, /watermarks and (for "lagging")
-- backpressure or busy ratios; without them it returns nothing.
function M.watermark_stalls(run, opts)
  local out = {}
  if run.status ~= "running" then
    return out
  end
  local up = M.running_ms(run)
  if up and up < ms_opt(opts, "min_running") then
    return out
  end
  local bound = M.out_of_orderness_ms(run)
  for _, n in ipairs(targets(run)) do
    local m = n.metrics
    local size = M.window_size_ms(n)
    local limit = size and math.max(size * opt(opts, "lag_factor"), size) or ms_opt(opts, "min_lag")
    local flowing = (m.records_in or 1) > 0 and (m.records_in_per_s or 1) > 0
    local s
    if (m.subtasks_without_watermark or 0) > 0 and flowing then
      s = { node = n, kind = "missing", without = m.subtasks_without_watermark,
            subtasks_total = m.watermark_subtasks,
            subtasks = subtasks_where(run, n.id, "input", function(w) return not w.has_watermark end) }
    elseif m.watermark_lag_ms and m.watermark_lag_ms > limit then
      local hot = saturated(run, n, opts)
      if hot == false then
        s = { node = n, kind = "lagging", lag_ms = m.watermark_lag_ms, limit_ms = limit }
        if m.watermark_spread_ms and m.watermark_spread_ms > limit then
          s.spread_ms = m.watermark_spread_ms
          s.subtasks = subtasks_where(run, n.id, "input", function(w)
            return w.has_watermark and w.watermark_ms < m.watermark_min_ms + limit
          end)
        end
      end
    end
    if s then
      s.window_ms = size
      s.origin = origin(run, n, limit)
      if bound and s.kind == "lagging" and bound * 2 >= (s.lag_ms or 0) then
        s.out_of_orderness_ms = bound
      end
      out[#out + 1] = s
    end
  end
  return out
end

-- --- sizing ------------------------------------------------------------------

-- The smallest divisor of n that is >= p (key groups or partitions spread
-- evenly over the subtasks); n itself when p exceeds it.
function M.divisor_at_least(p, n)
  if p >= n then
    return n
  end
  for q = math.max(p, 1), n do
    if n % q == 0 then
      return q
    end
  end
  return n
end

-- The partitions a source reads: the option source_partitions when set
-- (> 0), else source_partitions of the model (the distinct topic
-- partitions its Kafka offset metric names name). Returns the count and
-- where it came from ("option" or "metric names"), or nil.
function M.source_partitions(node, opts)
  local o = opts and opts.source_partitions
  if o and o > 0 then
    return math.floor(o), "option"
  end
  local m = node.metrics.source_partitions
  if m and m > 0 then
    return m, "metric names"
  end
  return nil
end

-- --- chains ------------------------------------------------------------------

-- The operators of a vertex that is an operator chain ("A -> B -> C"), or
-- nil for a single operator.
function M.chain_ops(node)
  local name = node.name or ""
  if not name:find(" -> ", 1, true) then
    return nil
  end
  local ops = {}
  for op in (name .. " -> "):gmatch("(.-) %-> ") do
    ops[#ops + 1] = op
  end
  return #ops > 1 and ops or nil
end

-- --- per-subtask checkpoint details ------------------------------------------

-- The checkpoint_subtasks records of completed checkpoints, by checkpoint
-- id: { ids = { newest first }, [id] = { [vertex] = { records by subtask } } }.
-- nil when no /checkpoints/details/<id>/subtasks/<vid> was exported.
function M.subtask_details(run)
  local recs = run.series.checkpoint_subtasks
  if not recs or #recs == 0 then
    return nil
  end
  local status = {}
  for _, c in ipairs(run.series.checkpoints or {}) do
    status[c.id] = c.status
  end
  local out, ids = { ids = {} }, {}
  for _, r in ipairs(recs) do
    local st = status[r.checkpoint_id]
    if (st == nil or st == "COMPLETED") and r.status == "completed" then
      local ck = out[r.checkpoint_id]
      if not ck then
        ck = {}
        out[r.checkpoint_id] = ck
        ids[#ids + 1] = r.checkpoint_id
      end
      ck[r.vertex] = ck[r.vertex] or {}
      table.insert(ck[r.vertex], r)
    end
  end
  if #ids == 0 then
    return nil
  end
  table.sort(ids, function(a, b) return a > b end)
  out.ids = ids
  return out
end

-- The phases of a checkpoint_subtasks record (ms), in the order a barrier
-- meets them.
M.PHASES = { "start_delay", "alignment", "sync", "async" }

function M.phase_ms(rec, phase)
  return rec[phase .. "_ms"] or 0
end

-- The phase with the most time in rec, and that time.
function M.dominant_phase(rec)
  local best, ms = nil, -1
  for _, ph in ipairs(M.PHASES) do
    local v = M.phase_ms(rec, ph)
    if v > ms then
      best, ms = ph, v
    end
  end
  return best, ms
end

-- The subtask with the longest end-to-end duration of a list of records.
function M.slowest_subtask(recs)
  local best
  for _, r in ipairs(recs) do
    local d = r.end_to_end_duration_ms
    if d and (not best or d > best.end_to_end_duration_ms) then
      best = r
    end
  end
  return best
end

-- --- placeholders ------------------------------------------------------------

-- Whether a value is a stand-in rather than a real one ("<bucket>",
-- "s3://<bucket>/x", "TODO", Flink's "<checkpoint-not-externally-
-- addressable>"). Such a value is never a path to judge, nor a change to
-- propose (tests/e2e/flink_rule_outputs.sh checks every change of every
-- fixture with the same pattern).
function M.is_placeholder(v)
  if type(v) ~= "string" then
    return false
  end
  return v:find("<[^>]*>") ~= nil or v:find("TODO", 1, true) ~= nil
      or v:lower():find("your%-") ~= nil
end

M.join = join

-- --- sources at capacity, async I/O ----------------------------------------

-- A vertex as a message names it: 'name' (its id when unnamed).
function M.quote(node)
  return "'" .. (node.name or node.id) .. "'"
end

-- Whether the run may still be running (node-level capacity rules skip
-- finished, failed and cancelled jobs).
function M.live(run)
  return run.status == "running" or run.status == "unknown"
end

-- A source's input rate: records_in_per_s when it reports one
-- (Source__<name>.numRecordsInPerSecond), else what it emits.
function M.source_rate(n)
  local m = n.metrics
  if m.records_in_per_s and m.records_in_per_s > 0 then
    return m.records_in_per_s
  end
  return m.records_out_per_s
end

-- Whether the run's DAG is known: a job of two or more vertices without a
-- single edge has an empty plan (still deploying, or a restore that keeps
-- failing), and every vertex would look like a source (flink.empty-plan).
function M.plan_known(run)
  if #run.nodes < 2 then
    return #run.nodes == 1
  end
  for _, n in ipairs(run.nodes) do
    if #n.parents > 0 then
      return true
    end
  end
  return false
end

-- Backpressure at or below this is Flink's "ok" level (the Web UI's 10 %).
M.BP_OK = 0.1

-- A source vertex (no inputs) whose subtasks are busy at least busy_high
-- (WATERMARK_DEFAULTS) while not backpressured: nothing downstream slows
-- it, it cannot read faster. Returns its busy ratio (max over subtasks,
-- else the mean) or nil.
function M.saturated_source(node, opts)
  if #node.parents > 0 then
    return nil
  end
  local busy = M.ratio(node, "busy_ratio")
  local bp = M.ratio(node, "backpressure_ratio")
  if busy and busy >= opt(opts, "busy_high") and (bp or 0) <= M.BP_OK then
    return busy
  end
  return nil
end

-- The operators chained after the first one of a vertex name
-- ("Source: K -> Map -> Timestamps" -> { "Map", "Timestamps" }).
function M.chained_operators(node)
  local out, first = {}, true
  for part in ((node.name or "") .. " -> "):gmatch("(.-) %-> ") do
    if not first then
      out[#out + 1] = part
    end
    first = false
  end
  return out
end

-- Async I/O: the DataStream AsyncWaitOperator ("async wait operator" is
-- the default name of AsyncDataStream's transformation), SQL async lookup
-- joins (LookupJoin ... async=[...]) and async scalar functions (AsyncCalc).
function M.is_async_io(node)
  local t = text_of(node)
  local lower = t:lower()
  return lower:find("async wait operator", 1, true) ~= nil
    or t:find("AsyncWaitOperator", 1, true) ~= nil
    or t:find("LookupJoin%b()") ~= nil and t:match("LookupJoin%b()"):find("async=%[") ~= nil
    or t:find("AsyncCalc", 1, true) ~= nil
end

-- What the plan says about an async operator: { sql = true|false,
-- kind = "lookup"|"scalar"|"datastream", mode = "ORDERED"|..., timeout_ms,
-- capacity } from "async=[ORDERED, 180000ms, 100]" (newer Flink adds
-- "KEY_ORDERED: false" in between), else the table.exec.async-* config.
function M.async_settings(run, node)
  local t = text_of(node)
  local s = { sql = false, kind = "datastream" }
  if t:find("LookupJoin", 1, true) then
    s.sql, s.kind = true, "lookup"
  elseif t:find("AsyncCalc", 1, true) then
    s.sql, s.kind = true, "scalar"
  end
  local a = t:match("async=%[([^%]]*)%]")
  if a then
    s.mode = a:match("^%s*(%u[%u_]*)")
    s.timeout_ms = tonumber(a:match("(%d+)ms"))
    s.capacity = tonumber(a:match("(%d+)%s*$"))
  end
  local prefix = s.kind == "scalar" and "table.exec.async-scalar." or "table.exec.async-lookup."
  if s.sql then
    s.capacity_key, s.timeout_key = prefix .. "buffer-capacity", prefix .. "timeout"
    s.capacity = s.capacity or tonumber(M.cfg(run, s.capacity_key) or "")
    s.timeout_ms = s.timeout_ms or M.cfg_ms(run, s.timeout_key)
  end
  return s
end

return M
