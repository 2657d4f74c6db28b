/*
 * engine_spark.c - Spark's entry in the engine table (core/engine.h):
 * charts, the patch writer, `fetch spark-history` (event logs from a
 * History Server into a folder) and the rolling event-log folder read as
 * one input, and Databricks' rollover parts found among the inputs.
 * Spark is the default source of `rules new`.
 */
#include <stddef.h>

#include "spark_host.h"

#include "engine.h"
#include "opts.h"

static const op_engine_patch spark_patch = {"conf", spark_patch_write};

static const op_engine_fetch spark_fetch = {
    .name = "spark-history",
    .to_dir = fetch_spark_history,
    .summary = "download event logs from a Spark History Server",
    .about = "The application's event logs from a Spark History Server, "
             "unpacked into a folder for a later `optipipe analyze`.",
    .args = "URL --app APP_ID [options]",
    .output_def = "./APP_ID",
    .output_help = "the folder the event logs are unpacked into",
};

#define FIELD(f)                                                              \
    .off = offsetof(spark_fetch_opts, f),                                     \
    .width = sizeof(((spark_fetch_opts *)0)->f)

/* Which application's logs `fetch spark-history` downloads. */
static const opt_spec spark_specs[] = {
    {"--app", NULL, .type = OPT_STRING, FIELD(app), .metavar = "ID",
     .help = "the application id (required)"},
    {"--attempt", NULL, .type = OPT_STRING, FIELD(attempt), .metavar = "ID",
     .def = "all", .help = "one attempt only"},
    {.name = NULL}};

static const op_engine_options spark_options = {
    "Spark History Server (fetch spark-history)", spark_specs,
    sizeof(spark_fetch_opts), NULL,
};

/* The stage charts' classes (report_html_spark.c): task-duration box
 * plots and the flagged stages of the timeline. */
static const char spark_css[] =
    ".flagged{stroke:#000;stroke-width:2}"
    ".whisker{stroke:#555;stroke-width:1.5}.box{fill:#56b4e9;stroke:#0072b2}"
    ".median{stroke:#000;stroke-width:2.5}.p99{fill:#0072b2}.max{fill:#555}.max.skew{fill:#c04a00}\n";

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
    .options = &spark_options,
    .html_css = spark_css,
    .part_name = spark_part_name,
    .cost_keys = spark_cost_keys,
    .cost_rate = spark_cost_rate,
};
