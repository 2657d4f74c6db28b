/*
 * model_json.c - writes the frozen model in the shape the Lua bridge gives
 * rules, so `optipipe normalize` shows authors exactly what they get.
 * Fields that are unset are left out, as they are nil in Lua.
 */
#include "model_json.h"

#include <string.h>

void model_json_value(jw *w, const mvalue *v)
{
    switch (v->t) {
    case MV_INT: jw_int(w, v->u.i); break;
    case MV_NUM: jw_num(w, v->u.n); break;
    case MV_STR: jw_str(w, v->u.s); break;
    case MV_BOOL: jw_bool(w, v->u.b); break;
    }
}

static void map(jw *w, const char *key, const mmap *m)
{
    size_t i;

    jw_key(w, key);
    jw_obj(w);
    for (i = 0; i < m->n; i++) {
        mvalue v = mentry_value(&m->items[i]);

        jw_key(w, mentry_key(&m->items[i]));
        model_json_value(w, &v);
    }
    jw_obj_end(w);
}

void model_json_map(jw *w, const char *key, const mmap *m)
{
    map(w, key, m);
}

static void opt_str(jw *w, const char *key, const char *v)
{
    if (v) {
        jw_key(w, key);
        jw_str(w, v);
    }
}

static void opt_int(jw *w, unsigned set, unsigned bit, const char *key,
                    int64_t v)
{
    if (set & bit) {
        jw_key(w, key);
        jw_int(w, v);
    }
}

static void strings(jw *w, const char *key, const char *const *v, size_t n)
{
    size_t i;

    jw_key(w, key);
    jw_arr(w);
    for (i = 0; i < n; i++)
        jw_str(w, v[i]);
    jw_arr_end(w);
}

static void dist(jw *w, const op_dist *d)
{
    jw_obj(w);
    jw_key(w, "count"); jw_num(w, d->count);
    jw_key(w, "min"); jw_num(w, d->min);
    jw_key(w, "p50"); jw_num(w, d->p50);
    jw_key(w, "p75"); jw_num(w, d->p75);
    jw_key(w, "p90"); jw_num(w, d->p90);
    jw_key(w, "p95"); jw_num(w, d->p95);
    jw_key(w, "p99"); jw_num(w, d->p99);
    jw_key(w, "max"); jw_num(w, d->max);
    jw_key(w, "mean"); jw_num(w, d->mean);
    jw_key(w, "sum"); jw_num(w, d->sum);
    jw_obj_end(w);
}

static void node(jw *w, const struct op_node *n)
{
    size_t i;

    jw_obj(w);
    jw_key(w, "id");
    jw_str(w, n->id);
    opt_str(w, "kind", n->kind);
    opt_str(w, "name", n->name);
    opt_str(w, "status", n->status);
    opt_str(w, "raw_status", n->raw_status);
    opt_int(w, n->set, MSET_STARTED_AT, "started_at", n->started_at);
    opt_int(w, n->set, MSET_ENDED_AT, "ended_at", n->ended_at);
    opt_int(w, n->set, MSET_DURATION_MS, "duration_ms", n->duration_ms);
    opt_int(w, n->set, MSET_PARALLELISM, "parallelism", n->parallelism);
    opt_int(w, n->set, MSET_MAX_PARALLELISM, "max_parallelism",
            n->max_parallelism);
    strings(w, "parents", n->parents, n->nparents);
    strings(w, "children", n->children, n->nchildren);
    map(w, "metrics", &n->metrics);
    jw_key(w, "dist");
    jw_obj(w);
    for (i = 0; i < n->ndists; i++) {
        jw_key(w, n->dists[i].metric);
        dist(w, &n->dists[i].d);
    }
    jw_obj_end(w);
    map(w, "attrs", &n->attrs);
    jw_obj_end(w);
}

static void series(jw *w, const struct op_run *r)
{
    size_t i, j, k;

    jw_key(w, "series");
    jw_obj(w);
    for (i = 0; i < r->nseries; i++) {
        const mseries *s = &r->series[i];
        jw_key(w, s->name);
        jw_arr(w);
        for (j = 0; j < s->n; j++) {
            const mmap *f = &s->recs[j]->fields;
            jw_obj(w);
            for (k = 0; k < f->n; k++) {
                mvalue v = mentry_value(&f->items[k]);

                jw_key(w, mentry_key(&f->items[k]));
                model_json_value(w, &v);
            }
            jw_obj_end(w);
        }
        jw_arr_end(w);
    }
    jw_obj_end(w);
}

void model_json_run(jw *w, const struct op_run *r)
{
    size_t i;

    jw_obj(w);
    jw_key(w, "source");
    jw_str(w, r->source);
    jw_key(w, "id");
    jw_str(w, r->id);
    jw_key(w, "job");
    jw_str(w, model_run_job(r));
    opt_str(w, "name", r->name);
    jw_key(w, "status");
    jw_str(w, r->status ? r->status : "unknown");
    opt_str(w, "raw_status", r->raw_status);
    opt_int(w, r->set, MSET_STARTED_AT, "started_at", r->started_at);
    opt_int(w, r->set, MSET_ENDED_AT, "ended_at", r->ended_at);
    opt_int(w, r->set, MSET_DURATION_MS, "duration_ms", r->duration_ms);
    opt_str(w, "engine_version", r->engine_version);
    if (r->norigins)
        opt_str(w, "origin", r->origins[0]);
    strings(w, "origins", r->origins, r->norigins);
    map(w, "config", &r->config);
    map(w, "attrs", &r->attrs);
    map(w, "metrics", &r->metrics);
    jw_key(w, "nodes");
    jw_arr(w);
    for (i = 0; i < r->nnodes; i++)
        node(w, r->nodes[i]);
    jw_arr_end(w);
    series(w, r);
    strings(w, "warnings", r->warnings, r->nwarnings);
    if (r->history_key) {
        jw_key(w, "history_key");
        jw_str(w, r->history_key);
        jw_key(w, "history");
        jw_arr(w);
        for (i = 0; i < r->nhistory; i++)
            jw_str(w, r->history[i]->id);
        jw_arr_end(w);
        if (r->superseded) {
            jw_key(w, "superseded");
            jw_bool(w, 1);
        }
    }
    jw_obj_end(w);
}
