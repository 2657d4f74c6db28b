-- spark.recomputation: stages that read the same input again (the same
-- scan of the same files, or the same root RDD) without a persisted RDD
-- in between: the shared part is computed once per action. Caching it
-- turns every later read into a memory/disk read; the time the re-reads
-- took bounds the saving. Without a scan location (df.rdd, a plan that
-- names no Location) the same call site and scan reading exactly the same
-- bytes and records is the evidence, and the finding says it is inferred.
-- docs/rules/spark.recomputation.md
local su = require "sparkutil"
local sd = require "sparkdetect"

-- Storage memory of the app: (heap - 300 MiB) × spark.memory.fraction
-- per executor (Spark's unified memory manager), times the executors.
local function storage_bytes(run)
  local frac = tonumber((su.conf(run, "spark.memory.fraction"))) or 0.6
  local per = math.max(su.executor_memory(run) - 300 * su.MIB, 0) * frac
  return per * math.max(run.metrics.executors_max or 1, 1)
end

-- The key of a stage without a scan location: its call site, what it
-- scans, and exactly how many bytes and records it read; nil without
-- input.
local function inferred_key(n, item)
  local b, r = n.metrics.input_bytes or 0, n.metrics.input_records or 0
  if b <= 0 then
    return nil
  end
  return ("%s\0%s\0%d\0%d"):format(n.name or "", item or "", b, r)
end

-- Stages of one input: by attrs.scan_inputs items that name the files
-- (how = "files"), else by call site, scan and exact input bytes and
-- records (how = "inferred"). Returns by, order and how by key.
local function groups(run)
  local by, order, how = {}, {}, {}
  local function add(key, n, h)
    if not by[key] then
      by[key] = {}
      order[#order + 1] = key
      how[key] = h
    end
    for _, m in ipairs(by[key]) do
      if h == "inferred" and m.attrs.stage_id == n.attrs.stage_id then
        return -- a retried attempt of the stage: spark.failures' matter
      end
    end
    table.insert(by[key], n)
  end
  for _, n in ipairs(su.stages(run)) do
    local inputs = n.attrs.scan_inputs or n.attrs.scan
    local named = false
    if inputs then
      for item in (inputs .. "; "):gmatch("(.-); ") do
        -- a SQL scan whose files the plan does not tell apart (no Location,
        -- or several scans of that name) names no input by itself
        local sql_scan = item:find("Scan", 1, true) ~= nil
        if item ~= "" and (not sql_scan or item:find(" @ ", 1, true)) then
          add(item, n, "files")
          named = true
        end
      end
    end
    if not named then
      local key = inferred_key(n, inputs)
      if key then
        add(key, n, "inferred")
      end
    end
  end
  return by, order, how
end

local function start(n)
  return n.started_at or 0
end

local function check_group(run, ctx, input, stages, how)
  local o = ctx.options
  table.sort(stages, function(a, b) return start(a) < start(b) end)
  local first = stages[1]
  local again, bytes, ms, ids = {}, 0, 0, {}
  for _, n in ipairs(stages) do
    if n.attrs.persisted == "true" then
      return -- already cached: later reads come from the cache
    end
  end
  for i = 2, #stages do
    local n = stages[i]
    local b = n.metrics.input_bytes or 0
    if b >= o.min_input_gib * su.GIB then
      again[#again + 1] = n
      bytes = bytes + b
      ms = ms + (n.duration_ms or 0)
      ids[#ids + 1] = n.attrs.stage_id or n.id
    end
  end
  if #again == 0 or ms < o.min_saved_s * 1000 then
    return
  end
  local scan = input:gsub(" @ .*$", "")
  local basis = "the plan names the same files"
  if how == "inferred" then
    local what = first.attrs.scan_inputs or first.attrs.scan
    scan = what and ("%s at \"%s\""):format(what, first.name or "?")
      or ("the input of \"%s\""):format(first.name or "?")
    basis = ("inferred, likely: no scan location in the plan, but the same call site%s read "
      .. "exactly %s and %s each time"):format(what and " and scan" or "",
      su.bytes(first.metrics.input_bytes or 0), su.count(first.metrics.input_records or 0, "record"))
  end
  local size = first.metrics.input_bytes or again[1].metrics.input_bytes
  local fits = size <= storage_bytes(run)
  local level = fits and "MEMORY_AND_DISK" or "DISK_ONLY"
  local where = fits and ""
    or (": its %s exceed the %s of storage memory; or write it once to a table")
      :format(su.bytes(size), su.bytes(storage_bytes(run)))
  ctx.report {
    node = again[1].id,
    message = ("%s (%s) was read again by %s after %s had read it: %s re-read in %s of "
      .. "stage time, and nothing between them was persisted (%s)."):format(
      scan, su.bytes(size), #again == 1 and ("stage " .. ids[1])
        or (su.count(#again, "stage") .. " (" .. sd.list(ids, 5) .. ")"),
      su.stage_label(first), su.bytes(bytes), su.dur(ms), basis),
    recommendation = ("Persist what %s reads once, before the first action that uses it "
      .. "(df.persist(StorageLevel.%s)%s) and unpersist() it after the last: the later stages "
      .. "then read the cache instead of the source, saving up to %s."):format(
      scan, level, where, su.dur(ms)),
    evidence = {
      input = how == "inferred" and scan or input, certainty = how == "inferred" and "likely"
        or "certain", basis = basis,
      first_stage = first.id, first_input_bytes = first.metrics.input_bytes,
      first_input_records = first.metrics.input_records,
      reread_stages = #again, reread_bytes = bytes, reread_ms = ms,
      storage_memory_bytes = math.floor(storage_bytes(run)),
    },
    impact = { time_saved_ms = math.floor(ms) },
  }
end

return {
  id = "spark.recomputation",
  title = "The same input read again by later stages (cache the shared part)",
  severity = "warning",
  sources = { "spark" },
  tags = { "performance", "cost" },
  description = "Stages whose scans read the same files (or the same root RDD) as an earlier stage, with no persisted RDD.",
  options = {
    min_input_gib = 1, -- a re-read stage must read at least this much
    min_saved_s = 60,  -- the re-reads together took at least this long
  },
  check = function(run, ctx)
    local by, order, how = groups(run)
    for _, input in ipairs(order) do
      if #by[input] >= 2 then
        check_group(run, ctx, input, by[input], how[input])
      end
    end
  end,
}
