-- Tests of sdk/lua/optipipe/rocksdb.lua: the hit ratio's sources, the cache
-- that would fix a low one, stall signs, compaction debt, space
-- amplification and unbounded key growth.
local rocksdb = require "optipipe.rocksdb"

local function eq(got, want, what)
  assert(got == want, ("%s: got %s, want %s"):format(what, tostring(got), tostring(want)))
end

-- Hit ratio: data ratio first, then overall, then tickers; nothing read: nil.
eq(rocksdb.hit_ratio({ block_cache_data_hit_ratio = 0.4, block_cache_hit_ratio = 0.9 }), 0.4, "data first")
eq(rocksdb.hit_ratio({ block_cache_hit_ratio = 0.9 }), 0.9, "overall")
eq(rocksdb.hit_ratio({ block_cache_hits = 30, block_cache_misses = 70 }), 0.3, "tickers")
eq(rocksdb.hit_ratio({ block_cache_hits = 0, block_cache_misses = 0 }), nil, "nothing read")
eq(rocksdb.hit_ratio({ block_cache_data_hit_ratio = 0 / 0 }), nil, "NaN is not a ratio")

-- Cache needed: capacity * target / h, capped by the data.
eq(rocksdb.cache_needed(100, 0.45, 0.9, nil), 200, "working set")
eq(rocksdb.cache_needed(100, 0.45, 0.9, 150), 150, "capped by the data")
eq(rocksdb.cache_needed(100, 0, 0.9, 150), 150, "h = 0: the data")
eq(rocksdb.cache_needed(100, 0, 0.9, nil), nil, "h = 0, no data size")
eq(rocksdb.cache_needed(nil, 0.5, 0.9, 10), nil, "no capacity")

-- Full cache.
eq(rocksdb.cache_full({ block_cache_capacity_bytes = 100, block_cache_usage_bytes = 96 }, 0.95), true, "full")
eq(rocksdb.cache_full({ block_cache_capacity_bytes = 100, block_cache_usage_bytes = 50 }, 0.95), false, "room")
eq(rocksdb.cache_full({ block_cache_usage_bytes = 50 }, 0.95), nil, "unknown")

-- Stall signs.
eq(#rocksdb.stall_signs({}, nil, nil, 0.01), 0, "none")
eq(#rocksdb.stall_signs({ write_stopped = 1, delayed_write_rate_bytes_per_s = 1e6 }, nil, nil, 0.01), 2, "stopped and delayed")
eq(rocksdb.stall_signs({}, 6000, 60000, 0.01)[1], "writes stalled 10.0% of the time between the scrapes", "window share")
eq(#rocksdb.stall_signs({ write_stall_duration_avg_ms = 5 }, 0, 60000, 0.01), 0, "no stall in the window wins over the average")
eq(rocksdb.stall_signs({ write_stall_duration_avg_ms = 5 }, nil, nil, 0.01)[1],
   "writes stalled recently (write-stall-duration-avg 5.0 ms)", "one scrape: the average")

-- Compaction debt and space amplification.
eq(rocksdb.compaction_debt({ pending_compaction_bytes = 10 }, 5), 10, "debt")
eq(rocksdb.compaction_debt({ pending_compaction_bytes = 1 }, 5), nil, "small debt")
local r, obsolete = rocksdb.space_amp({ total_sst_bytes = 300, live_sst_bytes = 100 }, 2, 100)
eq(r, 3, "amp ratio")
eq(obsolete, 200, "obsolete bytes")
eq(rocksdb.space_amp({ total_sst_bytes = 150, live_sst_bytes = 100 }, 2, 1), nil, "little amp")

-- Unbounded growth: monotone within tolerance, enough rise and window.
local day = 86400000
local g = rocksdb.unbounded_growth({ 0, day / 2, day }, { 100, 130, 160 }, 0.2, day / 2, 0.01)
eq(math.abs(g.growth - 0.6) < 1e-12, true, "growth")
eq(g.per_day, 60, "per day")
eq(rocksdb.unbounded_growth({ 0, day / 2, day }, { 100, 80, 160 }, 0.2, day / 2, 0.01), nil, "a cleanup")
eq(rocksdb.unbounded_growth({ 0, 1, 2 }, { 100, 130, 160 }, 0.2, day / 2, 0.01), nil, "too short")
eq(rocksdb.unbounded_growth({ 0, day }, { 100, 160 }, 0.2, day / 2, 0.01), nil, "two points")

-- Skew: floors by unit, texts, the test.
local fo = { min_bytes = "1 gb", min_bytes_per_s = "1 mb", min_duration = "1 min", min_count = 100 }
eq(rocksdb.skew_floor("live_sst_bytes", fo), 1024 ^ 3, "bytes floor")
eq(rocksdb.skew_floor("records_per_s", fo), 100, "a record rate is a count")
eq(rocksdb.skew_floor("compaction_read_bytes_per_s", fo), 1024 ^ 2, "byte rate floor")
eq(rocksdb.skew_floor("restore_time_ms", fo), 60000, "duration floor")
eq(rocksdb.skew_floor("estimated_keys", fo), 100, "count floor")
eq(rocksdb.skew_floor("block_cache_data_hit_ratio", fo), nil, "a share")
eq(rocksdb.skew_floor("block_cache_capacity_bytes", fo), nil, "a setting")
eq(rocksdb.skew_floor("estimated_keys_max", fo), nil, "already a max")
eq(rocksdb.value_text("live_sst_bytes", 2 * 1024 ^ 3), "2 GiB", "bytes text")
eq(rocksdb.value_text("estimated_keys", 1234567), "1,234,567", "count text")
eq(rocksdb.skew(400, 100, 10, 4), 4, "4x")
eq(rocksdb.skew(399, 100, 10, 4), nil, "under the factor")
eq(rocksdb.skew(400, 0, 10, 4), math.huge, "zero median")
eq(rocksdb.skew(5, 0, 10, 4), nil, "under the floor")
