/*
 * engine_spark.c - Spark's entry in the engine table (core/engine.h):
 * charts, the patch writer, `fetch spark-history` (event logs from a
 * History Server into a folder) and the rolling event-log folder read as
 * one input, and Databricks' rollover parts found among the inputs.
 * Spark is the default source of `rules new`.
 */
#include "spark_host.h"

#include "engine.h"

static const op_engine_patch spark_patch = {"conf", spark_patch_write};

static const op_engine_fetch spark_fetch = {
    .name = "spark-history",
    .to_dir = fetch_spark_history,
};

static const op_engine_layout spark_layouts[] = {
    {"rolling event-log folder", input_is_rolling_dir, input_open_rolling},
};

static const op_engine_parts spark_parts = {
    "Databricks rollover part", spark_part_probe,
};

const op_engine op_engine_spark = {
    .size = sizeof(op_engine),
    .source = "spark",
    .flags = OP_ENGINE_DEFAULT_SOURCE,
    .html_charts = html_charts_spark,
    .patch = &spark_patch,
    .fetch = &spark_fetch,
    .layouts = spark_layouts,
    .nlayouts = sizeof spark_layouts / sizeof spark_layouts[0],
    .parts = &spark_parts,
};
