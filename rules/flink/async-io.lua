-- flink.async-io: an async I/O operator whose queue of in-flight requests
-- is full: its input is blocked (the upstream is backpressured) while it is
-- not, so throughput = capacity / latency of the external system.
-- docs/rules/flink.async-io.md
local fu = require "flinkutil"
local units = require "optipipe.units"

local pct, fmt_d, fmt_n = units.format_pct, units.format_duration, units.format_num

local DEFAULT_CAPACITY = { datastream = 100, lookup = 100, scalar = 10 }
local DEFAULT_TIMEOUT_MS = 180000 -- table.exec.async-lookup/-scalar.timeout

local quote = fu.quote

-- The most backpressured parent above bp_high, or nil.
local function blocked_parent(run, n, o)
  local up, worst
  for _, pid in ipairs(n.parents) do
    local p = run.by_id[pid]
    local bp = p and fu.ratio(p, "backpressure_ratio")
    if bp and bp > o.bp_high and (not worst or bp > worst) then
      up, worst = p, bp
    end
  end
  return up, worst
end

-- Failovers whose exception says an async call timed out
-- ("Async function call has timed out.").
local function timeouts(run)
  local k = 0
  for _, e in ipairs(run.series.exceptions or {}) do
    local t = (e.exception or "") .. " " .. (e.exception_class or "")
    if t:find("TimeoutException", 1, true) or t:lower():find("timed out", 1, true) then
      k = k + 1
    end
  end
  return k
end

local function settings_text(s, cap, cap_known)
  local mode = s.mode and (", %s"):format(s.mode:lower()) or ""
  local timeout = s.timeout_ms and (", timeout %s"):format(fmt_d(s.timeout_ms)) or ""
  if cap_known then
    return ("capacity %d per subtask%s%s"):format(cap, timeout, mode)
  end
  return ("capacity not visible in the REST API (default %d per subtask)%s%s"):format(cap, timeout, mode)
end

local function recommendation(s, cap, to)
  local how
  if s.kind == "lookup" then
    how = ("Raise the lookup join's buffer capacity from %d to %d: set %s (or the LOOKUP "
      .. "hint's 'capacity'), use table.exec.async-lookup.output-mode: ALLOW_UNORDERED "
      .. "when the order of results does not matter, and cache hot keys "
      .. "(lookup.cache = PARTIAL on the dimension table) to send fewer requests."):format(
        cap, to, s.capacity_key)
  elseif s.kind == "scalar" then
    how = ("Raise the async function's buffer capacity from %d to %d: set %s."):format(
      cap, to, s.capacity_key)
  else
    how = ("Raise the capacity, the last argument of AsyncDataStream.unorderedWait / "
      .. "orderedWait(stream, fn, timeout, unit, capacity) (default 100), to about %d; use "
      .. "unorderedWait when the order of results does not matter (ordered waits also "
      .. "hold finished requests behind slow ones)."):format(to)
  end
  return how .. " Keep the timeout above the external system's p99 latency (a timeout "
    .. "fails the job unless the function overrides timeout()), and make sure the "
    .. "external system and the client's connection pool can take the extra concurrent "
    .. "requests. More parallelism also adds in-flight requests, but costs slots: "
    .. "capacity is the cheaper knob."
end

return {
  id = "flink.async-io",
  title = "Async I/O operator at capacity",
  severity = "warning",
  sources = { "flink" },
  tags = { "performance", "external-systems", "backpressure" },
  options = {
    bp_high = 0.5,           -- upstream backpressure that means "input blocked"
    max_scale_factor = 2.0,  -- most capacity growth one recommendation proposes
  },
  description = "An async I/O operator (AsyncDataStream, an async SQL lookup join) "
    .. "blocks its input when its queue of in-flight requests is full: the upstream "
    .. "is backpressured while the operator itself is not.",
  check = function(run, ctx)
    if not fu.live(run) then
      return
    end
    local o = ctx.options
    for _, n in ipairs(run.nodes) do
      if fu.is_async_io(n) then
        local up, up_bp = blocked_parent(run, n, o)
        local own = fu.ratio(n, "backpressure_ratio")
        if up and (own or 0) <= o.bp_high then
          local s = fu.async_settings(run, n)
          local cap_known = s.capacity ~= nil
          local cap = s.capacity or DEFAULT_CAPACITY[s.kind]
          local factor = math.min(1 / math.max(1 - up_bp, 1e-9), o.max_scale_factor)
          local to = math.ceil(cap * factor)
          local p, rate = n.parallelism, n.metrics.records_in_per_s
          local latency
          if p and rate and rate > 0 then
            latency = cap * p / rate * 1000 -- Little's law, ms per request
          end
          local t = timeouts(run)
          ctx.report {
            node = n.id,
            message = ("%s is an async I/O operator at capacity: %s upstream is "
              .. "backpressured %s while this vertex is not (busy %s), so its queue of "
              .. "in-flight requests is full and it takes a record only when a request "
              .. "completes. Its settings: %s.%s%s"):format(
                quote(n), quote(up), pct(up_bp), pct(fu.ratio(n, "busy_ratio") or 0),
                settings_text(s, cap, cap_known),
                latency and (" With %s in flight (%d × %s) at %s records/s, "
                  .. "each takes about %s (Little's law): the external system's latency sets "
                  .. "the throughput."):format(units.format_count(cap * p, "request"), cap,
                    units.format_count(p, "subtask"), fmt_n(math.floor(rate + 0.5)),
                    fmt_d(latency)) or "",
                t > 0 and (" %s in the exception history timed out."):format(
                  units.format_count(t, "failover")) or ""),
            recommendation = recommendation(s, cap, to),
            evidence = {
              upstream_vertex = up.id,
              upstream_backpressure_ratio = up_bp,
              backpressure_ratio = own,
              busy_ratio = fu.ratio(n, "busy_ratio"),
              kind = s.kind,
              capacity = s.capacity,
              assumed_capacity = not cap_known and cap or nil,
              timeout_ms = s.timeout_ms or (s.sql and DEFAULT_TIMEOUT_MS or nil),
              output_mode = s.mode,
              in_flight = p and cap * p or nil,
              records_in_per_s = rate,
              latency_ms = latency,
              timeouts = t,
              target_capacity = to,
            },
            changes = s.sql and { { target = "job", key = s.capacity_key,
                                    from = cap_known and tostring(cap) or nil, to = tostring(to) } }
              or { { target = n.name or n.id, key = "AsyncDataStream capacity",
                     from = cap_known and cap or nil, to = to } },
          }
        end
      end
    end
  end,
}
