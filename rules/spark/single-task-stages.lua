-- spark.single-task-stages: stages of one task that hold a large share of
-- the app's job time while the other cores wait. One task means one core:
-- coalesce(1) / repartition(1) before a write (to get one output file),
-- a window or sort over the whole data without a partition key, training
-- data in one partition (every tree-aggregation stage of an MLlib fit then
-- runs one task). The stages are named with their share of the job time;
-- the fix is in the code (more partitions), not in a key.
-- docs/rules/spark.single-task-stages.md
local su = require "sparkutil"
local sd = require "sparkdetect"

local function kind_of(names)
  local write, ml = 0, 0
  for _, name in ipairs(names) do
    local l = name:lower()
    if l:find("save") or l:find("parquet") or l:find("csv") or l:find("json at")
        or l:find("insert") or l:find("write") or l:find("orc at") then
      write = write + 1
    elseif l:find("tree") or l:find("forest") or l:find("gradient") or l:find("fit at")
        or l:find("mllib") or l:find("randomforest") or l:find("collectasmap") then
      ml = ml + 1
    end
  end
  if write > 0 and write >= ml then
    return "write"
  elseif ml > 0 then
    return "ml"
  end
  return "other"
end

local FIX = {
  write = "They write through one task: a coalesce(1) or repartition(1) before the write "
    .. "(to get one output file) makes one core do all of it. Drop it and write with the "
    .. "partitions the data has (or repartition(%d) to use every core); if one file is "
    .. "really needed, merge the files afterwards (hadoop fs -getmerge, a table format's "
    .. "compaction) or write one file per partition value with partitionBy().",
  ml = "They are the steps of a model fit on data in one partition: every tree "
    .. "aggregation then runs one task. repartition(%d) the training DataFrame (and "
    .. "cache it) before fit(), so each step uses every core.",
  other = "Find what made the stage one partition (coalesce(1), repartition(1), a Window "
    .. "without partitionBy, a global sort or limit, an RDD read as one split) and give "
    .. "it a partition key or repartition(%d), so the work is spread over the cores.",
}

return {
  id = "spark.single-task-stages",
  title = "Stages of a single task take a large share of the job time on one core",
  severity = "warning",
  sources = { "spark" },
  tags = { "performance", "partitioning" },
  description = "Stage attempts that ran one task while the app had many cores, together "
    .. "taking a large share of the job time.",
  options = {
    min_stage_s = 30,    -- a single-task stage counts when it ran at least this long
    min_share = 0.2,     -- together at least this share of the app's job time
    min_cores = 4,       -- the app had at least this many cores (else one task is most of them)
  },
  check = function(run, ctx)
    local o = ctx.options
    local cores = su.total_cores(run)
    local jobs_ms = run.metrics.jobs_wall_ms or 0
    if not cores or cores < o.min_cores or jobs_ms <= 0 then
      return
    end
    local hits, ms = {}, 0
    for _, n in ipairs(su.stages(run)) do
      local tasks = n.parallelism or n.metrics.tasks or 0
      local d = n.duration_ms or 0
      if tasks == 1 and d >= o.min_stage_s * 1000 then
        hits[#hits + 1] = n
        ms = ms + d
      end
    end
    if #hits == 0 then
      return
    end
    -- the wall time they held: concurrent ones count once
    table.sort(hits, function(a, b) return (a.started_at or 0) < (b.started_at or 0) end)
    local wall, lo, hi = 0, nil, nil
    for _, n in ipairs(hits) do
      local s = n.started_at or 0
      local e = s + (n.duration_ms or 0)
      if not hi or s > hi then
        wall = wall + (hi and hi - lo or 0)
        lo, hi = s, e
      else
        hi = math.max(hi, e)
      end
    end
    wall = wall + (hi - lo)
    jobs_ms = math.max(jobs_ms, wall)
    if wall / jobs_ms < o.min_share then
      return
    end
    table.sort(hits, function(a, b) return (a.duration_ms or 0) > (b.duration_ms or 0) end)
    local labels, names, ids = {}, {}, {}
    for i, n in ipairs(hits) do
      if i <= 5 then
        labels[#labels + 1] = ("%s (%s)"):format(su.stage_label(n), su.dur(n.duration_ms))
      end
      names[#names + 1] = n.name or ""
      ids[#ids + 1] = n.id
    end
    local kind = kind_of(names)
    -- spread over every core the stage would take about 1/cores of its time
    local saved = math.floor(wall - wall / cores)
    local more = #hits > 5 and (" and %d more"):format(#hits - 5) or ""
    ctx.report {
      node = hits[1].id,
      message = ("%s of one task each took %s of the app's %s of job time (%s) on 1 of its %s: "
        .. "%s%s."):format(su.count(#hits, "stage"), su.dur(wall), su.dur(jobs_ms),
        su.pct(wall / jobs_ms), su.count(cores, "core"), table.concat(labels, ", "), more),
      recommendation = FIX[kind]:format(su.nice_count(cores, cores))
        .. (" Spread over the %s, these stages would take about %s instead of %s.")
          :format(su.count(cores, "core"), su.dur(wall / cores), su.dur(wall)),
      evidence = { stages = #hits, stage_ids = sd.list(ids, 20), single_task_ms = ms,
                   wall_ms = wall, jobs_wall_ms = jobs_ms, share = su.round(wall / jobs_ms, 3),
                   cores = cores,
                   cause = kind },
      impact = { time_saved_ms = saved },
    }
  end,
}
