/*
 * lua_model.c - the Lua view of the frozen model (see lua_model.h).
 *
 * Every table a rule can reach is a read-only proxy over a host table
 * (sbx_readonly_fixed). The host tables are filled lazily, each entry when
 * it is first read (sbx.h, "lazily filled data"):
 *   run.nodes[i], run.by_id[id]   build that node (its scalar fields);
 *   node.parents, .children, .metrics, .dist, .attrs   build that part;
 *   run.series[name]   builds that series.
 * The model is frozen, so building late shows exactly what building early
 * would have, and every table is built once per state (until
 * lmodel_reset): identity holds (run.by_id[id] == run.nodes[i]). A rule
 * that reads two fields of each node does not pay for building every part
 * of every node, and the tables are laid out in the order rules read them
 * (docs/sandbox.md "Performance").
 *
 * A lazy host table keeps its C object (run or node) under the private
 * light-userdata key k_obj, which Lua code cannot name, and a metatable of
 * its kind; completing it removes both, and every raw view of a proxy
 * (pairs, next, rawlen, sbx_unproxy) completes it first. Building is
 * exempt from the rules' memory cap (docs/sandbox.md) and runs in a
 * protected call, so the exemption ends even when an allocation fails.
 */
#include "lua_model.h"

#include <lauxlib.h>

#include <stdint.h>
#include <string.h>

#include "sbx.h"

/* Registry keys (addresses no Lua code can name): run proxies by index + 1
 * and "bundle"; proxy -> run index; host table of run.nodes by index + 1;
 * the lazy metatables; and the private keys inside lazy tables. */
static const char k_cache = 0, k_index = 0, k_nodes = 0, k_obj = 0,
                  k_kind = 0;

enum lazy_kind { LZ_NODES, LZ_BY_ID, LZ_NODE, LZ_SERIES, LZ_KINDS };
static const char k_lazy_mt[LZ_KINDS] = {0};

/* The parts of a node built on first read, in the order of
 * docs/rules-engine.md. */
enum { NP_PARENTS, NP_CHILDREN, NP_METRICS, NP_DIST, NP_ATTRS, NP_COUNT };
static const char *const node_parts[NP_COUNT] = {
    "parents", "children", "metrics", "dist", "attrs"};

/* ---- values and leaf tables ----------------------------------------------- */

static void set_str(lua_State *L, int t, const char *key, const char *v)
{
    if (v) {
        lua_pushstring(L, v);
        lua_setfield(L, t, key);
    }
}

static void set_int(lua_State *L, int t, unsigned set, unsigned bit,
                    const char *key, int64_t v)
{
    if (set & bit) {
        lua_pushinteger(L, (lua_Integer)v);
        lua_setfield(L, t, key);
    }
}

static void push_mvalue(lua_State *L, const mvalue *v)
{
    switch (v->t) {
    case MV_INT: lua_pushinteger(L, (lua_Integer)v->u.i); break;
    case MV_NUM: lua_pushnumber(L, (lua_Number)v->u.n); break;
    case MV_STR: lua_pushstring(L, v->u.s); break;
    case MV_BOOL: lua_pushboolean(L, v->u.b); break;
    default: lua_pushnil(L); break;
    }
}

static void push_map(lua_State *L, const mmap *m)
{
    size_t i;

    lua_createtable(L, 0, (int)m->n);
    for (i = 0; i < m->n; i++) {
        mvalue v = mentry_value(&m->items[i]);

        push_mvalue(L, &v);
        lua_setfield(L, -2, mentry_key(&m->items[i]));
    }
    sbx_readonly_fixed(L, 0);
}

static void push_strings(lua_State *L, const char *const *v, size_t n)
{
    size_t i;

    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_pushstring(L, v[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    sbx_readonly_fixed(L, (lua_Integer)n);
}

static void push_dist(lua_State *L, const op_dist *d)
{
    static const char *const names[] = {"count", "min", "p50", "p75",
                                        "p90", "p95", "p99", "max",
                                        "mean", "sum"};
    const double v[] = {d->count, d->min, d->p50, d->p75, d->p90,
                        d->p95, d->p99, d->max, d->mean, d->sum};
    size_t i;

    lua_createtable(L, 0, 10);
    for (i = 0; i < 10; i++) {
        lua_pushnumber(L, (lua_Number)v[i]);
        lua_setfield(L, -2, names[i]);
    }
    sbx_readonly_fixed(L, 0);
}

static void push_node_part(lua_State *L, const struct op_node *n, int part)
{
    size_t i;

    switch (part) {
    case NP_PARENTS: push_strings(L, n->parents, n->nparents); break;
    case NP_CHILDREN: push_strings(L, n->children, n->nchildren); break;
    case NP_METRICS: push_map(L, &n->metrics); break;
    case NP_ATTRS: push_map(L, &n->attrs); break;
    default:
        lua_createtable(L, 0, (int)n->ndists);
        for (i = 0; i < n->ndists; i++) {
            push_dist(L, &n->dists[i].d);
            lua_setfield(L, -2, n->dists[i].metric);
        }
        sbx_readonly_fixed(L, 0);
        break;
    }
}

static void push_series(lua_State *L, const mseries *s)
{
    size_t j;

    lua_createtable(L, (int)s->n, 0);
    for (j = 0; j < s->n; j++) {
        push_map(L, &s->recs[j]->fields);
        lua_rawseti(L, -2, (lua_Integer)j + 1);
    }
    sbx_readonly_fixed(L, (lua_Integer)s->n);
}

/* ---- lazily filled tables ------------------------------------------------- */

static int lazy_index(lua_State *L);
static int lazy_complete(lua_State *L);

/* Gives the table at t the metatable of kind and its C object. */
static void lazy_attach(lua_State *L, int t, enum lazy_kind kind,
                        const void *obj)
{
    t = lua_absindex(L, t);
    lua_pushlightuserdata(L, (void *)obj);
    lua_rawsetp(L, t, &k_obj);
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &k_lazy_mt[kind]) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_createtable(L, 0, 3);
        lua_pushcfunction(L, lazy_index);
        lua_setfield(L, -2, "__index");
        lua_pushinteger(L, kind);
        lua_rawsetp(L, -2, &k_kind);
        sbx_mark_lazy(L, -1, lazy_complete);
        lua_pushvalue(L, -1);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &k_lazy_mt[kind]);
    }
    lua_setmetatable(L, t);
}

/* The C object of the lazy table at t, or NULL once it is complete. */
static const void *lazy_obj(lua_State *L, int t)
{
    const void *obj;

    lua_rawgetp(L, t, &k_obj);
    obj = lua_touserdata(L, -1);
    lua_pop(L, 1);
    return obj;
}

static int lazy_kind_of(lua_State *L, int t)
{
    int kind = -1;

    if (lua_getmetatable(L, t)) {
        if (lua_rawgetp(L, -1, &k_kind) == LUA_TNUMBER)
            kind = (int)lua_tointeger(L, -1);
        lua_pop(L, 2);
    }
    return kind;
}

/* Every entry exists: the table at t becomes an ordinary one. */
static void lazy_done(lua_State *L, int t)
{
    lua_pushnil(L);
    lua_rawsetp(L, t, &k_obj);
    lua_pushnil(L);
    lua_setmetatable(L, t);
}

/* Pushes the host table of run.nodes of run r (built with the run). */
static void push_nodes_real(lua_State *L, const struct op_run *r)
{
    lua_rawgetp(L, LUA_REGISTRYINDEX, &k_nodes);
    lua_rawgeti(L, -1, (lua_Integer)r->index + 1);
    lua_remove(L, -2);
}

static void push_node(lua_State *L, const struct op_node *n)
{
    int t;

    luaL_checkstack(L, 6, "model");
    lua_createtable(L, 0, 16);
    t = lua_gettop(L);
    set_str(L, t, "id", n->id);
    set_str(L, t, "kind", n->kind);
    set_str(L, t, "name", n->name);
    set_str(L, t, "status", n->status);
    set_str(L, t, "raw_status", n->raw_status);
    set_int(L, t, n->set, MSET_STARTED_AT, "started_at", n->started_at);
    set_int(L, t, n->set, MSET_ENDED_AT, "ended_at", n->ended_at);
    set_int(L, t, n->set, MSET_DURATION_MS, "duration_ms", n->duration_ms);
    set_int(L, t, n->set, MSET_PARALLELISM, "parallelism", n->parallelism);
    set_int(L, t, n->set, MSET_MAX_PARALLELISM, "max_parallelism",
            n->max_parallelism);
    lazy_attach(L, t, LZ_NODE, n);
    sbx_readonly_fixed(L, 0);
}

/* The string key at idx as a C string, or NULL (not a string, or one with
 * an embedded zero, which names nothing in the model). */
static const char *key_string(lua_State *L, int idx)
{
    size_t len;
    const char *s;

    if (lua_type(L, idx) != LUA_TSTRING)
        return NULL;
    s = lua_tolstring(L, idx, &len);
    return strlen(s) == len ? s : NULL;
}

/* Pushes t[key] without metamethods (a lazy table's __index would build
 * the entry); returns its type. */
static int raw_field(lua_State *L, int t, const char *key)
{
    lua_pushstring(L, key);
    return lua_rawget(L, t);
}

static void set_raw_field(lua_State *L, int t, const char *key)
{
    lua_pushstring(L, key);
    lua_insert(L, -2);
    lua_rawset(L, t);
}

static int node_part_of(const char *key)
{
    int i;

    for (i = 0; key && i < NP_COUNT; i++)
        if (strcmp(key, node_parts[i]) == 0)
            return i;
    return -1;
}

/* Each fill_* builds entry `key` (at 2) of lazy table t (at 1), stores it
 * raw and pushes it, or pushes nothing when the key names no entry. */

static int fill_nodes(lua_State *L, const struct op_run *r)
{
    int isint; /* a float with an integral value (2.0) is key 2 too */
    lua_Integer i = lua_type(L, 2) == LUA_TNUMBER
                        ? lua_tointegerx(L, 2, &isint)
                        : (isint = 0);

    if (!isint || i < 1 || (lua_Unsigned)i > r->nnodes)
        return 0;
    push_node(L, r->nodes[i - 1]);
    lua_pushvalue(L, -1);
    lua_rawseti(L, 1, i);
    return 1;
}

static int fill_by_id(lua_State *L, const struct op_run *r)
{
    const struct op_node *n = model_find_node(r, key_string(L, 2));

    if (!n)
        return 0;
    push_nodes_real(L, r);
    lua_geti(L, -1, (lua_Integer)n->index + 1);
    lua_remove(L, -2);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1);
    return 1;
}

static int node_complete(lua_State *L, const struct op_node *n);

static int fill_node(lua_State *L, const struct op_node *n)
{
    int part = node_part_of(key_string(L, 2)), i;

    if (part < 0) /* an absent field: finish the node, so that further */
        return node_complete(L, n); /* misses cost no call */
    push_node_part(L, n, part);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1);
    for (i = 0; i < NP_COUNT; i++) {
        int have = raw_field(L, 1, node_parts[i]) != LUA_TNIL;
        lua_pop(L, 1);
        if (!have)
            return 1;
    }
    lazy_done(L, 1); /* every part read: further misses cost no call */
    return 1;
}

static int fill_series(lua_State *L, const struct op_run *r)
{
    const mseries *s = model_find_series(r, key_string(L, 2));

    if (!s)
        return 0;
    push_series(L, s);
    lua_pushvalue(L, 2);
    lua_pushvalue(L, -2);
    lua_rawset(L, 1);
    return 1;
}

/* Each *_complete fills every missing entry of t (at 1), then makes it an
 * ordinary table. Pushes nothing. */

static int nodes_complete(lua_State *L, const struct op_run *r)
{
    size_t i;

    for (i = 0; i < r->nnodes; i++) {
        if (lua_rawgeti(L, 1, (lua_Integer)i + 1) == LUA_TNIL) {
            push_node(L, r->nodes[i]);
            lua_rawseti(L, 1, (lua_Integer)i + 1);
        }
        lua_pop(L, 1);
    }
    lazy_done(L, 1);
    return 0;
}

static int by_id_complete(lua_State *L, const struct op_run *r)
{
    size_t i;

    push_nodes_real(L, r);
    for (i = 0; i < r->nnodes; i++) {
        lua_pushstring(L, r->nodes[i]->id);
        lua_geti(L, -2, (lua_Integer)i + 1);
        lua_rawset(L, 1);
    }
    lua_pop(L, 1);
    lazy_done(L, 1);
    return 0;
}

static int node_complete(lua_State *L, const struct op_node *n)
{
    int i;

    for (i = 0; i < NP_COUNT; i++) {
        if (raw_field(L, 1, node_parts[i]) == LUA_TNIL) {
            push_node_part(L, n, i);
            set_raw_field(L, 1, node_parts[i]);
        }
        lua_pop(L, 1);
    }
    lazy_done(L, 1);
    return 0;
}

static int series_complete(lua_State *L, const struct op_run *r)
{
    size_t i;

    for (i = 0; i < r->nseries; i++) {
        if (raw_field(L, 1, r->series[i].name) == LUA_TNIL) {
            push_series(L, &r->series[i]);
            set_raw_field(L, 1, r->series[i].name);
        }
        lua_pop(L, 1);
    }
    lazy_done(L, 1);
    return 0;
}

/* step(t, key): the protected body of lazy_index (key given) and
 * lazy_complete (key nil). */
static int lazy_step(lua_State *L)
{
    int complete = lua_isnil(L, 2), kind = lazy_kind_of(L, 1);
    const void *obj = lazy_obj(L, 1);

    luaL_checkstack(L, 8, "model");
    if (!obj)
        return 0; /* already complete */
    if (kind < 0) { /* its model is gone (lmodel_reset): never touch obj */
        lazy_done(L, 1);
        return 0;
    }
    switch (kind) {
    case LZ_NODES:
        return complete ? nodes_complete(L, obj) : fill_nodes(L, obj);
    case LZ_BY_ID:
        return complete ? by_id_complete(L, obj) : fill_by_id(L, obj);
    case LZ_NODE:
        return complete ? node_complete(L, obj) : fill_node(L, obj);
    case LZ_SERIES:
        return complete ? series_complete(L, obj) : fill_series(L, obj);
    default:
        return 0;
    }
}

/* Runs lazy_step(t, key) exempt from the memory cap, protected so that
 * the exemption ends on failure too (the error is then raised again). */
static int lazy_run(lua_State *L)
{
    sbx *s = sbx_of(L);
    int prev, st;

    lua_pushcfunction(L, lazy_step);
    lua_insert(L, 1);
    prev = sbx_exempt(s, 1);
    st = lua_pcall(L, 2, 1, 0);
    sbx_exempt(s, prev);
    if (st != LUA_OK)
        return lua_error(L);
    return 1;
}

/* __index(t, key) of a lazy table: a nil key never names an entry. */
static int lazy_index(lua_State *L)
{
    lua_settop(L, 2);
    if (lua_isnil(L, 2))
        return 0;
    return lazy_run(L);
}

static int lazy_complete(lua_State *L)
{
    lua_settop(L, 1);
    lua_pushnil(L);
    lazy_run(L);
    return 0;
}

/* ---- runs ------------------------------------------------------------------- */

/* run.nodes and run.by_id (both lazy), into the run table at t. */
static void push_nodes(lua_State *L, const struct op_run *r, int t)
{
    lua_createtable(L, (int)r->nnodes, 1);
    lazy_attach(L, -1, LZ_NODES, r);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &k_nodes);
    lua_pushvalue(L, -2);
    lua_rawseti(L, -2, (lua_Integer)r->index + 1);
    lua_pop(L, 1);
    sbx_readonly_fixed(L, (lua_Integer)r->nnodes);
    lua_setfield(L, t, "nodes");
    lua_createtable(L, 0, 1);
    lazy_attach(L, -1, LZ_BY_ID, r);
    sbx_readonly_fixed(L, 0);
    lua_setfield(L, t, "by_id");
}

static void run_table(lua_State *L, const model *m, size_t ri, int cache,
                      int depth);

/* run.history: the tables of earlier runs of the same history, oldest
 * first (the freeze gives only the newest run a history, so depth stays
 * 1; the bound is a guard, not a feature). */
static void push_history(lua_State *L, const model *m,
                         const struct op_run *r, int cache, int depth)
{
    size_t i;
    lua_Integer n = 0;

    lua_createtable(L, (int)r->nhistory, 0);
    for (i = 0; i < r->nhistory && depth < 2; i++) {
        if (r->history[i] == r)
            continue;
        run_table(L, m, r->history[i]->index, cache, depth + 1);
        lua_rawseti(L, -2, ++n);
    }
    sbx_readonly_fixed(L, n);
}

static void build_run(lua_State *L, const model *m, const struct op_run *r,
                      int cache, int depth)
{
    int t;

    luaL_checkstack(L, 10, "model");
    lua_createtable(L, 0, 24);
    t = lua_gettop(L);
    set_str(L, t, "source", r->source);
    set_str(L, t, "id", r->id);
    set_str(L, t, "job", model_run_job(r));
    set_str(L, t, "name", r->name);
    set_str(L, t, "status", r->status ? r->status : "unknown");
    set_str(L, t, "raw_status", r->raw_status);
    set_int(L, t, r->set, MSET_STARTED_AT, "started_at", r->started_at);
    set_int(L, t, r->set, MSET_ENDED_AT, "ended_at", r->ended_at);
    set_int(L, t, r->set, MSET_DURATION_MS, "duration_ms", r->duration_ms);
    set_str(L, t, "engine_version", r->engine_version);
    if (r->norigins)
        set_str(L, t, "origin", r->origins[0]);
    push_strings(L, r->origins, r->norigins);
    lua_setfield(L, t, "origins");
    push_map(L, &r->config);
    lua_setfield(L, t, "config");
    push_map(L, &r->attrs);
    lua_setfield(L, t, "attrs");
    push_map(L, &r->metrics);
    lua_setfield(L, t, "metrics");
    push_nodes(L, r, t);
    lua_createtable(L, 0, (int)r->nseries + 1);
    lazy_attach(L, -1, LZ_SERIES, r);
    sbx_readonly_fixed(L, 0);
    lua_setfield(L, t, "series");
    push_strings(L, r->warnings, r->nwarnings);
    lua_setfield(L, t, "warnings");
    set_str(L, t, "history_key", r->history_key);
    push_history(L, m, r, cache, depth);
    lua_setfield(L, t, "history");
    if (r->superseded) {
        lua_pushboolean(L, 1);
        lua_setfield(L, t, "superseded");
    }
    sbx_readonly_fixed(L, 0);
}

/* Pushes the table of run ri from the cache (at index cache), building
 * and recording it on first use. */
static void run_table(lua_State *L, const model *m, size_t ri, int cache,
                      int depth)
{
    if (lua_rawgeti(L, cache, (lua_Integer)ri + 1) == LUA_TTABLE)
        return;
    lua_pop(L, 1);
    build_run(L, m, m->runs[ri], cache, depth);
    lua_pushvalue(L, -1);
    lua_rawseti(L, cache, (lua_Integer)ri + 1);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &k_index);
    lua_pushvalue(L, -2);
    lua_pushinteger(L, (lua_Integer)ri);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Pushes the cache table, creating it (and the other tables of the
 * registry) when missing. */
static void push_cache(lua_State *L)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &k_cache) == LUA_TTABLE)
        return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_index);
    lua_newtable(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_nodes);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_cache);
}

void lmodel_push_run(lua_State *L, const model *m, size_t ri)
{
    sbx *s = sbx_of(L);
    int cache, prev;

    luaL_checkstack(L, 4, "model");
    push_cache(L);
    cache = lua_gettop(L);
    if (lua_rawgeti(L, cache, (lua_Integer)ri + 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        prev = sbx_exempt(s, 1); /* lrule_exec ends it if building fails */
        run_table(L, m, ri, cache, 0);
        sbx_exempt(s, prev);
    }
    lua_remove(L, cache);
}

/* bundle.runs leaves out superseded runs: rules reach them through the
 * newest run's history, as per-run rules do. */
void lmodel_push_bundle(lua_State *L, const model *m)
{
    size_t i;
    lua_Integer n = 0;

    luaL_checkstack(L, 6, "model");
    push_cache(L);
    if (lua_getfield(L, -1, "bundle") == LUA_TTABLE) {
        lua_remove(L, -2);
        return;
    }
    lua_pop(L, 1);
    lua_createtable(L, (int)m->nruns, 0);
    for (i = 0; i < m->nruns; i++) {
        if (m->runs[i]->superseded)
            continue;
        lmodel_push_run(L, m, i);
        lua_rawseti(L, -2, ++n);
    }
    sbx_readonly_fixed(L, n);
    lua_createtable(L, 0, 1);
    lua_insert(L, -2);
    lua_setfield(L, -2, "runs");
    sbx_readonly_fixed(L, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "bundle");
    lua_remove(L, -2);
}

/* A rule may keep tables of a model in its upvalues past the analysis
 * (its state lives as long as the ruleset); their C objects may be freed
 * by then. Retiring the lazy metatables makes such tables ordinary ones,
 * holding what was built, the next time anything reads them. */
static void retire_lazy(lua_State *L)
{
    int kind;

    for (kind = 0; kind < LZ_KINDS; kind++) {
        if (lua_rawgetp(L, LUA_REGISTRYINDEX, &k_lazy_mt[kind]) ==
            LUA_TTABLE) {
            lua_pushinteger(L, -1);
            lua_rawsetp(L, -2, &k_kind);
        }
        lua_pop(L, 1);
        lua_pushnil(L);
        lua_rawsetp(L, LUA_REGISTRYINDEX, &k_lazy_mt[kind]);
    }
}

void lmodel_reset(lua_State *L)
{
    retire_lazy(L);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_cache);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_index);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_nodes);
    lua_gc(L, LUA_GCCOLLECT);
    sbx_reset_exempt(sbx_of(L));
}

size_t lmodel_run_index(lua_State *L, int idx)
{
    size_t ri = SIZE_MAX;

    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE || !lua_checkstack(L, 2))
        return SIZE_MAX;
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &k_index) == LUA_TTABLE) {
        lua_pushvalue(L, idx);
        if (lua_rawget(L, -2) == LUA_TNUMBER)
            ri = (size_t)lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return ri;
}
