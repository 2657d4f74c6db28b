-- team.dbt-before-spark: the Spark application that reads the dbt
-- project's tables starts only after that project's build has finished.
-- A rule over every run at once (sources = { "*" }). docs/cookbook.md
local units = require "optipipe.units"

return {
  id = "team.dbt-before-spark",
  title = "Spark job started before the dbt build it reads had finished",
  severity = "error",
  sources = { "*" },
  tags = { "scheduling", "correctness" },
  -- Lua patterns matched against the run names
  options = { dbt_run = "^shop:", spark_app = "^nightly%-orders$" },
  description = "Pairs each matching Spark application with the latest matching "
    .. "dbt build that started before it, and reports an overlap.",
  check = function(bundle, ctx)
    local o = ctx.options
    for _, app in ipairs(bundle.runs) do
      if app.source == "spark" and (app.name or ""):find(o.spark_app) and app.started_at then
        local build
        for _, r in ipairs(bundle.runs) do
          if r.source == "dbt" and (r.name or ""):find(o.dbt_run) and r.started_at
              and r.started_at <= app.started_at
              and (not build or r.started_at > build.started_at) then
            build = r
          end
        end
        if build and build.ended_at and build.ended_at > app.started_at then
          ctx.report {
            run = app,
            message = ("%s started %s before the dbt build '%s' had finished: it may "
              .. "read tables that are still being rebuilt."):format(app.name,
                units.format_duration(build.ended_at - app.started_at), build.name),
            recommendation = "Make the Spark job depend on the dbt build's completion "
              .. "in the scheduler instead of on a start time.",
            evidence = { overlap_ms = build.ended_at - app.started_at, dbt_run = build.id },
          }
        end
      end
    end
  end,
}
