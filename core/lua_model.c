/*
 * lua_model.c - builds the Lua view of the frozen model (see lua_model.h).
 *
 * Every table is built bottom-up and wrapped in a read-only proxy before
 * it is stored in its parent, so nothing a rule can reach is writable.
 * Tables are built once per state and run and cached in the registry;
 * their memory is exempt from the rules' cap (docs/sandbox.md).
 */
#include "lua_model.h"

#include <lauxlib.h>

#include <stdint.h>

#include "sbx.h"

static const char k_cache = 0, k_index = 0;

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
        push_mvalue(L, &m->items[i].v);
        lua_setfield(L, -2, m->items[i].key);
    }
    sbx_readonly(L);
}

static void push_strings(lua_State *L, const char *const *v, size_t n)
{
    size_t i;

    lua_createtable(L, (int)n, 0);
    for (i = 0; i < n; i++) {
        lua_pushstring(L, v[i]);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    sbx_readonly(L);
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
    sbx_readonly(L);
}

static void push_node(lua_State *L, const struct op_node *n)
{
    size_t i;
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
    push_strings(L, n->parents, n->nparents);
    lua_setfield(L, t, "parents");
    push_strings(L, n->children, n->nchildren);
    lua_setfield(L, t, "children");
    push_map(L, &n->metrics);
    lua_setfield(L, t, "metrics");
    lua_createtable(L, 0, (int)n->ndists);
    for (i = 0; i < n->ndists; i++) {
        push_dist(L, &n->dists[i].d);
        lua_setfield(L, -2, n->dists[i].metric);
    }
    sbx_readonly(L);
    lua_setfield(L, t, "dist");
    push_map(L, &n->attrs);
    lua_setfield(L, t, "attrs");
    sbx_readonly(L);
}

static void push_series(lua_State *L, const struct op_run *r)
{
    size_t i, j;

    lua_createtable(L, 0, (int)r->nseries);
    for (i = 0; i < r->nseries; i++) {
        const mseries *s = &r->series[i];
        lua_createtable(L, (int)s->n, 0);
        for (j = 0; j < s->n; j++) {
            push_map(L, &s->recs[j]->fields);
            lua_rawseti(L, -2, (lua_Integer)j + 1);
        }
        sbx_readonly(L);
        lua_setfield(L, -2, s->name);
    }
    sbx_readonly(L);
}

static void push_nodes(lua_State *L, const struct op_run *r, int t)
{
    int nodes, by_id;
    size_t i;

    lua_createtable(L, (int)r->nnodes, 0);
    nodes = lua_gettop(L);
    lua_createtable(L, 0, (int)r->nnodes);
    by_id = lua_gettop(L);
    for (i = 0; i < r->nnodes; i++) {
        push_node(L, r->nodes[i]);
        lua_pushvalue(L, -1);
        lua_rawseti(L, nodes, (lua_Integer)i + 1);
        lua_setfield(L, by_id, r->nodes[i]->id);
    }
    sbx_readonly(L);
    lua_setfield(L, t, "by_id");
    sbx_readonly(L);
    lua_setfield(L, t, "nodes");
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
    sbx_readonly(L);
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
    push_map(L, &r->metrics);
    lua_setfield(L, t, "metrics");
    push_nodes(L, r, t);
    push_series(L, r);
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
    sbx_readonly(L);
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

/* Pushes the cache table, creating it (and the index) when missing. */
static void push_cache(lua_State *L)
{
    if (lua_rawgetp(L, LUA_REGISTRYINDEX, &k_cache) == LUA_TTABLE)
        return;
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_cache);
    lua_newtable(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_index);
}

void lmodel_push_run(lua_State *L, const model *m, size_t ri)
{
    sbx *s = sbx_of(L);
    int cache;

    luaL_checkstack(L, 4, "model");
    push_cache(L);
    cache = lua_gettop(L);
    if (lua_rawgeti(L, cache, (lua_Integer)ri + 1) != LUA_TTABLE) {
        lua_pop(L, 1);
        sbx_exempt(s, 1);
        /* Nothing built here is garbage: collecting while building would
         * only traverse the new tables again and again. lrule_exec
         * restarts the collector even if building fails halfway. */
        lua_gc(L, LUA_GCSTOP);
        run_table(L, m, ri, cache, 0);
        lua_gc(L, LUA_GCRESTART);
        sbx_exempt(s, 0);
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
    sbx_readonly(L);
    lua_createtable(L, 0, 1);
    lua_insert(L, -2);
    lua_setfield(L, -2, "runs");
    sbx_readonly(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, "bundle");
    lua_remove(L, -2);
}

void lmodel_reset(lua_State *L)
{
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_cache);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_index);
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
