/*
 * test_costs.c - money (core/costs.c, docs/costs.md): the costs table is
 * checked against the keys the engines declare; each engine's rate turns
 * a finding's time saved into estimated savings (BigQuery bytes and
 * slots, Snowflake warehouse credits, Databricks DBUs, Spark core- and
 * GiB-hours); without rates nothing is priced; "Start here" ranks by
 * money when rates are set; run-level restatements are left out of
 * totals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "costs.h"
#include "findings.h"
#include "input.h"
#include "report.h"
#include "report_util.h"
#include "support.h"

static cJSON *parse(const char *json)
{
    cJSON *c = cJSON_Parse(json);
    assert_non_null(c);
    return c;
}

static void test_check(void **state)
{
    char why[1400];
    cJSON *c;

    (void)state;
    c = parse("{\"currency\":\"EUR\",\"bigquery\":{\"per_tib\":6.25,\"per_slot_hour\":0.04},"
              "\"snowflake\":{\"per_credit\":3,\"warehouse_size\":\"M\"},"
              "\"databricks\":{\"per_dbu\":0.55,\"dbu_per_hour\":12},"
              "\"spark\":{\"per_core_hour\":0.05,\"per_gib_hour\":0.005}}");
    assert_int_equal(costs_check(c, why, sizeof why), 0);
    assert_string_equal(costs_currency(c), "EUR");
    assert_true(costs_num(c, "bigquery", "per_tib") == 6.25);
    assert_true(costs_num(c, "bigquery", "nope") < 0);
    assert_string_equal(costs_str(c, "snowflake", "warehouse_size"), "M");
    cJSON_Delete(c);

    c = parse("{\"bigquery\":{\"per_tb\":5}}"); /* a typo names the known keys */
    assert_int_equal(costs_check(c, why, sizeof why), -1);
    assert_non_null(strstr(why, "costs.bigquery.per_tb: unknown rate"));
    assert_non_null(strstr(why, "bigquery.per_tib"));
    cJSON_Delete(c);
    c = parse("{\"snowflake\":{\"per_credit\":-1}}");
    assert_int_equal(costs_check(c, why, sizeof why), -1);
    assert_non_null(strstr(why, "expected a number from 0"));
    cJSON_Delete(c);
    c = parse("[1]");
    assert_int_equal(costs_check(c, why, sizeof why), -1);
    cJSON_Delete(c);
    c = parse("{\"spark\":3}");
    assert_int_equal(costs_check(c, why, sizeof why), -1);
    cJSON_Delete(c);
}

/* Runs: 0 a dbt BigQuery build (1 TiB billed, 2 h of model time), 1 a dbt
 * Snowflake build, 2 a Spark app (10 core-hours over 1 h, 4g executors of
 * 2 cores), 3 a dbt run without an adapter. */
static model *priced_model(void)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "in.json");
    op_run *r;

    r = op_run_get(b, "dbt", "bq");
    op_run_config(b, r, "optipipe.adapter", "bigquery");
    op_run_metric_int(b, r, "bytes_billed", INT64_C(1099511627776));
    op_run_metric_int(b, r, "slot_ms", 36000000);
    op_run_metric_int(b, r, "busy_ms", 7200000);
    op_node_get(b, r, "model.p.a");
    r = op_run_get(b, "dbt", "sf");
    op_run_config(b, r, "optipipe.adapter", "snowflake");
    op_node_get(b, r, "model.p.b");
    r = op_run_get(b, "spark", "app");
    op_run_int(b, r, OP_I_DURATION_MS, 3600000);
    op_run_metric_int(b, r, "executor_core_ms", 36000000);
    op_run_config(b, r, "spark.executor.memory", "4g");
    op_run_config(b, r, "spark.executor.cores", "2");
    r = op_run_get(b, "dbt", "plain");
    op_run_metric_int(b, r, "busy_ms", 3600000);
    model_builder_free(b);
    model_freeze(m);
    return m;
}

static void add(results *res, const model *m, int run, const char *rule,
                const char *node, double saved_ms)
{
    cJSON *o = cJSON_CreateObject(), *imp;
    op_error err;

    cJSON_AddStringToObject(o, "rule", rule);
    cJSON_AddStringToObject(o, "title", "t");
    cJSON_AddStringToObject(o, "severity", "warning");
    cJSON_AddNumberToObject(o, "run", run);
    if (node)
        cJSON_AddStringToObject(o, "node", node);
    cJSON_AddStringToObject(o, "message", rule);
    if (saved_ms >= 0) {
        imp = cJSON_AddObjectToObject(o, "impact");
        cJSON_AddNumberToObject(imp, "time_saved_ms", saved_ms);
    }
    assert_int_equal(results_add_finding(res, m, o, &err), 0);
    cJSON_Delete(o);
}

static const finding *by_rule(const results *r, const char *rule)
{
    size_t i;
    for (i = 0; i < r->n; i++)
        if (!strcmp(r->f[i].rule, rule))
            return &r->f[i];
    fail_msg("no finding of %s", rule);
    return NULL;
}

static void fill(results *res, const model *m)
{
    results_init(res);
    add(res, m, 0, "t.bq", "model.p.a", 1800000);   /* 30 min */
    add(res, m, 0, "t.bq", NULL, 1800000);          /* the same, run-level */
    add(res, m, 1, "t.sf", "model.p.b", 900000);    /* 15 min */
    add(res, m, 2, "t.spark", NULL, 1800000);       /* 30 min */
    add(res, m, 3, "t.plain", NULL, 3600000);
    add(res, m, 0, "t.none", "model.p.a", -1);      /* no time saved */
    assert_int_equal(results_finish(res, m), 0);
}

static void test_apply(void **state)
{
    model *m = priced_model();
    results res;
    cJSON *c;

    (void)state;
    /* without rates: nothing priced */
    fill(&res, m);
    assert_int_equal(costs_apply(&res, m, NULL), 0);
    assert_null(by_rule(&res, "t.bq")->savings_basis);
    results_free(&res);

    /* on-demand bytes: 1 TiB x 6.25 = 6.25 over 2 h of model time, so
     * 3.125 an hour; 30 min saves 1.5625 */
    c = parse("{\"bigquery\":{\"per_tib\":6.25},\"snowflake\":{\"per_credit\":3,"
              "\"warehouse_size\":\"L\"},\"spark\":{\"per_core_hour\":0.05,"
              "\"per_gib_hour\":0.01}}");
    fill(&res, m);
    assert_int_equal(costs_apply(&res, m, c), 0);
    assert_non_null(by_rule(&res, "t.bq")->savings_basis);
    assert_true(fabs(by_rule(&res, "t.bq")->savings - 1.5625) < 1e-9);
    assert_non_null(strstr(by_rule(&res, "t.bq")->savings_basis, "TiB billed"));
    /* Snowflake L: 8 credits/h x 3 = 24 an hour; 15 min saves 6 */
    assert_true(fabs(by_rule(&res, "t.sf")->savings - 6.0) < 1e-9);
    assert_non_null(strstr(by_rule(&res, "t.sf")->savings_basis, "L warehouse"));
    /* Spark: 10 core-h x 0.05 = 0.5; 5 executor-hours x (4 + 0.4) GiB =
     * 22 GiB-h x 0.01 = 0.22; 0.72 an hour of wall time; 30 min: 0.36 */
    assert_true(fabs(by_rule(&res, "t.spark")->savings - 0.36) < 1e-9);
    /* several warehouses configured, the run names none: not priced */
    assert_null(by_rule(&res, "t.plain")->savings_basis);
    assert_null(by_rule(&res, "t.none")->savings_basis);
    results_free(&res);
    cJSON_Delete(c);

    /* reservations: slot-hours win over bytes; the only warehouse section
     * prices a run that names no adapter */
    c = parse("{\"bigquery\":{\"per_tib\":6.25,\"per_slot_hour\":0.06}}");
    fill(&res, m);
    assert_int_equal(costs_apply(&res, m, c), 0);
    assert_true(fabs(by_rule(&res, "t.bq")->savings - 10 * 0.06 / 2 * 0.5) < 1e-9);
    results_free(&res);
    cJSON_Delete(c);
    model_free(m);
}

/* What each run cost, kept as metrics (costs_price_model): BigQuery's
 * bill shared by node time, Snowflake's warehouse hours over the span,
 * Spark's app without node shares; nothing without rates or without a
 * rate for the run; the maps stay sorted (lookups bisect). */
static void test_price_model(void **state)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "in.json");
    const struct op_run *bq, *sf, *sp, *plain;
    op_run *r;
    op_node *n;
    cJSON *c;
    size_t i;

    (void)state;
    r = op_run_get(b, "dbt", "bq");
    op_run_config(b, r, "optipipe.adapter", "bigquery");
    op_run_metric_int(b, r, "bytes_billed", INT64_C(1099511627776));
    op_run_metric_int(b, r, "busy_ms", 7200000);
    n = op_node_get(b, r, "model.p.a");
    op_node_int(b, n, OP_I_DURATION_MS, 5400000);
    op_node_metric_int(b, n, "zzz", 1);
    n = op_node_get(b, r, "model.p.b");
    op_node_int(b, n, OP_I_DURATION_MS, 1800000);
    op_node_get(b, r, "model.p.untimed");
    r = op_run_get(b, "dbt", "sf");
    op_run_config(b, r, "optipipe.adapter", "snowflake");
    op_run_int(b, r, OP_I_DURATION_MS, 1800000);
    op_node_int(b, op_node_get(b, r, "model.p.c"), OP_I_DURATION_MS, 1000);
    r = op_run_get(b, "spark", "app");
    op_run_int(b, r, OP_I_DURATION_MS, 3600000);
    op_run_metric_int(b, r, "executor_core_ms", 36000000);
    op_node_int(b, op_node_get(b, r, "stage 1"), OP_I_DURATION_MS, 1000);
    r = op_run_get(b, "dbt", "plain");
    op_run_metric_int(b, r, "busy_ms", 3600000);
    model_builder_free(b);
    model_freeze(m);
    bq = m->runs[0];
    sf = m->runs[1];
    sp = m->runs[2];
    plain = m->runs[3];

    assert_int_equal(costs_price_model(m, NULL), 0);
    assert_null(mmap_get(&bq->metrics, "estimated_cost"));
    c = parse("{\"currency\":\"EUR\",\"bigquery\":{\"per_tib\":6.25},"
              "\"snowflake\":{\"per_credit\":3,\"warehouse_size\":\"L\"},"
              "\"spark\":{\"per_core_hour\":0.05}}");
    assert_int_equal(costs_price_model(m, c), 0);
    /* 1 TiB x 6.25, shared 3:1 by the nodes' time; the untimed one has none */
    assert_true(fabs(mmap_get(&bq->metrics, "estimated_cost")->u.n - 6.25) < 1e-9);
    assert_true(fabs(mmap_get(&model_find_node(bq, "model.p.a")->metrics,
                              "estimated_cost")->u.n - 4.6875) < 1e-9);
    assert_true(fabs(mmap_get(&model_find_node(bq, "model.p.b")->metrics,
                              "estimated_cost")->u.n - 1.5625) < 1e-9);
    assert_null(mmap_get(&model_find_node(bq, "model.p.untimed")->metrics, "estimated_cost"));
    assert_non_null(mmap_get(&model_find_node(bq, "model.p.a")->metrics, "zzz"));
    assert_string_equal(mmap_get(&bq->config, "optipipe.currency")->u.s, "EUR");
    assert_non_null(strstr(mmap_get(&bq->config, "optipipe.cost_basis")->u.s, "TiB billed"));
    assert_string_equal(mmap_get(&bq->config, "optipipe.adapter")->u.s, "bigquery");
    for (i = 1; i < bq->config.n; i++)
        assert_true(strcmp(mentry_key(&bq->config.items[i - 1]), mentry_key(&bq->config.items[i])) < 0);
    /* Snowflake L: 24 an hour over the 30-minute span */
    assert_true(fabs(mmap_get(&sf->metrics, "estimated_cost")->u.n - 12.0) < 1e-9);
    assert_true(fabs(mmap_get(&model_find_node(sf, "model.p.c")->metrics,
                              "estimated_cost")->u.n - 12.0) < 1e-9);
    /* Spark: 10 core-hours x 0.05; stages overlap: no node shares */
    assert_true(fabs(mmap_get(&sp->metrics, "estimated_cost")->u.n - 0.5) < 1e-9);
    assert_null(mmap_get(&model_find_node(sp, "stage 1")->metrics, "estimated_cost"));
    /* several warehouses, the run names none: no rate, no cost */
    assert_null(mmap_get(&plain->metrics, "estimated_cost"));
    /* priced again (another config): replaced, not duplicated */
    cJSON_Delete(c);
    c = parse("{\"bigquery\":{\"per_tib\":5}}");
    i = bq->metrics.n;
    assert_int_equal(costs_price_model(m, c), 0);
    assert_int_equal(bq->metrics.n, i);
    assert_true(fabs(mmap_get(&bq->metrics, "estimated_cost")->u.n - 5.0) < 1e-9);
    cJSON_Delete(c);
    model_free(m);
}

/* A report context over res and m for the Start-here and totals calls. */
static void ctx_over(report_ctx *ctx, analysis *an, input_rec *in,
                     results *res, model *m)
{
    memset(an, 0, sizeof *an);
    an->m = m;
    an->inputs = in;
    an->ninputs = 1;
    memset(ctx, 0, sizeof *ctx);
    ctx->an = an;
    ctx->res = res;
}

static void test_report(void **state)
{
    model *m = priced_model();
    results res;
    analysis an;
    report_ctx ctx;
    input_rec in = {.path = "in.json", .plugin = "dbt", .ok = 1};
    const finding *top[REPORT_START_HERE];
    double sum;
    cJSON *c = parse("{\"bigquery\":{\"per_tib\":6.25},\"snowflake\":{\"per_credit\":3,"
                     "\"warehouse_size\":\"L\"}}");

    (void)state;
    fill(&res, m);
    ctx_over(&ctx, &an, &in, &res, m);
    /* no rates: the findings' own order */
    assert_int_equal(report_start_here(&ctx, top, REPORT_START_HERE), 3);
    assert_ptr_equal(top[0], &res.f[0]);
    assert_int_equal(report_savings(&ctx, SIZE_MAX, &sum), 0);

    assert_int_equal(costs_apply(&res, m, c), 0);
    ctx.applied.currency = costs_currency(c);
    /* the Snowflake finding saves most (6 against 1.56): first */
    assert_int_equal(report_start_here(&ctx, top, REPORT_START_HERE), 3);
    assert_string_equal(top[0]->rule, "t.sf");
    assert_string_equal(top[1]->rule, "t.bq");
    /* the run-level t.bq restates its node finding: counted once */
    assert_int_equal(report_savings(&ctx, 0, &sum), 1);
    assert_true(fabs(sum - 1.5625) < 1e-9);
    assert_int_equal(report_savings(&ctx, SIZE_MAX, &sum), 2);
    assert_true(fabs(sum - 7.5625) < 1e-9);
    assert_int_equal(report_job_savings(&ctx, "sf", &sum), 1);
    results_free(&res);
    cJSON_Delete(c);
    model_free(m);
}

/* Without rates, Start here ranks by time saved: errors first, then the
 * largest estimate, findings without one last, one per rule first. */
static void test_start_here_time(void **state)
{
    model *m = priced_model();
    results res;
    analysis an;
    report_ctx ctx;
    input_rec in = {.path = "in.json", .plugin = "dbt", .ok = 1};
    const finding *top[REPORT_START_HERE];
    size_t i;

    (void)state;
    results_init(&res);
    add(&res, m, 0, "t.small", "model.p.a", 60000);   /* 1 min */
    add(&res, m, 1, "t.none", "model.p.b", -1);       /* no estimate */
    add(&res, m, 2, "t.big", NULL, 3600000);          /* 1 h */
    add(&res, m, 3, "t.failed", NULL, -1);            /* an error, below */
    assert_int_equal(results_finish(&res, m), 0);
    for (i = 0; i < res.n; i++)
        if (!strcmp(res.f[i].rule, "t.failed"))
            res.f[i].sev = SEV_ERROR;
    ctx_over(&ctx, &an, &in, &res, m);
    assert_int_equal(report_start_here(&ctx, top, REPORT_START_HERE), 3);
    assert_string_equal(top[0]->rule, "t.failed");
    assert_string_equal(top[1]->rule, "t.big");
    assert_string_equal(top[2]->rule, "t.small");
    results_free(&res);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_start_here_time),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_apply),
        cmocka_unit_test(test_price_model),
        cmocka_unit_test(test_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
