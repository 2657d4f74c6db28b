/*
 * optipipe/builder.h - how a plugin puts what it parsed into the metrics
 * model (docs/model.md).
 *
 * A plugin never owns model memory: every string and number passed here is
 * copied into the host's per-analysis arena, so nothing allocated on one side
 * of a .so boundary is freed on the other. Handles (op_run, op_node,
 * op_record) are borrowed and stay valid until the analysis ends.
 *
 * All calls go through a function table (struct op_builder_api); the
 * static inline wrappers below are what plugins call. Setting a field or a
 * key twice keeps the last value. Names of metrics follow docs/model.md:
 * snake_case with a unit suffix (_ms, _bytes, _ratio, _per_s), bare counts.
 *
 * Errors: builder calls only fail on memory exhaustion or a NULL handle.
 * The host remembers the first failure; op_builder_failed() reports it and
 * the analysis of that input is abandoned with a clear message, so plugins
 * may check once at the end instead of after every call.
 */
#ifndef OPTIPIPE_BUILDER_H
#define OPTIPIPE_BUILDER_H

#include "common.h"

typedef struct op_builder op_builder;
typedef struct op_run op_run;
typedef struct op_node op_node;
typedef struct op_record op_record;
struct op_series_ref; /* mapping.h */
struct op_map;

/* Run and node string fields. */
enum op_field {
    OP_F_NAME = 1,
    OP_F_STATUS,         /* succeeded|failed|running|cancelled|unknown */
    OP_F_RAW_STATUS,     /* the engine's own word */
    OP_F_ENGINE_VERSION, /* runs only */
    OP_F_ORIGIN,         /* runs only: path or URL; set by the host */
    OP_F_KIND            /* nodes only: job, stage, sql, model, vertex ... */
};

/* Run and node integer fields (epoch milliseconds, counts). */
enum op_ifield {
    OP_I_STARTED_AT = 1,
    OP_I_ENDED_AT,
    OP_I_DURATION_MS,
    OP_I_PARALLELISM,     /* nodes only */
    OP_I_MAX_PARALLELISM  /* nodes only */
};

/* A distribution summary over a stage's tasks or a vertex's subtasks. */
typedef struct op_dist {
    double count, min, p50, p75, p90, p95, p99, max, mean, sum;
} op_dist;

struct op_builder_api {
    uint32_t size; /* sizeof(struct op_builder_api) of the host; append only */

    /* Runs. source is "spark", "dbt", "flink" or the plugin's name; id must
     * be unique within the source (a second run_begin with the same source
     * and id returns the same run). */
    op_run *(*run)(op_builder *b, const char *source, const char *id);
    void (*run_str)(op_builder *b, op_run *r, enum op_field f, const char *v);
    void (*run_int)(op_builder *b, op_run *r, enum op_ifield f, int64_t v);
    void (*run_config)(op_builder *b, op_run *r, const char *key,
                       const char *value);
    void (*run_metric)(op_builder *b, op_run *r, const char *name, double v);
    void (*run_metric_int)(op_builder *b, op_run *r, const char *name,
                           int64_t v);
    /* A parse diagnostic attached to the run (and to the input's warnings). */
    void (*run_warning)(op_builder *b, op_run *r, const char *msg);

    /* Nodes: looked up by id within the run, created on first use. */
    op_node *(*node)(op_builder *b, op_run *r, const char *id);
    void (*node_str)(op_builder *b, op_node *n, enum op_field f,
                     const char *v);
    void (*node_int)(op_builder *b, op_node *n, enum op_ifield f, int64_t v);
    void (*node_parent)(op_builder *b, op_node *n, const char *parent_id);
    void (*node_metric)(op_builder *b, op_node *n, const char *name,
                        double v);
    void (*node_metric_int)(op_builder *b, op_node *n, const char *name,
                            int64_t v);
    void (*node_attr)(op_builder *b, op_node *n, const char *key,
                      const char *value);
    /* A precomputed summary (the plugin did its own quantiles). */
    void (*node_dist)(op_builder *b, op_node *n, const char *metric,
                      const op_dist *d);
    /* Raw values; the host computes the summary (exact quantiles). The
     * array is read, not kept. NaN values are skipped. */
    void (*node_dist_values)(op_builder *b, op_node *n, const char *metric,
                             const double *v, size_t count);

    /* Series: run-level named arrays of records (e.g. "checkpoints",
     * "executors"). series_append adds one record at the end. */
    op_record *(*series_append)(op_builder *b, op_run *r, const char *series);
    void (*record_num)(op_builder *b, op_record *rec, const char *key,
                       double v);
    void (*record_int)(op_builder *b, op_record *rec, const char *key,
                       int64_t v);
    void (*record_str)(op_builder *b, op_record *rec, const char *key,
                       const char *v);
    void (*record_bool)(op_builder *b, op_record *rec, const char *key,
                        int v);

    /* Nonzero when an earlier call failed (out of memory); err is filled. */
    int (*failed)(op_builder *b, op_error *err);

    /* History: runs of one source that share a key (a dbt project, a
     * scheduled Spark app) form a history ordered by `order` (e.g. epoch ms
     * of generation). Rules check only the newest run of each history and
     * see its predecessors as run.history (docs/model.md). */
    void (*run_history)(op_builder *b, op_run *r, const char *key,
                        int64_t order);

    /* A slot private to the calling plugin for the whole analysis, NULL at
     * first. A plugin that must join several inputs (a dbt manifest with
     * its run_results) keeps its state here between parse() calls and frees
     * it in finish(), which the host always calls when the slot is set. */
    void **(*plugin_slot)(op_builder *b);

    /* Finds an existing run; NULL when there is none. */
    op_run *(*run_find)(op_builder *b, const char *source, const char *id);

    /* Run-level attributes, string -> string (run.attrs): what the plugin
     * learned about the run that is neither config nor a number, e.g.
     * Spark's platform, accelerator, attempts (docs/model.md). Check
     * b->api->size first when the host may be older. */
    void (*run_attr)(op_builder *b, op_run *r, const char *key,
                     const char *value);

    /* New entries are appended below this line only. */

    /* The run's logical job key: what stays the same from one execution
     * of a pipeline to the next (a Spark app name, a Flink job name, a dbt
     * project + command + selection; docs/model.md). Fingerprints and the
     * run store key on it. Unset: the history key, else the name, else
     * the id. */
    void (*run_job)(op_builder *b, op_run *r, const char *key);

    /* Where an exported series belongs, by the host's mapping packs
     * (optipipe/mapping.h, which wraps it). Check b->api->size first. */
    int (*map_series)(op_builder *b, const struct op_series_ref *s,
                      struct op_map *out, op_error *err);
};

/* Every builder starts with its function table. */
struct op_builder {
    const struct op_builder_api *api;
};

static inline op_run *op_run_get(op_builder *b, const char *source,
                                 const char *id)
{
    return b->api->run(b, source, id);
}
static inline void op_run_str(op_builder *b, op_run *r, enum op_field f,
                              const char *v)
{
    b->api->run_str(b, r, f, v);
}
static inline void op_run_int(op_builder *b, op_run *r, enum op_ifield f,
                              int64_t v)
{
    b->api->run_int(b, r, f, v);
}
static inline void op_run_config(op_builder *b, op_run *r, const char *key,
                                 const char *value)
{
    b->api->run_config(b, r, key, value);
}
static inline void op_run_metric(op_builder *b, op_run *r, const char *name,
                                 double v)
{
    b->api->run_metric(b, r, name, v);
}
static inline void op_run_metric_int(op_builder *b, op_run *r,
                                     const char *name, int64_t v)
{
    b->api->run_metric_int(b, r, name, v);
}
static inline void op_run_warning(op_builder *b, op_run *r, const char *msg)
{
    b->api->run_warning(b, r, msg);
}
static inline op_node *op_node_get(op_builder *b, op_run *r, const char *id)
{
    return b->api->node(b, r, id);
}
static inline void op_node_str(op_builder *b, op_node *n, enum op_field f,
                               const char *v)
{
    b->api->node_str(b, n, f, v);
}
static inline void op_node_int(op_builder *b, op_node *n, enum op_ifield f,
                               int64_t v)
{
    b->api->node_int(b, n, f, v);
}
static inline void op_node_parent(op_builder *b, op_node *n,
                                  const char *parent_id)
{
    b->api->node_parent(b, n, parent_id);
}
static inline void op_node_metric(op_builder *b, op_node *n,
                                  const char *name, double v)
{
    b->api->node_metric(b, n, name, v);
}
static inline void op_node_metric_int(op_builder *b, op_node *n,
                                      const char *name, int64_t v)
{
    b->api->node_metric_int(b, n, name, v);
}
static inline void op_node_attr(op_builder *b, op_node *n, const char *key,
                                const char *value)
{
    b->api->node_attr(b, n, key, value);
}
static inline void op_node_dist(op_builder *b, op_node *n,
                                const char *metric, const op_dist *d)
{
    b->api->node_dist(b, n, metric, d);
}
static inline void op_node_dist_values(op_builder *b, op_node *n,
                                       const char *metric, const double *v,
                                       size_t count)
{
    b->api->node_dist_values(b, n, metric, v, count);
}
static inline op_record *op_series_append(op_builder *b, op_run *r,
                                          const char *series)
{
    return b->api->series_append(b, r, series);
}
static inline void op_record_num(op_builder *b, op_record *rec,
                                 const char *key, double v)
{
    b->api->record_num(b, rec, key, v);
}
static inline void op_record_int(op_builder *b, op_record *rec,
                                 const char *key, int64_t v)
{
    b->api->record_int(b, rec, key, v);
}
static inline void op_record_str(op_builder *b, op_record *rec,
                                 const char *key, const char *v)
{
    b->api->record_str(b, rec, key, v);
}
static inline void op_record_bool(op_builder *b, op_record *rec,
                                  const char *key, int v)
{
    b->api->record_bool(b, rec, key, v);
}
static inline void op_run_history(op_builder *b, op_run *r, const char *key,
                                  int64_t order)
{
    b->api->run_history(b, r, key, order);
}
static inline void **op_plugin_slot(op_builder *b)
{
    return b->api->plugin_slot(b);
}
static inline op_run *op_run_find(op_builder *b, const char *source,
                                  const char *id)
{
    return b->api->run_find(b, source, id);
}
/* Does nothing on a host older than the run_attr entry. */
static inline void op_run_attr(op_builder *b, op_run *r, const char *key,
                               const char *value)
{
    if (b->api->size > offsetof(struct op_builder_api, run_attr))
        b->api->run_attr(b, r, key, value);
}

/* Hosts older than run_job ignore the call (the size field tells). */
static inline void op_run_job(op_builder *b, op_run *r, const char *key)
{
    if (b->api->size > offsetof(struct op_builder_api, run_job) &&
        b->api->run_job)
        b->api->run_job(b, r, key);
}
static inline int op_builder_failed(op_builder *b, op_error *err)
{
    return b->api->failed(b, err);
}

#endif
