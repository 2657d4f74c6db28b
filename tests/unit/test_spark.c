/*
 * test_spark.c - the Spark event-log plugin through the real pipeline
 * pieces (input streams and codecs, the rolling-folder stream, builder,
 * frozen model):
 *   - every real log under OP_REAL_DIR/spark parses, and every stage
 *     attempt's metrics equal the History Server's golden REST answers in
 *     expectations/ to the unit (skipped with a notice without OP_REAL_DIR);
 *   - each codec Spark uses (lz4-java blocks, snappy-java, lzf, multi-frame
 *     zstd, gzip) gives the same model as the plain log, with every
 *     compressed file written by this test from a project-written fixture;
 *   - rolling folders (numeric order, appstatus, .compact), in-progress and
 *     malformed logs, version-specific field names;
 *   - the fast TaskEnd scanner agrees with cJSON, and the distribution
 *     sketch stays within its documented error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dirent.h>
#include <lz4.h>
#include <math.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <optipipe/plugin.h>

#include "codec.h"
#include "input.h"
#include "../../plugins/spark/host/spark_host.h" /* the rolling layout */
#include "model.h"

#include "../../plugins/spark/spark_internal.h"
#include "support.h"

extern const op_plugin op_plugin_spark;

#define REAL OP_REAL_DIR "/spark"
#define FIX OP_SOURCE_DIR "/fixtures/spark"

/* --- helpers ------------------------------------------------------------- */

static char tmpdir[64];

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/op-test-spark-XXXXXX");
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static void rm_tree(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char sub[1024];

    if (!d) {
        unlink(path);
        return;
    }
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        rm_tree(sub);
    }
    closedir(d);
    rmdir(path);
}

static int teardown_tmp(void **state)
{
    (void)state;
    rm_tree(tmpdir);
    return 0;
}

static void write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static int is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The plugin as the host runs it: parse, then finish() (which writes the
 * apps with an App Attempt ID: spark_attempts.c). */
static int spark_read(op_stream *in, op_builder *b, op_error *err)
{
    int rc = op_plugin_spark.parse(in, b, err);
    int rf = op_plugin_spark.finish(b, rc ? NULL : err);

    return rc ? rc : rf;
}

/* Parses path (a file or a rolling folder) into a new frozen model. */
static int parse_path(const char *path, model **out, op_error *err)
{
    op_stream *in = NULL;
    model *m = model_new();
    op_builder *b;
    int rc;

    assert_non_null(m);
    *out = m;
    rc = is_dir(path) ? input_open_rolling(path, NULL, &in, err)
                      : input_open(path, NULL, &in, err);
    if (rc) {
        model_freeze(m);
        return rc;
    }
    b = model_builder_new(m, path);
    assert_non_null(b);
    rc = spark_read(in, b, err);
    model_builder_free(b);
    input_close(in);
    model_freeze(m);
    return rc;
}

static model *parse_ok(const char *path)
{
    op_error err = {0, ""};
    model *m = NULL;

    if (parse_path(path, &m, &err))
        fail_msg("%s: parse failed: %s", path, err.msg);
    assert_int_equal(m->nruns, 1);
    return m;
}

static model *parse_text(const char *name, const char *text)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    write_file(path, text, strlen(text));
    return parse_ok(path);
}

/* The decompressed text of a committed fixture (read through the host's
 * own stream so the test does not depend on the fixture's codec). */
static dbuf fixture_text(const char *name)
{
    char path[512];
    op_stream *in = NULL;
    op_error err = {0, ""};
    const char *buf;
    size_t len;
    dbuf b = {0};

    snprintf(path, sizeof path, "%s/%s", FIX, name);
    if (input_open(path, NULL, &in, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(op_stream_read_all(in, &buf, &len, &err), 0);
    db_add(&b, buf, len);
    input_close(in);
    return b;
}

/* Same runs, nodes, metrics and distributions. */
static void assert_same_model(const model *a, const model *b)
{
    const struct op_run *ra, *rb;
    size_t i, k;

    assert_int_equal(a->nruns, 1);
    assert_int_equal(b->nruns, 1);
    ra = a->runs[0];
    rb = b->runs[0];
    assert_string_equal(ra->id, rb->id);
    assert_string_equal(ra->status, rb->status);
    assert_int_equal(ra->nnodes, rb->nnodes);
    assert_int_equal(ra->metrics.n, rb->metrics.n);
    for (k = 0; k < ra->metrics.n; k++)
        assert_true(tm_num(&ra->metrics, mentry_key(&ra->metrics.items[k])) ==
                    tm_num(&rb->metrics, mentry_key(&ra->metrics.items[k])));
    for (i = 0; i < ra->nnodes; i++) {
        const struct op_node *x = ra->nodes[i], *y = tm_node(rb, x->id);
        assert_int_equal(x->metrics.n, y->metrics.n);
        for (k = 0; k < x->metrics.n; k++)
            assert_true(tm_num(&x->metrics, mentry_key(&x->metrics.items[k])) ==
                        tm_num(&y->metrics, mentry_key(&x->metrics.items[k])));
        assert_int_equal(x->ndists, y->ndists);
        for (k = 0; k < x->ndists; k++)
            assert_memory_equal(&x->dists[k].d, &y->dists[k].d,
                                sizeof(op_dist));
    }
}

static int real_present(void)
{
    if (is_dir(REAL))
        return 1;
    print_message("NOTICE: %s is absent; real-log checks skipped\n", REAL);
    return 0;
}

/* --- the real logs against the History Server ---------------------------- */

static const struct {
    const char *expectation, *app;
} expect_map[] = {
    {"stage_list_json", "local-1422981780767"},
    {"complete_stage_list_json", "local-1422981780767"},
    {"failed_stage_list_json", "local-1422981780767"},
    {"one_stage_json", "local-1422981780767"},
    {"one_stage_json_with_details", "local-1422981780767"},
    {"one_stage_attempt_json", "local-1422981780767"},
    {"one_stage_attempt_json_details_with_failed_task", "local-1422981780767"},
    {"excludeOnFailure_node_for_stage", "application_1516285256255_0012"},
    {"stage_list_with_peak_metrics", "app-20200706201101-0003"},
    {"stage_with_peak_metrics", "app-20200706201101-0003"},
    {"stage_with_summaries", "app-20200706201101-0003"},
    {"stage_with_speculation_summary", "application_1628109047826_1317105"},
    {"one_stage_json_with_partitionId", "local-1642039451826"},
};

/* opti-pipe metric -> History Server StageData field */
static const char *const metric_map[][2] = {
    {"tasks", "numTasks"},
    {"completed_tasks", "numCompleteTasks"},
    {"failed_tasks", "numFailedTasks"},
    {"killed_tasks", "numKilledTasks"},
    {"executor_run_ms", "executorRunTime"},
    {"gc_ms", "jvmGcTime"},
    {"shuffle_read_bytes", "shuffleReadBytes"},
    {"shuffle_read_records", "shuffleReadRecords"},
    {"shuffle_write_bytes", "shuffleWriteBytes"},
    {"shuffle_write_records", "shuffleWriteRecords"},
    {"memory_spill_bytes", "memoryBytesSpilled"},
    {"disk_spill_bytes", "diskBytesSpilled"},
    {"input_bytes", "inputBytes"},
    {"input_records", "inputRecords"},
    {"output_bytes", "outputBytes"},
    {"output_records", "outputRecords"},
};

static cJSON *load_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;
    char *buf;
    cJSON *j;

    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    j = cJSON_Parse(buf);
    free(buf);
    assert_non_null(j);
    return j;
}

static int compare_stage(const struct op_run *r, const cJSON *s,
                         const char *file)
{
    char id[64];
    const struct op_node *n;
    const char *status = cJSON_GetObjectItem(s, "status")->valuestring;
    size_t k;
    int checked = 0;

    snprintf(id, sizeof id, "stage-%d-%d",
             cJSON_GetObjectItem(s, "stageId")->valueint,
             cJSON_GetObjectItem(s, "attemptId")->valueint);
    n = tm_node(r, id);
    for (k = 0; k < sizeof metric_map / sizeof metric_map[0]; k++) {
        double want = cJSON_GetObjectItem(s, metric_map[k][1])->valuedouble;
        int64_t got = tm_inum(&n->metrics, metric_map[k][0]);
        if ((double)got != want)
            fail_msg("%s %s %s: %lld, the History Server says %.0f", file,
                     id, metric_map[k][0], (long long)got, want);
        checked++;
    }
    /* executorCpuTime is in ns; executor_cpu_ms = executorCpuTime / 1e6 */
    assert_true(fabs(tm_num(&n->metrics, "executor_cpu_ms") -
                     cJSON_GetObjectItem(s, "executorCpuTime")->valuedouble /
                         1e6) < 1e-9);
    assert_int_equal(n->parallelism,
                     cJSON_GetObjectItem(s, "numTasks")->valueint);
    {
        const mentry *st = mmap_get(&n->attrs, "spark_status");
        assert_non_null(st);
        assert_string_equal(st->u.s, status);
    }
    return checked + 2;
}

static void test_real_expectations(void **state)
{
    size_t i;
    int checked = 0, stages = 0;

    (void)state;
    if (!real_present())
        skip();
    for (i = 0; i < sizeof expect_map / sizeof expect_map[0]; i++) {
        char path[512];
        cJSON *j, *it;
        model *m;
        snprintf(path, sizeof path, "%s/expectations/%s_expectation.json",
                 REAL, expect_map[i].expectation);
        j = load_json(path);
        snprintf(path, sizeof path, "%s/%s", REAL, expect_map[i].app);
        m = parse_ok(path);
        if (cJSON_IsObject(j)) {
            checked += compare_stage(m->runs[0], j, expect_map[i].expectation);
            stages++;
        } else {
            cJSON_ArrayForEach(it, j)
            {
                checked += compare_stage(m->runs[0], it,
                                         expect_map[i].expectation);
                stages++;
            }
        }
        cJSON_Delete(j);
        model_free(m);
    }
    print_message("compared %d values of %d stage attempts with the History "
                  "Server's\n",
                  checked, stages);
    assert_true(stages >= 20);
}

/* The application list: id, name, start, end, duration. */
static void test_real_app(void **state)
{
    cJSON *j, *att;
    model *m;

    (void)state;
    if (!real_present())
        skip();
    j = load_json(REAL "/expectations/one_app_json_expectation.json");
    m = parse_ok(REAL "/local-1422981780767");
    att = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "attempts"), 0);
    assert_string_equal(m->runs[0]->id,
                        cJSON_GetObjectItem(j, "id")->valuestring);
    assert_string_equal(m->runs[0]->name,
                        cJSON_GetObjectItem(j, "name")->valuestring);
    assert_int_equal(m->runs[0]->duration_ms,
                     cJSON_GetObjectItem(att, "duration")->valueint);
    assert_string_equal(m->runs[0]->status, "succeeded");
    cJSON_Delete(j);
    model_free(m);
}

static void test_real_all_parse(void **state)
{
    static const char *const logs[] = {
        "local-1422981780767",
        "local-1430917381534",
        "app-20161115172038-0000",
        "app-20161116163331-0000",
        "application_1516285256255_0012",
        "application_1506645932520_24630151",
        "application_1538416563558_0014",
        "application_1553914137147_0018",
        "app-20200706201101-0003",
        "application_1628109047826_1317105",
        "local-1642039451826",
        "eventlog_v2_local-1766844910796",
        "spark-rapids-tools/eventlog_v2_local-1623876083964",
        "spark-rapids-tools/tasks_executors_fail_compressed_eventlog.zstd",
        "spark-rapids-tools/eventlog_4nodes_8cores_dynamic_alloc.zstd",
        "spark-rapids-tools/malformed_json_eventlog.zstd",
        "spark-rapids-tools/spark2-eventlog.zstd",
        "spark-rapids-tools/aqeshuffle_eventlog.zstd",
    };
    size_t i;

    (void)state;
    if (!real_present())
        skip();
    for (i = 0; i < sizeof logs / sizeof logs[0]; i++) {
        char path[512];
        model *m;
        const struct op_run *r;
        snprintf(path, sizeof path, "%s/%s", REAL, logs[i]);
        m = parse_ok(path);
        r = m->runs[0];
        assert_string_equal(r->source, "spark");
        assert_true(tm_inum(&r->metrics, "stages") >= 1);
        assert_true(tm_inum(&r->metrics, "tasks") >= 1);
        assert_string_equal(r->status,
                            strstr(logs[i], "tasks_executors_fail")
                                ? "failed"
                                : "succeeded");
        if (strstr(logs[i], "malformed")) {
            assert_int_equal(tm_inum(&r->metrics, "malformed_lines"), 1);
            assert_true(tm_has_warning(r, "line 4 is not valid JSON"));
        } else {
            assert_int_equal(tm_inum(&r->metrics, "malformed_lines"), 0);
        }
        model_free(m);
    }
}

static void test_real_details(void **state)
{
    model *m;
    const struct op_run *r;
    const struct op_node *n;
    const mseries *ex;

    (void)state;
    if (!real_present())
        skip();
    /* the rolling folder: 2 zstd files, the second starts with a TaskEnd */
    m = parse_ok(REAL "/spark-rapids-tools/eventlog_v2_local-1623876083964");
    r = m->runs[0];
    assert_string_equal(r->id, "local-1623876083964");
    assert_string_equal(r->engine_version, "3.1.1");
    assert_int_equal(tm_inum(&r->metrics, "orphan_task_ends"), 0);
    assert_int_equal(r->nwarnings, 0);
    model_free(m);

    /* Spark 4.2: newest schema, hostile app name kept verbatim */
    m = parse_ok(REAL "/eventlog_v2_local-1766844910796");
    r = m->runs[0];
    assert_string_equal(r->engine_version, "4.2.0-SNAPSHOT");
    assert_string_equal(r->name, "<script>alert('XSS')</script>");
    model_free(m);

    /* executor loss with reasons (YARN) */
    m = parse_ok(REAL "/application_1538416563558_0014");
    r = m->runs[0];
    ex = model_find_series(r, "executors");
    assert_non_null(ex);
    assert_int_equal(tm_inum(&r->metrics, "executors_removed"), 8);
    assert_non_null(model_find_series(r, "task_failures"));
    model_free(m);

    /* failures: FetchFailed, ExecutorLost, Resubmitted; a failed stage */
    m = parse_ok(REAL
                 "/spark-rapids-tools/tasks_executors_fail_compressed_eventlog"
                 ".zstd");
    r = m->runs[0];
    assert_int_equal(tm_inum(&r->metrics, "stages"), 135);
    assert_int_equal(tm_inum(&r->metrics, "failed_stages"), 1);
    assert_int_equal(tm_inum(&r->metrics, "failed_jobs"), 1);
    assert_int_equal(tm_inum(&r->metrics, "tasks"), 8630);
    model_free(m);

    /* old log: the failed stage, its parents and the skipped-free DAG */
    m = parse_ok(REAL "/local-1422981780767");
    r = m->runs[0];
    n = tm_node(r, "stage-2-0");
    assert_string_equal(n->status, "failed");
    assert_non_null(mmap_get(&n->attrs, "failure_reason"));
    assert_int_equal(tm_inum(&n->metrics, "failed_tasks"), 1);
    assert_true(n->ndists > 0);
    model_free(m);
}

/* --- codecs: compressed by this test from a project-written fixture ------ */

static void lz4b_encode(dbuf *b, const unsigned char *d, size_t n, int end)
{
    const size_t bs = 32768;
    size_t off;
    char *tmp = malloc((size_t)LZ4_compressBound((int)bs));

    assert_non_null(tmp);
    for (off = 0; off < n; off += bs) {
        size_t k = n - off < bs ? n - off : bs;
        int c = LZ4_compress_default((const char *)d + off, tmp, (int)k,
                                     LZ4_compressBound((int)bs));
        uint32_t sum = codec_xxh32(d + off, k, 0x9747B28Cu) & 0x0FFFFFFFu;
        int raw = c <= 0 || (size_t)c >= k;
        db_add(b, "LZ4Block", 8);
        db_u8(b, raw ? 0x15 : 0x25);
        db_le32(b, raw ? (uint32_t)k : (uint32_t)c);
        db_le32(b, (uint32_t)k);
        db_le32(b, sum);
        db_add(b, raw ? (const void *)(d + off) : tmp, raw ? k : (size_t)c);
    }
    if (end) {
        db_add(b, "LZ4Block", 8);
        db_u8(b, 0x15);
        db_le32(b, 0);
        db_le32(b, 0);
        db_le32(b, 0);
    }
    free(tmp);
}

static void snappy_java_encode(dbuf *b, const unsigned char *d, size_t n)
{
    static const unsigned char magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    size_t off, cap = snappy_max_compressed_length(32768);
    char *tmp = malloc(cap);

    assert_non_null(tmp);
    db_add(b, magic, 8);
    db_be32(b, 1);
    db_be32(b, 1);
    for (off = 0; off < n; off += 32768) {
        size_t k = n - off < 32768 ? n - off : 32768, out = cap;
        assert_int_equal(snappy_compress((const char *)d + off, k, tmp, &out),
                         SNAPPY_OK);
        db_be32(b, (uint32_t)out);
        db_add(b, tmp, out);
    }
    free(tmp);
}

/* ning LZF chunks: stored ones and compressed ones (literal runs plus a
 * back-reference when a byte repeats, as the real encoder emits). */
static void lzf_encode(dbuf *b, const unsigned char *d, size_t n)
{
    size_t off, chunk = 0;

    for (off = 0; off < n; chunk++) {
        size_t k = n - off < 60000 ? n - off : 60000;
        if (chunk % 2 == 0) {
            db_add(b, "ZV", 2);
            db_u8(b, 0);
            db_be16(b, (unsigned)k);
            db_add(b, d + off, k);
        } else {
            dbuf c = {0};
            size_t i = 0;
            while (i < k) {
                /* a run of >= 4 equal bytes after the first: back-reference
                 * at offset 1 (the encoding is "copy len+2 from pos-1") */
                size_t run = 1;
                while (i + run < k && d[off + i + run] == d[off + i] &&
                       run < 200)
                    run++;
                if (i > 0 && d[off + i - 1] == d[off + i] && run >= 3) {
                    size_t len = run - 2; /* copies len+2 bytes */
                    if (len < 7) {
                        db_u8(&c, (unsigned)(len << 5));
                    } else {
                        db_u8(&c, 7u << 5);
                        db_u8(&c, (unsigned)(len - 7));
                    }
                    db_u8(&c, 0); /* offset 0 + 1 */
                    i += run;
                    continue;
                }
                {
                    size_t lit = k - i < 32 ? k - i : 32;
                    db_u8(&c, (unsigned)(lit - 1));
                    db_add(&c, d + off + i, lit);
                    i += lit;
                }
            }
            db_add(b, "ZV", 2);
            db_u8(b, 1);
            db_be16(b, (unsigned)c.n);
            db_be16(b, (unsigned)k);
            db_add(b, c.p, c.n);
            free(c.p);
        }
        off += k;
    }
}

/* Spark's zstd logs: one frame per flush (here every ~8 KiB). */
static void zstd_frames_encode(dbuf *b, const unsigned char *d, size_t n,
                               size_t piece)
{
    size_t off, cap = ZSTD_compressBound(piece);
    void *tmp = malloc(cap);

    assert_non_null(tmp);
    for (off = 0; off < n; off += piece) {
        size_t k = n - off < piece ? n - off : piece;
        size_t c = ZSTD_compress(tmp, cap, d + off, k, 1);
        assert_false(ZSTD_isError(c));
        db_add(b, tmp, c);
    }
    free(tmp);
}

static void gzip_encode(dbuf *b, const unsigned char *d, size_t n)
{
    z_stream z;
    unsigned char out[65536];
    int rc;

    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
                                  Z_DEFAULT_STRATEGY),
                     Z_OK);
    z.next_in = (unsigned char *)d;
    z.avail_in = (uInt)n;
    do {
        z.next_out = out;
        z.avail_out = sizeof out;
        rc = deflate(&z, Z_FINISH);
        db_add(b, out, sizeof out - z.avail_out);
    } while (rc == Z_OK);
    assert_int_equal(rc, Z_STREAM_END);
    deflateEnd(&z);
}

static model *write_and_parse(const char *name, const dbuf *data)
{
    char path[512];

    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    write_file(path, data->p, data->n);
    return parse_ok(path);
}

static void test_codecs(void **state)
{
    dbuf text = fixture_text("failures.zstd");
    model *ref, *m;
    dbuf c;
    const char *codecs[] = {"lz4", "snappy", "lzf", "zstd", "gz"};
    size_t i;

    (void)state;
    ref = parse_text("application_1700000000000_0007", (const char *)text.p);
    for (i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        char name[96];
        memset(&c, 0, sizeof c);
        switch (i) {
        case 0:
            lz4b_encode(&c, text.p, text.n, 1);
            break;
        case 1:
            snappy_java_encode(&c, text.p, text.n);
            break;
        case 2:
            lzf_encode(&c, text.p, text.n);
            break;
        case 3:
            zstd_frames_encode(&c, text.p, text.n, 8192);
            break;
        default:
            gzip_encode(&c, text.p, text.n);
            break;
        }
        snprintf(name, sizeof name, "application_1700000000000_0007.%s",
                 codecs[i]);
        m = write_and_parse(name, &c);
        assert_same_model(ref, m);
        model_free(m);
        /* the same bytes without an extension: sniffed by magic */
        snprintf(name, sizeof name, "noext-%s", codecs[i]);
        m = write_and_parse(name, &c);
        assert_same_model(ref, m);
        model_free(m);
        free(c.p);
    }
    model_free(ref);
    free(text.p);
}

/* An .inprogress zstd log that ends inside a frame, and an lz4 one whose
 * last block was never flushed (no end mark). */
static void test_in_progress_compressed(void **state)
{
    dbuf text = fixture_text("healthy.zstd");
    dbuf c = {0};
    model *m;
    const struct op_run *r;

    (void)state;
    zstd_frames_encode(&c, text.p, text.n, 8192);
    c.n = c.n * 2 / 3; /* cut inside a frame */
    m = write_and_parse("application_1700000000000_0001.zstd.inprogress", &c);
    r = m->runs[0];
    assert_string_equal(r->status, "running");
    assert_true(tm_has_warning(r, "in progress"));
    assert_int_equal(tm_inum(&r->metrics, "malformed_lines"), 0);
    assert_true(tm_inum(&r->metrics, "tasks") > 10);
    model_free(m);
    free(c.p);

    memset(&c, 0, sizeof c);
    lz4b_encode(&c, text.p, text.n / 2, 0);
    m = write_and_parse("application_1700000000000_0001.lz4.inprogress", &c);
    r = m->runs[0];
    assert_string_equal(r->status, "running");
    assert_int_equal(tm_inum(&r->metrics, "malformed_lines"), 0);
    model_free(m);
    free(c.p);
    free(text.p);
}

/* --- rolling folders ----------------------------------------------------- */

/* Splits text into n pieces at line boundaries. */
static void split_lines(const dbuf *t, size_t n, size_t *cuts)
{
    size_t i;

    for (i = 0; i < n; i++) {
        size_t at = t->n * (i + 1) / n;
        while (at < t->n && t->p[at - 1] != '\n')
            at++;
        cuts[i] = i == n - 1 ? t->n : at;
    }
}

static void encode_any(dbuf *c, int codec, const unsigned char *d, size_t n)
{
    switch (codec % 6) {
    case 0:
        db_add(c, d, n);
        break;
    case 1:
        zstd_frames_encode(c, d, n, 4096);
        break;
    case 2:
        lz4b_encode(c, d, n, 1);
        break;
    case 3:
        snappy_java_encode(c, d, n);
        break;
    case 4:
        lzf_encode(c, d, n);
        break;
    default:
        gzip_encode(c, d, n);
        break;
    }
}

static void test_rolling(void **state)
{
    dbuf text = fixture_text("skew.zstd");
    const char *app = "application_1700000000000_0002";
    char dir[512], path[700], status[700], status2[720];
    size_t cuts[11], i, prev = 0;
    model *ref, *m;
    const struct op_run *r;

    (void)state;
    ref = parse_text(app, (const char *)text.p);
    snprintf(dir, sizeof dir, "%s/eventlog_v2_%s", tmpdir, app);
    assert_int_equal(mkdir(dir, 0770), 0);
    split_lines(&text, 11, cuts);
    /* 11 files so that a string sort (events_10 < events_2) would fail;
     * each with its own codec */
    for (i = 0; i < 11; i++) {
        dbuf c = {0};
        static const char *const ext[] = {"", ".zstd", ".lz4",
                                          ".snappy", ".lzf", ".gz"};
        encode_any(&c, (int)i, text.p + prev, cuts[i] - prev);
        snprintf(path, sizeof path, "%s/events_%zu_%s%s", dir, i + 1, app,
                 ext[i % 6]);
        write_file(path, c.p, c.n);
        free(c.p);
        prev = cuts[i];
    }
    snprintf(status, sizeof status, "%s/appstatus_%s", dir, app);
    write_file(status, "", 0);
    assert_true(input_is_rolling_dir(dir));
    m = parse_ok(dir);
    assert_same_model(ref, m);
    assert_string_equal(m->runs[0]->status, "succeeded");
    model_free(m);

    /* still running: appstatus_<app>.inprogress */
    snprintf(status2, sizeof status2, "%s.inprogress", status);
    assert_int_equal(rename(status, status2), 0);
    m = parse_ok(dir);
    assert_string_equal(m->runs[0]->status, "running");
    model_free(m);
    assert_int_equal(rename(status2, status), 0);

    /* compacted by the History Server: files before the .compact go */
    {
        dbuf c = {0};
        encode_any(&c, 1, text.p, cuts[4]);
        snprintf(path, sizeof path, "%s/events_5_%s.zstd.compact", dir, app);
        write_file(path, c.p, c.n);
        free(c.p);
        snprintf(path, sizeof path, "%s/events_1_%s", dir, app);
        write_file(path, "garbage that must not be read\n", 30);
    }
    m = parse_ok(dir);
    r = m->runs[0];
    assert_true(tm_has_warning(r, "compacted"));
    assert_int_equal(tm_inum(&r->metrics, "malformed_lines"), 0);
    assert_int_equal(tm_inum(&r->metrics, "tasks"),
                     tm_inum(&ref->runs[0]->metrics, "tasks"));
    model_free(m);

    /* a folder without events files is an error naming it */
    {
        op_error err = {0, ""};
        op_stream *s = NULL;
        snprintf(path, sizeof path, "%s/eventlog_v2_empty", tmpdir);
        assert_int_equal(mkdir(path, 0770), 0);
        assert_int_not_equal(input_open_rolling(path, NULL, &s, &err), 0);
        assert_non_null(strstr(err.msg, "eventlog_v2_empty"));
    }
    model_free(ref);
    free(text.p);
}

/* --- tolerance: versions, malformed lines, in-progress ------------------- */

#define LOGSTART "{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"3.4.1\"}\n"
#define APPSTART                                                            \
    "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"t\","     \
    "\"App ID\":\"app-1\",\"Timestamp\":1000,\"User\":\"u\"}\n"
#define STAGESUB(id, n)                                                    \
    "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{"           \
    "\"Stage ID\":" #id ",\"Stage Attempt ID\":0,\"Stage Name\":\"s" #id   \
    "\",\"Number of Tasks\":" #n ",\"Parent IDs\":[],"                      \
    "\"Submission Time\":1100}}\n"
#define STAGEDONE(id, n)                                                   \
    "{\"Event\":\"SparkListenerStageCompleted\",\"Stage Info\":{"           \
    "\"Stage ID\":" #id ",\"Stage Attempt ID\":0,\"Stage Name\":\"s" #id   \
    "\",\"Number of Tasks\":" #n ",\"Parent IDs\":[],"                      \
    "\"Submission Time\":1100,\"Completion Time\":1900}}\n"
#define TSTART(tid)                                                        \
    "{\"Event\":\"SparkListenerTaskStart\",\"Stage ID\":0,"                 \
    "\"Stage Attempt ID\":0,\"Task Info\":{\"Task ID\":" #tid              \
    ",\"Index\":" #tid ",\"Attempt\":0,\"Launch Time\":1200,"               \
    "\"Executor ID\":\"1\",\"Host\":\"h\"}}\n"
#define TEND(tid, reason, run)                                             \
    "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,"                   \
    "\"Stage Attempt ID\":0,\"Task Type\":\"ResultTask\","                  \
    "\"Task End Reason\":" reason ",\"Task Info\":{\"Task ID\":" #tid      \
    ",\"Index\":" #tid ",\"Attempt\":0,\"Launch Time\":1200,"               \
    "\"Executor ID\":\"1\",\"Host\":\"h\",\"Finish Time\":1300,"            \
    "\"Accumulables\":[{\"ID\":1,\"Name\":\"x]}\\\"{[\",\"Value\":\"5\"}]}," \
    "\"Task Metrics\":{\"Executor Run Time\":" #run                         \
    ",\"JVM GC Time\":1,\"Shuffle Read Metrics\":{"                         \
    "\"Remote Bytes Read\":10,\"Local Bytes Read\":5,"                      \
    "\"Total Records Read\":3,\"Push Based Shuffle\":{"                     \
    "\"Merged Fetch Fallback Count\":0}}}}\n"
#define APPEND "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":2000}\n"

static void test_task_outcomes(void **state)
{
    const char *text =
        LOGSTART APPSTART STAGESUB(0, 6)
        TSTART(1) TEND(1, "{\"Reason\":\"Success\"}", 100)
        TSTART(2) TEND(2, "{\"Reason\":\"TaskKilled\",\"Kill Reason\":\"x\"}", 50)
        TSTART(3) TEND(3, "{\"Reason\":\"TaskCommitDenied\"}", 7)
        TSTART(4) TEND(4, "{\"Reason\":\"ExceptionFailure\",\"Class Name\":"
                          "\"java.lang.OutOfMemoryError\",\"Description\":"
                          "\"Java heap space\"}", 20)
        /* Resubmitted: no TaskStart of its own, so no metrics (Spark) */
        TEND(1, "{\"Reason\":\"Resubmitted\"}", 999)
        /* a stage nobody submitted: ignored */
        "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":9,\"Task Info\":"
        "{\"Task ID\":77}}\n"
        /* unknown events and fully qualified SQL events */
        "{\"Event\":\"com.example.MyListenerEvent\",\"x\":1}\n"
        "{\"Event\":\"org.apache.spark.sql.execution.ui."
        "SparkListenerSQLExecutionStart\",\"executionId\":3,\"description\":"
        "\"select 1\",\"time\":1050}\n"
        "{\"Event\":\"org.apache.spark.sql.execution.ui."
        "SparkListenerSQLExecutionEnd\",\"executionId\":3,\"time\":1950}\n"
        STAGEDONE(0, 6) APPEND;
    model *m = parse_text("app-1", text);
    const struct op_run *r = m->runs[0];
    const struct op_node *s = tm_node(r, "stage-0-0");
    const mseries *f;

    (void)state;
    assert_string_equal(r->engine_version, "3.4.1");
    assert_int_equal(tm_inum(&s->metrics, "tasks"), 6);
    assert_int_equal(tm_inum(&s->metrics, "completed_tasks"), 1);
    assert_int_equal(tm_inum(&s->metrics, "killed_tasks"), 2);
    assert_int_equal(tm_inum(&s->metrics, "failed_tasks"), 2);
    assert_int_equal(tm_inum(&s->metrics, "executor_run_ms"), 177);
    assert_int_equal(tm_inum(&s->metrics, "shuffle_read_bytes"), 60);
    assert_int_equal(tm_inum(&s->metrics, "shuffle_read_records"), 12);
    assert_int_equal(tm_inum(&r->metrics, "orphan_task_ends"), 1);
    assert_int_equal(s->duration_ms, 800);
    assert_string_equal(tm_node(r, "sql-3")->status, "succeeded");
    assert_string_equal(tm_node(r, "sql-3")->name, "select 1");
    f = model_find_series(r, "task_failures");
    assert_non_null(f);
    assert_int_equal(f->n, 4); /* killed, commit denied, OOM, resubmitted */
    model_free(m);
}

static void test_malformed_and_cut(void **state)
{
    const char *text =
        LOGSTART APPSTART STAGESUB(0, 2)
        TSTART(1) "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Ta\n"
        "not json at all\n"
        TSTART(2) TEND(2, "{\"Reason\":\"Success\"}", 30)
        STAGEDONE(0, 2)
        "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":0,\"Comp"; /* cut */
    model *m = parse_text("app-1.inprogress", text);
    const struct op_run *r = m->runs[0];

    (void)state;
    assert_int_equal(tm_inum(&r->metrics, "malformed_lines"), 2);
    assert_true(tm_has_warning(r, "line 5 is not valid JSON"));
    assert_true(tm_has_warning(r, "line 6 is not valid JSON"));
    assert_true(tm_has_warning(r, "inside an unfinished event"));
    assert_string_equal(r->status, "running");
    assert_int_equal(tm_inum(&tm_node(r, "stage-0-0")->metrics, "executor_run_ms"),
                     30);
    model_free(m);
}

/* An old (Spark 1.x) log: no LogStart, no attempt ids, no CPU time, no
 * records; the app id comes from ApplicationStart. */
static void test_old_schema(void **state)
{
    const char *text =
        "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"old\","
        "\"App ID\":\"local-1\",\"Timestamp\":10,\"User\":\"u\"}\n"
        "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":0,\"Stage Infos\":"
        "[{\"Stage ID\":0,\"Stage Name\":\"count\",\"Number of Tasks\":1}],"
        "\"Properties\":{}}\n"
        "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{\"Stage ID\""
        ":0,\"Stage Name\":\"count\",\"Number of Tasks\":1,\"Submission Time\""
        ":20}}\n"
        "{\"Event\":\"SparkListenerTaskStart\",\"Stage ID\":0,\"Task Info\":{"
        "\"Task ID\":0,\"Index\":0,\"Launch Time\":21,\"Executor ID\":\"<driver>"
        "\",\"Host\":\"localhost\"}}\n"
        "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,\"Task Type\":"
        "\"ResultTask\",\"Task End Reason\":{\"Reason\":\"Success\"},"
        "\"Task Info\":{\"Task ID\":0,\"Index\":0,\"Launch Time\":21,"
        "\"Executor ID\":\"<driver>\",\"Host\":\"localhost\",\"Finish Time\":"
        "80,\"Failed\":false,\"Accumulables\":[]},\"Task Metrics\":{"
        "\"Host Name\":\"localhost\",\"Executor Run Time\":50,\"JVM GC Time\":"
        "2,\"Input Metrics\":{\"Data Read Method\":\"Hadoop\",\"Bytes Read\":"
        "160},\"Shuffle Write Metrics\":{\"Shuffle Bytes Written\":7,"
        "\"Shuffle Write Time\":1000}}}\n"
        "{\"Event\":\"SparkListenerStageCompleted\",\"Stage Info\":{\"Stage ID"
        "\":0,\"Stage Name\":\"count\",\"Number of Tasks\":1,\"Submission Time"
        "\":20,\"Completion Time\":90}}\n"
        "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":0,\"Job Result\":{"
        "\"Result\":\"JobSucceeded\"}}\n"
        "{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":100}\n";
    model *m = parse_text("local-1", text);
    const struct op_run *r = m->runs[0];
    const struct op_node *s = tm_node(r, "stage-0-0");

    (void)state;
    assert_string_equal(r->id, "local-1");
    assert_null(r->engine_version);
    assert_string_equal(r->status, "succeeded");
    assert_int_equal(tm_inum(&s->metrics, "executor_run_ms"), 50);
    assert_int_equal(tm_inum(&s->metrics, "input_bytes"), 160);
    assert_int_equal(tm_inum(&s->metrics, "input_records"), 0);
    assert_int_equal(tm_inum(&s->metrics, "shuffle_write_bytes"), 7);
    assert_true(tm_num(&s->metrics, "executor_cpu_ms") == 0);
    assert_string_equal(tm_node(r, "job-0")->status, "succeeded");
    model_free(m);
}

/* Two attempts of one app, read in reverse order: one run with a retry,
 * analyzed from the later attempt, not a history. */
static void test_attempts(void **state)
{
    dbuf t1 = fixture_text("healthy.zstd"), t2 = {0};
    const char *at = "\"App Attempt ID\":\"1\"";
    char *p = strstr((char *)t1.p, at);
    model *m = model_new();
    const mseries *s;
    size_t i;

    (void)state;
    assert_non_null(p);
    db_add(&t2, t1.p, t1.n);
    t2.p[(p - (char *)t1.p) + strlen(at) - 2] = '2';
    for (i = 0; i < 2; i++) {
        const dbuf *t = i ? &t1 : &t2;
        op_stream *in = NULL;
        op_error err = {0, ""};
        op_builder *b = model_builder_new(m, i ? "attempt1" : "attempt2");
        assert_int_equal(input_open_mem(i ? "attempt1" : "attempt2", t->p, t->n,
                                        NULL, &in, &err),
                         0);
        assert_int_equal(op_plugin_spark.parse(in, b, &err), 0);
        input_close(in);
        if (i)
            assert_int_equal(op_plugin_spark.finish(b, &err), 0);
        model_builder_free(b);
    }
    model_freeze(m);
    assert_int_equal(m->nruns, 1);
    assert_string_equal(m->runs[0]->id, "application_1700000000000_0001");
    assert_false(m->runs[0]->superseded);
    assert_int_equal(m->runs[0]->nhistory, 0);
    assert_int_equal(m->runs[0]->norigins, 2);
    assert_string_equal(tm_str(&m->runs[0]->attrs, "attempt"), "2");
    assert_string_equal(tm_str(&m->runs[0]->attrs, "attempts"), "2");
    assert_int_equal(tm_inum(&m->runs[0]->metrics, "failed_attempts"), 1);
    s = model_find_series(m->runs[0], "attempts");
    assert_non_null(s);
    assert_int_equal(s->n, 2);
    assert_int_equal(tm_inum(&s->recs[0]->fields, "attempt"), 1);
    assert_string_equal(tm_str(&s->recs[0]->fields, "status"), "failed");
    assert_non_null(tm_get(&s->recs[0]->fields, "end_reason"));
    model_free(m);
    free(t1.p);
    free(t2.p);
}

static void test_detect(void **state)
{
    static const char a[] = "{\"Event\":\"SparkListenerLogStart\",\"Spark "
                            "Version\":\"3.5.0\"}\n";
    static const char b[] = "{\"jid\":\"x\",\"vertices\":[]}";
    op_probe p;

    (void)state;
    memset(&p, 0, sizeof p);
    p.path = p.basename = "x";
    p.head = (const unsigned char *)a;
    p.head_len = sizeof a - 1;
    assert_true(op_plugin_spark.detect(&p) >= 90);
    p.head = (const unsigned char *)b;
    p.head_len = sizeof b - 1;
    assert_int_equal(op_plugin_spark.detect(&p), 0);
}

/* --- the scanner and the sketch ----------------------------------------- */

/* Every task event of path read by the scanner and by cJSON; returns the
 * number of events compared. */
static int scan_both(const char *path)
{
    op_stream *in = NULL;
    op_error err = {0, ""};
    const char *line;
    size_t len;
    int n = 0;

    assert_int_equal(input_open(path, NULL, &in, &err), 0);
    while (op_stream_read_line(in, &line, &len, &err) == 1) {
        sp_span name;
        int ev = sp_scan_event(line, &name);
        sp_task fast, slow;
        char buf[8192];
        cJSON *o;
        if (ev == SP_EV_OTHER)
            continue;
        if (sp_scan_task(line, len, ev == SP_EV_TASK_END, &fast) != 0)
            fail_msg("%s line %llu: the scanner refused it", path,
                     (unsigned long long)op_stream_line_no(in));
        o = cJSON_Parse(line);
        assert_non_null(o);
        assert_int_equal(
            sp_task_from_json(o, ev == SP_EV_TASK_END, &slow, buf, sizeof buf),
            0);
        assert_int_equal(fast.task_id, slow.task_id);
        assert_int_equal(fast.stage_id, slow.stage_id);
        assert_int_equal(fast.stage_attempt, slow.stage_attempt);
        assert_int_equal(fast.index, slow.index);
        assert_int_equal(fast.launch, slow.launch);
        assert_int_equal(fast.finish, slow.finish);
        assert_int_equal(fast.reason, slow.reason);
        assert_int_equal(fast.has_metrics, slow.has_metrics);
        assert_memory_equal(&fast.m, &slow.m, sizeof fast.m);
        cJSON_Delete(o);
        n++;
    }
    input_close(in);
    return n;
}

static void test_scanner_matches_cjson(void **state)
{
    int n;

    (void)state;
    n = scan_both(FIX "/../demo/spark-application_1700000000000_0042.zstd");
    n += scan_both(FIX "/failures.zstd");
    if (is_dir(REAL)) {
        n += scan_both(REAL "/local-1422981780767");
        n += scan_both(REAL "/eventlog_v2_local-1766844910796/events_1_"
                            "local-1766844910796");
        n += scan_both(REAL "/app-20200706201101-0003");
        n += scan_both(REAL "/spark-rapids-tools/tasks_executors_fail_"
                            "compressed_eventlog.zstd");
    }
    assert_true(n > 400);

    /* shapes the scanner must refuse (cJSON then decides) */
    {
        sp_task t;
        const char *bad[] = {
            "{\"Event\":\"SparkListenerTaskEnd\",\"Task Info\":{\"Task ID\":1}",
            "{\"Event\":\"SparkListenerTaskEnd\",\"Task Info\":{\"Task ID\":1}}x",
            "{\"Event\":\"SparkListenerTaskEnd\",\"Task Info\":[1,2}",
            "{\"Event\":\"SparkListenerTaskEnd\",\"X\":\"\\",
        };
        size_t i;
        for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
            assert_int_equal(sp_scan_task(bad[i], strlen(bad[i]), 1, &t), -1);
    }
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_dist_sketch(void **state)
{
    const size_t n = 3 * SP_DIST_EXACT_MAX + 123;
    double *v = malloc(n * sizeof *v), sum = 0;
    static const double ps[] = {0.5, 0.75, 0.9, 0.95, 0.99};
    sp_dist d;
    op_dist o;
    size_t i;

    (void)state;
    assert_non_null(v);
    memset(&d, 0, sizeof d);
    srand(7);
    for (i = 0; i < n; i++) {
        /* long-tailed task times, some zeros */
        double u = (rand() + 1.0) / ((double)RAND_MAX + 2.0);
        v[i] = i % 17 == 0 ? 0 : floor(1000 * exp(2.0 * (u - 0.5) * 3));
        sum += v[i];
        sp_dist_add(&d, v[i]);
    }
    assert_non_null(d.bins); /* switched to the sketch */
    assert_int_equal(sp_dist_finish(&d, &o), 0);
    qsort(v, n, sizeof *v, cmp_d);
    assert_true(o.count == (double)n);
    assert_true(o.min == v[0] && o.max == v[n - 1]);
    assert_true(fabs(o.sum - sum) < 1e-6 * sum);
    for (i = 0; i < 5; i++) {
        double want = v[(size_t)floor((double)(n - 1) * ps[i] + 0.5)];
        double got = (&o.p50)[i];
        assert_true(fabs(got - want) <= SP_SKETCH_ALPHA * want + 1e-9);
    }
    free(v);

    /* exact below the cap, with numpy's interpolation */
    memset(&d, 0, sizeof d);
    for (i = 1; i <= 10; i++)
        sp_dist_add(&d, (double)i);
    assert_int_equal(sp_dist_finish(&d, &o), 0);
    assert_true(o.p50 == 5.5 && fabs(o.p90 - 9.1) < 1e-12);
}

/* Memory is bounded by stages, not tasks: a 20 000-task stage keeps no
 * per-task state once it ended (checked through the live-task set). */
static void test_live_tasks_bounded(void **state)
{
    sp_app a;
    sp_task t;
    sp_stage *s;
    int64_t i;

    (void)state;
    sp_app_init(&a, NULL, "x");
    s = sp_stage_get(&a, 0, 0);
    assert_non_null(s);
    s->live = 1;
    s->seen_submit = 1;
    s->status = SP_ST_ACTIVE;
    memset(&t, 0, sizeof t);
    for (i = 0; i < 20000; i++) {
        t.task_id = i;
        t.launch = 1;
        t.finish = 2;
        t.has_metrics = 1;
        t.m.run_ms = 1;
        sp_on_task_start(&a, &t);
        sp_on_task_end(&a, &t);
    }
    assert_int_equal(a.live.n, 0);
    assert_int_equal(s->sum.run_ms, 20000);
    sp_app_free(&a);
}

/* Bad input never crashes: random byte damage to a real-shaped log, run
 * through the whole plugin (the scanner and cJSON), and to single task
 * lines through the scanner. Deterministic (fixed seed). */
static void test_mutations(void **state)
{
    dbuf text = fixture_text("failures.zstd");
    size_t n = text.n < 60000 ? text.n : 60000, round;
    static const char bytes[] = {'{', '}', '[', ']', '\\', '"', ',', ':',
                                 '0', '\n', '\0', 'a', 'Z'};
    unsigned seed = 12345;
    char *copy = malloc(n + 1);

    (void)state;
    assert_non_null(copy);
    for (round = 0; round < 200; round++) {
        op_stream *in = NULL;
        op_error err = {0, ""};
        model *m = model_new();
        op_builder *b = model_builder_new(m, "mutant");
        int k;
        memcpy(copy, text.p, n);
        copy[n] = 0;
        for (k = 0; k < 40; k++) {
            seed = seed * 1103515245u + 12345u;
            copy[(seed >> 8) % n] = bytes[(seed >> 3) % sizeof bytes];
        }
        assert_int_equal(input_open_mem("mutant", copy, n, NULL, &in, &err), 0);
        (void)spark_read(in, b, &err);
        input_close(in);
        model_builder_free(b);
        model_freeze(m);
        model_free(m);
    }
    for (round = 0; round < 20000; round++) {
        char line[2048];
        const char *src = strstr((const char *)text.p, "{\"Event\":\"SparkListenerTaskEnd");
        size_t len;
        sp_task t;
        int k;
        assert_non_null(src);
        len = (size_t)(strchr(src, '\n') - src);
        if (len >= sizeof line)
            len = sizeof line - 1;
        memcpy(line, src, len);
        line[len] = 0;
        for (k = 0; k < 3; k++) {
            seed = seed * 1103515245u + 12345u;
            line[(seed >> 8) % len] = (char)(seed >> 16);
        }
        (void)sp_scan_task(line, strlen(line), 1, &t);
        (void)sp_scan_task(line, strlen(line), 0, &t);
    }
    free(copy);
    free(text.p);
}

static void db_s(dbuf *b, const char *s)
{
    db_add(b, s, strlen(s));
}

/* Hostile numbers: 1e400 and 2^64 + 1 are out of range; each is named
 * with its line and field, left out of the stage's sums and distributions
 * (before, the fast scanner clamped them to INT64_MAX: "slowest task ran
 * 106751991167d"), and repeats are counted, not listed. */
static void test_out_of_range_numbers(void **state)
{
    dbuf t = {0};
    model *m;
    const struct op_run *r;
    const struct op_node *s;
    const op_dist *d;
    char line[64];
    int i;
    sp_task task;
    const char *huge = TEND(2, "{\"Reason\":\"Success\"}", 1e400);

    (void)state;
    /* the scanner gives such lines to cJSON (which names the value) */
    assert_int_equal(sp_scan_task(huge, strlen(huge) - 1, 1, &task), -1);
    db_s(&t, LOGSTART APPSTART STAGESUB(0, 12)
           TSTART(1) TEND(1, "{\"Reason\":\"Success\"}", 100) /* line 5 */
           TSTART(2) TEND(2, "{\"Reason\":\"Success\"}", 1e400) /* 7 */
           TSTART(3) TEND(3, "{\"Reason\":\"Success\"}",
                          18446744073709551617)); /* line 9 */
    for (i = 4; i < 12; i++) { /* lines 11, 13, ...: repeats */
        snprintf(line, sizeof line, "%d", i);
        db_s(&t, "{\"Event\":\"SparkListenerTaskStart\",\"Stage ID\":0,"
                   "\"Task Info\":{\"Task ID\":");
        db_s(&t, line);
        db_s(&t, ",\"Launch Time\":1200}}\n{\"Event\":\"SparkListenerTaskEnd\","
                   "\"Stage ID\":0,\"Task End Reason\":{\"Reason\":\"Success\"},"
                   "\"Task Info\":{\"Task ID\":");
        db_s(&t, line);
        db_s(&t, ",\"Launch Time\":1200,\"Finish Time\":1300},"
                   "\"Task Metrics\":{\"Executor Run Time\":-9e99}}\n");
    }
    db_s(&t, "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":0,"
               "\"Submission Time\":1e400,\"Stage Infos\":[],\"Stage IDs\":[]}\n"
           STAGEDONE(0, 12) APPEND);
    db_add(&t, "", 1);
    m = parse_text("app-1", (const char *)t.p);
    r = m->runs[0];
    s = tm_node(r, "stage-0-0");
    assert_true(tm_has_warning(r, "line 7: Task Metrics.Executor Run Time "
                                  "above 1.8e308 is out of range"));
    assert_true(tm_has_warning(r, "line 9: Task Metrics.Executor Run Time "
                                  "1.8446744073709552e+19 is out of range"));
    assert_true(tm_has_warning(r, "line 11: Task Metrics.Executor Run Time "
                                  "-8.99999"));
    assert_false(tm_has_warning(r, "line 13: "));
    assert_true(tm_has_warning(r, "Task Metrics.Executor Run Time: 10 "
                                  "out-of-range values in all"));
    assert_true(tm_has_warning(r, "line 26: Submission Time above 1.8e308"));
    /* absent, not clamped: the sum and the slowest task are task 1's */
    assert_int_equal(tm_inum(&s->metrics, "executor_run_ms"), 100);
    assert_int_equal(tm_inum(&s->metrics, "slowest_task_run_ms"), 100);
    assert_int_equal(tm_inum(&s->metrics, "completed_tasks"), 11);
    d = tm_dist(s, "executor_run_ms");
    assert_non_null(d);
    assert_true(d->count == 1 && d->max == 100);
    assert_true(tm_dist(s, "gc_ms")->count == 11); /* the others are there */
    assert_true(tm_node(r, "job-0")->started_at <= 0);
    model_free(m);
    free(t.p);
}

/* Sums of in-range values can still pass 2^63: they stop at the bound,
 * and the warning says the stage's sums are lower bounds. */
static void test_saturated_sums(void **state)
{
    dbuf t = {0};
    model *m;
    const struct op_run *r;
    char num[32];
    int i;

    (void)state;
    db_s(&t, LOGSTART APPSTART STAGESUB(0, 1100));
    for (i = 0; i < 1100; i++) { /* 1100 x 2^53 > 2^63 */
        snprintf(num, sizeof num, "%d", i);
        db_s(&t, "{\"Event\":\"SparkListenerTaskStart\",\"Stage ID\":0,"
                 "\"Task Info\":{\"Task ID\":");
        db_s(&t, num);
        db_s(&t, "}}\n{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,"
                 "\"Task Info\":{\"Task ID\":");
        db_s(&t, num);
        db_s(&t, "},\"Task Metrics\":{\"Executor Run Time\":9007199254740992}}\n");
    }
    db_s(&t, STAGEDONE(0, 1100) APPEND);
    db_add(&t, "", 1);
    m = parse_text("app-1", (const char *)t.p);
    r = m->runs[0];
    assert_int_equal(tm_inum(&tm_node(r, "stage-0-0")->metrics,
                             "executor_run_ms"), INT64_MAX);
    assert_true(tm_has_warning(r, "1 stage attempts (the first stage-0-0) "
                                  "have task sums beyond +-2^63"));
    assert_false(tm_has_warning(r, "out of range")); /* 2^53 is in range */
    model_free(m);
    free(t.p);
}

/* Duplicated keys: Spark's reader (Jackson readTree) keeps the last value;
 * the scanner gives such lines to cJSON, which is made to agree, and the
 * line and key are named. Large objects (Spark Properties) too. */
static void test_duplicate_keys(void **state)
{
    static const char dup_task[] =
        "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":0,"
        "\"Task End Reason\":{\"Reason\":\"Success\"},\"Task Info\":{"
        "\"Task ID\":1,\"Launch Time\":1200,\"Finish Time\":1300},"
        "\"Task Metrics\":{\"Executor Run Time\":10,\"JVM GC Time\":1,"
        "\"Executor Run Time\":20}}\n";
    dbuf t = {0};
    model *m;
    const struct op_run *r;
    sp_task task;
    int i;

    (void)state;
    assert_int_equal(sp_scan_task(dup_task, sizeof dup_task - 2, 1, &task), -1);
    db_s(&t, LOGSTART
           "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"first\","
           "\"App ID\":\"app-1\",\"Timestamp\":1000,\"App Name\":\"last\"}\n"
           STAGESUB(0, 1) TSTART(1));
    db_s(&t, dup_task); /* line 5 */
    db_s(&t, "{\"Event\":\"SparkListenerEnvironmentUpdate\","
               "\"Spark Properties\":{");
    for (i = 0; i < 40; i++) { /* sorted path: more than 16 members */
        char kv[64];
        snprintf(kv, sizeof kv, "%s\"spark.k%d\":\"v%d\"", i ? "," : "",
                 i % 30, i);
        db_s(&t, kv);
    }
    db_s(&t, "}}\n" STAGEDONE(0, 1) APPEND);
    db_add(&t, "", 1);
    m = parse_text("app-1", (const char *)t.p);
    r = m->runs[0];
    assert_string_equal(r->name, "last");
    assert_true(tm_has_warning(r, "line 2: key App Name appears more than "
                                  "once; the last value is used"));
    assert_true(tm_has_warning(r, "line 5: key Task Metrics.Executor Run "
                                  "Time appears more than once"));
    assert_int_equal(tm_inum(&tm_node(r, "stage-0-0")->metrics,
                             "executor_run_ms"), 20);
    assert_string_equal(tm_str(&r->config, "spark.k3"), "v33");
    assert_string_equal(tm_str(&r->config, "spark.k29"), "v29");
    assert_true(tm_has_warning(r, "12 duplicated keys in all"));
    model_free(m);
    free(t.p);
}

/* What a log claims is capped: stage attempts, jobs, SQL executions and
 * executors past SP_MAX_* are left out with one warning naming the line
 * where the cap hit, and the count at the end; lookups go through hash
 * indexes (before, a log of 1 M one-stage jobs took hours: linear job
 * lookups, and ~9 KB per stage without a cap). */
static void test_caps(void **state)
{
    sp_app a;
    cJSON *job = cJSON_Parse("{\"Job ID\":0,\"Stage Infos\":[]}");
    cJSON *sql = cJSON_Parse("{\"executionId\":0,\"time\":5}");
    cJSON *ex = cJSON_Parse("{\"Executor ID\":\"\",\"Timestamp\":5}");
    char id[32];
    int64_t i;

    (void)state;
    assert_non_null(job);
    assert_non_null(sql);
    assert_non_null(ex);
    sp_app_init(&a, NULL, "x");
    for (i = 0; i <= SP_MAX_STAGES; i++) {
        a.last_line_no = (uint64_t)i + 1;
        if (i < SP_MAX_STAGES)
            assert_non_null(sp_stage_get(&a, i / 2, i % 2));
        else
            assert_null(sp_stage_get(&a, i / 2, i % 2));
    }
    assert_false(a.oom);
    assert_non_null(sp_stage_find(&a, 7, 1)); /* still found */
    assert_non_null(sp_stage_get(&a, 0, 0));  /* known ones still given */
    for (i = 0; i <= SP_MAX_JOBS; i++) {
        cJSON_SetNumberValue(cJSON_GetObjectItem(job, "Job ID"), (double)i);
        cJSON_SetNumberValue(cJSON_GetObjectItem(sql, "executionId"),
                             (double)i);
        snprintf(id, sizeof id, "%lld", (long long)i);
        cJSON_SetValuestring(cJSON_GetObjectItem(ex, "Executor ID"), id);
        sp_on_event(&a, "SparkListenerJobStart", job);
        sp_on_event(&a, "SparkListenerSQLExecutionStart", sql);
        sp_on_event(&a, "SparkListenerExecutorAdded", ex);
        sp_on_event(&a, "SparkListenerExecutorRemoved", ex);
    }
    assert_false(a.oom);
    assert_int_equal(a.njobs, SP_MAX_JOBS);
    assert_int_equal(a.nsqls, SP_MAX_SQLS);
    assert_int_equal(a.nexecs, SP_MAX_EXECS);
    assert_int_equal(a.execs[5].removed_at, 5); /* found again by id */
    sp_limit_warnings(&a);
    assert_string_equal(a.warnings[0],
                        "line 50001: more than 50000 stage attempts; later "
                        "stage attempts have no node and their tasks count "
                        "as orphan task ends, so run totals cover only the "
                        "first ones");
    assert_non_null(strstr(a.warnings[1], "more than 50000 jobs"));
    assert_non_null(strstr(a.warnings[2], "more than 50000 SQL executions"));
    assert_non_null(strstr(a.warnings[3], "more than 50000 executors"));
    assert_non_null(strstr(a.warnings[4], "1 events about stage attempts "
                                          "past the first 50000 were left "
                                          "out (the first at line 50001)"));
    assert_non_null(strstr(a.warnings[7], "2 events about executors"));
    sp_app_free(&a);
    cJSON_Delete(job);
    cJSON_Delete(sql);
    cJSON_Delete(ex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_expectations),
        cmocka_unit_test(test_real_app),
        cmocka_unit_test(test_real_all_parse),
        cmocka_unit_test(test_real_details),
        cmocka_unit_test(test_codecs),
        cmocka_unit_test(test_in_progress_compressed),
        cmocka_unit_test(test_rolling),
        cmocka_unit_test(test_task_outcomes),
        cmocka_unit_test(test_malformed_and_cut),
        cmocka_unit_test(test_old_schema),
        cmocka_unit_test(test_attempts),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_scanner_matches_cjson),
        cmocka_unit_test(test_dist_sketch),
        cmocka_unit_test(test_live_tasks_bounded),
        cmocka_unit_test(test_mutations),
        cmocka_unit_test(test_out_of_range_numbers),
        cmocka_unit_test(test_saturated_sums),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_caps),
    };
    int rc = cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);

    if (!is_dir(REAL)) {
        printf("NOTICE: %s is absent; the real-log tests were skipped\n",
               REAL);
        return rc ? rc : 77;
    }
    return rc;
}
