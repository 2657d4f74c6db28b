/*
 * test_lua_sdk.c - runs the Lua SDK helper tests (tests/lua/sdk_*.lua) in a
 * bare Lua state that has only base/string/table/math/utf8, with a minimal
 * require serving the sdk/lua/optipipe modules. This proves the helpers need
 * nothing the rule sandbox withholds, independently of the engine's own
 * sandbox (core/sbx.c), and that neither they nor the tests leak globals.
 */
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#define SDK_DIR OP_SOURCE_DIR "/sdk/lua/"
#define TESTS_DIR OP_SOURCE_DIR "/tests/lua/"

/* Registry keys. */
static const char loaded_key[] = "test_lua_sdk.loaded";
static const char before_key[] = "test_lua_sdk.globals";

/* require "optipipe.<name>": loads sdk/lua/optipipe/<name>.lua as text,
 * once per state; anything else is refused like the sandbox would. */
static int sdk_require(lua_State *L)
{
    size_t len;
    const char *name = luaL_checklstring(L, 1, &len);
    const char *mod = name + strlen("optipipe.");
    char path[512];

    if (len <= strlen("optipipe.") || strncmp(name, "optipipe.", 9) != 0 ||
        strspn(mod, "abcdefghijklmnopqrstuvwxyz_") != strlen(mod))
        return luaL_error(L, "module '%s' is not an SDK module", name);
    lua_getfield(L, LUA_REGISTRYINDEX, loaded_key);
    lua_getfield(L, -1, name);
    if (!lua_isnil(L, -1))
        return 1;
    lua_pop(L, 1);
    snprintf(path, sizeof path, "%soptipipe/%s.lua", SDK_DIR, mod);
    if (luaL_loadfilex(L, path, "t") != LUA_OK)
        return lua_error(L);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_pushboolean(L, 1);
    }
    lua_pushvalue(L, -1);
    lua_setfield(L, -3, name);
    return 1;
}

static int traceback(lua_State *L)
{
    const char *msg = lua_tostring(L, 1);
    luaL_traceback(L, L, msg ? msg : "(error object is not a string)", 1);
    return 1;
}

/* A state with only the libraries rules get, minus the file loaders. */
static lua_State *bare_state(void)
{
    static const luaL_Reg libs[] = {{LUA_GNAME, luaopen_base},
                                    {LUA_STRLIBNAME, luaopen_string},
                                    {LUA_TABLIBNAME, luaopen_table},
                                    {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_UTF8LIBNAME, luaopen_utf8},
                                    {NULL, NULL}};
    static const char *const drop[] = {"dofile", "loadfile", "load", NULL};
    lua_State *L = luaL_newstate();

    assert_non_null(L);
    for (const luaL_Reg *lib = libs; lib->func; lib++) {
        luaL_requiref(L, lib->name, lib->func, 1);
        lua_pop(L, 1);
    }
    for (size_t i = 0; drop[i]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, drop[i]);
    }
    lua_newtable(L);
    lua_setfield(L, LUA_REGISTRYINDEX, loaded_key);
    lua_pushcfunction(L, sdk_require);
    lua_setglobal(L, "require");
    return L;
}

/* Remembers which globals exist, to compare after a run. */
static void snapshot_globals(lua_State *L)
{
    lua_newtable(L);
    lua_pushglobaltable(L);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_pushboolean(L, 1);
        lua_settable(L, -5);
    }
    lua_pop(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, before_key);
}

/* Fails the test naming every global that appeared since the snapshot. */
static void assert_no_new_globals(lua_State *L, const char *what)
{
    char names[256] = "";
    size_t n = 0;

    lua_getfield(L, LUA_REGISTRYINDEX, before_key);
    lua_pushglobaltable(L);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        if (lua_gettable(L, -4) == LUA_TNIL) {
            const char *k = lua_type(L, -2) == LUA_TSTRING
                                ? lua_tostring(L, -2)
                                : "(non-string key)";
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s%s",
                     n ? ", " : "", k);
            n++;
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 2);
    if (n)
        fail_msg("%s leaked %zu global(s): %s", what, n, names);
}

/* Runs one Lua file in L; fails the cmocka test with the traceback. */
static void run_file(lua_State *L, const char *path)
{
    int base = lua_gettop(L);

    lua_pushcfunction(L, traceback);
    if (luaL_loadfilex(L, path, "t") != LUA_OK)
        fail_msg("%s", lua_tostring(L, -1));
    if (lua_pcall(L, 0, 0, base + 1) != LUA_OK)
        fail_msg("%s", lua_tostring(L, -1));
    lua_settop(L, base);
}

static void run_test_file(const char *path)
{
    lua_State *L = bare_state();

    snapshot_globals(L);
    run_file(L, path);
    assert_no_new_globals(L, path);
    lua_close(L);
}

static void test_stats(void **state)
{
    (void)state;
    run_test_file(TESTS_DIR "sdk_stats.lua");
}

static void test_units(void **state)
{
    (void)state;
    run_test_file(TESTS_DIR "sdk_units.lua");
}

/* The cases fmt.c meets too: the file's text reaches the Lua test as the
 * global FMT_CASES, set before the globals snapshot. */
static void test_shared_fmt_cases(void **state)
{
    static char text[16384];
    FILE *in = fopen(OP_SOURCE_DIR "/tests/unit/fmt_cases.txt", "r");
    size_t len;
    lua_State *L;

    (void)state;
    assert_non_null(in);
    len = fread(text, 1, sizeof text - 1, in);
    assert_false(ferror(in));
    assert_true(feof(in)); /* the whole file fit */
    fclose(in);
    text[len] = '\0';
    L = bare_state();
    lua_pushstring(L, text);
    lua_setglobal(L, "FMT_CASES");
    snapshot_globals(L);
    run_file(L, TESTS_DIR "sdk_fmt_cases.lua");
    assert_no_new_globals(L, "sdk_fmt_cases.lua");
    lua_close(L);
}

static void test_graph(void **state)
{
    (void)state;
    run_test_file(TESTS_DIR "sdk_graph.lua");
}

/* Any further tests/lua/sdk_*.lua runs too, so a new file cannot be
 * forgotten here. */
static void test_other_sdk_files(void **state)
{
    static const char *const known[] = {"sdk_stats.lua", "sdk_units.lua",
                                        "sdk_graph.lua", "sdk_fmt_cases.lua", NULL};
    glob_t g;
    size_t ran = 0;

    (void)state;
    assert_int_equal(glob(TESTS_DIR "sdk_*.lua", 0, NULL, &g), 0);
    assert_true(g.gl_pathc >= 3);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *base = strrchr(g.gl_pathv[i], '/') + 1;
        int skip = 0;
        for (size_t k = 0; known[k]; k++)
            skip |= strcmp(base, known[k]) == 0;
        if (!skip) {
            printf("running %s\n", g.gl_pathv[i]);
            run_test_file(g.gl_pathv[i]);
            ran++;
        }
    }
    globfree(&g);
    (void)ran;
}

/* Loading the modules needs no io/os/debug/package, returns tables of
 * functions and defines no globals. */
static void test_modules_load_bare(void **state)
{
    static const char *const mods[] = {"optipipe.stats", "optipipe.units",
                                       "optipipe.history",
                                       "optipipe.graph", "optipipe.rocksdb", NULL};
    static const char *const absent[] = {"io", "os", "debug", "package",
                                         NULL};
    lua_State *L = bare_state();

    (void)state;
    for (size_t i = 0; absent[i]; i++) {
        lua_getglobal(L, absent[i]);
        assert_true(lua_isnil(L, -1));
        lua_pop(L, 1);
    }
    snapshot_globals(L);
    for (size_t i = 0; mods[i]; i++) {
        lua_getglobal(L, "require");
        lua_pushstring(L, mods[i]);
        if (lua_pcall(L, 1, 1, 0) != LUA_OK)
            fail_msg("require %s: %s", mods[i], lua_tostring(L, -1));
        assert_int_equal(lua_type(L, -1), LUA_TTABLE);
        lua_pop(L, 1);
    }
    assert_no_new_globals(L, "requiring the SDK modules");

    /* The harness's require refuses what the sandbox would. */
    lua_getglobal(L, "require");
    lua_pushstring(L, "io");
    assert_int_not_equal(lua_pcall(L, 1, 1, 0), LUA_OK);
    lua_close(L);
}

static unsigned long long hook_steps;

static void count_hook(lua_State *L, lua_Debug *ar)
{
    (void)L;
    (void)ar;
    hook_steps++;
}

/* Theil-Sen subsamples, so 20k points cost about what 200 do: the
 * pairwise step is capped near 20k slopes. Counted in VM instructions (not
 * time), so the bound is deterministic. */
static void test_theil_sen_cost_is_bounded(void **state)
{
    static const char chunk[] =
        "local stats = require 'optipipe.stats'\n"
        "local n = ...\n"
        "local xs, ys = {}, {}\n"
        "for i = 1, n do xs[i] = i; ys[i] = 3 * i + (i % 7) end\n"
        "local t = stats.robust_trend(xs, ys)\n"
        "assert(math.abs(t.slope - 3) < 0.01, t.slope)\n";
    lua_State *L = bare_state();
    unsigned long long steps_small = 0, steps_big = 0;

    (void)state;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1000);
    for (int pass = 0; pass < 2; pass++) {
        hook_steps = 0;
        assert_int_equal(luaL_loadstring(L, chunk), LUA_OK);
        lua_pushinteger(L, pass == 0 ? 200 : 20000);
        if (lua_pcall(L, 1, 0, 0) != LUA_OK)
            fail_msg("%s", lua_tostring(L, -1));
        if (pass == 0)
            steps_small = hook_steps;
        else
            steps_big = hook_steps;
    }
    printf("robust_trend: %llu k instructions for 200 points, %llu k for "
           "20000\n",
           steps_small, steps_big);
    /* Linear parts (copies, residuals) grow 100x; the quadratic part must
     * not: 20000 points with all pairs would be ~2e8 slopes. */
    assert_true(steps_big < 40 * steps_small + 20000);
    lua_close(L);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_modules_load_bare),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_units),
        cmocka_unit_test(test_shared_fmt_cases),
        cmocka_unit_test(test_graph),
        cmocka_unit_test(test_other_sdk_files),
        cmocka_unit_test(test_theil_sen_cost_is_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
