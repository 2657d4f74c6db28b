/*
 * test_flink.c - the Flink input plugin through the real pipeline pieces
 * (input streams, builder, frozen model): every real capture under
 * OP_REAL_DIR/flink parses into a sensible model, and the version-tolerant
 * parsing (numbers as strings, "NaN", Long sentinels, -1 as unset, field
 * renames, old and new config keys, samples) behaves as documented in
 * docs/model-flink.md.
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

#include <optipipe/plugin.h>

#include "input.h"
#include "model.h"
#include "support.h"
#include "../../plugins/flink/flink_internal.h"

extern const op_plugin op_plugin_flink;

#define REAL OP_REAL_DIR "/flink"
#define JID "0123456789abcdef0123456789abcdef"
#define SRC "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define WIN "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"

/* --- helpers ------------------------------------------------------------- */

static int run_plugin(op_stream *in, const char *name, model **out,
                      op_error *err)
{
    model *m = model_new();
    op_builder *b;
    int rc;

    assert_non_null(m);
    b = model_builder_new(m, name);
    assert_non_null(b);
    rc = op_plugin_flink.parse(in, b, err);
    model_builder_free(b);
    /* exports are built when finish() joins them (flink.c) */
    b = model_builder_new(m, NULL);
    assert_non_null(b);
    if (op_plugin_flink.finish(b, rc ? NULL : err) && !rc)
        rc = err->code;
    model_builder_free(b);
    model_freeze(m);
    *out = m;
    return rc;
}

static int parse_file(const char *path, model **out, op_error *err)
{
    op_stream *in = NULL;
    int rc = input_open(path, NULL, &in, err);

    if (rc)
        return rc;
    rc = run_plugin(in, path, out, err);
    input_close(in);
    return rc;
}

static int parse_text(const char *json, model **out, op_error *err)
{
    op_stream *in = NULL;
    int rc = input_open_mem("test.json", json, strlen(json), NULL, &in, err);

    assert_int_equal(rc, 0);
    rc = run_plugin(in, "test.json", out, err);
    input_close(in);
    return rc;
}

static model *parse_ok(const char *json)
{
    op_error err = {0, ""};
    model *m = NULL;
    int rc = parse_text(json, &m, &err);

    if (rc)
        fail_msg("parse failed: %s", err.msg);
    assert_true(m->nruns >= 1);
    return m;
}

static int detect(const char *text, const char *path)
{
    op_probe p;

    p.path = path;
    p.basename = path;
    p.head = (const unsigned char *)text;
    p.head_len = strlen(text) < OP_PROBE_HEAD ? strlen(text) : OP_PROBE_HEAD;
    p.is_dir = 0;
    return op_plugin_flink.detect(&p);
}

/* --- real captures ------------------------------------------------------ */

typedef struct walk_state {
    size_t files, runs;
} walk_state;

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

static int visit(const char *file, void *ud)
{
    walk_state *ws = ud;
    op_error err = {0, ""};
    model *m = NULL;
    size_t i;

    if (!ends_with(file, ".json"))
        return 0;
    if (parse_file(file, &m, &err))
        fail_msg("%s: %s", file, err.msg);
    assert_true(m->nruns >= 1);
    for (i = 0; i < m->nruns; i++) {
        const struct op_run *r = m->runs[i];
        assert_string_equal(r->source, "flink");
        assert_non_null(r->id);
        assert_true(r->id[0] != '\0');
        assert_non_null(r->status);
    }
    ws->files++;
    ws->runs += m->nruns;
    model_free(m);
    return 0;
}

static model *real(const char *name)
{
    char path[1024];
    op_error err = {0, ""};
    model *m = NULL;

    snprintf(path, sizeof path, "%s/%s", REAL, name);
    if (parse_file(path, &m, &err))
        fail_msg("%s: %s", path, err.msg);
    return m;
}

static void test_real_all_parse(void **state)
{
    walk_state ws = {0, 0};
    op_error err = {0, ""};

    (void)state;
    assert_int_equal(input_walk(REAL, visit, NULL, &ws, &err), 0);
    printf("# parsed %zu real Flink captures into %zu runs\n", ws.files,
           ws.runs);
    assert_true(ws.files >= 20);
}

static void test_real_archive(void **state)
{
    model *m = real("historyserver-archive_flink-1.15_failed-job_streampark.json");
    const struct op_run *r = m->runs[0];
    const struct op_node *n;
    const mseries *ex;

    (void)state;
    assert_int_equal(m->nruns, 1);
    assert_string_equal(r->id, "d933fa6c785f0db6dccc6cc05dd43bab");
    assert_string_equal(r->name, "test555");
    assert_string_equal(r->status, "failed");
    assert_string_equal(r->raw_status, "FAILED");
    assert_int_equal(r->duration_ms, 18608);
    assert_int_equal(r->nnodes, 1);
    n = tm_node(r, "cbc357ccb763df2852fee8c4fc7d55f2");
    assert_string_equal(n->kind, "vertex");
    assert_int_equal(n->parallelism, 1);
    assert_int_equal(n->max_parallelism, 128);
    assert_int_equal(n->nparents, 0);
    /* interval = Long.MAX_VALUE: checkpointing off, no interval key */
    assert_int_equal(tm_inum(&r->metrics, "checkpointing_enabled"), 0);
    assert_false(tm_has(&r->config, "execution.checkpointing.interval"));
    assert_string_equal(tm_str(&r->config, "state.backend.type"), "hashmap");
    assert_string_equal(tm_str(&r->config, "execution.checkpointing.storage"),
                        "jobmanager");
    assert_int_equal(tm_inum(&r->metrics, "checkpoint_timeout_ms"), 600000);
    ex = model_find_series(r, "exceptions");
    assert_non_null(ex);
    assert_int_equal(ex->n, 1);
    assert_string_equal(tm_str(&ex->recs[0]->fields, "cause"),
                        "java.lang.Exception: aa");
    /* a history-less checkpoint summary has "NaN" percentiles: skipped */
    assert_false(tm_has(&r->metrics, "checkpoint_duration_p50_ms"));
    model_free(m);
}

static void test_real_job_versions(void **state)
{
    model *m = real("jobs-jid_flink-1.16_state-machine_k8s-autoscaler-"
                    "MetricsCollectionAndEvaluationTest.json");
    const struct op_run *r = m->runs[0];
    const struct op_node *src, *fm;

    (void)state;
    assert_string_equal(r->status, "running");
    assert_false(r->set & MSET_ENDED_AT); /* end-time -1 */
    assert_false(tm_has(&r->metrics, "max_parallelism")); /* -1 */
    assert_int_equal(r->nnodes, 2);
    src = tm_node(r, "bc764cd8ddf7a0cff126f51c16239658");
    fm = tm_node(r, "20ba6b65f97481d5570070de90e4e791");
    assert_int_equal(fm->nparents, 1);
    assert_string_equal(fm->parents[0], "bc764cd8ddf7a0cff126f51c16239658");
    assert_string_equal(tm_str(&fm->attrs, "ship_strategy"), "HASH");
    assert_int_equal((int64_t)tm_num(&fm->metrics, "records_in"), 33233);
    assert_int_equal((int64_t)tm_num(&fm->metrics, "accumulated_busy_ms"), 171);
    /* "accumulated-busy-time": "NaN" on the legacy source */
    assert_false(tm_has(&src->metrics, "accumulated_busy_ms"));
    assert_int_equal((int64_t)tm_num(&src->metrics, "records_out"), 33254);
    assert_true(tm_has_warning(r, "lone /jobs/<jid>"));
    model_free(m);

    m = real("jobs-jid_flink-1.18_slot-sharing-group_k8s-autoscaler-"
             "ScalingMetricCollectorTest.json");
    r = m->runs[0];
    assert_string_equal(tm_str(&tm_node(r, "bc764cd8ddf7a0cff126f51c16239658")->attrs,
                            "slot_sharing_group"),
                        "a9c52ec4c7200ab4bd141cbae8022105");
    model_free(m);

    m = real("jobs-jid_flink-1.13-1.14-era_car-top-speed_springline-test.json");
    r = m->runs[0];
    assert_string_equal(r->name, "CarTopSpeedWindowingExample");
    fm = tm_node(r, "90bea66de1c231edf33913ecd54406c1");
    assert_int_equal(fm->max_parallelism, 128);
    assert_non_null(strstr(fm->name, "Window(GlobalWindows()"));
    /* plan descriptions are HTML-escaped: "-&gt;" becomes "->" */
    assert_non_null(strstr(tm_str(&fm->attrs, "description"), ") -> Sink"));
    model_free(m);

    m = real("jobs-jid_sql-over-aggregate_flink-1.17-era_dinky-javadoc.json");
    r = m->runs[0];
    src = tm_node(r, "cbc357ccb763df2852fee8c4fc7d55f2");
    assert_non_null(strstr(tm_str(&src->attrs, "description"),
                           "watermark=[(order_time - 2000:INTERVAL SECOND)]"));
    model_free(m);
}

static void test_real_checkpoints(void **state)
{
    model *m = real("jobs-jid-checkpoints_flink-1.14_k8s-operator-"
                    "RestResponseTest.json");
    const struct op_run *r = m->runs[0];
    const mseries *ck = model_find_series(r, "checkpoints");

    (void)state;
    /* "@class" items, state_size meant the checkpointed size before 1.15 */
    assert_non_null(ck);
    assert_int_equal(ck->n, 2);
    assert_int_equal(tm_inum(&ck->recs[0]->fields, "id"), 1);
    assert_int_equal(tm_inum(&ck->recs[0]->fields, "checkpointed_size_bytes"),
                     8646);
    assert_false(tm_has(&ck->recs[0]->fields, "state_size_bytes"));
    assert_int_equal(tm_get(&ck->recs[1]->fields, "is_savepoint")->u.b, 1);
    model_free(m);

    m = real("jobs-jid-checkpoints_flink-1.15_savepoint-restored-history10_"
             "k8s-operator-AbstractFlinkServiceTest.json");
    r = m->runs[0];
    ck = model_find_series(r, "checkpoints");
    assert_non_null(ck);
    /* ten history entries plus the savepoint only in latest, by id */
    assert_int_equal(ck->n, 11);
    assert_int_equal(tm_inum(&ck->recs[0]->fields, "id"), 51);
    assert_int_equal(tm_inum(&ck->recs[10]->fields, "id"), 96);
    assert_int_equal(tm_inum(&ck->recs[10]->fields, "state_size_bytes"), 28437);
    assert_string_equal(tm_str(&ck->recs[10]->fields, "external_path"),
                        "file:/flink-data/checkpoints/"
                        "00000000000000000000000000000000/chk-96");
    assert_int_equal(tm_inum(&r->metrics, "checkpoints_failed"), 10);
    assert_int_equal(tm_inum(&r->metrics, "restored_checkpoint_id"), 27);
    assert_true(fabs(tm_num(&r->metrics, "checkpoint_duration_p95_ms") - 40.5) <
                1e-9);
    assert_int_equal((int64_t)tm_num(&r->metrics, "checkpoint_duration_p50_ms"),
                     22);
    model_free(m);
}

static void test_real_vertex_endpoints(void **state)
{
    model *m = real("jobs-jid-vertices-vid-backpressure_flink-1.17-era_"
                    "dinky-javadoc.json");
    const struct op_run *r = m->runs[0];
    const struct op_node *n = tm_node(r, "unknown-vertex");

    (void)state;
    assert_true(fabs(tm_num(&n->metrics, "idle_ratio") - 1.0) < 1e-12);
    assert_true(fabs(tm_num(&n->metrics, "backpressure_ratio")) < 1e-12);
    assert_string_equal(tm_str(&n->attrs, "backpressure_level"), "ok");
    assert_non_null(tm_dist(n, "busy_ratio"));
    model_free(m);

    m = real("jobs-jid-vertices-vid-watermarks_flink-1.17-era_dinky-"
             "javadoc.json");
    r = m->runs[0];
    n = tm_node(r, "unknown-vertex");
    assert_int_equal(tm_inum(&n->metrics, "watermark_min_ms"), 1696676233964LL);
    assert_int_equal(tm_inum(&n->metrics, "subtasks_without_watermark"), 0);
    model_free(m);

    m = real("config-dashboard_flink-1.14.4_k8s-operator-RestResponseTest."
             "json");
    assert_string_equal(m->runs[0]->engine_version, "1.14.4");
    model_free(m);
}

/* --- edge cases ------------------------------------------------------------ */

static void test_detect(void **state)
{
    (void)state;
    assert_int_equal(detect("{\"flink_rest_export\": 1, \"responses\": {}}",
                            "x.json"),
                     95);
    assert_int_equal(detect("  {\"archive\":[{\"path\":\"/jobs/overview\","
                            "\"json\":\"{}\"}]}",
                            "x"),
                     90);
    assert_int_equal(detect("{\"jid\":\"" JID "\",\"name\":\"j\","
                            "\"vertices\":[]}",
                            "x"),
                     80);
    assert_int_equal(detect("{\"results\": [], \"metadata\": {}}", "x"), 0);
    assert_int_equal(detect("SparkListenerLogStart", "x"), 0);
    assert_int_equal(detect("", "x"), 0);
}

static void test_errors(void **state)
{
    op_error err = {0, ""};
    model *m = NULL;

    (void)state;
    assert_int_equal(parse_text("{\"flink_rest_export\": 1,\n \"responses\": "
                                "{\"/x\": [1,}}",
                                &m, &err),
                     OP_EPARSE);
    assert_non_null(strstr(err.msg, "test.json: line 2"));
    model_free(m);
    assert_int_equal(parse_text("{\"flink_rest_export\": 1}", &m, &err),
                     OP_EPARSE);
    assert_non_null(strstr(err.msg, "$.responses"));
    model_free(m);
    assert_int_equal(parse_text("{\"flink_rest_export\": 1, \"responses\": "
                                "{\"/config\": {}}}",
                                &m, &err),
                     OP_EPARSE);
    assert_non_null(strstr(err.msg, "no /jobs/<jid>"));
    model_free(m);
    assert_int_equal(parse_text("[1, 2, 3]", &m, &err), OP_EPARSE);
    model_free(m);
    assert_int_equal(parse_text("\"just a string\"", &m, &err), OP_EPARSE);
    model_free(m);
}

/* A job whose numbers come as strings, with "NaN", -1 and incomplete IO. */
static const char job_strings[] =
    "{\"flink_rest_export\": 1, \"captured_at_ms\": 1700000100000,"
    " \"responses\": {"
    "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"name\": \"strings\","
    "   \"state\": \"RUNNING\", \"start-time\": \"1700000000000\","
    "   \"end-time\": -1, \"duration\": \"100000\", \"maxParallelism\": -1,"
    "   \"now\": 1700000100000,"
    "   \"vertices\": ["
    "    {\"id\": \"" SRC "\", \"name\": \"Source: s\", \"parallelism\": \"2\","
    "     \"maxParallelism\": 128, \"status\": \"RUNNING\","
    "     \"start-time\": 1700000000000, \"end-time\": -1, \"duration\": 100000,"
    "     \"metrics\": {\"read-records\": 0, \"read-records-complete\": true,"
    "      \"write-records\": \"5000\", \"write-records-complete\": true,"
    "      \"read-bytes\": 0, \"read-bytes-complete\": false,"
    "      \"write-bytes\": 0, \"write-bytes-complete\": false,"
    "      \"accumulated-busy-time\": \"NaN\"}},"
    "    {\"id\": \"" WIN "\", \"name\": \"Window(TumblingEventTimeWindows(60000))\","
    "     \"parallelism\": 2, \"maxParallelism\": 128, \"status\": \"RUNNING\","
    "     \"start-time\": 1700000000000, \"end-time\": -1, \"duration\": 100000,"
    "     \"metrics\": {\"read-records\": 5000, \"read-records-complete\": true}}],"
    "   \"plan\": {\"jid\": \"" JID "\", \"nodes\": ["
    "    {\"id\": \"" WIN "\", \"parallelism\": 2, \"description\": \"w\","
    "     \"inputs\": [{\"num\": 0, \"id\": \"" SRC "\", \"ship_strategy\": \"HASH\"}]},"
    "    {\"id\": \"" SRC "\", \"parallelism\": 2, \"description\": \"s\"}]}},"
    "  \"/jobs/" JID "/vertices/" SRC "/backpressure\": {\"status\": \"ok\","
    "   \"backpressure-level\": \"high\", \"subtasks\": ["
    "    {\"subtask\": 0, \"ratio\": \"0.9\", \"busyRatio\": \"NaN\", \"idleRatio\": 0.1},"
    "    {\"subtask\": 1, \"ratio\": 0.7, \"busyRatio\": \"NaN\", \"idleRatio\": \"0.3\"}]},"
    "  \"/jobs/" JID "/vertices/" WIN "/backpressure\": {\"status\": \"ok\","
    "   \"backpressureLevel\": \"low\", \"backpressure-level\": \"ok\", \"subtasks\": ["
    "    {\"subtask\": 1, \"ratio\": 0.2, \"busyRatio\": 0.8, \"idleRatio\": 0.0},"
    "    {\"subtask\": 0, \"ratio\": 0.0, \"busyRatio\": 0.4, \"idleRatio\": 0.6}]},"
    "  \"/jobs/" JID "/vertices/" WIN "/watermarks\": ["
    "   {\"id\": \"0.currentInputWatermark\", \"value\": \"-9223372036854775808\"},"
    "   {\"id\": \"1.currentInputWatermark\", \"value\": \"-9223372036854775807\"},"
    "   {\"id\": \"2.currentInputWatermark\", \"value\": \"9223372036854775807\"},"
    "   {\"id\": \"3.currentInputWatermark\", \"value\": \"1700000040000\"}],"
    "  \"/jobs/" JID "/checkpoints/config\": {\"mode\": \"exactly_once\","
    "   \"interval\": \"9223372036854775807\", \"timeout\": \"600000\","
    "   \"min_pause\": 0, \"state_backend\": \"EmbeddedRocksDBStateBackend\","
    "   \"checkpoint_storage\": \"FileSystemCheckpointStorage\","
    "   \"externalization\": {\"enabled\": true, \"delete_on_cancellation\": false}},"
    "  \"/jobs/" JID "/checkpoints\": {\"counts\": {\"completed\": 1},"
    "   \"summary\": {\"end_to_end_duration\": {\"min\": 5, \"max\": 5, \"avg\": 5,"
    "    \"p50\": \"NaN\", \"p90\": 5.0}},"
    "   \"latest\": {\"completed\": null, \"failed\": null}, \"history\": []}"
    " }}";

static void test_numbers_as_strings(void **state)
{
    model *m = parse_ok(job_strings);
    const struct op_run *r = m->runs[0];
    const struct op_node *src = tm_node(r, SRC);
    const struct op_node *win = tm_node(r, WIN);

    (void)state;
    assert_string_equal(r->id, JID);
    assert_int_equal(r->started_at, 1700000000000LL);
    assert_int_equal(r->duration_ms, 100000);
    assert_false(r->set & MSET_ENDED_AT);
    assert_false(tm_has(&r->metrics, "max_parallelism"));
    assert_int_equal(src->parallelism, 2);
    assert_int_equal((int64_t)tm_num(&src->metrics, "records_out"), 5000);
    /* *-complete: false -> unknown, not 0 */
    assert_false(tm_has(&src->metrics, "bytes_in"));
    assert_string_equal(tm_str(&src->attrs, "metrics_incomplete"),
                        "bytes_in,bytes_out");
    assert_false(tm_has(&src->metrics, "accumulated_busy_ms"));
    /* "NaN" busy ratios: no busy metric, the others are read */
    assert_false(tm_has(&src->metrics, "busy_ratio"));
    assert_true(fabs(tm_num(&src->metrics, "backpressure_ratio") - 0.8) < 1e-12);
    assert_true(fabs(tm_num(&src->metrics, "backpressure_ratio_max") - 0.9) <
                1e-12);
    assert_true(fabs(tm_num(&src->metrics, "idle_ratio") - 0.2) < 1e-12);
    assert_string_equal(tm_str(&src->attrs, "backpressure_level"), "high");
    /* camelCase wins over the deprecated hyphenated field */
    assert_string_equal(tm_str(&win->attrs, "backpressure_level"), "low");
    assert_true(fabs(tm_dist(win, "busy_ratio")->max - 0.8) < 1e-12);
    assert_true(fabs(tm_dist(win, "busy_ratio")->min - 0.4) < 1e-12);
    assert_true(fabs(tm_num(&win->metrics, "busy_ratio") - 0.6) < 1e-12);
    assert_string_equal(tm_str(&win->attrs, "ship_strategy"), "HASH");
    /* "NaN" summary percentiles are skipped, numbers kept */
    assert_false(tm_has(&r->metrics, "checkpoint_duration_p50_ms"));
    assert_true(fabs(tm_num(&r->metrics, "checkpoint_duration_p90_ms") - 5) <
                1e-12);
    model_free(m);
}

static void test_sentinels(void **state)
{
    model *m = parse_ok(job_strings);
    const struct op_run *r = m->runs[0];
    const struct op_node *win = tm_node(r, WIN);
    const mseries *wm = model_find_series(r, "watermarks");

    (void)state;
    /* interval "9223372036854775807" (Long.MAX_VALUE): checkpointing off */
    assert_int_equal(tm_inum(&r->metrics, "checkpointing_enabled"), 0);
    assert_false(tm_has(&r->config, "execution.checkpointing.interval"));
    assert_false(tm_has(&r->metrics, "checkpoint_interval_ms"));
    assert_int_equal(tm_inum(&r->metrics, "checkpoint_timeout_ms"), 600000);
    /* Long.MIN_VALUE is "no watermark"; MIN+1 is a value (read exactly,
     * not through a double, which would round it to MIN); MAX is kept. */
    assert_non_null(wm);
    assert_int_equal(wm->n, 4);
    assert_int_equal(tm_get(&wm->recs[0]->fields, "has_watermark")->u.b, 0);
    assert_false(tm_has(&wm->recs[0]->fields, "watermark_ms"));
    assert_int_equal(tm_get(&wm->recs[1]->fields, "has_watermark")->u.b, 1);
    assert_int_equal(tm_inum(&wm->recs[1]->fields, "watermark_ms"),
                     INT64_MIN + 1);
    assert_int_equal(tm_inum(&wm->recs[2]->fields, "watermark_ms"), INT64_MAX);
    assert_int_equal(tm_inum(&win->metrics, "subtasks_without_watermark"), 1);
    assert_int_equal(tm_inum(&win->metrics, "watermark_subtasks"), 4);
    assert_int_equal(tm_inum(&win->metrics, "watermark_min_ms"), INT64_MIN + 1);
    assert_int_equal(tm_inum(&win->metrics, "watermark_max_ms"), INT64_MAX);
    /* config from the checkpoint config, canonical names */
    assert_string_equal(tm_str(&r->config, "state.backend.type"), "rocksdb");
    assert_string_equal(tm_str(&r->config, "execution.checkpointing.storage"),
                        "filesystem");
    assert_string_equal(tm_str(&r->config, "execution.checkpointing.mode"),
                        "EXACTLY_ONCE");
    assert_string_equal(
        tm_str(&r->config,
            "execution.checkpointing.externalized-checkpoint-retention"),
        "RETAIN_ON_CANCELLATION");
    model_free(m);
}

static void test_interval_number_sentinel(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"responses\": {"
        " \"/jobs/" JID "/checkpoints/config\": {\"interval\": "
        "9223372036854775807, \"timeout\": 600000, \"min_pause\": 0},"
        " \"/jobs/" JID "/plan\": {\"plan\": {\"jid\": \"" JID "\", \"name\": "
        "\"p\", \"nodes\": [{\"id\": \"" SRC "\", \"parallelism\": 3, "
        "\"description\": \"Source: x<br/>\"}]}}}}");
    const struct op_run *r = m->runs[0];

    (void)state;
    assert_int_equal(tm_inum(&r->metrics, "checkpointing_enabled"), 0);
    assert_string_equal(r->name, "p");
    assert_int_equal(tm_node(r, SRC)->parallelism, 3);
    assert_string_equal(tm_node(r, SRC)->name, "Source: x");
    assert_true(tm_has_warning(r, "no /jobs/<jid> response"));
    assert_true(tm_has_warning(r, "no /jobmanager/config"));
    model_free(m);

    m = parse_ok("{\"flink_rest_export\": 1, \"responses\": {"
                 " \"/jobs/" JID "/checkpoints/config\": {\"interval\": "
                 "60000, \"timeout\": 600000}}}");
    r = m->runs[0];
    assert_int_equal(tm_inum(&r->metrics, "checkpointing_enabled"), 1);
    assert_int_equal(tm_inum(&r->metrics, "checkpoint_interval_ms"), 60000);
    assert_string_equal(tm_str(&r->config, "execution.checkpointing.interval"),
                        "60000");
    model_free(m);
}

/* Every row of the one table of renames (rules/flink/lib/flinkkeys.lua,
 * which the rules read too) is what the plugin canonicalizes: an export
 * with each old key comes out under the row's canonical key. */
static void test_config_keys_one_table(void **state)
{
    char *lua, line[512], json[65536];
    const char *p;
    size_t len, used, rows = 0, checked = 0;
    op_error err = {0, ""};
    model *m;

    (void)state;
    lua = input_read_file(OP_SOURCE_DIR "/rules/flink/lib/flinkkeys.lua", 1 << 20,
                          &len, &err);
    assert_non_null(lua);
    used = (size_t)snprintf(json, sizeof json, "{\"flink_rest_export\": 1, "
                            "\"responses\": {\"/jobmanager/config\": [");
    for (p = lua; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
        char old[200], canon[200];
        int major, minor;
        if (sscanf(p, "  { \"%199[^\"]\", \"%199[^\"]\", %d, %d },", old, canon,
                   &major, &minor) != 4)
            continue;
        used += (size_t)snprintf(json + used, sizeof json - used,
                                 "%s{\"key\": \"%s\", \"value\": \"v%zu\"}",
                                 rows ? ", " : "", old, rows);
        rows++;
    }
    snprintf(json + used, sizeof json - used, "], \"/jobs/" JID "\": {\"jid\": \""
             JID "\", \"state\": \"RUNNING\", \"vertices\": []}}}");
    assert_true(rows >= 15);
    m = parse_ok(json);
    for (p = lua; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
        char old[200], canon[200];
        int major, minor;
        if (sscanf(p, "  { \"%199[^\"]\", \"%199[^\"]\", %d, %d },", old, canon,
                   &major, &minor) != 4)
            continue;
        snprintf(line, sizeof line, "%s -> %s", old, canon);
        if (!tm_has(&m->runs[0]->config, canon))
            fail_msg("not canonicalized: %s", line);
        if (tm_has(&m->runs[0]->config, old))
            fail_msg("old key kept: %s", line);
        checked++;
    }
    assert_int_equal(checked, rows);
    assert_true(tm_has(&m->runs[0]->config, "pipeline.operator-chaining.enabled"));
    model_free(m);
    free(lua);
}

static void test_config_keys(void **state)
{
    /* New keys beat their deprecated aliases whatever the order; the job's
     * checkpoint config beats the cluster's. */
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"responses\": {"
        " \"/jobmanager/config\": ["
        "  {\"key\": \"execution.checkpointing.num-retained\", \"value\": \"5\"},"
        "  {\"key\": \"state.checkpoints.num-retained\", \"value\": \"2\"},"
        "  {\"key\": \"state.backend\", \"value\": \"rocksdb\"},"
        "  {\"key\": \"state.backend.incremental\", \"value\": \"true\"},"
        "  {\"key\": \"state.checkpoints.dir\", \"value\": \"s3://b/cp\"},"
        "  {\"key\": \"execution.checkpointing.timeout\", \"value\": \"5 min\"},"
        "  {\"key\": \"restart-strategy\", \"value\": \"fixed-delay\"},"
        "  {\"key\": \"taskmanager.numberOfTaskSlots\", \"value\": \"4\"}],"
        " \"/jobs/" JID "/checkpoints/config\": {\"interval\": 1000, "
        "  \"timeout\": 120000},"
        " \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"CANCELED\","
        "  \"vertices\": []}}}");
    const struct op_run *r = m->runs[0];

    (void)state;
    assert_string_equal(r->status, "cancelled");
    assert_string_equal(tm_str(&r->config, "execution.checkpointing.num-retained"),
                        "5");
    assert_false(tm_has(&r->config, "state.checkpoints.num-retained"));
    assert_string_equal(tm_str(&r->config, "state.backend.type"), "rocksdb");
    assert_false(tm_has(&r->config, "state.backend"));
    assert_string_equal(tm_str(&r->config, "execution.checkpointing.incremental"),
                        "true");
    assert_string_equal(tm_str(&r->config, "execution.checkpointing.dir"),
                        "s3://b/cp");
    assert_string_equal(tm_str(&r->config, "restart-strategy.type"),
                        "fixed-delay");
    assert_string_equal(tm_str(&r->config, "taskmanager.numberOfTaskSlots"), "4");
    assert_string_equal(tm_str(&r->config, "execution.checkpointing.timeout"),
                        "120000");
    assert_int_equal(tm_inum(&r->metrics, "cluster_config_keys"), 8);
    model_free(m);
}

/* Checkpoint history merged over samples: dedup by id, newest view wins,
 * ordered; "@class" and "className" alike. Rates from the two polls. */
static void test_samples(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"captured_at_ms\": 1000000,"
        " \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"now\": 1000000, \"vertices\": [{\"id\": \"" SRC "\", \"name\": \"s\","
        "    \"parallelism\": 1, \"duration\": 1000,"
        "    \"metrics\": {\"write-records\": 1000}}]},"
        "  \"/jobs/" JID "/checkpoints\": {\"counts\": {\"failed\": 0},"
        "   \"history\": ["
        "    {\"@class\": \"in_progress\", \"id\": 3, \"status\": \"IN_PROGRESS\"},"
        "    {\"@class\": \"completed\", \"id\": 2, \"status\": \"COMPLETED\","
        "     \"end_to_end_duration\": 200, \"state_size\": 10},"
        "    {\"@class\": \"completed\", \"id\": 1, \"status\": \"COMPLETED\","
        "     \"end_to_end_duration\": 100, \"state_size\": 10}]}},"
        " \"samples\": [{\"captured_at_ms\": 1010000, \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"FAILED\","
        "   \"now\": 1010000, \"vertices\": [{\"id\": \"" SRC "\", \"name\": \"s\","
        "    \"parallelism\": 1, \"duration\": 11000,"
        "    \"metrics\": {\"write-records\": 6000}}]},"
        "  \"/jobs/" JID "/checkpoints\": {\"counts\": {\"failed\": 1},"
        "   \"latest\": {\"failed\": {\"className\": \"failed\", \"id\": 5,"
        "    \"status\": \"FAILED\", \"failure_timestamp\": 1009000,"
        "    \"failure_message\": \"Checkpoint expired before completing.\"}},"
        "   \"history\": ["
        "    {\"className\": \"failed\", \"id\": 5, \"status\": \"FAILED\"},"
        "    {\"className\": \"completed\", \"id\": 4, \"status\": \"COMPLETED\","
        "     \"checkpointed_size\": 5, \"state_size\": 50},"
        "    {\"className\": \"completed\", \"id\": 3, \"status\": \"COMPLETED\","
        "     \"checkpointed_size\": 5, \"state_size\": 40}]}}},"
        "  {\"responses\": 7}]}");
    const struct op_run *r = m->runs[0];
    const mseries *ck = model_find_series(r, "checkpoints");
    size_t i;

    (void)state;
    assert_non_null(ck);
    assert_int_equal(ck->n, 5);
    for (i = 0; i < 5; i++)
        assert_int_equal(tm_inum(&ck->recs[i]->fields, "id"), (int64_t)i + 1);
    assert_string_equal(tm_str(&ck->recs[2]->fields, "status"), "COMPLETED");
    assert_int_equal(tm_inum(&ck->recs[2]->fields, "state_size_bytes"), 40);
    assert_string_equal(tm_str(&ck->recs[4]->fields, "status"), "FAILED");
    assert_int_equal(tm_inum(&r->metrics, "checkpoints_failed"), 1);
    /* newest poll gives state; the sample without responses is reported */
    assert_string_equal(r->status, "failed");
    assert_true(tm_has_warning(r, "$.samples[1]"));
    assert_int_equal(tm_inum(&r->metrics, "samples"), 1);
    /* 5000 records in 10 s */
    assert_true(fabs(tm_num(&tm_node(r, SRC)->metrics, "records_out_per_s") - 500) <
                1e-9);
    assert_string_equal(tm_str(&tm_node(r, SRC)->attrs, "rate_source"), "samples");
    model_free(m);
}

/* Subtask metrics: per-subtask values from /vertices/<vid>/metrics with
 * "<n>." names, aggregates from subtasks/metrics, URL-style keys. */
static void test_metrics_endpoints(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"base_url\": \"http://jm:8081\","
        " \"responses\": {"
        "  \"http://jm:8081/v1/jobs/" JID "\": {\"jid\": \"" JID "\","
        "   \"state\": \"RUNNING\", \"vertices\": ["
        "    {\"id\": \"" SRC "\", \"name\": \"Source: k\", \"parallelism\": 2},"
        "    {\"id\": \"" WIN "\", \"name\": \"w\", \"parallelism\": 2}]},"
        "  \"/jobs/" JID "/vertices/" SRC "/metrics?get=0.busyTimeMsPerSecond,"
        "1.busyTimeMsPerSecond\": ["
        "   {\"id\": \"0.busyTimeMsPerSecond\", \"value\": \"900\"},"
        "   {\"id\": \"1.busyTimeMsPerSecond\", \"value\": \"100\"},"
        "   {\"id\": \"1.numRecordsOutPerSecond\", \"value\": \"50.5\"},"
        "   {\"id\": \"0.numRecordsOutPerSecond\", \"value\": \"49.5\"},"
        "   {\"id\": \"0.Source__k.currentOutputWatermark\","
        "    \"value\": \"-9223372036854775808\"},"
        "   {\"id\": \"1.Source__k.currentOutputWatermark\","
        "    \"value\": \"1700000000000\"}],"
        "  \"/jobs/" JID "/vertices/" WIN "/subtasks/metrics?get=x\": ["
        "   {\"id\": \"busyTimeMsPerSecond\", \"min\": 100, \"max\": 700,"
        "    \"avg\": 400, \"sum\": 800},"
        "   {\"id\": \"numRecordsInPerSecond\", \"min\": 1, \"max\": 3,"
        "    \"avg\": 2, \"sum\": 4},"
        "   {\"id\": \"Window.numLateRecordsDropped\", \"min\": 0, \"max\": 7,"
        "    \"avg\": 3.5, \"sum\": 7}],"
        "  \"/jobs/" JID "/vertices/" WIN "/backpressure\": {\"errors\":"
        "   [\"Vertex not found\"]}"
        " }}");
    const struct op_run *r = m->runs[0];
    const struct op_node *src = tm_node(r, SRC), *win = tm_node(r, WIN);

    (void)state;
    assert_true(fabs(tm_num(&src->metrics, "busy_ratio") - 0.5) < 1e-12);
    assert_true(fabs(tm_num(&src->metrics, "busy_ratio_max") - 0.9) < 1e-12);
    assert_int_equal((int)tm_dist(src, "busy_ratio")->count, 2);
    assert_string_equal(tm_str(&src->attrs, "ratio_source"), "subtask_metrics");
    assert_true(fabs(tm_num(&src->metrics, "records_out_per_s") - 100) < 1e-9);
    assert_int_equal(tm_inum(&src->metrics, "output_watermark_min_ms"),
                     1700000000000LL);
    assert_int_equal(tm_inum(&src->metrics, "subtasks_without_output_watermark"),
                     1);
    assert_true(fabs(tm_num(&win->metrics, "busy_ratio") - 0.4) < 1e-12);
    assert_true(fabs(tm_num(&win->metrics, "busy_ratio_max") - 0.7) < 1e-12);
    assert_null(tm_dist(win, "busy_ratio"));
    assert_string_equal(tm_str(&win->attrs, "ratio_source"),
                        "aggregated_metrics");
    assert_true(fabs(tm_num(&win->metrics, "records_in_per_s") - 4) < 1e-12);
    assert_true(fabs(tm_num(&win->metrics, "late_records_dropped") - 7) < 1e-12);
    assert_true(tm_has_warning(r, "Flink returned an error: Vertex not found"));
    model_free(m);
}

/* RocksDB / ForSt native metrics (flink_rocksdb.c): column families of a
 * subtask summed for amounts, the largest taken for per-DB values, the
 * hit ratio from the tickers, unusable values left out. */
static void test_rocksdb_native(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"vertices\": [{\"id\": \"" WIN "\", \"name\": \"w\","
        "    \"parallelism\": 2}]},"
        "  \"/jobs/" JID "/vertices/" WIN "/metrics?get=x\": ["
        "   {\"id\": \"0.w.a.rocksdb.estimate-num-keys\", \"value\": \"100\"},"
        "   {\"id\": \"0.w.b.rocksdb.estimate-num-keys\", \"value\": \"50\"},"
        "   {\"id\": \"1.w.a.rocksdb.estimate-num-keys\", \"value\": \"1000\"},"
        "   {\"id\": \"1.w.b.rocksdb.estimate-num-keys\", \"value\": \"-3\"},"
        "   {\"id\": \"0.w.a.rocksdb.block-cache-capacity\", \"value\": \"64\"},"
        "   {\"id\": \"0.w.b.rocksdb.block-cache-capacity\", \"value\": \"64\"},"
        "   {\"id\": \"0.w.a.rocksdb.is-write-stopped\", \"value\": \"1\"},"
        "   {\"id\": \"0.w.rocksdb.block_cache_hit\", \"value\": \"30\"},"
        "   {\"id\": \"0.w.rocksdb.block_cache_miss\", \"value\": \"70\"},"
        "   {\"id\": \"1.w.rocksdb.block_cache_hit\", \"value\": \"90\"},"
        "   {\"id\": \"1.w.rocksdb.block_cache_miss\", \"value\": \"10\"},"
        "   {\"id\": \"1.w.rocksdb.stall_micros\", \"value\": \"5000\"},"
        "   {\"id\": \"1.w.a.rocksdb.not-a-property\", \"value\": \"9\"}]"
        " }}");
    const struct op_run *r = m->runs[0];
    const struct op_node *w = tm_node(r, WIN);

    (void)state;
    assert_string_equal(tm_str(&w->attrs, "rocksdb_metrics"), "native");
    assert_true(tm_num(&w->metrics, "estimated_keys") == 1150);
    assert_true(tm_num(&w->metrics, "estimated_keys_max") == 1000);
    assert_int_equal((int)tm_dist(w, "estimated_keys")->count, 2);
    assert_true(tm_num(&w->metrics, "block_cache_capacity_bytes") == 64);
    assert_true(tm_num(&w->metrics, "write_stopped") == 1);
    assert_true(fabs(tm_num(&w->metrics, "block_cache_hit_ratio") - 0.6) < 1e-12);
    assert_int_equal((int)tm_dist(w, "block_cache_hit_ratio")->count, 2);
    assert_true(fabs(tm_num(&w->metrics, "write_stall_duration_total_ms") - 5) < 1e-12);
    assert_null(tm_dist(w, "not_a_property"));
    assert_true(tm_has_warning(r, "vertex " WIN ": RocksDB native metrics not all "
                                  "read: 0 values over 256 operator/column family "
                                  "names, 0 over 1048576 values per vertex, 1 not a "
                                  "number >= 0"));
    model_free(m);
}

/* Past 256 operator/column family names a vertex keeps the first ones and
 * says how many values it did not read. */
static void test_rocksdb_native_bound(void **state)
{
    size_t cap = 1 << 16, n = 0, i;
    char *doc = malloc(cap);
    model *m;

    (void)state;
    assert_non_null(doc);
    n += (size_t)snprintf(doc + n, cap - n,
        "{\"flink_rest_export\": 1, \"responses\": {"
        "\"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "\"vertices\": [{\"id\": \"" WIN "\", \"name\": \"w\", \"parallelism\": 1}]},"
        "\"/jobs/" JID "/vertices/" WIN "/metrics?get=x\": [");
    for (i = 0; i < 300; i++)
        n += (size_t)snprintf(doc + n, cap - n,
            "%s{\"id\": \"0.w.cf%zu.rocksdb.estimate-num-keys\", \"value\": \"1\"}",
            i ? "," : "", i);
    snprintf(doc + n, cap - n, "]}}");
    m = parse_ok(doc);
    assert_true(tm_num(&tm_node(m->runs[0], WIN)->metrics, "estimated_keys") == 256);
    assert_true(tm_has_warning(m->runs[0], "RocksDB native metrics not all read: 44 values over 256"));
    model_free(m);
    free(doc);
}

static void test_checkpoint_details_and_exceptions(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"vertices\": [{\"id\": \"" SRC "\", \"name\": \"s\"},"
        "    {\"id\": \"" WIN "\", \"name\": \"w\"}]},"
        "  \"/jobs/" JID "/checkpoints/details/7\": {\"id\": 7,"
        "   \"status\": \"COMPLETED\", \"state_size\": 300,"
        "   \"checkpointed_size\": 30, \"tasks\": {"
        "    \"" WIN "\": {\"id\": \"" WIN "\", \"status\": \"COMPLETED\","
        "     \"state_size\": 280, \"checkpointed_size\": 28,"
        "     \"end_to_end_duration\": 900},"
        "    \"cccccccccccccccccccccccccccccccc\": {\"state_size\": 1}}},"
        "  \"/jobs/" JID "/exceptions?maxExceptions=10\": {"
        "   \"exceptionHistory\": {\"truncated\": true, \"entries\": ["
        "    {\"exceptionName\": \"java.io.IOException\","
        "     \"stacktrace\": \"java.io.IOException: boom\\n\\tat x\","
        "     \"timestamp\": 20, \"taskName\": \"w (1/2)\","
        "     \"endpoint\": \"tm-1:6121\", \"concurrentExceptions\": []},"
        "    {\"exceptionName\": \"java.lang.RuntimeException\","
        "     \"stacktrace\": \"java.lang.RuntimeException: bang\","
        "     \"timestamp\": 10}]}}"
        " }}");
    const struct op_run *r = m->runs[0];
    const struct op_node *win = tm_node(r, WIN);
    const mseries *ct = model_find_series(r, "checkpoint_tasks");
    const mseries *ex = model_find_series(r, "exceptions");

    (void)state;
    assert_int_equal(r->nnodes, 2); /* the unknown vertex adds no node */
    assert_int_equal(tm_inum(&win->metrics, "checkpoint_state_size_bytes"), 280);
    assert_int_equal(
        tm_inum(&win->metrics, "checkpoint_checkpointed_size_bytes"), 28);
    assert_int_equal(tm_inum(&win->metrics, "checkpoint_id"), 7);
    assert_non_null(ct);
    assert_int_equal(ct->n, 2);
    assert_non_null(model_find_series(r, "checkpoints"));
    assert_non_null(ex);
    assert_int_equal(ex->n, 2);
    assert_int_equal(tm_inum(&ex->recs[0]->fields, "timestamp_ms"), 10);
    assert_string_equal(tm_str(&ex->recs[1]->fields, "exception"),
                        "java.io.IOException: boom");
    assert_string_equal(tm_str(&ex->recs[1]->fields, "location"), "tm-1:6121");
    assert_int_equal(tm_inum(&r->metrics, "exceptions"), 2);
    assert_int_equal(tm_inum(&r->metrics, "exceptions_truncated"), 1);
    model_free(m);
}

/* /checkpoints/details/<id>/subtasks/<vid>: the phases of every subtask,
 * old (state_size only) and new size fields, the newest poll winning, a
 * pending subtask with only its status, and a bad index named. */
static void test_checkpoint_subtasks(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"vertices\": [{\"id\": \"" WIN "\", \"name\": \"w\"}]},"
        "  \"/jobs/" JID "/checkpoints/details/9/subtasks/" WIN "\": {"
        "   \"id\": 9, \"status\": \"COMPLETED\", \"subtasks\": ["
        "    {\"index\": 0, \"status\": \"completed\", \"ack_timestamp\": 50,"
        "     \"end_to_end_duration\": 1000, \"state_size\": 77,"
        "     \"checkpoint\": {\"sync\": 1, \"async\": 2},"
        "     \"alignment\": {\"buffered\": 0, \"duration\": 3}, \"start_delay\": 4}]},"
        "  \"/jobs/" JID "/checkpoints/details/7/subtasks/" WIN "\": {"
        "   \"id\": 7, \"status\": \"COMPLETED\", \"subtasks\": ["
        "    {\"index\": 1, \"status\": \"completed\", \"end_to_end_duration\": 900,"
        "     \"state_size\": \"500\", \"checkpointed_size\": 50,"
        "     \"checkpoint\": {\"sync\": 10, \"async\": \"800\"},"
        "     \"alignment\": {\"buffered\": 0, \"processed\": 6, \"persisted\": 7,"
        "      \"duration\": 30}, \"start_delay\": 60,"
        "     \"unaligned_checkpoint\": false, \"aborted\": false},"
        "    {\"index\": 0, \"status\": \"pending_or_failed\"},"
        "    {\"index\": -3, \"status\": \"completed\"}]}},"
        " \"samples\": [{\"captured_at_ms\": 2, \"responses\": {"
        "  \"/jobs/" JID "/checkpoints/details/9/subtasks/" WIN "\": {"
        "   \"id\": 9, \"subtasks\": [{\"index\": 0, \"status\": \"completed\","
        "    \"checkpoint\": {\"sync\": 5, \"async\": 6}}]}}}]}");
    const struct op_run *r = m->runs[0];
    const mseries *s = model_find_series(r, "checkpoint_subtasks");

    (void)state;
    assert_non_null(s);
    assert_int_equal(s->n, 3); /* 7: two subtasks; 9: the newest poll's one */
    assert_int_equal(tm_inum(&s->recs[0]->fields, "checkpoint_id"), 7);
    assert_string_equal(tm_str(&s->recs[0]->fields, "vertex"), WIN);
    assert_int_equal(tm_inum(&s->recs[0]->fields, "subtask"), 1);
    assert_int_equal(tm_inum(&s->recs[0]->fields, "sync_ms"), 10);
    assert_int_equal(tm_inum(&s->recs[0]->fields, "async_ms"), 800);
    assert_int_equal(tm_inum(&s->recs[0]->fields, "alignment_ms"), 30);
    assert_int_equal(tm_inum(&s->recs[0]->fields, "start_delay_ms"), 60);
    assert_int_equal(tm_inum(&s->recs[0]->fields, "state_size_bytes"), 500);
    assert_int_equal(
        tm_inum(&s->recs[0]->fields, "checkpointed_size_bytes"), 50);
    assert_int_equal(
        tm_inum(&s->recs[0]->fields, "alignment_persisted_bytes"), 7);
    assert_int_equal(tm_inum(&s->recs[0]->fields, "end_to_end_duration_ms"),
                     900);
    assert_true(tm_has(&s->recs[0]->fields, "unaligned"));
    assert_string_equal(tm_str(&s->recs[1]->fields, "status"),
                        "pending_or_failed");
    assert_false(tm_has(&s->recs[1]->fields, "sync_ms"));
    assert_int_equal(tm_inum(&s->recs[2]->fields, "checkpoint_id"), 9);
    assert_int_equal(tm_inum(&s->recs[2]->fields, "sync_ms"), 5);
    assert_false(tm_has(&s->recs[2]->fields, "start_delay_ms"));
    assert_true(tm_has_warning(r, "subtasks/" WIN ": $.subtasks[2].index"));
    model_free(m);
}

static void test_lone_responses(void **state)
{
    model *m = parse_ok("{\"counts\": {\"completed\": 0}, \"latest\": {},"
                        " \"history\": []}");

    (void)state;
    assert_string_equal(m->runs[0]->id, "test");
    assert_true(tm_has_warning(m->runs[0], "without a job id"));
    model_free(m);
    m = parse_ok("{\"jobs\": [{\"jid\": \"" JID "\", \"name\": \"a\","
                 " \"state\": \"FINISHED\", \"start-time\": 5, "
                 "\"end-time\": 9, \"duration\": 4, "
                 "\"last-modification\": 9}]}");
    assert_string_equal(m->runs[0]->id, JID);
    assert_string_equal(m->runs[0]->status, "succeeded");
    assert_int_equal(m->runs[0]->ended_at, 9);
    model_free(m);
}

/* A HistoryServer archive: payloads are JSON texts; a broken one is
 * reported and skipped, the rest still builds the run. */
static void test_archive_payloads(void **state)
{
    model *m = parse_ok(
        "{\"archive\": ["
        " {\"path\": \"/jobs/" JID "\", \"json\": \"{\\\"jid\\\": \\\"" JID
        "\\\", \\\"name\\\": \\\"arch\\\", \\\"state\\\": \\\"FINISHED\\\","
        " \\\"vertices\\\": []}\"},"
        " {\"path\": \"/jobs/" JID "/checkpoints\", \"json\": \"{not json\"},"
        " {\"path\": 7}]}");
    const struct op_run *r = m->runs[0];

    (void)state;
    assert_string_equal(r->id, JID);
    assert_string_equal(r->name, "arch");
    assert_string_equal(r->status, "succeeded");
    assert_true(tm_has_warning(r, "$.archive[1]"));
    assert_true(tm_has_warning(r, "$.archive[2]"));
    model_free(m);
}

/* Lookups keep the precedence a scan of the polls had: the first plan
 * node of an id, the last vertices[] entry of an id for rates, the first
 * non-error response of a path in the newest poll that has one, and the
 * metrics of the newest poll only, in the poll's order across the three
 * metrics endpoints. */
static void test_lookup_precedence(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"captured_at_ms\": 1000,"
        " \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"now\": 1000, \"vertices\": ["
        "    {\"id\": \"" SRC "\", \"name\": \"s1\", \"duration\": 1000,"
        "     \"metrics\": {\"read-records\": 100}},"
        "    {\"id\": \"" SRC "\", \"name\": \"s2\", \"duration\": 1000,"
        "     \"metrics\": {\"read-records\": 200}},"
        "    {\"id\": \"" WIN "\", \"name\": \"w\", \"duration\": 1000}]},"
        "  \"/jobs/" JID "/plan\": {\"plan\": {\"nodes\": ["
        "    {\"id\": \"" SRC "\", \"description\": \"first plan\"},"
        "    {\"id\": \"" WIN "\", \"description\": \"w\","
        "     \"inputs\": [{\"id\": \"" SRC "\"}]},"
        "    {\"id\": \"" SRC "\", \"description\": \"second plan\"}]}},"
        "  \"/jobs/" JID "/vertices/" SRC "/backpressure\": {\"errors\":"
        "   [\"not yet\"]},"
        "  \"/jobs/" JID "/vertices/" SRC "/backpressure\": {\"status\": \"ok\","
        "   \"subtasks\": [{\"subtask\": 0, \"busyRatio\": 0.25, \"ratio\": 0,"
        "    \"idleRatio\": 0.75}]},"
        "  \"/jobs/" JID "/vertices/" SRC "/backpressure\": {\"status\": \"ok\","
        "   \"subtasks\": [{\"subtask\": 0, \"busyRatio\": 0.5}]},"
        "  \"/jobs/" JID "/vertices/" WIN "/metrics?get=old\": ["
        "   {\"id\": \"0.busyTimeMsPerSecond\", \"value\": \"900\"}]},"
        " \"samples\": [{\"captured_at_ms\": 11000, \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"now\": 11000, \"vertices\": ["
        "    {\"id\": \"" SRC "\", \"name\": \"s1\", \"duration\": 11000,"
        "     \"metrics\": {\"read-records\": 1100}},"
        "    {\"id\": \"" SRC "\", \"name\": \"s2\", \"duration\": 11000,"
        "     \"metrics\": {\"read-records\": 2200}},"
        "    {\"id\": \"" WIN "\", \"name\": \"w\", \"duration\": 11000}]},"
        "  \"/jobs/" JID "/vertices/" WIN "/metrics?get=a\": ["
        "   {\"id\": \"0.busyTimeMsPerSecond\", \"value\": \"100\"}],"
        "  \"/jobs/" JID "/vertices/" WIN "/subtasks/metrics?get=e\": "
        "   {\"errors\": [\"no\"]},"
        "  \"/jobs/" JID "/vertices/" WIN "/metrics?get=c\": ["
        "   {\"id\": \"0.busyTimeMsPerSecond\", \"value\": \"500\"},"
        "   {\"id\": \"1.busyTimeMsPerSecond\", \"value\": \"300\"}],"
        "  \"/jobs/" JID "/vertices/" WIN "/subtasks/0/metrics?get=d\": ["
        "   {\"id\": \"busyTimeMsPerSecond\", \"value\": \"700\"}]}}]}");
    const struct op_run *r = m->runs[0];
    const struct op_node *src = tm_node(r, SRC), *win = tm_node(r, WIN);

    (void)state;
    /* a duplicated vertex id or plan node keeps its last entry, a
     * duplicated REST path its last response, each with a warning */
    assert_string_equal(tm_str(&src->attrs, "description"), "second plan");
    assert_int_equal((int)src->nparents, 0);
    assert_int_equal((int)win->nparents, 1);
    assert_true(tm_has_warning(r, "$.responses[\"/jobs/" JID
                                  "/plan\"].plan.nodes[0]: duplicated id"));
    assert_true(tm_has_warning(r, "$.responses[\"/jobs/" JID
                                  "\"].vertices[0]: duplicated id"));
    assert_true(tm_has_warning(r, "$.samples[0].responses[\"/jobs/" JID
                                  "\"].vertices[0]: duplicated id"));
    assert_true(tm_has_warning(r, "$.responses[\"/jobs/" JID "/vertices/" SRC
                                  "/backpressure\"]: duplicated key"));
    /* (2200 - 200) records in 10 s: the last entry of the id */
    assert_true(fabs(tm_num(&src->metrics, "records_in_per_s") - 200) < 1e-9);
    assert_true(fabs(tm_num(&src->metrics, "busy_ratio") - 0.5) < 1e-12);
    /* poll 1 only; subtask 0: 100, then 500, then 700 (poll order) */
    assert_int_equal((int)tm_dist(win, "busy_ratio")->count, 2);
    assert_true(fabs(tm_num(&win->metrics, "busy_ratio_max") - 0.7) < 1e-12);
    assert_true(fabs(tm_num(&win->metrics, "busy_ratio") - 0.5) < 1e-12);
    model_free(m);
}

/* A growing text buffer for generated exports. */
typedef struct tbuf {
    char *s;
    size_t n, cap;
} tbuf;

static void tb_add(tbuf *b, const char *fmt, ...)
{
    va_list ap;
    int k;

    if (!b->s) { /* vsnprintf on NULL + 0 is undefined */
        b->cap = 4096;
        b->s = malloc(b->cap);
        assert_non_null(b->s);
    }
    for (;;) {
        va_start(ap, fmt);
        k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        assert_true(k >= 0);
        if ((size_t)k < b->cap - b->n)
            break;
        b->cap = b->cap * 2 + (size_t)k + 1;
        b->s = realloc(b->s, b->cap);
        assert_non_null(b->s);
    }
    b->n += (size_t)k;
}

static const struct op_run *find_run(const model *m, const char *id)
{
    size_t i;

    for (i = 0; i < m->nruns; i++)
        if (!strcmp(m->runs[i]->id, id))
            return m->runs[i];
    return NULL;
}

#define BIG_VERTICES 3000
#define BIG_JOBS 60
#define BIG_KEYS 2000

static void big_job(tbuf *b)
{
    int i;

    tb_add(b, "\"/jobs/" JID "\": {\"jid\": \"" JID "\", \"name\": \"big\","
              " \"state\": \"RUNNING\", \"vertices\": [");
    for (i = 0; i < BIG_VERTICES; i++)
        tb_add(b, "%s{\"id\": \"%032x\", \"name\": \"v%d\"}", i ? "," : "",
               i + 1, i);
    tb_add(b, "], \"plan\": {\"nodes\": [");
    for (i = 0; i < BIG_VERTICES; i++) {
        tb_add(b, "%s{\"id\": \"%032x\"", i ? "," : "", i + 1);
        if (i)
            tb_add(b, ", \"inputs\": [{\"id\": \"%032x\"}]", i);
        tb_add(b, "}");
    }
    tb_add(b, "]}},");
    for (i = 0; i < BIG_VERTICES; i++)
        tb_add(b,
               "\"/jobs/" JID "/vertices/%032x/backpressure\": {\"status\":"
               " \"ok\", \"subtasks\": [{\"subtask\": 0, \"busyRatio\": 0.%04d5,"
               " \"ratio\": 0, \"idleRatio\": 0}]},",
               i + 1, i);
}

/* Many vertices, jobs and config keys: every lookup still finds its own
 * entry (the parse is indexed; no timing is asserted). */
static void test_many_vertices_jobs_keys(void **state)
{
    tbuf b = {NULL, 0, 0};
    const struct op_run *r;
    model *m;
    size_t i;
    char id[40];

    (void)state;
    tb_add(&b, "{\"flink_rest_export\": 1, \"responses\": {");
    big_job(&b);
    tb_add(&b, "\"/jobs/overview\": {\"jobs\": [");
    for (i = 0; i < BIG_JOBS; i++)
        tb_add(&b, "{\"jid\": \"%032zx\", \"name\": \"ov%zu\", \"state\":"
                   " \"FINISHED\"},",
               i + 1, i);
    tb_add(&b, "{\"jid\": \"%032x\", \"name\": \"duplicate\"}]},", 1);
    tb_add(&b, "\"/jobmanager/config\": [");
    for (i = 0; i < BIG_KEYS; i++)
        tb_add(&b, "{\"key\": \"k.%zu\", \"value\": \"%zu\"},", i, i);
    tb_add(&b, "{\"key\": \"k.7\", \"value\": \"again\"},"
               "{\"key\": \"execution.checkpointing.interval\","
               " \"value\": \"1 min\"},"
               "{\"key\": \"state.backend\", \"value\": \"hashmap\"},"
               "{\"key\": \"state.backend.type\", \"value\": \"rocksdb\"},"
               "{\"key\": \"k.last\", \"value\": \"end\"}],");
    tb_add(&b, "\"/jobs/" JID "/checkpoints/config\": {\"interval\": "
               "9223372036854775807}}}");
    m = parse_ok(b.s);
    free(b.s);
    assert_int_equal((int)m->nruns, BIG_JOBS + 1);
    r = find_run(m, JID);
    assert_non_null(r);
    assert_int_equal((int)r->nnodes, BIG_VERTICES);
    for (i = 0; i < BIG_VERTICES; i++) {
        const struct op_node *n;
        snprintf(id, sizeof id, "%032zx", i + 1);
        n = tm_node(r, id);
        /* busyRatio 0.<i>5 (a ratio is at most 1) tells the vertices apart */
        assert_true(fabs(tm_num(&n->metrics, "busy_ratio") -
                         ((double)i * 10 + 5) / 1e5) < 1e-12);
        assert_int_equal((int)n->nparents, i ? 1 : 0);
    }
    /* k.7 set twice, the interval removed (checkpointing off), the last key
     * moved into its place still found, the new backend key wins */
    assert_string_equal(tm_str(&r->config, "k.7"), "again");
    assert_string_equal(tm_str(&r->config, "k.1999"), "1999");
    assert_string_equal(tm_str(&r->config, "k.last"), "end");
    assert_false(tm_has(&r->config, "execution.checkpointing.interval"));
    assert_string_equal(tm_str(&r->config, "state.backend.type"), "rocksdb");
    assert_int_equal((int)r->config.n, BIG_KEYS + 2);
    for (i = 1; i < BIG_JOBS; i++) {
        snprintf(id, sizeof id, "%032zx", i + 1);
        r = find_run(m, id);
        assert_non_null(r);
        snprintf(id, sizeof id, "ov%zu", i);
        assert_string_equal(r->name, id);
        assert_string_equal(r->status, "succeeded");
    }
    model_free(m);
}

/* Numbers beyond a Java long or a double are absent, each with a warning
 * naming its JSON path (they were clamped to INT64_MAX / inf before). */
static void test_out_of_range_numbers(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"start-time\": 1e400, \"vertices\": ["
        "    {\"id\": \"" SRC "\", \"name\": \"s\", \"parallelism\": 1.8e308,"
        "     \"maxParallelism\": 18446744073709551617, \"duration\": 5,"
        "     \"end-time\": 9223372036854775807}]},"
        "  \"/jobs/" JID "/vertices/" SRC "/metrics?get=x\": ["
        "   {\"id\": \"0.busyTimeMsPerSecond\", \"value\": \"1e400\"}]}}");
    const struct op_run *r = m->runs[0];
    const struct op_node *src = tm_node(r, SRC);

    (void)state;
    assert_false(src->set & MSET_PARALLELISM);
    assert_false(src->set & MSET_MAX_PARALLELISM);
    assert_int_equal(src->duration_ms, 5);
    assert_false(r->set & MSET_STARTED_AT);
    assert_true(tm_has_warning(r, "$.responses[\"/jobs/" JID
                                  "\"].vertices[0].parallelism: number out of"
                                  " range, read as absent"));
    assert_true(tm_has_warning(r, "].vertices[0].maxParallelism: number out "
                                  "of range, read as absent (1.84e+19"));
    assert_true(tm_has_warning(r, "\"].start-time: number out of range"));
    assert_true(tm_has_warning(r, "/metrics?get=x\"][0].value: numeric string"
                                  " out of range"));
    /* Long.MAX_VALUE stays the "unset" sentinel, without a warning */
    assert_false(tm_has_warning(r, "end-time"));
    assert_false(tm_has(&src->metrics, "busy_ratio"));
    model_free(m);
}

/* Values within a double but impossible for Flink (parallelism above its
 * 1 << 15 bound, a negative duration other than -1, a busy time above
 * 1000 ms/s, a backpressure ratio above 1) and values null or of the
 * wrong type where a number is read: absent, each a warning naming its
 * JSON path; Flink's -1 ("not set") stays silent. */
static void test_impossible_values(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"duration\": -5, \"maxParallelism\": -1, \"vertices\": ["
        "    {\"id\": \"" SRC "\", \"name\": \"s\", \"parallelism\": 1e12,"
        "     \"maxParallelism\": 32769, \"duration\": -1},"
        "    {\"id\": \"" WIN "\", \"name\": \"w\", \"parallelism\": null,"
        "     \"maxParallelism\": \"many\", \"duration\": -7}]},"
        "  \"/jobs/" JID "/vertices/" SRC "/metrics?get=x\": ["
        "   {\"id\": \"0.busyTimeMsPerSecond\", \"value\": \"5000\"}],"
        "  \"/jobs/" JID "/vertices/" WIN "/backpressure\": {"
        "   \"status\": \"ok\", \"subtasks\": ["
        "    {\"subtask\": 0, \"ratio\": 7, \"busyRatio\": 0.5},"
        "    {\"subtask\": 40000, \"ratio\": 0.1}]}}}");
    const struct op_run *r = m->runs[0];
    const struct op_node *src = tm_node(r, SRC), *win = tm_node(r, WIN);

    (void)state;
    assert_false(src->set & MSET_PARALLELISM);
    assert_false(src->set & MSET_MAX_PARALLELISM);
    assert_false(win->set & MSET_PARALLELISM);
    assert_false(r->set & MSET_DURATION_MS);
    assert_true(tm_has_warning(r, "$.responses[\"/jobs/" JID
                                  "\"].vertices[0].parallelism: 1000000000000"
                                  " is outside 1..32768: ignored"));
    assert_true(tm_has_warning(r, "].vertices[0].maxParallelism: 32769 is "
                                  "outside 1..32768 (or -1, not set)"));
    assert_true(tm_has_warning(r, "\"].duration: -5 is below -1: ignored"));
    assert_true(tm_has_warning(r, "].vertices[1].duration: -7 is below -1"));
    assert_true(tm_has_warning(r, "].vertices[1].parallelism: null where a "
                                  "number is expected: ignored"));
    assert_true(tm_has_warning(r, "].vertices[1].maxParallelism: a string "
                                  "that is no number where a number is "
                                  "expected"));
    assert_true(tm_has_warning(r, "/metrics?get=x\"][0].value: 5000 is "
                                  "outside 0..1000"));
    assert_true(tm_has_warning(r, "/backpressure\"].subtasks[0].ratio: 7 is "
                                  "outside 0..1"));
    assert_true(tm_has_warning(r, "].subtasks[1].subtask: 40000 is outside "
                                  "0..32767"));
    /* -1 is Flink's "not set": no warning */
    assert_false(tm_has_warning(r, "vertices[0].duration"));
    assert_false(tm_has_warning(r, "\"].maxParallelism"));
    assert_false(tm_has(&src->metrics, "busy_ratio"));
    model_free(m);
}

/* An export of nulls: at most FL_BAD_NAMED (10) values named, then one
 * count (20 vertices with 2 nulls each). */
static void test_null_values_counted(void **state)
{
    char doc[8192];
    size_t used = 0, i, named = 0, counted = 0;
    model *m;
    const struct op_run *r;

    (void)state;
    used += (size_t)snprintf(doc, sizeof doc,
                             "{\"flink_rest_export\": 1, \"responses\": {"
                             "\"/jobs/" JID "\": {\"jid\": \"" JID "\","
                             "\"state\": \"RUNNING\", \"vertices\": [");
    for (i = 0; i < 20; i++)
        used += (size_t)snprintf(doc + used, sizeof doc - used,
                                 "%s{\"id\": \"v%02zu\", \"parallelism\": "
                                 "null, \"duration\": null}",
                                 i ? "," : "", i);
    snprintf(doc + used, sizeof doc - used, "]}}}");
    m = parse_ok(doc);
    r = m->runs[0];
    for (i = 0; i < r->nwarnings; i++) {
        named += strstr(r->warnings[i], "null where a number is expected") != NULL;
        counted += strstr(r->warnings[i], "30 more values null, of the wrong "
                                          "type or impossible (an export "
                                          "names the first 10)") != NULL;
    }
    assert_int_equal(named, 10);
    assert_int_equal(counted, 1);
    model_free(m);
}

/* The 10 named values are the export's, not each job's: a path costs a
 * search of the document, and an export may hold thousands of jobs. */
static void test_null_values_export_budget(void **state)
{
    char doc[8192];
    size_t used, i, j, named = 0, counted = 0;
    model *m;

    (void)state;
    used = (size_t)snprintf(doc, sizeof doc,
                            "{\"flink_rest_export\": 1, \"responses\": {");
    for (j = 0; j < 3; j++) {
        used += (size_t)snprintf(doc + used, sizeof doc - used,
                                 "%s\"/jobs/%032zx\": {\"jid\": \"%032zx\","
                                 "\"state\": \"RUNNING\", \"vertices\": [",
                                 j ? "," : "", j + 1, j + 1);
        for (i = 0; i < 6; i++)
            used += (size_t)snprintf(doc + used, sizeof doc - used,
                                     "%s{\"id\": \"v%zu\", \"parallelism\": "
                                     "null}", i ? "," : "", i);
        used += (size_t)snprintf(doc + used, sizeof doc - used, "]}");
    }
    snprintf(doc + used, sizeof doc - used, "}}");
    m = parse_ok(doc);
    assert_int_equal((int)m->nruns, 3);
    for (j = 0; j < m->nruns; j++)
        for (i = 0; i < m->runs[j]->nwarnings; i++) {
            const char *w = m->runs[j]->warnings[i];
            named += strstr(w, "null where a number is expected") != NULL;
            counted += strstr(w, "more values null") != NULL;
        }
    assert_int_equal(named, 10);
    assert_int_equal(counted, 2); /* 2 + 6 values counted in two jobs */
    model_free(m);
}

/* A whole response that is null is absent, with a warning naming it. */
static void test_null_response(void **state)
{
    model *m = parse_ok("{\"flink_rest_export\": 1, \"responses\": {"
                        "\"/jobs/" JID "\": null, \"/config\": null}}");
    const struct op_run *r = m->runs[0];

    (void)state;
    assert_true(tm_has_warning(r, "$.responses[\"/jobs/" JID "\"]: null "
                                  "where a response is expected: ignored"));
    assert_true(tm_has_warning(r, "$.responses[\"/config\"]: null where"));
    assert_true(tm_has_warning(r, "no /jobs/<jid> response"));
    assert_true(tm_has_warning(r, "no /config: Flink version unknown"));
    model_free(m);
}

/* A document whose cJSON tree would be far larger than the document
 * ([0,0,...] costs 40 times its size) is refused before it is parsed. */
static void test_tree_bound(void **state)
{
    size_t n = (16u << 20) / 2 + 1000, i;
    const char head[] = "{\"flink_rest_export\": 1, \"responses\": {\"/jobs/"
                        JID "/x\": [0";
    char *doc = malloc(sizeof head + 2 * n + 4), *p;
    op_error err = {0, ""};
    model *m = NULL;

    (void)state;
    assert_non_null(doc);
    memcpy(doc, head, sizeof head - 1);
    p = doc + sizeof head - 1;
    for (i = 0; i < n; i++, p += 2)
        memcpy(p, ",0", 2);
    memcpy(p, "]}}", 4);
    assert_int_equal(parse_text(doc, &m, &err), OP_ELIMIT);
    assert_non_null(strstr(err.msg, "test.json: its JSON tree would take"));
    assert_non_null(strstr(err.msg, "40 times"));
    model_free(m);
    free(doc);
}

/* More than 10000 vertices: the first 10000 are read, with a warning. */
static void test_vertex_cap(void **state)
{
    tbuf b = {NULL, 0, 0};
    const struct op_run *r;
    model *m;
    size_t i;

    (void)state;
    tb_add(&b, "{\"flink_rest_export\": 1, \"responses\": {\"/jobs/" JID
               "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\", "
               "\"vertices\": [");
    for (i = 0; i < 10005; i++)
        tb_add(&b, "%s{\"id\": \"%032zx\", \"name\": \"v\"}", i ? "," : "",
               i + 1);
    tb_add(&b, "]}}}");
    m = parse_ok(b.s);
    free(b.s);
    r = find_run(m, JID);
    assert_int_equal((int)r->nnodes, 10000);
    assert_true(tm_has_warning(r, "\"].vertices: 10005 entries, more than "
                                  "10000 vertices: the last 5 ignored"));
    model_free(m);
    /* subtasks of /vertices/<vid> beyond Flink's 32768 */
    b.s = NULL;
    b.n = b.cap = 0;
    tb_add(&b, "{\"flink_rest_export\": 1, \"responses\": {\"/jobs/" JID
               "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\", "
               "\"vertices\": [{\"id\": \"" SRC "\"}]}, \"/jobs/" JID
               "/vertices/" SRC "\": {\"id\": \"" SRC "\", \"subtasks\": [");
    for (i = 0; i < 32770; i++)
        tb_add(&b, "%s{\"subtask\": %zu}", i ? "," : "", i);
    tb_add(&b, "]}}}");
    m = parse_ok(b.s);
    free(b.s);
    assert_true(tm_has_warning(find_run(m, JID),
                               "/vertices/" SRC "\"].subtasks: 32770 entries, "
                               "more than 32768 subtasks: the last 2 ignored"));
    model_free(m);
}

static void test_detect_lone_endpoints(void **state)
{
    (void)state;
    assert_int_equal(detect("{\"counts\": {}, \"summary\": {}, \"latest\": {}}",
                            "x"),
                     60);
    assert_int_equal(detect("{\"status\": \"ok\", \"backpressure-level\": \"ok\"}",
                            "x"),
                     60);
    assert_int_equal(detect("[{\"id\": \"0.currentInputWatermark\", "
                            "\"value\": \"1\"}]",
                            "x"),
                     50);
    assert_int_equal(detect("[{\"key\": \"a\", \"value\": \"b\"}]", "x"), 0);
}

/* --- issue #18: derived ratios, plans, counter rates -------------------- */

/* A /jobs/<jid> poll at time t with vertex SRC at parallelism p and the
 * given accumulated busy / backpressured / idle ms (summed over subtasks). */
#define ACC_JOB(t, p, busy, bp, idle)                                        \
    "{\"jid\": \"" JID "\", \"state\": \"RUNNING\", \"now\": " t ","        \
    " \"vertices\": [{\"id\": \"" SRC "\", \"name\": \"Source: k\","         \
    "  \"parallelism\": " p ", \"metrics\": {\"accumulated-busy-time\": "    \
    busy ", \"accumulated-backpressured-time\": " bp ","                    \
    "  \"accumulated-idle-time\": " idle "}}]}"

/* Busy ratio = Δaccumulated-busy-time / Δwall time / parallelism over
 * consecutive /jobs polls; a counter reset (restart) and a parallelism
 * change break the pair instead of giving a wrong ratio. */
static void test_accumulated_ratios(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"captured_at_ms\": 1000000,"
        " \"responses\": {\"/jobs/" JID "\": "
        ACC_JOB("1000000", "2", "1000", "0", "19000") "},"
        " \"samples\": ["
        "  {\"captured_at_ms\": 1010000, \"responses\": {\"/jobs/" JID "\": "
        ACC_JOB("1010000", "2", "13000", "2000", "25000") "}},"
        "  {\"captured_at_ms\": 1020000, \"responses\": {\"/jobs/" JID "\": "
        ACC_JOB("1020000", "2", "500", "0", "100") "}},"
        "  {\"captured_at_ms\": 1030000, \"responses\": {\"/jobs/" JID "\": "
        ACC_JOB("1030000", "3", "9000", "0", "100") "}}]}");
    const struct op_node *src = tm_node(m->runs[0], SRC);

    (void)state;
    /* only the first pair counts: 12000 ms / 2 subtasks / 10 s */
    assert_true(fabs(tm_num(&src->metrics, "busy_ratio") - 0.6) < 1e-12);
    assert_true(fabs(tm_num(&src->metrics, "backpressure_ratio") - 0.1) <
                1e-12);
    assert_true(fabs(tm_num(&src->metrics, "idle_ratio") - 0.3) < 1e-12);
    assert_false(tm_has(&src->metrics, "busy_ratio_max"));
    assert_int_equal(tm_inum(&src->metrics, "ratio_window_ms"), 10000);
    assert_string_equal(tm_str(&src->attrs, "ratio_source"), "accumulated");
    assert_false(tm_has_warning(m->runs[0], "no /backpressure"));
    model_free(m);

    /* hostile counters: NaN, negative, overflowing differences, a zero
     * parallelism and time going backwards give no ratio, not inf */
    m = parse_ok(
        "{\"flink_rest_export\": 1, \"captured_at_ms\": 1000000,"
        " \"responses\": {\"/jobs/" JID "\": "
        ACC_JOB("1000000", "2", "\"NaN\"", "-5", "-1.7e308") "},"
        " \"samples\": ["
        "  {\"captured_at_ms\": 1010000, \"responses\": {\"/jobs/" JID "\": "
        ACC_JOB("1010000", "2", "1", "7", "1.7e308") "}},"
        "  {\"captured_at_ms\": 1020000, \"responses\": {\"/jobs/" JID "\": "
        ACC_JOB("1020000", "0", "5", "9", "1") "}},"
        "  {\"captured_at_ms\": 990000, \"responses\": {\"/jobs/" JID "\": "
        ACC_JOB("990000", "2", "9", "99", "1") "}}]}");
    src = tm_node(m->runs[0], SRC);
    assert_false(tm_has(&src->metrics, "busy_ratio"));
    assert_false(tm_has(&src->metrics, "backpressure_ratio"));
    assert_false(tm_has(&src->metrics, "idle_ratio"));
    assert_true(tm_has_warning(m->runs[0], "no /backpressure"));
    model_free(m);

    /* /backpressure, when exported, still wins */
    m = parse_ok(
        "{\"flink_rest_export\": 1, \"captured_at_ms\": 1000000,"
        " \"responses\": {\"/jobs/" JID "\": "
        ACC_JOB("1000000", "2", "1000", "0", "19000") ","
        "  \"/jobs/" JID "/vertices/" SRC "/backpressure\": {\"status\": \"ok\","
        "   \"subtasks\": [{\"subtask\": 0, \"busyRatio\": 0.2}]}},"
        " \"samples\": ["
        "  {\"captured_at_ms\": 1010000, \"responses\": {\"/jobs/" JID "\": "
        ACC_JOB("1010000", "2", "13000", "2000", "25000") "}}]}");
    src = tm_node(m->runs[0], SRC);
    assert_true(fabs(tm_num(&src->metrics, "busy_ratio") - 0.2) < 1e-12);
    assert_string_equal(tm_str(&src->attrs, "ratio_source"), "backpressure");
    model_free(m);
}

/* An empty plan in /jobs/<jid> (a job still deploying) loses to a full
 * /jobs/<jid>/plan; with no plan at all a running job gets a warning. */
static void test_plan_fallback(void **state)
{
    static const char *job =
        "\"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        " \"plan\": {\"jid\": \"" JID "\", \"nodes\": []},"
        " \"vertices\": [{\"id\": \"" SRC "\", \"name\": \"s\"},"
        "  {\"id\": \"" WIN "\", \"name\": \"w\"}]}";
    char buf[2048];
    model *m;

    (void)state;
    snprintf(buf, sizeof buf,
             "{\"flink_rest_export\": 1, \"responses\": {%s,"
             " \"/jobs/" JID "/plan\": {\"plan\": {\"nodes\": ["
             "  {\"id\": \"" SRC "\"}, {\"id\": \"" WIN "\", \"inputs\": "
             "  [{\"num\": 0, \"id\": \"" SRC "\", \"ship_strategy\": \"HASH\"}]}]}}}}",
             job);
    m = parse_ok(buf);
    assert_int_equal((int)tm_node(m->runs[0], WIN)->nparents, 1);
    assert_string_equal(tm_str(&tm_node(m->runs[0], WIN)->attrs,
                               "ship_strategy"), "HASH");
    assert_false(tm_has_warning(m->runs[0], "no edges"));
    model_free(m);

    snprintf(buf, sizeof buf, "{\"flink_rest_export\": 1, \"responses\": {%s}}",
             job);
    m = parse_ok(buf);
    assert_int_equal((int)tm_node(m->runs[0], WIN)->nparents, 0);
    assert_true(tm_has_warning(m->runs[0], "$.plan.nodes: no edges between "
                                           "the 2 vertices of a running job"));
    model_free(m);
}

/* Late records and pending records as rates between the oldest and the
 * newest poll with metrics; one poll: late records over the running time. */
static void test_counter_rates(void **state)
{
    model *m = parse_ok(
        "{\"flink_rest_export\": 1, \"captured_at_ms\": 1000000,"
        " \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"vertices\": [{\"id\": \"" SRC "\", \"name\": \"Source: k\","
        "    \"duration\": 100000}, {\"id\": \"" WIN "\", \"name\": \"w\","
        "    \"duration\": 100000}]},"
        "  \"/jobs/" JID "/vertices/" WIN "/subtasks/metrics?get=a\": ["
        "   {\"id\": \"W.numLateRecordsDropped\", \"min\": 1, \"max\": 9,"
        "    \"avg\": 5, \"sum\": 10}],"
        "  \"/jobs/" JID "/vertices/" SRC "/metrics?get=b\": ["
        "   {\"id\": \"0.Source__k.pendingRecords\", \"value\": \"1000\"},"
        "   {\"id\": \"1.Source__k.pendingRecords\", \"value\": \"1000\"}]},"
        " \"samples\": [{\"captured_at_ms\": 1010000, \"responses\": {"
        "  \"/jobs/" JID "/vertices/" WIN "/subtasks/metrics?get=a\": ["
        "   {\"id\": \"W.numLateRecordsDropped\", \"min\": 1, \"max\": 100,"
        "    \"avg\": 55, \"sum\": 110}],"
        "  \"/jobs/" JID "/vertices/" SRC "/metrics?get=b\": ["
        "   {\"id\": \"0.Source__k.pendingRecords\", \"value\": \"1500\"},"
        "   {\"id\": \"1.Source__k.pendingRecords\", \"value\": \"2500\"},"
        "   {\"id\": \"0.Source__k.KafkaSourceReader.KafkaConsumer."
        "records-lag-max\", \"value\": \"700\"},"
        "   {\"id\": \"1.Source__k.currentEmitEventTimeLag\","
        "    \"value\": \"60000\"}]}}]}");
    const struct op_node *src = tm_node(m->runs[0], SRC);
    const struct op_node *win = tm_node(m->runs[0], WIN);

    (void)state;
    assert_true(fabs(tm_num(&win->metrics, "late_records_dropped") - 110) < 1e-9);
    assert_true(fabs(tm_num(&win->metrics, "late_records_dropped_per_s") - 10) <
                1e-9);
    assert_string_equal(tm_str(&win->attrs, "late_rate_source"), "samples");
    assert_true(fabs(tm_num(&src->metrics, "pending_records") - 4000) < 1e-9);
    assert_true(
        fabs(tm_num(&src->metrics, "pending_records_change_per_s") - 200) < 1e-9);
    assert_true(fabs(tm_num(&src->metrics, "consumer_lag_max") - 700) < 1e-9);
    assert_true(
        fabs(tm_num(&src->metrics, "emit_event_time_lag_max_ms") - 60000) < 1e-9);
    model_free(m);

    /* one poll: 10 late records over 100 s of running */
    m = parse_ok(
        "{\"flink_rest_export\": 1, \"captured_at_ms\": 1000000,"
        " \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"vertices\": [{\"id\": \"" WIN "\", \"name\": \"w\","
        "    \"duration\": 100000}]},"
        "  \"/jobs/" JID "/vertices/" WIN "/subtasks/metrics?get=a\": ["
        "   {\"id\": \"W.numLateRecordsDropped\", \"min\": 1, \"max\": 9,"
        "    \"avg\": 5, \"sum\": 10}]}}");
    win = tm_node(m->runs[0], WIN);
    assert_true(fabs(tm_num(&win->metrics, "late_records_dropped_per_s") - 0.1) <
                1e-12);
    assert_string_equal(tm_str(&win->attrs, "late_rate_source"), "lifetime");
    model_free(m);
}

/* --- source partitions from Kafka offset metric names ------------------ */

#define OFFSET(sub, topic, part) \
    #sub ".Source__k.KafkaSourceReader.topic." topic ".partition." #part \
    ".currentOffset"

static void test_partition_names(void **state)
{
    const char *t = NULL;
    size_t tl = 0;
    int32_t part = -1;

    (void)state;
    assert_int_equal(fl_partition_name(OFFSET(0, "orders", 7), &t, &tl, &part),
                     1);
    assert_int_equal(part, 7);
    assert_int_equal(tl, 6);
    assert_memory_equal(t, "orders", 6);
    /* a topic with dots and ".partition." in it: the last one splits */
    assert_int_equal(fl_partition_name("Src.KafkaSourceReader.topic.a.partition"
                                       ".1.partition.2147483647.committedOffset",
                                       &t, &tl, &part),
                     1);
    assert_int_equal(part, 2147483647);
    assert_int_equal(tl, strlen("a.partition.1"));
    /* not offset metrics of a Kafka source reader */
    assert_int_equal(fl_partition_name("0.Source__k.pendingRecords", &t, &tl,
                                       &part),
                     0);
    assert_int_equal(fl_partition_name("0.X.KafkaSourceReader.topic.t."
                                       "partition.3.commitsSucceeded",
                                       &t, &tl, &part),
                     0);
    assert_int_equal(fl_partition_name("X.KafkaSourceReader.topic.t."
                                       "currentOffset", &t, &tl, &part),
                     0);
    /* offset metrics whose partition or topic cannot be */
    assert_int_equal(fl_partition_name(OFFSET(0, "t", 2147483648), &t, &tl,
                                       &part),
                     -1);
    assert_int_equal(fl_partition_name(OFFSET(0, "t", 99999999999999999999999),
                                       &t, &tl, &part),
                     -1);
    assert_int_equal(fl_partition_name(OFFSET(0, "t", -1), &t, &tl, &part), -1);
    assert_int_equal(fl_partition_name("X.KafkaSourceReader.topic.t.partition."
                                       ".currentOffset", &t, &tl, &part),
                     -1);
    assert_int_equal(fl_partition_name("X.KafkaSourceReader.topic..partition.1"
                                       ".currentOffset", &t, &tl, &part),
                     -1);
}

/* An export whose source lists names (a JSON array of {"id","value"}) in
 * poll 0 and more in a sample. */
static char *partition_export(const char *names0, const char *names1)
{
    const char *fmt =
        "{\"flink_rest_export\": 1, \"captured_at_ms\": 1000000,"
        " \"responses\": {"
        "  \"/jobs/" JID "\": {\"jid\": \"" JID "\", \"state\": \"RUNNING\","
        "   \"vertices\": [{\"id\": \"" SRC "\", \"name\": \"Source: k\","
        "    \"parallelism\": 2}, {\"id\": \"" WIN "\", \"name\": \"w\"}]},"
        "  \"/jobs/" JID "/vertices/" SRC "/metrics?get=a\": [%s]},"
        " \"samples\": [{\"captured_at_ms\": 1010000, \"responses\": {"
        "  \"/jobs/" JID "/vertices/" SRC "/subtasks/metrics?get=b\": [%s]}}]}";
    size_t n = strlen(fmt) + strlen(names0) + strlen(names1) + 1;
    char *out = malloc(n);

    assert_non_null(out);
    snprintf(out, n, fmt, names0, names1);
    return out;
}

static void test_source_partitions(void **state)
{
    char *doc = partition_export(
        "{\"id\": \"" OFFSET(0, "orders", 0) "\", \"value\": \"5\"},"
        "{\"id\": \"" OFFSET(1, "orders", 1) "\", \"value\": \"5\"},"
        "{\"id\": \"" OFFSET(0, "orders", 2) "\", \"value\": \"5\"},"
        "{\"id\": \"" OFFSET(1, "payments", 0) "\", \"value\": \"5\"},"
        "{\"id\": \"" OFFSET(0, "orders", 99999999999) "\", \"value\": 1},"
        "{\"id\": \"0.Source__k.pendingRecords\", \"value\": \"5\"}",
        /* the sample: the same pairs again (aggregated names), and one more */
        "{\"id\": \"Source__k.KafkaSourceReader.topic.orders.partition.1."
        "committedOffset\", \"min\": 1, \"max\": 1},"
        "{\"id\": \"Source__k.KafkaSourceReader.topic.orders.partition.3."
        "currentOffset\", \"min\": 1, \"max\": 1}");
    model *m = parse_ok(doc);
    const struct op_run *r = m->runs[0];
    const struct op_node *src = tm_node(r, SRC), *win = tm_node(r, WIN);

    (void)state;
    assert_int_equal((int)tm_num(&src->metrics, "source_partitions"), 5);
    assert_int_equal((int)tm_num(&src->metrics, "source_topics"), 2);
    assert_false(tm_has(&win->metrics, "source_partitions"));
    assert_true(tm_has_warning(
        r, "/vertices/" SRC "/metrics?get=a: $[4].id: 1 Kafka offset metric "
           "name with a topic or partition that cannot be"));
    model_free(m);
    free(doc);
}

/* 100 000 names: past FL_MAX_PARTITIONS distinct pairs the count is left
 * out with a warning; as many names of 8 pairs count 8. */
static void test_source_partitions_many(void **state)
{
    size_t n = 100000, i, cap = n * 110 + 1, used = 0;
    char *names = malloc(cap), *doc;
    model *m;
    const struct op_node *src;

    (void)state;
    assert_non_null(names);
    for (i = 0; i < n; i++)
        used += (size_t)snprintf(names + used, cap - used,
                                 "%s{\"id\": \"%zu.S.KafkaSourceReader.topic.t."
                                 "partition.%zu.currentOffset\"}",
                                 i ? "," : "", i % 64, i);
    doc = partition_export(names, "");
    m = parse_ok(doc);
    src = tm_node(m->runs[0], SRC);
    assert_false(tm_has(&src->metrics, "source_partitions"));
    assert_true(tm_has_warning(m->runs[0], "$[32768].id: more than 32768 "
                                           "distinct topic partitions"));
    model_free(m);
    free(doc);
    used = 0;
    for (i = 0; i < n; i++)
        used += (size_t)snprintf(names + used, cap - used,
                                 "%s{\"id\": \"%zu.S.KafkaSourceReader.topic.t."
                                 "partition.%zu.currentOffset\"}",
                                 i ? "," : "", i % 64, i % 8);
    doc = partition_export(names, "");
    m = parse_ok(doc);
    src = tm_node(m->runs[0], SRC);
    assert_int_equal((int)tm_num(&src->metrics, "source_partitions"), 8);
    assert_false(tm_has_warning(m->runs[0], "partitions"));
    model_free(m);
    free(doc);
    free(names);
}

int main(void)
{
    const struct CMUnitTest edge[] = {
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_numbers_as_strings),
        cmocka_unit_test(test_sentinels),
        cmocka_unit_test(test_interval_number_sentinel),
        cmocka_unit_test(test_config_keys),
        cmocka_unit_test(test_config_keys_one_table),
        cmocka_unit_test(test_samples),
        cmocka_unit_test(test_metrics_endpoints),
        cmocka_unit_test(test_rocksdb_native),
        cmocka_unit_test(test_rocksdb_native_bound),
        cmocka_unit_test(test_checkpoint_details_and_exceptions),
        cmocka_unit_test(test_checkpoint_subtasks),
        cmocka_unit_test(test_lone_responses),
        cmocka_unit_test(test_archive_payloads),
        cmocka_unit_test(test_detect_lone_endpoints),
        cmocka_unit_test(test_lookup_precedence),
        cmocka_unit_test(test_many_vertices_jobs_keys),
        cmocka_unit_test(test_out_of_range_numbers),
        cmocka_unit_test(test_tree_bound),
        cmocka_unit_test(test_vertex_cap),
        cmocka_unit_test(test_accumulated_ratios),
        cmocka_unit_test(test_plan_fallback),
        cmocka_unit_test(test_counter_rates),
        cmocka_unit_test(test_partition_names),
        cmocka_unit_test(test_source_partitions),
        cmocka_unit_test(test_source_partitions_many),
        cmocka_unit_test(test_impossible_values),
        cmocka_unit_test(test_null_values_counted),
        cmocka_unit_test(test_null_values_export_budget),
        cmocka_unit_test(test_null_response),
    };
    const struct CMUnitTest real_tests[] = {
        cmocka_unit_test(test_real_all_parse),
        cmocka_unit_test(test_real_archive),
        cmocka_unit_test(test_real_job_versions),
        cmocka_unit_test(test_real_checkpoints),
        cmocka_unit_test(test_real_vertex_endpoints),
    };
    struct stat st;
    int rc = cmocka_run_group_tests_name("flink parser", edge, NULL, NULL);

    if (stat(REAL, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("SKIP real Flink captures: %s is absent\n", REAL);
        return rc ? rc : 77;
    }
    return rc | cmocka_run_group_tests_name("flink real captures", real_tests,
                                            NULL, NULL);
}
