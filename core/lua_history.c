/*
 * lua_history.c - ctx.history(run [, {limit = N}]) (docs/history.md): the
 * earlier runs of the run's job from the run store, newest first, as
 * read-only tables built under the sandbox memory cap.
 *
 * SQLite rows are first copied into cJSON (no Lua error may unwind
 * through SQLite), the store is closed, then the tables are built in a
 * protected call that frees the copy whatever happens. An entry's nodes
 * (and by_id) are loaded from the store on first access and held in a
 * weak cache: a rule walking 30 runs of 10 000 nodes holds one run's
 * nodes at a time unless it keeps them.
 */
#include "lua_history.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

#include "lua_model.h"
#include "sbx.h"
#include "store.h"

/* ---- rows into cJSON -------------------------------------------------------- */

/* The add_* helpers set *bad when memory ran out: a field is never
 * dropped silently (the whole ctx.history call then fails). */
static void add_str(int *bad, cJSON *o, const char *k, const char *v)
{
    if (v && !cJSON_AddStringToObject(o, k, v))
        *bad = 1;
}

static void add_int(int *bad, cJSON *o, const char *k, unsigned set,
                    unsigned bit, int64_t v)
{
    if ((set & bit) && !cJSON_AddNumberToObject(o, k, (double)v))
        *bad = 1;
}

/* A JSON column as a value of o (an empty object when unreadable). */
static void add_json(int *bad, cJSON *o, const char *k, const char *text,
                     int array)
{
    cJSON *v = text ? cJSON_Parse(text) : NULL;

    if (!v || (array ? !cJSON_IsArray(v) : !cJSON_IsObject(v))) {
        cJSON_Delete(v);
        v = array ? cJSON_CreateArray() : cJSON_CreateObject();
    }
    if (!v || !cJSON_AddItemToObject(o, k, v)) {
        cJSON_Delete(v);
        *bad = 1;
    }
}

typedef struct collect {
    cJSON *arr;
    const baseline *bl; /* the analysis' decisions: they win; may be NULL */
    int oom;
} collect;

static int finding_cb(void *ud, const store_finding *f)
{
    collect *c = ud;
    cJSON *o = cJSON_CreateObject();
    const decision *dec = c->bl ? baseline_decision_for(c->bl, f->fingerprint,
                                                        f->legacy_fp)
                                : NULL;
    const char *status = dec ? decision_status_name(dec->status) : f->decision;
    const char *comment = dec ? dec->reason : f->comment;
    int bad = 0;

    if (!o || !cJSON_AddItemToArray(c->arr, o))
        return cJSON_Delete(o), c->oom = 1;
    add_str(&bad, o, "rule", f->rule);
    add_str(&bad, o, "fingerprint", f->fingerprint);
    add_str(&bad, o, "node", f->node);
    add_str(&bad, o, "severity", f->severity);
    add_str(&bad, o, "message", f->message);
    add_json(&bad, o, "changes", f->changes_json, 1);
    if (f->evidence_json)
        add_json(&bad, o, "evidence", f->evidence_json, 0);
    if (f->impact_ms >= 0) {
        cJSON *imp = cJSON_AddObjectToObject(o, "impact");
        if (!imp || !cJSON_AddNumberToObject(imp, "time_saved_ms", f->impact_ms))
            bad = 1;
    }
    if (status) {
        cJSON *d = cJSON_AddObjectToObject(o, "decision");
        if (!d)
            bad = 1;
        else {
            add_str(&bad, d, "status", status);
            add_str(&bad, d, "comment", comment);
        }
    }
    return bad ? (c->oom = 1) : 0;
}

typedef struct runs_collect {
    collect c;
    store *s;
    op_error *err;
} runs_collect;

static int run_cb(void *ud, const store_run *r)
{
    runs_collect *rc = ud;
    cJSON *o = cJSON_CreateObject();
    collect fc;
    int bad = 0;

    if (!o || !cJSON_AddItemToArray(rc->c.arr, o))
        return cJSON_Delete(o), rc->c.oom = 1;
    add_str(&bad, o, "id", r->run_id);
    add_str(&bad, o, "job", r->job);
    add_str(&bad, o, "source", r->source);
    add_str(&bad, o, "name", r->name);
    add_str(&bad, o, "status", r->status);
    add_int(&bad, o, "started_at", r->set, MSET_STARTED_AT, r->started_at);
    add_int(&bad, o, "ended_at", r->set, MSET_ENDED_AT, r->ended_at);
    add_int(&bad, o, "duration_ms", r->set, MSET_DURATION_MS, r->duration_ms);
    add_str(&bad, o, "engine_version", r->engine_version);
    add_str(&bad, o, "origin", r->origin);
    add_str(&bad, o, "content_hash", r->content_hash);
    add_int(&bad, o, "recorded_at", ~0u, 1, r->recorded_at);
    add_json(&bad, o, "config", r->config_json, 0);
    add_json(&bad, o, "metrics", r->metrics_json, 0);
    add_json(&bad, o, "attrs", r->attrs_json, 0);
    if (bad || !cJSON_AddNumberToObject(o, "_pk", (double)r->pk))
        return rc->c.oom = 1;
    fc.arr = cJSON_AddArrayToObject(o, "findings");
    fc.bl = rc->c.bl;
    fc.oom = !fc.arr;
    if (!fc.oom && store_each_finding(rc->s, r->pk, finding_cb, &fc, rc->err))
        return 1;
    return fc.oom ? (rc->c.oom = 1) : 0;
}

/* One node row, its strings copied into mem (freed with it). */
typedef struct nrow {
    store_node n;
    char *mem;
} nrow;

typedef struct nrows {
    nrow *v;
    size_t n, cap;
    int oom;
} nrows;

static const char *keep(char **at, const char *s)
{
    char *d = *at;
    size_t len;

    if (!s)
        return NULL;
    len = strlen(s) + 1;
    memcpy(d, s, len);
    *at += len;
    return d;
}

static int node_cb(void *ud, const store_node *n)
{
    nrows *c = ud;
    const char *const f[] = {n->id, n->kind, n->name, n->status,
                             n->metrics_json, n->dist_json, n->attrs_json};
    size_t i, len = 0;
    nrow *r;
    char *at;

    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 256;
        nrow *p = realloc(c->v, ncap * sizeof *p);
        if (!p)
            return c->oom = 1;
        c->v = p;
        c->cap = ncap;
    }
    for (i = 0; i < sizeof f / sizeof f[0]; i++)
        len += f[i] ? strlen(f[i]) + 1 : 0;
    r = &c->v[c->n];
    r->n = *n;
    if (!(r->mem = at = malloc(len ? len : 1)))
        return c->oom = 1;
    r->n.id = keep(&at, n->id);
    r->n.kind = keep(&at, n->kind);
    r->n.name = keep(&at, n->name);
    r->n.status = keep(&at, n->status);
    r->n.metrics_json = keep(&at, n->metrics_json);
    r->n.dist_json = keep(&at, n->dist_json);
    r->n.attrs_json = keep(&at, n->attrs_json);
    c->n++;
    return 0;
}

static void nrows_free(nrows *c)
{
    size_t i;

    for (i = 0; i < c->n; i++)
        free(c->v[i].mem);
    free(c->v);
    memset(c, 0, sizeof *c);
}

/* ---- cJSON into read-only tables ---------------------------------------------- */

/* A whole number as an integer (as the model gives it), else a float. */
static void push_number(lua_State *L, double d)
{
    if (d > -9007199254740992.0 && d < 9007199254740992.0 &&
        d == (double)(lua_Integer)d)
        lua_pushinteger(L, (lua_Integer)d);
    else
        lua_pushnumber(L, d);
}

static void push_scalar(lua_State *L, const cJSON *v)
{
    if (cJSON_IsString(v))
        lua_pushstring(L, v->valuestring);
    else if (cJSON_IsBool(v))
        lua_pushboolean(L, cJSON_IsTrue(v));
    else if (cJSON_IsNumber(v))
        push_number(L, v->valuedouble);
    else
        lua_pushnil(L);
}

/* Pushes v as tables made read-only bottom-up. May raise (memory). */
static void push_ro(lua_State *L, const cJSON *v, int depth)
{
    const cJSON *it;
    lua_Integer n = 0;

    luaL_checkstack(L, 4, "ctx.history");
    if (depth > 16 || (!cJSON_IsObject(v) && !cJSON_IsArray(v))) {
        push_scalar(L, v);
        return;
    }
    lua_createtable(L, cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0,
                    cJSON_IsObject(v) ? cJSON_GetArraySize(v) : 0);
    cJSON_ArrayForEach(it, v) {
        if (depth == 1 && it->string && strcmp(it->string, "_pk") == 0)
            continue; /* host-private: the row key of an entry */
        push_ro(L, it, depth + 1);
        if (cJSON_IsArray(v))
            lua_rawseti(L, -2, ++n);
        else
            lua_setfield(L, -2, it->string);
    }
    sbx_readonly_fixed(L, n);
}

/* ---- lazily loaded nodes ---------------------------------------------------------- */

typedef struct push_job {
    const cJSON *doc;
} push_job;

static int push_step(lua_State *L)
{
    push_job *j = lua_touserdata(L, 1);

    push_ro(L, j->doc, 0);
    return 1;
}

/* Pushes doc read-only in a protected call, then frees doc; raises again
 * what building raised. */
static void push_owned(lua_State *L, cJSON *doc)
{
    push_job j = {doc};
    int st;

    lua_pushcfunction(L, push_step);
    lua_pushlightuserdata(L, &j);
    st = lua_pcall(L, 1, 1, 0);
    cJSON_Delete(doc);
    if (st != LUA_OK)
        lua_error(L);
}

/* Reads the nodes of run pk from the store at path into c; 0, or -1
 * with msg. */
static int load_nodes(const char *path, int64_t pk, nrows *c, char *msg,
                      size_t cap)
{
    store *s = NULL;
    op_error err;
    int rc = 0;

    op_error_clear(&err);
    memset(c, 0, sizeof *c);
    if (store_open(path, 0, &s, &err) ||
        store_each_node(s, pk, node_cb, c, &err) || c->oom) {
        snprintf(msg, cap, "%s", c->oom ? "out of memory" : err.msg);
        nrows_free(c);
        rc = -1;
    }
    store_close(s);
    return rc;
}

static const char k_empty = 0;

/* A JSON column (an object) as a read-only table; "{}" is one shared
 * empty table (read-only, so sharing it is invisible). May raise. */
static void push_column(lua_State *L, const char *text)
{
    cJSON *v;
    push_job j;
    int st;

    if (!text || strcmp(text, "{}") == 0) {
        if (lua_rawgetp(L, LUA_REGISTRYINDEX, &k_empty) == LUA_TTABLE)
            return;
        lua_pop(L, 1);
        lua_createtable(L, 0, 0);
        sbx_readonly_fixed(L, 0);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &k_empty);
        return;
    }
    v = cJSON_Parse(text);
    if (!cJSON_IsObject(v)) {
        cJSON_Delete(v);
        push_column(L, NULL);
        return;
    }
    j.doc = v;
    lua_pushcfunction(L, push_step);
    lua_pushlightuserdata(L, &j);
    st = lua_pcall(L, 1, 1, 0);
    cJSON_Delete(v);
    if (st != LUA_OK)
        lua_error(L);
}

static void set_s(lua_State *L, const char *k, const char *v)
{
    if (v) {
        lua_pushstring(L, v);
        lua_setfield(L, -2, k);
    }
}

static void set_i(lua_State *L, const char *k, unsigned set, unsigned bit,
                  int64_t v)
{
    if (set & bit) {
        lua_pushinteger(L, (lua_Integer)v);
        lua_setfield(L, -2, k);
    }
}

/* The nodes array (read-only) and, beside it, by_id. Upvalue-free body of
 * a protected call: c is the first argument. */
static int push_nodes_step(lua_State *L)
{
    const nrows *c = lua_touserdata(L, 1);
    size_t i;

    luaL_checkstack(L, 8, "ctx.history");
    lua_createtable(L, (int)c->n, 0); /* nodes (real) */
    lua_createtable(L, 0, (int)c->n); /* by_id (real) */
    for (i = 0; i < c->n; i++) {
        const store_node *n = &c->v[i].n;
        lua_createtable(L, 0, 12);
        set_s(L, "id", n->id);
        set_s(L, "kind", n->kind);
        set_s(L, "name", n->name);
        set_s(L, "status", n->status);
        set_i(L, "started_at", n->set, MSET_STARTED_AT, n->started_at);
        set_i(L, "ended_at", n->set, MSET_ENDED_AT, n->ended_at);
        set_i(L, "duration_ms", n->set, MSET_DURATION_MS, n->duration_ms);
        set_i(L, "parallelism", n->set, MSET_PARALLELISM, n->parallelism);
        push_column(L, n->metrics_json);
        lua_setfield(L, -2, "metrics");
        push_column(L, n->dist_json);
        lua_setfield(L, -2, "dist");
        push_column(L, n->attrs_json);
        lua_setfield(L, -2, "attrs");
        sbx_readonly_fixed(L, 0);
        lua_pushvalue(L, -1);
        lua_rawseti(L, -4, (lua_Integer)i + 1);
        lua_setfield(L, -2, n->id);
    }
    sbx_readonly_fixed(L, 0);
    lua_insert(L, -2);
    sbx_readonly_fixed(L, (lua_Integer)c->n);
    lua_insert(L, -2);
    return 2; /* nodes, by_id */
}

/* __index(entry, key) of a history entry: nodes and by_id, built on
 * first read and cached weakly. Upvalues: store path, row key, cache. */
static int entry_index(lua_State *L)
{
    const char *k = lua_tostring(L, 2);
    char msg[512];
    nrows rows;
    int st;

    if (!k || (strcmp(k, "nodes") && strcmp(k, "by_id")))
        return 0;
    if (lua_getfield(L, lua_upvalueindex(3), k) != LUA_TNIL)
        return 1;
    lua_pop(L, 1);
    if (load_nodes(lua_tostring(L, lua_upvalueindex(1)),
                   (int64_t)lua_tointeger(L, lua_upvalueindex(2)), &rows,
                   msg, sizeof msg))
        return luaL_error(L, "ctx.history: %s", msg);
    lua_pushcfunction(L, push_nodes_step);
    lua_pushlightuserdata(L, &rows);
    st = lua_pcall(L, 1, 2, 0);
    nrows_free(&rows);
    if (st != LUA_OK)
        return lua_error(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, lua_upvalueindex(3), "by_id");
    lua_pushvalue(L, -2);
    lua_setfield(L, lua_upvalueindex(3), "nodes");
    if (strcmp(k, "nodes") == 0)
        lua_pop(L, 1);
    return 1;
}

/* Gives the real table behind the proxy at -1 its lazy nodes. */
static void attach_nodes(lua_State *L, const char *path, lua_Integer pk)
{
    sbx_unproxy(L, -1); /* the real table */
    lua_createtable(L, 0, 1); /* its metatable */
    lua_pushstring(L, path);
    lua_pushinteger(L, pk);
    lua_createtable(L, 0, 2); /* the weak cache */
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "v");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_pushcclosure(L, entry_index, 3);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_pop(L, 1);
}

/* ---- ctx.history ------------------------------------------------------------------ */

static int read_limit(lua_State *L)
{
    lua_Integer lim = STORE_HISTORY_DEFAULT;
    int isnum;

    if (lua_isnoneornil(L, 2))
        return (int)lim;
    luaL_checktype(L, 2, LUA_TTABLE);
    if (lua_getfield(L, 2, "limit") != LUA_TNIL) {
        lim = lua_tointegerx(L, -1, &isnum);
        if (!isnum || lim < 1 || lim > STORE_HISTORY_MAX)
            return luaL_error(L, "ctx.history: limit must be a whole number "
                                 "from 1 to %d", STORE_HISTORY_MAX);
    }
    lua_pop(L, 1);
    return (int)lim;
}

/* The stored runs (cJSON array) of r's job before r; NULL with msg. A
 * store that does not exist yet has no runs. */
static cJSON *load_runs(const char *path, const baseline *bl,
                        const struct op_run *r, int limit, char *msg,
                        size_t cap)
{
    store *s = NULL;
    op_error err;
    runs_collect rc;

    op_error_clear(&err);
    memset(&rc, 0, sizeof rc);
    rc.c.arr = cJSON_CreateArray();
    rc.c.bl = bl;
    rc.err = &err;
    if (!rc.c.arr) {
        snprintf(msg, cap, "out of memory");
        return NULL;
    }
    if (store_open(path, 0, &s, &err)) {
        if (err.code == OP_ENOTFOUND)
            return rc.c.arr;
        goto fail;
    }
    rc.s = s;
    if (store_each_run(s, model_run_job(r), r->source, r->id,
                       r->set & MSET_STARTED_AT ? r->started_at : 0, limit,
                       run_cb, &rc, &err) || rc.c.oom)
        goto fail;
    store_close(s);
    return rc.c.arr;
fail:
    snprintf(msg, cap, "%s", rc.c.oom ? "out of memory" : err.msg);
    store_close(s);
    cJSON_Delete(rc.c.arr);
    return NULL;
}

int lhist_call(lua_State *L, const model *m)
{
    size_t ri = lmodel_run_index(L, 1);
    const char *path = m ? m->store_path : NULL;
    char msg[512];
    lua_Integer i, n = 0, pk;
    cJSON *runs;
    int limit;

    if (!m || ri >= m->nruns)
        return luaL_error(L, "ctx.history: the first argument must be a run "
                             "the rule was given");
    limit = read_limit(L);
    if (!path) {
        lua_createtable(L, 0, 0);
        sbx_readonly_fixed(L, 0);
        return 1;
    }
    runs = load_runs(path, m->decisions, m->runs[ri], limit, msg, sizeof msg);
    if (!runs)
        return luaL_error(L, "ctx.history: %s", msg);
    {
        /* the row keys, before push_owned frees the copy */
        lua_Integer k = 0;
        const cJSON *it;
        n = cJSON_GetArraySize(runs);
        lua_createtable(L, (int)n, 0);
        cJSON_ArrayForEach(it, runs) {
            lua_pushinteger(L, (lua_Integer)cJSON_GetNumberValue(
                                   cJSON_GetObjectItem(it, "_pk")));
            lua_rawseti(L, -2, ++k);
        }
    }
    push_owned(L, runs); /* keys, history */
    for (i = 1; i <= n; i++) {
        lua_rawgeti(L, -2, i);
        pk = lua_tointeger(L, -1);
        lua_pop(L, 1);
        lua_geti(L, -1, i);
        attach_nodes(L, path, pk);
        lua_pop(L, 1);
    }
    lua_remove(L, -2);
    return 1;
}

/* ---- ctx.node_history ---------------------------------------------------------- */

/* What a rule asked for, copied out of Lua before the store is opened (no
 * Lua error may unwind through SQLite). */
typedef struct series_req {
    const char *metrics[STORE_SERIES_METRICS];
    size_t nmetrics;
    const char *status;
    int limit;
    int nruns;                     /* -1: every run ctx.history would give */
    const char **ids, **sources;   /* runs = { entry, ... }: borrowed from
                                    * the entries (kept on the stack) */
} series_req;

/* One run's rows, copied from SQLite; then appended in a protected call. */
typedef struct series_rows {
    char **ids;
    double *v;
    size_t n, cap;
    int oom;
} series_rows;

static int series_row(void *ud, const char *id, double v)
{
    series_rows *c = ud;

    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 1024;
        char **ids = realloc(c->ids, ncap * sizeof *ids);
        double *vs = ids ? realloc(c->v, ncap * sizeof *vs) : NULL;
        if (ids)
            c->ids = ids;
        if (!vs)
            return c->oom = 1;
        c->v = vs;
        c->cap = ncap;
    }
    if (!(c->ids[c->n] = strdup(id)))
        return c->oom = 1;
    c->v[c->n++] = v;
    return 0;
}

static void series_clear(series_rows *c)
{
    size_t i;

    for (i = 0; i < c->n; i++)
        free(c->ids[i]);
    c->n = 0;
}

/* Appends the rows (argument 1) to the result table (argument 2). */
static int series_append(lua_State *L)
{
    const series_rows *c = lua_touserdata(L, 1);
    size_t i;

    for (i = 0; i < c->n; i++) {
        if (lua_getfield(L, 2, c->ids[i]) != LUA_TTABLE) {
            lua_pop(L, 1);
            lua_createtable(L, 4, 0);
            lua_pushvalue(L, -1);
            lua_setfield(L, 2, c->ids[i]);
        }
        push_number(L, c->v[i]);
        lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
        lua_pop(L, 1);
    }
    return 0;
}

/* Makes the result (argument 1) and every list in it read-only; returns
 * the proxy. */
static int series_seal(lua_State *L)
{
    luaL_checkstack(L, 6, "ctx.node_history");
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        sbx_readonly_fixed(L, (lua_Integer)lua_rawlen(L, -1));
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, 1); /* an existing key: allowed while traversing */
    }
    lua_settop(L, 1);
    sbx_readonly_fixed(L, 0);
    return 1;
}

typedef struct pks {
    int64_t v[STORE_HISTORY_MAX];
    int n;
    const series_req *q;
} pks;

static int pk_of_run(void *ud, const store_run *r)
{
    pks *p = ud;
    int i;

    if (p->q->nruns >= 0) {
        for (i = 0; i < p->q->nruns; i++)
            if (strcmp(p->q->ids[i], r->run_id) == 0 &&
                strcmp(p->q->sources[i], r->source) == 0)
                break;
        if (i == p->q->nruns)
            return 0; /* not one the rule chose */
    }
    p->v[p->n++] = r->pk;
    return p->n >= p->q->limit;
}

/* Reads the values into the table at the top of the stack, one run at a
 * time; 0, or -1 with msg (the table may be partly filled). */
static int series_load(lua_State *L, const char *path,
                       const struct op_run *r, const series_req *q,
                       char *msg, size_t cap)
{
    store *s = NULL;
    op_error err;
    series_rows rows;
    pks *p = calloc(1, sizeof *p);
    int i, rc = 0, st = LUA_OK;

    op_error_clear(&err);
    memset(&rows, 0, sizeof rows);
    if (!p) {
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    p->q = q;
    if (store_open(path, 0, &s, &err)) {
        rc = err.code == OP_ENOTFOUND ? 0 : -1;
        goto out;
    }
    if (store_each_run(s, model_run_job(r), r->source, r->id,
                       r->set & MSET_STARTED_AT ? r->started_at : 0,
                       q->nruns >= 0 ? STORE_HISTORY_MAX : q->limit,
                       pk_of_run, p, &err) && err.code) { /* else: limit */
        rc = -1;
        goto out;
    }
    for (i = 0; i < p->n && st == LUA_OK; i++) {
        if (store_each_node_value(s, p->v[i], q->metrics, q->nmetrics,
                                  q->status, series_row, &rows, &err) ||
            rows.oom) {
            rc = -1;
            break;
        }
        lua_pushcfunction(L, series_append);
        lua_pushlightuserdata(L, &rows);
        lua_pushvalue(L, -3);
        st = lua_pcall(L, 2, 0, 0);
        series_clear(&rows);
    }
out:
    if (rc)
        snprintf(msg, cap, "%s", rows.oom ? "out of memory" : err.msg);
    series_clear(&rows);
    free(rows.ids);
    free(rows.v);
    free(p);
    store_close(s);
    if (st != LUA_OK)
        lua_error(L); /* the store is closed: safe to unwind now */
    return rc;
}

/* metric = "name" or { "name", ... } (the first a node has). */
static void read_metrics(lua_State *L, series_req *q)
{
    int t = lua_getfield(L, 2, "metric");
    lua_Integer i, n;

    if (t == LUA_TNIL) {
        q->metrics[q->nmetrics++] = "duration_ms";
    } else if (t == LUA_TSTRING) {
        q->metrics[q->nmetrics++] = lua_tostring(L, -1);
    } else if (t == LUA_TTABLE) {
        int mt = lua_gettop(L);
        n = luaL_len(L, mt);
        if (n < 1 || n > STORE_SERIES_METRICS)
            luaL_error(L, "ctx.node_history: metric takes from 1 to %d names",
                       STORE_SERIES_METRICS);
        lua_createtable(L, (int)n, 0); /* anchors the names (an __index
                                        * may make new strings) */
        for (i = 1; i <= n; i++) {
            if (lua_geti(L, mt, i) != LUA_TSTRING)
                luaL_error(L, "ctx.node_history: metric[%d] must be a string",
                           (int)i);
            q->metrics[q->nmetrics++] = lua_tostring(L, -1);
            lua_rawseti(L, -2, i);
        }
    } else {
        luaL_error(L, "ctx.node_history: metric must be a string or a list "
                      "of strings");
    }
    /* the value stays on the stack: the names are borrowed from it */
}

/* runs = { entry, ... } (entries of ctx.history): ids and sources. */
static void read_runs(lua_State *L, series_req *q)
{
    lua_Integer i, n;
    int rt;

    q->nruns = -1;
    if (lua_getfield(L, 2, "runs") == LUA_TNIL)
        return;
    luaL_checktype(L, -1, LUA_TTABLE);
    rt = lua_gettop(L);
    n = luaL_len(L, rt);
    if (n < 0 || n > STORE_HISTORY_MAX)
        luaL_error(L, "ctx.node_history: runs must have from 0 to %d entries",
                   STORE_HISTORY_MAX);
    /* the pointer arrays: a userdata left on the stack for the call */
    q->ids = lua_newuserdatauv(L, (size_t)(n ? n : 1) * 2 * sizeof(char *), 0);
    q->sources = q->ids + (n ? n : 1);
    lua_createtable(L, (int)n * 2, 0); /* anchors the strings: an entry's
                                        * __index may make new ones */
    for (i = 1; i <= n; i++) {
        lua_geti(L, rt, i);
        if (!lua_istable(L, -1) || lua_getfield(L, -1, "id") != LUA_TSTRING ||
            lua_getfield(L, -2, "source") != LUA_TSTRING)
            luaL_error(L, "ctx.node_history: runs[%d] is not an entry of "
                          "ctx.history", (int)i);
        q->sources[i - 1] = lua_tostring(L, -1);
        q->ids[i - 1] = lua_tostring(L, -2);
        lua_rawseti(L, -4, 2 * i);
        lua_rawseti(L, -3, 2 * i - 1);
        lua_pop(L, 1);
    }
    q->nruns = (int)n;
}

int lhist_node_history(lua_State *L, const model *m)
{
    size_t ri = lmodel_run_index(L, 1);
    const char *path = m ? m->store_path : NULL;
    series_req q;
    char msg[512];
    int isnum;

    if (!m || ri >= m->nruns)
        return luaL_error(L, "ctx.node_history: the first argument must be a "
                             "run the rule was given");
    memset(&q, 0, sizeof q);
    q.limit = STORE_HISTORY_DEFAULT;
    q.nruns = -1;
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        read_metrics(L, &q);
        if (lua_getfield(L, 2, "limit") != LUA_TNIL) {
            lua_Integer lim = lua_tointegerx(L, -1, &isnum);
            if (!isnum || lim < 1 || lim > STORE_HISTORY_MAX)
                return luaL_error(L, "ctx.node_history: limit must be a whole "
                                     "number from 1 to %d", STORE_HISTORY_MAX);
            q.limit = (int)lim;
        }
        if (lua_getfield(L, 2, "status") != LUA_TNIL)
            q.status = luaL_checkstring(L, -1);
        read_runs(L, &q);
    } else {
        q.metrics[q.nmetrics++] = "duration_ms";
    }
    lua_createtable(L, 0, 0);
    if (path && series_load(L, path, m->runs[ri], &q, msg, sizeof msg))
        return luaL_error(L, "ctx.node_history: %s", msg);
    lua_pushcfunction(L, series_seal);
    lua_insert(L, -2);
    lua_call(L, 1, 1);
    return 1; /* the top: the sealed result */
}
