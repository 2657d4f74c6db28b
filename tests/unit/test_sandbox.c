/*
 * test_sandbox.c - the defences of the Lua sandbox, through hostile rules
 * (tests/lua/hostile, slow, stall, stall_load): forbidden functions,
 * read-only model and standard library, instruction budget, memory cap,
 * wall clock, stalls inside C functions (isolated workers), a crashing
 * worker, and that every other rule still runs after a failure.
 *
 * Outcomes never depend on the machine's speed: loops never end, so they
 * always hit the limit under test; the stalls would take days.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>

#include "findings.h"
#include "lua_json.h"
#include "model.h"
#include "rules.h"
#include "support.h"
#include "sbx.h"

#define LUA_DIR OP_SOURCE_DIR "/tests/lua"
#define SDK_DIR LUA_DIR "/sdk"
#define HOSTILE_RULES 18

static const rule_error *error_of(const results *r, const char *rule)
{
    size_t i;

    for (i = 0; i < r->ne; i++)
        if (strcmp(r->e[i].rule, rule) == 0)
            return &r->e[i];
    return NULL;
}

static size_t errors_of(const results *r, const char *rule)
{
    size_t i, n = 0;

    for (i = 0; i < r->ne; i++)
        n += strcmp(r->e[i].rule, rule) == 0;
    return n;
}

static size_t count_of(const results *r, const char *rule)
{
    size_t i, n = 0;

    for (i = 0; i < r->n; i++)
        n += strcmp(r->f[i].rule, rule) == 0;
    return n;
}

static const finding *finding_of(const results *r, const char *rule,
                                 const char *message)
{
    size_t i;

    for (i = 0; i < r->n; i++)
        if (strcmp(r->f[i].rule, rule) == 0 &&
            (!message || strcmp(r->f[i].message, message) == 0))
            return &r->f[i];
    return NULL;
}

static void expect_error(const results *r, const char *rule, const char *has)
{
    const rule_error *e = error_of(r, rule);

    if (!e || !strstr(e->error, has))
        fail_msg("rule %s: expected an error containing '%s', got '%s'", rule,
                 has, e ? e->error : "no error");
}

static void print_errors(const results *r)
{
    size_t i;

    for (i = 0; i < r->ne; i++)
        fprintf(stderr, "  rule error %s: %s\n", r->e[i].rule, r->e[i].error);
}

static void expect_exact(const results *r, const char *rule,
                         const char *reason)
{
    const rule_error *e = error_of(r, rule);

    if (!e || strcmp(e->error, reason) != 0)
        fail_msg("rule %s: expected error '%s', got '%s'", rule, reason,
                 e ? e->error : "no error");
    assert_int_equal(errors_of(r, rule), 1); /* stopped, not run again */
    assert_int_equal(count_of(r, rule), 0);  /* a failed call adds nothing */
}

/* Loads dir and runs it over the fixture model with the given limits. */
static void run_dir(const char *dir, const rule_limits *l, int trusted,
                    results *out)
{
    ruleset *rs = ruleset_new(l);
    model *m = tm_fixture_model();
    results errs;
    op_error err;
    size_t i;

    results_init(&errs);
    results_init(out);
    assert_int_equal(ruleset_load_dir(rs, dir, "hostile", SDK_DIR, trusted,
                                      &errs, &err),
                     0);
    for (i = 0; i < errs.ne; i++)
        fprintf(stderr, "load error %s: %s\n", errs.e[i].rule,
                errs.e[i].error);
    assert_int_equal(errs.ne, 0);
    assert_int_equal(ruleset_run(rs, m, out, &err), 0);
    results_free(&errs);
    ruleset_free(rs);
    model_free(m);
}

static rule_limits hostile_limits(int isolate)
{
    rule_limits l;

    rule_limits_default(&l);
    l.mem_bytes = 16u << 20;
    l.instructions = 5000000;
    l.timeout_ms = 0; /* only the limit under test may fire */
    l.isolate = isolate;
    return l;
}

/* ---- the hostile pack, in both modes -------------------------------------------- */

static void check_hostile(const results *out)
{
    const finding *f;
    size_t i, n = 0;

    /* every rule ran, whatever the others did */
    assert_int_equal(out->rules_run, HOSTILE_RULES);

    /* forbidden globals are absent or refuse */
    for (i = 0; i < out->n; i++) {
        const cJSON *ok;
        if (strcmp(out->f[i].rule, "t.forbidden") != 0)
            continue;
        n++;
        ok = cJSON_GetObjectItem(out->f[i].evidence, "ok");
        if (!cJSON_IsTrue(ok))
            fail_msg("sandbox check '%s' failed: %s", out->f[i].message,
                     cJSON_GetObjectItem(out->f[i].evidence, "err")
                         ->valuestring);
    }
    assert_int_equal(n, 30);

    /* the model is read-only, also to rawset, table.*, pairs' state */
    f = finding_of(out, "t.modify_try", "escaped 0");
    assert_non_null(f);
    expect_error(out, "t.modify", "c_modify.lua:8: attempt to modify "
                                  "read-only field 'checkpoints'");
    /* so is the standard library; globals stay in the rule's own env */
    assert_non_null(finding_of(out, "t.stdlib_try", "escaped 0"));
    expect_error(out, "t.stdlib", "attempt to modify read-only field "
                                  "'format'");
    /* and the next rule sees everything untouched */
    assert_non_null(finding_of(out, "t.after", "clean"));

    /* limits: exact reasons, pcall/xpcall cannot swallow them */
    expect_exact(out, "t.loop", "instruction budget exceeded");
    expect_exact(out, "t.pcall_loop", "instruction budget exceeded");
    expect_exact(out, "t.xpcall_loop", "instruction budget exceeded");
    expect_exact(out, "t.rep", "memory cap exceeded");
    expect_exact(out, "t.grow", "memory cap exceeded");
    expect_exact(out, "t.pcall_mem", "memory cap exceeded");

    /* __gc refused, string metatable locked */
    expect_error(out, "t.gc", "__gc metamethods are not allowed");
    expect_error(out, "t.strmeta", "attempt to index a boolean value");

    /* a kept ctx cannot report from another call */
    f = finding_of(out, "t.stale", "stale report ok=false");
    assert_non_null(f);
    assert_non_null(strstr(cJSON_GetObjectItem(f->evidence, "err")->valuestring,
                           "outside the rule call"));

    /* a plain error comes with file, line and traceback */
    expect_error(out, "t.error", "/hostile/o_error.lua:5: boom at job-1");
    expect_error(out, "t.error", "stack traceback:");

    /* invalid reports raise errors in the rule */
    f = finding_of(out, "t.badreport", NULL);
    assert_non_null(f);
    assert_null(strstr(f->message, "accepted"));
    assert_true(cJSON_GetObjectItem(f->evidence, "n")->valuedouble == 15);
    assert_non_null(strstr(f->message, "'message' is required"));
    assert_non_null(strstr(f->message, "node 'nope' does not exist"));
    assert_non_null(strstr(f->message, "'node' must be a node id"));
    assert_non_null(strstr(f->message, "needs 'to'"));
    assert_non_null(strstr(f->message, "needs a string 'key'"));
    assert_non_null(strstr(f->message, "'changes' must be a list"));
    assert_non_null(strstr(f->message, "severity must be"));
    assert_non_null(strstr(f->message, "unknown field 'bogus'"));
    assert_non_null(strstr(f->message, "evidence.f: a function cannot"));
    assert_non_null(strstr(f->message, "'evidence' must be a table of named"));
    assert_non_null(strstr(f->message, "'evidence' must be a table (got"));
    assert_non_null(strstr(f->message, "'message' must be a string"));
    assert_non_null(strstr(f->message, "no run with id 'nope'"));
    assert_non_null(strstr(f->message, "'message' is longer than"));
    expect_error(out, "t.badreport2", "node 'nope' does not exist");
}

static void test_hostile_inproc(void **state)
{
    rule_limits l = hostile_limits(0);
    results out;

    (void)state;
    run_dir(LUA_DIR "/hostile", &l, 1, &out);
    check_hostile(&out);
    results_free(&out);
}

static void test_hostile_isolated(void **state)
{
    rule_limits l = hostile_limits(1);
    results out;

    (void)state;
    run_dir(LUA_DIR "/hostile", &l, 1, &out);
    check_hostile(&out);
    results_free(&out);
}

/* Both modes report the same errors, word for word. */
static void test_hostile_same_errors(void **state)
{
    rule_limits a = hostile_limits(0), b = hostile_limits(1);
    results ra, rb;
    size_t i;

    (void)state;
    run_dir(LUA_DIR "/hostile", &a, 1, &ra);
    run_dir(LUA_DIR "/hostile", &b, 1, &rb);
    /* errors come in rule order in both modes */
    assert_int_equal(ra.ne, rb.ne);
    for (i = 0; i < ra.ne; i++) {
        assert_string_equal(ra.e[i].rule, rb.e[i].rule);
        assert_string_equal(ra.e[i].error, rb.e[i].error);
    }
    assert_int_equal(ra.n, rb.n);
    results_free(&ra);
    results_free(&rb);
}

/* ---- wall clock ---------------------------------------------------------------------- */

static void check_slow(int isolate)
{
    rule_limits l;
    results out;

    rule_limits_default(&l);
    l.instructions = UINT64_C(1) << 50; /* huge: only the clock stops it */
    l.timeout_ms = 1000; /* t.after_slow must finish within it on a loaded machine */
    l.isolate = isolate;
    run_dir(LUA_DIR "/slow", &l, 1, &out);
    expect_exact(&out, "t.slow", "timeout");
    assert_non_null(finding_of(&out, "t.after_slow", "still running"));
    assert_int_equal(out.rules_run, 2);
    results_free(&out);
}

static void test_timeout_inproc(void **state)
{
    (void)state;
    check_slow(0);
}

static void test_timeout_isolated(void **state)
{
    (void)state;
    check_slow(1);
}

/* ---- stalls inside C: only a worker can be stopped ---------------------------------- */

static void test_stall_in_c(void **state)
{
    rule_limits l;
    results out;

    (void)state;
    rule_limits_default(&l);
    l.timeout_ms = 2000; /* generous: the next rule must finish in time, under load too */
    l.isolate = 1;
    run_dir(LUA_DIR "/stall", &l, 0, &out);
    expect_exact(&out, "t.stall", "timeout");
    assert_non_null(finding_of(&out, "t.after_stall", "still running"));
    assert_int_equal(out.rules_run, 2);
    results_free(&out);
}

static void test_stall_at_load(void **state)
{
    rule_limits l;
    ruleset *rs;
    model *m = tm_fixture_model();
    results errs, out;
    op_error err;

    (void)state;
    rule_limits_default(&l);
    l.timeout_ms = 2000; /* the next file must load within it, under load too */
    l.isolate = -1; /* auto: the pack is untrusted, so isolated */
    rs = ruleset_new(&l);
    results_init(&errs);
    results_init(&out);
    assert_int_equal(ruleset_load_dir(rs, LUA_DIR "/stall_load", "user", NULL,
                                      0, &errs, &err),
                     0);
    assert_int_equal(errs.ne, 1);
    assert_string_equal(errs.e[0].rule, LUA_DIR "/stall_load/a_stall.lua");
    assert_string_equal(errs.e[0].error, "timeout");
    assert_int_equal(ruleset_count(rs), 1);
    assert_int_equal(ruleset_run(rs, m, &out, &err), 0);
    assert_int_equal(out.ne, 0);
    assert_non_null(finding_of(&out, "t.ok_after_stall", "ok"));
    results_free(&errs);
    results_free(&out);
    ruleset_free(rs);
    model_free(m);
}

/* ---- a worker that dies -------------------------------------------------------------- */

static const char *crash_id;

static void crash_hook(const char *rule_id)
{
    if (crash_id && strcmp(rule_id, crash_id) == 0)
        raise(SIGTERM);
}

static void run_crash(int isolate, int trusted, results *out)
{
    rule_limits l;
    char path[] = "/tmp/optipipe-test-stderr-XXXXXX";
    int saved, fd;

    rule_limits_default(&l);
    l.timeout_ms = 0;
    l.isolate = isolate;
    sbx_worker_test_hook = crash_hook;
    fflush(stderr); /* the good pack prints: keep it out of the log */
    saved = dup(2);
    fd = mkstemp(path);
    dup2(fd, 2);
    close(fd);
    run_dir(LUA_DIR "/good", &l, trusted, out);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    unlink(path);
    sbx_worker_test_hook = NULL;
}

static void test_worker_crash(void **state)
{
    results out;

    (void)state;
    crash_id = "t.spark";
    run_crash(1, 1, &out);
    if (out.ne != 1)
        print_errors(&out);
    expect_exact(&out, "t.spark", "worker crashed (signal 15)");
    assert_int_equal(out.ne, 1);
    /* rules before and after the crash still ran */
    assert_int_equal(count_of(&out, "t.bundle"), 5);
    assert_int_equal(count_of(&out, "t.options"), 2);
    assert_int_equal(count_of(&out, "t.report"), 3);
    assert_int_equal(count_of(&out, "t.shape"), 1);
    assert_int_equal(out.rules_run, 7);
    results_free(&out);
}

/* isolate = -1: untrusted packs run in a worker, bundled ones in-process
 * (where the test hook, a worker-only thing, never fires). */
static void test_auto_isolation(void **state)
{
    results out;

    (void)state;
    crash_id = "t.bundle";
    run_crash(-1, 1, &out);
    print_errors(&out); /* none expected */
    assert_int_equal(out.ne, 0);
    assert_int_equal(count_of(&out, "t.bundle"), 5);
    results_free(&out);
    run_crash(-1, 0, &out);
    expect_exact(&out, "t.bundle", "worker crashed (signal 15)");
    results_free(&out);
    run_crash(0, 0, &out); /* never isolate */
    assert_int_equal(out.ne, 0);
    results_free(&out);
}

/* ---- the sandbox API itself -------------------------------------------------------- */

static void test_sbx_tiny_cap(void **state)
{
    sbx_config cfg = {1, NULL, NULL};
    op_error err;
    sbx *s;

    (void)state;
    /* the library itself is exempt: a tiny cap still gives a state, but
     * no rule code can allocate in it */
    s = sbx_new(&cfg, &err);
    assert_non_null(s);
    sbx_free(s, 1000, 100);
}

/* Runs Lua chunk src in s and converts its result: 0 or -1 (msg). */
static int convert(sbx *s, const char *src, char *msg, size_t len)
{
    lua_State *L = sbx_lua(s);
    size_t budget = 64u << 20;
    char buf[512], *reason = NULL;
    cJSON *v = NULL;
    int rc;

    snprintf(buf, sizeof buf, "%s", src);
    sbx_push_env(L);
    assert_int_equal(sbx_load_text(L, buf, strlen(buf), "=test"), 0);
    assert_int_equal(sbx_pcall(s, 0, 1, &reason), SBX_OK);
    rc = ljson_from_lua(L, -1, "v", &budget, &v, msg, len);
    lua_pop(L, 1);
    assert_true(rc == 0 ? v != NULL : v == NULL);
    cJSON_Delete(v);
    return rc;
}

/* Values leaving Lua are trees of bounded size: a DAG (shared tables) or
 * a cycle is refused, every value counts against the budget and the
 * node cap. */
static void test_ljson_trees(void **state)
{
    sbx_config cfg = {256u << 20, NULL, NULL};
    op_error err;
    char msg[300];
    sbx *s = sbx_new(&cfg, &err);

    (void)state;
    assert_non_null(s);
    assert_int_equal(convert(s, "local t = {} for i = 1, 20 do t = {t, t} end "
                                "return {d = t}", msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "the same table is used twice"));
    assert_non_null(strstr(msg, "v.d[1]"));
    assert_int_equal(convert(s, "local t = {} t.me = t return t", msg,
                             sizeof msg), -1);
    assert_string_equal(msg, "v.me: the same table is used twice (a value "
                             "must be a tree: copy the table)");
    /* empty tables are not free: 200,001 of them exceed the node cap */
    assert_int_equal(convert(s, "local t = {} for i = 1, 200001 do "
                                "t[i] = {} end return t", msg, sizeof msg), -1);
    assert_non_null(strstr(msg, "more than 200000 values"));
    assert_int_equal(convert(s, "local a = {x = 1} return {a, {x = 1}, "
                                "'s', 2, true}", msg, sizeof msg), 0);
    sbx_free(s, 1000, 100);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Rule files and modules open only inside the pack or the SDK folder,
 * symlinks resolved on the file opened. */
static void test_open_inside_pack(void **state)
{
    char pack[128], path[256], target[256], msg[600];
    sbx_config cfg = {0, SDK_DIR, pack};
    op_error err;
    size_t size;
    FILE *f;
    sbx *s;

    (void)state;
    snprintf(pack, sizeof pack, "%s/pack", tm_tmpdir);
    assert_int_equal(mkdir(pack, 0755), 0);
    snprintf(path, sizeof path, "%s/outside.lua", tm_tmpdir);
    write_file(path, "return 1\n");
    snprintf(target, sizeof target, "%s/out.lua", pack);
    assert_int_equal(symlink(path, target), 0);
    snprintf(path, sizeof path, "%s/in.lua", pack);
    write_file(path, "return 2\n");
    snprintf(target, sizeof target, "%s/link.lua", pack);
    assert_int_equal(symlink("in.lua", target), 0);
    s = sbx_new(&cfg, &err);
    assert_non_null(s);
    assert_int_equal(sbx_open_file(s, target, 100, &f, &size, msg, sizeof msg),
                     0);
    assert_int_equal(size, 9);
    fclose(f);
    snprintf(target, sizeof target, "%s/out.lua", pack);
    assert_int_equal(sbx_open_file(s, target, 100, &f, &size, msg, sizeof msg),
                     -1);
    assert_null(f);
    assert_non_null(strstr(msg, "refused: the file lies outside the pack"));
    snprintf(target, sizeof target, "%s/in.lua", pack);
    assert_int_equal(sbx_open_file(s, target, 4, &f, &size, msg, sizeof msg),
                     -1);
    assert_non_null(strstr(msg, "larger than 4 bytes"));
    assert_int_equal(sbx_open_file(s, SDK_DIR "/optipipe/../../sdk_graph.lua",
                                   1u << 20, &f, &size, msg, sizeof msg),
                     -1); /* next to the SDK folder is outside it */
    sbx_free(s, 1000, 100);
}

/* Five files that never end: each call gets what is left of the pack's
 * budget; after three 100 ms timeouts (>= 300 ms) files 4 and 5 are
 * certainly past the 250 ms budget and are not loaded. */
static void pack_budget(int isolate)
{
    char dir[128], path[256];
    rule_limits l = hostile_limits(isolate);
    ruleset *rs;
    results errs;
    op_error err;
    int i;

    snprintf(dir, sizeof dir, "%s/budget%d", tm_tmpdir, isolate);
    assert_int_equal(mkdir(dir, 0755), 0);
    for (i = 1; i <= 5; i++) {
        snprintf(path, sizeof path, "%s/r%d.lua", dir, i);
        write_file(path, "while true do end\n");
    }
    l.instructions = 0;
    l.timeout_ms = 100;
    l.pack_timeout_ms = 250;
    rs = ruleset_new(&l);
    results_init(&errs);
    assert_int_equal(ruleset_load_dir(rs, dir, "budget", SDK_DIR, 0, &errs,
                                      &err), 0);
    assert_int_equal(errs.ne, 5);
    assert_string_equal(errs.e[3].error, RULES_REASON_PACK_TIME);
    assert_string_equal(errs.e[4].error, RULES_REASON_PACK_TIME);
    assert_int_equal(ruleset_count(rs), 0);
    results_free(&errs);
    ruleset_free(rs);
}

/* One budget per pack per analysis: a load that used its whole 2 s limit
 * of a 3 s budget leaves the run at most 1 s, less than the call's own
 * 2 s, so a call that never ends stops on the pack's budget (each used to
 * get a budget of its own); the next analysis (ruleset_run) has a whole
 * budget again, more than the own limit, so the same call stops on its
 * own limit. Both hold however fast or loaded the machine is, as long as
 * the second file loads within the 1 s left (a worker start when
 * isolated): with 200/300 ms that margin was 100 ms and failed under
 * load. */
static void budget_per_analysis(int isolate)
{
    char dir[128], path[256];
    rule_limits l = hostile_limits(isolate);
    model *m = tm_fixture_model();
    ruleset *rs;
    results errs, out;
    op_error err;

    snprintf(dir, sizeof dir, "%s/analysis%d", tm_tmpdir, isolate);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/a_slow_load.lua", dir);
    write_file(path, "while true do end\n");
    snprintf(path, sizeof path, "%s/b_loop.lua", dir);
    write_file(path, "return { id = 't.loop', title = 'loop', severity = 'info',\n"
                     "  sources = { '*' }, check = function() while true do end end }\n");
    l.instructions = 0;
    l.timeout_ms = 2000;
    l.pack_timeout_ms = 3000;
    rs = ruleset_new(&l);
    results_init(&errs);
    assert_int_equal(ruleset_load_dir(rs, dir, "budget", SDK_DIR, 0, &errs, &err), 0);
    assert_int_equal(errs.ne, 1);
    assert_string_equal(errs.e[0].error, SBX_REASON_TIME); /* its own 2 s */
    assert_int_equal(ruleset_count(rs), 1);
    results_init(&out);
    assert_int_equal(ruleset_run(rs, m, &out, &err), 0);
    assert_int_equal(out.ne, 1);
    assert_string_equal(out.e[0].rule, "t.loop");
    assert_string_equal(out.e[0].error, RULES_REASON_PACK_TIME);
    results_free(&out);
    results_init(&out);
    assert_int_equal(ruleset_run(rs, m, &out, &err), 0);
    assert_int_equal(out.ne, 1);
    assert_string_equal(out.e[0].error, SBX_REASON_TIME);
    results_free(&out);
    results_free(&errs);
    ruleset_free(rs);
    model_free(m);
}

static void test_budget_per_analysis_inproc(void **state)
{
    (void)state;
    budget_per_analysis(0);
}

static void test_budget_per_analysis_isolated(void **state)
{
    (void)state;
    budget_per_analysis(1);
}

/* Each rule file is read once per process: an isolated pack's run worker
 * runs the text the load read, not a file changed since (it used to read
 * every file again in each worker). */
static void test_rule_read_once(void **state)
{
    char dir[128], path[256];
    rule_limits l = hostile_limits(1);
    model *m = tm_fixture_model();
    ruleset *rs;
    results errs, out;
    op_error err;
    static const char rule[] =
        "return { id = 't.once', title = 'once', severity = 'info',\n"
        "  sources = { '*' }, check = function(b, ctx) ctx.report { message = '%s' } end }\n";
    char text[sizeof rule + 16];

    (void)state;
    snprintf(dir, sizeof dir, "%s/once", tm_tmpdir);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(path, sizeof path, "%s/once.lua", dir);
    snprintf(text, sizeof text, rule, "as loaded");
    write_file(path, text);
    rs = ruleset_new(&l);
    results_init(&errs);
    assert_int_equal(ruleset_load_dir(rs, dir, "once", SDK_DIR, 0, &errs, &err), 0);
    assert_int_equal(errs.ne, 0);
    snprintf(text, sizeof text, rule, "changed after");
    write_file(path, text);
    results_init(&out);
    assert_int_equal(ruleset_run(rs, m, &out, &err), 0);
    assert_int_equal(out.ne, 0);
    assert_non_null(finding_of(&out, "t.once", "as loaded"));
    assert_null(finding_of(&out, "t.once", "changed after"));
    results_free(&out);
    results_free(&errs);
    ruleset_free(rs);
    model_free(m);
}

static void test_pack_budget_inproc(void **state)
{
    (void)state;
    pack_budget(0);
}

static void test_pack_budget_isolated(void **state)
{
    (void)state;
    pack_budget(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sbx_tiny_cap),
        cmocka_unit_test(test_hostile_inproc),
        cmocka_unit_test(test_hostile_isolated),
        cmocka_unit_test(test_hostile_same_errors),
        cmocka_unit_test(test_timeout_inproc),
        cmocka_unit_test(test_timeout_isolated),
        cmocka_unit_test(test_stall_in_c),
        cmocka_unit_test(test_stall_at_load),
        cmocka_unit_test(test_worker_crash),
        cmocka_unit_test(test_auto_isolation),
        cmocka_unit_test(test_ljson_trees),
        cmocka_unit_test(test_open_inside_pack),
        cmocka_unit_test(test_pack_budget_inproc),
        cmocka_unit_test(test_pack_budget_isolated),
        cmocka_unit_test(test_budget_per_analysis_inproc),
        cmocka_unit_test(test_budget_per_analysis_isolated),
        cmocka_unit_test(test_rule_read_once),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
