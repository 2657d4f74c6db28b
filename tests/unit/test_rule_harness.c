/*
 * test_rule_harness.c - core's rule-test harness (rule_test.h) and lint
 * checks (rule_lint.h), driven as the CLI, the server or a fuzzer would:
 * a pack written to a temporary folder, the output read back from a
 * memory stream, the JUnit file parsed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rule_lint.h"
#include "rule_test.h"

#define HOME OP_BINARY_DIR "/share/optipipe"

static char dir[64];

static void put(const char *name, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_non_null(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
}

/* A pack of one rule (t.big: a node with more than `limit` tasks) and its
 * test file: two right cases, one wrong expectation. */
static int make_pack(void **state)
{
    (void)state;
    setenv("OPTIPIPE_HOME", HOME, 1);
    snprintf(dir, sizeof dir, "/tmp/op-harness-XXXXXX");
    assert_non_null(mkdtemp(dir));
    put("big.lua",
        "return { id = \"t.big\", title = \"Big\", severity = \"warning\",\n"
        "  sources = { \"spark\" }, options = { limit = 10, unused = 1 },\n"
        "  check = function(run, ctx)\n"
        "    for _, n in ipairs(run.nodes) do\n"
        "      if (n.metrics.tasks or 0) > ctx.options.limit then\n"
        "        ctx.report { node = n.id, message = n.id .. \" is big\" }\n"
        "      end\n"
        "    end\n"
        "  end }\n");
    put("big_test.lua",
        "local function app(t) return { source = \"spark\", id = \"a\", nodes = {\n"
        "  { id = \"s1\", metrics = { tasks = t } } } } end\n"
        "return { rule = \"t.big\", cases = {\n"
        "  { name = \"fires\", inputs = { app(20) }, expect = { { node = \"s1\" } } },\n"
        "  { name = \"quiet\", inputs = { app(5) }, expect = {} },\n"
        "  { name = \"wrong\", inputs = { app(20) }, expect = {} },\n"
        "} }\n");
    return 0;
}

static int remove_pack(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    return 0;
}

static rule_test_opts opts(FILE *out, int keep)
{
    rule_test_opts o;

    memset(&o, 0, sizeof o);
    input_limits_default(&o.limits);
    rule_limits_default(&o.rlimits);
    o.rlimits.timeout_ms = 0; /* the instruction budget alone: no clock */
    o.out = out;
    o.keep = keep;
    return o;
}

static void test_pack_cases(void **state)
{
    char *text = NULL, junit[128];
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    rule_test_opts o = opts(out, 1);
    rule_test t;
    op_error err;
    FILE *f;
    char xml[4096];
    size_t n;

    (void)state;
    rule_test_init(&t, &o);
    rule_test_path(&t, dir);
    fclose(out);
    assert_int_equal(t.passed, 2);
    assert_int_equal(t.failed, 1);
    assert_non_null(strstr(text, "ok   t.big: fires"));
    assert_non_null(strstr(text, "ok   t.big: quiet"));
    assert_non_null(strstr(text, "FAIL t.big: wrong - expected 0 finding(s), got 1"));
    assert_non_null(strstr(text, "s1 is big")); /* the details of the failure */
    snprintf(junit, sizeof junit, "%s/junit.xml", dir);
    op_error_clear(&err);
    assert_int_equal(rule_test_junit(&t, junit, &err), 0);
    assert_non_null(f = fopen(junit, "r"));
    n = fread(xml, 1, sizeof xml - 1, f);
    xml[n] = '\0';
    fclose(f);
    assert_non_null(strstr(xml, "tests=\"3\" failures=\"1\""));
    assert_non_null(strstr(xml, "<testcase classname=\"t.big\" name=\"wrong\">"));
    rule_test_free(&t);
    free(text);
}

/* One test file of the folder, as `rules test FILE` runs it. */
static void test_one_file(void **state)
{
    char *text = NULL, path[128];
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    rule_test_opts o = opts(out, 0);
    rule_test t;
    op_error err;

    (void)state;
    snprintf(path, sizeof path, "%s/big_test.lua", dir);
    rule_test_init(&t, &o);
    rule_test_path(&t, path);
    fclose(out);
    assert_int_equal(t.passed + t.failed, 3);
    assert_int_equal(t.n, 0); /* keep 0: no outcomes kept */
    /* a folder that cannot be written to is an error, not a crash */
    op_error_clear(&err);
    assert_int_not_equal(rule_test_junit(&t, "/nonexistent/dir/j.xml", &err), 0);
    assert_non_null(strstr(err.msg, "cannot write"));
    rule_test_free(&t);
    free(text);
}

/* A folder without tests named explicitly fails; under rule_test_packs
 * it is no failure. */
static void test_no_tests(void **state)
{
    char *text = NULL, empty[128];
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    rule_test_opts o = opts(out, 0);
    rule_test t;

    (void)state;
    snprintf(empty, sizeof empty, "%s/empty", dir);
    assert_int_equal(mkdir(empty, 0700), 0);
    rule_test_init(&t, &o);
    rule_test_path(&t, empty);
    assert_int_equal(t.failed, 1);
    rule_test_packs(&t, empty); /* no pack folders under it */
    fclose(out);
    assert_int_equal(t.failed, 1);
    assert_int_equal(t.passed, 0);
    assert_non_null(strstr(text, "no rule tests (*_test.lua) in this folder"));
    rule_test_free(&t);
    free(text);
    rmdir(empty);
}

/* confine_inputs: a case naming a file outside its test's folder fails
 * with what it named, and nothing is read; one inside still runs. */
static void test_confined_inputs(void **state)
{
    char *text = NULL, sub[128];
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    rule_test_opts o = opts(out, 0);
    rule_test t;

    (void)state;
    snprintf(sub, sizeof sub, "%s/confined", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof sub, "confined/big.lua");
    put(sub, "return { id = \"t.big\", title = \"Big\", severity = \"warning\",\n"
             "  sources = { \"spark\" }, check = function(run, ctx)\n"
             "    ctx.report { message = \"seen\" } end }\n");
    put("confined/run.json", "{\"schema\": 1, \"runs\": [{\"source\": \"spark\", "
                             "\"id\": \"a\", \"nodes\": []}]}\n");
    put("confined/big_test.lua",
        "return { rule = \"t.big\", cases = {\n"
        "  { name = \"inside\", inputs = { \"run.json\" }, expect = { { message = \"seen\" } } },\n"
        "  { name = \"up\", inputs = { \"../big_test.lua\" }, expect = {} },\n"
        "  { name = \"absolute\", inputs = { \"/etc/passwd\" }, expect = {} },\n"
        "} }\n");
    o.confine_inputs = 1;
    snprintf(sub, sizeof sub, "%s/confined", dir);
    rule_test_init(&t, &o);
    rule_test_path(&t, sub);
    fclose(out);
    assert_int_equal(t.passed, 1);
    assert_int_equal(t.failed, 2);
    assert_non_null(strstr(text, "ok   t.big: inside"));
    assert_non_null(strstr(text, "FAIL t.big: up - "));
    assert_non_null(strstr(text, "FAIL t.big: absolute - "));
    assert_non_null(strstr(text, "/etc/passwd"));
    assert_null(strstr(text, "not recognized")); /* refused, never read */
    rule_test_free(&t);
    free(text);
}

static void test_lint(void **state)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    rule_lint l = {out, 0, 0, NULL, NULL};
    rule_limits lim;

    (void)state;
    rule_limits_default(&lim);
    lim.timeout_ms = 0;
    rule_lint_dir(&l, &lim, dir);
    fclose(out);
    assert_int_equal(l.rules, 1);
    assert_int_equal(l.problems, 2);
    assert_non_null(strstr(text, "t.big: no docs page"));
    assert_non_null(strstr(text, "option 'unused' is declared but never read"));
    free(text);
}

/* found: each problem to the callback (the server's JSON), none printed. */
static void count_found(void *ud, const char *file, const char *rule,
                        const char *what)
{
    unsigned *n = ud;

    assert_non_null(file);
    assert_non_null(what);
    if (rule && strcmp(rule, "t.big") == 0)
        (*n)++;
}

static void test_lint_found(void **state)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    unsigned n = 0;
    rule_lint l = {out, 0, 0, count_found, &n};
    rule_limits lim;

    (void)state;
    rule_limits_default(&lim);
    lim.timeout_ms = 0;
    rule_lint_dir(&l, &lim, dir);
    fclose(out);
    assert_int_equal(l.problems, 2);
    assert_int_equal(n, 2);
    assert_int_equal(len, 0); /* nothing written to out */
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pack_cases),
        cmocka_unit_test(test_one_file),
        cmocka_unit_test(test_no_tests),
        cmocka_unit_test(test_confined_inputs),
        cmocka_unit_test(test_lint),
        cmocka_unit_test(test_lint_found),
    };
    return cmocka_run_group_tests(tests, make_pack, remove_pack);
}
