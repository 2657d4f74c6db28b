-- dbt.cost: models that bill many bytes or slot-hours where the adapter
-- reports them (BigQuery bytes_billed and slot_ms), with an on-demand
-- price estimate. Quiet on adapters that report no cost.
-- docs/rules/dbt.cost.md
local du = require "dbtutil"
local units = require "optipipe.units"

local TiB = 1024 ^ 4

return {
  id = "dbt.cost",
  title = "Models that bill the most bytes or slot time",
  severity = "warning",
  sources = { "dbt" },
  tags = { "cost", "bigquery" },
  options = {
    max_bytes_billed = "1 TiB", -- per model and run
    max_slot_hours = 10,        -- per model and run
    price_per_tib = 0,          -- the team's on-demand price per TiB billed (0: none; no
                                -- price ships: prices go stale, docs/costs.md)
    max_reports = 5,
  },
  check = function(run, ctx)
    local o = ctx.options
    if not du.executing(run) then
      return
    end
    local max_bytes = units.parse_bytes(o.max_bytes_billed)
    local total = run.metrics.bytes_billed
    local found = {}
    for _, n in ipairs(run.nodes) do
      local b, s = n.metrics.bytes_billed, n.metrics.slot_ms
      local slot_h = s and s / 3600000 or nil
      if (b and b >= max_bytes) or (slot_h and slot_h >= o.max_slot_hours) then
        found[#found + 1] = { node = n, bytes = b or 0, slot_h = slot_h }
      end
    end
    table.sort(found, function(a, x)
      return a.bytes > x.bytes
    end)
    for i = 1, math.min(#found, o.max_reports) do
      local f, n = found[i], found[i].node
      local parts = {}
      if f.bytes > 0 then
        local cost = o.price_per_tib > 0
            and (" (about $%.2f on demand)"):format(f.bytes / TiB * o.price_per_tib) or ""
        parts[#parts + 1] = ("billed %s%s"):format(units.format_bytes(f.bytes), cost)
      end
      if f.slot_h then
        parts[#parts + 1] = ("used %.1f slot-hours"):format(f.slot_h)
      end
      local share = (total and total > 0 and f.bytes > 0)
          and (", %s of the build's bytes"):format(du.pct(f.bytes / total, 0)) or ""
      ctx.report {
        node = n.id,
        message = ("%s %s in one run%s."):format(du.name(n), table.concat(parts, " and "), share),
        recommendation = ("Cut what %s scans: partition and cluster its sources and "
          .. "filter on the partition column, select only needed columns, and make it "
          .. "incremental (%s) so a run reads only new partitions."):format(du.name(n),
          du.target(n)),
        evidence = {
          bytes_billed = f.bytes > 0 and f.bytes or nil,
          slot_hours = f.slot_h and math.floor(f.slot_h * 100 + 0.5) / 100 or nil,
          run_bytes_billed = total,
          usd_on_demand = (f.bytes > 0 and o.price_per_tib > 0)
            and math.floor(f.bytes / TiB * o.price_per_tib * 100 + 0.5) / 100 or nil,
        },
      }
    end
  end,
}
