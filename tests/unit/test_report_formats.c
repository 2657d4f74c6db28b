/*
 * test_report_formats.c - every reporter (text, json, markdown, sarif,
 * junit, html) over a model whose names, ids, config values, evidence and
 * changes are hostile: HTML tags, Markdown links to javascript:, backticks,
 * pipes, ANSI escapes and C1 controls. Each format must escape or drop
 * them its own way; junit must fail exactly what --fail-on fails; the HTML
 * must carry its charts. (Markdown is also rendered with cmark-gfm and
 * SARIF validated against the schema in tests/e2e/report_*.sh.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "report.h"
#include "utf8.h"

#define EVIL "x`|<script>alert(1)</script>](javascript:alert(1)) \033[2J\007 **b** @u #1 www.e.io \xc2\x9b!"
/* Ids cannot hold control characters (the builder refuses them), the rest
 * of EVIL they can. */
#define EVIL_ID "x`|<script>alert(1)</script>](javascript:alert(1)) **b** @u #1 www.e.io!"

typedef struct fixture {
    model *m;
    results res;
    analysis an;
    input_rec in;
    char *warn;
} fixture;

static void flink_run(op_builder *b)
{
    op_run *r = op_run_get(b, "flink", "job-" EVIL_ID);
    op_node *v1 = op_node_get(b, r, "v1"), *v2 = op_node_get(b, r, "v2");
    int i;

    op_run_str(b, r, OP_F_NAME, EVIL);
    op_run_int(b, r, OP_I_DURATION_MS, 3600000);
    op_run_config(b, r, "parallelism.default", EVIL);
    op_run_metric(b, r, "checkpoint_timeout_ms", 600000);
    op_node_str(b, v1, OP_F_KIND, "vertex");
    op_node_str(b, v1, OP_F_NAME, "Source " EVIL);
    op_node_int(b, v1, OP_I_PARALLELISM, 4);
    op_node_metric(b, v1, "busy_ratio_max", 0.05);
    op_node_metric(b, v1, "backpressure_ratio_max", 0.9);
    op_node_str(b, v2, OP_F_KIND, "vertex");
    op_node_str(b, v2, OP_F_NAME, "Window " EVIL);
    op_node_int(b, v2, OP_I_PARALLELISM, 4);
    op_node_parent(b, v2, "v1");
    op_node_metric(b, v2, "busy_ratio_max", 0.97);
    op_node_metric(b, v2, "backpressure_ratio_max", 0);
    op_node_attr(b, v2, "ship_strategy", EVIL);
    for (i = 0; i < 12; i++) {
        op_record *c = op_series_append(b, r, "checkpoints");
        op_record_int(b, c, "id", i);
        op_record_str(b, c, "status", i == 5 ? "FAILED" : "COMPLETED");
        op_record_int(b, c, "trigger_ms", 1000000 + i * 60000);
        op_record_int(b, c, "end_to_end_duration_ms", 20000 + i * 3000);
    }
}

static void spark_run(op_builder *b)
{
    op_run *r = op_run_get(b, "spark", "app-1");
    op_node *s = op_node_get(b, r, "stage-0-0");
    op_dist d = {32, 1000, 2700, 3000, 4000, 5000, 60000, 100000, 5000, 160000};

    op_run_int(b, r, OP_I_STARTED_AT, 1000);
    op_run_str(b, r, OP_F_NAME, "app \xff\xfe name \xe2\x82"); /* broken UTF-8 */
    op_node_str(b, s, OP_F_KIND, "stage");
    op_node_str(b, s, OP_F_NAME, "stage \xff\xfe name \xe2\x82");
    op_node_attr(b, s, "stage_id", EVIL);
    op_node_int(b, s, OP_I_STARTED_AT, 2000);
    op_node_int(b, s, OP_I_ENDED_AT, 104000);
    op_node_dist(b, s, "duration_ms", &d);
}

/* Two dbt runs of one history: the newer gets a history chart. */
static void dbt_runs(op_builder *b)
{
    int k;

    for (k = 0; k < 2; k++) {
        op_run *r = op_run_get(b, "dbt", k ? "inv-2" : "inv-1");
        op_node *n = op_node_get(b, r, "model.shop." EVIL_ID);
        op_run_history(b, r, "shop/build", k);
        op_run_int(b, r, OP_I_STARTED_AT, 1715000000000LL + k * 86400000LL);
        op_run_int(b, r, OP_I_DURATION_MS, 100000 + k * 500000);
        op_node_str(b, n, OP_F_KIND, "model");
        op_node_str(b, n, OP_F_NAME, EVIL);
        op_node_int(b, n, OP_I_STARTED_AT, 1715000000000LL + k * 86400000LL);
        op_node_int(b, n, OP_I_ENDED_AT, 1715000090000LL + k * 86900000LL);
        op_node_int(b, n, OP_I_DURATION_MS, 90000 + k * 500000);
        op_node_attr(b, n, "thread", "Thread-1 " EVIL);
        op_node_attr(b, n, "critical_path", "true");
        op_node_attr(b, n, "file", "models/" EVIL ".sql");
    }
}

static void add(fixture *fx, const char *rule, const char *sev, int run, const char *node)
{
    cJSON *o = cJSON_CreateObject(), *ev, *ch, *c;
    op_error err;

    cJSON_AddStringToObject(o, "rule", rule);
    cJSON_AddStringToObject(o, "title", EVIL);
    cJSON_AddStringToObject(o, "severity", sev);
    if (run >= 0)
        cJSON_AddNumberToObject(o, "run", run);
    if (node)
        cJSON_AddStringToObject(o, "node", node);
    cJSON_AddStringToObject(o, "message", "- " EVIL);
    cJSON_AddStringToObject(o, "recommendation", EVIL);
    ev = cJSON_AddObjectToObject(o, "evidence");
    cJSON_AddStringToObject(ev, EVIL, EVIL);
    cJSON_AddNumberToObject(ev, "ratio", 36.9);
    ch = cJSON_AddArrayToObject(o, "changes");
    c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "target", EVIL);
    cJSON_AddStringToObject(c, "key", "k" EVIL);
    cJSON_AddStringToObject(c, "from", "```" EVIL);
    cJSON_AddStringToObject(c, "to", EVIL "\n+ fake: line");
    cJSON_AddItemToArray(ch, c);
    assert_int_equal(results_add_finding(&fx->res, fx->m, o, &err), 0);
    cJSON_Delete(o);
}

static size_t run_index(const model *m, const char *id)
{
    size_t i;

    for (i = 0; i < m->nruns; i++)
        if (strcmp(m->runs[i]->id, id) == 0)
            return i;
    fail_msg("no run %s", id);
    return 0;
}

static int setup(void **state)
{
    fixture *fx = calloc(1, sizeof *fx);
    op_builder *b;

    fx->m = model_new();
    b = model_builder_new(fx->m, "in/" EVIL ".json");
    flink_run(b);
    spark_run(b);
    dbt_runs(b);
    model_builder_free(b);
    model_freeze(fx->m);
    results_init(&fx->res);
    add(fx, "flink.bottleneck", "warning", (int)run_index(fx->m, "job-" EVIL_ID), "v2");
    add(fx, "spark.skew", "info", (int)run_index(fx->m, "app-1"), "stage-0-0");
    add(fx, "dbt.regression", "error", (int)run_index(fx->m, "inv-2"), "model.shop." EVIL_ID);
    add(fx, "mixed.evil", "warning", -1, NULL);
    assert_int_equal(results_add_error(&fx->res, "rule " EVIL, EVIL), 0);
    results_finish(&fx->res, fx->m);
    fx->warn = strdup("warning " EVIL);
    fx->in.path = (char *)"in/" EVIL ".json";
    fx->in.plugin = "flink";
    fx->in.warnings = &fx->warn;
    fx->in.nwarnings = 1;
    fx->an.m = fx->m;
    fx->an.inputs = &fx->in;
    fx->an.ninputs = 1;
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    fixture *fx = *state;

    results_free(&fx->res);
    model_free(fx->m);
    free(fx->warn);
    free(fx);
    return 0;
}

static char *render(fixture *fx, const char *format, const char *fail_on)
{
    report_ctx ctx;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_fn fn = report_find(format);

    assert_non_null(f);
    assert_non_null(fn);
    memset(&ctx, 0, sizeof ctx);
    ctx.an = &fx->an;
    ctx.res = &fx->res;
    ctx.out = f;
    ctx.deterministic = 1;
    ctx.fail_on = fail_on;
    assert_int_equal(fn(&ctx), 0);
    fclose(f);
    if (getenv("REPORT_DUMP") && strcmp(getenv("REPORT_DUMP"), format) == 0)
        fputs(buf, stderr); /* REPORT_DUMP=markdown ./test_report_formats */
    return buf;
}

static size_t count(const char *s, const char *needle)
{
    size_t n = 0;

    while ((s = strstr(s, needle))) {
        n++;
        s += strlen(needle);
    }
    return n;
}

/* No C0 control but newline, no DEL, no C1 (U+0080..U+009F). */
static void assert_no_controls(const char *out, const char *format)
{
    const unsigned char *p = (const unsigned char *)out;

    for (; *p; p++) {
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            fail_msg("%s: control byte 0x%02x at offset %zu", format, *p,
                     (size_t)(p - (const unsigned char *)out));
    }
}

/* An attribute like onload= / onerror= anywhere (an injected handler). */
static int has_event_attr(const char *s)
{
    for (; (s = strstr(s, " on")); s += 3) {
        const char *p = s + 3;
        while (*p >= 'a' && *p <= 'z')
            p++;
        if (p > s + 3 && *p == '=')
            return 1;
    }
    return 0;
}

static void test_text(void **state)
{
    char *out = render(*state, "text", NULL);

    assert_no_controls(out, "text");
    assert_non_null(strstr(out, "<script>")); /* text shows it as it is */
    free(out);
}

static void test_markdown(void **state)
{
    char *out = render(*state, "markdown", NULL), *line;

    assert_no_controls(out, "markdown");
    /* prose: every tag, link bracket and autolink escaped */
    assert_non_null(strstr(out, "\\<script>alert(1)\\</script>\\](javascript:alert(1))"));
    assert_non_null(strstr(out, "www\\.e.io"));
    assert_non_null(strstr(out, "@\xe2\x81\xa0u"));
    assert_non_null(strstr(out, "#\xe2\x81\xa0" "1"));
    assert_non_null(strstr(out, "\n\\- ")); /* a message cannot open a list */
    /* evidence table: the hostile key is a code span, its pipe escaped,
     * so the row still has exactly three cell borders */
    line = strstr(out, "| ``x`\\|");
    assert_non_null(line);
    {
        size_t pipes = 0;
        const char *p;
        for (p = line; *p && *p != '\n'; p++)
            pipes += *p == '|' && (p == line || p[-1] != '\\');
        assert_int_equal(pipes, 3);
    }
    /* the change block's fence is longer than the ``` inside, and a
     * newline in a value cannot forge a diff line */
    assert_non_null(strstr(out, "````diff\n"));
    assert_null(strstr(out, "\n+ fake: line"));
    free(out);
}

static void test_html(void **state)
{
    char *out = render(*state, "html", NULL), *p;

    assert_no_controls(out, "html");
    assert_int_equal(count(out, "<script"), 1); /* ours only */
    assert_non_null(strstr(out, "&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_non_null(strstr(out, "Content-Security-Policy"));
    for (p = out; (p = strstr(p, "href=\"")); p += 6) /* a run or a finding */
        assert_true(memcmp(p + 6, "#run-", 5) == 0 || memcmp(p + 6, "#f-", 3) == 0);
    assert_false(has_event_attr(out));
    assert_non_null(strstr(out, "data-chart=\"flink-graph\""));
    assert_non_null(strstr(out, "data-chart=\"flink-checkpoints\""));
    assert_non_null(strstr(out, "data-chart=\"spark-timeline\""));
    assert_non_null(strstr(out, "data-chart=\"spark-tasks\""));
    assert_non_null(strstr(out, "data-chart=\"dbt-gantt\""));
    assert_non_null(strstr(out, "data-chart=\"dbt-history\""));
    assert_non_null(strstr(out, "BOTTLENECK"));
    free(out);
}

static void test_sarif(void **state)
{
    char *out = render(*state, "sarif", NULL);
    cJSON *doc = cJSON_Parse(out), *list, *r0, *loc;
    const char *uri;

    assert_no_controls(out, "sarif");
    assert_null(strstr(out, "\\u001b"));
    assert_null(strstr(out, "\\u0007"));
    assert_non_null(doc);
    assert_string_equal(cJSON_GetObjectItem(doc, "version")->valuestring, "2.1.0");
    list = cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "runs"), 0),
                                  "results");
    assert_int_equal(cJSON_GetArraySize(list), 4);
    r0 = cJSON_GetArrayItem(list, 0); /* the error: dbt.regression */
    assert_string_equal(cJSON_GetObjectItem(r0, "level")->valuestring, "error");
    assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(r0, "message"), "text")
                               ->valuestring, "<script>alert(1)</script>"));
    loc = cJSON_GetArrayItem(cJSON_GetObjectItem(r0, "locations"), 0);
    uri = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(loc, "physicalLocation"),
                                                  "artifactLocation"), "uri")->valuestring;
    assert_memory_equal(uri, "models/x%60%7C%3Cscript%3E", 26); /* the dbt file, encoded */
    assert_non_null(cJSON_GetObjectItem(cJSON_GetObjectItem(r0, "partialFingerprints"),
                                        "optipipe/v1"));
    cJSON_Delete(doc);
    free(out);
}

static void test_junit(void **state)
{
    char *out = render(*state, "junit", NULL);

    assert_no_controls(out, "junit");
    assert_int_equal(count(out, "<script"), 0);
    assert_non_null(strstr(out, "&lt;script&gt;"));
    assert_int_equal(count(out, "<failure"), 0); /* no --fail-on: nothing fails */
    assert_int_equal(count(out, "<error "), 1);  /* the rule error */
    free(out);
    out = render(*state, "junit", "warning");
    /* warning and error findings fail; the info one (spark.skew) does not */
    assert_int_equal(count(out, "<failure"), 3);
    assert_non_null(strstr(out, "<testcase name=\"spark.skew\""));
    assert_non_null(strstr(out, "<system-out>[info]"));
    free(out);
    out = render(*state, "junit", "error");
    assert_int_equal(count(out, "<failure"), 1);
    free(out);
}

static void test_json_stays_json(void **state)
{
    char *out = render(*state, "json", NULL);
    cJSON *doc = cJSON_Parse(out);

    assert_non_null(doc);
    assert_null(strstr(out, "<script")); /* jsonw writes \u003c */
    cJSON_Delete(doc);
    free(out);
}

/* No byte of a broken sequence leaves a JSON writer: U+FFFD in place. */
static void test_json_utf8(void **state)
{
    static const char *const formats[] = {"json", "sarif"};
    size_t i;

    for (i = 0; i < 2; i++) {
        char *out = render(*state, formats[i], NULL);
        const char *p = out;
        uint32_t cp;
        size_t k;
        int bad;

        for (; (k = utf8_next(p, &cp, &bad)); p += k)
            if (bad)
                fail_msg("%s: broken UTF-8 at offset %zu", formats[i],
                         (size_t)(p - out));
        assert_non_null(strstr(out, "stage \xef\xbf\xbd\xef\xbf\xbd name \xef\xbf\xbd\xef\xbf\xbd\""));
        if (i == 0)
            assert_non_null(strstr(out, "app \xef\xbf\xbd\xef\xbf\xbd name \xef\xbf\xbd\xef\xbf\xbd\""));
        free(out);
    }
}

static void test_formats_listed(void **state)
{
    char joined[256] = "";
    size_t i, used = 0;

    (void)state;
    assert_string_equal(report_format_name(0), "text"); /* the default */
    for (i = 0; report_format_name(i); i++) {
        const char *name = report_format_name(i);
        assert_non_null(report_find(name));
        used += (size_t)snprintf(joined + used, sizeof joined - used, "%s%s",
                                 i ? " " : "", name);
    }
    assert_int_equal(i, 6);
    assert_string_equal(report_formats(), joined);
    assert_null(report_find("yaml"));
    assert_null(report_find(""));
}

static void test_progress_format(void **state)
{
    char buf[256];

    (void)state;
    progress_format(buf, sizeof buf, "big.json", 512 * 1024, 1024 * 1024, 2.0);
    assert_string_equal(buf, "big.json  [############............]  50%  512 KiB of 1 MiB  "
                             "256 KiB/s");
    progress_format(buf, sizeof buf, "log.zst", 3 * 1024 * 1024, 0, 1.0);
    assert_string_equal(buf, "log.zst  3 MiB read  3 MiB/s");
    progress_format(buf, sizeof buf, "x", 10, 5, 0); /* done past the total */
    assert_non_null(strstr(buf, "100%"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_text, setup, teardown),
        cmocka_unit_test_setup_teardown(test_markdown, setup, teardown),
        cmocka_unit_test_setup_teardown(test_html, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sarif, setup, teardown),
        cmocka_unit_test_setup_teardown(test_junit, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_stays_json, setup, teardown),
        cmocka_unit_test_setup_teardown(test_json_utf8, setup, teardown),
        cmocka_unit_test(test_formats_listed),
        cmocka_unit_test(test_progress_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
