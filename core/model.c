/*
 * model.c - the metrics model and the builder plugins fill it through.
 *
 * Everything lives in the model's arena. Arrays grow inside the arena,
 * by half again from 16 elements on (doubling while small), and hand their
 * old copy back to the arena for the next array to reuse (arena_grow), so
 * a node's maps cost about their final size, not three times it. Map keys
 * are interned: the hundred-odd metric names of a Spark log are stored
 * once, not once per stage. Out of memory sets a sticky flag that the builder reports
 * once; later calls become no-ops, so plugins need no check per call.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"
#include "map_packs.h"

/* Refusals beyond this many per input are counted, not described. */
#define REFUSAL_NOTES_MAX 16
#define REFUSAL_ID_SHOWN 80 /* bytes of a refused id shown in a message */

typedef struct mbuilder {
    op_builder base; /* first: plugins see an op_builder */
    model *m;
    const char *origin;
    const char *plugin; /* selects the plugin_slot */
    char *notes[REFUSAL_NOTES_MAX]; /* refused ids, described (malloc) */
    size_t nnotes, nrefused;        /* nrefused counts every refusal */
} mbuilder;

/* ---- growth helpers ---------------------------------------------------- */

/* The capacity after cap: 1 first (many a node's map holds one or two
 * entries), doubling to 16, then half again (what an array costs over
 * its final size stays under a half). */
static size_t next_cap(size_t cap)
{
    if (cap < 1)
        return 1;
    if (cap < 16)
        return cap * 2;
    return cap > SIZE_MAX / 3 ? SIZE_MAX : cap + cap / 2;
}

/* Makes room for one more element in *items (elem bytes each). */
static int grow(model *m, void **items, size_t n, size_t *cap, size_t elem)
{
    size_t ncap;
    void *p;

    if (n < *cap)
        return 0;
    /* In place, one element at a time: the array then ends at its final
     * size (a stage's metrics are set one after another). */
    if (*cap && *cap <= SIZE_MAX / elem - 1 &&
        arena_extend(m->a, *items, *cap * elem, (*cap + 1) * elem) == 0) {
        *cap += 1;
        return 0;
    }
    ncap = next_cap(*cap);
    if (ncap > SIZE_MAX / elem)
        goto oom;
    p = arena_grow(m->a, *cap ? *items : NULL, *cap * elem, ncap * elem);
    if (!p)
        goto oom;
    *items = p;
    *cap = ncap;
    return 0;
oom:
    m->failed = 1;
    return -1;
}

static const char *dup(model *m, const char *s)
{
    char *d;

    if (!s)
        return NULL;
    d = arena_strdup(m->a, s);
    if (!d)
        m->failed = 1;
    return d;
}

static int writable(const model *m)
{
    return !m->frozen && !m->failed;
}

/* ---- hashed indexes ------------------------------------------------------ */

/* Small maps are searched linearly; from this size on a hash of indexes
 * keeps inserting k keys linear in k (Spark runs carry hundreds of
 * properties, Flink exports thousands of config keys). */
#define HIDX_FROM 48 /* interned keys: a scan compares pointers */

static uint64_t hash_bytes(uint64_t h, const char *s)
{
    while (*s) {
        h ^= (unsigned char)*s++;
        h *= 1099511628211ull;
    }
    return h;
}

#define HASH_SEED 1469598103934665603ull /* FNV-1a offset basis */

/* Rebuilds an index of n entries with room for twice as many. key_of(i)
 * hashes entry i. Returns 0, or -1 (out of memory: the caller falls back
 * to linear search, which stays correct). */
static int hidx_rebuild(model *m, uint32_t **idx, size_t *cap, size_t n,
                        uint64_t (*hash_of)(const void *, size_t),
                        const void *items)
{
    size_t ncap = 64, i;
    uint32_t *t;

    while (ncap < n * 2 + 2)
        ncap *= 2;
    if (n >= UINT32_MAX || ncap > SIZE_MAX / sizeof *t)
        return -1;
    t = arena_alloc(m->a, ncap * sizeof *t);
    if (!t)
        return -1;
    for (i = 0; i < n; i++) {
        size_t h = hash_of(items, i) & (ncap - 1);
        while (t[h])
            h = (h + 1) & (ncap - 1);
        t[h] = (uint32_t)i + 1;
    }
    arena_release(m->a, *idx, *cap * sizeof **idx);
    *idx = t;
    *cap = ncap;
    return 0;
}

/* ---- maps -------------------------------------------------------------- */

static uint64_t mentry_hash(const void *items, size_t i)
{
    return hash_bytes(HASH_SEED, mentry_key(&((const mentry *)items)[i]));
}

/* The model's one copy of the string s (keys of maps and names of
 * distributions), or NULL on out of memory. */
static const char *intern(model *m, const char *s)
{
    uint64_t hv = hash_bytes(HASH_SEED, s);
    size_t h, i;

    if (m->nkeys * 2 + 2 > m->keys_cap) {
        size_t ncap = m->keys_cap ? m->keys_cap * 2 : 256;
        const char **t;

        if (ncap > SIZE_MAX / sizeof *t)
            goto oom;
        t = arena_alloc(m->a, ncap * sizeof *t);
        if (!t)
            goto oom;
        for (i = 0; i < m->keys_cap; i++)
            if (m->keys[i]) {
                h = hash_bytes(HASH_SEED, m->keys[i]) & (ncap - 1);
                while (t[h])
                    h = (h + 1) & (ncap - 1);
                t[h] = m->keys[i];
            }
        arena_release(m->a, (void *)m->keys, m->keys_cap * sizeof *t);
        m->keys = t;
        m->keys_cap = ncap;
    }
    for (h = hv & (m->keys_cap - 1); m->keys[h]; h = (h + 1) & (m->keys_cap - 1))
        if (strcmp(m->keys[h], s) == 0)
            return m->keys[h];
    m->keys[h] = arena_keydup(m->a, s); /* 4-aligned: see mentry */
    if (!m->keys[h])
        m->failed = 1;
    if (!m->keys[h])
        return NULL;
    m->nkeys++;
    return m->keys[h];
oom:
    m->failed = 1;
    return NULL;
}

/* The entry of key in map, where key is interned (intern()): while a map
 * is built its keys are the interned copies, so a pointer compares them. */
static mentry *mmap_lookup(const mmap *map, const char *key)
{
    size_t i, h;

    if (!map->hidx) {
        for (i = 0; i < map->n; i++)
            if (mentry_key(&map->items[i]) == key)
                return &map->items[i];
        return NULL;
    }
    h = hash_bytes(HASH_SEED, key) & (map->hcap - 1);
    for (; map->hidx[h]; h = (h + 1) & (map->hcap - 1))
        if (mentry_key(&map->items[map->hidx[h] - 1]) == key)
            return &map->items[map->hidx[h] - 1];
    return NULL;
}

static mentry *mmap_slot(model *m, mmap *map, const char *name)
{
    const char *key = intern(m, name);
    mentry *e;

    if (!key)
        return NULL;
    e = mmap_lookup(map, key);
    if (e)
        return e;
    if (grow(m, (void **)&map->items, map->n, &map->cap, sizeof(mentry)))
        return NULL;
    e = &map->items[map->n];
    e->tkey = (uintptr_t)key;
    map->n++;
    if (map->n >= HIDX_FROM && map->n * 2 + 2 > map->hcap &&
        hidx_rebuild(m, &map->hidx, &map->hcap, map->n, mentry_hash,
                     map->items)) {
        map->hidx = NULL;
        map->hcap = 0;
    } else if (map->hidx && map->n * 2 + 2 <= map->hcap) {
        size_t h = mentry_hash(map->items, map->n - 1) & (map->hcap - 1);
        while (map->hidx[h])
            h = (h + 1) & (map->hcap - 1);
        map->hidx[h] = (uint32_t)map->n;
    }
    return e;
}

static void mmap_set(model *m, mmap *map, const char *key, mvalue v)
{
    mentry *e;

    if (!key || !writable(m))
        return;
    if (v.t == MV_STR) {
        v.u.s = dup(m, v.u.s ? v.u.s : "");
        if (!v.u.s)
            return;
    }
    e = mmap_slot(m, map, key);
    if (e) {
        e->tkey = (uintptr_t)mentry_key(e) | (uintptr_t)v.t;
        e->u = v.u;
    }
}

static mvalue mv_num(double n)
{
    mvalue v = {.t = MV_NUM};
    v.u.n = n;
    return v;
}

static mvalue mv_int(int64_t i)
{
    mvalue v = {.t = MV_INT};
    v.u.i = i;
    return v;
}

static mvalue mv_str(const char *s)
{
    mvalue v = {.t = MV_STR};
    v.u.s = s;
    return v;
}

static mvalue mv_bool(int b)
{
    mvalue v = {.t = MV_BOOL};
    v.u.b = b != 0;
    return v;
}

static int mentry_cmp(const void *a, const void *b)
{
    return strcmp(mentry_key(a), mentry_key(b));
}

static void mmap_sort(mmap *map)
{
    map->hidx = NULL; /* frozen maps are bisected instead */
    map->hcap = 0;
    if (map->n > 1)
        qsort(map->items, map->n, sizeof(mentry), mentry_cmp);
}

const mentry *mmap_get(const mmap *map, const char *key)
{
    size_t lo = 0, hi = map->n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(mentry_key(&map->items[mid]), key);
        if (c == 0)
            return &map->items[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- refused ids ------------------------------------------------------- */

static void run_add_warning(model *m, struct op_run *r, const char *msg);

static int noted(const mbuilder *b, const char *msg)
{
    size_t i;

    for (i = 0; i < b->nnotes; i++)
        if (strcmp(b->notes[i], msg) == 0)
            return 1;
    return 0;
}

/* Keeps msg as a warning of the input. */
static void note(mbuilder *b, const char *msg)
{
    b->notes[b->nnotes] = strdup(msg);
    if (b->notes[b->nnotes])
        b->nnotes++;
    else
        b->m->failed = 1;
}

/* Whether id (of a run, a node or a parent: what) holds a control
 * character. Such an id could start a new line in any line-oriented
 * output (a patch, a terminal), so it is refused (docs/model.md): the
 * caller creates nothing, and the refusal becomes a warning of the input
 * and of run r when there is one, quoting the id with escapes. */
static int id_refused(mbuilder *b, struct op_run *r, const char *what,
                      const char *id)
{
    char shown[REFUSAL_ID_SHOWN * 4 + 8], msg[sizeof shown + 256];
    char full[sizeof msg + 2 * REFUSAL_ID_SHOWN + 16];
    uint32_t cp;
    long at = utf8_find_control(id, 0, &cp);

    if (at < 0)
        return 0;
    utf8_quote(shown, sizeof shown, id, REFUSAL_ID_SHOWN);
    snprintf(msg, sizeof msg,
             "%s %s: refused: the id has a control character (U+%04X at byte %ld)",
             what, shown, (unsigned)cp, at);
    if (r)
        snprintf(full, sizeof full, "run %.*s/%.*s: %s", REFUSAL_ID_SHOWN,
                 r->source, REFUSAL_ID_SHOWN, r->id, msg);
    else
        snprintf(full, sizeof full, "%s", msg);
    if (noted(b, full)) /* the plugin asked for the same id again */
        return 1;
    if (b->nrefused++ >= REFUSAL_NOTES_MAX)
        return 1;
    run_add_warning(b->m, r, msg);
    note(b, full);
    return 1;
}

/* ---- runs -------------------------------------------------------------- */

static uint64_t run_key_hash(const char *source, const char *id)
{
    return hash_bytes(hash_bytes(HASH_SEED, source) ^ 0xff, id);
}

static uint64_t run_hash(const void *items, size_t i)
{
    const struct op_run *r = ((struct op_run *const *)items)[i];
    return run_key_hash(r->source, r->id);
}

static struct op_run *run_find(model *m, const char *source, const char *id)
{
    size_t h;

    if (!m->run_hidx)
        return NULL;
    h = run_key_hash(source, id) & (m->run_hcap - 1);
    for (; m->run_hidx[h]; h = (h + 1) & (m->run_hcap - 1)) {
        struct op_run *r = m->runs[m->run_hidx[h] - 1];
        if (strcmp(r->source, source) == 0 && strcmp(r->id, id) == 0)
            return r;
    }
    return NULL;
}

/* Indexes the newest run; 0, or -1 when the index cannot grow. */
static int run_index(model *m)
{
    size_t h;

    if (m->nruns * 2 + 2 > m->run_hcap)
        return hidx_rebuild(m, &m->run_hidx, &m->run_hcap, m->nruns,
                            run_hash, m->runs);
    h = run_hash(m->runs, m->nruns - 1) & (m->run_hcap - 1);
    while (m->run_hidx[h])
        h = (h + 1) & (m->run_hcap - 1);
    m->run_hidx[h] = (uint32_t)m->nruns;
    return 0;
}

static void run_add_origin(model *m, struct op_run *r, const char *origin)
{
    size_t i;

    if (!origin)
        return;
    for (i = 0; i < r->norigins; i++)
        if (strcmp(r->origins[i], origin) == 0)
            return;
    if (grow(m, (void **)&r->origins, r->norigins, &r->origins_cap,
             sizeof(char *)))
        return;
    r->origins[r->norigins] = dup(m, origin);
    if (r->origins[r->norigins])
        r->norigins++;
}

static op_run *b_run(op_builder *ob, const char *source, const char *id)
{
    mbuilder *b = (mbuilder *)ob;
    model *m = b->m;
    struct op_run *r;

    if (!source || !id || !writable(m))
        return NULL;
    r = run_find(m, source, id);
    if (!r && (id_refused(b, NULL, "run source", source) ||
               id_refused(b, NULL, "run", id)))
        return NULL;
    if (!r) {
        if (grow(m, (void **)&m->runs, m->nruns, &m->runs_cap,
                 sizeof(struct op_run *)))
            return NULL;
        r = arena_alloc(m->a, sizeof *r);
        if (!r) {
            m->failed = 1;
            return NULL;
        }
        r->source = dup(m, source);
        r->id = dup(m, id);
        if (!r->source || !r->id)
            return NULL;
        r->index = m->nruns;
        m->runs[m->nruns++] = r;
        if (run_index(m)) {
            m->failed = 1;
            return NULL;
        }
    }
    run_add_origin(m, r, b->origin);
    return r;
}

static const char **str_field(struct op_run *r, struct op_node *n,
                              enum op_field f)
{
    if (r) {
        switch (f) {
        case OP_F_NAME: return &r->name;
        case OP_F_STATUS: return &r->status;
        case OP_F_RAW_STATUS: return &r->raw_status;
        case OP_F_ENGINE_VERSION: return &r->engine_version;
        default: return NULL;
        }
    }
    switch (f) {
    case OP_F_NAME: return &n->name;
    case OP_F_STATUS: return &n->status;
    case OP_F_RAW_STATUS: return &n->raw_status;
    case OP_F_KIND: return &n->kind;
    default: return NULL;
    }
}

static void b_run_str(op_builder *ob, op_run *r, enum op_field f,
                      const char *v)
{
    model *m = ((mbuilder *)ob)->m;
    const char **slot;

    if (!r || !writable(m))
        return;
    if (f == OP_F_ORIGIN) {
        run_add_origin(m, r, v);
        return;
    }
    slot = str_field(r, NULL, f);
    if (slot)
        *slot = dup(m, v);
}

/* Sets one of the optional integer fields shared by runs and nodes. */
static void set_ifield(unsigned *set, int64_t *started, int64_t *ended,
                       int64_t *dur, int64_t *par, int64_t *maxpar,
                       enum op_ifield f, int64_t v)
{
    switch (f) {
    case OP_I_STARTED_AT: *started = v; *set |= MSET_STARTED_AT; break;
    case OP_I_ENDED_AT: *ended = v; *set |= MSET_ENDED_AT; break;
    case OP_I_DURATION_MS: *dur = v; *set |= MSET_DURATION_MS; break;
    case OP_I_PARALLELISM:
        if (par) { *par = v; *set |= MSET_PARALLELISM; }
        break;
    case OP_I_MAX_PARALLELISM:
        if (maxpar) { *maxpar = v; *set |= MSET_MAX_PARALLELISM; }
        break;
    }
}

static void b_run_int(op_builder *ob, op_run *r, enum op_ifield f, int64_t v)
{
    if (!r || !writable(((mbuilder *)ob)->m))
        return;
    set_ifield(&r->set, &r->started_at, &r->ended_at, &r->duration_ms, NULL,
               NULL, f, v);
}

static void b_run_config(op_builder *ob, op_run *r, const char *key,
                         const char *value)
{
    if (r)
        mmap_set(((mbuilder *)ob)->m, &r->config, key, mv_str(value));
}

static void b_run_attr(op_builder *ob, op_run *r, const char *key,
                       const char *value)
{
    if (r)
        mmap_set(((mbuilder *)ob)->m, &r->attrs, key, mv_str(value));
}

static void b_run_metric(op_builder *ob, op_run *r, const char *name,
                         double v)
{
    if (r)
        mmap_set(((mbuilder *)ob)->m, &r->metrics, name, mv_num(v));
}

static void b_run_metric_int(op_builder *ob, op_run *r, const char *name,
                             int64_t v)
{
    if (r)
        mmap_set(((mbuilder *)ob)->m, &r->metrics, name, mv_int(v));
}

static void run_add_warning(model *m, struct op_run *r, const char *msg)
{
    const char *copy;

    if (!r || !msg || !writable(m))
        return;
    if (grow(m, (void **)&r->warnings, r->nwarnings, &r->warnings_cap,
             sizeof(char *)))
        return;
    copy = dup(m, msg);
    if (copy)
        r->warnings[r->nwarnings++] = copy;
}

static void b_run_warning(op_builder *ob, op_run *r, const char *msg)
{
    run_add_warning(((mbuilder *)ob)->m, r, msg);
}

/* ---- nodes ------------------------------------------------------------- */

static uint64_t hash_str(const char *s)
{
    return hash_bytes(HASH_SEED, s);
}

static int node_tab_grow(model *m, struct op_run *r)
{
    size_t cap = r->node_tab_cap ? r->node_tab_cap * 2 : 64, i;
    uint32_t *tab;

    if (cap > SIZE_MAX / sizeof *tab || r->nnodes >= UINT32_MAX)
        goto oom;
    tab = arena_alloc(m->a, cap * sizeof *tab);
    if (!tab)
        goto oom;
    for (i = 0; i < r->nnodes; i++) {
        size_t h = hash_str(r->nodes[i]->id) & (cap - 1);
        while (tab[h])
            h = (h + 1) & (cap - 1);
        tab[h] = (uint32_t)i + 1;
    }
    arena_release(m->a, r->node_tab, r->node_tab_cap * sizeof *tab);
    r->node_tab = tab;
    r->node_tab_cap = cap;
    return 0;
oom:
    m->failed = 1;
    return -1;
}

/* The slot of id in r's index: holding its node's index + 1, or 0 where
 * it would go. NULL when r has no index yet. */
static uint32_t *node_slot(const struct op_run *r, const char *id)
{
    size_t h;

    if (!r->node_tab_cap)
        return NULL;
    h = hash_str(id) & (r->node_tab_cap - 1);
    while (r->node_tab[h] && strcmp(r->nodes[r->node_tab[h] - 1]->id, id) != 0)
        h = (h + 1) & (r->node_tab_cap - 1);
    return &r->node_tab[h];
}

const struct op_node *model_find_node(const struct op_run *r, const char *id)
{
    uint32_t *slot;

    if (!r || !id)
        return NULL;
    slot = node_slot(r, id);
    return slot && *slot ? r->nodes[*slot - 1] : NULL;
}

static op_node *b_node(op_builder *ob, op_run *r, const char *id)
{
    model *m = ((mbuilder *)ob)->m;
    uint32_t *slot;
    struct op_node *n;

    if (!r || !id || !writable(m))
        return NULL;
    slot = node_slot(r, id);
    if (slot && *slot)
        return r->nodes[*slot - 1];
    if (id_refused((mbuilder *)ob, r, "node", id))
        return NULL;
    if (r->nnodes >= UINT32_MAX - 1) { /* the index holds index + 1 */
        m->failed = 1;
        return NULL;
    }
    /* keep the load factor under one half */
    if ((r->nnodes + 1) * 2 > r->node_tab_cap && node_tab_grow(m, r))
        return NULL;
    if (grow(m, (void **)&r->nodes, r->nnodes, &r->nodes_cap,
             sizeof(struct op_node *)))
        return NULL;
    n = arena_alloc(m->a, sizeof *n);
    if (!n) {
        m->failed = 1;
        return NULL;
    }
    n->id = dup(m, id);
    if (!n->id)
        return NULL;
    n->index = (uint32_t)r->nnodes;
    n->run = r;
    r->nodes[r->nnodes++] = n;
    *node_slot(r, id) = (uint32_t)r->nnodes;
    return n;
}

static void b_node_str(op_builder *ob, op_node *n, enum op_field f,
                       const char *v)
{
    model *m = ((mbuilder *)ob)->m;
    const char **slot;

    if (!n || !writable(m))
        return;
    slot = str_field(NULL, n, f);
    if (slot) /* kinds, statuses and most names repeat from node to node */
        *slot = v ? intern(m, v) : NULL;
}

static void b_node_int(op_builder *ob, op_node *n, enum op_ifield f,
                       int64_t v)
{
    if (!n || !writable(((mbuilder *)ob)->m))
        return;
    set_ifield(&n->set, &n->started_at, &n->ended_at, &n->duration_ms,
               &n->parallelism, &n->max_parallelism, f, v);
}

static void b_node_parent(op_builder *ob, op_node *n, const char *parent_id)
{
    model *m = ((mbuilder *)ob)->m;
    char what[REFUSAL_ID_SHOWN + 32];
    size_t i;
    const char *copy;

    if (!n || !parent_id || !writable(m))
        return;
    snprintf(what, sizeof what, "node %.*s: parent", REFUSAL_ID_SHOWN, n->id);
    if (id_refused((mbuilder *)ob, n->run, what, parent_id))
        return;
    for (i = 0; i < n->nparents; i++)
        if (strcmp(n->parents[i], parent_id) == 0)
            return;
    if (grow(m, (void **)&n->parents, n->nparents, &n->parents_cap,
             sizeof(char *)))
        return;
    copy = dup(m, parent_id);
    if (copy)
        n->parents[n->nparents++] = copy;
}

static void b_node_metric(op_builder *ob, op_node *n, const char *name,
                          double v)
{
    if (n)
        mmap_set(((mbuilder *)ob)->m, &n->metrics, name, mv_num(v));
}

static void b_node_metric_int(op_builder *ob, op_node *n, const char *name,
                              int64_t v)
{
    if (n)
        mmap_set(((mbuilder *)ob)->m, &n->metrics, name, mv_int(v));
}

static void b_node_attr(op_builder *ob, op_node *n, const char *key,
                        const char *value)
{
    if (n)
        mmap_set(((mbuilder *)ob)->m, &n->attrs, key, mv_str(value));
}

static void b_node_dist(op_builder *ob, op_node *n, const char *metric,
                        const op_dist *d)
{
    model *m = ((mbuilder *)ob)->m;
    size_t i;
    mdist *slot = NULL;

    if (!n || !metric || !d || !writable(m))
        return;
    metric = intern(m, metric);
    if (!metric)
        return;
    for (i = 0; i < n->ndists; i++)
        if (n->dists[i].metric == metric)
            slot = &n->dists[i];
    if (!slot) {
        if (grow(m, (void **)&n->dists, n->ndists, &n->dists_cap,
                 sizeof(mdist)))
            return;
        slot = &n->dists[n->ndists];
        slot->metric = metric;
        if (!slot->metric)
            return;
        n->ndists++;
    }
    slot->d = *d;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double quantile_sorted(const double *v, size_t n, double q)
{
    double pos = q * (double)(n - 1);
    size_t lo = (size_t)pos;
    double frac = pos - (double)lo;

    if (lo + 1 >= n)
        return v[n - 1];
    return v[lo] + (v[lo + 1] - v[lo]) * frac;
}

void model_dist_from_values(double *v, size_t n, op_dist *out)
{
    size_t i, k = 0;
    double sum = 0;

    memset(out, 0, sizeof *out);
    for (i = 0; i < n; i++)
        if (!isnan(v[i]))
            v[k++] = v[i];
    if (k == 0)
        return;
    qsort(v, k, sizeof *v, dbl_cmp);
    for (i = 0; i < k; i++)
        sum += v[i];
    out->count = (double)k;
    out->min = v[0];
    out->max = v[k - 1];
    out->sum = sum;
    out->mean = sum / (double)k;
    out->p50 = quantile_sorted(v, k, 0.50);
    out->p75 = quantile_sorted(v, k, 0.75);
    out->p90 = quantile_sorted(v, k, 0.90);
    out->p95 = quantile_sorted(v, k, 0.95);
    out->p99 = quantile_sorted(v, k, 0.99);
}

static void b_node_dist_values(op_builder *ob, op_node *n, const char *metric,
                               const double *v, size_t count)
{
    model *m = ((mbuilder *)ob)->m;
    double *copy;
    op_dist d;

    if (!n || !metric || (!v && count) || !writable(m))
        return;
    if (count > SIZE_MAX / sizeof *copy) {
        m->failed = 1;
        return;
    }
    copy = malloc(count ? count * sizeof *copy : 1);
    if (!copy) {
        m->failed = 1;
        return;
    }
    if (count)
        memcpy(copy, v, count * sizeof *copy);
    model_dist_from_values(copy, count, &d);
    free(copy);
    b_node_dist(ob, n, metric, &d);
}

/* ---- series ------------------------------------------------------------ */

static op_record *b_series_append(op_builder *ob, op_run *r,
                                  const char *series)
{
    model *m = ((mbuilder *)ob)->m;
    mseries *s = NULL;
    struct op_record *rec;
    size_t i;

    if (!r || !series || !writable(m))
        return NULL;
    for (i = 0; i < r->nseries; i++)
        if (strcmp(r->series[i].name, series) == 0)
            s = &r->series[i];
    if (!s) {
        if (grow(m, (void **)&r->series, r->nseries, &r->series_cap,
                 sizeof(mseries)))
            return NULL;
        s = &r->series[r->nseries];
        memset(s, 0, sizeof *s);
        s->name = dup(m, series);
        if (!s->name)
            return NULL;
        r->nseries++;
    }
    if (grow(m, (void **)&s->recs, s->n, &s->cap, sizeof(struct op_record *)))
        return NULL;
    rec = arena_alloc(m->a, sizeof *rec);
    if (!rec) {
        m->failed = 1;
        return NULL;
    }
    s->recs[s->n++] = rec;
    return rec;
}

static void b_record_num(op_builder *ob, op_record *rec, const char *key,
                         double v)
{
    if (rec)
        mmap_set(((mbuilder *)ob)->m, &rec->fields, key, mv_num(v));
}

static void b_record_int(op_builder *ob, op_record *rec, const char *key,
                         int64_t v)
{
    if (rec)
        mmap_set(((mbuilder *)ob)->m, &rec->fields, key, mv_int(v));
}

static void b_record_str(op_builder *ob, op_record *rec, const char *key,
                         const char *v)
{
    if (rec)
        mmap_set(((mbuilder *)ob)->m, &rec->fields, key, mv_str(v));
}

static void b_record_bool(op_builder *ob, op_record *rec, const char *key,
                          int v)
{
    if (rec)
        mmap_set(((mbuilder *)ob)->m, &rec->fields, key, mv_bool(v));
}

static int b_failed(op_builder *ob, op_error *err)
{
    if (!((mbuilder *)ob)->m->failed)
        return 0;
    op_error_set(err, OP_ENOMEM, "out of memory while building the model");
    return 1;
}

static void b_run_history(op_builder *ob, op_run *r, const char *key,
                          int64_t order)
{
    model *m = ((mbuilder *)ob)->m;

    if (!r || !key || !writable(m))
        return;
    r->history_key = dup(m, key);
    r->history_order = order;
}

static void b_run_job(op_builder *ob, op_run *r, const char *key)
{
    model *m = ((mbuilder *)ob)->m;

    if (!r || !key || !*key || !writable(m))
        return;
    r->job = dup(m, key);
}

const char *model_run_job(const struct op_run *r)
{
    return r->job ? r->job : r->history_key ? r->history_key
                                            : r->name ? r->name : r->id;
}

static void **b_plugin_slot(op_builder *ob)
{
    mbuilder *b = (mbuilder *)ob;
    model *m = b->m;
    const char *name = b->plugin ? b->plugin : "";
    size_t i;

    for (i = 0; i < m->nslots; i++)
        if (strcmp(m->slots[i].plugin, name) == 0)
            return &m->slots[i].state;
    if (m->nslots == MODEL_MAX_SLOTS)
        return NULL;
    m->slots[m->nslots].plugin = name;
    m->slots[m->nslots].state = NULL;
    return &m->slots[m->nslots++].state;
}

static op_run *b_run_find(op_builder *ob, const char *source, const char *id)
{
    if (!source || !id)
        return NULL;
    return run_find(((mbuilder *)ob)->m, source, id);
}

static int b_map_series(op_builder *ob, const struct op_series_ref *s,
                        struct op_map *out, op_error *err)
{
    return mapping_resolve(((mbuilder *)ob)->m->mappings, s, out, err);
}

static const struct op_builder_api builder_api = {
    .size = sizeof(struct op_builder_api),
    .run = b_run,
    .run_str = b_run_str,
    .run_int = b_run_int,
    .run_config = b_run_config,
    .run_metric = b_run_metric,
    .run_metric_int = b_run_metric_int,
    .run_warning = b_run_warning,
    .node = b_node,
    .node_str = b_node_str,
    .node_int = b_node_int,
    .node_parent = b_node_parent,
    .node_metric = b_node_metric,
    .node_metric_int = b_node_metric_int,
    .node_attr = b_node_attr,
    .node_dist = b_node_dist,
    .node_dist_values = b_node_dist_values,
    .series_append = b_series_append,
    .record_num = b_record_num,
    .record_int = b_record_int,
    .record_str = b_record_str,
    .record_bool = b_record_bool,
    .failed = b_failed,
    .run_history = b_run_history,
    .plugin_slot = b_plugin_slot,
    .run_find = b_run_find,
    .run_attr = b_run_attr,
    .run_job = b_run_job,
    .map_series = b_map_series,
};

/* ---- model lifecycle ------------------------------------------------------ */

model *model_new(void)
{
    model *m = calloc(1, sizeof *m);

    if (!m)
        return NULL;
    m->a = arena_new();
    if (!m->a) {
        free(m);
        return NULL;
    }
    return m;
}

void model_free(model *m)
{
    if (!m)
        return;
    arena_free(m->a);
    free(m);
}

op_builder *model_builder_new(model *m, const char *origin)
{
    mbuilder *b = calloc(1, sizeof *b);

    if (!b)
        return NULL;
    b->base.api = &builder_api;
    b->m = m;
    b->origin = dup(m, origin);
    return &b->base;
}

void model_builder_free(op_builder *ob)
{
    mbuilder *b = (mbuilder *)ob;
    size_t i;

    if (!b)
        return;
    for (i = 0; i < b->nnotes; i++)
        free(b->notes[i]);
    free(b);
}

const char *const *model_builder_refusals(const op_builder *ob, size_t *n,
                                          size_t *more)
{
    const mbuilder *b = (const mbuilder *)ob;

    *n = b->nnotes;
    *more = b->nrefused - b->nnotes;
    return (const char *const *)b->notes;
}

void model_builder_set_plugin(op_builder *b, const char *plugin)
{
    ((mbuilder *)b)->plugin = plugin;
}

void *model_plugin_state(const model *m, const char *plugin)
{
    size_t i;

    for (i = 0; i < m->nslots; i++)
        if (strcmp(m->slots[i].plugin, plugin) == 0)
            return m->slots[i].state;
    return NULL;
}

static int mdist_cmp(const void *a, const void *b)
{
    return strcmp(((const mdist *)a)->metric, ((const mdist *)b)->metric);
}

static int mseries_cmp(const void *a, const void *b)
{
    return strcmp(((const mseries *)a)->name, ((const mseries *)b)->name);
}

static void freeze_node(model *m, struct op_run *r, struct op_node *n)
{
    size_t i, k = 0;
    char msg[512];

    mmap_sort(&n->metrics);
    mmap_sort(&n->attrs);
    if (n->ndists > 1)
        qsort(n->dists, n->ndists, sizeof(mdist), mdist_cmp);
    /* A parent that names no node would make every graph walk guess. */
    for (i = 0; i < n->nparents; i++) {
        if (model_find_node(r, n->parents[i]) &&
            strcmp(n->parents[i], n->id) != 0) {
            n->parents[k++] = n->parents[i];
            continue;
        }
        snprintf(msg, sizeof msg, "node %s: parent %s is not a node of this run; dropped",
                 n->id, n->parents[i]);
        run_add_warning(m, r, msg);
    }
    n->nparents = k;
}

/* Derives every node's children from the (checked) parents. */
static void link_children(model *m, struct op_run *r)
{
    size_t i, j;

    for (i = 0; i < r->nnodes; i++)
        for (j = 0; j < r->nodes[i]->nparents; j++)
            ((struct op_node *)model_find_node(r, r->nodes[i]->parents[j]))
                ->nchildren++;
    for (i = 0; i < r->nnodes; i++) {
        struct op_node *n = r->nodes[i];
        if (!n->nchildren)
            continue;
        n->children = arena_alloc(m->a, n->nchildren * sizeof(char *));
        if (!n->children) {
            m->failed = 1;
            n->nchildren = 0;
            continue;
        }
        n->nchildren = 0; /* refilled below */
    }
    for (i = 0; i < r->nnodes; i++)
        for (j = 0; j < r->nodes[i]->nparents; j++) {
            struct op_node *p =
                (struct op_node *)model_find_node(r, r->nodes[i]->parents[j]);
            if (p->children)
                p->children[p->nchildren++] = r->nodes[i]->id;
        }
}

static int history_cmp(const void *a, const void *b)
{
    const struct op_run *x = *(struct op_run *const *)a;
    const struct op_run *y = *(struct op_run *const *)b;
    int c = strcmp(x->source, y->source);

    if (c)
        return c;
    if ((c = strcmp(x->history_key, y->history_key)))
        return c;
    if (x->history_order != y->history_order)
        return x->history_order < y->history_order ? -1 : 1;
    return x->index < y->index ? -1 : 1;
}

/* Groups runs by (source, history key); the newest of each group gets the
 * older ones as its history, and they are marked superseded. */
static void link_histories(model *m)
{
    struct op_run **v;
    size_t n = 0, i, j;

    for (i = 0; i < m->nruns; i++)
        n += m->runs[i]->history_key != NULL;
    if (n < 2)
        return;
    v = arena_alloc(m->a, n * sizeof *v);
    if (!v) {
        m->failed = 1;
        return;
    }
    for (i = 0, j = 0; i < m->nruns; i++)
        if (m->runs[i]->history_key)
            v[j++] = m->runs[i];
    qsort(v, n, sizeof *v, history_cmp);
    for (i = 0; i < n; i = j) {
        for (j = i + 1; j < n && strcmp(v[j]->source, v[i]->source) == 0 &&
                        strcmp(v[j]->history_key, v[i]->history_key) == 0;
             j++)
            v[j - 1]->superseded = 1;
        v[j - 1]->superseded = 0;
        v[j - 1]->history = &v[i];
        v[j - 1]->nhistory = j - 1 - i;
    }
}

void model_freeze(model *m)
{
    size_t i, j, k;

    if (m->frozen)
        return;
    link_histories(m);
    for (i = 0; i < m->nruns; i++) {
        struct op_run *r = m->runs[i];
        mmap_sort(&r->config);
        mmap_sort(&r->metrics);
        mmap_sort(&r->attrs);
        for (j = 0; j < r->nnodes; j++)
            freeze_node(m, r, r->nodes[j]);
        link_children(m, r);
        if (r->nseries > 1)
            qsort(r->series, r->nseries, sizeof(mseries), mseries_cmp);
        for (j = 0; j < r->nseries; j++)
            for (k = 0; k < r->series[j].n; k++)
                mmap_sort(&r->series[j].recs[k]->fields);
    }
    m->frozen = 1;
}

static int derive(model *m, mmap *map, const char *key, mvalue v)
{
    size_t lo = 0, hi = map->n;
    const char *k;

    if (!m->frozen || m->failed || !(k = intern(m, key)))
        return OP_ENOMEM;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(mentry_key(&map->items[mid]), k);
        if (c == 0) {
            map->items[mid].tkey = (uintptr_t)k | (uintptr_t)v.t;
            map->items[mid].u = v.u;
            return 0;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (grow(m, (void **)&map->items, map->n, &map->cap, sizeof(mentry)))
        return OP_ENOMEM;
    memmove(&map->items[lo + 1], &map->items[lo], (map->n - lo) * sizeof(mentry));
    map->items[lo].tkey = (uintptr_t)k | (uintptr_t)v.t;
    map->items[lo].u = v.u;
    map->n++;
    return 0;
}

int model_derive_num(model *m, mmap *map, const char *key, double v)
{
    return derive(m, map, key, mv_num(v));
}

int model_derive_str(model *m, mmap *map, const char *key, const char *s)
{
    const char *d = dup(m, s ? s : "");

    return d ? derive(m, map, key, mv_str(d)) : OP_ENOMEM;
}

const mseries *model_find_series(const struct op_run *r, const char *name)
{
    size_t i;

    for (i = 0; i < r->nseries; i++)
        if (strcmp(r->series[i].name, name) == 0)
            return &r->series[i];
    return NULL;
}
