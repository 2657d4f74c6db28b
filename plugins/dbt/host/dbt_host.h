/*
 * dbt_host.h - dbt's host code (plugins/dbt/host/): what the engine entry
 * (engine_dbt.c) points at. Core reaches these only through the engine
 * table (core/engine.h).
 */
#ifndef OP_DBT_HOST_H
#define OP_DBT_HOST_H

#include "emit_changes.h"
#include "report_html.h"

/* The Gantt of the nodes and the history of regressed models of run r. */
void html_charts_dbt(hout *h, const struct op_run *r);

/* A models: properties block per model, with the equivalent
 * {{ config(...) }} line for the .sql file (emit_writer_fn). */
void dbt_patch_write(emit_out *o, const finding *const *fs, size_t n);

/* cost_dbt.c: the costs keys dbt reads and a run's rate (core/engine.h). */
struct cJSON;
struct op_cost_rate;
extern const char *const dbt_cost_keys[];
int dbt_cost_rate(const struct op_run *r, const struct cJSON *c,
                  struct op_cost_rate *out);

#endif
