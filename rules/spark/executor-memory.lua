-- spark.executor-memory: right-sizes spark.executor.memory (and
-- spark.driver.memory) from the peak JVM heap the executors reported
-- (Task Executor Metrics, StageExecutorMetrics): heaps that never came
-- near their size shrink, with headroom; full heaps under GC grow. Out-of-
-- memory failures and killed containers are spark.failures' and heavy GC
-- is spark.gc's (one cause, one finding): then this rule stays quiet.
-- docs/rules/spark.executor-memory.md
local su = require "sparkutil"
local sd = require "sparkdetect"

-- Dr. Elephant's steps, as spark.gc uses them: one cause, one value.
local function grown(mem)
  local f = mem < 4 * su.GIB and 2 or mem < 8 * su.GIB and 1.5 or 1.25
  return su.round_mem(mem * f)
end

local function shrunk(peak, o)
  return math.max(su.round_mem(peak * o.headroom), o.min_heap_gib * su.GIB)
end

local function local_mode(run)
  return tostring(run.config["spark.master"] or ""):match("^local") ~= nil
end

-- The executor that reported the highest heap, for the evidence.
local function top_executor(run)
  local best
  for _, p in ipairs(run.series.executor_peaks or {}) do
    if p.executor_id ~= "driver" and (not best
        or (p.peak_jvm_heap_bytes or 0) > (best.peak_jvm_heap_bytes or 0)) then
      best = p
    end
  end
  return best
end

local function evidence(run, heap, peak)
  local m = run.metrics
  local top = top_executor(run)
  return {
    executor_memory_bytes = heap, peak_jvm_heap_bytes = peak,
    peak_heap_share = su.round(peak / heap, 3),
    executors_measured = m.executors_with_peaks,
    peak_executor = top and top.executor_id or nil,
    peak_execution_memory_bytes = m.executor_peak_onheap_execution_bytes,
    peak_storage_memory_bytes = m.executor_peak_onheap_storage_bytes,
    peak_offheap_bytes = m.executor_peak_jvm_offheap_bytes,
    peak_rss_bytes = m.executor_peak_jvm_rss_bytes,
    gc_ratio = (m.executor_run_ms or 0) > 0 and su.round((m.gc_ms or 0) / m.executor_run_ms, 3)
      or nil,
  }
end

local function grow(run, ctx, heap, peak, gc)
  local to = grown(heap)
  local ev = evidence(run, heap, peak)
  ctx.report {
    message = ("The executors' heap ran full: it peaked at %s of %s (%s) while tasks "
      .. "spent %s of their time in GC."):format(su.bytes(peak), su.mem_string(heap),
      su.pct(peak / heap), su.pct(gc)),
    recommendation = ("Raise spark.executor.memory from %s to %s (or give each task more "
      .. "of it with fewer spark.executor.cores)."):format(su.mem_string(heap), su.mem_string(to)),
    evidence = ev,
    changes = { { target = su.target(run), key = "spark.executor.memory",
                  from = su.mem_string(heap), to = su.mem_string(to) } },
  }
end

local function shrink(run, ctx, heap, peak)
  local o, m = ctx.options, run.metrics
  local to = shrunk(peak, o)
  if to > heap * (1 - o.min_saving_share) then
    return
  end
  local n = m.executors_max or m.executors_with_peaks or 1
  local ev = evidence(run, heap, peak)
  ev.proposed_bytes = to
  ev.headroom = o.headroom
  ctx.report {
    severity = "info",
    message = ("No executor used more than %s of its %s heap (%s, highest of %s measured); "
      .. "execution memory peaked at %s, storage at %s."):format(su.pct(peak / heap),
      su.mem_string(heap), su.bytes(peak), su.count(m.executors_with_peaks or 0, "executor"),
      su.bytes(m.executor_peak_onheap_execution_bytes or 0),
      su.bytes(m.executor_peak_onheap_storage_bytes or 0)),
    recommendation = sd.databricks(run)
      and ("Databricks sizes the executor heap from the worker type: pick a worker type "
        .. "with about %s of heap per executor (the peak × %.1f headroom) instead of %s, or "
        .. "a compute-optimized family with the same cores."):format(su.mem_string(to),
        o.headroom, su.mem_string(heap))
      or ("Lower spark.executor.memory from %s to %s (the peak × %.1f headroom): "
        .. "%s less memory reserved on %s, or more executors on the same nodes."):format(
        su.mem_string(heap), su.mem_string(to), o.headroom, su.bytes((heap - to) * n),
        su.count(n, "executor")),
    evidence = ev,
    changes = not sd.databricks(run) and { { target = su.target(run),
      key = "spark.executor.memory", from = su.mem_string(heap), to = su.mem_string(to) } }
      or nil,
  }
end

local function driver(run, ctx)
  local o, m = ctx.options, run.metrics
  local peak = m.driver_peak_jvm_heap_bytes
  if not peak or peak <= 0 then
    return
  end
  if not run.config["spark.driver.memory"] and su.settings_unknown(run) then
    return -- the 1g default may not be what the app had (the log lacks its settings)
  end
  local cur = run.config["spark.driver.memory"] or "1g"
  local heap = su.parse_mem(cur) or su.GIB
  local to, sev, msg
  if peak >= o.full_share * heap then
    to, sev = grown(heap), "warning"
    msg = ("The driver's heap peaked at %s of its %s: collect(), broadcasts and "
      .. "plans of this app need more."):format(su.bytes(peak), su.mem_string(heap))
  elseif peak < o.max_used_share * heap and heap >= o.min_driver_gib * su.GIB then
    to, sev = shrunk(peak, o), "info"
    if to > heap * (1 - o.min_saving_share) then
      return
    end
    msg = ("The driver never used more than %s of its %s heap (%s)."):format(
      su.pct(peak / heap), su.mem_string(heap), su.bytes(peak))
  else
    return
  end
  ctx.report {
    severity = sev,
    message = msg,
    recommendation = ("Set spark.driver.memory from %s to %s."):format(su.mem_string(heap),
      su.mem_string(to)),
    evidence = { driver_memory_bytes = heap, driver_peak_jvm_heap_bytes = peak,
                 peak_heap_share = su.round(peak / heap, 3), proposed_bytes = to },
    changes = { { target = su.target(run), key = "spark.driver.memory",
                  from = su.mem_string(heap), to = su.mem_string(to) } },
  }
end

return {
  id = "spark.executor-memory",
  title = "Executor and driver heap sized to the memory they used",
  severity = "warning",
  sources = { "spark" },
  tags = { "cost", "memory" },
  description = "Peak JVM heap of the executors (executor metrics) against spark.executor.memory; same for the driver.",
  options = {
    max_used_share = 0.5,   -- shrink when the peak stayed below this share of the heap
    headroom = 1.5,         -- proposed heap = peak × headroom (rounded up)
    min_saving_share = 0.25, -- propose a smaller heap only when it saves this share
    min_heap_gib = 1,       -- never propose less
    min_driver_gib = 4,     -- smaller drivers are not worth shrinking
    full_share = 0.95,      -- a heap "ran full" at this share of its size
    min_gc_ratio = 0.05,    -- GC / run time that counts as GC-bound; no shrink above it
    gc_rule_ratio = 0.1,    -- spark.gc's max_ratio: at or above it spark.gc advises
    min_run_ms = 10 * 60000, -- apps with less task time are left alone
  },
  check = function(run, ctx)
    local o, m = ctx.options, run.metrics
    driver(run, ctx)
    if local_mode(run) or (m.executor_run_ms or 0) < o.min_run_ms
        or (not run.config["spark.executor.memory"] and su.settings_unknown(run)) then
      return
    end
    local heap = su.executor_memory(run)
    local peak = m.executor_peak_jvm_heap_bytes
    local oom = sd.oom_evidence(run)
    local gc = (m.gc_ms or 0) / m.executor_run_ms
    if oom.killed.n > 0 or oom.heap.n > 0 then
      return -- spark.failures advises on the failures (one cause, one finding)
    end
    if peak and peak >= o.full_share * heap and gc >= o.min_gc_ratio and gc < o.gc_rule_ratio then
      grow(run, ctx, heap, peak, gc)
    elseif peak and peak > 0 and peak < o.max_used_share * heap and gc < o.min_gc_ratio
        and (m.memory_spill_bytes or 0) == 0 and (m.disk_spill_bytes or 0) == 0
        and not su.conf_bool(run, "spark.memory.offHeap.enabled") then
      -- with off-heap memory on (Photon, RAPIDS) execution memory is not in the heap
      shrink(run, ctx, heap, peak)
    end
  end,
}
