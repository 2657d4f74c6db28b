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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sbx.h"

#define PATH_MAX_LEN 200

typedef struct conv {
    lua_State *L;
    size_t *budget;
    int depth;
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

    memset(&c, 0, sizeof c);
    c.L = L;
    c.budget = budget;
    c.err = errbuf;
    c.errlen = errlen;
    snprintf(c.path, sizeof c.path, "%s", what ? what : "value");
    *out = NULL;
    return conv_value(&c, lua_absindex(L, idx), out);
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
