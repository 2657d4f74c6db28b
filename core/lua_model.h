/*
 * lua_model.h - the frozen model as rules see it: Lua tables built once
 * per Lua state, each when a rule first reads it, and handed out as
 * read-only proxies. The shape is the one in docs/rules-engine.md and
 * docs/model.md (the same as `optipipe normalize --format json`). The
 * tables refer to the model: lmodel_reset before running over another one.
 */
#ifndef OP_CORE_LUA_MODEL_H
#define OP_CORE_LUA_MODEL_H

#include <stddef.h>

#include <lua.h>

#include "model.h"

/* Pushes the read-only table of run ri of m, building and caching it on
 * first use (the allocation is exempt from the memory cap). May raise. */
void lmodel_push_run(lua_State *L, const model *m, size_t ri);

/* Pushes the read-only { runs = { run, ... } } given to sources = {"*"}
 * rules: every run but the superseded ones (those are in their newest
 * run's history). May raise. */
void lmodel_push_bundle(lua_State *L, const model *m);

/* Forgets every cached table (before running over another model), makes
 * tables a rule may still hold ordinary ones that never read the old model
 * again, and collects garbage. May raise. */
void lmodel_reset(lua_State *L);

/* The index in m->runs of the run table at idx (as pushed by
 * lmodel_push_run), or SIZE_MAX. Never raises. */
size_t lmodel_run_index(lua_State *L, int idx);

#endif
