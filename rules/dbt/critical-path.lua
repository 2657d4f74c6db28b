-- dbt.critical-path: a long build bounded by its longest dependency chain.
-- The plugin computes the chain from the manifest's DAG and the node
-- timings (series "critical_path", metric critical_path_ms); this rule
-- says what it costs, what more threads could and could not gain, and
-- which models on it to speed up or split. docs/rules/dbt.critical-path.md
local du = require "dbtutil"

return {
  id = "dbt.critical-path",
  title = "The longest dependency chain bounds the build",
  severity = "warning",
  sources = { "dbt" },
  tags = { "performance", "dag" },
  description = "Needs a manifest.json of the run (or of the same project) next to run_results.json.",
  options = {
    min_span_s = 600,      -- only builds at least this long
    min_share = 0.5,       -- critical path / span
    dominant_share = 0.25, -- a model on the path holding this share of it is named
    warn_share = 0.5,      -- a warning when one model holds this share of the path, else info
  },
  check = function(run, ctx)
    local o = ctx.options
    local m = run.metrics
    local cp, span = m.critical_path_ms, m.span_ms
    local path = run.series.critical_path
    if not du.executing(run) or not cp or not span or span <= 0 or not path then
      return
    end
    local share = cp / span
    if span < o.min_span_s * 1000 or share < o.min_share then
      return
    end
    local names, dominant = {}, {}
    for _, rec in ipairs(path) do
      names[#names + 1] = rec.name
      local n = run.by_id[rec.node]
      if n and du.builds(n) and rec.duration_ms >= o.dominant_share * cp then
        dominant[#dominant + 1] = { node = n, ms = rec.duration_ms }
      end
    end
    table.sort(dominant, function(a, b)
      return a.ms > b.ms
    end)
    -- With unlimited threads the build still runs the chain plus the
    -- serial hooks on `main`.
    local floor_ms = math.min(span, cp + (m.hook_ms or 0))
    local gain = span - floor_ms
    local top = dominant[1]
    local threads_say
    if gain < 0.05 * span then
      threads_say = "More threads would not make it shorter: it already runs as fast as "
        .. "the chain allows."
    else
      threads_say = ("More threads cannot make the build shorter than about %s; at best "
        .. "they save %s."):format(du.dur(floor_ms), du.dur(gain))
    end
    local msg = ("The longest dependency chain (%s) takes %s: %s of the %s build. %s"):format(
      table.concat(names, " > "), du.dur(cp), du.pct(share, 0), du.dur(span), threads_say)
    local rec
    if top then
      local list = {}
      for _, d in ipairs(dominant) do
        list[#list + 1] = ("%s (%s, %s of the chain)"):format(du.name(d.node),
          du.dur(d.ms), du.pct(d.ms / cp, 0))
      end
      rec = ("Shorten the chain where it is long: %s. Make it incremental, split "
        .. "it into independent models that can run in parallel, or move work "
        .. "off the chain (%s)."):format(du.list(list, 3), du.target(top.node))
    else
      rec = "Shorten the chain: make its slowest models incremental or split them "
        .. "into independent models that can run in parallel."
    end
    ctx.report {
      node = top and top.node.id or nil,
      severity = (top and top.ms >= o.warn_share * cp) and "warning" or "info",
      message = msg,
      recommendation = rec,
      evidence = {
        critical_path_s = du.secs(cp), span_s = du.secs(span),
        share = math.floor(share * 1000 + 0.5) / 1000, chain_nodes = #path,
        chain = table.concat(names, " > "),
        best_span_s = du.secs(floor_ms), threads = m.threads,
        dominant = top and du.name(top.node) or nil,
        dominant_s = top and du.secs(top.ms) or nil,
      },
    }
  end,
}
