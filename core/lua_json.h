/*
 * lua_json.h - converting between Lua values and cJSON: rule options
 * (declared in Lua, stored as cJSON, handed back to each call as a fresh
 * table) and the contents of ctx.report{} (evidence, changes, impact).
 */
#ifndef OP_CORE_LUA_JSON_H
#define OP_CORE_LUA_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>
#include <lua.h>

#define LJSON_MAX_DEPTH 32
/* Values (tables, array slots, scalars) one conversion makes at most, and
 * what each costs against the budget on top of its text (bytes). */
#define LJSON_MAX_NODES 200000u
#define LJSON_NODE_COST 16u

/*
 * Converts the value at idx into a new cJSON value (*out, owned by the
 * caller). Tables whose keys are exactly 1..n (n > 0) become arrays, other
 * tables objects with their keys sorted (strcmp); integer keys of objects
 * become decimal strings. Numbers that are not finite become null. Strings,
 * booleans and nested tables up to LJSON_MAX_DEPTH are accepted; functions
 * and the like are not. Read-only proxies are read through. The value must
 * be a tree: a table reached twice (shared or cyclic) is refused. *budget
 * (bytes, roughly the JSON size plus LJSON_NODE_COST per value) is
 * decreased and the conversion fails when it runs out or after
 * LJSON_MAX_NODES values. Reads raw (no metamethod runs) and never raises: returns 0, or -1
 * with a message naming the path (prefixed by `what`) in errbuf.
 */
int ljson_from_lua(lua_State *L, int idx, const char *what, size_t *budget,
                   cJSON **out, char *errbuf, size_t errlen);

/* Pushes a fresh Lua value for v: objects and arrays become new tables,
 * numbers that are whole (and exact in a double) integers, null nil.
 * May raise (memory). */
void ljson_push(lua_State *L, const cJSON *v);

#endif
