/*
 * sbx.c - the Lua sandbox (see sbx.h and docs/sandbox.md).
 *
 * Defences, each for a known way out of a Lua sandbox:
 *  - a limiting lua_Alloc (memory bombs), a count hook that checks the
 *    instruction budget and the wall clock and re-arms itself at count 1
 *    once tripped, so a pcall inside the rule cannot swallow the error;
 *  - only base/string/table/math/utf8 and three os functions; no io,
 *    debug, package, dofile, loadfile, string.dump; load is text-only with
 *    a safe environment; setmetatable refuses __gc; the string metatable
 *    is locked;
 *  - every rule gets its own _ENV falling back to a base table that no
 *    rule can reach, whose library tables are read-only proxies;
 *  - require only reads "optipipe.<name>" from the SDK folder and "<name>"
 *    from the pack's lib/ folder, text-only, cached per state.
 */
#include "sbx.h"
#include "diag.h"
#include "util.h"

#include <lauxlib.h>
#include <lualib.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SBX_QUANTUM 1000           /* VM instructions between hook calls */
#define SBX_MODULE_MAX (4u << 20)  /* largest module file require reads */
#define SBX_LOG_LINES 200          /* print/log lines per call */
#define SBX_LOG_LINE_MAX 2000      /* bytes per printed line */
#define SBX_NAME_MAX 64            /* module name length */

void (*sbx_worker_test_hook)(const char *rule_id) = NULL;

struct sbx {
    lua_State *L;
    size_t used;         /* bytes Lua holds */
    size_t limit;        /* cap; 0 = none */
    size_t exempt_bytes; /* allocated while exempt: added to the cap */
    int exempt;
    uint64_t steps, step_limit;
    int quantum;
    uint64_t deadline_ns; /* 0 = none */
    int armed;            /* a rule call is running */
    int tripped;          /* sticky enum sbx_fail of this call */
    int rearmed;
    int mem_hit;          /* the cap refused an allocation in this call */
    int fail_pending;     /* last growth failed; Lua retries it once */
    size_t fail_size;
    unsigned log_lines;
    int warn_cont;        /* a warn() message is being continued (per state) */
    const char *label;
    void *user;
    char *sdk_dir, *pack_dir;
    char *sdk_real, *pack_real; /* the folders with symlinks resolved */
};

/* Registry keys: addresses, so no Lua code can name them. */
static const char k_base = 0, k_envmt = 0, k_loaded = 0, k_loading = 0,
                  k_trips = 0, k_lazy = 0, k_lens = 0;

sbx *sbx_of(lua_State *L)
{
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return ud;
}

lua_State *sbx_lua(sbx *s) { return s->L; }
void sbx_set_label(sbx *s, const char *label) { s->label = label; }
const char *sbx_label(const sbx *s) { return s->label; }
void sbx_set_user(sbx *s, void *user) { s->user = user; }
void *sbx_user(const sbx *s) { return s->user; }
size_t sbx_mem_used(const sbx *s) { return s->used; }

/* ---- limits -------------------------------------------------------------- */

static void sbx_hook(lua_State *L, lua_Debug *ar);

static const char *trip_reason(int kind)
{
    switch (kind) {
    case SBX_ESTEPS: return SBX_REASON_STEPS;
    case SBX_EMEM: return SBX_REASON_MEM;
    default: return SBX_REASON_TIME;
    }
}

/* From here on every VM instruction of this call raises the error, so a
 * pcall in the rule only delays the end by one instruction. */
static void trip(sbx *s, int kind)
{
    if (!s->tripped)
        s->tripped = kind;
    if (!s->rearmed && s->L) {
        s->rearmed = 1;
        lua_sethook(s->L, sbx_hook, LUA_MASKCOUNT, 1);
    }
}

static void sbx_hook(lua_State *L, lua_Debug *ar)
{
    sbx *s = sbx_of(L);

    (void)ar;
    if (!s->armed)
        return;
    if (!s->tripped) {
        s->steps += (uint64_t)s->quantum;
        if (s->step_limit && s->steps >= s->step_limit)
            trip(s, SBX_ESTEPS);
        else if (s->deadline_ns && util_now_ns() >= s->deadline_ns)
            trip(s, SBX_ETIME);
    }
    if (s->tripped) {
        /* The three reasons are anchored in the registry (interned short
         * strings), so pushing one does not allocate. */
        lua_pushstring(L, trip_reason(s->tripped));
        lua_error(L);
    }
}

/* A refusal trips the call at once: some paths (luaL_Buffer) raise "not
 * enough memory" as an ordinary error that a pcall in the rule could catch.
 * But lmem.c retries a refused growth once, with the same size, after a
 * full collection; when that retry succeeds, nothing was exceeded after
 * all, and the trip is undone (see mem_granted). */
static void mem_refused(sbx *s, size_t nsz)
{
    s->mem_hit = 1;
    if (s->armed && !s->tripped) {
        trip(s, SBX_EMEM);
        s->fail_pending = 1;
        s->fail_size = nsz;
    }
}

/* The count hook makes the VM stop at every instruction (about a third of
 * the time of a typical rule, docs/sandbox.md "Performance"), so it is set
 * only while a call runs under an instruction or time limit. */
static void budget_hook(sbx *s)
{
    if (s->armed && (s->step_limit || s->deadline_ns))
        lua_sethook(s->L, sbx_hook, LUA_MASKCOUNT, s->quantum);
    else
        lua_sethook(s->L, NULL, 0, 0);
}

static void mem_granted(sbx *s, size_t nsz)
{
    if (s->fail_pending && s->fail_size == nsz && s->tripped == SBX_EMEM) {
        s->tripped = 0;
        s->rearmed = 0;
        budget_hook(s);
    }
    s->fail_pending = 0;
}

static void *sbx_alloc(void *ud, void *p, size_t osz, size_t nsz)
{
    sbx *s = ud;
    void *q;

    if (!p)
        osz = 0; /* osz is a type tag for new objects */
    if (nsz == 0) {
        free(p);
        s->used -= osz;
        return NULL;
    }
    if (nsz > osz) {
        size_t grow = nsz - osz;
        if (s->exempt)
            s->exempt_bytes += grow;
        else if (s->limit && s->used + grow > s->limit + s->exempt_bytes) {
            mem_refused(s, nsz);
            return NULL;
        }
    }
    q = p ? realloc(p, nsz) : malloc(nsz);
    if (!q)
        return NULL;
    s->used = s->used - osz + nsz;
    if (nsz > osz && s->fail_pending)
        mem_granted(s, nsz);
    return q;
}

void sbx_arm(sbx *s, uint64_t instructions, unsigned timeout_ms)
{
    s->steps = 0;
    s->step_limit = instructions;
    s->quantum = instructions && instructions < SBX_QUANTUM ? (int)instructions
                                                            : SBX_QUANTUM;
    s->deadline_ns =
        timeout_ms ? util_now_ns() + (uint64_t)timeout_ms * 1000000u : 0;
    s->tripped = 0;
    s->rearmed = 0;
    s->mem_hit = 0;
    s->fail_pending = 0;
    s->log_lines = 0;
    s->armed = 1;
    budget_hook(s);
}

void sbx_disarm(sbx *s)
{
    s->armed = 0;
    s->tripped = 0;
    budget_hook(s);
}

int sbx_exempt(sbx *s, int on)
{
    int prev = s->exempt;

    s->exempt = on;
    return prev;
}
void sbx_reset_exempt(sbx *s) { s->exempt_bytes = 0; }

/* ---- protected calls ------------------------------------------------------ */

static int sbx_msgh(lua_State *L)
{
    sbx *s = sbx_of(L);
    const char *msg;

    if (s->tripped)
        return 1; /* the reason is all that matters; allocate nothing */
    if (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER)
        msg = lua_tostring(L, 1);
    else /* never call a __tostring of a hostile error object here */
        msg = lua_pushfstring(L, "(error object is a %s value)",
                              luaL_typename(L, 1));
    luaL_traceback(L, L, msg, 1);
    return 1;
}

static char *dup_reason(const char *msg, size_t len)
{
    char *r;

    if (len > SBX_REASON_MAX)
        len = SBX_REASON_MAX;
    r = malloc(len + 1);
    if (r) {
        memcpy(r, msg, len);
        r[len] = '\0';
    }
    return r;
}

/* Turns a failed lua_pcall (error object on top) into a kind and reason. */
static int classify(sbx *s, int st, char **reason)
{
    lua_State *L = s->L;
    size_t len = 0;
    const char *msg;
    int kind;

    if (s->tripped)
        kind = s->tripped;
    else if (st == LUA_ERRMEM)
        kind = s->mem_hit ? SBX_EMEM : SBX_EHOST;
    else
        kind = SBX_ELUA;
    if (kind == SBX_ELUA) {
        msg = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len)
                                             : NULL;
        if (!msg) {
            msg = "(error object is not a string)";
            len = strlen(msg);
        }
    } else if (kind == SBX_EHOST) {
        msg = "not enough memory";
        len = strlen(msg);
    } else {
        msg = trip_reason(kind);
        len = strlen(msg);
    }
    if (reason)
        *reason = dup_reason(msg, len);
    lua_pop(L, 1);
    return kind;
}

int sbx_pcall(sbx *s, int nargs, int nresults, char **reason)
{
    lua_State *L = s->L;
    int base = lua_gettop(L) - nargs; /* the function */
    int st;

    if (reason)
        *reason = NULL;
    lua_pushcfunction(L, sbx_msgh); /* light C function: no allocation */
    lua_insert(L, base);
    st = lua_pcall(L, nargs, nresults, base);
    lua_remove(L, base);
    if (st == LUA_OK)
        return SBX_OK;
    return classify(s, st, reason);
}

int sbx_cpcall(sbx *s, lua_CFunction fn, void *ud, int nargs, int nresults,
               char **reason)
{
    lua_State *L = s->L;
    int st;

    if (reason)
        *reason = NULL;
    if (!lua_checkstack(L, 3 + (nresults > 0 ? nresults : 0))) {
        lua_pop(L, nargs);
        if (reason)
            *reason = dup_reason("Lua stack overflow", 18);
        return SBX_EHOST;
    }
    lua_pushcfunction(L, fn);
    lua_insert(L, -(nargs + 1));
    lua_pushlightuserdata(L, ud);
    lua_insert(L, -(nargs + 1));
    st = lua_pcall(L, nargs + 1, nresults, 0);
    if (st == LUA_OK)
        return SBX_OK;
    return classify(s, st, reason);
}

/* ---- read-only proxies ---------------------------------------------------- */

/*
 * A proxy is an empty table whose own metatable has __index = the real
 * table, so a read costs the VM two extra table lookups and no call. Model
 * proxies (sbx_readonly_fixed) also answer # from a closure holding the
 * length, and ipairs walks their real table directly (sb_ipairs): the two
 * things a rule does per node that used to go through a C call into the
 * proxy's metatable. See docs/sandbox.md "Performance".
 */

#define SBX_LEN_CACHE 256 /* __len closures shared for lengths below this */

static int ro_newindex(lua_State *L);

/* Pushes the table behind proxy idx and returns 1, or pushes nothing and
 * returns 0. A proxy is recognised by its __newindex, a C function no Lua
 * code can obtain (getmetatable gives "read-only"). Raw accesses: never
 * raises. */
static int proxy_real(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (lua_type(L, idx) != LUA_TTABLE || !lua_checkstack(L, 3) ||
        !lua_getmetatable(L, idx))
        return 0;
    lua_pushliteral(L, "__newindex");
    lua_rawget(L, -2);
    if (lua_tocfunction(L, -1) != ro_newindex) {
        lua_pop(L, 2);
        return 0;
    }
    lua_pop(L, 1);
    lua_pushliteral(L, "__index");
    lua_rawget(L, -2);
    lua_remove(L, -2);
    return 1;
}

int sbx_is_proxy(lua_State *L, int idx)
{
    if (!proxy_real(L, idx))
        return 0;
    lua_pop(L, 1);
    return 1;
}

/* Pushes the completer of the lazily filled real table at idx and returns
 * 1, or returns 0 (pushing nothing) when the table is complete. */
static int push_completer(lua_State *L, int idx)
{
    if (!lua_getmetatable(L, idx))
        return 0;
    if (lua_rawgetp(L, -1, &k_lazy) != LUA_TFUNCTION) {
        lua_pop(L, 2);
        return 0;
    }
    lua_remove(L, -2);
    return 1;
}

/* Like proxy_real, but the table pushed is complete. May raise. */
static int proxy_whole(lua_State *L, int idx)
{
    if (!proxy_real(L, idx))
        return 0;
    if (push_completer(L, -1)) {
        lua_pushvalue(L, -2);
        lua_call(L, 1, 0);
    }
    return 1;
}

void sbx_mark_lazy(lua_State *L, int mt, lua_CFunction complete)
{
    mt = lua_absindex(L, mt);
    lua_pushcfunction(L, complete);
    lua_rawsetp(L, mt, &k_lazy);
}

void sbx_unproxy(lua_State *L, int idx)
{
    idx = lua_absindex(L, idx);
    if (!proxy_real(L, idx)) {
        lua_pushvalue(L, idx);
        return;
    }
    if (lua_checkstack(L, 3) && push_completer(L, -1)) {
        lua_pushvalue(L, -2);
        if (lua_pcall(L, 1, 0, 0) != LUA_OK)
            lua_pop(L, 1); /* out of memory: the table stays partial */
    }
}

static int ro_newindex(lua_State *L)
{
    if (lua_type(L, 2) == LUA_TSTRING)
        return luaL_error(L, "attempt to modify read-only field '%s'",
                          lua_tostring(L, 2));
    return luaL_error(L, "attempt to modify a read-only table");
}

/* # of a proxy whose real table may change (a module's own table). */
static int ro_len(lua_State *L)
{
    if (!proxy_whole(L, 1))
        return luaL_error(L, "not a read-only table");
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, -1));
    return 1;
}

/* # of a proxy of fixed data: the length is the closure's upvalue. */
static int ro_fixed_len(lua_State *L)
{
    lua_pushvalue(L, lua_upvalueindex(1));
    return 1;
}

/* Pushes the __len closure for len, shared for small lengths. */
static void push_fixed_len(lua_State *L, lua_Integer len)
{
    int cached = len < SBX_LEN_CACHE;

    if (cached) {
        lua_rawgetp(L, LUA_REGISTRYINDEX, &k_lens);
        if (lua_rawgeti(L, -1, len) == LUA_TFUNCTION) {
            lua_remove(L, -2);
            return;
        }
        lua_pop(L, 1);
    }
    lua_pushinteger(L, len);
    lua_pushcclosure(L, ro_fixed_len, 1);
    if (cached) {
        lua_pushvalue(L, -1);
        lua_rawseti(L, -3, len);
        lua_remove(L, -2);
    }
}

/* The iterator pairs() gets: the real table is its upvalue, which no rule
 * can read (no debug library), so it stays unreachable and unwritable. */
static int ro_next(lua_State *L)
{
    lua_settop(L, 2);
    if (lua_next(L, lua_upvalueindex(1)))
        return 2;
    lua_pushnil(L);
    return 1;
}

/* Wraps the table on top: fixed < 0 gives a dynamic __len, otherwise # is
 * fixed (no __len when it is 0). The metatable holds three or four
 * entries: pairs, next, rawget and rawlen know proxies by themselves. */
static void make_proxy(lua_State *L, lua_Integer fixed)
{
    luaL_checkstack(L, 4, "read-only proxy");
    lua_createtable(L, 0, 0);
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, ro_newindex);
    lua_setfield(L, -2, "__newindex");
    if (fixed != 0) {
        if (fixed < 0)
            lua_pushcfunction(L, ro_len);
        else
            push_fixed_len(L, fixed);
        lua_setfield(L, -2, "__len");
    }
    lua_pushliteral(L, "read-only");
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_remove(L, -2);
}

void sbx_readonly(lua_State *L)
{
    if (!sbx_is_proxy(L, -1))
        make_proxy(L, -1);
}

void sbx_readonly_fixed(lua_State *L, lua_Integer len)
{
    make_proxy(L, len > 0 ? len : 0);
}

/* ---- the replaced base functions ------------------------------------------ */

static int sb_next(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    if (proxy_whole(L, 1))
        lua_replace(L, 1);
    if (lua_next(L, 1))
        return 2;
    lua_pushnil(L);
    return 1;
}

/* pairs as in the base library (a __pairs metamethod is honoured), except
 * that a proxy is walked through a closure over its whole real table. */
static int sb_pairs(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    if (proxy_whole(L, 1)) {
        lua_pushcclosure(L, ro_next, 1);
        lua_pushvalue(L, 1);
        lua_pushnil(L);
    } else if (luaL_getmetafield(L, 1, "__pairs") != LUA_TNIL) {
        lua_pushvalue(L, 1);
        lua_call(L, 1, 3);
    } else {
        lua_pushcfunction(L, sb_next);
        lua_pushvalue(L, 1);
        lua_pushnil(L);
    }
    return 3;
}

/* rawget(proxy, k) reads the real table; a lazily filled one through its
 * __index, which only builds what a complete table would hold. */
static int sb_rawget(lua_State *L)
{
    int lazy;

    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    lua_settop(L, 2);
    if (!proxy_real(L, 1)) {
        lua_rawget(L, 1);
        return 1;
    }
    lua_replace(L, 1);
    lazy = push_completer(L, 1);
    lua_settop(L, 2);
    if (lazy)
        lua_gettable(L, 1);
    else
        lua_rawget(L, 1);
    return 1;
}

static int sb_rawlen(lua_State *L)
{
    int t = lua_type(L, 1);

    luaL_argexpected(L, t == LUA_TTABLE || t == LUA_TSTRING, 1,
                     "table or string");
    lua_settop(L, 1);
    if (proxy_whole(L, 1))
        lua_replace(L, 1);
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, 1));
    return 1;
}

/* ipairs as in the base library, except that over a proxy it reads the
 * real table directly (one C call per step instead of the proxy's
 * __index chain); the real table is the iterator's upvalue, unreachable
 * from Lua. A lazily filled table still builds entries on first read. */
static int ipairs_step(lua_State *L, int t)
{
    lua_Integer i = luaL_checkinteger(L, 2);

    i = (lua_Integer)((lua_Unsigned)i + 1u);
    lua_pushinteger(L, i);
    return lua_geti(L, t, i) == LUA_TNIL ? 1 : 2;
}

static int ipairs_plain(lua_State *L) { return ipairs_step(L, 1); }

static int ipairs_real(lua_State *L)
{
    return ipairs_step(L, lua_upvalueindex(1));
}

static int sb_ipairs(lua_State *L)
{
    luaL_checkany(L, 1);
    lua_settop(L, 1);
    if (proxy_real(L, 1))
        lua_pushcclosure(L, ipairs_real, 1);
    else
        lua_pushcfunction(L, ipairs_plain);
    lua_pushvalue(L, 1);
    lua_pushinteger(L, 0);
    return 3;
}

static int sb_rawset(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    if (sbx_is_proxy(L, 1))
        return luaL_error(L, "rawset: the table is read-only");
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

/* A __gc metamethod would run later, outside the budget of the rule that
 * set it (inside another rule or lua_close), so it is refused. */
static int sb_setmetatable(lua_State *L)
{
    int t = lua_type(L, 2);

    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
    lua_settop(L, 2);
    if (t == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL)
            return luaL_error(L, "setmetatable: __gc metamethods are not "
                                 "allowed in rules");
        lua_pop(L, 1);
    }
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
        return luaL_error(L, "cannot change a protected metatable");
    lua_setmetatable(L, 1);
    return 1;
}

/* xpcall(f, handler, ...) without installing handler as a message
 * handler: Lua calls message handlers with hooks disabled when the error
 * came from a hook (our budget error), so a looping handler would run
 * unbounded. The handler is called afterwards instead, as ordinary code
 * under the budget; rules lose only the error-point stack, which they
 * could not inspect anyway (no debug library). */
static int sb_xpcall(lua_State *L)
{
    int n = lua_gettop(L) - 2, i;

    luaL_checktype(L, 2, LUA_TFUNCTION);
    luaL_checkstack(L, n + 3, "xpcall");
    lua_pushvalue(L, 1);
    for (i = 3; i < n + 3; i++)
        lua_pushvalue(L, i);
    if (lua_pcall(L, n, LUA_MULTRET, 0) == LUA_OK) {
        lua_pushboolean(L, 1);
        lua_insert(L, n + 3);
        return lua_gettop(L) - (n + 2);
    }
    lua_pushvalue(L, 2);
    lua_insert(L, -2);
    lua_pcall(L, 1, 1, 0); /* the handler's result, or its own error */
    lua_pushboolean(L, 0);
    lua_insert(L, -2);
    return 2;
}

static int sb_collectgarbage(lua_State *L)
{
    const char *opt = luaL_optstring(L, 1, "collect");

    if (strcmp(opt, "count") == 0) {
        lua_pushnumber(L, (lua_Number)sbx_of(L)->used / 1024.0);
        return 1;
    }
    lua_pushinteger(L, 0); /* a harmless no-op: rules cannot steer the GC */
    return 1;
}

/* load(chunk [, chunkname [, mode [, env]]]): strings only, always text
 * mode, and without env a fresh sandbox environment (never the globals). */
static int sb_load(lua_State *L)
{
    size_t n;
    const char *src, *name;
    int st;

    if (lua_type(L, 1) != LUA_TSTRING)
        return luaL_argerror(L, 1, "string expected (rules may only load "
                                   "source text)");
    src = lua_tolstring(L, 1, &n);
    name = luaL_optstring(L, 2, src);
    if (lua_istable(L, 4))
        lua_pushvalue(L, 4);
    else
        sbx_push_env(L);
    st = luaL_loadbufferx(L, src, n, name, "t");
    if (st != LUA_OK) {
        luaL_pushfail(L);
        lua_insert(L, -2);
        return 2;
    }
    lua_insert(L, -2);
    lua_setupvalue(L, -2, 1);
    return 1;
}

/* Bytes of the control character at p (0 if none): C0 but tab (newlines
 * too, or a rule could forge log lines), DEL, C1 as UTF-8 (NEL...) and the
 * Unicode line and paragraph separators. */
static size_t ctrl_len(const unsigned char *p, size_t left)
{
    if ((p[0] < 0x20 && p[0] != '\t') || p[0] == 0x7f)
        return 1;
    if (left >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
        return 2;
    if (left >= 3 && p[0] == 0xe2 && p[1] == 0x80 &&
        (p[2] == 0xa8 || p[2] == 0xa9))
        return 3;
    return 0;
}

void sbx_log(sbx *s, const char *msg, size_t len)
{
    char line[SBX_LOG_LINE_MAX + 8];
    size_t i, n = 0;

    if (s->log_lines > SBX_LOG_LINES)
        return;
    if (s->log_lines++ == SBX_LOG_LINES) {
        diag_line(DIAG_OUTPUT, "[%s] (further output suppressed)",
                s->label ? s->label : "lua");
        return;
    }
    for (i = 0; i < len && n < SBX_LOG_LINE_MAX; i++) {
        size_t skip = ctrl_len((const unsigned char *)msg + i, len - i);
        line[n++] = skip ? '?' : msg[i];
        if (skip)
            i += skip - 1;
    }
    if (i < len) {
        memcpy(line + n, "...", 3);
        n += 3;
    }
    diag_line(DIAG_OUTPUT, "[%s] %.*s", s->label ? s->label : "lua", (int)n, line);
}

static int sb_print(lua_State *L)
{
    int i, n = lua_gettop(L);
    luaL_Buffer b;
    size_t len;
    const char *msg;

    luaL_buffinit(L, &b);
    for (i = 1; i <= n; i++) {
        if (i > 1)
            luaL_addchar(&b, '\t');
        luaL_tolstring(L, i, NULL);
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    msg = lua_tolstring(L, -1, &len);
    sbx_log(sbx_of(L), msg, len);
    return 0;
}

/* ---- require ----------------------------------------------------------------- */

static int valid_module_name(const char *s)
{
    size_t n = 0;

    for (; *s; s++, n++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return n > 0 && n <= SBX_NAME_MAX;
}

/* Fills path for name; returns 0 when name may not be required. */
static int module_path(const sbx *s, const char *name, char *path,
                       size_t cap)
{
    int n;

    if (strncmp(name, "optipipe.", 9) == 0) {
        if (!s->sdk_dir || !valid_module_name(name + 9))
            return 0;
        n = snprintf(path, cap, "%s/optipipe/%s.lua", s->sdk_dir, name + 9);
    } else {
        if (!s->pack_dir || !valid_module_name(name))
            return 0;
        n = snprintf(path, cap, "%s/lib/%s.lua", s->pack_dir, name);
    }
    return n > 0 && (size_t)n < cap;
}

/* Whether real (a resolved path) lies inside the resolved folder root. */
static int inside(const char *root, const char *real)
{
    size_t n = root ? strlen(root) : 0;

    return n && strncmp(real, root, n) == 0 &&
           (real[n] == '/' || (n == 1 && root[0] == '/'));
}

int sbx_path_inside(const char *dir, const char *path, char *msg,
                    size_t msglen)
{
    char *root = realpath(dir, NULL), real[PATH_MAX];
    int ok = root && realpath(path, real) && inside(root, real);

    free(root);
    if (!ok)
        snprintf(msg, msglen, "%s: refused: the file lies outside the folder "
                 "%s (a symlink may point only inside it)", path, dir);
    return ok ? 0 : -1;
}

int sbx_open_file(const sbx *s, const char *path, size_t max, FILE **out,
                  size_t *size, char *msg, size_t msglen)
{
    struct stat fst, rst;
    char real[PATH_MAX];
    int fd;

    *out = NULL;
    fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(msg, msglen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    /* The resolved name must be the very file opened: a path swapped
     * between the open and realpath() names another file and is refused. */
    if (fstat(fd, &fst) != 0 || !S_ISREG(fst.st_mode)) {
        snprintf(msg, msglen, "%s: not a regular file", path);
        goto fail;
    }
    if (!realpath(path, real) || stat(real, &rst) != 0 ||
        rst.st_dev != fst.st_dev || rst.st_ino != fst.st_ino ||
        !(inside(s->pack_real, real) || inside(s->sdk_real, real))) {
        snprintf(msg, msglen, "%s: refused: the file lies outside the pack "
                 "folder and the SDK folder (a symlink may point only "
                 "inside them)", path);
        goto fail;
    }
    if ((uintmax_t)fst.st_size > max) {
        snprintf(msg, msglen, "%s: larger than %zu bytes", path, max);
        goto fail;
    }
    *out = fdopen(fd, "rb");
    if (!*out) {
        snprintf(msg, msglen, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    *size = (size_t)fst.st_size;
    return 0;
fail:
    close(fd);
    return -1;
}

/* Reads path into a new full userdata (pushed); the size goes to *n. The
 * buffer is allocated before the file is opened, so that a memory error
 * (which raises) cannot leak the open file. */
static void push_file(lua_State *L, const char *name, const char *path,
                      size_t *n)
{
    char msg[PATH_MAX + 200];
    struct stat st;
    FILE *f;
    char *buf;
    size_t got, size;

    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        luaL_error(L, "module '%s' not found: no file '%s'", name, path);
    if ((uintmax_t)st.st_size > SBX_MODULE_MAX)
        luaL_error(L, "module '%s': file '%s' is larger than %d bytes", name,
                   path, (int)SBX_MODULE_MAX);
    buf = lua_newuserdatauv(L, (size_t)st.st_size + 1, 0);
    if (sbx_open_file(sbx_of(L), path, (size_t)st.st_size, &f, &size, msg,
                      sizeof msg))
        luaL_error(L, "module '%s': %s", name, msg);
    got = size == (size_t)st.st_size ? fread(buf, 1, size, f) : SIZE_MAX;
    fclose(f);
    if (got != size)
        luaL_error(L, "module '%s': cannot read '%s'", name, path);
    *n = size;
    buf[size] = '\0';
}

static int sb_require(lua_State *L)
{
    sbx *s = sbx_of(L);
    const char *name = luaL_checkstring(L, 1);
    char path[PATH_MAX];
    size_t n;
    int st;

    lua_settop(L, 1);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &k_loaded); /* 2: cache */
    lua_pushvalue(L, 1);
    if (lua_rawget(L, 2) != LUA_TNIL) {
        if (lua_touserdata(L, -1) == (void *)&k_loading)
            return luaL_error(L, "module '%s': require loop", name);
        return 1;
    }
    lua_pop(L, 1);
    if (!module_path(s, name, path, sizeof path))
        return luaL_error(L, "module '%s' not found: rules may require "
                             "\"optipipe.<name>\" (SDK) and \"<name>\" (the "
                             "pack's lib/ folder) only", name);
    push_file(L, name, path, &n); /* 3 */
    lua_pushfstring(L, "@%s", path); /* 4 */
    sbx_push_env(L);
    if (sbx_load_text(L, lua_touserdata(L, 3), n, lua_tostring(L, 4)))
        return lua_error(L);
    lua_pushvalue(L, 1);
    lua_pushlightuserdata(L, (void *)&k_loading);
    lua_rawset(L, 2);
    lua_pushvalue(L, 1);
    lua_pushstring(L, path);
    st = lua_pcall(L, 2, 1, 0);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    lua_rawset(L, 2); /* clear the loading mark either way */
    if (st != LUA_OK)
        return lua_error(L);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    if (lua_istable(L, -1)) /* the rules of a pack share it: read-only */
        sbx_readonly(L);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, -2);
    lua_rawset(L, 2);
    return 1;
}

/* ---- environments and setup ------------------------------------------------- */

void sbx_push_env(lua_State *L)
{
    luaL_checkstack(L, 3, "environment");
    lua_createtable(L, 0, 4);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "_G");
    lua_rawgetp(L, LUA_REGISTRYINDEX, &k_envmt);
    lua_setmetatable(L, -2);
}

int sbx_load_text(lua_State *L, char *buf, size_t n, const char *chunkname)
{
    int st;

    if (n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        buf += 3;
        n -= 3;
    }
    if (n >= 1 && buf[0] == '#') /* "#!" line: a comment, same line count */
        memcpy(buf, n >= 2 ? "--" : "-", n >= 2 ? 2 : 1);
    st = luaL_loadbufferx(L, buf, n, chunkname, "t");
    if (st != LUA_OK) {
        lua_remove(L, -2); /* the env */
        return st;
    }
    lua_insert(L, -2);
    lua_setupvalue(L, -2, 1);
    return 0;
}

/* Copies the named fields of table src (at -1 when called) into dst. */
static void copy_fields(lua_State *L, int dst, int src,
                        const char *const *names)
{
    for (; *names; names++) {
        lua_getfield(L, src, *names);
        lua_setfield(L, dst, *names);
    }
}

static void open_lib(lua_State *L, const char *name, lua_CFunction open)
{
    luaL_requiref(L, name, open, 0);
}

/* The base functions a rule gets in place of Lua's own. */
static const luaL_Reg base_fns[] = {
    {"print", sb_print},
    {"next", sb_next},
    {"ipairs", sb_ipairs},
    {"pairs", sb_pairs},
    {"rawget", sb_rawget},
    {"rawlen", sb_rawlen},
    {"rawset", sb_rawset},
    {"setmetatable", sb_setmetatable},
    {"collectgarbage", sb_collectgarbage},
    {"load", sb_load},
    {"xpcall", sb_xpcall},
    {"require", sb_require},
    {NULL, NULL}};

static int setup(lua_State *L)
{
    static const char *const base_names[] = {
        "assert", "error", "getmetatable", "pcall",
        "rawequal", "select", "tonumber", "tostring", "type", "_VERSION",
        NULL};
    static const char *const os_names[] = {"time", "clock", "date", NULL};
    static const char *const libs[] = {LUA_STRLIBNAME, LUA_TABLIBNAME,
                                       LUA_MATHLIBNAME, LUA_UTF8LIBNAME,
                                       NULL};
    const char *const *lib;
    int G, base, i;

    open_lib(L, LUA_GNAME, luaopen_base);
    G = lua_gettop(L);
    open_lib(L, LUA_STRLIBNAME, luaopen_string);
    lua_pushnil(L);
    lua_setfield(L, -2, "dump"); /* also gone from ("").dump */
    lua_pop(L, 1);
    open_lib(L, LUA_TABLIBNAME, luaopen_table);
    open_lib(L, LUA_MATHLIBNAME, luaopen_math);
    lua_getfield(L, -1, "randomseed"); /* deterministic unless a rule seeds */
    lua_pushinteger(L, 0);
    lua_call(L, 1, 0);
    open_lib(L, LUA_UTF8LIBNAME, luaopen_utf8);
    open_lib(L, LUA_OSLIBNAME, luaopen_os);
    lua_settop(L, G);

    /* Lock the string metatable: getmetatable("") now returns false. */
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);

    lua_createtable(L, 0, 40);
    base = lua_gettop(L);
    copy_fields(L, base, G, base_names);
    luaL_setfuncs(L, base_fns, 0);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    for (lib = libs; *lib; lib++) {
        lua_getfield(L, -1, *lib);
        sbx_readonly(L);
        lua_setfield(L, base, *lib);
    }
    lua_getfield(L, -1, LUA_OSLIBNAME);
    lua_createtable(L, 0, 3);
    copy_fields(L, lua_gettop(L), lua_gettop(L) - 1, os_names);
    sbx_readonly(L);
    lua_setfield(L, base, LUA_OSLIBNAME);
    lua_pop(L, 2);
    lua_pushvalue(L, base);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_base);

    lua_createtable(L, 0, 2); /* shared metatable of every environment */
    lua_pushvalue(L, base);
    lua_setfield(L, -2, "__index");
    lua_pushliteral(L, "sandbox");
    lua_setfield(L, -2, "__metatable");
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_envmt);

    lua_newtable(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_loaded);

    lua_createtable(L, SBX_LEN_CACHE, 0);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_lens);

    lua_createtable(L, 3, 0); /* keeps the trip reasons interned */
    for (i = SBX_ESTEPS; i <= SBX_ETIME; i++) {
        lua_pushstring(L, trip_reason(i));
        lua_rawseti(L, -2, i);
    }
    lua_rawsetp(L, LUA_REGISTRYINDEX, &k_trips);

    /* Defence in depth: whatever still reaches the registry globals (a C
     * function loading a chunk without env) gets a sandbox env too. */
    sbx_push_env(L);
    lua_rawseti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_pushnil(L);
    lua_setfield(L, -2, LUA_GNAME); /* _LOADED._G was the real globals */
    lua_settop(L, 0);
    return 0;
}

static int sbx_panic(lua_State *L)
{
    const char *msg = lua_tostring(L, -1);
    diag_msg(DIAG_ERROR, "unprotected Lua error: %s",
            msg ? msg : "(not a string)");
    abort();
    return 0;
}

static void sbx_warnf(void *ud, const char *msg, int tocont)
{
    sbx *s = ud;

    if (!s->warn_cont && *msg == '@')
        return; /* control message ("@on"/"@off") */
    if (!s->warn_cont)
        diag_part("[%s] warning: ", s->label ? s->label : "lua");
    diag_part("%s", msg);
    if (!tocont)
        fputc('\n', stderr);
    s->warn_cont = tocont;
}

sbx *sbx_new(const sbx_config *cfg, op_error *err)
{
    sbx *s = calloc(1, sizeof *s);
    char *reason = NULL;
    int oom = 0;

    if (!s)
        goto oom;
    s->limit = cfg->mem_bytes;
    s->sdk_dir = util_strdup(cfg->sdk_lua_dir, &oom);
    s->pack_dir = util_strdup(cfg->pack_dir, &oom);
    if (oom)
        goto oom;
    /* NULL when the folder does not resolve: nothing opens inside it. */
    s->sdk_real = cfg->sdk_lua_dir ? realpath(cfg->sdk_lua_dir, NULL) : NULL;
    s->pack_real = cfg->pack_dir ? realpath(cfg->pack_dir, NULL) : NULL;
    s->exempt = 1; /* the state and library are not the rules' to pay for */
    s->L = lua_newstate(sbx_alloc, s);
    if (!s->L)
        goto oom;
    lua_atpanic(s->L, sbx_panic);
    lua_setwarnf(s->L, sbx_warnf, s);
    if (sbx_cpcall(s, setup, s, 0, 0, &reason) != SBX_OK) {
        op_error_set(err, OP_ENOMEM, "cannot set up the Lua sandbox: %s",
                     reason ? reason : "out of memory");
        free(reason);
        sbx_free(s, 0, 0);
        return NULL;
    }
    s->exempt = 0;
    return s;
oom:
    sbx_free(s, 0, 0);
    op_error_set(err, OP_ENOMEM, "out of memory creating a Lua state");
    return NULL;
}

void sbx_free(sbx *s, uint64_t instructions, unsigned timeout_ms)
{
    if (!s)
        return;
    if (s->L) {
        /* Nothing should run here (no __gc), but if a finalizer did, it
         * would do so under a budget: its errors become warnings. */
        sbx_arm(s, instructions, timeout_ms);
        lua_close(s->L);
    }
    free(s->sdk_dir);
    free(s->pack_dir);
    free(s->sdk_real);
    free(s->pack_real);
    free(s);
}
