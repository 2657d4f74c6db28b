-- optipipe.units: reading and writing sizes, durations, ratios and counts
-- the way Spark, Flink and people write them.
--
-- Pure Lua 5.4 (base/string/math only) so it runs inside the rule sandbox.
-- Byte units are binary: k = KiB = 1024, like Spark's byteStringAsBytes
-- and Flink's MemorySize ("256m" and "256mb" both mean 256 * 1024^2).
-- Parsers return nil plus a message for text they cannot read, so a rule
-- can write `local b = units.parse_bytes(v) or default`.

local M = {}

local floor, abs, huge = math.floor, math.abs, math.huge

local BYTE_UNITS = {
  [""] = 0, b = 0, byte = 0, bytes = 0,
  k = 1, kb = 1, kib = 1, kibibyte = 1, kibibytes = 1,
  m = 2, mb = 2, mib = 2, mebibyte = 2, mebibytes = 2,
  g = 3, gb = 3, gib = 3, gibibyte = 3, gibibytes = 3,
  t = 4, tb = 4, tib = 4, tebibyte = 4, tebibytes = 4,
  p = 5, pb = 5, pib = 5, pebibyte = 5, pebibytes = 5,
}

local BYTE_NAMES = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" }

-- Milliseconds per duration unit (Spark's JavaUtils and Flink's TimeUtils
-- spellings; "m" is minutes in both).
local MS_PER = {
  ns = 1e-6, nano = 1e-6, nanos = 1e-6, nanosecond = 1e-6, nanoseconds = 1e-6,
  us = 1e-3, ["\u{b5}s"] = 1e-3, micro = 1e-3, micros = 1e-3,
  microsecond = 1e-3, microseconds = 1e-3,
  ms = 1, milli = 1, millis = 1, millisecond = 1, milliseconds = 1,
  s = 1000, sec = 1000, secs = 1000, second = 1000, seconds = 1000,
  m = 60000, min = 60000, mins = 60000, minute = 60000, minutes = 60000,
  h = 3600000, hr = 3600000, hrs = 3600000, hour = 3600000, hours = 3600000,
  d = 86400000, day = 86400000, days = 86400000,
  w = 604800000, week = 604800000, weeks = 604800000,
}

-- Whole floats come back as integers so "%d" and equality with config
-- numbers behave.
local function tidy(v)
  if v == floor(v) and abs(v) < 2^53 then
    return floor(v)
  end
  return v
end

local function finite(v)
  return v == v and v ~= huge and v ~= -huge
end

--- Bytes from a number (returned as is, must be finite and >= 0) or a
--- string: a decimal number, optional spaces, an optional unit (b, k, kb,
--- kib, m, mb, mib, g, gb, gib, t, tb, tib, p, pb, pib or the spelled-out
--- kibibytes etc., any case). Units are binary (k = 1024). Fractions of a
--- byte are rounded down. Returns an integer, or nil, message.
function M.parse_bytes(v)
  if type(v) == "number" then
    if not finite(v) or v < 0 then
      return nil, "not a byte count: " .. tostring(v)
    end
    return tidy(floor(v))
  end
  if type(v) ~= "string" then
    return nil, "not a byte count: " .. type(v)
  end
  local num, unit = v:match("^%s*(%d*%.?%d+)%s*(%a*)%s*$")
  if not num then
    num, unit = v:match("^%s*(%d+%.)%s*(%a*)%s*$")
  end
  local pow = unit and BYTE_UNITS[unit:lower()]
  if not num or not pow then
    return nil, ("not a byte size: %q (expected e.g. 512kb, 256m, 1.5 GiB)"):format(v)
  end
  return tidy(floor(tonumber(num) * 1024 ^ pow))
end

-- One decimal, ".0" trimmed.
local function one_decimal(x)
  local s = ("%.1f"):format(x)
  return (s:gsub("%.0$", ""))
end

--- "1.5 GiB" style: the largest binary unit that keeps the value >= 1,
--- one decimal, ".0" trimmed ("256 MiB"); below 1 KiB whole bytes ("100 B").
function M.format_bytes(n)
  if type(n) ~= "number" or not finite(n) then
    return tostring(n)
  end
  local sign = n < 0 and "-" or ""
  n = abs(n)
  local whole = floor(n + 0.5)
  if whole < 1024 then
    return ("%s%d B"):format(whole == 0 and "" or sign, whole)
  end
  local i, v = 2, n / 1024
  while v >= 1024 and i < #BYTE_NAMES do
    v = v / 1024
    i = i + 1
  end
  -- 1023.96 KiB would print as "1024 KiB": move up a unit instead.
  if tonumber(("%.1f"):format(v)) >= 1024 and i < #BYTE_NAMES then
    v = v / 1024
    i = i + 1
  end
  return sign .. one_decimal(v) .. " " .. BYTE_NAMES[i]
end

--- Milliseconds from a number (already ms) or a string: one or more
--- "<number><unit>" parts with optional spaces ("10s", "5 min", "100 ms",
--- "1h 30m", "4m 05s"); a bare number string is ms. Units: ns, us, ms, s,
--- m/min, h, d, w and their spelled-out forms. Returns a number (integer
--- when whole), or nil, message.
function M.parse_duration(v)
  if type(v) == "number" then
    if not finite(v) then
      return nil, "not a duration: " .. tostring(v)
    end
    return tidy(v)
  end
  if type(v) ~= "string" then
    return nil, "not a duration: " .. type(v)
  end
  local bad = ("not a duration: %q (expected e.g. 100 ms, 10s, 5 min, 1h 30m)"):format(v)
  local s = v:match("^%s*(.-)%s*$")
  local bare = s:match("^%d*%.?%d+$") or s:match("^%d+%.$")
  if bare then
    return tidy(tonumber(bare))
  end
  local total, pos, parts = 0, 1, 0
  while pos <= #s do
    local num, unit, nxt = s:match("^(%d*%.?%d+)%s*([%a\u{b5}]+)%s*()", pos)
    if not num then
      return nil, bad
    end
    local k = MS_PER[unit:lower()]
    if not k then
      return nil, bad
    end
    total = total + tonumber(num) * k
    pos = nxt
    parts = parts + 1
  end
  if parts == 0 then
    return nil, bad
  end
  return tidy(total)
end

--- Human duration from milliseconds: "850 ms", "12.3 s", "4m 05s",
--- "1h 02m", "3d 04h". Each form rounds to its last unit shown; values
--- that round up to the next form move there (59.96 s -> "1m 00s").
function M.format_duration(ms)
  if type(ms) ~= "number" or not finite(ms) then
    return tostring(ms)
  end
  local sign = ms < 0 and "-" or ""
  ms = abs(ms)
  if ms < 999.95 then
    local s = one_decimal(ms)
    return (s == "0" and "" or sign) .. s .. " ms"
  end
  local tenths = floor(ms / 100 + 0.5) -- tenths of a second
  if tenths < 600 then
    return sign .. one_decimal(tenths / 10) .. " s"
  end
  local secs = floor(ms / 1000 + 0.5)
  if secs < 3600 then
    return ("%s%dm %02ds"):format(sign, secs // 60, secs % 60)
  end
  local mins = floor(ms / 60000 + 0.5)
  if mins < 1440 then
    return ("%s%dh %02dm"):format(sign, mins // 60, mins % 60)
  end
  local hours = floor(ms / 3600000 + 0.5)
  if hours >= 1e12 then
    return ("%s%.4gd"):format(sign, hours / 24)
  end
  return ("%s%dd %02dh"):format(sign, hours // 24, hours % 24)
end

-- ratio * 100 with d decimals, trailing zeros trimmed.
local function pct_text(p, d)
  local s = ("%." .. d .. "f"):format(p)
  if s:find("%.") then
    s = s:gsub("0+$", ""):gsub("%.$", "")
  end
  return s
end

--- A share (0.973) as a percentage with at most `decimals` decimals
--- (default 1), trailing zeros trimmed: "97.3%", "97%", "341.3%". It never
--- reads 100% for a share below 1 nor 0% for a nonzero one: up to two more
--- decimals are used ("99.5%", "0.04%"), then ">99.99%" / "<0.01%"
--- (core/fmt.c fmt_percent does the same for the reports).
function M.format_pct(ratio, decimals)
  if type(ratio) ~= "number" or not finite(ratio) then
    return tostring(ratio)
  end
  decimals = floor(decimals or 1)
  decimals = decimals < 0 and 0 or decimals > 6 and 6 or decimals
  local p = ratio * 100
  for d = decimals, decimals + 2 do
    local s = pct_text(p, d)
    local shown = abs(tonumber(s))
    if not ((p > 0 and p < 100 and shown >= 100) or (p ~= 0 and shown == 0)) then
      return (s == "-0" and "0" or s) .. "%"
    end
  end
  local d = decimals + 2
  if abs(p) < 1 then
    return ("%s%." .. d .. "f%%"):format(p < 0 and ">-" or "<", 10 ^ -d)
  end
  return (">%." .. d .. "f%%"):format(100 - 10 ^ -d)
end

-- "1234567" -> "1,234,567" (digits only, no sign).
local function group(digits)
  local out = digits:reverse():gsub("(%d%d%d)", "%1,"):reverse()
  return (out:gsub("^,", ""))
end

local SHORT = { { 1, "" }, { 1e3, "k" }, { 1e6, "M" }, { 1e9, "G" }, { 1e12, "T" } }

-- "1.2k" style: the largest decimal unit not above the value; one that
-- would print as "1000k" moves up to "1M".
local function short(a)
  local i = 1
  while i < #SHORT and a >= SHORT[i + 1][1] do
    i = i + 1
  end
  local v = a / SHORT[i][1]
  if i < #SHORT and tonumber(("%.1f"):format(v)) >= 1000 then
    i = i + 1
    v = a / SHORT[i][1]
  end
  return one_decimal(v) .. SHORT[i][2]
end

--- A count for people. Default: thousands separators and up to two
--- decimals, trailing zeros trimmed ("1,234,567", "1,234.57", "0.25";
--- tiny non-zero values keep 3 significant digits: "0.00123", never an
--- exponent above 1e-9).
--- style "short": one decimal with a decimal (SI) suffix ("1.2k", "3.4M",
--- "5G", "950").
function M.format_num(n, style)
  if type(n) ~= "number" or not finite(n) then
    return tostring(n)
  end
  local sign = n < 0 and "-" or ""
  local a = abs(n)
  if style == "short" then
    local s = short(a)
    return (s == "0" and "" or sign) .. s
  end
  if a ~= 0 and a < 0.01 then
    if a < 1e-9 then
      return ("%s%.3g"):format(sign, a)
    end
    local s = ("%." .. (2 - floor(math.log(a, 10))) .. "f"):format(a)
    return sign .. s:gsub("0+$", "")
  end
  local s = ("%.2f"):format(a)
  local int, frac = s:match("^(%d+)%.(%d+)$")
  frac = frac:gsub("0+$", "")
  if int == "0" and frac == "" then
    sign = ""
  end
  return sign .. group(int) .. (frac ~= "" and "." .. frac or "")
end

--- "1 executor", "3 executors", "12,000 records": the count as format_num
--- writes it and the singular exactly when that reads "1". `many`
--- defaults to one .. "s". Use it for every count in a message.
function M.format_count(n, one, many)
  if type(n) ~= "number" or not finite(n) then
    return tostring(n) .. " " .. (many or one .. "s")
  end
  local s = M.format_num(n)
  return s .. " " .. (s == "1" and one or many or one .. "s")
end

--- A ratio as "36.9×" (U+00D7, the one multiplication sign of every
--- pack): one decimal, ".0" trimmed ("2×"); from 100 on whole and grouped
--- ("1,250×").
function M.format_ratio(r)
  if type(r) ~= "number" or not finite(r) then
    return tostring(r) .. "\u{d7}"
  end
  local s
  if abs(r) >= 99.95 then
    s = M.format_num(floor(r + 0.5))
  else
    s = one_decimal(r)
  end
  return (s == "-0" and "0" or s) .. "\u{d7}"
end

--- An evidence-style value in plain digits, never an exponent: integers as
--- they are ("9905000"), others from 1000 on rounded to whole, below that
--- 4 significant digits ("2.708", "0.0001234"); only magnitudes beyond
--- 1e21 or below 1e-9 use "%.4g". The reports print evidence like this.
function M.format_number(v)
  if type(v) ~= "number" or not finite(v) then
    return tostring(v)
  end
  local a = abs(v)
  if v == 0 then
    return "0"
  elseif v == floor(v) and a < 1e21 then
    return ("%.0f"):format(v)
  elseif a >= 1e21 or a < 1e-9 then
    return ("%.4g"):format(v)
  elseif a >= 999.95 then
    return ("%.0f"):format(v)
  end
  local d = 3 - floor(math.log(a, 10))
  local s = ("%." .. (d < 0 and 0 or d) .. "f"):format(v)
  if s:find("%.") then
    s = s:gsub("0+$", ""):gsub("%.$", "")
  end
  return s
end

return M
