/*
 * test_diff.c - core/diff.c: node identities that survive shifting ids,
 * config added/removed/changed, metric deltas and ratios, resources, the
 * ranking of nodes by |duration change|, and every allocation failure of
 * the comparison reported (never a partial diff).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"

static const char run_a[] =
    "{\"source\":\"spark\",\"id\":\"app_1\",\"job\":\"nightly\",\"status\":\"succeeded\","
    "\"engine_version\":\"3.5.0\",\"duration_ms\":10000,"
    "\"config\":{\"k.same\":\"1\",\"k.changed\":\"8g\",\"k.removed\":\"x\"},"
    "\"metrics\":{\"executors_max\":4,\"input_bytes\":100,\"same\":7},"
    "\"nodes\":["
    "{\"id\":\"stage-0-0\",\"kind\":\"stage\",\"name\":\"scan\",\"duration_ms\":2000,\"parallelism\":10},"
    "{\"id\":\"stage-1-0\",\"kind\":\"stage\",\"name\":\"agg\",\"duration_ms\":5000,\"parallelism\":20},"
    "{\"id\":\"stage-2-0\",\"kind\":\"stage\",\"name\":\"scan\",\"duration_ms\":1000},"
    "{\"id\":\"stage-3-0\",\"kind\":\"stage\",\"name\":\"gone\",\"duration_ms\":300}]}";

/* The same job the next night: every stage id shifted by 10, agg 3x
 * slower, a new stage, one gone, a key changed, one added, one removed. */
static const char run_b[] =
    "{\"source\":\"spark\",\"id\":\"app_2\",\"job\":\"nightly\",\"status\":\"succeeded\","
    "\"engine_version\":\"3.5.1\",\"duration_ms\":21000,"
    "\"config\":{\"k.same\":\"1\",\"k.changed\":\"4g\",\"k.added\":\"y\"},"
    "\"metrics\":{\"executors_max\":2,\"input_bytes\":150,\"same\":7},"
    "\"nodes\":["
    "{\"id\":\"stage-10-0\",\"kind\":\"stage\",\"name\":\"scan\",\"duration_ms\":2100,\"parallelism\":10},"
    "{\"id\":\"stage-11-0\",\"kind\":\"stage\",\"name\":\"agg\",\"duration_ms\":15000,\"parallelism\":20},"
    "{\"id\":\"stage-12-0\",\"kind\":\"stage\",\"name\":\"scan\",\"duration_ms\":900},"
    "{\"id\":\"stage-13-0\",\"kind\":\"stage\",\"name\":\"new\",\"duration_ms\":700}]}";

static cJSON *diff_of(const char *a, const char *b, size_t top)
{
    cJSON *ja = cJSON_Parse(a), *jb = cJSON_Parse(b), *d = NULL;
    diff_opts opts = {top, NULL, 0};
    op_error err;

    op_error_clear(&err);
    assert_non_null(ja);
    assert_non_null(jb);
    assert_int_equal(diff_runs(ja, "A", jb, "B", &opts, &d, &err), 0);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
    return d;
}

static const cJSON *find(const cJSON *arr, const char *field, const char *v)
{
    const cJSON *e;

    cJSON_ArrayForEach(e, arr) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, field);
        if (cJSON_IsString(s) && !strcmp(s->valuestring, v))
            return e;
    }
    return NULL;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static void test_node_key(void **state)
{
    char buf[DIFF_KEY_MAX], small[24], name[2000];

    (void)state;
    assert_string_equal(diff_node_key(buf, sizeof buf, "stage", "scan", 2),
                        "stage:scan#2");
    assert_string_equal(diff_node_key(buf, sizeof buf, NULL, NULL, 1), "node:#1");
    /* a cut keeps the ordinal, so long names never collide on it */
    memset(name, 'x', sizeof name - 1);
    name[sizeof name - 1] = 0;
    diff_node_key(small, sizeof small, "model", name, 12);
    assert_true(strlen(small) < sizeof small);
    assert_non_null(strstr(small, "...#12"));
    diff_node_key(buf, sizeof buf, "model", name, 3);
    assert_true(strlen(buf) < sizeof buf);
    assert_non_null(strstr(buf, "...#3"));
}

static void test_config_and_version(void **state)
{
    cJSON *d = diff_of(run_a, run_b, 10);
    const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(d, "config"), *e;
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(d, "engine_version");

    (void)state;
    assert_int_equal(cJSON_GetArraySize(cfg), 3); /* k.same is not listed */
    e = find(cfg, "key", "k.changed");
    assert_string_equal(str(e, "change"), "changed");
    assert_string_equal(str(e, "a"), "8g");
    assert_string_equal(str(e, "b"), "4g");
    e = find(cfg, "key", "k.added");
    assert_string_equal(str(e, "change"), "added");
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(e, "a")));
    e = find(cfg, "key", "k.removed");
    assert_string_equal(str(e, "change"), "removed");
    /* sorted by key */
    assert_string_equal(str(cJSON_GetArrayItem(cfg, 0), "key"), "k.added");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ev, "changed")));
    assert_string_equal(str(ev, "b"), "3.5.1");
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(d, "a"), "ref"), "A");
    cJSON_Delete(d);
}

static void test_ignore_keys(void **state)
{
    static const char *const globs[] = {"k.chan*", "nomatch"};
    diff_opts o = {10, globs, 2};
    cJSON *ja = cJSON_Parse(run_a), *jb = cJSON_Parse(run_b), *d = NULL;
    const cJSON *cfg;
    op_error err;

    (void)state;
    op_error_clear(&err);
    assert_int_equal(diff_runs(ja, "A", jb, "B", &o, &d, &err), 0);
    cfg = cJSON_GetObjectItemCaseSensitive(d, "config");
    assert_null(find(cfg, "key", "k.changed"));
    assert_non_null(find(cfg, "key", "k.added"));
    assert_true(num(d, "config_ignored") == 1);
    cJSON_Delete(d);
    cJSON_Delete(ja);
    cJSON_Delete(jb);
}

static void test_metrics_and_resources(void **state)
{
    cJSON *d = diff_of(run_a, run_b, 10);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(d, "metrics");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(d, "resources");
    const cJSON *dur = cJSON_GetObjectItemCaseSensitive(d, "duration_ms"), *e;

    (void)state;
    assert_null(find(m, "key", "same")); /* equal metrics are left out */
    e = find(m, "key", "input_bytes");
    assert_true(num(e, "delta") == 50);
    assert_true(num(e, "ratio") == 1.5);
    assert_true(num(dur, "delta") == 11000);
    assert_true(num(dur, "ratio") == 2.1);
    e = find(res, "name", "executors_max"); /* resources even when equal */
    assert_true(num(e, "a") == 4 && num(e, "b") == 2);
    e = find(res, "name", "parallelism_total");
    assert_true(num(e, "a") == 30 && num(e, "b") == 30);
    assert_null(find(res, "name", "threads")); /* neither run has it */
    cJSON_Delete(d);
}

static void test_nodes_ranked(void **state)
{
    cJSON *d = diff_of(run_a, run_b, 10);
    const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(d, "nodes"), *e;
    const cJSON *cnt = cJSON_GetObjectItemCaseSensitive(d, "node_counts");

    (void)state;
    /* matched by kind:name#k although every id changed */
    assert_true(num(cnt, "matched") == 3);
    assert_true(num(cnt, "added") == 1 && num(cnt, "removed") == 1);
    e = cJSON_GetArrayItem(nodes, 0);
    assert_string_equal(str(e, "key"), "stage:agg#1");
    assert_string_equal(str(e, "a_id"), "stage-1-0");
    assert_string_equal(str(e, "b_id"), "stage-11-0");
    assert_true(num(e, "delta") == 10000);
    assert_true(num(e, "share") > 0.9 && num(e, "share") < 0.91);
    /* then by |delta|: new (+700), gone (-300), scan#1 (+100), scan#2 (-100) */
    assert_string_equal(str(cJSON_GetArrayItem(nodes, 1), "key"), "stage:new#1");
    assert_string_equal(str(cJSON_GetArrayItem(nodes, 1), "change"), "added");
    assert_string_equal(str(cJSON_GetArrayItem(nodes, 2), "key"), "stage:gone#1");
    assert_string_equal(str(cJSON_GetArrayItem(nodes, 2), "change"), "removed");
    /* it went against the run's change: it explains no share of it */
    assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(nodes, 2), "share"));
    assert_string_equal(str(cJSON_GetArrayItem(nodes, 3), "key"), "stage:scan#1");
    assert_string_equal(str(cJSON_GetArrayItem(nodes, 4), "key"), "stage:scan#2");
    assert_true(num(cJSON_GetArrayItem(nodes, 4), "delta") == -100);
    assert_int_equal(cJSON_GetArraySize(nodes), 5);
    cJSON_Delete(d);
    d = diff_of(run_a, run_b, 2); /* --top 2 */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "nodes")), 2);
    cJSON_Delete(d);
}

static void test_same_run_is_empty(void **state)
{
    cJSON *d = diff_of(run_a, run_a, 10);

    (void)state;
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "config")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "metrics")), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "nodes")), 0);
    cJSON_Delete(d);
}

static void test_not_a_run(void **state)
{
    cJSON *a = cJSON_Parse("[1]"), *b = cJSON_Parse(run_b), *d = NULL;
    op_error err;

    (void)state;
    op_error_clear(&err);
    assert_int_equal(diff_runs(a, "A", b, "B", NULL, &d, &err), OP_EUSAGE);
    assert_null(d);
    /* a run without config, metrics or nodes still compares */
    cJSON_Delete(a);
    a = cJSON_Parse("{\"id\":\"x\"}");
    assert_int_equal(diff_runs(a, "A", b, "B", NULL, &d, &err), 0);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(d, "config")), 3);
    cJSON_Delete(d);
    cJSON_Delete(a);
    cJSON_Delete(b);
}


/* Findings of A and of B: one gone, one alike, one whose severity and
 * evidence moved, one new, and one whose fingerprint changed with its
 * job key but whose legacy fingerprint still names it. */
static const char findings_a[] =
    "[{\"fingerprint\":\"0000000000000001\",\"rule\":\"r.gone\",\"severity\":\"warning\",\"message\":\"gone\"},"
    "{\"fingerprint\":\"0000000000000002\",\"rule\":\"r.same\",\"severity\":\"info\",\"message\":\"m\",\"evidence\":{\"x\":1}},"
    "{\"fingerprint\":\"0000000000000003\",\"rule\":\"r.sev\",\"severity\":\"info\",\"node\":\"stage-1-0\",\"message\":\"m\",\"evidence\":{\"x\":1,\"y\":2}},"
    "{\"fingerprint\":\"00000000000000a4\",\"rule\":\"r.rekey\",\"severity\":\"info\",\"message\":\"k\"}]";
static const char findings_b[] =
    "[{\"fingerprint\":\"0000000000000002\",\"rule\":\"r.same\",\"severity\":\"info\",\"message\":\"m\",\"evidence\":{\"x\":1}},"
    "{\"fingerprint\":\"0000000000000003\",\"rule\":\"r.sev\",\"severity\":\"error\",\"node\":\"stage-11-0\",\"message\":\"m\",\"evidence\":{\"x\":5,\"z\":3}},"
    "{\"fingerprint\":\"0000000000000005\",\"rule\":\"r.new\",\"severity\":\"error\",\"message\":\"new\"},"
    "{\"fingerprint\":\"00000000000000b4\",\"legacy_fp\":\"00000000000000a4\",\"rule\":\"r.rekey\",\"severity\":\"info\",\"message\":\"k\"}]";

static cJSON *run_with(const char *run, const char *findings)
{
    cJSON *r = cJSON_Parse(run);

    assert_non_null(r);
    if (findings)
        assert_true(cJSON_AddItemToObject(r, "findings", cJSON_Parse(findings)));
    return r;
}

static void test_findings(void **state)
{
    cJSON *a = run_with(run_a, findings_a), *b = run_with(run_b, findings_b), *d;
    const cJSON *fs, *c, *ev;
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    op_error err;

    (void)state;
    op_error_clear(&err);
    assert_int_equal(diff_runs(a, "A", b, "B", NULL, &d, &err), 0);
    fs = cJSON_GetObjectItemCaseSensitive(d, "findings");
    assert_int_equal((int)num(fs, "a"), 4);
    assert_int_equal((int)num(fs, "b"), 4);
    assert_int_equal((int)num(fs, "unchanged"), 2); /* r.same, r.rekey */
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(fs, "new")), 1);
    assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(fs, "new"), 0),
                            "rule"), "r.new");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(fs, "resolved")), 1);
    assert_string_equal(str(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(fs, "resolved"), 0),
                            "rule"), "r.gone");
    c = find(cJSON_GetObjectItemCaseSensitive(fs, "changed"), "rule", "r.sev");
    assert_non_null(c);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(fs, "changed")), 1);
    assert_string_equal(str(c, "node"), "stage-11-0"); /* B's node id */
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "changed"), 0)->valuestring,
                        "severity");
    assert_string_equal(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "changed"), 1)->valuestring,
                        "evidence");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(c, "changed")), 2);
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(c, "severity"), "a"), "info");
    assert_string_equal(str(cJSON_GetObjectItemCaseSensitive(c, "severity"), "b"), "error");
    ev = cJSON_GetObjectItemCaseSensitive(c, "evidence_changes");
    assert_int_equal(cJSON_GetArraySize(ev), 3); /* x changed, y gone, z added */
    assert_int_equal((int)num(find(ev, "key", "x"), "b"), 5);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(find(ev, "key", "y"), "b")));
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(find(ev, "key", "z"), "a")));
    f = open_memstream(&buf, &len);
    assert_int_equal(report_diff(f, "text", d), 0);
    fclose(f);
    assert_non_null(strstr(buf, "findings: 1 new, 1 resolved, 1 changed, 2 unchanged (A has 4, B 4)"));
    assert_non_null(strstr(buf, "~ error    r.sev  stage-11-0: severity info -> error; evidence x 1 -> 5"));
    free(buf);
    cJSON_Delete(d);
    /* a side that carries no findings: not compared, never "all new" */
    cJSON_DeleteItemFromObject(a, "findings");
    assert_int_equal(diff_runs(a, "A", b, "B", NULL, &d, &err), 0);
    assert_true(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(d, "findings")));
    cJSON_Delete(d);
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* cJSON allocations fail after `budget` successes. */
static long budget = -1;

static void *failing_malloc(size_t n)
{
    if (budget == 0)
        return NULL;
    if (budget > 0)
        budget--;
    return malloc(n);
}

static void test_alloc_failures(void **state)
{
    cJSON *a = run_with(run_a, findings_a), *b = run_with(run_b, findings_b), *d;
    cJSON_Hooks hooks = {failing_malloc, free};
    op_error err;
    long k;
    int rc = -1;

    (void)state;
    cJSON_InitHooks(&hooks);
    for (k = 0; k < 100000 && rc; k++) {
        d = NULL;
        op_error_clear(&err);
        budget = k;
        rc = diff_runs(a, "A", b, "B", NULL, &d, &err);
        if (rc) {
            assert_int_equal(rc, OP_ENOMEM);
            assert_null(d);
        }
        cJSON_Delete(d);
    }
    budget = -1;
    cJSON_InitHooks(NULL);
    assert_int_equal(rc, 0);
    assert_true(k > 20); /* it did fail on the way */
    cJSON_Delete(a);
    cJSON_Delete(b);
}

static void test_report_formats(void **state)
{
    cJSON *d = diff_of(run_a, run_b, 10);
    static const char *const fmts[] = {"text", "json", "markdown", "html"};
    char *buf = NULL;
    size_t len = 0, i;

    (void)state;
    for (i = 0; i < 4; i++) {
        FILE *f = open_memstream(&buf, &len);
        assert_string_equal(diff_format_name(i), fmts[i]);
        assert_int_equal(report_diff(f, fmts[i], d), 0);
        fclose(f);
        assert_non_null(strstr(buf, "agg"));
        assert_non_null(strstr(buf, "k.changed"));
        if (i == 3) /* no script, nothing from elsewhere */
            assert_null(strstr(buf, "<script"));
        free(buf);
        buf = NULL;
    }
    assert_null(diff_format_name(4)); /* no sarif, no junit: no findings */
    cJSON_Delete(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_node_key),
        cmocka_unit_test(test_config_and_version),
        cmocka_unit_test(test_findings),
        cmocka_unit_test(test_ignore_keys),
        cmocka_unit_test(test_metrics_and_resources),
        cmocka_unit_test(test_nodes_ranked),
        cmocka_unit_test(test_same_run_is_empty),
        cmocka_unit_test(test_not_a_run),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_report_formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
