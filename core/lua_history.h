/*
 * lua_history.h - ctx.history for rules (docs/history.md, lua_history.c):
 * the earlier runs of a run's job, read from the run store the model
 * names (model.store_path).
 */
#ifndef OP_CORE_LUA_HISTORY_H
#define OP_CORE_LUA_HISTORY_H

#include <lua.h>

#include "model.h"

/* The body of ctx.history(run [, {limit = N}]) for a rule over m: pushes
 * the array (read-only, newest first; empty without a store) and returns
 * 1, or raises a Lua error naming the problem. Tables are allocated under
 * the sandbox memory cap. */
int lhist_call(lua_State *L, const model *m);

/* The body of ctx.node_history(run [, {metric =, limit =, status =,
 * runs =}]): { [node id] = { value newest, ..., value oldest } } over the
 * same earlier runs as ctx.history, read from the store one run at a time
 * by one statement (docs/history.md). Read-only, under the sandbox memory
 * cap; raises a Lua error naming the problem. */
int lhist_node_history(lua_State *L, const model *m);

#endif
