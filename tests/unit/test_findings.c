/*
 * test_findings.c - finding validation, fingerprints (stable across runs,
 * independent of order and addresses), ordering, and both reporters
 * (text neutralizes control characters; json follows schema 1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "findings.h"
#include "report.h"

static model *small_model(void)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "in.json");
    op_run *r = op_run_get(b, "flink", "job-1");
    op_node *n = op_node_get(b, r, "v1");

    op_node_str(b, n, OP_F_NAME, "Window\033]0;pwned\007<script>");
    op_run_str(b, r, OP_F_NAME, "job\033[2J");
    op_node_get(b, r, "v2");
    model_builder_free(b);
    model_freeze(m);
    return m;
}

static cJSON *finding_json(const char *rule, const char *sev, const char *node,
                           const char *msg)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "rule", rule);
    cJSON_AddStringToObject(o, "title", "A title");
    cJSON_AddStringToObject(o, "severity", sev);
    cJSON_AddNumberToObject(o, "run", 0);
    if (node)
        cJSON_AddStringToObject(o, "node", node);
    if (msg)
        cJSON_AddStringToObject(o, "message", msg);
    return o;
}

static void test_validation(void **state)
{
    model *m = small_model();
    results r;
    op_error err;
    cJSON *o, *ch, *c;

    (void)state;
    results_init(&r);
    o = finding_json("x.rule", "warning", "v1", NULL);
    assert_int_equal(results_add_finding(&r, m, o, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "message"));
    cJSON_Delete(o);

    o = finding_json("x.rule", "warning", "nope", "m");
    assert_int_equal(results_add_finding(&r, m, o, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "nope"));
    cJSON_Delete(o);

    o = finding_json("x.rule", "fatal", "v1", "m");
    assert_int_equal(results_add_finding(&r, m, o, &err), OP_EPARSE);
    cJSON_Delete(o);

    o = finding_json("x.rule", "info", "v1", "m");
    cJSON_ReplaceItemInObject(o, "run", cJSON_CreateNumber(7));
    assert_int_equal(results_add_finding(&r, m, o, &err), OP_EPARSE);
    cJSON_Delete(o);

    o = finding_json("x.rule", "info", "v1", "m");
    ch = cJSON_AddArrayToObject(o, "changes");
    c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "key", "parallelism");
    cJSON_AddItemToArray(ch, c);
    assert_int_equal(results_add_finding(&r, m, o, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "'to'"));
    cJSON_AddNumberToObject(c, "to", 8);
    assert_int_equal(results_add_finding(&r, m, o, &err), 0);
    cJSON_Delete(o);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.f[0].node_name, "Window\033]0;pwned\007<script>");
    results_free(&r);
    model_free(m);
}

/* Adds the same three findings in the given order and returns them
 * fingerprinted and sorted. */
static void fill(results *r, const model *m, const int *order)
{
    cJSON *all[3];
    op_error err;
    int i;

    all[0] = finding_json("b.rule", "warning", "v1", "second");
    all[1] = finding_json("a.rule", "error", "v2", "first");
    all[2] = finding_json("b.rule", "warning", "v1", "third"); /* same identity */
    results_init(r);
    for (i = 0; i < 3; i++)
        assert_int_equal(results_add_finding(r, m, all[order[i]], &err), 0);
    for (i = 0; i < 3; i++)
        cJSON_Delete(all[i]);
    results_add_error(r, "z.rule", "timeout");
    results_add_error(r, "c.rule", "memory cap exceeded");
    results_finish(r, m);
}

static void test_fingerprints_and_order(void **state)
{
    model *m1 = small_model(), *m2 = small_model();
    const int o1[] = {0, 1, 2}, o2[] = {2, 1, 0};
    results a, b;
    size_t i;

    (void)state;
    fill(&a, m1, o1);
    fill(&b, m2, o2);
    assert_string_equal(a.f[0].rule, "a.rule"); /* errors first */
    assert_string_equal(a.f[1].message, "second");
    for (i = 0; i < 3; i++) {
        assert_string_equal(a.f[i].fingerprint, b.f[i].fingerprint);
        assert_int_equal(strlen(a.f[i].fingerprint), 16);
    }
    assert_string_not_equal(a.f[1].fingerprint, a.f[2].fingerprint);
    assert_string_equal(a.e[0].rule, "c.rule");
    assert_int_equal(results_count_at_least(&a, SEV_ERROR), 1);
    assert_int_equal(results_count_at_least(&a, SEV_INFO), 3);
    results_free(&a);
    results_free(&b);
    model_free(m1);
    model_free(m2);
}

static char *render(report_fn fn, const model *m, const results *r)
{
    analysis an;
    report_ctx ctx;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    input_rec in = {.path = "in.json", .plugin = "flink", .ok = 1};

    memset(&an, 0, sizeof an);
    an.m = (model *)m;
    an.inputs = &in;
    an.ninputs = 1;
    memset(&ctx, 0, sizeof ctx);
    ctx.an = &an;
    ctx.res = r;
    ctx.out = f;
    ctx.deterministic = 1;
    assert_int_equal(fn(&ctx), 0);
    fclose(f);
    return buf;
}

static void test_reporters(void **state)
{
    model *m = small_model();
    const int order[] = {0, 1, 2};
    results r;
    char *text, *json;
    cJSON *doc;

    (void)state;
    fill(&r, m, order);
    text = render(report_text, m, &r);
    assert_null(strchr(text, '\033'));
    assert_null(strchr(text, '\007'));
    assert_non_null(strstr(text, "Window?]0;pwned?<script>"));
    assert_non_null(strstr(text, "3 findings (1 error, 2 warning, 0 info)"));
    assert_non_null(strstr(text, "2 rule errors"));

    json = render(report_json, m, &r);
    doc = cJSON_Parse(json);
    assert_non_null(doc);
    assert_int_equal(cJSON_GetObjectItem(doc, "schema")->valueint, 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "findings")), 3);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "findings"), 0),
                            "rule")->valuestring, "a.rule");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "rule_errors")), 2);
    assert_null(strstr(json, "<script>")); /* escaped as \u003c */
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "stats"), "elapsed_ms")->valueint, 0);
    assert_non_null(report_find("json"));
    assert_null(report_find("yaml"));
    cJSON_Delete(doc);
    free(text);
    free(json);
    results_free(&r);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_fingerprints_and_order),
        cmocka_unit_test(test_reporters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
