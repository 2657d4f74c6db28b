-- spark.regression: the app, or one of its stages, far slower than its
-- own history (the earlier runs of the same job: the run store, else the
-- logs given together). Median + MAD like dbt.regression (stats.regression);
-- then attributed: more input read or fewer executor cores explain a slower
-- run (info: not a regression of the code); otherwise it names the stages
-- that grew and what changed since the last good run.
-- docs/rules/spark.regression.md
local su = require "sparkutil"
local sh = require "sparkhist"
local stats = require "optipipe.stats"
local history = require "optipipe.history"

local function test_opts(o, min_increase)
  return { min_history = o.min_history, min_ratio = o.min_ratio,
           min_increase = min_increase, mad_threshold = o.mad_threshold }
end

local function round2(x)
  return math.floor(x * 100 + 0.5) / 100
end

-- The values of f over runs, or nil when a run has none.
local function all_values(runs, f)
  local out = {}
  for i, h in ipairs(runs) do
    local v = f(h)
    if not v then
      return nil
    end
    out[i] = v
  end
  return out
end

-- A stage's regression: Σ task time against the same stage's in the
-- earlier runs; volume = how much more it read when the time per byte
-- read did not rise (then the growth is expected).
local function stage_result(key, n, hist_stages, o)
  local cur, cur_in = sh.stage_work(n), sh.stage_input(n)
  local vals, per, ins = {}, {}, {}
  for _, hs in ipairs(hist_stages) do
    local hn = hs[key]
    local w = hn and sh.stage_work(hn)
    if w then
      vals[#vals + 1] = w
      local hin = sh.stage_input(hn)
      if per and hin then
        per[#per + 1], ins[#ins + 1] = w / hin, hin
      else
        per = nil
      end
    end
  end
  local r = cur and stats.regression(cur, vals, test_opts(o, o.stage_min_increase_s * 1000))
  if not r then
    return nil
  end
  local res = { key = key, node = n, cur = cur, vals = vals, r = r }
  if per and cur_in then
    res.input, res.median_input = cur_in, stats.median(ins)
    res.volume = cur_in / res.median_input
    local per_byte = stats.regression(cur / cur_in, per, test_opts(o, 0))
    res.explained = not per_byte and res.volume >= o.min_factor
  end
  return res
end

local function stage_results(run, hist, o)
  local cur, keys = sh.stages(run)
  local hist_stages = {}
  for i, h in ipairs(hist) do
    hist_stages[i] = (sh.stages(h))
  end
  local out = {}
  for _, key in ipairs(keys) do
    out[#out + 1] = stage_result(key, cur[key], hist_stages, o)
  end
  table.sort(out, function(a, b)
    return a.r.delta > b.r.delta
  end)
  return out
end

-- The app's regression by wall time, then the same test on the resources
-- it used (core-ms) per byte of input: when that did not rise, more input
-- or fewer cores explain the time.
local function app_result(run, hist, o)
  local vals = history.values(hist, function(h)
    return h.duration_ms
  end)
  local r = stats.regression(run.duration_ms, vals, test_opts(o, o.min_increase_s * 1000))
  if not r then
    return nil
  end
  local res = { r = r, vals = vals }
  local core_ms = sh.core_ms(run) and all_values(hist, sh.core_ms)
  local inputs = sh.input(run) and all_values(hist, sh.input)
  local cores = sh.cores(run) and all_values(hist, sh.cores)
  local function norm(x)
    local v = core_ms and sh.core_ms(x) or x.duration_ms
    return inputs and v / sh.input(x) or v
  end
  local normed = stats.regression(norm(run), history.values(hist, norm), test_opts(o, 0))
  if inputs then
    res.input, res.median_input = sh.input(run), stats.median(inputs)
    res.volume = res.input / res.median_input
  end
  if cores then
    res.cores, res.median_cores = sh.cores(run), stats.median(cores)
  end
  local more_input = inputs and res.volume >= o.min_factor
  local fewer_cores = core_ms and cores and res.cores * o.min_factor <= res.median_cores
  res.explained = not normed and (more_input or fewer_cores) and true or false
  res.more_input, res.fewer_cores = more_input, fewer_cores
  return res
end

-- The newest earlier run that was not itself slow (under min_ratio x the
-- median), and what differs between it and run: config keys (but those
-- that change on every run), executors x cores, the Spark version.
local function changes_since_good(run, hist, median, o)
  local good
  for _, h in ipairs(hist) do
    if h.duration_ms < median * o.min_ratio then
      good = h
      break
    end
  end
  if not good then
    return nil, {}
  end
  local diff = history.config_diff(good.config, run.config, sh.volatile(o.ignore_keys))
  local parts = {}
  if #diff > 0 then
    parts[#parts + 1] = history.describe_diff(diff, o.max_listed)
  end
  local a, b = sh.shape(good), sh.shape(run)
  if a and b and a ~= b then
    parts[#parts + 1] = ("executors x cores %s -> %s"):format(a, b)
  end
  if good.engine_version and run.engine_version and good.engine_version ~= run.engine_version then
    parts[#parts + 1] = ("Spark %s -> %s"):format(good.engine_version, run.engine_version)
  end
  return good, parts, diff
end

local function changed_text(good, parts)
  if not good then
    return "No earlier run was fast enough to compare the config with."
  end
  if #parts == 0 then
    return ("Nothing in the config, executors x cores or Spark version changed since the "
      .. "last good run %s: look at the data (skew, new values) and the code."):format(good.id)
  end
  return ("Changed since the last good run %s: %s."):format(good.id, table.concat(parts, "; "))
end

local function stage_label(key)
  local name, k = key:match("^(.*)#(%d+)$")
  return k == "1" and ("'%s'"):format(name) or ("'%s' (#%s of that name)"):format(name, k)
end

local function report_stage(ctx, s, why, diff)
  local r = s.r
  local same = s.volume and (", with the same input (%s, %s)"):format(su.times(s.volume),
    su.bytes(s.input)) or ""
  ctx.report {
    node = s.node.id,
    message = ("Stage %s spent %s in tasks, %s its median of %s over the %s (+%s)%s. %s")
      :format(stage_label(s.key), su.dur(s.cur), su.times(r.ratio), su.dur(r.median),
        su.count(#s.vals, "previous run"), su.dur(r.delta), same, why),
    recommendation = ("Compare this stage with the last good run (its plan, partitions and "
      .. "the data it reads); revert a changed key that was not meant to slow it down."),
    evidence = {
      stage = s.key, task_time_ms = math.floor(s.cur), median_ms = math.floor(r.median),
      mad_ms = math.floor(r.mad), ratio = round2(r.ratio), history_runs = #s.vals,
      input_ratio = s.volume and round2(s.volume) or nil,
      changed_keys = diff,
    },
    impact = { time_saved_ms = math.floor(r.delta) },
  }
end

-- A stage slower because it read more: info, so "why is it slower" has
-- its answer, but not a warning.
local function report_volume_stage(ctx, s)
  local r = s.r
  ctx.report {
    node = s.node.id, severity = "info",
    message = ("Stage %s spent %s in tasks, %s its median of %s over the %s, as expected: "
      .. "volume grew %s (it read %s against a median of %s) and the time per byte did not "
      .. "rise. Not a regression of the code."):format(stage_label(s.key), su.dur(s.cur),
      su.times(r.ratio), su.dur(r.median), su.count(#s.vals, "previous run"),
      su.times(s.volume), su.bytes(s.input), su.bytes(s.median_input)),
    recommendation = "Nothing to fix in the stage; plan capacity for the larger input if it stays.",
    evidence = { stage = s.key, task_time_ms = math.floor(s.cur), median_ms = math.floor(r.median),
      ratio = round2(r.ratio), history_runs = #s.vals, input_ratio = round2(s.volume) },
  }
end

local function explained_text(a)
  local parts = {}
  if a.more_input then
    parts[#parts + 1] = ("its input grew %s (%s against a median of %s)"):format(
      su.times(a.volume), su.bytes(a.input), su.bytes(a.median_input))
  end
  if a.fewer_cores then
    parts[#parts + 1] = ("it ran on %d executor cores against a median of %d"):format(
      a.cores, math.floor(a.median_cores))
  end
  return table.concat(parts, " and ")
end

local function report_app(ctx, run, a, slow, why, diff)
  local r = a.r
  local head = ("The app took %s, %s its median of %s over the %s (+%s)"):format(
    su.dur(run.duration_ms), su.times(r.ratio), su.dur(r.median),
    su.count(#a.vals, "previous run"), su.dur(r.delta))
  local ev = {
    current_ms = run.duration_ms, median_ms = math.floor(r.median), ratio = round2(r.ratio),
    history_runs = #a.vals, input_ratio = a.volume and round2(a.volume) or nil,
    cores = a.cores, median_cores = a.median_cores,
  }
  if a.explained then
    ctx.report {
      severity = "info",
      message = ("%s, as expected: %s, and the resources per byte read did not rise. "
        .. "Not a regression of the code."):format(head, explained_text(a)),
      recommendation = "Nothing to fix in the job; plan capacity for the larger input if it stays.",
      evidence = ev,
    }
    return
  end
  local top = slow[1] and ("; the stage that grew most: %s (+%s task time)"):format(
    stage_label(slow[1].key), su.dur(slow[1].r.delta)) or "; no single stage regressed"
  local same = a.volume and (" with the same input (%s)"):format(su.times(a.volume)) or ""
  ev.changed_keys = diff
  ctx.report {
    message = ("%s%s%s. %s"):format(head, same, top, why),
    recommendation = slow[1] and ("Start with stage %s; compare it with the last good run.")
        :format(stage_label(slow[1].key))
      or "Compare the driver time, job count and executor timeline with the last good run.",
    evidence = ev,
    impact = { time_saved_ms = math.floor(r.delta) },
  }
end

return {
  id = "spark.regression",
  title = "App or stage far slower than its own history",
  severity = "warning",
  sources = { "spark" },
  tags = { "performance", "history" },
  description = "Compares a run with the earlier runs of the same job, attributing growth to "
    .. "input volume, resources, or the stages and settings that changed.",
  options = {
    min_history = 3,           -- earlier successful runs needed for a baseline
    max_history = 30,          -- earlier runs read (newest first)
    min_ratio = 1.5,           -- current / median
    min_increase_s = 60,       -- app: current - median, seconds of wall time
    stage_min_increase_s = 30, -- stage: current - median, seconds of task time
    mad_threshold = 5,         -- increase must exceed this many robust sigmas (1.4826 MAD)
    min_factor = 1.2,          -- input growth / core loss that counts as an explanation
    max_listed = 5,            -- changed config keys named in a message
    ignore_keys = {            -- Lua patterns of keys that differ on every run
      "^spark%.app%.id$", "^spark%.app%.name$", "^spark%.app%.startTime$",
      "^spark%.app%.submitTime$", "^spark%.app%.attempt", "^spark%.driver%.host$",
      "^spark%.driver%.port$", "^spark%.driver%.appUIAddress$", "^spark%.ui%.",
      "^spark%.org%.apache%.hadoop%.yarn%.server%.webproxy", "^spark%.repl%.class%.",
      "^spark%.yarn%.app%.", "^spark%.kubernetes%.driver%.pod%.name$",
      "^spark%.databricks%.clusterUsageTags%.",
    },
  },
  check = function(run, ctx)
    local o = ctx.options
    if run.status ~= "succeeded" or not run.duration_ms then
      return
    end
    local hist = history.filter(history.earlier(run, ctx, o.max_history), function(h)
      return h.status == "succeeded" and h.duration_ms ~= nil
    end)
    if #hist < o.min_history then
      return
    end
    local durations = history.values(hist, function(h)
      return h.duration_ms
    end)
    local good, parts, diff = changes_since_good(run, hist, stats.median(durations), o)
    local why = changed_text(good, parts)
    local keys = {}
    for i, d in ipairs(diff or {}) do
      keys[i] = d.key
    end
    local slow = {}
    local a = app_result(run, hist, o)
    for _, s in ipairs(stage_results(run, hist, o)) do
      if s.explained then
        -- the app's own info finding already says the volume grew
        if not (a and a.explained) then
          report_volume_stage(ctx, s)
        end
      else
        slow[#slow + 1] = s
        report_stage(ctx, s, why, keys)
      end
    end
    if a then
      report_app(ctx, run, a, slow, why, keys)
    end
  end,
}
