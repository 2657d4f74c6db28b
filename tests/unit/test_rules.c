/*
 * test_rules.c - the rule engine: finding and loading rule files, metadata
 * validation, running rules over a model (sources, bundle, options,
 * reports) in-process and in isolated workers. The sandbox's defences are
 * in test_sandbox.c. Fixture rules: tests/lua/.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "findings.h"
#include "model.h"
#include "rules.h"
#include "support.h"

#define LUA_DIR OP_SOURCE_DIR "/tests/lua"
#define SDK_DIR LUA_DIR "/sdk"

/* ---- fixtures ------------------------------------------------------------- */

static rule_limits test_limits(int isolate)
{
    rule_limits l;

    rule_limits_default(&l);
    l.instructions = 2000000;
    l.timeout_ms = 0; /* no wall clock here: tests must not depend on speed */
    l.isolate = isolate;
    return l;
}

static ruleset *load(const char *dir, int isolate, int trusted,
                     results *errs)
{
    rule_limits l = test_limits(isolate);
    ruleset *rs = ruleset_new(&l);
    op_error err;

    assert_non_null(rs);
    results_init(errs);
    assert_int_equal(ruleset_load_dir(rs, dir, "test", SDK_DIR, trusted,
                                      errs, &err),
                     0);
    return rs;
}

static const rule_error *error_of(const results *r, const char *rule)
{
    size_t i;

    for (i = 0; i < r->ne; i++)
        if (strcmp(r->e[i].rule, rule) == 0)
            return &r->e[i];
    return NULL;
}

static size_t count_of(const results *r, const char *rule)
{
    size_t i, n = 0;

    for (i = 0; i < r->n; i++)
        if (strcmp(r->f[i].rule, rule) == 0)
            n++;
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

static void print_errors(const results *r)
{
    size_t i;

    for (i = 0; i < r->ne; i++)
        fprintf(stderr, "  rule error %s: %s\n", r->e[i].rule, r->e[i].error);
}

static double ev_num(const finding *f, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->evidence, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const char *ev_str(const finding *f, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->evidence, key);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

/* stderr capture, for print() and ctx.log() */
static int capture_begin(char *path)
{
    int saved, fd;

    fflush(stderr);
    saved = dup(2);
    fd = mkstemp(path);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    return saved;
}

static char *capture_end(int saved, const char *path)
{
    FILE *f;
    char *buf = calloc(1, 65536);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    f = fopen(path, "rb");
    assert_non_null(f);
    assert_non_null(buf);
    fread(buf, 1, 65535, f);
    fclose(f);
    unlink(path);
    return buf;
}

/* Runs the good pack over the fixture model. */
static void run_good(int isolate, results *out, model **mp, ruleset **rsp)
{
    results errs;
    char path[] = "/tmp/optipipe-test-stderr-XXXXXX";
    ruleset *rs = load(LUA_DIR "/good", isolate, 1, &errs);
    model *m = tm_fixture_model();
    op_error err;
    int saved;
    char *text;

    print_errors(&errs);
    assert_int_equal(errs.ne, 0);
    results_free(&errs);
    results_init(out);
    saved = capture_begin(path);
    assert_int_equal(ruleset_run(rs, m, out, &err), 0);
    text = capture_end(saved, path);
    assert_non_null(strstr(text, "[t.print] hello\t42\tnil\n"));
    assert_non_null(strstr(text, "[t.print] via ctx.log\n"));
    assert_non_null(strstr(text, "[t.print] via ctx:log\n"));
    free(text);
    print_errors(out);
    assert_int_equal(out->ne, 0);
    *mp = m;
    *rsp = rs;
}

/* ---- loading ----------------------------------------------------------------- */

static void test_load_good(void **state)
{
    results errs;
    ruleset *rs = load(LUA_DIR "/good", 0, 1, &errs);
    const rule_meta *m;
    char *opts;

    (void)state;
    print_errors(&errs);
    assert_int_equal(errs.ne, 0);
    /* sorted by file name; lib/ and report_test.lua are not rules */
    assert_int_equal(ruleset_count(rs), 7);
    assert_string_equal(ruleset_rule(rs, 0)->id, "t.bundle");
    assert_string_equal(ruleset_rule(rs, 6)->id, "t.spark");
    assert_null(ruleset_rule(rs, 7));
    assert_null(ruleset_find(rs, "nope"));

    m = ruleset_find(rs, "t.shape");
    assert_non_null(m);
    assert_string_equal(m->title, "Model shape");
    assert_int_equal(m->sev, SEV_INFO);
    assert_int_equal(m->default_sev, SEV_INFO);
    assert_int_equal(m->nsources, 1);
    assert_string_equal(m->sources[0], "flink");
    assert_int_equal(m->ntags, 1);
    assert_string_equal(m->tags[0], "test");
    assert_string_equal(m->file, LUA_DIR "/good/shape.lua");
    assert_string_equal(m->pack, "test");
    assert_true(m->enabled);
    assert_true(m->trusted);
    assert_null(m->description);
    assert_true(cJSON_IsObject(m->options));
    assert_null(m->options->child);
    assert_null(m->overrides);

    m = ruleset_find(rs, "t.report");
    assert_int_equal(m->sev, SEV_WARNING);
    assert_string_equal(m->description, "Exercises every report field.");
    assert_int_equal(m->ntags, 0);

    m = ruleset_find(rs, "t.options");
    opts = cJSON_PrintUnformatted(m->options);
    assert_string_equal(opts, "{\"count\":3,\"flag\":true,\"name\":\"x\","
                              "\"nested\":{\"a\":1,\"list\":[1,2]},"
                              "\"threshold\":0.8}");
    free(opts);
    results_free(&errs);
    ruleset_free(rs);
}

struct expect_err {
    const char *rule; /* NULL: the file path */
    const char *file;
    const char *has;
};

static const struct expect_err bad_expect[] = {
    {NULL, "syntax.lua", "/bad/syntax.lua:4:"},
    {NULL, "runtime.lua", "/bad/runtime.lua:3: attempt to index"},
    {NULL, "runtime.lua", "stack traceback:"},
    {NULL, "noid.lua", "/bad/noid.lua: 'id' must be a string"},
    {NULL, "notable.lua", "must return a rule table (got number)"},
    {NULL, "loop.lua", "instruction budget exceeded"},
    {"bad.sev", NULL, "/bad/badsev.lua: 'severity' must be"},
    {"bad.sev", NULL, "(got fatal)"},
    {"bad.sources", NULL, "'sources' must be a list of strings"},
    {"bad.emptysources", NULL, "'sources' must be a non-empty list"},
    {"bad.options", NULL, "'options' must be a table"},
    {"bad.optfunc", NULL, "options.f: a function cannot be stored"},
    {"bad.tags", NULL, "'tags' must hold non-empty strings"},
    {"bad.nocheck", NULL, "'check' must be a function"},
    {"bad.notitle", NULL, "'title' must be a non-empty string"},
    {"bad.dup", NULL, "/bad/dup_b.lua: duplicate rule id 'bad.dup' "
                      "(already defined in "},
};

static void check_bad(int isolate)
{
    results errs;
    ruleset *rs = load(LUA_DIR "/bad", isolate, 0, &errs);
    size_t i;

    assert_int_equal(ruleset_count(rs), 2);
    assert_non_null(ruleset_find(rs, "bad.ok"));
    assert_string_equal(ruleset_find(rs, "bad.dup")->title, "First");
    assert_false(ruleset_find(rs, "bad.ok")->trusted);
    assert_int_equal(errs.ne, 14);
    for (i = 0; i < sizeof bad_expect / sizeof *bad_expect; i++) {
        char path[512];
        const rule_error *e;
        snprintf(path, sizeof path, "%s/bad/%s", LUA_DIR,
                 bad_expect[i].file ? bad_expect[i].file : "");
        e = error_of(&errs, bad_expect[i].rule ? bad_expect[i].rule : path);
        if (!e || !strstr(e->error, bad_expect[i].has))
            fail_msg("no error for %s containing '%s' (got '%s')",
                     bad_expect[i].rule ? bad_expect[i].rule : path,
                     bad_expect[i].has, e ? e->error : "nothing");
    }
    results_free(&errs);
    ruleset_free(rs);
}

static void test_load_bad(void **state)
{
    (void)state;
    check_bad(0);
}

static void test_load_bad_isolated(void **state)
{
    (void)state;
    check_bad(1);
}

static void test_load_missing_dir(void **state)
{
    rule_limits l = test_limits(0);
    ruleset *rs = ruleset_new(&l);
    results errs;
    op_error err;

    (void)state;
    results_init(&errs);
    assert_int_equal(ruleset_load_dir(rs, LUA_DIR "/nope", "x", NULL, 1,
                                      &errs, &err),
                     OP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "/tests/lua/nope"));
    assert_int_equal(ruleset_count(rs), 0);
    results_free(&errs);
    ruleset_free(rs);
}

/* A binary chunk saved as a rule file is refused, not executed. */
static void test_load_binary_file(void **state)
{
    char dir[] = "/tmp/optipipe-rules-XXXXXX", path[600];
    static const char chunk[] = "\x1bLua\x54\x00\x19\x93\r\n\x1a\n\x04\x08";
    results errs;
    ruleset *rs;
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/bin.lua", dir);
    f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(chunk, 1, sizeof chunk - 1, f);
    fclose(f);
    rs = load(dir, 0, 1, &errs);
    assert_int_equal(ruleset_count(rs), 0);
    assert_int_equal(errs.ne, 1);
    assert_string_equal(errs.e[0].rule, path);
    assert_non_null(strstr(errs.e[0].error, "binary chunk"));
    results_free(&errs);
    ruleset_free(rs);
    unlink(path);
    rmdir(dir);
}

/* ---- running --------------------------------------------------------------------- */

static void check_good_findings(const results *out)
{
    const finding *f;
    char *s;

    assert_int_equal(out->rules_run, 7);
    assert_non_null(finding_of(out, "t.shape", "shape ok"));
    assert_int_equal(count_of(out, "t.shape"), 1);
    assert_non_null(finding_of(out, "t.require", "hello rule 42"));
    assert_int_equal(count_of(out, "t.print"), 0);

    /* t.report: every field */
    assert_int_equal(count_of(out, "t.report"), 3);
    f = finding_of(out, "t.report", "map is busy at 97%");
    assert_non_null(f);
    assert_string_equal(f->title, "Reports");
    assert_int_equal(f->sev, SEV_WARNING);
    assert_string_equal(f->source, "flink");
    assert_string_equal(f->run_id, "job-1");
    assert_int_equal(f->run_index, 0);
    assert_string_equal(f->node_id, "map");
    assert_string_equal(f->node_name, "Map");
    assert_string_equal(f->recommendation, "raise its parallelism");
    assert_true(f->impact_ms == 1500);
    s = cJSON_PrintUnformatted(f->evidence);
    assert_string_equal(s, "{\"7\":\"seven\",\"alpha\":\"a\",\"list\":[3,2,1],"
                           "\"mid\":true,\"nan\":null,\"nested\":{\"a\":1,"
                           "\"b\":2},\"ratio\":0.5,\"zeta\":1}");
    free(s);
    s = cJSON_PrintUnformatted(f->changes);
    assert_string_equal(s, "[{\"from\":4,\"key\":\"parallelism\","
                           "\"target\":\"Map\",\"to\":7}]");
    free(s);
    f = finding_of(out, "t.report", "method form");
    assert_non_null(f);
    assert_int_equal(f->sev, SEV_ERROR);
    assert_string_equal(f->node_id, "src");
    assert_true(f->impact_ms < 0);
    f = finding_of(out, "t.report", "run level");
    assert_non_null(f);
    assert_null(f->node_id);
    assert_int_equal(f->run_index, 0);
    s = cJSON_PrintUnformatted(f->evidence);
    assert_string_equal(s, "{\"busy_ratio\":0.97,\"records_in\":1000}");
    free(s);

    /* t.options: defaults, same in both calls */
    assert_int_equal(count_of(out, "t.options"), 2);
    f = finding_of(out, "t.options", "options of app-2");
    assert_non_null(f);
    assert_true(ev_num(f, "threshold") == 0.8);
    assert_true(ev_num(f, "count") == 3);
    assert_string_equal(ev_str(f, "count_type"), "integer");
    assert_true(ev_num(f, "a") == 1);
    assert_true(ev_num(f, "list2") == 2);
    assert_string_equal(ev_str(f, "name"), "x");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(f->evidence, "flag")));
    assert_string_equal(ev_str(f, "rule_id"), "t.options");
    assert_string_equal(ev_str(f, "rule_severity"), "info");

    /* t.bundle: once over the bundle */
    assert_int_equal(count_of(out, "t.bundle"), 5);
    f = finding_of(out, "t.bundle", "runs: 3");
    assert_non_null(f);
    assert_int_equal(f->run_index, SIZE_MAX);
    assert_null(f->run_id);
    f = finding_of(out, "t.bundle", "run spark/app-2");
    assert_non_null(f);
    assert_int_equal(f->run_index, 2);
    f = finding_of(out, "t.bundle", "by run id");
    assert_non_null(f);
    assert_int_equal(f->run_index, 0);
    assert_string_equal(f->node_id, "map");

    /* t.spark: once per spark run, never for flink */
    assert_int_equal(count_of(out, "t.spark"), 2);
    assert_int_equal(finding_of(out, "t.spark", "spark app-1")->run_index, 1);
    assert_int_equal(finding_of(out, "t.spark", "spark app-2")->run_index, 2);
}

static void test_run_good(void **state)
{
    results out;
    model *m;
    ruleset *rs;

    (void)state;
    run_good(0, &out, &m, &rs);
    /* before results_finish, findings come in rule order (file names) */
    assert_string_equal(out.f[0].rule, "t.bundle");
    assert_string_equal(out.f[out.n - 1].rule, "t.spark");
    check_good_findings(&out);
    results_free(&out);
    ruleset_free(rs);
    model_free(m);
}

static void test_run_good_isolated(void **state)
{
    results out;
    model *m;
    ruleset *rs;

    (void)state;
    run_good(1, &out, &m, &rs);
    check_good_findings(&out);
    results_free(&out);
    ruleset_free(rs);
    model_free(m);
}

/* Both modes give the same results, finding for finding. */
static void test_isolation_equivalent(void **state)
{
    results a, b;
    model *ma, *mb;
    ruleset *ra, *rb;
    size_t i;

    (void)state;
    run_good(0, &a, &ma, &ra);
    run_good(1, &b, &mb, &rb);
    results_finish(&a, ma);
    results_finish(&b, mb);
    assert_int_equal(a.n, b.n);
    assert_int_equal(a.rules_run, b.rules_run);
    for (i = 0; i < a.n; i++) {
        char *ea = cJSON_PrintUnformatted(a.f[i].evidence);
        char *eb = cJSON_PrintUnformatted(b.f[i].evidence);
        assert_string_equal(a.f[i].rule, b.f[i].rule);
        assert_string_equal(a.f[i].message, b.f[i].message);
        assert_string_equal(a.f[i].fingerprint, b.f[i].fingerprint);
        assert_int_equal(a.f[i].run_index, b.f[i].run_index);
        assert_string_equal(ea, eb);
        free(ea);
        free(eb);
    }
    results_free(&a);
    results_free(&b);
    ruleset_free(ra);
    ruleset_free(rb);
    model_free(ma);
    model_free(mb);
}

static void run_overrides(int isolate)
{
    results errs, out;
    ruleset *rs = load(LUA_DIR "/good", isolate, 1, &errs);
    model *m = tm_fixture_model();
    rule_meta *meta = ruleset_find(rs, "t.options");
    const finding *f;
    op_error err;
    int saved;
    char path[] = "/tmp/optipipe-test-stderr-XXXXXX";

    meta->overrides = cJSON_Parse("{\"threshold\":0.9,\"nested\":{\"a\":5}}");
    meta->sev = SEV_ERROR;
    ruleset_find(rs, "t.spark")->enabled = 0;
    results_init(&out);
    saved = capture_begin(path);
    assert_int_equal(ruleset_run(rs, m, &out, &err), 0);
    free(capture_end(saved, path));
    assert_int_equal(out.ne, 0);
    assert_int_equal(out.rules_run, 6);
    assert_int_equal(count_of(&out, "t.spark"), 0);
    assert_int_equal(count_of(&out, "t.options"), 2);
    f = finding_of(&out, "t.options", "options of app-2");
    assert_int_equal(f->sev, SEV_ERROR);
    assert_true(ev_num(f, "threshold") == 0.9);
    assert_true(ev_num(f, "a") == 5);
    assert_true(ev_num(f, "list2") == 2);
    assert_true(ev_num(f, "count") == 3);
    assert_string_equal(ev_str(f, "rule_severity"), "error");
    results_free(&out);
    results_free(&errs);
    ruleset_free(rs);
    model_free(m);
}

static void test_overrides_and_disabled(void **state)
{
    (void)state;
    run_overrides(0);
    run_overrides(1);
}

/* The same ruleset runs again over another model (as `rules test` does). */
static void test_run_two_models(void **state)
{
    results errs, out;
    ruleset *rs = load(LUA_DIR "/good", 0, 1, &errs);
    model *m1 = tm_fixture_model(), *m2 = model_new();
    op_builder *b = model_builder_new(m2, "other.json");
    op_error err;
    int saved;
    char path[] = "/tmp/optipipe-test-stderr-XXXXXX";

    (void)state;
    op_run_get(b, "spark", "app-9");
    model_builder_free(b);
    model_freeze(m2);
    results_init(&out);
    saved = capture_begin(path);
    assert_int_equal(ruleset_run(rs, m1, &out, &err), 0);
    results_free(&out);
    results_init(&out);
    assert_int_equal(ruleset_run(rs, m2, &out, &err), 0);
    free(capture_end(saved, path));
    print_errors(&out);
    assert_int_equal(out.ne, 0);
    assert_int_equal(count_of(&out, "t.spark"), 1);
    assert_non_null(finding_of(&out, "t.spark", "spark app-9"));
    assert_non_null(finding_of(&out, "t.bundle", "runs: 1"));
    assert_int_equal(count_of(&out, "t.shape"), 0);
    assert_int_equal(out.rules_run, 3); /* bundle, options, spark */
    results_free(&out);
    results_free(&errs);
    ruleset_free(rs);
    model_free(m1);
    model_free(m2);
}

/* Runs of one history: only the newest is checked, the others are its
 * run.history (oldest first) and are left out of the bundle. */
static void check_history(int isolate)
{
    static const char *const ids[] = {"inv-2", "inv-1", "inv-3"};
    static const int64_t order[] = {2, 1, 3};
    model *m = model_new();
    op_builder *b = model_builder_new(m, "dbt.json");
    results errs, out;
    ruleset *rs;
    const finding *f;
    op_error err;
    size_t i;

    for (i = 0; i < 3; i++) {
        op_run *r = op_run_get(b, "dbt", ids[i]);
        op_node *n = op_node_get(b, r, "m1");
        op_run_history(b, r, "proj", order[i]);
        op_node_str(b, n, OP_F_RAW_STATUS, "pass");
    }
    op_run_get(b, "flink", "job-x");
    model_builder_free(b);
    model_freeze(m);
    rs = load(LUA_DIR "/history", isolate, 1, &errs);
    assert_int_equal(errs.ne, 0);
    results_init(&out);
    assert_int_equal(ruleset_run(rs, m, &out, &err), 0);
    print_errors(&out);
    assert_int_equal(out.ne, 0);
    assert_int_equal(count_of(&out, "h.history"), 1);
    f = finding_of(&out, "h.history", "inv-3 after inv-1*,inv-2*");
    assert_non_null(f);
    assert_int_equal(f->run_index, 2);
    assert_string_equal(ev_str(f, "key"), "proj");
    assert_string_equal(ev_str(f, "node_status"), "pass");
    assert_true(cJSON_IsFalse(cJSON_GetObjectItem(f->evidence, "superseded")));
    assert_non_null(finding_of(&out, "h.bundle", "inv-3:2,job-x:0"));
    results_free(&out);
    results_free(&errs);
    ruleset_free(rs);
    model_free(m);
}

static void test_history(void **state)
{
    (void)state;
    check_history(0);
    check_history(1);
}

static void test_limits_default(void **state)
{
    rule_limits l;

    (void)state;
    rule_limits_default(&l);
    assert_int_equal(l.mem_bytes, 64u << 20);
    assert_int_equal(l.instructions, 100000000u);
    assert_int_equal(l.timeout_ms, 2000);
    assert_int_equal(l.isolate, -1);
}

/* The model's tables are built lazily: raw views of tables nothing has
 * read yet (pairs, next, rawget, rawlen) still show whole tables, in both
 * modes. */
static void test_lazy_model(void **state)
{
    int isolate;

    (void)state;
    for (isolate = 0; isolate <= 1; isolate++) {
        results errs, out;
        ruleset *rs = load(LUA_DIR "/lazy", isolate, 1, &errs);
        model *m = tm_fixture_model();
        op_error err;

        assert_int_equal(errs.ne, 0);
        results_init(&out);
        assert_int_equal(ruleset_run(rs, m, &out, &err), 0);
        print_errors(&out);
        assert_int_equal(out.ne, 0);
        assert_non_null(finding_of(&out, "l.first_reads", "lazy ok"));
        assert_non_null(finding_of(&out, "l.later", "same tables"));
        assert_non_null(finding_of(&out, "l.stale", "saved"));
        results_free(&errs);
        results_free(&out);
        ruleset_free(rs);
        model_free(m);
    }
}

/* A rule keeps tables of one model and reads them over the next, after
 * the first model was freed: they hold what was built, nothing more. */
static void test_lazy_stale(void **state)
{
    results errs, out;
    ruleset *rs = load(LUA_DIR "/lazy", 0, 1, &errs);
    model *m1 = tm_fixture_model(), *m2 = model_new();
    op_builder *b = model_builder_new(m2, "other.json");
    op_error err;

    (void)state;
    op_run_get(b, "spark", "app-9");
    model_builder_free(b);
    model_freeze(m2);
    results_init(&out);
    assert_int_equal(ruleset_run(rs, m1, &out, &err), 0);
    assert_non_null(finding_of(&out, "l.stale", "saved"));
    results_free(&out);
    model_free(m1);
    results_init(&out);
    assert_int_equal(ruleset_run(rs, m2, &out, &err), 0);
    print_errors(&out);
    assert_int_equal(out.ne, 0);
    assert_non_null(finding_of(&out, "l.stale", "stale ok"));
    results_free(&out);
    results_free(&errs);
    ruleset_free(rs);
    model_free(m2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits_default),
        cmocka_unit_test(test_load_good),
        cmocka_unit_test(test_load_bad),
        cmocka_unit_test(test_load_bad_isolated),
        cmocka_unit_test(test_load_missing_dir),
        cmocka_unit_test(test_load_binary_file),
        cmocka_unit_test(test_run_good),
        cmocka_unit_test(test_run_good_isolated),
        cmocka_unit_test(test_isolation_equivalent),
        cmocka_unit_test(test_overrides_and_disabled),
        cmocka_unit_test(test_run_two_models),
        cmocka_unit_test(test_history),
        cmocka_unit_test(test_lazy_model),
        cmocka_unit_test(test_lazy_stale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
