/*
 * luajson.h - converting Lua values to cJSON: rule options, findings and
 * rule test files all cross from Lua to C this way.
 */
#ifndef OP_CORE_LUAJSON_H
#define OP_CORE_LUAJSON_H

#include <cjson/cJSON.h>
#include <lua.h>
#include <optipipe/common.h>

/*
 * Converts the value at idx to a new cJSON value (caller frees). Tables
 * whose keys are exactly 1..n become arrays (an empty table becomes an
 * empty array); other tables become objects with keys in sorted order
 * (integer keys written as decimal strings). Functions, userdata, threads
 * and nesting deeper than 32 are errors. Uses raw access only, so no
 * metamethod runs. Returns NULL with err set on error or out of memory.
 * Must be called with room for 4 stack slots; leaves the stack as found.
 */
cJSON *luajson_to_cjson(lua_State *L, int idx, op_error *err);

/* Pushes a Lua value for v (objects and arrays become tables). */
void luajson_push(lua_State *L, const cJSON *v);

#endif
