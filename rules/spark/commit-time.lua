-- spark.commit-time: a write whose SQL execution ran far longer than its
-- jobs. After the last task of an insert, the driver commits the job's
-- output: with Hadoop's FileOutputCommitter (and Hive's insert path) that
-- is a rename of every file, file by file from the driver, and on an object
-- store (S3, GCS, ADLS) a rename is a copy. The query is named with its
-- commit time; the fix is a committer that does not rename (S3A magic
-- committer, EMRFS S3-optimized committer) or a table format that commits
-- with a log entry (Delta Lake, Iceberg). docs/rules/spark.commit-time.md
local su = require "sparkutil"

-- Names of the plan operators (sql_operators records) that write a table
-- or files; the Execute prefix is Spark's for commands.
local WRITES = { "InsertIntoHiveTable", "InsertIntoHadoopFsRelationCommand",
  "CreateHiveTableAsSelectCommand", "OptimizedCreateHiveTableAsSelectCommand",
  "CreateDataSourceTableAsSelectCommand", "SaveIntoDataSourceCommand",
  "InsertIntoDataSourceCommand", "WriteFiles", "AppendData", "OverwriteByExpression",
  "OverwritePartitionsDynamic", "ReplaceTableAsSelect", "AtomicCreateTableAsSelect" }

local function write_ops(run)
  local by = {}
  for _, rec in ipairs(run.series.sql_operators or {}) do
    local name = rec.name or ""
    for _, w in ipairs(WRITES) do
      if name:find(w, 1, true) then
        by[rec.sql] = by[rec.sql] or w
      end
    end
  end
  return by
end

-- The first line of a description, at most 80 bytes (notebook cells and
-- SQL text run long).
local function label(s)
  s = (s or ""):gsub("^%s+", "")
  s = s:match("^[^\n]*") or s
  if #s > 80 then
    s = s:sub(1, 77) .. "..."
  end
  return s
end

local function advice(run, op)
  local p = su.platform(run)
  local hive = op:find("Hive", 1, true) ~= nil
  local s
  if p == "databricks" then
    s = "Write the table as Delta Lake (the default table format on Databricks): a Delta "
      .. "commit is one log entry, no file is renamed."
  elseif p == "emr" then
    s = "Use the EMRFS S3-optimized committer (spark.sql.parquet.fs.optimized.committer."
      .. "optimization-enabled=true, on by default since EMR 5.20 for Parquet writes"
      .. (hive and "; a Hive table's insert takes it only with spark.sql.hive."
        .. "convertMetastoreParquet=true, so Spark's Parquet writer does the insert)" or ")")
      .. ", or an Iceberg or Delta table, which commit without renames."
  else
    s = "If the table is on S3, use the S3A magic committer (spark.hadoop.fs.s3a.committer."
      .. "name=magic with spark.sql.sources.commitProtocolClass=org.apache.spark.internal.io."
      .. "cloud.PathOutputCommitProtocol and spark.sql.parquet.output.committer.class="
      .. "org.apache.spark.internal.io.cloud.BindingParquetOutputCommitter, from "
      .. "spark-hadoop-cloud), or write an Iceberg or Delta table, which commits with a "
      .. "log entry instead of renames."
      .. (hive and " A Hive table's insert goes through Spark's own writer (and so the "
        .. "committer) with spark.sql.hive.convertMetastoreParquet=true (or ...Orc)." or "")
  end
  return s
end

return {
  id = "spark.commit-time",
  title = "A write's driver-side commit took most of its query's time",
  severity = "warning",
  sources = { "spark" },
  tags = { "performance", "io" },
  description = "SQL executions with a write command that ran far longer after their last "
    .. "job ended: the driver committing (renaming) the output files.",
  options = {
    min_commit_s = 60,  -- the time after the last job is at least this long
    min_share = 0.3,    -- and at least this share of the query's time
  },
  check = function(run, ctx)
    local o = ctx.options
    local writes = write_ops(run)
    if next(writes) == nil then
      return -- no write command: no job node needs to be looked at
    end
    local jobs = {}
    for _, n in ipairs(run.nodes) do
      if n.kind == "job" and n.attrs.sql then
        jobs[n.attrs.sql] = jobs[n.attrs.sql] or {}
        table.insert(jobs[n.attrs.sql], n)
      end
    end
    for _, q in ipairs(run.nodes) do
      local op = q.kind == "sql" and writes[q.id]
      local js = op and jobs[q.id]
      if js and q.ended_at and q.duration_ms and q.duration_ms > 0 then
        local last, busy, lo, hi = 0, 0, nil, nil
        table.sort(js, function(a, b) return (a.started_at or 0) < (b.started_at or 0) end)
        for _, j in ipairs(js) do
          local s, e = j.started_at or 0, j.ended_at or j.started_at or 0
          last = math.max(last, e)
          if not hi or s > hi then
            busy = busy + (hi and hi - lo or 0)
            lo, hi = s, e
          else
            hi = math.max(hi, e)
          end
        end
        busy = busy + (hi and hi - lo or 0)
        local tail = q.ended_at - last
        if last > 0 and tail >= o.min_commit_s * 1000 and tail / q.duration_ms >= o.min_share then
          ctx.report {
            node = q.id,
            message = ("Query %s \"%s\" (%s) ran %s, but its %s took %s: the %s after its last "
              .. "job ended is the driver committing the output (%s of the query), renaming "
              .. "the written files one by one."):format(q.id, label(q.name), op,
              su.dur(q.duration_ms), su.count(#js, "job"), su.dur(busy), su.dur(tail),
              su.pct(tail / q.duration_ms)),
            recommendation = advice(run, op) .. (" That takes the commit from %s to seconds.")
              :format(su.dur(tail)),
            evidence = { command = op, query_ms = q.duration_ms, jobs = #js, jobs_ms = busy,
                         commit_ms = tail, commit_share = su.round(tail / q.duration_ms, 3) },
            impact = { time_saved_ms = math.floor(tail) },
          }
        end
      end
    end
  end,
}
