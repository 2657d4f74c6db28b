-- kafka-streams.state-skew: one task's share of a store (or of the
-- restore, or of a changelog's lag) far above the median task's, for
-- every state metric: the hot task sets restore time and instance load
-- while fleet averages look fine. docs/rules/kafka-streams.state-skew.md
local stats = require "optipipe.stats"
local units = require "optipipe.units"
local ks = require "kstate"
local rocksdb = require "optipipe.rocksdb"

local KINDS = { store = true, task = true, changelog = true }

-- Nodes grouped by what they are: a store's (or changelog's) tasks by
-- store name, task nodes together; in model order.
local function groups(run)
  local out, by = {}, {}
  for _, n in ipairs(run.nodes) do
    if KINDS[n.kind] then
      local k = n.kind .. "\0" .. ((n.attrs or {}).store or "")
      if not by[k] then
        by[k] = { kind = n.kind, store = (n.attrs or {}).store, nodes = {} }
        out[#out + 1] = by[k]
      end
      local g = by[k].nodes
      g[#g + 1] = n
    end
  end
  return out
end

-- Every metric of group g whose largest node value is skew_factor times
-- the median or more (and over its floor), largest factor first.
local function skewed(g, o)
  local names, seen = {}, {}
  for _, n in ipairs(g.nodes) do
    for k in pairs(n.metrics) do
      if not seen[k] then
        seen[k] = true
        names[#names + 1] = k
      end
    end
  end
  table.sort(names)
  local out = {}
  for _, name in ipairs(names) do
    local floor = rocksdb.skew_floor(name, { min_bytes = o.min_bytes, min_count = o.min_count,
      min_bytes_per_s = o.min_bytes_per_s, min_duration = o.min_duration })
    local vals, top = {}, nil
    for _, n in ipairs(g.nodes) do
      local v = n.metrics[name]
      if type(v) == "number" and v == v and v >= 0 then
        vals[#vals + 1] = v
        if not top or v > top.metrics[name] then
          top = n
        end
      end
    end
    if floor and #vals >= o.min_tasks then
      local med, max = stats.median(vals), top.metrics[name]
      local factor = rocksdb.skew(max, med, floor, o.skew_factor)
      if factor then
        out[#out + 1] = { name = name, top = top, max = max, median = med, n = #vals, factor = factor }
      end
    end
  end
  table.sort(out, function(a, b)
    if a.factor ~= b.factor then return a.factor > b.factor end
    return a.name < b.name
  end)
  return out
end

local function what(g, n)
  if g.kind == "task" then
    return units.format_count(n, "task")
  elseif g.kind == "changelog" then
    return ("the %s of store '%s'"):format(units.format_count(n, "changelog partition"), g.store or "?")
  end
  return ("the %s of store '%s'"):format(units.format_count(n, "task"), g.store or "?")
end

local function part_text(s)
  if s.factor == math.huge then
    return ("%s %s on %s (the median is %s)"):format(s.name, rocksdb.value_text(s.name, s.max),
      ks.label(s.top), rocksdb.value_text(s.name, s.median))
  end
  return ("%s %s on %s (%s the median %s)"):format(s.name, rocksdb.value_text(s.name, s.max),
    ks.label(s.top), units.format_ratio(s.factor), rocksdb.value_text(s.name, s.median))
end

return {
  id = "kafka-streams.state-skew",
  title = "One task holds far more state, restore or lag than the median task",
  severity = "warning",
  sources = { "kafka-streams", "samza" },
  tags = { "state", "skew" },
  options = {
    skew_factor = 4,            -- the largest task at least this many times the median
    min_tasks = 3,              -- fewer tasks have no median worth the name
    min_bytes = "1 gb",         -- floors of the largest value, by unit
    min_bytes_per_s = "1 mb",
    min_duration = "1 min",
    min_count = 100000,         -- keys, records, other counts and rates
    max_listed = 4,             -- metrics named in one message
  },
  description = "Compares every state metric of a store's tasks (and of the tasks, and of "
    .. "the changelog partitions) with the median task, never the average.",
  check = function(run, ctx)
    local o = ctx.options
    for _, g in ipairs(groups(run)) do
      local list = skewed(g, o)
      if #list > 0 then
        local first, parts = list[1], {}
        for i = 1, math.min(#list, o.max_listed) do
          parts[i] = part_text(list[i])
        end
        if #list > o.max_listed then
          parts[#parts + 1] = ("%d more"):format(#list - o.max_listed)
        end
        ctx.report {
          node = first.top.id,
          message = ("Skew across %s: %s. The hot task restores longest, loads "
            .. "its instance most and is what a fleet average hides."):format(
              what(g, first.n), table.concat(parts, "; ")),
          recommendation = "A task is one input partition: find the hot keys of that partition "
            .. "(count records per key upstream) and spread them (a better key, a salted key "
            .. "with a second aggregation step, pre-aggregation before the repartition); "
            .. "check for null or default keys. More partitions move other keys away but not "
            .. "a hot key. Meanwhile give the hot task's instance the disk and a standby.",
          evidence = { metric = first.name, max = first.max, median = first.median,
                       skew_ratio = first.factor ~= math.huge and first.factor or nil,
                       tasks = first.n, skewed_metrics = #list },
        }
      end
    end
  end,
}
