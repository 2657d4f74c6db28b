-- optipipe.rocksdb: the RocksDB health arithmetic every engine's state
-- rules share (Kafka Streams and Samza stores, Flink's RocksDB and ForSt
-- native metrics), over the model's store metric names
-- (docs/model-kafka-streams.md): block cache, write stalls, compaction
-- debt, space amplification, key growth. Engine advice stays in the rules.
--
-- Pure Lua 5.4 (base/table/math/string) for the sandbox; arguments are
-- read, never modified. docs/lua-helpers.md#optipiperocksdb.

local units = require "optipipe.units"

local M = {}

local function num(v)
  return type(v) == "number" and v == v and v or nil
end

--- The block cache hit ratio of metrics m (0..1): the data block ratio
--- (Kafka Streams), else the overall one, else from hit and miss counts
--- (Flink's tickers). nil when none is there or nothing was read.
function M.hit_ratio(m)
  local h = num(m.block_cache_data_hit_ratio) or num(m.block_cache_hit_ratio)
  if h then
    return h
  end
  local hits, misses = num(m.block_cache_hits), num(m.block_cache_misses)
  if hits and misses and hits + misses > 0 then
    return hits / (hits + misses)
  end
  return nil
end

--- The cache that would lift hit ratio h of a full cache of capacity
--- bytes to target: a full LRU cache holding a share h of the reads holds
--- about that share of the working set, so the working set is capacity/h
--- and target needs capacity * target / h — never more than the data
--- (data_bytes, when known). nil when h or capacity is missing; with h = 0
--- only data_bytes can say.
function M.cache_needed(capacity, h, target, data_bytes)
  capacity, h, data_bytes = num(capacity), num(h), num(data_bytes)
  if not capacity or not h or capacity <= 0 then
    return nil
  end
  local need = h > 0 and capacity * target / h or nil
  if data_bytes and data_bytes > 0 and (not need or need > data_bytes) then
    need = data_bytes
  end
  return need
end

--- Whether a cache of metrics m is full: usage at least full_ratio of its
--- capacity. nil when either is unknown.
function M.cache_full(m, full_ratio)
  local cap, use = num(m.block_cache_capacity_bytes), num(m.block_cache_usage_bytes)
  if not cap or not use or cap <= 0 then
    return nil
  end
  return use >= full_ratio * cap
end

--- Signs that writes are being slowed or stopped, as a list of short
--- texts with numbers (empty when none): RocksDB stopped writes, throttles
--- them (a delayed write rate), or stalled them for share >= min_share of
--- the window (stall_ms stalled over window_ms, from the total's growth
--- between scrapes), else any recent average stall (one scrape).
function M.stall_signs(m, stall_ms, window_ms, min_share)
  local out = {}
  if (num(m.write_stopped) or 0) >= 1 then
    out[#out + 1] = "writes are stopped (is-write-stopped)"
  end
  local delayed = num(m.delayed_write_rate_bytes_per_s)
  if delayed and delayed > 0 then
    out[#out + 1] = ("writes are throttled to %s/s (actual-delayed-write-rate)"):format(
      units.format_bytes(delayed))
  end
  stall_ms, window_ms = num(stall_ms), num(window_ms)
  if stall_ms and window_ms and window_ms > 0 then
    if stall_ms / window_ms >= min_share then
      out[#out + 1] = ("writes stalled %.1f%% of the time between the scrapes"):format(
        stall_ms / window_ms * 100)
    end
  elseif (num(m.write_stall_duration_avg_ms) or 0) > 0 then
    out[#out + 1] = ("writes stalled recently (write-stall-duration-avg %.1f ms)"):format(
      m.write_stall_duration_avg_ms)
  end
  return out
end

--- The compaction debt of metrics m when at least limit bytes: pending
--- compaction bytes, else nil.
function M.compaction_debt(m, limit)
  local p = num(m.pending_compaction_bytes)
  if p and p >= limit then
    return p
  end
  return nil
end

--- Space amplification: all SST files over the live ones, when the
--- obsolete part is at least min_bytes and the ratio at least min_ratio.
--- Returns ratio, obsolete bytes or nil.
function M.space_amp(m, min_ratio, min_bytes)
  local total, live = num(m.total_sst_bytes), num(m.live_sst_bytes)
  if not total or not live or live <= 0 then
    return nil
  end
  local ratio = total / live
  if ratio >= min_ratio and total - live >= min_bytes then
    return ratio, total - live
  end
  return nil
end

--- Growth of a count over time (xs in ms, ys): when every step is >= the
--- previous one minus tolerance (a share of the previous value) and the
--- whole rise is at least min_growth of the first value over at least
--- min_window_ms, returns { first, last, growth (ratio), per_day } (the
--- average rise per day); else nil. A store that ever shrinks noticeably
--- is being cleaned up.
function M.unbounded_growth(xs, ys, min_growth, min_window_ms, tolerance)
  local n = #xs
  if n < 3 or #ys ~= n or xs[n] - xs[1] < min_window_ms or ys[1] <= 0 then
    return nil
  end
  for i = 2, n do
    if ys[i] < ys[i - 1] * (1 - tolerance) then
      return nil
    end
  end
  local growth = ys[n] / ys[1] - 1
  if growth < min_growth then
    return nil
  end
  return { first = ys[1], last = ys[n], growth = growth,
           per_day = (ys[n] - ys[1]) / (xs[n] - xs[1]) * 86400000 }
end

--- The floor under which the largest value of state metric name is not
--- worth a skew finding, by the unit its name ends in (o = { min_bytes,
--- min_bytes_per_s, min_duration, min_count }, bytes and durations as
--- units parses them); nil for names skew says nothing about: shares
--- (_ratio), settings (capacity_bytes) and flags (write_stopped,
--- compaction_pending).
function M.skew_floor(name, o)
  if name:match("_ratio$") or name:match("capacity_bytes$") or name:match("_max$")
      or name == "write_stopped" or name == "compaction_pending" then
    return nil
  elseif name:match("_bytes_per_s$") then
    return units.parse_bytes(o.min_bytes_per_s)
  elseif name:match("_bytes$") then
    return units.parse_bytes(o.min_bytes)
  elseif name:match("_ms$") then
    return units.parse_duration(o.min_duration)
  end
  return o.min_count
end

--- A value of state metric name in its unit, for messages.
function M.value_text(name, v)
  if name:match("_bytes_per_s$") then
    return units.format_bytes(v) .. "/s"
  elseif name:match("_bytes$") then
    return units.format_bytes(v)
  elseif name:match("_ms$") then
    return units.format_duration(v)
  end
  return units.format_num(v)
end

--- Whether the largest of a metric's values (max) stands out of the
--- median: at least factor times it (or the median is 0) and at least
--- floor. Returns max / median (math.huge for a 0 median) or nil.
function M.skew(max, median, floor, factor)
  if type(max) ~= "number" or type(median) ~= "number" or not floor
      or max <= 0 or max < floor or max < factor * median then
    return nil
  end
  return median > 0 and max / median or math.huge
end

return M
