/*
 * luajson.c - Lua <-> cJSON conversion with raw table access, sorted keys
 * (so evidence and options print in a stable order) and a depth bound.
 */
#include "luajson.h"

#include <lauxlib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LUAJSON_MAX_DEPTH 32

static cJSON *convert(lua_State *L, int idx, int depth, op_error *err);

/* Number of elements if the table at idx is a sequence 1..n, else -1. */
static long long seq_len(lua_State *L, int idx)
{
    long long n = 0, max = 0;

    lua_pushnil(L);
    while (lua_next(L, idx)) {
        lua_pop(L, 1);
        if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1) {
            lua_pop(L, 1);
            return -1;
        }
        if (lua_tointeger(L, -1) > max)
            max = lua_tointeger(L, -1);
        n++;
    }
    return n == max ? n : -1;
}

static cJSON *convert_array(lua_State *L, int idx, long long n, int depth,
                            op_error *err)
{
    cJSON *arr = cJSON_CreateArray();
    long long i;

    if (!arr)
        goto oom;
    for (i = 1; i <= n; i++) {
        cJSON *item;
        lua_rawgeti(L, idx, i);
        item = convert(L, lua_gettop(L), depth + 1, err);
        lua_pop(L, 1);
        if (!item) {
            cJSON_Delete(arr);
            return NULL;
        }
        cJSON_AddItemToArray(arr, item);
    }
    return arr;
oom:
    op_error_set(err, OP_ENOMEM, "out of memory");
    return NULL;
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collects the table's keys as strings (strings and integers only). */
static char **collect_keys(lua_State *L, int idx, size_t *count,
                           op_error *err)
{
    char **keys = NULL, **p;
    size_t n = 0, cap = 0;
    char buf[32];

    lua_pushnil(L);
    while (lua_next(L, idx)) {
        const char *k;
        lua_pop(L, 1);
        if (lua_type(L, -1) == LUA_TSTRING) {
            k = lua_tostring(L, -1);
        } else if (lua_isinteger(L, -1)) {
            snprintf(buf, sizeof buf, "%lld", (long long)lua_tointeger(L, -1));
            k = buf;
        } else {
            lua_pop(L, 1);
            op_error_set(err, OP_EPARSE, "table keys must be strings");
            goto fail;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 8;
            p = realloc(keys, cap * sizeof *p);
            if (!p) {
                lua_pop(L, 1);
                goto oom;
            }
            keys = p;
        }
        if (!(keys[n] = strdup(k))) {
            lua_pop(L, 1);
            goto oom;
        }
        n++;
    }
    qsort(keys, n, sizeof *keys, key_cmp);
    *count = n;
    return keys ? keys : calloc(1, sizeof *keys);
oom:
    op_error_set(err, OP_ENOMEM, "out of memory");
fail:
    while (n)
        free(keys[--n]);
    free(keys);
    return NULL;
}

static void push_key(lua_State *L, const char *k)
{
    char *end;
    long long v = strtoll(k, &end, 10);

    /* integer-looking keys were integers: look them up as such */
    if (*k && !*end && (k[0] != '0' || !k[1]))
        lua_pushinteger(L, (lua_Integer)v);
    else
        lua_pushstring(L, k);
}

static cJSON *convert_object(lua_State *L, int idx, int depth, op_error *err)
{
    size_t n = 0, i;
    char **keys = collect_keys(L, idx, &n, err);
    cJSON *obj = keys ? cJSON_CreateObject() : NULL;

    if (keys && !obj)
        op_error_set(err, OP_ENOMEM, "out of memory");
    for (i = 0; obj && i < n; i++) {
        cJSON *item;
        push_key(L, keys[i]);
        lua_rawget(L, idx);
        if (lua_isnil(L, -1)) { /* "1" as a string key */
            lua_pop(L, 1);
            lua_pushstring(L, keys[i]);
            lua_rawget(L, idx);
        }
        item = convert(L, lua_gettop(L), depth + 1, err);
        lua_pop(L, 1);
        if (!item) {
            cJSON_Delete(obj);
            obj = NULL;
            break;
        }
        cJSON_AddItemToObject(obj, keys[i], item);
    }
    for (i = 0; keys && i < n; i++)
        free(keys[i]);
    free(keys);
    return obj;
}

static cJSON *convert(lua_State *L, int idx, int depth, op_error *err)
{
    cJSON *v = NULL;
    long long n;

    if (depth > LUAJSON_MAX_DEPTH) {
        op_error_set(err, OP_ELIMIT, "tables nested deeper than %d",
                     LUAJSON_MAX_DEPTH);
        return NULL;
    }
    switch (lua_type(L, idx)) {
    case LUA_TNIL: v = cJSON_CreateNull(); break;
    case LUA_TBOOLEAN: v = cJSON_CreateBool(lua_toboolean(L, idx)); break;
    case LUA_TNUMBER: v = cJSON_CreateNumber(lua_tonumber(L, idx)); break;
    case LUA_TSTRING: v = cJSON_CreateString(lua_tostring(L, idx)); break;
    case LUA_TTABLE:
        if (!lua_checkstack(L, 4)) {
            op_error_set(err, OP_ENOMEM, "Lua stack exhausted");
            return NULL;
        }
        n = seq_len(L, idx);
        return n >= 0 ? convert_array(L, idx, n, depth, err)
                      : convert_object(L, idx, depth, err);
    default:
        op_error_set(err, OP_EPARSE, "a %s cannot be converted to data",
                     luaL_typename(L, idx));
        return NULL;
    }
    if (!v)
        op_error_set(err, OP_ENOMEM, "out of memory");
    return v;
}

cJSON *luajson_to_cjson(lua_State *L, int idx, op_error *err)
{
    return convert(L, lua_absindex(L, idx), 0, err);
}

void luajson_push(lua_State *L, const cJSON *v)
{
    const cJSON *c;
    lua_Integer i = 1;

    if (!lua_checkstack(L, 3)) {
        lua_pushnil(L);
        return;
    }
    if (cJSON_IsBool(v)) {
        lua_pushboolean(L, cJSON_IsTrue(v));
    } else if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d == floor(d) && fabs(d) < 9007199254740992.0)
            lua_pushinteger(L, (lua_Integer)d);
        else
            lua_pushnumber(L, d);
    } else if (cJSON_IsString(v)) {
        lua_pushstring(L, v->valuestring);
    } else if (cJSON_IsArray(v)) {
        lua_createtable(L, cJSON_GetArraySize(v), 0);
        cJSON_ArrayForEach(c, v) {
            luajson_push(L, c);
            lua_rawseti(L, -2, i++);
        }
    } else if (cJSON_IsObject(v)) {
        lua_createtable(L, 0, cJSON_GetArraySize(v));
        cJSON_ArrayForEach(c, v) {
            luajson_push(L, c);
            lua_setfield(L, -2, c->string);
        }
    } else {
        lua_pushnil(L);
    }
}
