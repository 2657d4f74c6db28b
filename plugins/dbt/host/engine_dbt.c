/*
 * engine_dbt.c - dbt's entry in the engine table (core/engine.h): charts
 * and the patch writer.
 */
#include "dbt_host.h"

#include "engine.h"

static const op_engine_patch dbt_patch = {"yml", dbt_patch_write};

const op_engine op_engine_dbt = {
    .size = sizeof(op_engine),
    .source = "dbt",
    .html_charts = html_charts_dbt,
    .patch = &dbt_patch,
};
