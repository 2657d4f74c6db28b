/*
 * engine_dbt.c - dbt's entry in the engine table (core/engine.h): charts
 * the patch writer and the cost rates (cost_dbt.c).
 */
#include "dbt_host.h"

#include "engine.h"

static const op_engine_patch dbt_patch = {"yml", dbt_patch_write};

/* The critical-path timeline's label on a dark bar (report_html_dbt.c). */
static const char dbt_css[] = "svg .on-dark{fill:#fff}\n";

const op_engine op_engine_dbt = {
    .size = sizeof(op_engine),
    .source = "dbt",
    .html_charts = html_charts_dbt,
    .patch = &dbt_patch,
    .html_css = dbt_css,
    .cost_keys = dbt_cost_keys,
    .cost_rate = dbt_cost_rate,
};
