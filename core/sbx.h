/*
 * sbx.h - the Lua sandbox: one lua_State per rule pack (trust domain) with
 * a capped allocator, an instruction and wall-clock budget per call, a
 * reduced standard library, read-only proxies and a restricted require.
 *
 * Everything rule-specific (metadata, ctx, findings) lives in lua_rule.c;
 * this file only knows how to run untrusted Lua safely. The design is in
 * docs/sandbox.md.
 */
#ifndef OP_CORE_SBX_H
#define OP_CORE_SBX_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include <lua.h>

#include <optipipe/common.h>

/* Why a call failed. SBX_ELUA is an ordinary error raised by the code; the
 * others are limits, after which the engine stops running that rule. */
enum sbx_fail {
    SBX_OK = 0,
    SBX_ELUA = 1,   /* error() or a runtime error; reason has a traceback */
    SBX_ESTEPS = 2, /* "instruction budget exceeded" */
    SBX_EMEM = 3,   /* "memory cap exceeded" */
    SBX_ETIME = 4,  /* "timeout" */
    SBX_EHOST = 5   /* the host itself ran out of memory */
};

#define SBX_REASON_STEPS "instruction budget exceeded"
#define SBX_REASON_MEM "memory cap exceeded"
#define SBX_REASON_TIME "timeout"

/* Longest failure reason kept (bytes, tracebacks are cut there). */
#define SBX_REASON_MAX 4096

typedef struct sbx_config {
    size_t mem_bytes;        /* cap on what Lua allocates; 0 = none */
    const char *sdk_lua_dir; /* "optipipe.<name>" -> <dir>/optipipe/<name>.lua; may be NULL */
    const char *pack_dir;    /* "<name>" -> <dir>/lib/<name>.lua; may be NULL */
} sbx_config;

typedef struct sbx sbx;

/* Creates a sandboxed state (paths are copied). NULL with err on failure. */
sbx *sbx_new(const sbx_config *cfg, op_error *err);

/* Closes the state under the given budget (a finalizer cannot run away)
 * and frees s. Accepts NULL. */
void sbx_free(sbx *s, uint64_t instructions, unsigned timeout_ms);

lua_State *sbx_lua(sbx *s);

/* The rule currently running, used to prefix print()/ctx.log output.
 * label is borrowed and must outlive the call. */
void sbx_set_label(sbx *s, const char *label);
const char *sbx_label(const sbx *s);

/* An opaque pointer for the layer above (the current rule call). */
void sbx_set_user(sbx *s, void *user);
void *sbx_user(const sbx *s);
sbx *sbx_of(lua_State *L);

/* Arms the budget for the next call: 0 disables a limit. */
void sbx_arm(sbx *s, uint64_t instructions, unsigned timeout_ms);
/* Removes the budget (host code between calls). */
void sbx_disarm(sbx *s);

/* While exempt, allocations do not count against the cap (used while the
 * host builds the model tables; see docs/sandbox.md "memory"). Returns
 * the previous setting, so that nested builders can restore it. */
int sbx_exempt(sbx *s, int on);
/* Forgets every exemption after the exempt data became garbage. */
void sbx_reset_exempt(sbx *s);
size_t sbx_mem_used(const sbx *s);

/*
 * Calls the function below nargs arguments on the stack with a traceback
 * handler, like lua_pcall. Returns SBX_OK or an sbx_fail; on failure
 * *reason (malloc'd, may be NULL on OOM) says why: one of the SBX_REASON_*
 * strings or the Lua message with its traceback. The stack is left as
 * lua_pcall leaves it, minus the error object.
 */
int sbx_pcall(sbx *s, int nargs, int nresults, char **reason);

/* Runs fn(ud, ...) in protected mode without budget: ud is passed as a
 * light userdata, followed by the nargs values on top of the stack (which
 * are consumed). Returns SBX_OK or an sbx_fail and *reason (malloc'd). */
int sbx_cpcall(sbx *s, lua_CFunction fn, void *ud, int nargs, int nresults,
               char **reason);

/* Pushes a fresh per-rule environment: an empty table whose _G is itself
 * and whose reads fall back to the read-only base library. May raise. */
void sbx_push_env(lua_State *L);

/* Replaces the table on top of the stack with a read-only proxy of it
 * (reads, #, pairs and ipairs work; writes raise). Nested tables are not
 * wrapped: callers build proxies bottom-up. May raise. */
void sbx_readonly(lua_State *L);

/* Like sbx_readonly, for host data that never changes once wrapped: # is
 * len without a call into the real table (0: no __len at all, which is
 * what # of a table without an array part gives anyway), and the real
 * table may be filled lazily (below). May raise. */
void sbx_readonly_fixed(lua_State *L, lua_Integer len);

/*
 * Lazily filled data: the real table behind a proxy may have a metatable
 * of its own, which no rule can reach. Its __index builds a missing entry
 * on first read (and stores it raw); sbx_mark_lazy(L, mt, complete) marks
 * such a metatable (at index mt) with a C function that complete(real)
 * builds every remaining entry and removes the metatable. The sandbox
 * calls it before any raw view of the table (pairs, next, rawlen,
 * sbx_unproxy), so a rule never sees a partial table; rawget goes through
 * the lazy __index. May raise.
 */
void sbx_mark_lazy(lua_State *L, int mt, lua_CFunction complete);

/* Pushes the table behind the proxy at idx (completed when lazy), or the
 * value itself when it is not a proxy. Never raises (completing a lazy
 * table that runs out of memory leaves it partial). Host code only: never
 * hand the result to Lua. */
void sbx_unproxy(lua_State *L, int idx);
int sbx_is_proxy(lua_State *L, int idx);

/*
 * Opens path (a rule file or module) for reading, but only a regular file
 * of at most max bytes whose real path (symlinks resolved, checked on the
 * file actually opened) lies inside the pack folder or the SDK folder of
 * s. *out (close it) and *size on success; otherwise -1 with msg naming
 * path. A symlink that stays inside those folders is fine.
 */
int sbx_open_file(const sbx *s, const char *path, size_t max, FILE **out,
                  size_t *size, char *msg, size_t msglen);

/* Whether path resolves (symlinks followed) inside folder dir: 0, or -1
 * with msg naming both. For data files of a pack read by other means
 * (rules test's *_test.lua); checked before reading, not on the open file. */
int sbx_path_inside(const char *dir, const char *path, char *msg,
                    size_t msglen);

/* Writes msg to stderr as one "[label] msg" line; control characters are
 * replaced and output per call is bounded (print, ctx.log). */
void sbx_log(sbx *s, const char *msg, size_t len);

/* Compiles a text chunk (never bytecode; a leading "#!" line is ignored)
 * named chunkname ("@path") into a function whose _ENV is the table on top
 * of the stack (popped). Pushes the function and returns 0, or returns
 * nonzero with the message pushed. buf is modified (the "#!" line). */
int sbx_load_text(lua_State *L, char *buf, size_t n,
                  const char *chunkname);

/* Test hook: called by an isolated worker before each rule call with the
 * rule id (NULL in production); lets tests make a worker die. */
extern void (*sbx_worker_test_hook)(const char *rule_id);

#endif
