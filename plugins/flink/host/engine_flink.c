/*
 * engine_flink.c - Flink's entry in the engine table (core/engine.h):
 * charts, the patch writer, and `fetch flink` from a JobManager, which is
 * also how `analyze http://...` reads a URL no other engine claims.
 */
#include <stddef.h>

#include "flink_host.h"

#include "engine.h"
#include "opts.h"

#define FIELD(f)                                                              \
    .off = offsetof(flink_fetch_opts, f),                                     \
    .width = sizeof(((flink_fetch_opts *)0)->f)
#define DEF_OF(n) DEF_TEXT(n)
#define DEF_TEXT(n) #n

/* Which job a JobManager URL stands for and how it is sampled. */
static const opt_spec flink_specs[] = {
    {"--job", NULL, .type = OPT_STRING, FIELD(job), .metavar = "ID",
     .help = "the job (default: the only running one)"},
    {"--all-running", NULL, .type = OPT_FLAG, FIELD(all_running),
     .help = "every running job"},
    {"--samples", NULL, .type = OPT_INT, FIELD(samples), .lo = 0,
     .hi = 10000, .metavar = "N", .def = "0",
     .help = "poll the changing paths N more times"},
    {"--interval", NULL, .type = OPT_DOUBLE, FIELD(interval_s), .lo = 0,
     .hi = 86400, .metavar = "SECONDS", .def = "60", .help = "between polls"},
    {"--backpressure-wait", NULL, .type = OPT_DOUBLE, FIELD(bp_wait_s),
     .lo = 0, .hi = 600, .metavar = "SECONDS",
     .def = "Flink's refresh interval",
     .help = "before re-asking a backpressure answer that is not ready"},
    {"--max-metric-names", NULL, .type = OPT_INT, FIELD(max_metric_names),
     .lo = 1, .hi = 1000000, .metavar = "N",
     .def = DEF_OF(FLINK_METRIC_NAMES),
     .help = "metric names requested per vertex (those left out are named "
             "under \"errors\")"},
    {.name = NULL}};

/* What a row's default cannot say: the backpressure wait follows Flink's
 * refresh interval unless given. */
static void flink_opts_init(void *eo)
{
    ((flink_fetch_opts *)eo)->bp_wait_s = -1;
}

static const op_engine_options flink_options = {
    "Flink JobManager (URL inputs, fetch flink)", flink_specs,
    sizeof(flink_fetch_opts), flink_opts_init,
};

/* The job graph's classes (report_html_flink.c): vertices coloured by
 * busy time and backpressure, their bars, edges and badges. */
static const char flink_css[] =
    ".edge{fill:none;stroke:#555;stroke-width:1.5}.arrow{fill:#555}"
    ".vertex rect{stroke:#777}.vertex.bottleneck>rect:first-of-type{stroke:#000;stroke-width:3}"
    ".badge{fill:#000}svg .badge-text{fill:#fff;font-size:10px;font-weight:700}"
    ".v-none,.v-idle{fill:#f2f2f2}"
    ".v-busy0{fill:#fbe3d6}.v-busy1{fill:#f6c3a5}.v-busy2{fill:#f0a074}.v-busy3{fill:#e87d45}"
    ".v-busy4{fill:#d55e00}.v-bp0{fill:#dceaf5}.v-bp1{fill:#b3d3ea}.v-bp2{fill:#85b8dc}"
    ".v-bp3{fill:#569ccc}.v-bp4{fill:#2b7fbd}"
    ".vertex .track{fill:#fff;stroke:#999;stroke-width:.5}.vertex .bar-busy{fill:#a33a00;stroke:none}"
    ".vertex .bar-bp{fill:#003f73;stroke:none}\n";

/* Any http(s) URL, at the lowest score: the JobManager's REST API has no
 * path of its own to recognize it by, and was the first URL source. */
static int flink_url_score(const char *url)
{
    return fetch_is_url(url) ? 1 : 0;
}

static const op_engine_patch flink_patch = {"yaml", flink_patch_write};

static const op_engine_fetch flink_fetch = {
    .name = "flink",
    .to_memory = fetch_flink_to_memory,
    .url_score = flink_url_score,
    .summary = "collect a Flink JobManager's REST export",
    .about = "Every JobManager REST response the Flink rules use, written as "
             "a flink_rest_export (docs/flink.md) for a later `optipipe "
             "analyze`.",
};

const op_engine op_engine_flink = {
    .size = sizeof(op_engine),
    .source = "flink",
    .html_charts = html_charts_flink,
    .patch = &flink_patch,
    .fetch = &flink_fetch,
    .options = &flink_options,
    .html_css = flink_css,
};
