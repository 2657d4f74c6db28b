/*
 * diff.c - what changed between two runs (diff.h, docs/history.md#diff).
 * Works on the JSON shape of a run only, so it never names an engine: the
 * resources it reports are the model's resource metrics, whatever engine
 * filled them. diff_stored_run reads a run of the run store into that
 * shape (optipipe diff and the server's /diff).
 */
#include <fnmatch.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "diff_findings.h"
#include "store.h"

/* Run metrics that say what a run had to work with (docs/model-*.md):
 * shown side by side even when equal, since "the same code on half the
 * resources" is the first thing to rule out. */
static const char *const resource_metrics[] = {
    "executors_max", "executor_cores_max", "threads", "worker_threads",
    "max_parallelism", "vertices",
};

const char *diff_node_key(char *buf, size_t cap, const char *kind,
                          const char *name, unsigned k)
{
    char suffix[16];
    size_t room, nk, nn;
    const char *cut = "";

    if (!cap)
        return buf;
    kind = kind ? kind : "node";
    name = name ? name : "";
    snprintf(suffix, sizeof suffix, "#%u", k);
    nk = strlen(kind);
    nn = strlen(name);
    /* the "#k" must survive a cut, or two long names would collide */
    room = cap > strlen(suffix) + 5 ? cap - strlen(suffix) - 5 : 0;
    if (nk > room / 2)
        nk = room / 2;
    if (nk + nn > room) {
        nn = room - nk;
        cut = "...";
    }
    snprintf(buf, cap, "%.*s:%.*s%s%s", (int)nk, kind, (int)nn, name, cut,
             suffix);
    return buf;
}

/* ---- a model run as JSON ------------------------------------------------------ */

static cJSON *mvalue_json(const mvalue *v)
{
    switch (v->t) {
    case MV_INT: return cJSON_CreateNumber((double)v->u.i);
    case MV_NUM: return cJSON_CreateNumber(v->u.n);
    case MV_STR: return cJSON_CreateString(v->u.s ? v->u.s : "");
    case MV_BOOL: return cJSON_CreateBool(v->u.b);
    }
    return NULL;
}

/* Adds item under key; on failure frees item. Returns 0 or -1. */
static int put(cJSON *obj, const char *key, cJSON *item)
{
    if (!item)
        return -1;
    if (!cJSON_AddItemToObject(obj, key, item)) {
        cJSON_Delete(item);
        return -1;
    }
    return 0;
}

static int put_str(cJSON *obj, const char *key, const char *s)
{
    return s ? put(obj, key, cJSON_CreateString(s)) : 0;
}

static int put_map(cJSON *obj, const char *key, const mmap *m)
{
    cJSON *o = cJSON_CreateObject();
    size_t i;

    if (put(obj, key, o))
        return -1;
    for (i = 0; i < m->n; i++) {
        mvalue v = mentry_value(&m->items[i]);

        if (put(o, mentry_key(&m->items[i]), mvalue_json(&v)))
            return -1;
    }
    return 0;
}

static int node_json(cJSON *arr, const struct op_node *n)
{
    cJSON *o = cJSON_CreateObject();
    int bad;

    if (!o || !cJSON_AddItemToArray(arr, o)) {
        cJSON_Delete(o);
        return -1;
    }
    bad = put_str(o, "id", n->id) | put_str(o, "kind", n->kind) |
          put_str(o, "name", n->name) | put_str(o, "status", n->status);
    if (n->set & MSET_DURATION_MS)
        bad |= put(o, "duration_ms", cJSON_CreateNumber((double)n->duration_ms));
    if (n->set & MSET_PARALLELISM)
        bad |= put(o, "parallelism", cJSON_CreateNumber((double)n->parallelism));
    return bad;
}

int diff_run_json(const struct op_run *r, cJSON **out, op_error *err)
{
    cJSON *o = cJSON_CreateObject(), *nodes = NULL;
    int bad = !o;
    size_t i;

    if (o) {
        bad |= put_str(o, "source", r->source) | put_str(o, "id", r->id) |
               put_str(o, "job", model_run_job(r)) |
               put_str(o, "name", r->name) | put_str(o, "status", r->status) |
               put_str(o, "engine_version", r->engine_version);
        if (r->norigins)
            bad |= put_str(o, "origin", r->origins[0]);
        if (r->set & MSET_STARTED_AT)
            bad |= put(o, "started_at", cJSON_CreateNumber((double)r->started_at));
        if (r->set & MSET_DURATION_MS)
            bad |= put(o, "duration_ms", cJSON_CreateNumber((double)r->duration_ms));
        bad |= put_map(o, "config", &r->config) |
               put_map(o, "metrics", &r->metrics);
        nodes = cJSON_CreateArray();
        bad |= put(o, "nodes", nodes);
        for (i = 0; !bad && i < r->nnodes; i++)
            bad |= node_json(nodes, r->nodes[i]);
    }
    if (bad) {
        cJSON_Delete(o);
        return op_error_set(err, OP_ENOMEM, "diff: out of memory");
    }
    *out = o;
    return 0;
}

/* ---- comparing ---------------------------------------------------------------- */

static double num_or_nan(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* a, b, and when both are numbers delta = b - a and ratio = b / a. */
static int put_pair(cJSON *o, double a, double b)
{
    int bad = put(o, "a", isnan(a) ? cJSON_CreateNull() : cJSON_CreateNumber(a)) |
              put(o, "b", isnan(b) ? cJSON_CreateNull() : cJSON_CreateNumber(b));
    if (!isnan(a) && !isnan(b)) {
        bad |= put(o, "delta", cJSON_CreateNumber(b - a));
        bad |= put(o, "ratio", a != 0 ? cJSON_CreateNumber(b / a)
                                      : cJSON_CreateNull());
    }
    return bad;
}

static cJSON *new_entry(cJSON *arr, const char *key_name, const char *key)
{
    cJSON *e = cJSON_CreateObject();

    if (!e || !cJSON_AddItemToArray(arr, e)) {
        cJSON_Delete(e);
        return NULL;
    }
    if (put_str(e, key_name, key))
        return NULL;
    return e;
}

static int cmp_str(const void *x, const void *y)
{
    return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The keys of objects a and b, sorted, each once; NULL on out of memory
 * (*n = 0 and a non-NULL result for none). */
static const char **union_keys(const cJSON *a, const cJSON *b, size_t *n)
{
    size_t cap = (size_t)cJSON_GetArraySize(a) + (size_t)cJSON_GetArraySize(b);
    const char **k = malloc((cap ? cap : 1) * sizeof *k);
    const cJSON *it;
    size_t i, m = 0;

    *n = 0;
    if (!k)
        return NULL;
    cJSON_ArrayForEach(it, a) if (it->string) k[m++] = it->string;
    cJSON_ArrayForEach(it, b) if (it->string) k[m++] = it->string;
    qsort(k, m, sizeof *k, cmp_str);
    for (i = 0; i < m; i++)
        if (!*n || strcmp(k[*n - 1], k[i]))
            k[(*n)++] = k[i];
    return k;
}

static int ignored(const diff_opts *o, const char *key)
{
    size_t i;

    for (i = 0; i < o->nignore; i++)
        if (fnmatch(o->ignore[i], key, 0) == 0)
            return 1;
    return 0;
}

/* config: every key added, removed or changed, by key, but those o
 * ignores (counted in config_ignored when they differ). */
static int diff_config(cJSON *out, const cJSON *a, const cJSON *b,
                       const diff_opts *o)
{
    cJSON *arr = cJSON_CreateArray();
    size_t n, i, nign = 0;
    const char **keys;
    int bad = put(out, "config", arr);

    if (bad || !(keys = union_keys(a, b, &n)))
        return -1;
    for (i = 0; !bad && i < n; i++) {
        cJSON *va = cJSON_GetObjectItemCaseSensitive(a, keys[i]);
        cJSON *vb = cJSON_GetObjectItemCaseSensitive(b, keys[i]);
        cJSON *e;
        if (va && vb && cJSON_Compare(va, vb, 1))
            continue;
        if (ignored(o, keys[i])) {
            nign++;
            continue;
        }
        if (!(e = new_entry(arr, "key", keys[i]))) {
            bad = -1;
            break;
        }
        bad |= put_str(e, "change", !va ? "added" : !vb ? "removed" : "changed");
        bad |= put(e, "a", va ? cJSON_Duplicate(va, 1) : cJSON_CreateNull());
        bad |= put(e, "b", vb ? cJSON_Duplicate(vb, 1) : cJSON_CreateNull());
    }
    free(keys);
    return bad || put(out, "config_ignored", cJSON_CreateNumber((double)nign));
}

/* metrics: the numeric run metrics that differ, by key. */
static int diff_metrics(cJSON *out, const cJSON *a, const cJSON *b)
{
    cJSON *arr = cJSON_CreateArray();
    size_t n, i;
    const char **keys;
    int bad = put(out, "metrics", arr);

    if (bad || !(keys = union_keys(a, b, &n)))
        return -1;
    for (i = 0; !bad && i < n; i++) {
        double va = num_or_nan(a, keys[i]), vb = num_or_nan(b, keys[i]);
        cJSON *e;
        if ((isnan(va) && isnan(vb)) || va == vb)
            continue;
        if (!(e = new_entry(arr, "key", keys[i])))
            bad = -1;
        else
            bad |= put_pair(e, va, vb);
    }
    free(keys);
    return bad;
}

/* Σ parallelism of a run's nodes, NAN when no node has one. */
static double parallelism_total(const cJSON *run)
{
    const cJSON *n;
    double sum = NAN;

    cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(run, "nodes")) {
        double p = num_or_nan(n, "parallelism");
        if (!isnan(p))
            sum = isnan(sum) ? p : sum + p;
    }
    return sum;
}

static int diff_resources(cJSON *out, const cJSON *a, const cJSON *b)
{
    const cJSON *ma = cJSON_GetObjectItemCaseSensitive(a, "metrics");
    const cJSON *mb = cJSON_GetObjectItemCaseSensitive(b, "metrics");
    cJSON *arr = cJSON_CreateArray(), *e;
    size_t i;
    double pa, pb;
    int bad = put(out, "resources", arr);

    for (i = 0; !bad && i < sizeof resource_metrics / sizeof *resource_metrics; i++) {
        double va = num_or_nan(ma, resource_metrics[i]);
        double vb = num_or_nan(mb, resource_metrics[i]);
        if (isnan(va) && isnan(vb))
            continue;
        if (!(e = new_entry(arr, "name", resource_metrics[i])))
            return -1;
        bad |= put_pair(e, va, vb);
    }
    pa = parallelism_total(a);
    pb = parallelism_total(b);
    if (!bad && (!isnan(pa) || !isnan(pb))) {
        if (!(e = new_entry(arr, "name", "parallelism_total")))
            return -1;
        bad |= put_pair(e, pa, pb);
    }
    return bad;
}

/* ---- nodes -------------------------------------------------------------------- */

typedef struct nref {
    const cJSON *node;
    const char *kind, *name;
    size_t pos;
    char key[DIFF_KEY_MAX];
    const struct nref *peer; /* the matching node of the other run */
} nref;

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int cmp_kind_name(const void *x, const void *y)
{
    const nref *a = x, *b = y;
    int c = strcmp(a->kind, b->kind);

    if (!c)
        c = strcmp(a->name, b->name);
    return c ? c : a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int cmp_key(const void *x, const void *y)
{
    return strcmp(((const nref *)x)->key, ((const nref *)y)->key);
}

/* The nodes of run with their identities, sorted by identity; NULL on out
 * of memory. */
static nref *node_refs(const cJSON *run, size_t *n)
{
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(run, "nodes"), *it;
    size_t cap = (size_t)cJSON_GetArraySize(nodes), i, k = 0;
    nref *r = calloc(cap ? cap : 1, sizeof *r);

    *n = 0;
    if (!r)
        return NULL;
    cJSON_ArrayForEach(it, nodes) {
        nref *e = &r[*n];
        e->node = it;
        e->kind = str_of(it, "kind") ? str_of(it, "kind") : "node";
        e->name = str_of(it, "name") ? str_of(it, "name")
                  : str_of(it, "id") ? str_of(it, "id") : "";
        e->pos = (*n)++;
    }
    qsort(r, *n, sizeof *r, cmp_kind_name);
    for (i = 0; i < *n; i++) {
        k = i && !strcmp(r[i].kind, r[i - 1].kind) &&
            !strcmp(r[i].name, r[i - 1].name) ? k + 1 : 1;
        diff_node_key(r[i].key, sizeof r[i].key, r[i].kind, r[i].name,
                      (unsigned)k);
    }
    qsort(r, *n, sizeof *r, cmp_key);
    return r;
}

typedef struct nchange {
    const nref *a, *b; /* either may be NULL */
    double da, db, delta;
    double pa, pb; /* parallelism, NAN when unknown */
} nchange;

static int cmp_change(const void *x, const void *y)
{
    const nchange *a = x, *b = y;
    double fa = fabs(a->delta), fb = fabs(b->delta);

    if (fa != fb)
        return fa > fb ? -1 : 1;
    return strcmp((a->a ? a->a : a->b)->key, (b->a ? b->a : b->b)->key);
}

static double node_ms(const nref *r)
{
    return r ? num_or_nan(r->node, "duration_ms") : NAN;
}

static int change_json(cJSON *arr, const nchange *c, double run_delta)
{
    const nref *r = c->b ? c->b : c->a;
    cJSON *e = new_entry(arr, "key", r->key);
    int bad = !e;

    if (bad)
        return -1;
    bad |= put_str(e, "kind", r->kind) | put_str(e, "name", r->name);
    bad |= put_str(e, "change", !c->a ? "added" : !c->b ? "removed" : "matched");
    bad |= put(e, "a_id", c->a && str_of(c->a->node, "id")
                   ? cJSON_CreateString(str_of(c->a->node, "id")) : cJSON_CreateNull());
    bad |= put(e, "b_id", c->b && str_of(c->b->node, "id")
                   ? cJSON_CreateString(str_of(c->b->node, "id")) : cJSON_CreateNull());
    bad |= put_pair(e, c->da, c->db);
    if (!isnan(c->pa) || !isnan(c->pb)) {
        cJSON *p = cJSON_CreateObject();
        bad |= put(e, "parallelism", p);
        bad = bad || put_pair(p, c->pa, c->pb);
    }
    /* only a change in the run's direction explains part of it */
    if (!isnan(run_delta) && c->delta * run_delta > 0)
        bad |= put(e, "share", cJSON_CreateNumber(c->delta / run_delta));
    return bad;
}

/* nodes: the top changes by |duration delta|; a node of one run only
 * counts with its whole duration; a node whose duration did not change is
 * listed only when its parallelism did (streaming vertices have no
 * duration). Counts go into "node_counts". */
static int diff_nodes(cJSON *out, const cJSON *a, const cJSON *b, size_t top,
                      double run_delta)
{
    size_t na, nb, i, nc = 0, matched = 0;
    nref *ra = node_refs(a, &na), *rb = node_refs(b, &nb);
    nchange *ch = ra && rb ? calloc(na + nb + 1, sizeof *ch) : NULL;
    cJSON *arr = cJSON_CreateArray(), *cnt = cJSON_CreateObject();
    int bad = put(out, "nodes", arr) | put(out, "node_counts", cnt);

    if (!ch)
        bad = -1;
    for (i = 0; !bad && i < na; i++) {
        nref *p = bsearch(&ra[i], rb, nb, sizeof *rb, cmp_key);
        nchange *c = &ch[nc++];
        c->a = &ra[i];
        if (p) {
            p->peer = &ra[i];
            c->b = p;
            matched++;
        }
    }
    for (i = 0; !bad && i < nb; i++)
        if (!rb[i].peer)
            ch[nc++].b = &rb[i];
    for (i = 0; !bad && i < nc; i++) {
        nchange *c = &ch[i];
        c->da = node_ms(c->a);
        c->db = node_ms(c->b);
        c->delta = (isnan(c->db) ? 0 : c->db) - (isnan(c->da) ? 0 : c->da);
        c->pa = c->a ? num_or_nan(c->a->node, "parallelism") : NAN;
        c->pb = c->b ? num_or_nan(c->b->node, "parallelism") : NAN;
    }
    if (!bad) {
        qsort(ch, nc, sizeof *ch, cmp_change);
        for (i = 0; !bad && i < nc && i < top; i++)
            if (ch[i].delta != 0 || !ch[i].a || !ch[i].b ||
                !(ch[i].pa == ch[i].pb || (isnan(ch[i].pa) && isnan(ch[i].pb))))
                bad |= change_json(arr, &ch[i], run_delta);
        bad |= put(cnt, "a", cJSON_CreateNumber((double)na)) |
               put(cnt, "b", cJSON_CreateNumber((double)nb)) |
               put(cnt, "matched", cJSON_CreateNumber((double)matched)) |
               put(cnt, "removed", cJSON_CreateNumber((double)(na - matched))) |
               put(cnt, "added", cJSON_CreateNumber((double)(nb - matched)));
    }
    free(ch);
    free(ra);
    free(rb);
    return bad;
}

/* ---- the whole diff ----------------------------------------------------------- */

static int side_json(cJSON *out, const char *key, const cJSON *r,
                     const char *label)
{
    static const char *const strs[] = {"source", "job", "id", "name", "status",
                                       "engine_version", "origin"};
    cJSON *s = cJSON_CreateObject();
    size_t i;
    int bad = put(out, key, s) | put_str(s, "ref", label);
    double v;

    for (i = 0; !bad && i < sizeof strs / sizeof *strs; i++)
        bad |= put_str(s, strs[i], str_of(r, strs[i]));
    if (!bad && !isnan(v = num_or_nan(r, "started_at")))
        bad |= put(s, "started_at", cJSON_CreateNumber(v));
    if (!bad && !isnan(v = num_or_nan(r, "duration_ms")))
        bad |= put(s, "duration_ms", cJSON_CreateNumber(v));
    return bad;
}

static int same_str(const cJSON *a, const cJSON *b, const char *key)
{
    const char *x = str_of(a, key), *y = str_of(b, key);
    return x && y && !strcmp(x, y);
}

int diff_runs(const cJSON *a, const char *la, const cJSON *b,
              const char *lb, const diff_opts *opts, cJSON **out,
              op_error *err)
{
    static const diff_opts none = {0, NULL, 0};
    cJSON *o, *e;
    const char *va, *vb;
    double da, db;
    int bad;

    if (!opts)
        opts = &none;
    if (!cJSON_IsObject(a) || !cJSON_IsObject(b))
        return op_error_set(err, OP_EUSAGE, "diff: a side is not a run object");
    if (!(o = cJSON_CreateObject()))
        return op_error_set(err, OP_ENOMEM, "diff: out of memory");
    va = str_of(a, "engine_version");
    vb = str_of(b, "engine_version");
    da = num_or_nan(a, "duration_ms");
    db = num_or_nan(b, "duration_ms");
    bad = side_json(o, "a", a, la) | side_json(o, "b", b, lb) |
          put(o, "same_job", cJSON_CreateBool(same_str(a, b, "job") &&
                                               same_str(a, b, "source")));
    if (!bad && (e = cJSON_CreateObject()) && !put(o, "engine_version", e)) {
        bad |= put(e, "a", va ? cJSON_CreateString(va) : cJSON_CreateNull());
        bad |= put(e, "b", vb ? cJSON_CreateString(vb) : cJSON_CreateNull());
        bad |= put(e, "changed", cJSON_CreateBool(
                       (va == NULL) != (vb == NULL) || (va && strcmp(va, vb))));
    } else {
        bad = -1;
    }
    if (!bad && (e = cJSON_CreateObject()) && !put(o, "duration_ms", e))
        bad |= put_pair(e, da, db);
    else
        bad = -1;
    bad = bad || diff_config(o, cJSON_GetObjectItemCaseSensitive(a, "config"),
                             cJSON_GetObjectItemCaseSensitive(b, "config"), opts);
    bad = bad || diff_resources(o, a, b);
    bad = bad || diff_metrics(o, cJSON_GetObjectItemCaseSensitive(a, "metrics"),
                              cJSON_GetObjectItemCaseSensitive(b, "metrics"));
    bad = bad || diff_nodes(o, a, b, opts->top ? opts->top : DIFF_TOP_DEFAULT,
                            isnan(da) || isnan(db) ? NAN : db - da);
    bad = bad || diff_findings(o, a, b);
    if (bad) {
        cJSON_Delete(o);
        return op_error_set(err, OP_ENOMEM, "diff: out of memory");
    }
    *out = o;
    return 0;
}

/* ---- a stored run (JOB@latest, JOB@previous, JOB@best, a run id) -------------------------------------------------------------- */

typedef struct found {
    store *s;
    cJSON *run;
    double best_ms; /* JOB@best: the fastest so far */
    int best;
    int failed;     /* out of memory or a store error (in err) */
    op_error *err;
} found;

static int add_node(void *ud, const store_node *n)
{
    cJSON *arr = ud, *o = cJSON_CreateObject();
    int bad = !o || !cJSON_AddItemToArray(arr, o);

    if (bad) {
        cJSON_Delete(o);
        return 1;
    }
    if (n->id) bad |= !cJSON_AddStringToObject(o, "id", n->id);
    if (n->kind) bad |= !cJSON_AddStringToObject(o, "kind", n->kind);
    if (n->name) bad |= !cJSON_AddStringToObject(o, "name", n->name);
    if (n->status) bad |= !cJSON_AddStringToObject(o, "status", n->status);
    if (n->set & MSET_DURATION_MS)
        bad |= !cJSON_AddNumberToObject(o, "duration_ms", (double)n->duration_ms);
    if (n->set & MSET_PARALLELISM)
        bad |= !cJSON_AddNumberToObject(o, "parallelism", (double)n->parallelism);
    return bad;
}

/* A stored JSON column (written by optipipe) as an object; an unreadable
 * one is an empty object, the store already checked its size. */
static int add_json(cJSON *o, const char *key, const char *text)
{
    cJSON *v = text ? cJSON_Parse(text) : NULL;

    if (!cJSON_IsObject(v)) {
        cJSON_Delete(v);
        v = cJSON_CreateObject();
    }
    if (!v || !cJSON_AddItemToObject(o, key, v)) {
        cJSON_Delete(v);
        return 1;
    }
    return 0;
}

static int add_finding(void *ud, const store_finding *f)
{
    diff_finding_in in;

    memset(&in, 0, sizeof in);
    in.fingerprint = f->fingerprint;
    in.legacy_fp = f->legacy_fp;
    in.rule = f->rule;
    in.severity = f->severity;
    in.node = f->node;
    in.message = f->message;
    in.evidence_json = f->evidence_json;
    return diff_finding_add(ud, &in) ? 1 : 0;
}

/* The stored run r in the shape diff_run_json writes, with its findings
 * (diff_run_findings'). */
static int stored_json(found *fd, const store_run *r, cJSON **out)
{
    cJSON *o = cJSON_CreateObject(), *nodes = cJSON_CreateArray(), *fs;
    const char *strs[][2] = {{"source", r->source}, {"id", r->run_id},
        {"job", r->job}, {"name", r->name}, {"status", r->status},
        {"engine_version", r->engine_version}, {"origin", r->origin}};
    size_t i;
    int bad = !o || !nodes;

    for (i = 0; !bad && i < sizeof strs / sizeof *strs; i++)
        if (strs[i][1])
            bad |= !cJSON_AddStringToObject(o, strs[i][0], strs[i][1]);
    if (!bad && (r->set & MSET_STARTED_AT))
        bad |= !cJSON_AddNumberToObject(o, "started_at", (double)r->started_at);
    if (!bad && (r->set & MSET_DURATION_MS))
        bad |= !cJSON_AddNumberToObject(o, "duration_ms", (double)r->duration_ms);
    bad = bad || add_json(o, "config", r->config_json) ||
          add_json(o, "metrics", r->metrics_json);
    if (!bad && !cJSON_AddItemToObject(o, "nodes", nodes))
        bad = 1;
    else if (!bad)
        nodes = NULL; /* o owns it */
    if (!bad && store_each_node(fd->s, r->pk, add_node,
                                cJSON_GetObjectItemCaseSensitive(o, "nodes"),
                                fd->err))
        bad = 1;
    if (!bad && (!(fs = cJSON_AddArrayToObject(o, "findings")) ||
                 store_each_finding(fd->s, r->pk, add_finding, fs, fd->err)))
        bad = 1;
    cJSON_Delete(nodes);
    if (bad) {
        cJSON_Delete(o);
        if (!fd->err->msg[0])
            op_error_set(fd->err, OP_ENOMEM, "diff: out of memory");
        return 1;
    }
    *out = o;
    return 0;
}

static int take_run(void *ud, const store_run *r)
{
    found *fd = ud;
    cJSON *o;

    if (fd->best && (!r->status || strcmp(r->status, "succeeded") ||
                     !(r->set & MSET_DURATION_MS) ||
                     (fd->run && (double)r->duration_ms >= fd->best_ms)))
        return 0;
    if (stored_json(fd, r, &o)) {
        fd->failed = 1;
        return 1;
    }
    cJSON_Delete(fd->run);
    fd->run = o;
    fd->best_ms = (double)r->duration_ms;
    return fd->best ? 0 : 1; /* one run, unless looking for the best */
}

int diff_stored_run(store *st, const char *ref, cJSON **out, op_error *err)
{
    size_t n = strlen(ref);
    found fd;
    int rc;

    memset(&fd, 0, sizeof fd);
    fd.s = st;
    fd.err = err;
    if (n > 5 && !strcmp(ref + n - 5, "@best")) {
        char job[4096];
        snprintf(job, sizeof job, "%.*s", (int)(n - 5), ref);
        fd.best = 1;
        rc = store_each_run(st, job, NULL, NULL, 0, STORE_HISTORY_MAX, take_run,
                            &fd, err);
    } else {
        rc = store_find_run(st, ref, take_run, &fd, err);
    }
    if (fd.failed || (rc && rc != 1)) {
        cJSON_Delete(fd.run);
        return err->code ? err->code : OP_EIO;
    }
    if (!fd.run)
        return op_error_set(err, OP_ENOTFOUND, "%s: no stored run '%s' (a "
                            "stored run is JOB@latest, JOB@previous, JOB@best "
                            "or a run id; `optipipe history jobs` lists the "
                            "jobs)", store_path(st), ref);
    *out = fd.run;
    return 0;
}
