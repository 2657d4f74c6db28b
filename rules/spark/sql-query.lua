-- spark.sql-query: per SQL execution, the plan operators that cost the
-- most and the plan shapes experts look for first: scans of many small
-- files, broadcasts too large to ship to every executor, joins without an
-- equality condition (cartesian products, nested-loop joins) that produced
-- many rows, and full scans of a partitioned table. Each finding names the
-- query's duration, its stages and its heaviest operators.
-- docs/rules/spark.sql-query.md
local su = require "sparkutil"
local sd = require "sparkdetect"

local function name_of(op)
  return (op.name or ""):gsub("%s+$", "")
end

-- "WholeStageCodegen (1) 3h 00m, BroadcastExchange 1m 35s"
local function heaviest(ops, max)
  local timed = {}
  for _, op in ipairs(ops) do
    if sd.op_ms(op) > 0 then
      timed[#timed + 1] = op
    end
  end
  table.sort(timed, function(a, b)
    if sd.op_ms(a) ~= sd.op_ms(b) then
      return sd.op_ms(a) > sd.op_ms(b)
    end
    return a.op < b.op
  end)
  local out = {}
  for i = 1, math.min(#timed, max) do
    out[#out + 1] = ("%s %s"):format(name_of(timed[i]), su.dur(sd.op_ms(timed[i])))
  end
  return table.concat(out, ", ")
end

-- What every finding of the query says about it.
local function summary(q, ops)
  local h = heaviest(ops, 3)
  return ("%s took %s over %s%s"):format(sd.sql_label(q), su.dur(q.duration_ms or 0),
    su.count(q.metrics.stages or 0, "stage"), h ~= "" and (", heaviest operators by task time: " .. h) or ""),
    { query_ms = q.duration_ms, stages = q.metrics.stages, stage_ids = q.attrs.stage_ids,
      heaviest_operators = h ~= "" and h or nil }
end

local function report(ctx, q, ops, f)
  local text, ev = summary(q, ops)
  for k, v in pairs(f.evidence) do
    ev[k] = v
  end
  ctx.report {
    node = q.id, severity = f.severity,
    message = f.message .. "; " .. text .. ".",
    recommendation = f.recommendation, evidence = ev, changes = f.changes,
  }
end

local function is_scan(op)
  return name_of(op):find("Scan", 1, true) ~= nil
end

local function small_files(run, ctx, q, ops)
  local o = ctx.options
  for _, op in ipairs(ops) do
    local files, bytes = op.files_read or 0, op.files_bytes
    if is_scan(op) and files >= o.min_files and bytes and bytes / files < o.small_file_mib * su.MIB then
      report(ctx, q, ops, {
        message = ("%s read %s of only %s on average (%s in all)"):format(name_of(op),
          su.count(files, "file"), su.bytes(bytes / files), su.bytes(bytes)),
        recommendation = ("Compact the table's files to 128 MiB-1 GiB each (OPTIMIZE on Delta, "
          .. "rewrite_data_files on Iceberg, or rewrite the partitions with fewer output files: "
          .. "repartition before the write); every file costs a listing, an open and "
          .. "spark.sql.files.openCostInBytes (%s) of split planning."):format(
          (su.conf(run, "spark.sql.files.openCostInBytes")) or "4m"),
        evidence = { operator = name_of(op), files_read = files, files_bytes = bytes,
                     mean_file_bytes = math.floor(bytes / files), location = op.location },
      })
    end
  end
end

local function big_broadcast(run, ctx, q, ops)
  local o = ctx.options
  for _, op in ipairs(ops) do
    local size = op.data_size_bytes or 0
    if name_of(op):find("BroadcastExchange", 1, true) and size >= o.max_broadcast_mib * su.MIB then
      local th = su.parse_mem(run.config["spark.sql.autoBroadcastJoinThreshold"])
      local changes, why
      if th and th >= size then
        why = ("spark.sql.autoBroadcastJoinThreshold is %s, so Spark chose it"):format(
          run.config["spark.sql.autoBroadcastJoinThreshold"])
        changes = { { target = su.target(run), key = "spark.sql.autoBroadcastJoinThreshold",
                      from = run.config["spark.sql.autoBroadcastJoinThreshold"], to = "10m" } }
      else
        why = "a BROADCAST hint or AQE's runtime statistics chose it"
      end
      report(ctx, q, ops, {
        message = ("%s shipped %s to every executor%s"):format(name_of(op), su.bytes(size),
          (op.build_ms or 0) > 0 and (" after building it on the driver for %s"):format(
            su.dur(op.build_ms)) or ""),
        recommendation = ("A broadcast this size is collected on the driver and copied to each "
          .. "executor's memory; %s. Let a sort-merge join handle it (%s), or "
          .. "filter the small side first."):format(why, changes
            and "set spark.sql.autoBroadcastJoinThreshold back to 10m" or "drop the hint"),
        evidence = { operator = name_of(op), broadcast_bytes = size, build_ms = op.build_ms },
        changes = changes,
      })
    end
  end
end

local LOOP_JOINS = { "CartesianProduct", "NestedLoopJoin" }

local function loop_joins(ctx, q, ops)
  local o = ctx.options
  local hits, rows = {}, 0
  for _, op in ipairs(ops) do
    local n = name_of(op)
    for _, kind in ipairs(LOOP_JOINS) do
      if n:find(kind, 1, true) and (op.rows == nil or op.rows >= o.min_join_rows) then
        hits[#hits + 1] = n
        rows = math.max(rows, op.rows or 0)
        break
      end
    end
  end
  if #hits == 0 then
    return
  end
  report(ctx, q, ops, {
    message = ("%s compared every row of one side with every row of the other%s"):format(
      sd.list(hits, 3), rows > 0 and (" and produced %s"):format(su.count(rows, "row")) or ""),
    recommendation = "Give the join an equality condition on a key (a range condition alone "
      .. "forces a nested loop; bucket the range into an equi-join key), or make sure the "
      .. "cross join is intended and both sides are small.",
    evidence = { operators = table.concat(hits, ", "), output_rows = rows > 0 and rows or nil },
  })
end

-- Join types whose probe side dynamic partition pruning can prune (an
-- outer join keeps every row of its preserved side: it needs every
-- partition of it).
local DPP_JOINS = { Inner = true, LeftSemi = true }

-- The partition columns ("year#12") of a scan that the query names
-- elsewhere: in a Filter that did not reach the scan, or as an equi-join
-- key that dynamic partition pruning could use. nil and nil when none.
local function pruning_chance(ops, scan)
  for col in tostring(scan.partition_columns or ""):gmatch("[^,]+") do
    for _, op in ipairs(ops) do
      local d = op.detail or ""
      if op ~= scan and d:find(col, 1, true) then
        if (op.name or ""):find("Filter", 1, true) then
          return col, "filter"
        end
        -- "SortMergeJoin [k#1], [k#2], Inner": the type follows the key lists
        local jt = (op.name or ""):find("Join", 1, true) and d:match("%], (%a+)")
        if jt and DPP_JOINS[jt] then
          return col, "join"
        end
      end
    end
  end
  return nil
end

-- A partitioned table read whole where pruning was possible: a predicate
-- on a partition column did not prune (it stayed in a Filter above the
-- scan), or the column is the key of a join dynamic partition pruning
-- could use. A full read with no such predicate (a table copy, an outer
-- join keeping every row) needs every partition: quiet (issue #26).
local function full_scans(ctx, q, ops)
  local o = ctx.options
  for _, op in ipairs(ops) do
    local bytes = op.files_bytes or 0
    if is_scan(op) and op.partition_filters == "[]" and bytes >= o.min_full_scan_gib * su.GIB then
      local col, why = pruning_chance(ops, op)
      if col then
        local name = col:match("^[^#]+")
        report(ctx, q, ops, {
          message = ("%s read all %s of a partitioned table (%s) although the query %s "
            .. "its partition column %s"):format(name_of(op), op.partitions_read
              and su.count(op.partitions_read, "partition") or "partitions", su.bytes(bytes),
            why == "filter" and "filters on" or "joins on", name),
          recommendation = why == "filter"
            and ("The predicate on %s stayed in a Filter above the scan, so no partition was "
              .. "pruned: compare the bare column with literal values (no function, cast or "
              .. "UDF around it) so that Spark turns it into a partition filter."):format(name)
            or ("Let dynamic partition pruning prune on %s: keep spark.sql.optimizer."
              .. "dynamicPartitionPruning.enabled on (Spark 3.0+), filter the other side of "
              .. "the join selectively and let it be broadcast."):format(name),
          evidence = { operator = name_of(op), partitions_read = op.partitions_read,
                       files_bytes = bytes, location = op.location, partition_column = name,
                       pruning = why },
        })
      end
    end
  end
end

return {
  id = "spark.sql-query",
  title = "SQL query plans: small files, big broadcasts, loop joins, unpruned scans",
  severity = "warning",
  sources = { "spark" },
  tags = { "performance", "sql" },
  description = "Per SQL execution, from its physical plan and SQL metrics (series sql_operators).",
  options = {
    min_files = 1000,          -- small files: at least this many files read ...
    small_file_mib = 32,       -- ... of less than this on average
    max_broadcast_mib = 1024,  -- broadcasts at or above are oversized
    min_join_rows = 1000000,   -- loop joins with fewer output rows stay quiet
    min_full_scan_gib = 10,    -- unpruned scans of less than this stay quiet
  },
  check = function(run, ctx)
    local by = sd.operators(run)
    for _, q in ipairs(sd.sqls(run)) do
      local ops = by[q.id]
      if ops then
        small_files(run, ctx, q, ops)
        big_broadcast(run, ctx, q, ops)
        loop_joins(ctx, q, ops)
        full_scans(ctx, q, ops)
      end
    end
  end,
}
