/*
 * model.h - the metrics model (docs/model.md) as the core holds it.
 *
 * Plugins fill it through the builder (sdk/include/optipipe/builder.h,
 * implemented in model.c); model_freeze() then sorts every map by key and
 * from that point on the model is read-only: the Lua bridge, the reporters
 * and normalize only read it. All memory belongs to the model's arena.
 */
#ifndef OP_CORE_MODEL_H
#define OP_CORE_MODEL_H

#include <optipipe/builder.h>

#include "arena.h"

typedef enum mv_type { MV_INT, MV_NUM, MV_STR, MV_BOOL } mv_type;

typedef union mv_u {
    int64_t i;
    double n;
    const char *s;
    int b;
} mv_u;

typedef struct mvalue {
    mv_type t;
    mv_u u;
} mvalue;

/* One entry of a map, in 16 bytes (a Spark stage holds ~40 of them; issue
 * 24): the value's mv_type lives in the two low bits of the key pointer,
 * free because interned keys are 4-byte aligned. Read it through
 * mentry_key, mentry_type and mentry_value. */
typedef struct mentry {
    uintptr_t tkey; /* the interned key | its mv_type */
    mv_u u;
} mentry;

#define MENTRY_TYPE_BITS ((uintptr_t)3)

static inline const char *mentry_key(const mentry *e)
{
    return (const char *)(e->tkey & ~MENTRY_TYPE_BITS);
}

static inline mv_type mentry_type(const mentry *e)
{
    return (mv_type)(e->tkey & MENTRY_TYPE_BITS);
}

static inline mvalue mentry_value(const mentry *e)
{
    mvalue v;

    v.t = mentry_type(e);
    v.u = e->u;
    return v;
}

/* A small string-keyed map. Insertion order while building; sorted by key
 * (strcmp) once frozen, so lookups may bisect and output is stable. */
typedef struct mmap {
    mentry *items;
    size_t n, cap;
    uint32_t *hidx; /* while building, for large maps: index + 1 by key hash */
    size_t hcap;
} mmap;

typedef struct mdist {
    const char *metric;
    op_dist d;
} mdist;

/* Bits of op_run.set / op_node.set for the optional integer fields. */
enum {
    MSET_STARTED_AT = 1 << 0,
    MSET_ENDED_AT = 1 << 1,
    MSET_DURATION_MS = 1 << 2,
    MSET_PARALLELISM = 1 << 3,
    MSET_MAX_PARALLELISM = 1 << 4
};

struct op_node {
    const char *id;
    const char *kind, *name, *status, *raw_status; /* NULL when unset */
    unsigned set;                     /* MSET_* bits */
    uint32_t index; /* position in op_run.nodes (beside set: a node is
                     * 240 bytes, not 256; issue 24) */
    int64_t started_at, ended_at, duration_ms, parallelism, max_parallelism;
    const char **parents; /* node ids, in the order the plugin gave them */
    size_t nparents, parents_cap;
    const char **children; /* derived at freeze, in node order */
    size_t nchildren;
    mmap metrics; /* MV_INT or MV_NUM */
    mmap attrs;   /* MV_STR */
    mdist *dists; /* sorted by metric once frozen */
    size_t ndists, dists_cap;
    struct op_run *run; /* the run it belongs to */
};

struct op_record {
    mmap fields;
};

typedef struct mseries {
    const char *name;
    struct op_record **recs;
    size_t n, cap;
} mseries;

struct op_run {
    const char *source, *id;
    const char *name, *status, *raw_status, *engine_version;
    const char **origins; /* every input that contributed */
    size_t norigins, origins_cap;
    unsigned set; /* MSET_* bits */
    int64_t started_at, ended_at, duration_ms;
    mmap config;  /* MV_STR */
    mmap metrics; /* MV_INT or MV_NUM */
    mmap attrs;   /* MV_STR: run_attr (platform, accelerator, ...) */
    struct op_node **nodes; /* insertion order */
    size_t nnodes, nodes_cap;
    uint32_t *node_tab; /* open-addressing hash by id of index + 1 into
                         * nodes (4 bytes a slot); internal */
    size_t node_tab_cap;
    mseries *series; /* sorted by name once frozen */
    size_t nseries, series_cap;
    const char **warnings;
    size_t nwarnings, warnings_cap;
    size_t index; /* position in model.runs */
    /* History (builder run_history): runs of this source with the same key,
     * ordered by history_order. Set at freeze: the newest run's history
     * lists its predecessors oldest first; each predecessor is superseded
     * (rules do not check it on its own). */
    const char *history_key;
    int64_t history_order;
    const char *job; /* builder run_job; NULL: see model_run_job() */
    struct op_run **history;
    size_t nhistory;
    int superseded;
};

typedef struct mslot {
    const char *plugin;
    void *state;
} mslot;

#define MODEL_MAX_SLOTS 64

struct baseline;

typedef struct model {
    arena *a;
    struct op_run **runs; /* in the order they were first created */
    size_t nruns, runs_cap;
    uint32_t *run_hidx; /* index + 1 by hash of (source, id) */
    size_t run_hcap;
    const char **keys; /* interned map keys: open addressing, internal */
    size_t nkeys, keys_cap;
    int frozen;
    int failed; /* sticky out-of-memory flag of the builder */
    mslot slots[MODEL_MAX_SLOTS]; /* per-plugin state (plugin_slot) */
    const char *store_path; /* run store ctx.history reads (borrowed);
                             * NULL: no history */
    const struct baseline *decisions; /* the analysis' decisions file
                             * (borrowed), applied to ctx.history's
                             * findings; NULL: none */
    size_t nslots;
    const struct mapping_set *mappings; /* what the builder's map_series
                             * asks (map_packs.h, borrowed); NULL: none */
} model;

/* Returns a new empty model with its own arena, or NULL on out of memory.
 * Free with model_free(). */
model *model_new(void);

/* Frees the model and everything in its arena. Accepts NULL. */
void model_free(model *m);

/* A builder that adds to m, tagging new runs with origin (an input's
 * display name; copied). The returned builder is owned by the caller and
 * must be released with model_builder_free() before the model is frozen. */
op_builder *model_builder_new(model *m, const char *origin);
void model_builder_free(op_builder *b);

/* The ids the builder refused (a control character in a run source, run
 * id, node id or parent id; docs/model.md), each described by a message
 * naming the run and the id with escapes, for the input's warnings: *n
 * messages (borrowed until model_builder_free()) and *more refusals
 * beyond the first 16, counted only. */
const char *const *model_builder_refusals(const op_builder *b, size_t *n,
                                          size_t *more);

/* Names the plugin a builder works for (borrowed; must outlive the model),
 * which selects its plugin_slot. */
void model_builder_set_plugin(op_builder *b, const char *plugin);

/* The state a plugin left in its slot (NULL when none). */
void *model_plugin_state(const model *m, const char *plugin);

/* Sorts maps, checks parents (a parent id that names no node becomes a run
 * warning) and marks the model read-only. Builder calls after this are
 * ignored. */
void model_freeze(model *m);

/* A figure derived from the frozen model and the config (the money of a
 * run, core/costs.c), set in map (a run's or a node's metrics or config
 * of m) in key order, so that lookups still bisect: the one write after
 * model_freeze, made before anything reads the model (the session prices
 * it right after freezing). key and s are copied into m's arena.
 * Returns 0, or OP_ENOMEM (map unchanged). */
int model_derive_num(model *m, mmap *map, const char *key, double v);
int model_derive_str(model *m, mmap *map, const char *key, const char *s);

/* Lookups on a frozen model; NULL when absent. */
const struct op_node *model_find_node(const struct op_run *r, const char *id);
const mentry *mmap_get(const mmap *m, const char *key);
const mseries *model_find_series(const struct op_run *r, const char *name);

/* The run's logical job key (DESIGN §4): what the plugin set with
 * run_job, else its history key, else its name, else its id. Borrowed
 * from the model. */
const char *model_run_job(const struct op_run *r);

/* Computes count/min/quantiles/max/mean/sum of v (NaNs skipped; sorts v in
 * place). Quantiles use linear interpolation between closest ranks. */
void model_dist_from_values(double *v, size_t n, op_dist *out);

#endif
