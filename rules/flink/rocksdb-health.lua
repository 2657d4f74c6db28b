-- flink.rocksdb-health: a vertex's RocksDB / ForSt native metrics
-- (state.backend.rocksdb.metrics.*, fetched by `fetch flink` when the job
-- exposes them): a full block cache missing most reads with the managed
-- memory that would fix it, compaction falling behind or writes slowed,
-- local SST files far above the checkpoint, and one subtask far above
-- the median for any state metric. docs/rules/flink.rocksdb-health.md
local fu = require "flinkutil"
local rocksdb = require "optipipe.rocksdb"
local units = require "optipipe.units"

local fmt_b, pct = units.format_bytes, units.format_pct

local DEFAULT_FRACTION = 0.4 -- taskmanager.memory.managed.fraction

-- The native metrics that are amounts of state per subtask (summed over
-- column families by the plugin, docs/model-flink.md): the ones skew
-- compares.
local AMOUNTS = {
  estimated_keys = true, pending_compaction_bytes = true, total_sst_bytes = true,
  live_sst_bytes = true, live_data_bytes = true, all_memtables_bytes = true,
  active_memtable_bytes = true, immutable_memtables = true, table_readers_mem_bytes = true,
  live_versions = true, background_errors = true, block_cache_hits = true,
  block_cache_misses = true, write_stall_duration_total_ms = true,
}

local function native(n)
  return (n.attrs or {}).rocksdb_metrics == "native"
end

-- The managed memory change that scales the block cache by factor:
-- the configured size, else the fraction (Flink's RocksDB takes its cache
-- from the slot's managed memory, state.backend.rocksdb.memory.managed).
local function memory_change(run, factor)
  local size = fu.cfg(run, "taskmanager.memory.managed.size")
  if size and units.parse_bytes(size) then
    local to = math.ceil(units.parse_bytes(size) * factor / 1048576)
    return { target = "job", key = "taskmanager.memory.managed.size", from = size, to = to .. "m" }
  end
  local from = tonumber(fu.cfg(run, "taskmanager.memory.managed.fraction") or "")
  local to = math.min(0.9, math.ceil((from or DEFAULT_FRACTION) * factor * 100) / 100)
  return { target = "job", key = "taskmanager.memory.managed.fraction",
           from = fu.cfg(run, "taskmanager.memory.managed.fraction"), to = to }, to == 0.9
end

local function check_cache(run, ctx, n, o)
  local m, d = n.metrics, n.dist or {}
  local h = rocksdb.hit_ratio(m)
  local cap = m.block_cache_capacity_bytes
  local data = d.live_sst_bytes and d.live_sst_bytes.max or m.live_sst_bytes
  local full = rocksdb.cache_full(m, o.full_ratio)
  local need = h and rocksdb.cache_needed(cap, h, o.target_hit_ratio, data)
  if not h or h >= o.min_hit_ratio or full == false or not need or need <= cap then
    return
  end
  local change, capped = memory_change(run, need / cap)
  ctx.report {
    node = n.id,
    message = ("The RocksDB block cache of %s hits %s of the reads (below %s)%s with %s per "
      .. "subtask%s; about %s per subtask would reach %s."):format(fu.quote(n), pct(h),
        pct(o.min_hit_ratio), full and ", full" or "", fmt_b(cap),
        full == nil and " (its usage was not exported)" or "", fmt_b(need), pct(o.target_hit_ratio)),
    recommendation = ("The cache comes from the slot's managed memory (with "
      .. "state.backend.rocksdb.memory.managed, the default): give it %s× more (%s → %s)%s. "
      .. "Fewer slots per TaskManager also gives each slot more; "
      .. "state.backend.rocksdb.memory.write-buffer-ratio trades memtables for cache."):format(
        units.format_num(math.ceil(need / cap * 10) / 10), change.key, tostring(change.to),
        capped and ", and more TaskManager memory (taskmanager.memory.process.size): the fraction "
          .. "is at its ceiling" or ""),
    evidence = { hit_ratio = h, block_cache_capacity_bytes = cap,
                 block_cache_usage_bytes = m.block_cache_usage_bytes, data_bytes = data,
                 cache_needed_bytes = need },
    changes = { change },
  }
end

local function check_writes(run, ctx, n, o)
  local m = n.metrics
  local signs = rocksdb.stall_signs(m, nil, nil, 1)
  local debt = rocksdb.compaction_debt({ pending_compaction_bytes = m.pending_compaction_bytes_max },
    units.parse_bytes(o.pending_compaction))
  if debt then
    signs[#signs + 1] = ("%s wait for compaction on its busiest subtask "
      .. "(estimate-pending-compaction-bytes)"):format(fmt_b(debt))
  end
  if #signs == 0 then
    return
  end
  local key = "state.backend.rocksdb.thread.num"
  local threads = tonumber(fu.cfg(run, key) or "2") or 2
  ctx.report {
    node = n.id,
    severity = (m.write_stopped or 0) >= 1 and "error" or nil,
    message = ("RocksDB of %s cannot keep up with its writes: %s."):format(fu.quote(n),
      table.concat(signs, "; ")),
    recommendation = "Compaction is falling behind: more background threads "
      .. "(state.backend.rocksdb.thread.num), a local SSD for state.backend.rocksdb.localdir, "
      .. "larger write buffers (state.backend.rocksdb.writebuffer.size) and, when one subtask "
      .. "carries it, spreading its keys.",
    evidence = { pending_compaction_bytes_max = m.pending_compaction_bytes_max,
                 delayed_write_rate_bytes_per_s = m.delayed_write_rate_bytes_per_s,
                 write_stopped = m.write_stopped },
    changes = threads < 4 and { { target = "job", key = key, from = fu.cfg(run, key), to = 4 } } or nil,
  }
end

local function check_files(run, ctx, n, o)
  local m = n.metrics
  local ckpt = m.checkpoint_state_size_bytes
  local live = m.live_sst_bytes
  local min_bytes = units.parse_bytes(o.space_amp_min)
  if not live or not ckpt or ckpt <= 0 or live < o.space_amp * ckpt or live - ckpt < min_bytes then
    return
  end
  ctx.report {
    node = n.id,
    severity = "info",
    message = ("The local RocksDB files of %s hold %s of live SST files for a checkpoint of %s "
      .. "(#%s, %s): most of the local data is obsolete and waits for compaction."):format(
        fu.quote(n), fmt_b(live), fmt_b(ckpt), tostring(m.checkpoint_id or "?"),
        units.format_ratio(live / ckpt)),
    recommendation = "Expired state leaves RocksDB only when compaction reaches it: with state "
      .. "TTL keep the compaction filter cleanup on (StateTtlConfig cleanupInRocksdbCompactFilter, "
      .. "default since 1.12) with a small queryTimeAfterNumEntries, and check the local disk "
      .. "has room for the difference.",
    evidence = { live_sst_bytes = live, checkpoint_state_size_bytes = ckpt, ratio = live / ckpt },
  }
end

-- Every native metric of the vertex's dist whose largest subtask stands
-- out of the median, most skewed first.
local function check_skew(run, ctx, n, o)
  local list = {}
  for name, d in pairs(n.dist or {}) do
    local floor = rocksdb.skew_floor(name, { min_bytes = o.min_bytes, min_count = o.min_count,
      min_bytes_per_s = o.min_bytes_per_s, min_duration = o.min_duration })
    local f = AMOUNTS[name] and (d.count or 0) >= o.min_subtasks
      and rocksdb.skew(d.max, d.p50, floor, o.skew_factor)
    if f then
      list[#list + 1] = { name = name, max = d.max, median = d.p50, factor = f, count = d.count }
    end
  end
  if #list == 0 then
    return
  end
  table.sort(list, function(a, b)
    if a.factor ~= b.factor then return a.factor > b.factor end
    return a.name < b.name
  end)
  local parts = {}
  for i = 1, math.min(#list, o.max_listed) do
    local s = list[i]
    parts[i] = s.factor == math.huge
      and ("%s %s (the median is %s)"):format(s.name, rocksdb.value_text(s.name, s.max),
        rocksdb.value_text(s.name, s.median))
      or ("%s %s (%s the median %s)"):format(s.name, rocksdb.value_text(s.name, s.max),
        units.format_ratio(s.factor), rocksdb.value_text(s.name, s.median))
  end
  ctx.report {
    node = n.id,
    message = ("One subtask of %s stands out of its %s in RocksDB: %s."):format(fu.quote(n),
      units.format_count(list[1].count, "subtask"), table.concat(parts, "; ")),
    recommendation = "The keys of one key group range carry the state: find the hot keys and "
      .. "spread them (salt and combine, pre-aggregate before the keyBy, two-phase aggregation in "
      .. "SQL); more parallelism does not split a hot key.",
    evidence = { metric = list[1].name, max = list[1].max, median = list[1].median,
                 skew_ratio = list[1].factor ~= math.huge and list[1].factor or nil,
                 subtasks = list[1].count, skewed_metrics = #list },
  }
end

return {
  id = "flink.rocksdb-health",
  title = "RocksDB is short of cache, behind on compaction or skewed",
  severity = "warning",
  sources = { "flink" },
  tags = { "state", "rocksdb", "performance" },
  options = {
    min_hit_ratio = 0.8,
    target_hit_ratio = 0.9,
    full_ratio = 0.95,
    pending_compaction = "8 gb",
    space_amp = 2,            -- live SST files / the checkpoint's state
    space_amp_min = "1 gb",
    skew_factor = 4,
    min_subtasks = 3,
    min_bytes = "1 gb",
    min_bytes_per_s = "1 mb",
    min_duration = "1 min",
    min_count = 100000,
    max_listed = 4,
  },
  description = "Reads the RocksDB / ForSt native metrics of each vertex (off by default: "
    .. "state.backend.rocksdb.metrics.*) and says what to change, with the numbers.",
  check = function(run, ctx)
    local o = ctx.options
    for _, n in ipairs(run.nodes) do
      if native(n) then
        check_cache(run, ctx, n, o)
        check_writes(run, ctx, n, o)
        check_files(run, ctx, n, o)
        check_skew(run, ctx, n, o)
      end
    end
  end,
}
