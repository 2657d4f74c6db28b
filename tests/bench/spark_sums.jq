# Baseline (b) of tests/bench/spark_bench.sh: the per-stage-attempt sums of
# a Spark event log in jq, the same sums as spark_sums.py and opti-pipe.
# Usage: jq -n -c -f spark_sums.jq LOG
reduce (inputs | select(.Event == "SparkListenerTaskEnd")) as $e ({};
  ("stage-\($e["Stage ID"])-\($e["Stage Attempt ID"] // 0)") as $k
  | ($e["Task Metrics"] // {}) as $m
  | ($m["Shuffle Read Metrics"] // {}) as $sr
  | ($m["Shuffle Write Metrics"] // {}) as $sw
  | ($m["Input Metrics"] // {}) as $in
  | ($m["Output Metrics"] // {}) as $out
  | .[$k].tasks += 1
  | .[$k].executor_run_ms += ($m["Executor Run Time"] // 0)
  | .[$k].executor_cpu_ns += ($m["Executor CPU Time"] // 0)
  | .[$k].gc_ms += ($m["JVM GC Time"] // 0)
  | .[$k].shuffle_read_bytes += (($sr["Remote Bytes Read"] // 0) + ($sr["Local Bytes Read"] // 0))
  | .[$k].shuffle_read_records += ($sr["Total Records Read"] // 0)
  | .[$k].shuffle_write_bytes += ($sw["Shuffle Bytes Written"] // 0)
  | .[$k].shuffle_write_records += ($sw["Shuffle Records Written"] // 0)
  | .[$k].memory_spill_bytes += ($m["Memory Bytes Spilled"] // 0)
  | .[$k].disk_spill_bytes += ($m["Disk Bytes Spilled"] // 0)
  | .[$k].input_bytes += ($in["Bytes Read"] // 0)
  | .[$k].input_records += ($in["Records Read"] // 0)
  | .[$k].output_bytes += ($out["Bytes Written"] // 0)
  | .[$k].output_records += ($out["Records Written"] // 0))
