/*
 * prom_store.c - the Prometheus plugin's memory across inputs: one time
 * series per (name, labels, target), each mapped once through the host's
 * mapping packs (optipipe/mapping.h) to a run, a node chain and a model
 * metric; the points of mapped series only (bounded by PROM_MAX_POINTS).
 * prom_emit() turns them into runs: the newest value of each metric, rates
 * of counters over the scrapes, sentinels as attributes, distributions
 * over a pack's dist key, and every scrape in run.series.samples.
 */
#include "prom_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <optipipe/grow.h>
#include <optipipe/strmap.h>

#define PS_NONE UINT32_MAX
#define PS_KEY_MAX 65536 /* longest series key (name + labels + target) */
#define PS_UNMAPPED_SHOWN 3

/* ---- the state ------------------------------------------------------------ */

typedef struct ps_point {
    int64_t t;
    double v;
} ps_point;

typedef struct ps_kv {
    const char *k, *v; /* interned */
} ps_kv;

typedef struct ps_metric {
    const char *name, *rate, *flag, *dist; /* interned; NULL none */
    ps_kv sentinel_attr, value_attr;
    double scale, sentinel;
    int counter, has_sentinel, info;
} ps_metric;

typedef struct ps_series {
    uint32_t run, node, target; /* run PS_NONE: not mapped */
    ps_metric m;
    ps_point *pts;
    size_t n, cap;
} ps_series;

typedef struct ps_node {
    const char *id, *kind, *inherit;
    uint32_t parent; /* node index or PS_NONE */
    ps_kv attrs[OP_MAP_ATTRS + 2];
    unsigned nattrs;
} ps_node;

typedef struct ps_run {
    const char *source, *job, *run_id, *version, *pack;
    ps_kv attrs[OP_MAP_RUN_ATTRS];
    unsigned nattrs;
    int attrs_versioned;
    op_strmap instances; /* its instances, keys owned */
    int time_src; /* the weakest of its samples' (enum prom_time) */
    uint32_t *nodes;
    size_t nnodes, nodes_cap;
} ps_run;

typedef struct ps_target {
    const char *name; /* interned */
    uint64_t series, mapped, samples;
    const char *unmapped[PS_UNMAPPED_SHOWN];
    size_t nunmapped_shown;
} ps_target;

struct prom_state {
    op_strmap strings, series_ix, run_ix, node_ix, target_ix; /* keys owned */
    ps_series *series;
    size_t nseries, series_cap;
    ps_node *nodes;
    size_t nnodes, nodes_cap;
    ps_run *runs;
    size_t nruns, runs_cap;
    ps_target *targets;
    size_t ntargets, targets_cap;
    uint64_t npoints;
    /* the current input */
    uint32_t target;
    int64_t default_ms;
    int time_src;
    uint64_t refused, nonfinite, samples;
    struct { char *msg; uint32_t target; } *warns;
    size_t nwarns, warns_cap;
    op_map scratch; /* what map_series fills (large: not on the stack) */
    char key[PS_KEY_MAX];
};

prom_state *prom_state_new(void)
{
    return calloc(1, sizeof(prom_state));
}

void prom_state_free(prom_state *st)
{
    size_t i;

    if (!st)
        return;
    for (i = 0; i < st->nseries; i++)
        free(st->series[i].pts);
    for (i = 0; i < st->nruns; i++) {
        op_strmap_free(&st->runs[i].instances, 1);
        free(st->runs[i].nodes);
    }
    for (i = 0; i < st->nwarns; i++)
        free(st->warns[i].msg);
    free(st->warns);
    free(st->series);
    free(st->nodes);
    free(st->runs);
    free(st->targets);
    op_strmap_free(&st->strings, 1);
    op_strmap_free(&st->series_ix, 1);
    op_strmap_free(&st->run_ix, 1);
    op_strmap_free(&st->node_ix, 1);
    op_strmap_free(&st->target_ix, 1);
    free(st);
}

/* The one copy of s (NULL and "" are NULL); NULL on out of memory too:
 * callers check s first. */
static const char *intern(prom_state *st, const char *s, int *oom)
{
    const char *stored = NULL;

    if (!s || !*s)
        return NULL;
    if (op_strmap_put(&st->strings, s, 0, 1, &stored)) {
        *oom = 1;
        return NULL;
    }
    return stored;
}

int prom_input_begin(prom_state *st, const char *name, const char *target,
                     int64_t default_ms, enum prom_time src)
{
    size_t idx;
    const char *stored;

    (void)name;
    st->default_ms = default_ms;
    st->time_src = (int)src;
    st->refused = 0;
    st->nonfinite = 0;
    st->samples = 0;
    if (!op_strmap_get(&st->target_ix, target, &idx)) {
        idx = st->ntargets;
        if (OP_GROW(st->targets, st->targets_cap, idx + 1, 8) ||
            op_strmap_put(&st->target_ix, target, idx, 1, &stored))
            return OP_ENOMEM;
        memset(&st->targets[idx], 0, sizeof *st->targets);
        st->targets[st->ntargets++].name = stored;
    }
    st->target = (uint32_t)idx;
    return 0;
}

uint64_t prom_input_refused(const prom_state *st)
{
    return st->refused;
}

uint64_t prom_input_samples(const prom_state *st)
{
    return st->samples;
}

int prom_warn(prom_state *st, const char *msg)
{
    char *copy = strdup(msg);

    if (!copy || OP_GROW(st->warns, st->warns_cap, st->nwarns + 1, 8)) {
        free(copy);
        return OP_ENOMEM;
    }
    st->warns[st->nwarns].msg = copy;
    st->warns[st->nwarns++].target = st->target;
    return 0;
}

/* Gives run the warnings of the targets in seen (a flag per target). */
static void target_warnings(const prom_state *st, op_builder *b, op_run *run,
                            const unsigned char *seen)
{
    size_t i;

    for (i = 0; i < st->nwarns; i++)
        if (seen[st->warns[i].target])
            op_run_warning(b, run, st->warns[i].msg);
}

/* ---- series keys and mapping ---------------------------------------------- */

static int label_cmp(const void *a, const void *b)
{
    return strcmp(((const op_label *)a)->name, ((const op_label *)b)->name);
}

/* name \x1f l1=v1 \x1f l2=v2 ... \x1e target into st->key, labels sorted
 * (the caller's copy). -1 when it does not fit. */
static int series_key(prom_state *st, const char *name, op_label *labels,
                      size_t n, const char *target)
{
    size_t o = 0, i;
    int w;

    qsort(labels, n, sizeof *labels, label_cmp);
    w = snprintf(st->key, sizeof st->key, "%s", name);
    if (w < 0 || (size_t)w >= sizeof st->key)
        return -1;
    o = (size_t)w;
    for (i = 0; i < n; i++) {
        w = snprintf(st->key + o, sizeof st->key - o, "\x1f%s=%s",
                     labels[i].name, labels[i].value);
        if (w < 0 || (size_t)w >= sizeof st->key - o)
            return -1;
        o += (size_t)w;
    }
    w = snprintf(st->key + o, sizeof st->key - o, "\x1e%s", target);
    return w < 0 || (size_t)w >= sizeof st->key - o ? -1 : 0;
}

static void set_kv(ps_kv *attrs, unsigned *n, unsigned cap, const char *k,
                   const char *v)
{
    unsigned i;

    if (!k || !v)
        return;
    for (i = 0; i < *n; i++)
        if (attrs[i].k == k) { /* interned: pointers compare */
            attrs[i].v = v;
            return;
        }
    if (*n < cap) {
        attrs[*n].k = k;
        attrs[(*n)++].v = v;
    }
}

static int run_of(prom_state *st, const op_map *m, uint32_t *out, int *oom)
{
    char key[OP_MAP_KEY + 2 * OP_MAP_STR + 4];
    size_t idx;
    ps_run *r;

    snprintf(key, sizeof key, "%s\x1f%s\x1f%s", m->source, m->job, m->run_id);
    if (!op_strmap_get(&st->run_ix, key, &idx)) {
        idx = st->nruns;
        if (OP_GROW(st->runs, st->runs_cap, idx + 1, 8) ||
            op_strmap_put(&st->run_ix, key, idx, 1, NULL))
            return -1;
        r = &st->runs[st->nruns++];
        memset(r, 0, sizeof *r);
        r->source = intern(st, m->source, oom);
        r->job = intern(st, m->job, oom);
        r->run_id = intern(st, m->run_id, oom);
        r->pack = intern(st, m->pack, oom);
    }
    r = &st->runs[idx];
    if (!r->version && *m->version)
        r->version = intern(st, m->version, oom);
    if (m->nrun_attrs && (!r->nattrs || (!r->attrs_versioned && *m->version))) {
        unsigned i;
        for (i = 0; i < m->nrun_attrs; i++)
            set_kv(r->attrs, &r->nattrs, OP_MAP_RUN_ATTRS,
                   intern(st, m->run_attrs[i].key, oom),
                   intern(st, m->run_attrs[i].value, oom));
        r->attrs_versioned = *m->version != '\0';
    }
    if (*m->instance && op_strmap_put(&r->instances, m->instance, 0, 1, NULL))
        return -1;
    *out = (uint32_t)idx;
    return 0;
}

static int node_of(prom_state *st, uint32_t run, const op_map_node *mn,
                   uint32_t parent, uint32_t *out, int *oom)
{
    char key[OP_MAP_STR + 16];
    size_t idx;
    ps_node *n;
    ps_run *r = &st->runs[run];
    unsigned i;

    snprintf(key, sizeof key, "%08x\x1f%s", (unsigned)run, mn->id);
    if (!op_strmap_get(&st->node_ix, key, &idx)) {
        idx = st->nnodes;
        if (OP_GROW(st->nodes, st->nodes_cap, idx + 1, 64) ||
            OP_GROW(r->nodes, r->nodes_cap, r->nnodes + 1, 16) ||
            op_strmap_put(&st->node_ix, key, idx, 1, NULL))
            return -1;
        n = &st->nodes[st->nnodes++];
        memset(n, 0, sizeof *n);
        n->id = intern(st, mn->id, oom);
        n->kind = intern(st, mn->kind, oom);
        n->inherit = intern(st, mn->inherit, oom);
        n->parent = parent;
        r->nodes[r->nnodes++] = (uint32_t)idx;
    }
    n = &st->nodes[idx];
    for (i = 0; i < mn->nattrs; i++)
        set_kv(n->attrs, &n->nattrs, OP_MAP_ATTRS + 2,
               intern(st, mn->attrs[i].key, oom),
               intern(st, mn->attrs[i].value, oom));
    *out = (uint32_t)idx;
    return 0;
}

/* Turns the host's answer into indexes and interned strings. */
static int adopt(prom_state *st, ps_series *s, const op_map *m)
{
    uint32_t parent = PS_NONE;
    unsigned i;
    int oom = 0;

    if (run_of(st, m, &s->run, &oom))
        return OP_ENOMEM;
    s->node = PS_NONE;
    for (i = 0; i < m->nnodes; i++) {
        if (node_of(st, s->run, &m->nodes[i], parent, &s->node, &oom))
            return OP_ENOMEM;
        parent = s->node;
    }
    if (s->node != PS_NONE && *m->set_attr.key) {
        ps_node *n = &st->nodes[s->node];
        set_kv(n->attrs, &n->nattrs, OP_MAP_ATTRS + 2,
               intern(st, m->set_attr.key, &oom),
               intern(st, m->set_attr.value, &oom));
    }
    s->m.name = intern(st, m->metric, &oom);
    s->m.rate = intern(st, m->rate, &oom);
    s->m.flag = intern(st, m->sentinel_flag, &oom);
    s->m.dist = intern(st, m->dist_key, &oom);
    s->m.sentinel_attr.k = intern(st, m->sentinel_attr.key, &oom);
    s->m.sentinel_attr.v = intern(st, m->sentinel_attr.value, &oom);
    s->m.value_attr.k = intern(st, m->value_attr.key, &oom);
    s->m.value_attr.v = intern(st, m->value_attr.value, &oom);
    s->m.scale = m->scale;
    s->m.sentinel = m->sentinel;
    s->m.counter = m->kind == OP_MAP_COUNTER;
    s->m.has_sentinel = m->has_sentinel;
    s->m.info = m->info;
    return oom || !s->m.name ? OP_ENOMEM : 0;
}

/* A new series: mapped (or not) once, here. */
static int series_new(prom_state *st, op_builder *b, const prom_sample *smp,
                      const op_label *labels, uint32_t *out, op_error *err)
{
    ps_target *tg = &st->targets[st->target];
    op_series_ref ref;
    ps_series *s;
    int rc;

    if (OP_GROW(st->series, st->series_cap, st->nseries + 1, 1024))
        return OP_ENOMEM;
    s = &st->series[st->nseries];
    memset(s, 0, sizeof *s);
    s->run = PS_NONE;
    s->target = st->target;
    *out = (uint32_t)st->nseries++;
    tg->series++;
    ref.name = smp->name;
    ref.type = smp->type;
    ref.labels = labels;
    ref.nlabels = smp->nlabels;
    ref.target = tg->name;
    rc = op_map_series(b, &ref, &st->scratch, err);
    if (rc == 1) {
        tg->mapped++;
        return adopt(st, s, &st->scratch);
    }
    if (tg->nunmapped_shown < PS_UNMAPPED_SHOWN) {
        int oom = 0;
        const char *nm = intern(st, smp->name, &oom);
        size_t i;
        for (i = 0; i < tg->nunmapped_shown && tg->unmapped[i] != nm; i++)
            ;
        if (i == tg->nunmapped_shown && nm)
            tg->unmapped[tg->nunmapped_shown++] = nm;
        if (oom)
            return OP_ENOMEM;
    }
    return rc < 0 ? -rc : 0;
}

int prom_add(prom_state *st, op_builder *b, const prom_sample *smp,
             op_error *err)
{
    op_label labels[PROM_MAX_LABELS];
    const char *tname = st->targets[st->target].name;
    size_t idx;
    ps_series *s;
    int rc;

    memcpy(labels, smp->labels, smp->nlabels * sizeof *labels);
    st->targets[st->target].samples++;
    st->samples++;
    if (series_key(st, smp->name, labels, smp->nlabels, tname)) {
        st->refused++;
        return 0;
    }
    if (!op_strmap_get(&st->series_ix, st->key, &idx)) {
        uint32_t made = PS_NONE;
        if (st->nseries >= PROM_MAX_SERIES) {
            st->refused++; /* each later sample of it too: never a key */
            return 0;
        }
        rc = series_new(st, b, smp, labels, &made, err);
        /* the key once its series exists, even when mapping it failed */
        if (made != PS_NONE &&
            op_strmap_put(&st->series_ix, st->key, made, 1, NULL))
            return OP_ENOMEM;
        if (rc)
            return rc;
        idx = made;
    }
    s = &st->series[idx];
    if (s->run == PS_NONE || s->m.info)
        return 0;
    if (!isfinite(smp->value)) {
        st->nonfinite++; /* NaN or Inf: no value at that time (absent) */
        return 0;
    }
    if (st->npoints >= PROM_MAX_POINTS) {
        st->refused++;
        return 0;
    }
    if (OP_GROW(s->pts, s->cap, s->n + 1, 4))
        return OP_ENOMEM;
    s->pts[s->n].t = smp->has_ts ? smp->ts_ms : st->default_ms;
    s->pts[s->n++].v = smp->value;
    st->npoints++;
    {
        int src = smp->has_ts ? PROM_T_SAMPLE : st->time_src;
        ps_run *r = &st->runs[s->run];
        if (src > r->time_src)
            r->time_src = src;
    }
    return 0;
}

/* ---- building the runs ---------------------------------------------------- */

static int point_cmp(const void *a, const void *b)
{
    const ps_point *x = a, *y = b;
    return x->t < y->t ? -1 : x->t > y->t;
}

static int i64_cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* What one series says at its newest point, scaled. */
typedef struct newest {
    int present;  /* a value (not the sentinel) */
    int sentinel; /* the newest point is the sentinel */
    double v;
    double rate;  /* counter rate per second; NAN: none */
} newest;

static newest series_newest(const ps_series *s)
{
    newest r = {0, 0, 0, NAN};
    const ps_point *last;
    double inc = 0;
    size_t i;

    if (!s->n)
        return r;
    last = &s->pts[s->n - 1];
    if (s->m.has_sentinel && last->v == s->m.sentinel) {
        r.sentinel = 1;
        return r;
    }
    r.present = 1;
    r.v = last->v * s->m.scale;
    if (s->m.counter && s->n > 1 && last->t > s->pts[0].t) {
        for (i = 1; i < s->n; i++) /* a drop is a restart: count from 0 */
            inc += s->pts[i].v >= s->pts[i - 1].v
                       ? s->pts[i].v - s->pts[i - 1].v
                       : s->pts[i].v;
        r.rate = inc * s->m.scale * 1000.0 / (double)(last->t - s->pts[0].t);
    }
    return r;
}

static const char *time_words(int src)
{
    return src == PROM_T_SAMPLE  ? "sample timestamps"
           : src == PROM_T_NAME  ? "file names"
           : src == PROM_T_MTIME ? "file modification times"
                                 : "unknown (rates not computed)";
}

typedef struct emit_ctx {
    prom_state *st;
    op_builder *b;
    op_run *run;
    op_node **nodes; /* by global node index (only this run's set) */
} emit_ctx;

/* Orders a run's series by node, metric, dist key: a group is a run. */
static int series_order(const void *a, const void *b)
{
    const ps_series *x = *(const ps_series *const *)a;
    const ps_series *y = *(const ps_series *const *)b;
    int c;

    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    if ((c = strcmp(x->m.name, y->m.name)))
        return c;
    return strcmp(x->m.dist ? x->m.dist : "", y->m.dist ? y->m.dist : "");
}

static void node_metric(emit_ctx *c, uint32_t node, const char *name, double v)
{
    if (node == PS_NONE)
        op_run_metric(c->b, c->run, name, v);
    else
        op_node_metric(c->b, c->nodes[node], name, v);
}

static void node_attr(emit_ctx *c, uint32_t node, const ps_kv *kv)
{
    if (!kv->k || !kv->v)
        return;
    if (node == PS_NONE)
        op_run_attr(c->b, c->run, kv->k, kv->v);
    else {
        ps_node *n = &c->st->nodes[node];
        set_kv(n->attrs, &n->nattrs, OP_MAP_ATTRS + 2, kv->k, kv->v);
    }
}

/* One (node, metric) group of series [i, j) of sp. */
static int emit_group(emit_ctx *c, const ps_series *const *sp, size_t i,
                      size_t j)
{
    const ps_series *first = sp[i];
    double sum = 0, max = -INFINITY, rate = 0, *vals = NULL, cur = 0;
    size_t nvals = 0, k, present = 0, nrate = 0;
    int sentinel = 0, has_dist = first->m.dist != NULL;
    const char *last_key = NULL;
    char name[OP_MAP_NAME + 8];

    if (has_dist && !(vals = malloc((j - i) * sizeof *vals)))
        return OP_ENOMEM;
    for (k = i; k < j; k++) {
        const ps_series *s = sp[k];
        newest nw = series_newest(s);
        if (nw.sentinel)
            sentinel = 1;
        if (!nw.present)
            continue;
        present++;
        sum += nw.v;
        if (!isnan(nw.rate)) {
            rate += nw.rate;
            nrate++;
        }
        if (has_dist) { /* series of one dist key (column families) add up */
            if (last_key && s->m.dist && strcmp(last_key, s->m.dist) == 0) {
                cur += nw.v;
            } else {
                if (last_key)
                    vals[nvals++] = cur;
                cur = nw.v;
                last_key = s->m.dist ? s->m.dist : "";
            }
        }
    }
    if (has_dist && last_key)
        vals[nvals++] = cur;
    for (k = 0; k < nvals; k++)
        max = vals[k] > max ? vals[k] : max;
    if (present) {
        node_metric(c, first->node, first->m.name, sum);
        node_attr(c, first->node, &first->m.value_attr);
        if (has_dist && nvals) {
            snprintf(name, sizeof name, "%s_max", first->m.name);
            node_metric(c, first->node, name, max);
            if (first->node != PS_NONE)
                op_node_dist_values(c->b, c->nodes[first->node], first->m.name,
                                    vals, nvals);
        }
        if (first->m.rate && nrate)
            node_metric(c, first->node, first->m.rate, rate);
        if (!has_dist && j - i > 1) {
            char msg[OP_MAP_NAME + OP_MAP_STR + 160];
            snprintf(msg, sizeof msg, "%zu exported series map to %s of node "
                     "'%s': their values were added up (a mapping pack that "
                     "misses a label in the node id?)", j - i, first->m.name,
                     first->node == PS_NONE ? "(run)"
                                            : c->st->nodes[first->node].id);
            op_run_warning(c->b, c->run, msg);
        }
    } else if (sentinel) {
        node_attr(c, first->node, &first->m.sentinel_attr);
    }
    free(vals);
    return 0;
}

/* ---- run.series.samples ------------------------------------------------- */

typedef struct sample_ent {
    int64_t t;
    uint32_t node;
    const char *metric; /* the model name, or the sentinel flag */
    double v;
} sample_ent;

static int ent_cmp(const void *a, const void *b)
{
    const sample_ent *x = a, *y = b;

    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    if (x->node != y->node)
        return x->node < y->node ? -1 : 1;
    return strcmp(x->metric, y->metric);
}

static int emit_samples(emit_ctx *c, const ps_series *const *sp, size_t n)
{
    sample_ent *e;
    size_t total = 0, k, i, o = 0;
    op_record *rec = NULL;

    for (k = 0; k < n; k++)
        total += sp[k]->n;
    if (!total)
        return 0;
    if (!(e = malloc(total * sizeof *e)))
        return OP_ENOMEM;
    for (k = 0; k < n; k++) {
        const ps_series *s = sp[k];
        for (i = 0; i < s->n; i++) {
            int flag = s->m.has_sentinel && s->pts[i].v == s->m.sentinel;
            if (flag && !s->m.flag)
                continue;
            e[o].t = s->pts[i].t;
            e[o].node = s->node;
            e[o].metric = flag ? s->m.flag : s->m.name;
            e[o++].v = flag ? 1 : s->pts[i].v * s->m.scale;
        }
    }
    qsort(e, o, sizeof *e, ent_cmp);
    for (i = 0; i < o; i++) {
        double v = e[i].v;
        if (!rec || e[i].t != e[i - 1].t || e[i].node != e[i - 1].node) {
            rec = op_series_append(c->b, c->run, "samples");
            op_record_int(c->b, rec, "t_ms", e[i].t);
            if (e[i].node != PS_NONE)
                op_record_str(c->b, rec, "node", c->st->nodes[e[i].node].id);
        }
        while (i + 1 < o && e[i + 1].t == e[i].t && e[i + 1].node == e[i].node &&
               strcmp(e[i + 1].metric, e[i].metric) == 0)
            v += e[++i].v;
        op_record_num(c->b, rec, e[i].metric, v);
    }
    free(e);
    return 0;
}

/* ---- one run ---------------------------------------------------------------- */

static void iso_time(int64_t ms, char *out, size_t cap)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    if (gmtime_r(&t, &tm))
        strftime(out, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        snprintf(out, cap, "%lld", (long long)ms);
}

static const char *attr_of(const ps_node *n, const char *k)
{
    unsigned i;

    for (i = 0; i < n->nattrs; i++)
        if (strcmp(n->attrs[i].k, k) == 0)
            return n->attrs[i].v;
    return NULL;
}

/* Makes the run's nodes (parents come before children in r->nodes). */
static void make_nodes(emit_ctx *c, const ps_run *r)
{
    size_t k;

    for (k = 0; k < r->nnodes; k++) {
        ps_node *n = &c->st->nodes[r->nodes[k]];
        op_node *on = op_node_get(c->b, c->run, n->id);
        c->nodes[r->nodes[k]] = on;
        op_node_str(c->b, on, OP_F_KIND, n->kind);
        op_node_str(c->b, on, OP_F_NAME, attr_of(n, "name") ? attr_of(n, "name")
                                                            : n->id);
        if (n->parent != PS_NONE)
            op_node_parent(c->b, on, c->st->nodes[n->parent].id);
    }
}

/* Writes the attrs, after the metrics set theirs; an inherited attr comes
 * from the parent, which was written first. */
static void node_attrs(emit_ctx *c, const ps_run *r)
{
    size_t k;
    unsigned a;

    for (k = 0; k < r->nnodes; k++) {
        ps_node *n = &c->st->nodes[r->nodes[k]];
        if (n->parent != PS_NONE && n->inherit && !attr_of(n, n->inherit)) {
            const char *v = attr_of(&c->st->nodes[n->parent], n->inherit);
            if (v)
                set_kv(n->attrs, &n->nattrs, OP_MAP_ATTRS + 2, n->inherit, v);
        }
        for (a = 0; a < n->nattrs; a++) /* "name" is the node's name */
            if (strcmp(n->attrs[a].k, "name") != 0)
                op_node_attr(c->b, c->nodes[r->nodes[k]], n->attrs[a].k,
                             n->attrs[a].v);
    }
}

static int64_t *scrape_times(const prom_state *st, const uint32_t *ix,
                             size_t n, size_t *count)
{
    size_t total = 0, k, i, o = 0;
    int64_t *t;

    for (k = 0; k < n; k++)
        total += st->series[ix[k]].n;
    *count = 0;
    if (!(t = malloc((total ? total : 1) * sizeof *t)))
        return NULL;
    for (k = 0; k < n; k++)
        for (i = 0; i < st->series[ix[k]].n; i++)
            t[o++] = st->series[ix[k]].pts[i].t;
    qsort(t, o, sizeof *t, i64_cmp);
    for (i = 0; i < o; i++)
        if (!*count || t[*count - 1] != t[i])
            t[(*count)++] = t[i];
    return t;
}

/* The unmapped series of the targets that fed the run, whose warnings
 * the run gets. */
static uint64_t unmapped_of(const prom_state *st, op_builder *b, op_run *run,
                            const uint32_t *ix, size_t n)
{
    unsigned char *seen = calloc(st->ntargets ? st->ntargets : 1, 1);
    uint64_t u = 0;
    size_t k;

    if (!seen)
        return 0;
    for (k = 0; k < n; k++) {
        uint32_t tg = st->series[ix[k]].target;
        if (!seen[tg]) {
            seen[tg] = 1;
            u += st->targets[tg].series - st->targets[tg].mapped;
        }
    }
    target_warnings(st, b, run, seen);
    free(seen);
    return u;
}

static int emit_run(prom_state *st, op_builder *b, const ps_run *r,
                    uint32_t *ix, size_t n)
{
    emit_ctx c = {st, b, NULL, NULL};
    char id[OP_MAP_STR * 2 + 40], when[40];
    size_t nscrapes = 0, i, j;
    const ps_series **sp;
    int64_t *times;
    unsigned a;
    int rc = 0;

    for (i = 0; i < n; i++) /* an info or all-NaN series has no points */
        if (st->series[ix[i]].n)
            qsort(st->series[ix[i]].pts, st->series[ix[i]].n, sizeof(ps_point),
                  point_cmp);
    if (!(times = scrape_times(st, ix, n, &nscrapes)))
        return OP_ENOMEM;
    if (!nscrapes) { /* every value was NaN: nothing to say */
        free(times);
        return 0;
    }
    iso_time(times[0], when, sizeof when);
    if (r->run_id)
        snprintf(id, sizeof id, "%s", r->run_id);
    else
        snprintf(id, sizeof id, "%s@%s", r->job, when);
    /* a run another input made (a Flink REST export of the same job id)
     * keeps its own fields: the scrapes add metrics and nodes */
    if (!(c.run = op_run_find(b, r->source, id))) {
        c.run = op_run_get(b, r->source, id);
        op_run_str(b, c.run, OP_F_NAME, r->job);
        op_run_job(b, c.run, r->job);
        op_run_str(b, c.run, OP_F_STATUS, "running");
        if (r->version)
            op_run_str(b, c.run, OP_F_ENGINE_VERSION, r->version);
        if (r->time_src != PROM_T_NONE) {
            op_run_int(b, c.run, OP_I_STARTED_AT, times[0]);
            op_run_int(b, c.run, OP_I_ENDED_AT, times[nscrapes - 1]);
        }
    }
    op_run_metric_int(b, c.run, "scrapes", (int64_t)nscrapes);
    op_run_metric_int(b, c.run, "instances", (int64_t)r->instances.n);
    if (r->time_src != PROM_T_NONE)
        op_run_metric_int(b, c.run, "window_ms", times[nscrapes - 1] - times[0]);
    op_run_metric_int(b, c.run, "unmapped_series", (int64_t)unmapped_of(st, b, c.run, ix, n));
    op_run_attr(b, c.run, "dialect", r->pack);
    op_run_attr(b, c.run, "scrape_time", time_words(r->time_src));
    for (a = 0; a < r->nattrs; a++)
        op_run_attr(b, c.run, r->attrs[a].k, r->attrs[a].v);
    free(times);
    if (st->nnodes && !(c.nodes = calloc(st->nnodes, sizeof *c.nodes)))
        return OP_ENOMEM;
    if (r->time_src == PROM_T_NONE) /* rates need times */
        for (i = 0; i < n; i++)
            st->series[ix[i]].m.rate = NULL;
    if (!(sp = malloc(n * sizeof *sp))) {
        free(c.nodes);
        return OP_ENOMEM;
    }
    for (i = 0; i < n; i++)
        sp[i] = &st->series[ix[i]];
    qsort(sp, n, sizeof *sp, series_order);
    make_nodes(&c, r);
    for (i = 0; i < n && !rc; i = j) {
        for (j = i + 1; j < n && sp[j]->node == sp[i]->node &&
                        strcmp(sp[j]->m.name, sp[i]->m.name) == 0;
             j++)
            ;
        rc = emit_group(&c, sp, i, j);
    }
    if (!rc)
        node_attrs(&c, r);
    if (!rc)
        rc = emit_samples(&c, sp, n);
    free(sp);
    free(c.nodes);
    return rc;
}

/* A target none of whose series any pack maps: one run of the plugin's
 * own source, so the input is seen and the warning says what to add. */
static void emit_unmapped_target(const prom_state *st, op_builder *b,
                                 const ps_target *tg)
{
    unsigned char *seen = calloc(st->ntargets, 1);
    op_run *r = op_run_get(b, "prometheus", tg->name);
    char msg[1024];
    size_t o, i;

    op_run_str(b, r, OP_F_NAME, tg->name);
    op_run_str(b, r, OP_F_STATUS, "unknown");
    op_run_metric_int(b, r, "series", (int64_t)tg->series);
    op_run_metric_int(b, r, "samples", (int64_t)tg->samples);
    op_run_metric_int(b, r, "unmapped_series", (int64_t)tg->series);
    o = (size_t)snprintf(msg, sizeof msg, "no mapping pack knows the %llu "
                         "series of these scrapes (",
                         (unsigned long long)tg->series);
    for (i = 0; i < tg->nunmapped_shown && o < sizeof msg; i++)
        o += (size_t)snprintf(msg + o, sizeof msg - o, "%s%s", i ? ", " : "",
                              tg->unmapped[i]);
    if (o < sizeof msg)
        snprintf(msg + o, sizeof msg - o, "%s): they are counted, not "
                 "analyzed; add a mapping pack with --mappings "
                 "(docs/mapping-packs.md)",
                 tg->series > tg->nunmapped_shown ? ", ..." : "");
    op_run_warning(b, r, msg);
    if (seen) {
        seen[tg - st->targets] = 1;
        target_warnings(st, b, r, seen);
        free(seen);
    }
}

int prom_emit(prom_state *st, op_builder *b, op_error *err)
{
    uint32_t *ix = NULL;
    size_t *start = NULL, *fill = NULL, i;
    int rc = 0;

    for (i = 0; i < st->ntargets; i++)
        if (st->targets[i].series && !st->targets[i].mapped)
            emit_unmapped_target(st, b, &st->targets[i]);
    if (!st->nruns)
        return 0;
    /* bucket the mapped series by run */
    ix = malloc((st->nseries ? st->nseries : 1) * sizeof *ix);
    start = calloc(st->nruns + 1, sizeof *start);
    fill = calloc(st->nruns, sizeof *fill);
    if (!ix || !start || !fill) {
        rc = op_error_set(err, OP_ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < st->nseries; i++)
        if (st->series[i].run != PS_NONE)
            start[st->series[i].run + 1]++;
    for (i = 0; i < st->nruns; i++)
        start[i + 1] += start[i];
    for (i = 0; i < st->nseries; i++)
        if (st->series[i].run != PS_NONE) {
            uint32_t r = st->series[i].run;
            ix[start[r] + fill[r]++] = (uint32_t)i;
        }
    for (i = 0; i < st->nruns && !rc; i++)
        if ((rc = emit_run(st, b, &st->runs[i], ix + start[i],
                           start[i + 1] - start[i])))
            op_error_set(err, rc, "out of memory");
out:
    free(ix);
    free(start);
    free(fill);
    return rc;
}
