-- Tests of sdk/lua/optipipe/units.lua with hand-computed values. Byte units
-- are binary (k = 1024) like Spark and Flink.
local units = require "optipipe.units"

local function eq(got, want, what)
  assert(got == want, ("%s: got %s, want %s"):format(what, tostring(got), tostring(want)))
end

-- parse_bytes
local MiB, GiB = 1024 * 1024, 1024 * 1024 * 1024
eq(units.parse_bytes("256m"), 256 * MiB, "256m")
eq(units.parse_bytes("256mb"), 256 * MiB, "256mb")
eq(units.parse_bytes("256MB"), 256 * MiB, "256MB")
eq(units.parse_bytes("1 GiB"), GiB, "1 GiB")
eq(units.parse_bytes("1.5g"), 1610612736, "1.5g") -- 1.5 * 2^30
eq(units.parse_bytes("512kb"), 524288, "512kb")
eq(units.parse_bytes("100b"), 100, "100b")
eq(units.parse_bytes("100"), 100, "bare string")
eq(units.parse_bytes(" 2 t "), 2 * 1024 * GiB, "2 t")
eq(units.parse_bytes("64 mebibytes"), 64 * MiB, "flink spelling")
eq(units.parse_bytes(".5k"), 512, ".5k")
eq(units.parse_bytes("1.3k"), 1331, "fractions of a byte round down") -- 1331.2
eq(units.parse_bytes(4096), 4096, "number")
eq(math.type(units.parse_bytes("1.5g")), "integer", "integer result")
for _, bad in ipairs { "", "m", "-1m", "1e3", "12 parsecs", "1..5g", "0x10" } do
  local v, err = units.parse_bytes(bad)
  assert(v == nil and type(err) == "string" and #err > 0, "should refuse " .. bad)
end
assert(units.parse_bytes(-1) == nil, "negative")
assert(units.parse_bytes(1 / 0) == nil, "infinite")
assert(units.parse_bytes({}) == nil, "table")

-- format_bytes
eq(units.format_bytes(0), "0 B", "0")
eq(units.format_bytes(100), "100 B", "100")
eq(units.format_bytes(1023), "1023 B", "1023")
eq(units.format_bytes(1024), "1 KiB", "1024")
eq(units.format_bytes(1536), "1.5 KiB", "1536")
eq(units.format_bytes(256 * MiB), "256 MiB", "256 MiB")
eq(units.format_bytes(1610612736), "1.5 GiB", "1.5 GiB")
eq(units.format_bytes(GiB - 1), "1 GiB", "rounds up a unit")
eq(units.format_bytes(1048524), "1023.9 KiB", "just below 1 MiB") -- 1023.949 KiB
eq(units.format_bytes(-1536), "-1.5 KiB", "negative")
eq(units.format_bytes(units.parse_bytes("3.5 TiB")), "3.5 TiB", "round trip")

-- parse_duration (ms)
eq(units.parse_duration("10s"), 10000, "10s")
eq(units.parse_duration("5 min"), 300000, "5 min")
eq(units.parse_duration("100 ms"), 100, "100 ms")
eq(units.parse_duration("1h"), 3600000, "1h")
eq(units.parse_duration("2d"), 172800000, "2d")
eq(units.parse_duration("3m"), 180000, "m is minutes")
eq(units.parse_duration("1500"), 1500, "bare number is ms")
eq(units.parse_duration(250), 250, "number is ms")
eq(units.parse_duration("1.5 s"), 1500, "fraction")
eq(units.parse_duration("4m 05s"), 245000, "compound")
eq(units.parse_duration("1h30m"), 5400000, "compound without space")
eq(units.parse_duration("30 seconds"), 30000, "spelled out")
eq(units.parse_duration("250us"), 0.25, "microseconds")
eq(math.type(units.parse_duration("10s")), "integer", "integer result")
for _, bad in ipairs { "", "s", "10 parsecs", "10 s x", "-5s", "1.2.3s", "ms10" } do
  local v, err = units.parse_duration(bad)
  assert(v == nil and type(err) == "string", "should refuse " .. bad)
end

-- format_duration
eq(units.format_duration(0), "0 ms", "0")
eq(units.format_duration(850), "850 ms", "850")
eq(units.format_duration(12.5), "12.5 ms", "fractional ms")
eq(units.format_duration(999.96), "1 s", "rounds into seconds")
eq(units.format_duration(12345), "12.3 s", "12.3 s")
eq(units.format_duration(30000), "30 s", "30 s")
eq(units.format_duration(59960), "1m 00s", "rounds into minutes")
eq(units.format_duration(245000), "4m 05s", "4m 05s")
eq(units.format_duration(3599499), "59m 59s", "59m 59s")
eq(units.format_duration(3720000), "1h 02m", "1h 02m")
eq(units.format_duration(86399999), "1d 00h", "rounds into days")
eq(units.format_duration(273600000), "3d 04h", "3d 04h") -- 76 h
eq(units.format_duration(-850), "-850 ms", "negative")
eq(units.format_duration(units.parse_duration("4m 05s")), "4m 05s", "round trip")

-- format_pct: one decimal, ".0" trimmed
eq(units.format_pct(0.973), "97.3%", "97.3%")
eq(units.format_pct(0.97), "97%", "97%")
eq(units.format_pct(1), "100%", "100%")
eq(units.format_pct(0), "0%", "0%")
eq(units.format_pct(0.005), "0.5%", "0.5%")
eq(units.format_pct(1.25), "125%", "above 1")
eq(units.format_pct(0.12346, 2), "12.35%", "two decimals")
eq(units.format_pct(0.5, 0), "50%", "no decimals")

-- format_num
eq(units.format_num(0), "0", "0")
eq(units.format_num(999), "999", "999")
eq(units.format_num(1234567), "1,234,567", "separators")
eq(units.format_num(-1234), "-1,234", "negative")
eq(units.format_num(1234.567), "1,234.57", "two decimals")
eq(units.format_num(0.25), "0.25", "fraction")
eq(units.format_num(0.5), "0.5", "trimmed")
eq(units.format_num(0.00123), "0.00123", "tiny keeps 3 digits")
eq(units.format_num(1234567, "short"), "1.2M", "short M")
eq(units.format_num(1500, "short"), "1.5k", "short k")
eq(units.format_num(999949, "short"), "999.9k", "short below 1M")
eq(units.format_num(999950, "short"), "1M", "short rounds up a unit")
eq(units.format_num(5e9, "short"), "5G", "short G")
eq(units.format_num(950, "short"), "950", "short plain")
eq(units.format_num(-2500, "short"), "-2.5k", "short negative")

for k, v in pairs(units) do
  assert(type(v) == "function", "units." .. k .. " is not a function")
end
