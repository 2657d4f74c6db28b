-- flink.job-failed: a FAILED job (e.g. a HistoryServer archive), named with
-- its root exception, the vertex that failed and what to change.
-- docs/rules/flink.job-failed.md
local fu = require "flinkutil"
local units = require "optipipe.units"

-- What the deepest cause usually asks for: the first pattern that the
-- root cause (or the exception, without one) contains, plain text.
local CAUSES = {
  { find = "OutOfMemoryError: Java heap space",
    fix = "The task heap ran out: raise taskmanager.memory.task.heap.size (or "
      .. "taskmanager.memory.process.size), keep large state off the heap (RocksDB instead "
      .. "of the hashmap backend) and look for unbounded buffers in the operator." },
  { find = "OutOfMemoryError: Metaspace",
    fix = "Metaspace ran out (classes loaded again at each restart): raise "
      .. "taskmanager.memory.jvm-metaspace.size and check the job jar for class-loader leaks." },
  { find = "OutOfMemoryError: Direct buffer memory",
    fix = "Direct memory ran out: raise taskmanager.memory.task.off-heap.size (network "
      .. "buffers, connectors that allocate direct buffers)." },
  { find = "tolerable failure threshold",
    fix = "Checkpoints kept failing until the job gave up: see flink.tolerable-failures "
      .. "and the checkpoint rules for why they fail (timeouts, backpressure, storage)." },
  { find = "Heartbeat of TaskManager",
    fix = "A TaskManager stopped answering (killed for memory, a long GC pause or a lost "
      .. "node): read that TaskManager's log and the container's exit reason." },
  { find = "NoResourceAvailableException",
    fix = "Not enough task slots: add TaskManagers or slots, or lower the parallelism." },
  { find = "Could not restore",
    fix = "The state could not be restored: the checkpoint is missing or incompatible with "
      .. "the new code (operator uids, serializers). Restore from a compatible savepoint, or "
      .. "start with --allowNonRestoredState only when dropping that state is intended." },
  { find = "ClassNotFoundException",
    fix = "A class is missing from the job jar or the cluster's lib/: fix the packaging." },
}

local function newest(ex)
  local last
  for _, e in ipairs(ex or {}) do
    if e.timestamp_ms and (not last or e.timestamp_ms >= last.timestamp_ms) then
      last = e
    end
  end
  return last
end

-- The failing vertex: the one whose status is failed, else the one the
-- exception's task names ("<vertex name> (3/4)").
local function failing_vertex(run, e)
  for _, n in ipairs(run.nodes) do
    if n.status == "failed" then
      return n
    end
  end
  local task = e and e.task and e.task:gsub(" %(%d+/%d+%)$", "")
  for _, n in ipairs(run.nodes) do
    if task and n.name == task then
      return n
    end
  end
  return nil
end

-- What the restart strategy did, from the wrapper's text.
local function strategy_text(exc)
  if not exc then
    return nil
  end
  if exc:find("NoRestartBackoffTimeStrategy", 1, true) then
    return "no restart strategy is configured, so the first failure failed the job",
      "none"
  end
  local n = exc:match("maxNumberRestartAttempts=(%d+)")
  if n then
    return ("the fixed-delay restart strategy gave up after %s attempts"):format(n), "fixed-delay"
  end
  if exc:find("Recovery is suppressed", 1, true) then
    return "the restart strategy gave up", nil
  end
  return nil
end

local function fix_for(cause)
  for _, c in ipairs(CAUSES) do
    if cause:find(c.find, 1, true) then
      return c.fix
    end
  end
  return "Fix the cause the stack trace names (/jobs/<jid>/exceptions; the TaskManager's "
    .. "log around the failure time has the whole trace)."
end

return {
  id = "flink.job-failed",
  title = "The job failed",
  severity = "error",
  sources = { "flink" },
  tags = { "reliability" },
  options = {},
  description = "A FAILED job, with its root exception, the vertex that failed and what "
    .. "the cause asks for.",
  check = function(run, ctx)
    if run.status ~= "failed" then
      return
    end
    local e = newest(run.series.exceptions)
    local v = failing_vertex(run, e)
    local cause = e and (e.root_cause or e.cause or e.exception or e.exception_class)
    cause = cause and (cause:gsub("%.$", "")) -- the message adds its own stop
    local earlier = 0
    for _, x in ipairs(run.series.exceptions or {}) do
      if x ~= e and cause and ((x.root_cause or x.exception or ""):find(cause, 1, true)) then
        earlier = earlier + 1
      end
    end
    local strat, strat_kind = strategy_text(e and e.exception)
    local msg
    if cause then
      msg = ("The job failed%s: %s%s."):format(
        v and (" in %s"):format(fu.quote(v)) or "", cause,
        (e.root_cause and e.exception and e.exception ~= e.root_cause)
          and (" (under \"%s\")"):format(e.exception) or "")
    else
      msg = ("The job failed%s, and the export has no exception history to say why."):format(
        v and (" in %s"):format(fu.quote(v)) or "")
    end
    if earlier > 0 then
      msg = msg .. (" The same cause failed it over %s before."):format(
        units.format_count(earlier, "time"))
    end
    if strat then
      msg = msg .. (" After the failure %s."):format(strat)
    end
    local changes
    if strat_kind == "none" then
      changes = { { target = "job", key = fu.key(run, "restart-strategy.type"),
                    from = fu.cfg(run, "restart-strategy.type") or "none",
                    to = "exponential-delay" } }
    end
    ctx.report {
      node = v and v.id or nil,
      message = msg,
      recommendation = (cause and fix_for(cause) or "Export the exception history "
        .. "(/jobs/<jid>/exceptions) to see why.")
        .. (strat_kind == "none" and " Configure a restart strategy (exponential-delay) so "
          .. "a passing failure restarts the job from its last checkpoint instead of "
          .. "failing it." or ""),
      evidence = { root_cause = cause, exception = e and e.exception or nil,
                   failing_vertex = v and (v.name or v.id) or nil,
                   failed_at_ms = e and e.timestamp_ms or nil,
                   earlier_failures = earlier, restart_strategy = strat_kind },
      changes = changes,
    }
  end,
}
