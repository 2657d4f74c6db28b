/*
 * spark_host.h - Spark's host code (plugins/spark/host/): what the engine
 * entry (engine_spark.c) points at. Core reaches these only through the
 * engine table (core/engine.h).
 */
#ifndef OP_SPARK_HOST_H
#define OP_SPARK_HOST_H

#include "emit_changes.h"
#include "fetch.h"
#include "input.h"
#include "report_html.h"

/* The stage timeline and task-time distribution charts of run r. */
void html_charts_spark(hout *h, const struct op_run *r);

/* spark-defaults.conf lines (or --conf key=value) (emit_writer_fn). */
void spark_patch_write(emit_out *o, const finding *const *fs, size_t n);

/* `fetch spark-history`'s own options (engine_spark.c's rows). */
typedef struct spark_fetch_opts {
    const char *app;     /* application id (required) */
    const char *attempt; /* attempt id, or NULL for all attempts */
} spark_fetch_opts;

/* Downloads the event logs of application eo->app (a spark_fetch_opts;
 * attempt eo->attempt, or all) from the Spark History Server at url with
 * the connection options o and unpacks them into dir (created when
 * missing; NULL: ./APP_ID). Returns a fetch_result; on FETCH_INCOMPLETE
 * some archive entries were refused or unreadable (named on o->diag and in
 * err), on FETCH_ENOTHING / FETCH_EUSAGE err says why (no --app: "needs
 * --app APP_ID"). */
int fetch_spark_history(const char *url, const fetch_opts *o, const void *eo,
                        const char *dir, op_error *err);

/* Spark's rolling layout (docs/spark.md): a directory eventlog_v2_<app>/
 * holding events_<N>_<app>[.codec] files (plus appstatus_* and .compact
 * files). Opens them as one stream named dir, each file decompressed by its
 * own codec, in the order Spark wrote them. Returns 0 with *out (close with
 * input_close) or an op_status with err naming the directory. */
int input_open_rolling(const char *dir, const input_limits *limits,
                       op_stream **out, op_error *err);

/* Databricks' rollover parts (op_engine_parts.probe, engine.h): key the
 * SparkContext Id, order the Rollover Number of the
 * DBCEventLoggingListenerMetadata line that opens each part. */
int spark_part_probe(const char *line, size_t len, char *key, size_t cap,
                     int64_t *order);
/* Databricks rollover parts by name when their first line says nothing
 * (op_engine.part_name). */
int spark_part_name(const char *base, const char *line, size_t len,
                    char *key, size_t cap, int64_t *order);

/* Whether path is a directory of that layout ("eventlog_v2_" prefix). */
int input_is_rolling_dir(const char *path);

/* cost_spark.c: the costs keys Spark reads and an app's rate
 * (core/engine.h). */
struct cJSON;
struct op_cost_rate;
extern const char *const spark_cost_keys[];
int spark_cost_rate(const struct op_run *r, const struct cJSON *c,
                    struct op_cost_rate *out);

#endif
