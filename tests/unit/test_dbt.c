/*
 * test_dbt.c - the dbt input plugin through the real pipeline pieces
 * (analysis: detection, input streams, builder, finish, frozen model).
 * Every real artifact under OP_REAL_DIR/dbt parses into a sensible model;
 * the reference values of research/dbt.md §2.6 (utilization, peak
 * concurrency, critical path, ready-wait) are reproduced; manifest joins,
 * ephemeral collapsing, history keys, sources.json and bad input behave as
 * docs/dbt.md and docs/model-dbt.md say.
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
#include <sys/stat.h>
#include <unistd.h>

#include <optipipe/plugin.h>

#include "analyze.h"
#include "input.h"
#include "model.h"
#include "support.h"

extern const op_plugin op_plugin_dbt;
/* plugins/dbt/dbt_util.c: the timestamp parser is tested directly */
int dbt_parse_time(const char *s, int64_t *us);

#define REAL OP_REAL_DIR "/dbt"
#define G1_RR REAL "/run_results.v5.dbt-1.7.0.bigquery.build.jaffle_shop_elementary.json"
#define G1_MF REAL "/manifest.v11.dbt-1.7.0.bigquery.build.jaffle_shop_elementary.json"
#define G2_RR REAL "/run_results.v6.dbt-1.9.0.bigquery.build.jaffle_shop_elementary.json"
#define G2_MF REAL "/manifest.v12.dbt-1.9.0.bigquery.build.jaffle_shop_elementary.json"
#define G3_RR REAL "/run_results.v6.dbt-1.11.2.duckdb.build.dbt_bouncer_project.json"
#define G3_MF REAL "/manifest.v12.dbt-1.11.2.duckdb.build.dbt_bouncer_project.json"
#define G4_RR REAL "/run_results.v6.dbt-fusion-2.0.0-beta.2.duckdb.build.dbt_bouncer_project.json"
#define G4_MF REAL "/manifest.v12.dbt-fusion-2.0.0-beta.2.duckdb.build.dbt_bouncer_project.json"
#define G6_RR REAL "/run_results.v2.dbt-0.21.0.bigquery.run.openlineage_fail.error-skipped.json"
#define G6_MF REAL "/manifest.v2.dbt-0.20.0.bigquery.run.openlineage_fail.json"
#define G7_RR REAL "/run_results.v4.dbt-1.0.0.spark-thrift.build.openlineage_jaffle.json"
#define G7_MF REAL "/manifest.v4.dbt-1.0.0.spark-thrift.build.openlineage_jaffle.json"
#define G8_RR REAL "/run_results.v2.dbt-0.21.0.bigquery.test.openlineage_test.fail.json"
#define DOCS_RR REAL "/run_results.v2.dbt-0.20.2.bigquery.docs-generate.jaffle_shop.json"
#define V1_RR REAL "/run_results.v1.dbt-0.19.1.bigquery.run.jaffle_shop.json"
#define V4ERR_RR REAL "/run_results.v4.dbt-1.0.0.bigquery.build.jaffle_shop.model-error.json"

/* --- helpers ------------------------------------------------------------- */

static int have_real(void)
{
    struct stat st;

    if (stat(REAL, &st) == 0 && S_ISDIR(st.st_mode))
        return 1;
    printf("SKIP: %s is absent; real-artifact tests skipped\n", REAL);
    return 0;
}

#define NEED_REAL()          \
    do {                     \
        if (!have_real())    \
            skip();          \
    } while (0)

/* Reads the given paths into one analysis (detection and finish included). */
static analysis *analyze(const char *const *paths, size_t n)
{
    analysis *an = calloc(1, sizeof *an);
    op_error err = {0, ""};
    size_t i;

    assert_non_null(an);
    if (analysis_init(an, NULL, NULL, NULL, &err))
        fail_msg("analysis_init: %s", err.msg);
    for (i = 0; i < n; i++)
        analysis_add(an, paths[i]);
    analysis_freeze(an);
    return an;
}

static analysis *analyze1(const char *path)
{
    return analyze(&path, 1);
}

static analysis *analyze2(const char *a, const char *b)
{
    const char *p[2] = {a, b};
    return analyze(p, 2);
}

static void done(analysis *an)
{
    analysis_free(an);
    free(an);
}

/* Writes texts into files of a fresh temporary folder; returns the folder
 * (caller frees with rm_dir). */
static char *write_files(const char *const *names, const char *const *texts,
                         size_t n)
{
    char tmpl[] = "/tmp/optipipe-dbt-XXXXXX";
    char *dir = mkdtemp(tmpl), path[512];
    size_t i;

    assert_non_null(dir);
    for (i = 0; i < n; i++) {
        FILE *f;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        f = fopen(path, "w");
        assert_non_null(f);
        fputs(texts[i], f);
        fclose(f);
    }
    return strdup(dir);
}

static void rm_dir(char *dir, const char *const *names, size_t n)
{
    char path[512];
    size_t i;

    for (i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    free(dir);
}

static int has_parent(const struct op_node *n, const char *id)
{
    size_t i;

    for (i = 0; i < n->nparents; i++)
        if (!strcmp(n->parents[i], id))
            return 1;
    return 0;
}

static void near(double got, double want, double tol, const char *what)
{
    if (fabs(got - want) > tol)
        fail_msg("%s: got %.6f, want %.6f (± %g)", what, got, want, tol);
}

static const struct op_run *only_run(const analysis *an)
{
    if (an->m->nruns != 1)
        fail_msg("expected one run, got %zu", an->m->nruns);
    return an->m->runs[0];
}

/* The critical path's node names in order, joined by " > ". */
static void path_names(const struct op_run *r, char *buf, size_t cap)
{
    const mseries *s = model_find_series(r, "critical_path");
    size_t i, len = 0;

    buf[0] = '\0';
    assert_non_null(s);
    for (i = 0; i < s->n; i++) {
        const char *name = tm_str(&s->recs[i]->fields, "name");
        len += (size_t)snprintf(buf + len, cap - len, "%s%s", i ? " > " : "",
                                name);
        assert_true(len < cap);
    }
}

/* --- timestamps ------------------------------------------------------------ */

static void test_time_parse(void **state)
{
    int64_t us;

    (void)state;
    assert_true(dbt_parse_time("1970-01-01T00:00:00Z", &us));
    assert_int_equal(us, 0);
    assert_true(dbt_parse_time("2021-08-12T09:11:56.136770Z", &us));
    assert_int_equal(us, 1628759516136770LL);
    /* Fusion: nanoseconds, dropped below the microsecond */
    assert_true(dbt_parse_time("2026-08-20T13:47:12.269157511Z", &us));
    assert_int_equal(us % 1000000, 269157);
    /* offsets and a space separator */
    assert_true(dbt_parse_time("2026-02-20T22:27:46.938859+00:00", &us));
    assert_true(dbt_parse_time("2024-02-29 01:00:00+01:00", &us));
    {
        int64_t z;
        assert_true(dbt_parse_time("2024-02-29T00:00:00Z", &z));
        assert_int_equal(us, z);
    }
    /* before the epoch, leap days, short fractions */
    assert_true(dbt_parse_time("1969-12-31T23:59:59.5Z", &us));
    assert_int_equal(us, -500000);
    assert_true(dbt_parse_time("2000-02-29T00:00:00Z", &us));
    assert_false(dbt_parse_time("2023-02-29T00:00:00Z", &us));
    assert_false(dbt_parse_time("2023-13-01T00:00:00Z", &us));
    assert_false(dbt_parse_time("2023-01-01T24:00:00Z", &us));
    assert_false(dbt_parse_time("2023-01-01T00:00:00.Z", &us));
    assert_false(dbt_parse_time("2023-01-01T00:00:00Zjunk", &us));
    assert_false(dbt_parse_time("yesterday", &us));
    assert_false(dbt_parse_time("", &us));
    assert_false(dbt_parse_time(NULL, &us));
}

/* --- detection ------------------------------------------------------------ */

static int detect(const char *text)
{
    op_probe p;

    memset(&p, 0, sizeof p);
    p.path = p.basename = "x.json";
    p.head = (const unsigned char *)text;
    p.head_len = strlen(text);
    return op_plugin_dbt.detect(&p);
}

static void test_detect(void **state)
{
    (void)state;
    assert_int_equal(detect("{\"metadata\": {\"dbt_schema_version\": "
                            "\"https://schemas.getdbt.com/dbt/run-results/v6.json\""),
                     95);
    assert_int_equal(detect("\xEF\xBB\xBF {\"metadata\":{\"dbt_schema_version\":"
                            "\"https://schemas.getdbt.com/dbt/manifest/v12.json\""),
                     95);
    assert_int_equal(detect("{\"metadata\": {\"dbt_schema_version\": "
                            "\"https://schemas.getdbt.com/dbt/catalog/v1.json\""),
                     0);
    assert_int_equal(detect("{\"results\": [{\"unique_id\": \"model.a.b\", "
                            "\"execution_time\": 1}"),
                     60);
    assert_int_equal(detect("{\"jid\": \"x\", \"vertices\": []}"), 0);
    assert_int_equal(detect("[1,2,3]"), 0);
    assert_int_equal(detect(""), 0);
}

/* --- every real file ------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

/* Each run_results alone: one run, one node per result, every node with a
 * kind and a status, timed nodes with ordered timestamps. */
static void check_results_file(const char *path)
{
    analysis *an = analyze1(path);
    const struct op_run *r;
    size_t i, timed = 0;

    if (an->nok != 1)
        fail_msg("%s was not read", path);
    r = only_run(an);
    assert_string_equal(r->source, "dbt");
    assert_non_null(r->engine_version);
    assert_non_null(r->status);
    assert_non_null(r->history_key);
    assert_true(r->set & MSET_ENDED_AT);
    assert_true(r->set & MSET_DURATION_MS);
    assert_true(r->nnodes >= 2);
    assert_int_equal((size_t)tm_num(&r->metrics, "nodes_total"), r->nnodes);
    assert_true(tm_num(&r->metrics, "schema_version") >= 1);
    for (i = 0; i < r->nnodes; i++) {
        const struct op_node *n = r->nodes[i];
        assert_non_null(n->kind);
        assert_non_null(n->status);
        assert_non_null(n->name);
        if (n->set & MSET_STARTED_AT) {
            assert_true(n->ended_at >= n->started_at);
            assert_true(n->started_at > 1500000000000LL);
            timed++;
        }
    }
    assert_true(timed > 0);
    if (tm_num(&r->metrics, "executing") > 0) {
        double u = tm_num(&r->metrics, "utilization_ratio");
        assert_true(u > 0 && u <= 1.0001);
        assert_true(tm_num(&r->metrics, "peak_concurrency") <=
                    tm_num(&r->metrics, "threads"));
    }
    done(an);
}

static void test_every_real_file(void **state)
{
    static const char *const files[] = {
        "run_results.v1.dbt-0.19.1.bigquery.run.jaffle_shop.json",
        "run_results.v2.dbt-0.20.2.bigquery.docs-generate.jaffle_shop.json",
        "run_results.v2.dbt-0.21.0.bigquery.run.openlineage_fail.error-skipped.json",
        "run_results.v2.dbt-0.21.0.bigquery.test.openlineage_test.fail.json",
        "run_results.v3.dbt-0.21.0.bigquery.build.jaffle_shop.json",
        "run_results.v3.dbt-0.21.0.bigquery.build.openlineage_build.json",
        "run_results.v4.dbt-1.0.0.bigquery.build.jaffle_shop.model-error.json",
        "run_results.v4.dbt-1.0.0.spark-thrift.build.openlineage_jaffle.json",
        "run_results.v4.dbt-core-fixture.run.2-models.json",
        "run_results.v5.dbt-1.7.0.bigquery.build.jaffle_shop_elementary.json",
        "run_results.v5.dbt-core-fixture.run.2-models.json",
        "run_results.v6.dbt-1.11.2.duckdb.build.dbt_bouncer_project.json",
        "run_results.v6.dbt-1.9.0.bigquery.build.jaffle_shop_elementary.json",
        "run_results.v6.dbt-core-fixture.run.2-models.json",
        "run_results.v6.dbt-fusion-2.0.0-beta.2.duckdb.build.dbt_bouncer_project.json",
    };
    char path[1024];
    size_t i;

    (void)state;
    NEED_REAL();
    for (i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(path, sizeof path, "%s/%s", REAL, files[i]);
        check_results_file(path);
    }
}

/* The whole folder at once: every manifest joins its run (no manifest is
 * left over), histories form per project and command. */
static void test_real_folder(void **state)
{
    analysis *an;
    size_t i, joined = 0, superseded = 0;

    (void)state;
    NEED_REAL();
    an = analyze1(REAL);
    for (i = 0; i < an->ninputs; i++)
        if (ends_with(an->inputs[i].path, ".json") &&
            !strstr(an->inputs[i].path, "/schemas/") && !an->inputs[i].ok)
            fail_msg("%s was not read", an->inputs[i].path);
    assert_int_equal(an->m->nruns, 15);
    for (i = 0; i < an->m->nruns; i++) {
        const struct op_run *r = an->m->runs[i];
        if (tm_get(&r->config, "optipipe.manifest"))
            joined++;
        superseded += r->superseded != 0;
    }
    /* 8 manifests; the two jaffle_shop_elementary builds form one history
     * (1.7 superseded by 1.9), and so do the two dbt_bouncer builds */
    assert_true(joined >= 8);
    assert_true(superseded >= 2);
    done(an);
}

/* --- research/dbt.md §2.6 reference values ------------------------------- */

static void test_reference_g1(void **state)
{
    analysis *an;
    const struct op_run *r;
    char buf[512];

    (void)state;
    NEED_REAL();
    an = analyze2(G1_RR, G1_MF);
    r = only_run(an);
    assert_string_equal(r->id, "7ee58a18-366a-45b0-a0f2-a8a09f5e87ec");
    assert_string_equal(r->name, "jaffle_shop: dbt build");
    assert_string_equal(r->history_key, "jaffle_shop/build");
    assert_string_equal(tm_str(&r->config, "optipipe.manifest_match"), "invocation");
    assert_int_equal(r->duration_ms, 68858);
    near(tm_num(&r->metrics, "span_ms"), 55971.5, 1, "G1 span");
    near(tm_num(&r->metrics, "utilization_ratio"), 0.956, 0.001, "G1 util");
    assert_int_equal((int)tm_num(&r->metrics, "threads"), 3);
    assert_int_equal((int)tm_num(&r->metrics, "threads_inferred"), 1);
    assert_int_equal((int)tm_num(&r->metrics, "peak_concurrency"), 3);
    near(tm_num(&r->metrics, "critical_path_ms"), 12750.8, 1, "G1 critical path");
    near(tm_num(&r->metrics, "mean_ready_wait_ms"), 10618, 5, "G1 ready-wait");
    path_names(r, buf, sizeof buf);
    assert_string_equal(buf, "dbt_models > model_run_results > alerts_dbt_models");
    assert_string_equal(
        tm_str(&tm_node(r, "model.elementary.model_run_results")->attrs, "critical_path"),
        "true");
    /* BigQuery adapter fields and manifest attributes */
    {
        const struct op_node *n = tm_node(r, "model.elementary.dbt_invocations");
        assert_true(tm_num(&n->metrics, "bytes_billed") > 0);
        assert_true(tm_num(&n->metrics, "slot_ms") > 0);
        assert_non_null(tm_get(&n->attrs, "job_id"));
        assert_string_equal(tm_str(&n->attrs, "materialized"), "incremental");
        assert_non_null(tm_get(&n->attrs, "file"));
    }
    assert_true(tm_num(&r->metrics, "bytes_billed") > 0);
    done(an);
}

static void test_reference_g2(void **state)
{
    analysis *an;
    const struct op_run *r;
    char buf[512];

    (void)state;
    NEED_REAL();
    an = analyze2(G2_RR, G2_MF);
    r = only_run(an);
    near(tm_num(&r->metrics, "span_ms"), 36976.7, 1, "G2 span");
    near(tm_num(&r->metrics, "utilization_ratio"), 0.5055, 0.001, "G2 util");
    assert_int_equal((int)tm_num(&r->metrics, "threads"), 10);
    assert_int_equal((int)tm_num(&r->metrics, "peak_concurrency"), 10);
    near(tm_num(&r->metrics, "hook_ms"), 8532.6, 1, "G2 hooks on main");
    near(tm_num(&r->metrics, "critical_path_ms"), 16110.2, 1, "G2 critical path");
    near(tm_num(&r->metrics, "span_lower_bound_ms"), 18692.3, 1, "G2 busy/threads");
    near(tm_num(&r->metrics, "mean_ready_wait_ms"), 2021, 5, "G2 ready-wait");
    path_names(r, buf, sizeof buf);
    assert_string_equal(buf, "dbt_columns > enriched_columns");
    assert_string_equal(
        tm_str(&tm_node(r, "operation.elementary.elementary-on-run-start-0")->attrs, "thread"),
        "main");
    done(an);
}

static void test_reference_spark(void **state)
{
    analysis *an;
    const struct op_run *r;
    char buf[512];

    (void)state;
    NEED_REAL();
    an = analyze2(G7_RR, G7_MF);
    r = only_run(an);
    assert_int_equal((int)tm_num(&r->metrics, "threads"), 1);
    near(tm_num(&r->metrics, "span_ms"), 234158.9, 1, "Spark span");
    near(tm_num(&r->metrics, "utilization_ratio"), 0.9985, 0.001, "Spark util");
    near(tm_num(&r->metrics, "critical_path_ms"), 63176.6, 1, "Spark critical path");
    near(tm_num(&r->metrics, "mean_ready_wait_ms"), 34408, 5, "Spark ready-wait");
    path_names(r, buf, sizeof buf);
    {
        const char *want = "raw_customers > stg_customers > customers > ";
        assert_true(!strncmp(buf, want, strlen(want)));
    }
    done(an);
}

static void test_reference_duckdb_fusion(void **state)
{
    analysis *an;
    const struct op_run *r;
    const struct op_node *n;

    (void)state;
    NEED_REAL();
    an = analyze2(G3_RR, G3_MF);
    r = only_run(an);
    near(tm_num(&r->metrics, "span_ms"), 3509.4, 1, "DuckDB span");
    near(tm_num(&r->metrics, "utilization_ratio"), 0.609, 0.001, "DuckDB util");
    assert_int_equal((int)tm_num(&r->metrics, "peak_concurrency"), 8);
    /* unit tests run before the model they depend on: not a scheduling
     * edge, so the path is 1.7 s, not 2.0 s */
    near(tm_num(&r->metrics, "critical_path_ms"), 1732.1, 1, "DuckDB critical path");
    n = tm_node(r, "unit_test.dbt_bouncer_test_project.orders.test_amount_logic");
    assert_string_equal(n->kind, "unit_test");
    assert_true(has_parent(n, "model.dbt_bouncer_test_project.orders"));
    n = tm_node(r, "exposure.dbt_bouncer_test_project.Pulse queries");
    assert_string_equal(tm_str(&n->attrs, "raw_status"), "no-op");
    assert_string_equal(n->status, "succeeded");
    assert_string_equal(n->name, "Pulse queries");
    assert_non_null(r->engine_version);
    done(an);

    an = analyze2(G4_RR, G4_MF);
    r = only_run(an);
    assert_int_equal((int)tm_num(&r->metrics, "fusion"), 1);
    assert_int_equal((int)tm_num(&r->metrics, "threads"), 16);
    near(tm_num(&r->metrics, "utilization_ratio"), 0.3157, 0.001, "Fusion util");
    n = tm_node(r, "model.dbt_bouncer_test_project.int_disabled_model");
    assert_string_equal(n->status, "cancelled");
    /* exponent-form execution_time */
    near(tm_num(&n->metrics, "execution_time_ms"), 0.044309, 1e-9, "Fusion exec");
    done(an);
}

/* --- pitfalls of the real files --------------------------------------------- */

static void test_error_skipped(void **state)
{
    analysis *an;
    const struct op_run *r;
    const struct op_node *n;

    (void)state;
    NEED_REAL();
    an = analyze2(G6_RR, G6_MF);
    r = only_run(an);
    assert_string_equal(r->status, "failed");
    assert_string_equal(r->raw_status, "error");
    assert_int_equal((int)tm_num(&r->metrics, "nodes_error"), 1);
    assert_int_equal((int)tm_num(&r->metrics, "nodes_skipped"), 1);
    assert_int_equal((int)tm_num(&r->metrics, "untimed_nodes"), 1);
    n = tm_node(r, "model.dbt_bigquery_test.test_second_parallel_dbt_model");
    assert_string_equal(n->status, "failed");
    assert_false(n->set & MSET_STARTED_AT);
    assert_int_equal(n->duration_ms, 820);
    assert_string_equal(tm_str(&n->attrs, "untimed"), "true");
    assert_non_null(strstr(tm_str(&n->attrs, "message"), "Database Error in model"));
    assert_null(strchr(tm_str(&n->attrs, "message"), '\n'));
    n = tm_node(r, "model.dbt_bigquery_test.test_third_dbt_model");
    assert_string_equal(n->status, "cancelled");
    assert_string_equal(tm_str(&n->attrs, "raw_status"), "skipped");
    /* v2 manifest without project_name: the main package stands in */
    assert_true(has_parent(n, "model.dbt_bigquery_test.test_second_dbt_model"));
    assert_true(has_parent(n, "model.dbt_bigquery_test.test_second_parallel_dbt_model"));
    assert_string_equal(r->history_key, "dbt_bigquery_test/run");
    assert_string_equal(tm_str(&n->attrs, "materialized"), "table");
    done(an);
}

static void test_failing_tests_and_docs(void **state)
{
    analysis *an;
    const struct op_run *r;
    size_t i, failing = 0;

    (void)state;
    NEED_REAL();
    an = analyze1(G8_RR);
    r = only_run(an);
    assert_int_equal((int)tm_num(&r->metrics, "tests_failed"), 4);
    assert_string_equal(r->raw_status, "fail");
    for (i = 0; i < r->nnodes; i++)
        if (!strcmp(tm_str(&r->nodes[i]->attrs, "raw_status"), "fail")) {
            assert_true(tm_num(&r->nodes[i]->metrics, "failures") > 0);
            failing++;
        }
    assert_int_equal(failing, 4);
    done(an);

    an = analyze1(DOCS_RR);
    r = only_run(an);
    assert_int_equal((int)tm_num(&r->metrics, "executing"), 0);
    assert_string_equal(tm_str(&r->config, "which"), "generate");
    assert_string_equal(r->history_key, "jaffle_shop/generate");
    done(an);

    an = analyze1(V1_RR);
    r = only_run(an);
    assert_int_equal((int)tm_num(&r->metrics, "schema_version"), 1);
    assert_int_equal((int)tm_num(&r->metrics, "executing"), 1);
    assert_string_equal(r->engine_version, "0.19.1");
    assert_string_equal(r->history_key, "jaffle_shop/run");
    done(an);

    /* two packages, no manifest: args.project_dir names the project */
    an = analyze1(G1_RR);
    r = only_run(an);
    assert_string_equal(r->history_key, "jaffle_shop/build");
    assert_null(tm_get(&r->metrics, "critical_path_ms"));
    done(an);

    an = analyze1(V4ERR_RR);
    r = only_run(an);
    assert_string_equal(r->status, "failed");
    assert_int_equal((int)tm_num(&r->metrics, "untimed_nodes"), 1);
    done(an);
}

/* Hand-edited OpenLineage files: a duplicated timing overlaps on one
 * thread, a snapshot ran hours away from the invocation. */
static void test_edited_files(void **state)
{
    analysis *an;
    const struct op_run *r;
    const struct op_node *n;

    (void)state;
    NEED_REAL();
    an = analyze1(G8_RR);
    r = only_run(an);
    assert_true(r->nwarnings >= 1);
    assert_non_null(strstr(r->warnings[0], ": 1 result overlaps an earlier one")); /* #19 */
    assert_true(tm_num(&r->metrics, "utilization_ratio") <= 1.0);
    done(an);

    an = analyze1(REAL "/run_results.v3.dbt-0.21.0.bigquery.build.openlineage_build.json");
    r = only_run(an);
    n = tm_node(r, "snapshot.dbt_bigquery_test.orders_snapshot");
    assert_string_equal(tm_str(&n->attrs, "timing_outside_run"), "true");
    assert_true(tm_num(&r->metrics, "span_ms") < 8000);
    assert_true(tm_num(&r->metrics, "utilization_ratio") > 0.5);
    done(an);
}

/* G1 then G2: the same project with 3 then 10 threads forms a history. */
static void test_real_history(void **state)
{
    analysis *an;
    const struct op_run *a, *b;
    const char *p[4] = {G2_RR, G1_MF, G1_RR, G2_MF};

    (void)state;
    NEED_REAL();
    an = analyze(p, 4);
    assert_int_equal(an->m->nruns, 2);
    a = an->m->runs[0]; /* G2 was read first */
    b = an->m->runs[1];
    assert_string_equal(a->id, "cfbc1db9-66c1-46c2-a94b-8c0cef32314f");
    assert_false(a->superseded);
    assert_true(b->superseded);
    assert_int_equal(a->nhistory, 1);
    assert_ptr_equal(a->history[0], b);
    /* each run joined its own manifest despite the order */
    assert_string_equal(tm_str(&a->config, "optipipe.manifest"), G2_MF);
    assert_string_equal(tm_str(&b->config, "optipipe.manifest"), G1_MF);
    done(an);
}

/* --- synthetic artifacts ----------------------------------------------------- */

#define META(schema, inv, gen)                                                 \
    "{\"metadata\":{\"dbt_schema_version\":\"https://schemas.getdbt.com/dbt/" \
    schema "\",\"dbt_version\":\"1.8.2\",\"generated_at\":\"" gen             \
    "\",\"invocation_id\":\"" inv "\"},"

/* A two-model run on day `day` (01..28 of January 2024); b takes b_secs. */
static const char *run_text(const char *inv, const char *day, const char *b_secs)
{
    static char buf[4096];
    char gen[32], s0[32], s1[32], s2[32];

    snprintf(gen, sizeof gen, "2024-01-%sT00:00:21Z", day);
    snprintf(s0, sizeof s0, "2024-01-%sT00:00:00Z", day);
    snprintf(s1, sizeof s1, "2024-01-%sT00:00:10Z", day);
    snprintf(s2, sizeof s2, "2024-01-%sT00:00:20Z", day);
    snprintf(buf, sizeof buf,
             "{\"metadata\":{\"dbt_schema_version\":\"https://schemas.getdbt.com/"
             "dbt/run-results/v6.json\",\"dbt_version\":\"1.8.2\","
             "\"generated_at\":\"%s\",\"invocation_id\":\"%s\"},"
             "\"results\":[{\"status\":\"success\",\"timing\":[{\"name\":"
             "\"compile\",\"started_at\":\"%s\",\"completed_at\":\"%s\"},"
             "{\"name\":\"execute\",\"started_at\":\"%s\",\"completed_at\":"
             "\"%s\"}],\"thread_id\":\"Thread-1\",\"execution_time\":10.0,"
             "\"adapter_response\":{},\"message\":null,\"failures\":null,"
             "\"unique_id\":\"model.shop.a\"}"
             ",{\"status\":\"success\",\"timing\":[{\"name\":\"execute\","
             "\"started_at\":\"%s\",\"completed_at\":"
             "\"%s\"}],\"thread_id\":\"Thread-1\","
             "\"execution_time\":%s,\"adapter_response\":{\"rows_affected\":-1},"
             "\"unique_id\":\"model.shop.b\",\"future_key\":{\"x\":[1,2]}}],"
             "\"elapsed_time\":21.5,\"args\":{\"which\":\"run\",\"threads\":4,"
             "\"select\":[\"tag:nightly\"],\"vars\":{},\"full_refresh\":false}}",
             gen, inv, s0, s0, s0, s1, s1, s2, b_secs);
    return buf;
}

static const char *const MANIFEST_SHOP =
    "{\"metadata\":{\"dbt_schema_version\":\"https://schemas.getdbt.com/dbt/"
    "manifest/v12.json\",\"generated_at\":\"2024-01-03T00:00:00Z\","
    "\"invocation_id\":\"other\",\"project_name\":\"shop\"},"
    "\"nodes\":{"
    "\"model.shop.a\":{\"resource_type\":\"model\",\"package_name\":\"shop\","
    "\"original_file_path\":\"models/a.sql\",\"tags\":[\"x\",\"y\"],"
    "\"config\":{\"materialized\":\"table\"},\"depends_on\":{\"nodes\":[]}},"
    "\"model.shop.eph\":{\"resource_type\":\"model\",\"config\":{\"materialized\":"
    "\"ephemeral\"},\"depends_on\":{\"nodes\":[\"model.shop.a\",\"model.shop.eph\","
    "\"source.shop.raw.t\"]}},"
    "\"model.shop.b\":{\"resource_type\":\"model\",\"original_file_path\":"
    "\"models/b.sql\",\"config\":{\"materialized\":\"incremental\",\"unique_key\":"
    "[\"id\",\"day\"]},\"depends_on\":{\"nodes\":[\"model.shop.eph\","
    "\"model.shop.a\",\"model.shop.unselected\"]}}},"
    "\"sources\":{},\"parent_map\":{}}";

/* Three nightly runs without their own manifest, one manifest of a later
 * invocation: all join it (closest), form one history, and b's parent is
 * reached through the ephemeral model (once, not twice). */
static void test_history_and_closest_manifest(void **state)
{
    const char *names[4] = {"r1.json", "r2.json", "r3.json", "manifest.json"};
    char t1[4096], t2[4096], t3[4096];
    const char *texts[4] = {t1, t2, t3, MANIFEST_SHOP};
    char *dir;
    analysis *an;
    const struct op_run *newest = NULL;
    const struct op_node *b;
    size_t i;

    (void)state;
    snprintf(t1, sizeof t1, "%s", run_text("inv-1", "01", "10.0"));
    snprintf(t2, sizeof t2, "%s", run_text("inv-3", "03", "30.0"));
    snprintf(t3, sizeof t3, "%s", run_text("inv-2", "02", "11.0"));
    dir = write_files(names, texts, 4);
    an = analyze1(dir);
    assert_int_equal(an->nok, 4);
    assert_int_equal(an->m->nruns, 3);
    for (i = 0; i < an->m->nruns; i++) {
        const struct op_run *r = an->m->runs[i];
        assert_string_equal(r->history_key, "shop/run");
        assert_string_equal(tm_str(&r->config, "optipipe.manifest_match"), "closest");
        if (!r->superseded)
            newest = r;
    }
    assert_non_null(newest);
    assert_string_equal(newest->id, "inv-3");
    assert_int_equal(newest->nhistory, 2);
    assert_string_equal(newest->history[0]->id, "inv-1");
    assert_string_equal(newest->history[1]->id, "inv-2");
    b = tm_node(newest, "model.shop.b");
    assert_int_equal(b->nparents, 1);
    assert_string_equal(b->parents[0], "model.shop.a");
    assert_string_equal(tm_str(&b->attrs, "unique_key"), "[\"id\",\"day\"]");
    assert_string_equal(tm_str(&b->attrs, "materialized"), "incremental");
    assert_null(tm_get(&b->metrics, "rows_affected")); /* -1 = unknown */
    assert_string_equal(tm_str(&tm_node(newest, "model.shop.a")->attrs, "tags"), "x,y");
    assert_string_equal(tm_str(&newest->config, "threads"), "4");
    assert_string_equal(tm_str(&newest->config, "select"), "[\"tag:nightly\"]");
    assert_string_equal(tm_str(&newest->config, "full_refresh"), "false");
    assert_int_equal((int)tm_num(&newest->metrics, "threads_inferred"), 0);
    near(tm_num(&newest->metrics, "utilization_ratio"), 20.0 / (4 * 20.0), 1e-9,
         "util with args.threads");
    near(tm_num(&newest->metrics, "critical_path_ms"), 20000, 0.001, "synthetic cp");
    assert_int_equal(newest->ended_at, 1704240021000LL);
    assert_int_equal(newest->started_at, 1704240021000LL - 21500);
    rm_dir(dir, names, 4);
    done(an);
}

/* run_text with args.which replaced (NULL: no which, rpc_method given). */
static const char *run_as(const char *inv, const char *which, const char *rpc)
{
    static char buf[4096];
    const char *t = run_text(inv, "04", "10.0");
    char *args;

    snprintf(buf, sizeof buf, "%s", t);
    args = strstr(buf, "\"args\":{\"which\":\"run\"");
    assert_non_null(args);
    if (which)
        snprintf(args, sizeof buf - (size_t)(args - buf),
                 "\"args\":{\"which\":\"%s\"}}", which);
    else
        snprintf(args, sizeof buf - (size_t)(args - buf),
                 "\"args\":{\"rpc_method\":\"%s\"}}", rpc);
    return buf;
}

/* Issue #27: a run that executed nothing (docs generate, compile, ls, an
 * old RPC docs.generate) joined to its own manifest is a static DAG: the
 * manifest's other entries become nodes, parents are depends_on (the
 * ephemeral model kept), and every node has its state digest; a run
 * joined to another invocation's manifest has none. The digest changes
 * with a checksum upstream and only there. */
static void test_static_dag_and_digest(void **state)
{
    const char *names[2] = {"run_results.json", "manifest.json"};
    char man[4096], man2[4096], *dir, *at;
    const char *texts[2] = {NULL, man};
    const char *which[4] = {"generate", "compile", "ls", NULL};
    const struct op_run *r;
    const struct op_node *b, *eph;
    double da, db, dx;
    analysis *an;
    size_t i;

    (void)state;
    snprintf(man, sizeof man, "%s", MANIFEST_SHOP);
    at = strstr(man, "\"invocation_id\":\"other\"");
    assert_non_null(at);
    memcpy(at, "\"invocation_id\":\"inv-c\"", strlen("\"invocation_id\":\"inv-c\""));
    for (i = 0; i < 4; i++) {
        texts[0] = run_as("inv-c", which[i], "docs.generate");
        dir = write_files(names, texts, 2);
        an = analyze1(dir);
        r = only_run(an);
        assert_int_equal((int)tm_inum(&r->metrics, "executing"), 0);
        assert_int_equal((int)tm_inum(&r->metrics, "static_dag"), 1);
        eph = tm_node(r, "model.shop.eph");
        assert_string_equal(eph->status, "unknown");
        b = tm_node(r, "model.shop.b");
        assert_true(has_parent(b, "model.shop.eph"));
        assert_true(has_parent(b, "model.shop.a"));
        assert_true(tm_has(&b->metrics, "state_digest"));
        rm_dir(dir, names, 2);
        done(an);
    }
    /* an executing run of the same invocation: no static nodes, a digest */
    texts[0] = run_as("inv-c", "build", NULL);
    dir = write_files(names, texts, 2);
    an = analyze1(dir);
    r = only_run(an);
    assert_false(tm_has(&r->metrics, "static_dag"));
    assert_null(model_find_node(r, "model.shop.eph"));
    da = tm_num(&tm_node(r, "model.shop.a")->metrics, "state_digest");
    db = tm_num(&tm_node(r, "model.shop.b")->metrics, "state_digest");
    assert_true(da != db && da == (double)(int64_t)da && da < 4503599627370496.0);
    rm_dir(dir, names, 2);
    done(an);
    /* a's checksum changes: a's and b's digests change */
    at = strstr(man, "\"tags\":[\"x\",\"y\"],");
    assert_non_null(at);
    snprintf(man2, sizeof man2, "%.*s\"checksum\":{\"checksum\":\"9\"},%s",
             (int)(at - man), man, at);
    texts[1] = man2;
    dir = write_files(names, texts, 2);
    an = analyze1(dir);
    r = only_run(an);
    dx = tm_num(&tm_node(r, "model.shop.a")->metrics, "state_digest");
    assert_true(dx != da);
    assert_true(tm_num(&tm_node(r, "model.shop.b")->metrics, "state_digest") != db);
    rm_dir(dir, names, 2);
    done(an);
    /* another invocation's manifest: joined (closest), no digest */
    texts[0] = run_as("inv-other", "build", NULL);
    texts[1] = man;
    dir = write_files(names, texts, 2);
    an = analyze1(dir);
    r = only_run(an);
    assert_string_equal(tm_str(&r->config, "optipipe.manifest_match"), "closest");
    assert_false(tm_has(&tm_node(r, "model.shop.b")->metrics, "state_digest"));
    rm_dir(dir, names, 2);
    done(an);
}

/* Without any manifest the history key comes from the package set. */
static void test_history_without_manifest(void **state)
{
    const char *names[2] = {"a.json", "b.json"};
    char t1[4096], t2[4096];
    const char *texts[2] = {t1, t2};
    char *dir;
    analysis *an;

    (void)state;
    snprintf(t1, sizeof t1, "%s", run_text("inv-1", "01", "10.0"));
    snprintf(t2, sizeof t2, "%s", run_text("inv-2", "02", "10.0"));
    dir = write_files(names, texts, 2);
    an = analyze1(dir);
    assert_int_equal(an->m->nruns, 2);
    assert_string_equal(an->m->runs[0]->history_key, "shop/run");
    assert_int_equal(an->m->runs[0]->superseded + an->m->runs[1]->superseded, 1);
    assert_null(tm_get(&an->m->runs[0]->metrics, "critical_path_ms"));
    rm_dir(dir, names, 2);
    done(an);
}

static const char *const SOURCES_JSON =
    "{\"metadata\":{\"dbt_schema_version\":\"https://schemas.getdbt.com/dbt/"
    "sources/v3.json\",\"dbt_version\":\"1.8.2\",\"generated_at\":"
    "\"2024-01-03T06:00:00.000000Z\",\"invocation_id\":\"fresh-1\"},"
    "\"results\":["
    "{\"unique_id\":\"source.shop.raw.orders\",\"max_loaded_at\":"
    "\"2024-01-02T15:00:00+00:00\",\"snapshotted_at\":\"2024-01-03T06:00:00+00:00\","
    "\"max_loaded_at_time_ago_in_s\":54000.0,\"status\":\"warn\",\"criteria\":"
    "{\"warn_after\":{\"count\":12,\"period\":\"hour\"},\"error_after\":"
    "{\"count\":1,\"period\":\"day\"},\"filter\":null},\"adapter_response\":{},"
    "\"timing\":[],\"thread_id\":\"Thread-1\",\"execution_time\":0.5},"
    "{\"unique_id\":\"source.shop.raw.users\",\"error\":\"Database Error\\n  "
    "relation does not exist\",\"status\":\"runtime error\"}],"
    "\"elapsed_time\":1.2}";

static void test_sources_json(void **state)
{
    const char *names[1] = {"sources.json"};
    const char *texts[1] = {SOURCES_JSON};
    char *dir = write_files(names, texts, 1);
    analysis *an = analyze1(dir);
    const struct op_run *r = only_run(an);
    const struct op_node *n;

    (void)state;
    assert_string_equal(r->id, "fresh-1");
    assert_string_equal(r->history_key, "shop/source-freshness");
    assert_string_equal(tm_str(&r->config, "which"), "source-freshness");
    assert_string_equal(r->status, "failed");
    n = tm_node(r, "source.shop.raw.orders");
    assert_string_equal(n->kind, "source");
    assert_string_equal(n->name, "raw.orders");
    assert_string_equal(tm_str(&n->attrs, "raw_status"), "warn");
    near(tm_num(&n->metrics, "age_ms"), 54000000, 0.5, "age");
    near(tm_num(&n->metrics, "warn_after_ms"), 43200000, 0.5, "warn after");
    near(tm_num(&n->metrics, "error_after_ms"), 86400000, 0.5, "error after");
    n = tm_node(r, "source.shop.raw.users");
    assert_string_equal(n->status, "failed");
    assert_string_equal(tm_str(&n->attrs, "message"), "Database Error relation does not exist");
    rm_dir(dir, names, 1);
    done(an);
}

/* --- manifest versions ----------------------------------------------------------- */

#define VERSIONS OP_SOURCE_DIR "/fixtures/dbt/versions"
#define REL_TEST "test.shop.relationships_fct_orders_customer_id.a33599fd3f"

/* Maps a and b hold the same keys and values (what names the place). */
static void same_map(const mmap *a, const mmap *b, const char *what, int v)
{
    size_t i;

    for (i = 0; i < b->n; i++)
        if (!mmap_get(a, mentry_key(&b->items[i])))
            fail_msg("v%d: %s: no %s (v12 has it)", v, what, mentry_key(&b->items[i]));
    if (a->n != b->n)
        fail_msg("v%d: %s: %zu keys, v12 has %zu", v, what, a->n, b->n);
    for (i = 0; i < a->n; i++) {
        mvalue xv = mentry_value(&a->items[i]);
        const mvalue *x = &xv;
        const mentry *e = mmap_get(b, mentry_key(&a->items[i]));
        int eq = e && mentry_type(e) == x->t;
        if (eq && x->t == MV_STR)
            eq = !strcmp(e->u.s, x->u.s);
        else if (eq && x->t == MV_INT)
            eq = e->u.i == x->u.i;
        else if (eq && x->t == MV_NUM)
            eq = e->u.n == x->u.n;
        else if (eq)
            eq = e->u.b == x->u.b;
        if (!eq)
            fail_msg("v%d: %s: %s differs from v12", v, what, mentry_key(&a->items[i]));
    }
}

/* Run r (of manifest version v) has the nodes of ref with the same kind,
 * status, parents, attrs and metrics (state_digest among them). */
static void same_run(const struct op_run *r, const struct op_run *ref, int v)
{
    size_t i, p;

    assert_int_equal(r->nnodes, ref->nnodes);
    for (i = 0; i < ref->nnodes; i++) {
        const struct op_node *want = ref->nodes[i];
        const struct op_node *got = tm_node(r, want->id);
        char what[300];
        assert_string_equal(got->kind, want->kind);
        assert_string_equal(got->status, want->status);
        if (got->nparents != want->nparents)
            fail_msg("v%d: %s: %zu parents, v12 %zu", v, want->id, got->nparents,
                     want->nparents);
        for (p = 0; p < want->nparents; p++)
            assert_string_equal(got->parents[p], want->parents[p]);
        snprintf(what, sizeof what, "attrs of %s", want->id);
        same_map(&got->attrs, &want->attrs, what, v);
        snprintf(what, sizeof what, "metrics of %s", want->id);
        same_map(&got->metrics, &want->metrics, what, v);
    }
}

/* Manifests v5 to v12 of one project (fixtures/dbt/versions, written by
 * its gen.py from the published schemas) become the same model, alone and
 * joined to their build; what a version lacks is a warning. */
static void test_manifest_versions(void **state)
{
    static const char *const modes[2] = {"", "run_results.json"};
    char mf[512], rr[512];
    analysis *ref[2], *an;
    int v, m;

    (void)state;
    for (m = 0; m < 2; m++) {
        snprintf(mf, sizeof mf, "%s/v12/manifest.json", VERSIONS);
        snprintf(rr, sizeof rr, "%s/v12/%s", VERSIONS, modes[m]);
        ref[m] = m ? analyze2(mf, rr) : analyze1(mf);
        assert_string_equal(tm_str(&tm_node(only_run(ref[m]), REL_TEST)->attrs,
                                   "attached_node"), "model.shop.fct_orders");
        assert_int_equal(only_run(ref[m])->nwarnings, m ? 0 : 1);
    }
    for (v = 5; v <= 11; v++)
        for (m = 0; m < 2; m++) {
            const struct op_run *r;
            snprintf(mf, sizeof mf, "%s/v%d/manifest.json", VERSIONS, v);
            snprintf(rr, sizeof rr, "%s/v%d/%s", VERSIONS, v, modes[m]);
            an = m ? analyze2(mf, rr) : analyze1(mf);
            r = only_run(an);
            same_run(r, only_run(ref[m]), v);
            assert_string_equal(r->history_key, only_run(ref[m])->history_key);
            assert_int_equal(tm_has_warning(r, "has no attached_node on its tests "
                                            "(written from manifest v9, dbt 1.5): "
                                            "the model a test checks is found for "
                                            "3 from the ref"), v < 9);
            assert_int_equal(tm_has_warning(r, "has no metadata.project_name"), v < 10);
            done(an);
        }
    done(ref[0]);
    done(ref[1]);
}

/* A real v4 manifest: the relationships test on orders depends on
 * customers first; its model is orders (from test_metadata). */
static void test_real_v4_attached(void **state)
{
    analysis *an;
    const struct op_run *r;

    (void)state;
    NEED_REAL();
    an = analyze1(G7_MF);
    r = only_run(an);
    assert_string_equal(
        tm_str(&tm_node(r, "test.jaffle_shop.relationships_orders_customer_id__"
                           "customer_id__ref_customers_.c6ec7f58f2")->attrs,
               "attached_node"),
        "model.jaffle_shop.orders");
    assert_true(tm_has_warning(r, "manifest v4 (dbt 1.0.0) has no attached_node"));
    done(an);
}

/* --- freshness joined to builds --------------------------------------------------- */

#define HF OP_SOURCE_DIR "/fixtures/dbt/health-fresh/2024-05-0"

/* The build run of an analysis of a night's build and some sources.json. */
static const struct op_run *run_named(const analysis *an, const char *what)
{
    size_t i;

    for (i = 0; i < an->m->nruns; i++)
        if (strstr(an->m->runs[i]->name, what))
            return an->m->runs[i];
    fail_msg("no %s run", what);
    return NULL;
}

static const struct op_run *build_run(const analysis *an)
{
    return run_named(an, "dbt build");
}

static analysis *night(int build, int s1, int s2)
{
    char p[4][512];
    const char *paths[4] = {p[0], p[1], p[2], p[3]};
    size_t n = 2;

    snprintf(p[0], sizeof p[0], HF "%d/run_results.json", build);
    snprintf(p[1], sizeof p[1], HF "%d/manifest.json", build);
    if (s1)
        snprintf(p[n++], sizeof p[0], HF "%d/sources.json", s1);
    if (s2)
        snprintf(p[n++], sizeof p[0], HF "%d/sources.json", s2);
    return analyze(paths, n);
}

/* A build gets what its sources held from the newest sources.json taken
 * before it (at most 12 h): app.plans never changes, app.events does. */
static void test_freshness_join(void **state)
{
    analysis *a1 = night(1, 1, 0), *a2 = night(2, 1, 2), *an;
    const struct op_run *r1 = build_run(a1), *r2 = build_run(a2), *r;
    const struct op_node *p1 = tm_node(r1, "model.shop.dim_plans");
    const struct op_node *e1 = tm_node(r1, "model.shop.fct_events");

    (void)state;
    assert_int_equal((int)tm_inum(&p1->metrics, "sources_n"), 1);
    assert_int_equal(tm_inum(&p1->metrics, "sources_max_loaded_at_ms"), 1714467600000LL);
    assert_true(strstr(tm_str(&r2->config, "optipipe.freshness"), "05-02/sources.json"));
    assert_int_equal(tm_inum(&tm_node(r2, "model.shop.dim_plans")->metrics, "sources_digest"),
                     tm_inum(&p1->metrics, "sources_digest"));
    assert_true(tm_inum(&tm_node(r2, "model.shop.fct_events")->metrics, "sources_digest") !=
                tm_inum(&e1->metrics, "sources_digest"));
    assert_int_equal(tm_inum(&tm_node(run_named(a1, "source-freshness"),
                                      "source.shop.app.plans")->metrics,
                             "max_loaded_at_ms"), 1714467600000LL);
    /* a view reads its sources too (it is a model) */
    assert_true(tm_has(&tm_node(r1, "model.shop.stg_plans")->metrics, "sources_n"));
    done(a1);
    done(a2);
    /* taken after the build, or a day before it: says nothing of it */
    an = night(1, 2, 0);
    r = build_run(an);
    assert_false(tm_has(&tm_node(r, "model.shop.dim_plans")->metrics, "sources_digest"));
    assert_null(tm_get(&r->config, "optipipe.freshness"));
    done(an);
    an = night(2, 1, 0);
    assert_false(tm_has(&tm_node(build_run(an), "model.shop.dim_plans")->metrics,
                        "sources_digest"));
    done(an);
}

/* --- bad input ------------------------------------------------------------------ */

static void test_bad_input(void **state)
{
    static const char *const names[] = {
        "truncated.json", "results-not-array.json", "wrong-types.json",
        "catalog.json", "orphan-manifest.json", "shape-only.json"};
    static const char *const texts[] = {
        "{\"metadata\":{\"dbt_schema_version\":\"https://schemas.getdbt.com/dbt/"
        "run-results/v6.json\"},\"results\":[{\"unique_id\":",
        META("run-results/v6.json", "bad-1", "2024-01-01T00:00:00Z")
        "\"results\":{}}",
        META("run-results/v6.json", "bad-2", "not a time")
        "\"results\":[1,{\"unique_id\":7},{\"unique_id\":\"model.p.x\","
        "\"status\":3,\"timing\":[{\"name\":\"execute\",\"started_at\":"
        "\"2024-01-01T00:00:09Z\",\"completed_at\":\"2024-01-01T00:00:01Z\"},"
        "\"junk\",{\"started_at\":5}],\"execution_time\":\"1\","
        "\"adapter_response\":[],\"thread_id\":null},"
        "{\"unique_id\":\"model.p.y\",\"timing\":null,\"execution_time\":1e308}],"
        "\"args\":[],\"elapsed_time\":-5}",
        META("catalog/v1.json", "cat", "2024-01-01T00:00:00Z") "\"nodes\":{}}",
        META("manifest/v12.json", "nobody", "2024-01-01T00:00:00Z")
        "\"nodes\":{\"model.q.z\":{\"depends_on\":{\"nodes\":[1,null]}}}}",
        "{\"results\":[{\"unique_id\":\"model.s.t\",\"execution_time\":2.5,"
        "\"status\":\"success\"}]}",
    };
    size_t n = sizeof names / sizeof *names, i;
    char *dir = write_files(names, texts, n);
    analysis *an = analyze1(dir);
    int ok_wrong = 0, ok_shape = 0;

    (void)state;
    for (i = 0; i < an->ninputs; i++) {
        const input_rec *in = &an->inputs[i];
        if (ends_with(in->path, "truncated.json") ||
            ends_with(in->path, "results-not-array.json") ||
            ends_with(in->path, "catalog.json")) {
            assert_false(in->ok);
            assert_true(in->nwarnings > 0);
            assert_non_null(strstr(in->warnings[0], in->path));
        }
        if (ends_with(in->path, "wrong-types.json"))
            ok_wrong = in->ok;
        if (ends_with(in->path, "shape-only.json"))
            ok_shape = in->ok;
    }
    assert_true(ok_wrong);
    assert_true(ok_shape);
    for (i = 0; i < an->m->nruns; i++) {
        const struct op_run *r = an->m->runs[i];
        if (!strcmp(r->id, "bad-2")) {
            const struct op_node *x = tm_node(r, "model.p.x");
            assert_int_equal(r->nnodes, 2);
            assert_true(r->nwarnings >= 3);
            assert_false(x->set & MSET_STARTED_AT);
            assert_string_equal(x->status, "unknown");
            assert_null(r->history_key); /* no generated_at: no history */
        }
    }
    rm_dir(dir, names, n);
    done(an);
}

/* Every field of the wrong type or range is a warning naming the file and
 * the node; duplicated keys keep the last value; a manifest's warnings go
 * to the run joined to it (they were all silent before). */
static void test_wrong_fields_warn(void **state)
{
    static const char *const names[] = {"run_results.json", "manifest.json"};
    static const char *const texts[] = {
        META("run-results/v6.json", "wf-1", "2024-01-01T00:00:10Z")
        "\"results\":[{\"unique_id\":\"model.p.x\",\"status\":\"success\","
        "\"execution_time\":1e999,\"timing\":\"nope\","
        "\"adapter_response\":{\"rows_affected\":-5,\"bytes_billed\":\"7\"},"
        "\"failures\":18446744073709551617},"
        "{\"unique_id\":\"model.p.y\",\"status\":\"success\","
        "\"execution_time\":2,\"execution_time\":3,\"timing\":[7]}],"
        "\"elapsed_time\":-5}",
        META("manifest/v12.json", "wf-1", "2024-01-01T00:00:10Z")
        "\"nodes\":{\"model.p.x\":{\"resource_type\":\"model\","
        "\"name\":\"x\",\"name\":\"x2\",\"depends_on\":{\"nodes\":[]}}}}",
    };
    char *dir = write_files(names, texts, 2);
    analysis *an = analyze1(dir);
    const struct op_run *r = only_run(an);
    const struct op_node *x = tm_node(r, "model.p.x"),
                         *y = tm_node(r, "model.p.y");

    (void)state;
    assert_true(tm_has_warning(r, "run_results.json: $.results[0]."
                                  "execution_time: number out of range"));
    assert_true(tm_has_warning(r, "run_results.json: node model.p.x: timing "
                                  "is \"nope\", not a list; ignored"));
    assert_true(tm_has_warning(r, "run_results.json: $: elapsed_time is -5, "
                                  "outside [0, 1e+09]; ignored"));
    assert_true(tm_has_warning(r, "node model.p.x: rows_affected is -5"));
    assert_true(tm_has_warning(r, "node model.p.x: bytes_billed is \"7\", "
                                  "not a number"));
    assert_true(tm_has_warning(r, "$.results[0].failures: number out of "
                                  "range"));
    assert_true(tm_has_warning(r, "node model.p.y: timing[0]: the phase is 7"));
    assert_true(tm_has_warning(r, "$.results[1].execution_time: duplicated "
                                  "key: the last value is kept"));
    assert_true(tm_has_warning(r, "manifest.json: $.nodes[\"model.p.x\"].name:"
                                  " duplicated key"));
    assert_false(tm_has(&x->metrics, "execution_time_ms"));
    assert_false(tm_has(&x->metrics, "failures"));
    assert_false(r->set & MSET_DURATION_MS);
    near(tm_num(&y->metrics, "execution_time_ms"), 3000, 1e-9, "last value");
    /* 1e999 made null by op_json_tidy: its warning only */
    assert_false(tm_has_warning(r, "execution_time is null"));
    rm_dir(dir, names, 2);
    done(an);
}

/* execution_time and elapsed_time are always numbers in dbt's files: a
 * null is a warning naming the node; failures: null (a model) is not. */
static void test_null_numbers_warn(void **state)
{
    static const char *const names[] = {"run_results.json"};
    static const char *const texts[] = {
        META("run-results/v6.json", "nn-1", "2024-01-01T00:00:10Z")
        "\"results\":[{\"unique_id\":\"model.p.x\",\"status\":\"success\","
        "\"execution_time\":null,\"timing\":[],\"failures\":null}],"
        "\"elapsed_time\":null}",
    };
    char *dir = write_files(names, texts, 1);
    analysis *an = analyze1(dir);
    const struct op_run *r = only_run(an);

    (void)state;
    assert_true(tm_has_warning(r, "run_results.json: node model.p.x: "
                                  "execution_time is null where a number is "
                                  "expected; ignored"));
    assert_true(tm_has_warning(r, "run_results.json: $: elapsed_time is null "
                                  "where a number is expected; ignored"));
    assert_false(tm_has_warning(r, "failures is null"));
    assert_false(r->set & MSET_DURATION_MS);
    rm_dir(dir, names, 1);
    done(an);
}

/* A run_results.json whose tree would cost 40 times its size is refused
 * with an error naming it; the memory stays bounded. */
static void test_tree_bound(void **state)
{
    static const char *const names[] = {"run_results.json"};
    const char head[] = META("run-results/v6.json", "tb", "2024-01-01T00:00:10Z")
        "\"results\":[],\"args\":{\"x\":[0";
    size_t n = (16u << 20) / 2 + 1000, i;
    char *doc = malloc(sizeof head + 2 * n + 4), *p, *dir;
    const char *texts[1];
    analysis *an;

    (void)state;
    assert_non_null(doc);
    memcpy(doc, head, sizeof head - 1);
    for (i = 0, p = doc + sizeof head - 1; i < n; i++, p += 2)
        memcpy(p, ",0", 2);
    memcpy(p, "]}}", 4);
    texts[0] = doc;
    dir = write_files(names, texts, 1);
    free(doc);
    an = analyze1(dir);
    assert_int_equal((int)an->ninputs, 1);
    assert_false(an->inputs[0].ok);
    assert_non_null(strstr(an->inputs[0].warnings[0], "run_results.json: its "
                                                      "JSON tree would take"));
    assert_int_equal((int)an->m->nruns, 0);
    rm_dir(dir, names, 1);
    done(an);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time_parse),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_every_real_file),
        cmocka_unit_test(test_real_folder),
        cmocka_unit_test(test_reference_g1),
        cmocka_unit_test(test_reference_g2),
        cmocka_unit_test(test_reference_spark),
        cmocka_unit_test(test_reference_duckdb_fusion),
        cmocka_unit_test(test_error_skipped),
        cmocka_unit_test(test_failing_tests_and_docs),
        cmocka_unit_test(test_edited_files),
        cmocka_unit_test(test_real_history),
        cmocka_unit_test(test_history_and_closest_manifest),
        cmocka_unit_test(test_history_without_manifest),
        cmocka_unit_test(test_static_dag_and_digest),
        cmocka_unit_test(test_sources_json),
        cmocka_unit_test(test_manifest_versions),
        cmocka_unit_test(test_real_v4_attached),
        cmocka_unit_test(test_freshness_join),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_wrong_fields_warn),
        cmocka_unit_test(test_null_numbers_warn),
        cmocka_unit_test(test_tree_bound),
    };

    int failed = cmocka_run_group_tests(tests, NULL, NULL);

    /* ctest reads 77 as "skipped": say so when the real files were absent */
    if (!failed && !have_real())
        return 77;
    return failed;
}
