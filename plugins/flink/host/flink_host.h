/*
 * flink_host.h - Flink's host code (plugins/flink/host/): what the engine
 * entry (engine_flink.c) points at. Core reaches these only through the
 * engine table (core/engine.h).
 */
#ifndef OP_FLINK_HOST_H
#define OP_FLINK_HOST_H

#include "emit_changes.h"
#include "fetch.h"
#include "report_html.h"

#define FLINK_METRIC_NAMES 2048 /* --max-metric-names, per vertex */

/* Flink's own options (engine_flink.c's rows, op_engine_options): which
 * job a JobManager URL stands for and how it is sampled; for `fetch
 * flink` and every URL input. */
typedef struct flink_fetch_opts {
    const char *job;         /* job id, or NULL to discover */
    int all_running;         /* every RUNNING job */
    int samples;             /* later polls of the time-varying paths */
    double interval_s;       /* between polls; default 60 */
    double bp_wait_s;        /* backpressure re-request wait; < 0: auto */
    size_t max_metric_names; /* metric names requested per vertex */
} flink_fetch_opts;

/* The job graph, checkpoint and checkpoint-phase charts of run r. */
void html_charts_flink(hout *h, const struct op_run *r);

/* Lines for config.yaml / flink-conf.yaml, vertex parallelism as
 * pipeline.jobvertex-parallelism-overrides (emit_writer_fn). */
void flink_patch_write(emit_out *o, const finding *const *fs, size_t n);

/* Fetches from the JobManager at url what the Flink rules use (eo, a
 * flink_fetch_opts: its job, or the one running job, or all_running) with
 * the connection options o, and returns a
 * `flink_rest_export` document in *buf (malloc'd, NUL-terminated, owned by
 * the caller; *len bytes without the NUL).
 * Returns FETCH_OK; FETCH_INCOMPLETE with *buf set and err saying how many
 * requests failed (the document lists them under "errors"); or
 * FETCH_ENOTHING / FETCH_EUSAGE with *buf NULL and err saying why. Failed
 * requests are also reported on o->diag as they happen. */
int fetch_flink_to_memory(const char *url, const fetch_opts *o,
                          const void *eo, char **buf, size_t *len,
                          op_error *err);

#endif
