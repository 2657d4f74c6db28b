/*
 * test_baseline.c - the decisions file: set/find/replace, the written
 * format (sorted, fixed keys, SOURCE_DATE_EPOCH), load/save round trip,
 * prune, apply (suppressed marks, ignored findings untouched) and every
 * load error; plus the "model" plugin reading normalize's JSON back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyze.h"
#include "baseline.h"
#include "config.h"
#include "findings.h"
#include "support.h"


static void path_in_tmp(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tm_tmpdir, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = calloc(1, 1 << 16);
    assert_non_null(f);
    assert_true(fread(buf, 1, (1 << 16) - 1, f) > 0);
    fclose(f);
    return buf;
}

static model *small_model(void)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "in.json");
    op_run *r = op_run_get(b, "flink", "job-1");

    op_node_get(b, r, "v1");
    op_node_get(b, r, "v2");
    model_builder_free(b);
    model_freeze(m);
    return m;
}

static void add(results *r, const model *m, const char *rule, const char *node)
{
    cJSON *o = cJSON_CreateObject();
    op_error err;

    cJSON_AddStringToObject(o, "rule", rule);
    cJSON_AddStringToObject(o, "title", "T");
    cJSON_AddStringToObject(o, "severity", "warning");
    cJSON_AddNumberToObject(o, "run", 0);
    if (node)
        cJSON_AddStringToObject(o, "node", node);
    cJSON_AddStringToObject(o, "message", "m");
    assert_int_equal(results_add_finding(r, m, o, &err), 0);
    cJSON_Delete(o);
}

static void three_findings(results *r, model **m)
{
    *m = small_model();
    results_init(r);
    add(r, *m, "a.rule", "v1");
    add(r, *m, "b.rule", "v2");
    add(r, *m, "c.rule", NULL);
    results_finish(r, *m);
}

static void test_set_find_replace(void **state)
{
    baseline b;
    results r;
    model *m;
    const decision *d;

    (void)state;
    three_findings(&r, &m);
    baseline_init(&b);
    assert_null(baseline_find(&b, r.f[0].fingerprint));
    assert_int_equal(baseline_set(&b, &r.f[2], DECISION_DISMISSED, "no", "T1"), 0);
    assert_int_equal(baseline_set(&b, &r.f[0], DECISION_APPROVED, NULL, "T1"), 0);
    assert_int_equal(b.n, 2);
    assert_true(strcmp(b.d[0].fingerprint, b.d[1].fingerprint) < 0);
    d = baseline_find(&b, r.f[2].fingerprint);
    assert_non_null(d);
    assert_int_equal(d->status, DECISION_DISMISSED);
    assert_string_equal(d->reason, "no");
    assert_string_equal(d->run, "job-1");
    /* deciding again replaces */
    assert_int_equal(baseline_set(&b, &r.f[2], DECISION_APPROVED, "", "T2"), 0);
    assert_int_equal(b.n, 2);
    d = baseline_find(&b, r.f[2].fingerprint);
    assert_int_equal(d->status, DECISION_APPROVED);
    assert_null(d->reason);
    assert_string_equal(d->decided_at, "T2");
    assert_null(baseline_find(&b, "short"));
    baseline_free(&b);
    results_free(&r);
    model_free(m);
}

static void test_save_load_format(void **state)
{
    baseline b, c;
    results r;
    model *m;
    op_error err;
    char path[256], *text;
    size_t i;

    (void)state;
    setenv("SOURCE_DATE_EPOCH", "1732870000", 1);
    three_findings(&r, &m);
    baseline_init(&b);
    for (i = 0; i < r.n; i++)
        assert_int_equal(baseline_set(&b, &r.f[i], i ? DECISION_DISMISSED
                                                     : DECISION_APPROVED,
                                      i ? "why \"quoted\"" : NULL, NULL), 0);
    path_in_tmp(path, sizeof path, "b.json");
    assert_int_equal(baseline_save(&b, path, &err), 0);
    text = read_text(path);
    assert_non_null(strstr(text, "{\n  \"optipipe_baseline\": 1,\n  \"decisions\": [\n    {\n      \"fingerprint\": "));
    assert_non_null(strstr(text, "\"decided_at\": \"2024-11-29T08:46:40Z\""));
    assert_non_null(strstr(text, "\"reason\": \"why \\\"quoted\\\"\""));
    assert_true(strstr(text, "\"rule\"") < strstr(text, "\"status\""));
    assert_int_equal(baseline_load(path, &c, 0, &err), 0);
    assert_int_equal(c.n, 3);
    for (i = 0; i < 3; i++) {
        assert_string_equal(c.d[i].fingerprint, b.d[i].fingerprint);
        assert_int_equal(c.d[i].status, b.d[i].status);
    }
    /* saving what was loaded gives the same bytes */
    assert_int_equal(baseline_save(&c, path, &err), 0);
    {
        char *again = read_text(path);
        assert_string_equal(again, text);
        free(again);
    }
    free(text);
    baseline_free(&b);
    baseline_free(&c);
    results_free(&r);
    model_free(m);
    unsetenv("SOURCE_DATE_EPOCH");
}

static void test_apply_prune(void **state)
{
    baseline b;
    results r, fewer;
    model *m;

    (void)state;
    three_findings(&r, &m);
    baseline_init(&b);
    r.f[1].suppressed = FINDING_IGNORED;
    assert_int_equal(baseline_set(&b, &r.f[0], DECISION_APPROVED, NULL, "t"), 0);
    assert_int_equal(baseline_set(&b, &r.f[1], DECISION_DISMISSED, "x", "t"), 0);
    assert_int_equal(baseline_apply(&b, &r), 1);
    assert_int_equal(r.f[0].suppressed, FINDING_BASELINE);
    assert_int_equal(r.f[1].suppressed, FINDING_IGNORED);
    assert_int_equal(r.f[2].suppressed, 0);
    assert_int_equal(results_count_shown_at_least(&r, SEV_INFO), 1);

    results_init(&fewer);
    add(&fewer, m, "a.rule", "v1");
    results_finish(&fewer, m);
    assert_int_equal(baseline_prune(&b, &fewer), 1);
    assert_int_equal(b.n, 1);
    assert_non_null(baseline_find(&b, fewer.f[0].fingerprint));
    baseline_free(&b);
    results_free(&r);
    results_free(&fewer);
    model_free(m);
}

static void load_error(const char *text, const char *want)
{
    baseline b;
    op_error err;
    char path[256];

    path_in_tmp(path, sizeof path, "bad.json");
    write_text(path, text);
    op_error_clear(&err);
    assert_int_not_equal(baseline_load(path, &b, 1, &err), 0);
    if (!strstr(err.msg, want))
        fail_msg("'%s' lacks '%s'", err.msg, want);
    assert_non_null(strstr(err.msg, "bad.json"));
    assert_int_equal(b.n, 0);
}

static void test_load_errors(void **state)
{
    baseline b;
    op_error err;
    char path[256];

    (void)state;
    path_in_tmp(path, sizeof path, "missing.json");
    assert_int_equal(baseline_load(path, &b, 1, &err), 0);
    assert_int_equal(b.n, 0);
    assert_int_equal(baseline_load(path, &b, 0, &err), OP_ENOTFOUND);
    load_error("{", "not valid JSON");
    load_error("[]", "not an optipipe decisions file");
    load_error("{\"optipipe_baseline\": 9, \"decisions\": []}", "format 9");
    load_error("{\"optipipe_baseline\": 1, \"decisions\": [{\"fingerprint\": \"x\"}]}",
               "decisions[1]: needs a 16-hex-digit 'fingerprint'");
    load_error("{\"optipipe_baseline\": 1, \"decisions\": [{\"fingerprint\": "
               "\"0123456789abcdef\", \"rule\": \"r\", \"status\": \"maybe\"}]}",
               "needs 'rule' and 'status'");
    load_error("{\"optipipe_baseline\": 1, \"decisions\": ["
               "{\"fingerprint\": \"0123456789abcdef\", \"rule\": \"r\", \"status\": \"approved\"},"
               "{\"fingerprint\": \"0123456789abcdef\", \"rule\": \"r\", \"status\": \"dismissed\"}]}",
               "decided twice");
    /* unknown keys are fine */
    path_in_tmp(path, sizeof path, "extra.json");
    write_text(path, "{\"optipipe_baseline\": 1, \"future\": true, \"decisions\": ["
                     "{\"fingerprint\": \"0123456789ABCDEF\", \"rule\": \"r\", "
                     "\"status\": \"approved\", \"note\": 1}]}");
    assert_int_equal(baseline_load(path, &b, 0, &err), 0);
    assert_int_equal(b.n, 1);
    assert_null(b.d[0].run);
    baseline_free(&b);
}

/* A decisions file of many tiny values is refused before cJSON builds its
 * tree (the bound of every JSON input), not parsed whole and then found
 * wrong. */
static void test_load_tree_bound(void **state)
{
    const size_t n = (size_t)2 << 20; /* 2 MiB of "0,": 40 tree bytes per byte */
    baseline b;
    op_error err;
    char path[256];
    FILE *f;

    (void)state;
    path_in_tmp(path, sizeof path, "tiny-values.json");
    assert_non_null(f = fopen(path, "w"));
    fputs("{\"optipipe_baseline\": 1, \"decisions\": [[", f);
    for (size_t i = 0; i < n / 2; i++)
        fputs("0,", f);
    fputs("0]]}", f);
    fclose(f);
    op_error_clear(&err);
    assert_int_equal(baseline_load(path, &b, 0, &err), OP_ELIMIT);
    assert_non_null(strstr(err.msg, "tiny-values.json"));
    assert_non_null(strstr(err.msg, "JSON tree"));
    assert_int_equal(b.n, 0);
}

static void test_save_error(void **state)
{
    baseline b;
    op_error err;

    (void)state;
    baseline_init(&b);
    assert_int_equal(baseline_save(&b, "/nonexistent-dir/x.json", &err), OP_EIO);
    assert_non_null(strstr(err.msg, "/nonexistent-dir/x.json"));
}

/* The "model" plugin reads back what normalize writes (inline models). */
static void test_model_plugin(void **state)
{
    analysis an;
    op_error err;
    char path[256];
    const struct op_run *r;
    const struct op_node *n;

    (void)state;
    path_in_tmp(path, sizeof path, "model.json");
    write_text(path, "{\"schema\": 1, \"runs\": ["
        "{\"source\": \"dbt\", \"id\": \"old\", \"history_key\": \"p\", \"history_order\": 1,"
        " \"nodes\": [{\"id\": \"m\", \"duration_ms\": 10}]},"
        "{\"source\": \"dbt\", \"id\": \"new\", \"history_key\": \"p\", \"history_order\": 2,"
        " \"config\": {\"threads\": 4, \"full\": true}, \"metrics\": {\"a\": 1.5, \"b\": 2},"
        " \"nodes\": [{\"id\": \"m\", \"kind\": \"model\", \"parents\": {}, \"duration_ms\": 20,"
        "   \"dist\": {\"t\": [1, 2, 3, 4]}, \"attrs\": {\"file\": \"x.sql\"}},"
        "  {\"id\": \"n\", \"parents\": [\"m\"]}],"
        " \"series\": {\"s\": [{\"k\": \"v\", \"n\": 1}]}, \"warnings\": [\"w\"]}]}");
    assert_int_equal(analysis_init(&an, NULL, NULL, NULL, &err), 0);
    assert_int_equal(analysis_add(&an, path), 1);
    analysis_freeze(&an);
    assert_string_equal(an.inputs[0].plugin, "model");
    assert_int_equal(an.m->nruns, 2);
    r = an.m->runs[1];
    assert_string_equal(r->id, "new");
    assert_int_equal(r->nhistory, 1);
    assert_true(an.m->runs[0]->superseded);
    assert_string_equal(mmap_get(&r->config, "threads")->u.s, "4");
    assert_string_equal(mmap_get(&r->config, "full")->u.s, "true");
    assert_int_equal(mentry_type(mmap_get(&r->metrics, "b")), MV_INT);
    assert_int_equal(mentry_type(mmap_get(&r->metrics, "a")), MV_NUM);
    n = model_find_node(r, "m");
    assert_non_null(n);
    assert_int_equal(n->duration_ms, 20);
    assert_int_equal(n->ndists, 1);
    assert_true(n->dists[0].d.p50 == 2.5);
    assert_int_equal(n->nchildren, 1);
    assert_int_equal(model_find_series(r, "s")->n, 1);
    analysis_free(&an);

    /* a run without a source is an error that names the place */
    write_text(path, "{\"schema\": 1, \"runs\": [{\"id\": \"x\"}]}");
    assert_int_equal(analysis_init(&an, NULL, NULL, NULL, &err), 0);
    assert_int_equal(analysis_add(&an, path), 0);
    assert_non_null(strstr(an.inputs[0].warnings[0], "runs[1]"));
    analysis_free(&an);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_find_replace),
        cmocka_unit_test(test_save_load_format),
        cmocka_unit_test(test_apply_prune),
        cmocka_unit_test(test_load_errors),
        cmocka_unit_test(test_load_tree_bound),
        cmocka_unit_test(test_save_error),
        cmocka_unit_test(test_model_plugin),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
