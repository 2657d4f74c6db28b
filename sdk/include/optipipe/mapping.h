/*
 * optipipe/mapping.h - asking the host where an exported metric belongs in
 * the model (docs/mapping-packs.md).
 *
 * Exporters name one metric many ways (Flink's Prometheus reporter, the JMX
 * exporter, Strimzi's reporter, Micrometer). The host holds the mapping
 * packs (Lua data files, bundled and the user's) and answers, per series
 * (a name and its labels), which engine, job, node chain and model metric
 * it is. A plugin that reads generic metric exports (Prometheus text,
 * query_range JSON) asks once per distinct series and builds the model
 * itself through builder.h. Everything in op_map is a fixed-size copy: the
 * plugin owns it, nothing points into the host.
 */
#ifndef OPTIPIPE_MAPPING_H
#define OPTIPIPE_MAPPING_H

#include <stddef.h>

#include "builder.h"
#include "common.h"

/* One label of a series (borrowed strings). */
typedef struct op_label {
    const char *name;
    const char *value;
} op_label;

/* A series as exported. */
typedef struct op_series_ref {
    const char *name;        /* the sample's name, e.g. "x_total" */
    const char *type;        /* its family's # TYPE ("counter", "gauge",
                              * ...), NULL when none was given */
    const op_label *labels;  /* nlabels of them, any order */
    size_t nlabels;
    const char *target;      /* the scrape target ("@target" in templates):
                              * the scrape's folder or its instance label */
} op_series_ref;

#define OP_MAP_STR 320   /* longest id, job or attribute value */
#define OP_MAP_KEY 64    /* longest attribute key or kind */
#define OP_MAP_NAME 128  /* longest model metric name */
#define OP_MAP_NODES 4   /* node chain depth (thread > task > store) */
#define OP_MAP_ATTRS 8   /* attributes per node */
#define OP_MAP_RUN_ATTRS 4

typedef struct op_map_kv {
    char key[OP_MAP_KEY];
    char value[OP_MAP_STR];
} op_map_kv;

typedef struct op_map_node {
    char kind[OP_MAP_KEY];
    char id[OP_MAP_STR];
    op_map_kv attrs[OP_MAP_ATTRS];
    unsigned nattrs;
    char inherit[OP_MAP_KEY]; /* attr copied from the parent when unset */
} op_map_node;

enum op_map_kind {
    OP_MAP_GAUGE = 0,  /* the newest value is the value */
    OP_MAP_COUNTER = 1 /* cumulative: newest value, and a rate over time */
};

/* Where one series goes. */
typedef struct op_map {
    char pack[OP_MAP_KEY];       /* the pack that matched (run attrs.dialect) */
    char source[OP_MAP_KEY];     /* the engine: the runs' source */
    char job[OP_MAP_STR];        /* the run's job key */
    char run_id[OP_MAP_STR];     /* "" : job + first scrape time */
    char version[OP_MAP_KEY];    /* engine version, "" when not seen */
    char instance[OP_MAP_STR];   /* which process exported it */
    op_map_node nodes[OP_MAP_NODES]; /* outermost first; metric on the last */
    unsigned nnodes;             /* 0: a run-level metric */
    char metric[OP_MAP_NAME];    /* the model name */
    double scale;                /* value x scale (units: s -> ms = 1000) */
    int kind;                    /* enum op_map_kind */
    char rate[OP_MAP_NAME];      /* counter: its per-second rate's name, "" none */
    int has_sentinel;            /* the value `sentinel` means "not a value" */
    double sentinel;
    op_map_kv sentinel_attr;     /* node attr when the newest value is it */
    op_map_kv value_attr;        /* node attr when it is a value */
    char sentinel_flag[OP_MAP_KEY]; /* samples key set to 1 instead */
    op_map_kv set_attr;          /* node attr the series' presence sets */
    char dist_key[OP_MAP_STR];   /* values of one node that share a metric
                                  * and differ here (a subtask) form a dist;
                                  * "" none */
    op_map_kv run_attrs[OP_MAP_RUN_ATTRS];
    unsigned nrun_attrs;
    int info;                    /* metadata only (a version label): the
                                  * run and nodes are made, no value kept */
} op_map;

/* 1 and *out filled when a pack maps s, 0 when none does, or an op_status
 * (negated) with err when a pack's template overflowed a field (err names
 * the pack and the series). 0 on a host without mapping packs. */
static inline int op_map_series(op_builder *b, const op_series_ref *s,
                                op_map *out, op_error *err)
{
    if (b->api->size <= offsetof(struct op_builder_api, map_series) ||
        !b->api->map_series)
        return 0;
    return b->api->map_series(b, s, out, err);
}

#endif
