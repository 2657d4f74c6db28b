/*
 * lua_json.c - Lua values <-> cJSON (see lua_json.h).
 *
 * The Lua -> cJSON direction runs inside a rule call on values the rule
 * built, so it only uses raw, non-allocating Lua accessors: nothing in it
 * can raise, which keeps the partially built cJSON tree from leaking on a
 * longjmp and keeps hostile metamethods out of the host.
 */
#include "lua_json.h"

#include <lauxlib.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx.h"

#define PATH_MAX_LEN 200

/* The tables converted so far (their addresses), so that one reached twice
 * is refused: a shared table, converted once per reference, would let a
 * few kilobytes of Lua (t = {t, t} twenty times) become a million nodes. */
typedef struct seen_set {
    const void **slot;
    size_t cap, n; /* cap: a power of two, or 0 */
} seen_set;

typedef struct conv {
    lua_State *L;
    size_t *budget;
    size_t nodes;
    int depth;
    seen_set seen;
    char path[PATH_MAX_LEN];
    char *err;
    size_t errlen;
} conv;

typedef struct member {
    char *key;
    cJSON *v;
} member;

static int fail(conv *c, const char *what)
{
    snprintf(c->err, c->errlen, "%s: %s", c->path, what);
    return -1;
}

static int spend(conv *c, size_t n)
{
    if (n > *c->budget)
        return fail(c, "too large");
    *c->budget -= n;
    return 0;
}

static int conv_value(conv *c, int idx, cJSON **out);

static size_t seen_hash(const void *p, size_t cap)
{
    uintptr_t h = (uintptr_t)p;

    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15u;
    return (size_t)(h >> 7) & (cap - 1);
}

/* Adds p; returns 1 when it was there already, -1 on OOM, else 0. */
static int seen_add(seen_set *s, const void *p)
{
    size_t i;

    if (2 * (s->n + 1) > s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64, k;
        const void **nv = calloc(ncap, sizeof *nv);
        if (!nv)
            return -1;
        for (k = 0; k < s->cap; k++)
            if (s->slot[k]) {
                for (i = seen_hash(s->slot[k], ncap); nv[i];
                     i = (i + 1) & (ncap - 1))
                    ;
                nv[i] = s->slot[k];
            }
        free(s->slot);
        s->slot = nv;
        s->cap = ncap;
    }
    for (i = seen_hash(p, s->cap); s->slot[i]; i = (i + 1) & (s->cap - 1))
        if (s->slot[i] == p)
            return 1;
    s->slot[i] = p;
    s->n++;
    return 0;
}

/* Every value is a node and costs LJSON_NODE_COST on top of its text, so
 * that tables (empty ones too) and array slots count, not only keys and
 * scalars; a conversion makes at most LJSON_MAX_NODES. */
static int spend_node(conv *c)
{
    if (++c->nodes > LJSON_MAX_NODES) {
        char what[80];
        snprintf(what, sizeof what, "more than %u values",
                 (unsigned)LJSON_MAX_NODES);
        return fail(c, what);
    }
    return spend(c, LJSON_NODE_COST);
}

/* Appends ".key" or "[i]" to the path; returns the old length. */
static size_t path_push(conv *c, const char *key, lua_Integer i)
{
    size_t len = strlen(c->path);

    if (key)
        snprintf(c->path + len, sizeof c->path - len, ".%s", key);
    else
        snprintf(c->path + len, sizeof c->path - len, "[%lld]", (long long)i);
    return len;
}

/* Classifies table t: returns n > 0 when its keys are exactly 1..n, 0 for
 * an object (or an empty table); *count gets the number of keys. */
static lua_Integer seq_len(lua_State *L, int t, size_t *count)
{
    lua_Integer max = 0;
    size_t n = 0;
    int seq = 1;

    lua_pushnil(L);
    while (lua_next(L, t)) {
        n++;
        if (lua_type(L, -2) == LUA_TNUMBER && lua_isinteger(L, -2)) {
            lua_Integer k = lua_tointeger(L, -2);
            if (k < 1)
                seq = 0;
            else if (k > max)
                max = k;
        } else {
            seq = 0;
        }
        lua_pop(L, 1);
    }
    *count = n;
    return seq && n > 0 && (size_t)max == n ? max : 0;
}

static int conv_array(conv *c, int t, lua_Integer n, cJSON **out)
{
    lua_Integer i;
    cJSON *arr = cJSON_CreateArray();

    if (!arr)
        return fail(c, "out of memory");
    for (i = 1; i <= n; i++) {
        cJSON *v = NULL;
        size_t mark = path_push(c, NULL, i);
        int rc;

        lua_rawgeti(c->L, t, i);
        rc = conv_value(c, lua_gettop(c->L), &v);
        lua_pop(c->L, 1);
        c->path[mark] = '\0';
        if (rc) {
            cJSON_Delete(arr);
            return -1;
        }
        cJSON_AddItemToArray(arr, v);
    }
    *out = arr;
    return 0;
}

static int member_cmp(const void *a, const void *b)
{
    return strcmp(((const member *)a)->key, ((const member *)b)->key);
}

static void members_free(member *m, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(m[i].key);
        cJSON_Delete(m[i].v);
    }
    free(m);
}

/* The key on the stack at -2 as a new C string, or NULL (error set). */
static char *key_string(conv *c)
{
    lua_State *L = c->L;
    char buf[64];
    const char *k;
    size_t len;
    char *dup;

    switch (lua_type(L, -2)) {
    case LUA_TSTRING:
        k = lua_tolstring(L, -2, &len); /* a string already: no conversion */
        break;
    case LUA_TNUMBER:
        if (lua_isinteger(L, -2))
            snprintf(buf, sizeof buf, "%lld", (long long)lua_tointeger(L, -2));
        else
            snprintf(buf, sizeof buf, "%.17g", lua_tonumber(L, -2));
        k = buf;
        len = strlen(buf);
        break;
    default:
        fail(c, "keys must be strings or numbers");
        return NULL;
    }
    if (spend(c, len + 4))
        return NULL;
    dup = malloc(len + 1);
    if (!dup) {
        fail(c, "out of memory");
        return NULL;
    }
    memcpy(dup, k, len);
    dup[len] = '\0';
    return dup;
}

static int conv_object(conv *c, int t, size_t count, cJSON **out)
{
    lua_State *L = c->L;
    member *m = calloc(count ? count : 1, sizeof *m);
    size_t n = 0, i;
    cJSON *obj;

    if (!m)
        return fail(c, "out of memory");
    lua_pushnil(L);
    while (lua_next(L, t)) {
        size_t mark;
        int rc;

        if (n == count) { /* cannot happen: nothing runs between passes */
            lua_pop(L, 2);
            break;
        }
        m[n].key = key_string(c);
        if (!m[n].key) {
            lua_pop(L, 2);
            goto bad;
        }
        mark = path_push(c, m[n].key, 0);
        rc = conv_value(c, lua_gettop(L), &m[n].v);
        c->path[mark] = '\0';
        n++;
        lua_pop(L, 1);
        if (rc) {
            lua_pop(L, 1);
            goto bad;
        }
    }
    qsort(m, n, sizeof *m, member_cmp);
    for (i = 1; i < n; i++)
        if (strcmp(m[i - 1].key, m[i].key) == 0) {
            fail(c, "two keys name the same field");
            goto bad;
        }
    obj = cJSON_CreateObject();
    if (!obj) {
        fail(c, "out of memory");
        goto bad;
    }
    for (i = 0; i < n; i++) {
        /* Copies the key: can fail, leaving m[i].v to members_free. */
        if (!cJSON_AddItemToObject(obj, m[i].key, m[i].v)) {
            cJSON_Delete(obj);
            fail(c, "out of memory");
            goto bad;
        }
        m[i].v = NULL;
    }
    members_free(m, n);
    *out = obj;
    return 0;
bad:
    members_free(m, n);
    return -1;
}

static int conv_table(conv *c, int idx, cJSON **out)
{
    lua_State *L = c->L;
    lua_Integer n;
    size_t count;
    int t, rc;

    if (c->depth >= LJSON_MAX_DEPTH)
        return fail(c, "nested too deeply");
    if (!lua_checkstack(L, 6))
        return fail(c, "nested too deeply");
    sbx_unproxy(L, idx);
    t = lua_gettop(L);
    rc = seen_add(&c->seen, lua_topointer(L, t));
    if (rc) {
        lua_pop(L, 1);
        return fail(c, rc > 0 ? "the same table is used twice (a value "
                                "must be a tree: copy the table)"
                              : "out of memory");
    }
    c->depth++;
    n = seq_len(L, t, &count);
    rc = n > 0 ? conv_array(c, t, n, out) : conv_object(c, t, count, out);
    c->depth--;
    lua_pop(L, 1);
    return rc;
}

static int conv_value(conv *c, int idx, cJSON **out)
{
    lua_State *L = c->L;
    const char *s;
    size_t len;
    double d;

    *out = NULL;
    if (spend_node(c))
        return -1;
    switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
        if (spend(c, 24))
            return -1;
        d = lua_isinteger(L, idx) ? (double)lua_tointeger(L, idx)
                                  : (double)lua_tonumber(L, idx);
        *out = isfinite(d) ? cJSON_CreateNumber(d) : cJSON_CreateNull();
        break;
    case LUA_TSTRING:
        s = lua_tolstring(L, idx, &len);
        if (spend(c, len + 2))
            return -1;
        *out = cJSON_CreateString(s);
        break;
    case LUA_TBOOLEAN:
        if (spend(c, 5))
            return -1;
        *out = cJSON_CreateBool(lua_toboolean(L, idx));
        break;
    case LUA_TTABLE:
        return conv_table(c, idx, out);
    default: {
        char what[64];
        snprintf(what, sizeof what, "a %s cannot be stored",
                 lua_typename(L, lua_type(L, idx)));
        return fail(c, what);
    }
    }
    return *out ? 0 : fail(c, "out of memory");
}

int ljson_from_lua(lua_State *L, int idx, const char *what, size_t *budget,
                   cJSON **out, char *errbuf, size_t errlen)
{
    conv c;
    int rc;

    memset(&c, 0, sizeof c);
    c.L = L;
    c.budget = budget;
    c.err = errbuf;
    c.errlen = errlen;
    snprintf(c.path, sizeof c.path, "%s", what ? what : "value");
    *out = NULL;
    rc = conv_value(&c, lua_absindex(L, idx), out);
    free(c.seen.slot);
    return rc;
}

static void push_number(lua_State *L, double d)
{
    if (d == floor(d) && fabs(d) <= 9007199254740992.0)
        lua_pushinteger(L, (lua_Integer)d);
    else
        lua_pushnumber(L, d);
}

static void push_depth(lua_State *L, const cJSON *v, int depth)
{
    const cJSON *it;
    lua_Integer i = 0;

    luaL_checkstack(L, 3, "options nested too deeply");
    if (depth > LJSON_MAX_DEPTH * 2) {
        lua_pushnil(L);
        return;
    }
    if (cJSON_IsObject(v)) {
        lua_createtable(L, 0, cJSON_GetArraySize(v));
        cJSON_ArrayForEach(it, v) {
            if (cJSON_IsNull(it) || !it->string)
                continue;
            push_depth(L, it, depth + 1);
            lua_setfield(L, -2, it->string);
        }
    } else if (cJSON_IsArray(v)) {
        lua_createtable(L, cJSON_GetArraySize(v), 0);
        cJSON_ArrayForEach(it, v) {
            i++;
            if (cJSON_IsNull(it))
                continue;
            push_depth(L, it, depth + 1);
            lua_rawseti(L, -2, i);
        }
    } else if (cJSON_IsNumber(v)) {
        push_number(L, v->valuedouble);
    } else if (cJSON_IsString(v)) {
        lua_pushstring(L, v->valuestring);
    } else if (cJSON_IsBool(v)) {
        lua_pushboolean(L, cJSON_IsTrue(v));
    } else {
        lua_pushnil(L);
    }
}

void ljson_push(lua_State *L, const cJSON *v)
{
    push_depth(L, v, 0);
}
