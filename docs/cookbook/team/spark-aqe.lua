-- team.spark-aqe: Spark SQL applications run with adaptive query execution
-- (it coalesces shuffle partitions and splits skewed joins at run time).
-- docs/cookbook.md
local KEY = "spark.sql.adaptive.enabled"

-- AQE is on by default from Spark 3.2.
local function default_on(run)
  local major, minor = (run.engine_version or ""):match("^(%d+)%.(%d+)")
  return not major or tonumber(major) * 100 + tonumber(minor) >= 302
end

return {
  id = "team.spark-aqe",
  title = "Adaptive query execution is off",
  severity = "warning",
  sources = { "spark" },
  tags = { "configuration", "performance" },
  options = {},
  description = "Reports Spark applications that run without adaptive query "
    .. "execution, set off explicitly or by an old Spark's default.",
  check = function(run, ctx)
    local v = run.config[KEY]
    local on
    if v then
      on = v:lower() == "true"
    else
      on = default_on(run)
    end
    if on then
      return
    end
    ctx.report {
      message = ("%s runs without adaptive query execution (%s)."):format(
        run.name or run.id, v and (KEY .. " = " .. v)
          or ("not set; Spark " .. run.engine_version .. " defaults to false")),
      recommendation = ("Set %s to true."):format(KEY),
      evidence = { configured = v ~= nil },
      changes = { { target = run.name or run.id, key = KEY, from = v, to = "true" } },
    }
  end,
}
