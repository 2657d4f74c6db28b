-- kafka-streams.rocksdb-health: the RocksDB stores behind Kafka Streams
-- and Samza state: a block cache too small for the reads (with the memory
-- that would fix it), writes stalled or compaction falling behind, keys
-- growing without bound (no retention), obsolete SST files kept.
-- docs/rules/kafka-streams.rocksdb-health.md
local ks = require "kstate"
local rocksdb = require "optipipe.rocksdb"
local units = require "optipipe.units"

local fmt_b, pct = units.format_bytes, units.format_pct

-- Stores that share one block cache (a config setter handing every store
-- the same Cache) report the same capacity and usage on one instance:
-- one cache, counted once. Others have their own.
local function caches(run)
  local out, by = {}, {}
  for _, s in ipairs(ks.stores(run)) do
    local m = s.metrics
    if m.block_cache_capacity_bytes then
      local k = ("%s\0%s\0%s"):format((s.attrs or {}).instance or "",
        m.block_cache_capacity_bytes, m.block_cache_usage_bytes or "")
      local c = by[k]
      if not c then
        c = { stores = {}, m = m }
        by[k] = c
        out[#out + 1] = c
      end
      c.stores[#c.stores + 1] = s
    end
  end
  return out
end

-- The hit ratio over a cache's stores (their mean), the data they hold,
-- and the store with the lowest ratio.
local function cache_reads(c)
  local sum, n, data, worst, wh = 0, 0, 0, nil, nil
  for _, s in ipairs(c.stores) do
    local h = rocksdb.hit_ratio(s.metrics)
    if h then
      sum, n = sum + h, n + 1
      if not wh or h < wh then
        worst, wh = s, h
      end
    end
    data = data + (ks.store_bytes(s) or 0)
  end
  if n == 0 then
    return nil
  end
  return sum / n, data > 0 and data or nil, worst
end

local function cache_advice(run, c, need)
  if run.source == "samza" then
    return ("Raise stores.%s.container.cache.size.bytes to about %s (it is split over the "
      .. "container's tasks) and the container memory with it."):format(
        (c.stores[1].attrs or {}).store or "<store>", fmt_b(need))
  end
  return ("Give the block cache about %s: a rocksdb.config.setter that sets one LRUCache of that "
    .. "size on BlockBasedTableConfig (setBlockCache), shared by the instance's stores, with "
    .. "index and filter blocks in it (setCacheIndexAndFilterBlocks) and a WriteBufferManager "
    .. "charging the memtables to it, so the total is bounded; count it in the container's "
    .. "memory (it is off-heap)."):format(fmt_b(need))
end

local function check_caches(run, ctx, o)
  for _, c in ipairs(caches(run)) do
    local h, data, worst = cache_reads(c)
    local full = rocksdb.cache_full(c.m, o.full_ratio)
    local cap = c.m.block_cache_capacity_bytes
    local need = h and rocksdb.cache_needed(cap, h, o.target_hit_ratio, data)
    if h and h < o.min_hit_ratio and full ~= false and need and need > cap then
      local shared = #c.stores > 1
      local changes
      if run.source == "samza" and (worst.attrs or {}).store then
        changes = { { target = "job", key = ("stores.%s.container.cache.size.bytes"):format(worst.attrs.store),
                      from = (run.config or {})[("stores.%s.container.cache.size.bytes"):format(worst.attrs.store)],
                      to = math.ceil(need) } }
      end
      ctx.report {
        node = worst.id,
        message = ("The block cache of %s hits %s of the reads (below %s)%s with %s of capacity%s; "
          .. "about %s would reach %s."):format(
            shared and ("%d stores on one instance (shared; lowest: %s)"):format(#c.stores, ks.label(worst))
              or ks.label(worst),
            pct(h), pct(o.min_hit_ratio), full and ", full" or "", fmt_b(cap),
            full == nil and " (its usage was not exported)" or "",
            fmt_b(need), pct(o.target_hit_ratio)),
        recommendation = cache_advice(run, c, need),
        evidence = { hit_ratio = h, block_cache_capacity_bytes = cap,
                     block_cache_usage_bytes = c.m.block_cache_usage_bytes, data_bytes = data,
                     cache_needed_bytes = need, stores = #c.stores },
        changes = changes,
      }
    end
  end
end

-- The growth of a store's stall total over its samples, and their window.
local function stall_window(run, s)
  local xs, ys = ks.series(run, s.id, "write_stall_duration_total_ms")
  if #xs < 2 or ys[#ys] < ys[1] then
    return nil
  end
  return ys[#ys] - ys[1], xs[#xs] - xs[1]
end

local function check_writes(run, ctx, o)
  local limit = units.parse_bytes(o.pending_compaction)
  for _, s in ipairs(ks.stores(run)) do
    local m = s.metrics
    local stall_ms, window_ms = stall_window(run, s)
    local signs = rocksdb.stall_signs(m, stall_ms, window_ms, o.min_stall_ratio)
    local debt = rocksdb.compaction_debt(m, limit)
    if debt then
      signs[#signs + 1] = ("%s wait for compaction (estimate-pending-compaction-bytes)"):format(fmt_b(debt))
    end
    if #signs > 0 then
      ctx.report {
        node = s.id,
        severity = (m.write_stopped or 0) >= 1 and "error" or nil,
        message = ("RocksDB of %s cannot keep up with its writes: %s."):format(ks.label(s),
          table.concat(signs, "; ")),
        recommendation = "Compaction is falling behind the writes: give it disk bandwidth "
          .. "(local SSD or more provisioned IOPS for state.dir) and threads (more background "
          .. "jobs in the RocksDB options: Options.setMaxBackgroundJobs / setIncreaseParallelism"
          .. (run.source == "samza" and "" or " in the rocksdb.config.setter")
          .. "), larger memtables to flush fewer, smaller L0 files, and spread the writes over "
          .. "more tasks (more partitions) or instances.",
        evidence = { pending_compaction_bytes = m.pending_compaction_bytes,
                     write_stall_duration_avg_ms = m.write_stall_duration_avg_ms,
                     write_stopped = m.write_stopped, running_compactions = m.running_compactions },
      }
    end
  end
end

local function check_keys(run, ctx, o)
  local window = units.parse_duration(o.key_growth_window)
  for _, s in ipairs(ks.stores(run)) do
    local xs, ys = ks.series(run, s.id, "estimated_keys")
    local g = rocksdb.unbounded_growth(xs, ys, o.key_growth, window, 0.01)
    if g then
      local windowed = ((s.attrs or {}).store_type or ""):find("window") or
        ((s.attrs or {}).store_type or ""):find("session")
      ctx.report {
        node = s.id,
        message = ("The keys of %s grew from %s to %s (+%s, about %s a day) over %s and never "
          .. "fell: nothing removes old keys."):format(ks.label(s), units.format_num(g.first),
            units.format_num(g.last), pct(g.growth), units.format_num(g.per_day),
            units.format_duration(xs[#xs] - xs[1])),
        recommendation = windowed
          and "A window or session store keeps what its retention says: check the store's "
            .. "retention (Materialized.withRetention, grace) against what queries need."
          or "A key-value store keeps every key until a tombstone deletes it: give dead keys "
            .. "tombstones (a punctuator that deletes expired entries, or a TTL-style timestamp "
            .. "per value), or use a windowed store whose retention drops old segments.",
        evidence = { first_keys = g.first, last_keys = g.last, growth_ratio = g.growth,
                     keys_per_day = g.per_day, window_ms = xs[#xs] - xs[1] },
      }
    end
  end
end

local function check_space(run, ctx, o)
  local min_bytes = units.parse_bytes(o.space_amp_min)
  for _, s in ipairs(ks.stores(run)) do
    local ratio, obsolete = rocksdb.space_amp(s.metrics, o.space_amp, min_bytes)
    if ratio then
      ctx.report {
        node = s.id,
        severity = "info",
        message = ("%s keeps %s of SST files for %s of live ones (%s): obsolete files are not "
          .. "deleted yet (%s live versions)."):format(ks.label(s), fmt_b(s.metrics.total_sst_bytes),
            fmt_b(s.metrics.live_sst_bytes), units.format_ratio(ratio),
            s.metrics.live_versions and units.format_num(s.metrics.live_versions) or "unknown"),
        recommendation = "Old versions stay while something holds them: long-lived iterators "
          .. "(close every KeyValueIterator of all(), range() and interactive queries) and "
          .. "snapshots. Check the disk of state.dir has room for this.",
        evidence = { total_sst_bytes = s.metrics.total_sst_bytes, live_sst_bytes = s.metrics.live_sst_bytes,
                     obsolete_bytes = obsolete, amplification_ratio = ratio },
      }
    end
  end
end

return {
  id = "kafka-streams.rocksdb-health",
  title = "A RocksDB state store is short of cache, behind on compaction or never cleaned",
  severity = "warning",
  sources = { "kafka-streams", "samza" },
  tags = { "state", "rocksdb", "performance" },
  options = {
    min_hit_ratio = 0.8,         -- block cache hit ratio below this is low
    target_hit_ratio = 0.9,      -- what the recommended cache aims for
    full_ratio = 0.95,           -- cache usage / capacity from which it is full
    pending_compaction = "8 gb", -- RocksDB slows writes at 64 GB by default
    min_stall_ratio = 0.01,      -- share of the scrape window with writes stalled
    key_growth = 0.2,            -- keys up this share over the window, never falling
    key_growth_window = "1 h",   -- the shortest window that counts
    space_amp = 2,               -- all SST files / live ones
    space_amp_min = "1 gb",      -- obsolete bytes below this are not worth a finding
  },
  description = "Reads the RocksDB metrics of every state store (KIP-607 properties and "
    .. "DEBUG statistics) and says what to change, with the numbers.",
  check = function(run, ctx)
    local o = ctx.options
    check_caches(run, ctx, o)
    check_writes(run, ctx, o)
    check_keys(run, ctx, o)
    check_space(run, ctx, o)
  end,
}
