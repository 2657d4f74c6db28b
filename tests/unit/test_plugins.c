/*
 * test_plugins.c - the plugin registry (core/plugins.c): validation of
 * built-in, static and .so descriptors, loading from a path, the trust
 * check, detection, and the SDK example plugin (build/plugins/
 * optipipe-csv.so) parsing through a recording builder, so that this test
 * depends on no other core module.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optipipe/json.h>

#include "plugins.h"

#define CSV_SO OP_BINARY_DIR "/plugins/optipipe-csv.so"
#define TEST_SO_DIR OP_BINARY_DIR "/test-plugins"

extern const op_plugin *const op_builtin_plugins[];

static void assert_has(const char *msg, const char *want)
{
    if (!strstr(msg, want))
        fail_msg("message \"%s\" lacks \"%s\"", msg, want);
}

/* --- static descriptors -------------------------------------------------- */

static int det_zero(const op_probe *p) { (void)p; return 0; }
static int det_neg(const op_probe *p) { (void)p; return -5; }
static int det_40(const op_probe *p) { (void)p; return 40; }
static int det_90(const op_probe *p) { (void)p; return 90; }
static int det_100(const op_probe *p) { (void)p; return 100; }
static int det_huge(const op_probe *p) { (void)p; return 1000; }

static int parse_ok(op_stream *in, op_builder *b, op_error *err)
{
    (void)in;
    (void)b;
    (void)err;
    return 0;
}

static op_plugin good(const char *name, int (*detect)(const op_probe *))
{
    op_plugin p = {OP_PLUGIN_HEADER, .name = name, .version = "1.0",
                   .description = "test", .detect = detect,
                   .parse = parse_ok};
    return p;
}

static void test_builtins_validate(void **state)
{
    plugin_reg *reg = plugins_new();
    op_error err;
    size_t n = 0;

    (void)state;
    op_error_clear(&err);
    if (plugins_add_builtins(reg, &err))
        fail_msg("%s", err.msg);
    while (op_builtin_plugins[n])
        n++;
    assert_int_equal(plugins_count(reg), n);
    for (size_t i = 0; i < n; i++) {
        const char *path = "x";
        const op_plugin *p = plugins_get(reg, i, &path);
        assert_non_null(p);
        assert_null(path);
        assert_string_equal(p->name, op_builtin_plugins[i]->name);
        assert_ptr_equal(plugins_find(reg, p->name), p);
        printf("built-in plugin %s %s\n", p->name, p->version);
    }
    /* Registering them twice is a duplicate, not a crash. */
    if (n) {
        assert_int_equal(plugins_add_builtins(reg, &err), OP_EUSAGE);
        assert_has(err.msg, "same name as the built-in plugin");
    }
    plugins_free(reg);
}

typedef struct refusal {
    const char *what;
    op_plugin p;
    int code;
    const char *want[3];
} refusal;

static void test_static_refusals(void **state)
{
    refusal cases[12];
    size_t n = 0;
    plugin_reg *reg = plugins_new();
    op_error err;
    op_plugin p;
    char major_msg[160], minor_msg[160], abi[40], builtin_msg[80];

    (void)state;
    snprintf(major_msg, sizeof major_msg,
             "plugin 'bad' (/p/bad.so) was built for ABI %d.%d; this "
             "optipipe speaks ABI %d.%d",
             OP_ABI_MAJOR + 1, OP_ABI_MINOR, OP_ABI_MAJOR, OP_ABI_MINOR);
    snprintf(minor_msg, sizeof minor_msg,
             "plugin 'bad' (/p/bad.so) was built for ABI %d.%d; this "
             "optipipe speaks ABI %d.%d",
             OP_ABI_MAJOR, OP_ABI_MINOR + 1, OP_ABI_MAJOR, OP_ABI_MINOR);
    snprintf(abi, sizeof abi, "(/p/bad.so, ABI %d.%d)", OP_ABI_MAJOR,
             OP_ABI_MINOR);
    snprintf(builtin_msg, sizeof builtin_msg,
             "plugin 'bad' (built-in, ABI %d.%d) has no parse", OP_ABI_MAJOR,
             OP_ABI_MINOR);
    p = good("bad", det_40);
    p.magic = 0x12345678;
    cases[n++] = (refusal){"magic", p, OP_EABI,
                           {"/p/bad.so is not an optipipe plugin",
                            "0x12345678", NULL}};
    p = good("bad", det_40);
    p.abi_major = OP_ABI_MAJOR + 1;
    cases[n++] = (refusal){"major", p, OP_EABI,
                           {major_msg, "rebuild", NULL}};
    p = good("bad", det_40);
    p.abi_minor = OP_ABI_MINOR + 1;
    cases[n++] = (refusal){"minor", p, OP_EABI,
                           {minor_msg, "upgrade optipipe", NULL}};
    p = good("bad", det_40);
    p.struct_size = 24;
    cases[n++] = (refusal){"size", p, OP_EABI,
                           {abi, "24-byte descriptor", NULL}};
    p = good("bad", det_40);
    p.flags = 1;
    cases[n++] = (refusal){"flags", p, OP_EABI, {"sets flags 0x1", NULL}};
    p = good(NULL, det_40);
    cases[n++] = (refusal){"name", p, OP_EABI,
                           {"plugin '?' (/p/bad.so, ABI", "has no name",
                            NULL}};
    p = good("bad", det_40);
    p.version = NULL;
    cases[n++] = (refusal){"version", p, OP_EABI, {"has no version", NULL}};
    p = good("bad", NULL);
    cases[n++] = (refusal){"detect", p, OP_EABI,
                           {"has no detect function", NULL}};
    p = good("bad", det_40);
    p.parse = NULL;
    cases[n++] = (refusal){"parse", p, OP_EABI,
                           {abi, "has no parse function", NULL}};
    p = good("two words", det_40);
    cases[n++] = (refusal){"bad name", p, OP_EABI, {"invalid name", NULL}};
    p = good("", det_40);
    cases[n++] = (refusal){"empty name", p, OP_EABI, {"invalid name", NULL}};

    for (size_t i = 0; i < n; i++) {
        op_error_clear(&err);
        int rc = plugins_add(reg, &cases[i].p, "/p/bad.so", &err);
        if (rc != cases[i].code)
            fail_msg("%s: rc %d (%s), want %d", cases[i].what, rc, err.msg,
                     cases[i].code);
        for (size_t k = 0; k < 3 && cases[i].want[k]; k++)
            assert_has(err.msg, cases[i].want[k]);
    }
    assert_int_equal(plugins_count(reg), 0);

    /* NULL descriptor, e.g. an entry function returning NULL. */
    assert_int_equal(plugins_add(reg, NULL, "/p/null.so", &err), OP_EABI);
    assert_has(err.msg, "/p/null.so returned no descriptor");

    /* Built-in refusals say "built-in" where the path goes. */
    p = good("bad", det_40);
    p.parse = NULL;
    assert_int_equal(plugins_add(reg, &p, NULL, &err), OP_EABI);
    assert_has(err.msg, builtin_msg);
    plugins_free(reg);
}

static void test_duplicates_and_stable_pointers(void **state)
{
    plugin_reg *reg = plugins_new();
    op_error err;
    op_plugin a = good("dup", det_40), b = good("dup", det_90);
    char names[40][8];
    op_plugin many[40];
    const op_plugin *first;

    (void)state;
    assert_int_equal(plugins_add(reg, &a, NULL, &err), OP_OK);
    assert_int_equal(plugins_add(reg, &b, "/p/dup.so", &err), OP_EUSAGE);
    assert_has(err.msg, "plugin 'dup' (/p/dup.so) has the same name as the "
                        "built-in plugin");
    first = plugins_find(reg, "dup");
    assert_ptr_equal(first->detect, det_40);
    /* The registry copies descriptors and its pointers survive growth. */
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "p%d", i);
        many[i] = good(names[i], det_zero);
        assert_int_equal(plugins_add(reg, &many[i], "/p/x.so", &err), OP_OK);
    }
    assert_ptr_equal(plugins_find(reg, "dup"), first);
    assert_int_equal(plugins_count(reg), 41);
    assert_int_equal(plugins_add(reg, &many[7], "/p/y.so", &err), OP_EUSAGE);
    assert_has(err.msg, "plugin 'p7' (/p/y.so) has the same name as the "
                        "plugin already loaded from /p/x.so");
    assert_null(plugins_find(reg, "nope"));
    assert_null(plugins_get(reg, 41, NULL));
    plugins_free(reg);
}

/* A plugin built when op_plugin ended at parse (the 1.0 minimum) has a
 * shorter descriptor: whatever lies past its struct_size is not its data
 * and must read as zero (NULL optional callbacks) in the registry. */
static void test_short_descriptor_is_zero_padded(void **state)
{
    size_t min = offsetof(op_plugin, parse) + sizeof(void (*)(void));
    plugin_reg *reg = plugins_new();
    op_error err;
    op_plugin p = good("old", det_40);
    const op_plugin *got;
    const unsigned char *tail;

    (void)state;
    p.struct_size = (uint32_t)min;
    memset((unsigned char *)&p + min, 0xa5, sizeof p - min);
    assert_int_equal(plugins_add(reg, &p, "/p/old.so", &err), OP_OK);
    got = plugins_find(reg, "old");
    assert_ptr_equal(got->parse, parse_ok);
    assert_int_equal(got->struct_size, min);
    tail = (const unsigned char *)got + min;
    for (size_t i = 0; i < sizeof *got - min; i++)
        assert_int_equal(tail[i], 0);
    plugins_free(reg);
}

/* --- detection ----------------------------------------------------------- */

static int detect_with(const op_plugin *ps, size_t n, const char **winner,
                       op_error *err)
{
    plugin_reg *reg = plugins_new();
    const op_plugin *out = NULL;
    op_probe probe = {.path = "/in/x.json", .basename = "x.json",
                      .head = (const unsigned char *)"{}", .head_len = 2};
    int rc;

    for (size_t i = 0; i < n; i++)
        assert_int_equal(plugins_add(reg, &ps[i], NULL, err), OP_OK);
    op_error_clear(err);
    rc = plugins_detect(reg, &probe, &out, err);
    *winner = out ? out->name : NULL;
    if (rc)
        assert_null(out);
    plugins_free(reg);
    return rc;
}

static void test_detect(void **state)
{
    op_error err;
    const char *w;
    op_plugin highest[] = {good("zero", det_zero), good("forty", det_40),
                           good("ninety", det_90), good("neg", det_neg)};
    op_plugin tie[] = {good("alpha", det_90), good("forty", det_40),
                       good("beta", det_90)};
    op_plugin low_tie[] = {good("a", det_40), good("b", det_40),
                           good("c", det_90)};
    op_plugin clamp[] = {good("huge", det_huge), good("hundred", det_100)};
    op_plugin none[] = {good("zero", det_zero), good("neg", det_neg)};

    (void)state;
    assert_int_equal(detect_with(highest, 4, &w, &err), OP_OK);
    assert_string_equal(w, "ninety");

    assert_int_equal(detect_with(tie, 3, &w, &err), OP_EUSAGE);
    assert_has(err.msg, "/in/x.json: plugins 'alpha' and 'beta' both claim "
                        "this input with score 90");

    assert_int_equal(detect_with(low_tie, 3, &w, &err), OP_OK);
    assert_string_equal(w, "c");

    /* 1000 is clamped to 100, which ties with a real 100. */
    assert_int_equal(detect_with(clamp, 2, &w, &err), OP_EUSAGE);
    assert_has(err.msg, "'huge' and 'hundred'");
    assert_has(err.msg, "score 100");

    assert_int_equal(detect_with(none, 2, &w, &err), OP_ENOTFOUND);
    assert_has(err.msg, "/in/x.json: no plugin recognizes this input");

    assert_int_equal(detect_with(none, 0, &w, &err), OP_ENOTFOUND);
}

/* --- .so files ----------------------------------------------------------- */

static void test_load_csv_so(void **state)
{
    plugin_reg *reg = plugins_new();
    op_error err;
    const char *path = NULL;
    const op_plugin *p;
    static const char head[] = "stage,task,duration_ms\n0,0,12\n";
    op_probe probe = {.path = "t.csv", .basename = "t.csv",
                      .head = (const unsigned char *)head,
                      .head_len = sizeof head - 1};

    (void)state;
    op_error_clear(&err);
    if (plugins_load_file(reg, CSV_SO, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(plugins_count(reg), 1);
    p = plugins_get(reg, 0, &path);
    assert_string_equal(p->name, "csv");
    assert_string_equal(path, CSV_SO);
    assert_int_equal(p->abi_major, OP_ABI_MAJOR);
    assert_int_equal(p->detect(&probe), 90);
    probe.head = (const unsigned char *)"{\"flink_rest_export\": 1}";
    probe.head_len = strlen((const char *)probe.head);
    assert_int_equal(p->detect(&probe), 0);

    /* Loading the same file again is a duplicate naming the first path. */
    assert_int_equal(plugins_load_file(reg, CSV_SO, &err), OP_EUSAGE);
    assert_has(err.msg, "plugin 'csv' (" CSV_SO ") has the same name as the "
                        "plugin already loaded from " CSV_SO);
    plugins_free(reg);
}

static void test_load_refusals(void **state)
{
    plugin_reg *reg = plugins_new();
    op_error err;
    char want[512];

    (void)state;
    assert_int_equal(plugins_load_file(reg, TEST_SO_DIR "/noentry.so", &err),
                     OP_EABI);
    assert_has(err.msg, "plugin " TEST_SO_DIR "/noentry.so does not export "
                        "op_plugin_entry()");

    assert_int_equal(plugins_load_file(reg, TEST_SO_DIR "/abi2.so", &err),
                     OP_EABI);
    snprintf(want, sizeof want,
             "plugin 'future' (%s/abi2.so) was built for ABI %d.0; this "
             "optipipe speaks ABI %d.%d",
             TEST_SO_DIR, OP_ABI_MAJOR + 1, OP_ABI_MAJOR, OP_ABI_MINOR);
    assert_has(err.msg, want);

    assert_int_equal(plugins_load_file(reg, TEST_SO_DIR "/missing.so", &err),
                     OP_ENOTFOUND);
    assert_has(err.msg, TEST_SO_DIR "/missing.so");

    /* Not a shared object at all. */
    assert_int_equal(
        plugins_load_file(reg, OP_SOURCE_DIR "/fixtures/csv/tasks.csv", &err),
        OP_EABI);
    assert_has(err.msg, "cannot load plugin " OP_SOURCE_DIR);

    assert_int_equal(plugins_load_file(reg, TEST_SO_DIR, &err), OP_EUSAGE);
    assert_has(err.msg, "not a regular file");
    assert_int_equal(plugins_count(reg), 0);
    plugins_free(reg);
}

static int copy_file(const char *from, const char *to)
{
    char buf[65536];
    size_t n;
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    int rc = 0;

    if (!in || !out)
        rc = -1;
    while (!rc && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out))
        rc = -1;
    return rc;
}

/* Files and directories others could write to are refused; a sticky
 * directory (like /tmp) is fine. */
static void test_writable_refused(void **state)
{
    char dir[] = "/tmp/op-test-plugins-XXXXXX";
    char file[64];
    plugin_reg *reg = plugins_new();
    op_error err;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/csv.so", dir);
    assert_int_equal(copy_file(CSV_SO, file), 0);

    assert_int_equal(chmod(file, 0666), 0);
    assert_int_equal(plugins_load_file(reg, file, &err), OP_EUSAGE);
    assert_has(err.msg, "refusing to load plugin");
    assert_has(err.msg, "group- or world-writable (mode 666)");

    assert_int_equal(chmod(file, 0644), 0);
    assert_int_equal(chmod(dir, 0777), 0);
    assert_int_equal(plugins_load_file(reg, file, &err), OP_EUSAGE);
    assert_has(err.msg, "its directory");

    assert_int_equal(chmod(dir, 01777), 0);
    op_error_clear(&err);
    if (plugins_load_file(reg, file, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(plugins_count(reg), 1);
    plugins_free(reg);

    unlink(file);
    rmdir(dir);
}

typedef struct errors {
    char msg[8][OP_ERROR_MAX];
    size_t n;
} errors;

static void collect(const char *msg, void *ud)
{
    errors *e = ud;
    if (e->n < 8)
        snprintf(e->msg[e->n], sizeof e->msg[e->n], "%s", msg);
    e->n++;
}

static void test_load_path(void **state)
{
    plugin_reg *reg = plugins_new();
    errors e = {.n = 0};

    (void)state;
    plugins_load_path(reg,
                      TEST_SO_DIR "::" OP_BINARY_DIR
                                  "/no-such-plugin-dir:" OP_BINARY_DIR
                                  "/plugins",
                      collect, &e);
    /* Sorted within a directory: abi2.so before noentry.so. */
    assert_int_equal(e.n, 3);
    assert_has(e.msg[0], "abi2.so");
    assert_has(e.msg[1], "noentry.so");
    assert_has(e.msg[2], "no-such-plugin-dir");
    assert_int_equal(plugins_count(reg), 1);
    assert_non_null(plugins_find(reg, "csv"));
    plugins_load_path(reg, "", collect, &e);
    assert_int_equal(e.n, 3);
    plugins_free(reg);
}

/* --- the csv example, through a recording builder and a memory stream ---- */

#define MB_MAX 64

typedef struct kv {
    char k[32];
    double v;
} kv;

typedef struct mdistrec {
    char metric[32];
    size_t count;
    double sum, max;
} mdistrec;

typedef struct mnode {
    char id[160], kind[32], name[160];
    int64_t parallelism;
    kv metrics[16];
    size_t nmetrics;
    mdistrec dists[4];
    size_t ndists;
} mnode;

typedef struct mock_builder {
    op_builder base;
    size_t nruns;
    char source[32], id[64], name[64];
    kv metrics[16];
    size_t nmetrics;
    mnode nodes[MB_MAX];
    size_t nnodes;
    char warnings[MB_MAX][OP_ERROR_MAX];
    size_t nwarnings;
} mock_builder;

static void put_kv(kv *a, size_t *n, size_t cap, const char *k, double v)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(a[i].k, k) == 0) {
            a[i].v = v;
            return;
        }
    assert_true(*n < cap);
    snprintf(a[*n].k, sizeof a[*n].k, "%s", k);
    a[(*n)++].v = v;
}

static const kv *get_kv(const kv *a, size_t n, const char *k)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(a[i].k, k) == 0)
            return &a[i];
    return NULL;
}

static op_run *mb_run(op_builder *b, const char *source, const char *id)
{
    mock_builder *m = (mock_builder *)b;
    if (!m->nruns++) {
        snprintf(m->source, sizeof m->source, "%s", source);
        snprintf(m->id, sizeof m->id, "%s", id);
    }
    return (op_run *)m->id;
}

static void mb_run_str(op_builder *b, op_run *r, enum op_field f,
                       const char *v)
{
    mock_builder *m = (mock_builder *)b;
    if (f == OP_F_NAME)
        snprintf(m->name, sizeof m->name, "%s", v);
}

static void mb_run_int(op_builder *b, op_run *r, enum op_ifield f, int64_t v)
{
}

static void mb_run_config(op_builder *b, op_run *r, const char *k,
                          const char *v)
{
}

static void mb_run_metric(op_builder *b, op_run *r, const char *k, double v)
{
    mock_builder *m = (mock_builder *)b;
    put_kv(m->metrics, &m->nmetrics, 16, k, v);
}

static void mb_run_metric_int(op_builder *b, op_run *r, const char *k,
                              int64_t v)
{
    mb_run_metric(b, r, k, (double)v);
}

static void mb_run_warning(op_builder *b, op_run *r, const char *msg)
{
    mock_builder *m = (mock_builder *)b;
    assert_true(m->nwarnings < MB_MAX);
    snprintf(m->warnings[m->nwarnings++], OP_ERROR_MAX, "%s", msg);
}

static op_node *mb_node(op_builder *b, op_run *r, const char *id)
{
    mock_builder *m = (mock_builder *)b;
    for (size_t i = 0; i < m->nnodes; i++)
        if (strcmp(m->nodes[i].id, id) == 0)
            return (op_node *)&m->nodes[i];
    assert_true(m->nnodes < MB_MAX);
    snprintf(m->nodes[m->nnodes].id, sizeof m->nodes[0].id, "%s", id);
    return (op_node *)&m->nodes[m->nnodes++];
}

static void mb_node_str(op_builder *b, op_node *n, enum op_field f,
                        const char *v)
{
    mnode *x = (mnode *)n;
    if (f == OP_F_KIND)
        snprintf(x->kind, sizeof x->kind, "%s", v);
    else if (f == OP_F_NAME)
        snprintf(x->name, sizeof x->name, "%s", v);
}

static void mb_node_int(op_builder *b, op_node *n, enum op_ifield f,
                        int64_t v)
{
    if (f == OP_I_PARALLELISM)
        ((mnode *)n)->parallelism = v;
}

static void mb_node_parent(op_builder *b, op_node *n, const char *p)
{
}

static void mb_node_metric(op_builder *b, op_node *n, const char *k,
                           double v)
{
    mnode *x = (mnode *)n;
    put_kv(x->metrics, &x->nmetrics, 16, k, v);
}

static void mb_node_metric_int(op_builder *b, op_node *n, const char *k,
                               int64_t v)
{
    mb_node_metric(b, n, k, (double)v);
}

static void mb_node_attr(op_builder *b, op_node *n, const char *k,
                         const char *v)
{
}

static void mb_node_dist(op_builder *b, op_node *n, const char *metric,
                         const op_dist *d)
{
}

static void mb_node_dist_values(op_builder *b, op_node *n,
                                const char *metric, const double *v,
                                size_t count)
{
    mnode *x = (mnode *)n;
    mdistrec *d;

    assert_true(x->ndists < 4);
    d = &x->dists[x->ndists++];
    snprintf(d->metric, sizeof d->metric, "%s", metric);
    for (size_t i = 0; i < count; i++) {
        if (isnan(v[i]))
            continue;
        d->count++;
        d->sum += v[i];
        d->max = v[i] > d->max ? v[i] : d->max;
    }
}

static op_record *mb_series_append(op_builder *b, op_run *r, const char *s)
{
    return NULL;
}

static void mb_record_num(op_builder *b, op_record *rec, const char *k,
                          double v)
{
}

static void mb_record_int(op_builder *b, op_record *rec, const char *k,
                          int64_t v)
{
}

static void mb_record_str(op_builder *b, op_record *rec, const char *k,
                          const char *v)
{
}

static void mb_record_bool(op_builder *b, op_record *rec, const char *k,
                           int v)
{
}

static int mb_failed(op_builder *b, op_error *err)
{
    return 0;
}

static const struct op_builder_api mb_api = {
    .size = sizeof(struct op_builder_api),
    .run = mb_run,
    .run_str = mb_run_str,
    .run_int = mb_run_int,
    .run_config = mb_run_config,
    .run_metric = mb_run_metric,
    .run_metric_int = mb_run_metric_int,
    .run_warning = mb_run_warning,
    .node = mb_node,
    .node_str = mb_node_str,
    .node_int = mb_node_int,
    .node_parent = mb_node_parent,
    .node_metric = mb_node_metric,
    .node_metric_int = mb_node_metric_int,
    .node_attr = mb_node_attr,
    .node_dist = mb_node_dist,
    .node_dist_values = mb_node_dist_values,
    .series_append = mb_series_append,
    .record_num = mb_record_num,
    .record_int = mb_record_int,
    .record_str = mb_record_str,
    .record_bool = mb_record_bool,
    .failed = mb_failed,
};

typedef struct mem_stream {
    op_stream base;
    const char *name, *buf;
    size_t len, pos;
    uint64_t line;
    int truncated;
    char line_buf[4096];
} mem_stream;

static long ms_read(op_stream *s, void *buf, size_t n, op_error *err)
{
    mem_stream *m = (mem_stream *)s;
    size_t k = m->len - m->pos < n ? m->len - m->pos : n;
    memcpy(buf, m->buf + m->pos, k);
    m->pos += k;
    return (long)k;
}

static int ms_read_line(op_stream *s, const char **line, size_t *len,
                        op_error *err)
{
    mem_stream *m = (mem_stream *)s;
    const char *start = m->buf + m->pos, *nl;
    size_t n;

    if (m->pos >= m->len)
        return 0;
    nl = memchr(start, '\n', m->len - m->pos);
    n = nl ? (size_t)(nl - start) : m->len - m->pos;
    if (n >= sizeof m->line_buf)
        return op_error_set(err, OP_ELIMIT, "%s: line too long", m->name),
               -1;
    memcpy(m->line_buf, start, n);
    m->line_buf[n] = '\0';
    m->pos += n + (nl ? 1 : 0);
    m->truncated = !nl;
    m->line++;
    *line = m->line_buf;
    *len = n;
    return 1;
}

static int ms_read_all(op_stream *s, const char **buf, size_t *len,
                       op_error *err)
{
    mem_stream *m = (mem_stream *)s;

    (void)err;
    *buf = m->buf; /* the texts given are NUL-terminated */
    *len = m->len;
    m->pos = m->len;
    return 0;
}

static const char *ms_name(const op_stream *s)
{
    return ((const mem_stream *)s)->name;
}

static uint64_t ms_line_no(const op_stream *s)
{
    return ((const mem_stream *)s)->line;
}

static uint64_t ms_offset(const op_stream *s)
{
    return ((const mem_stream *)s)->pos;
}

static int ms_truncated(const op_stream *s)
{
    return ((const mem_stream *)s)->truncated;
}

static const char *ms_codec(const op_stream *s)
{
    return "plain";
}

static const struct op_stream_api ms_api = {
    .size = sizeof(struct op_stream_api),
    .read = ms_read,
    .read_line = ms_read_line,
    .read_all = ms_read_all,
    .name = ms_name,
    .line_no = ms_line_no,
    .offset = ms_offset,
    .truncated = ms_truncated,
    .codec = ms_codec,
};

/* Parses text as the file name with the csv plugin from the .so. */
static int csv_parse_text(const char *name, const char *text, size_t len,
                          mock_builder *mb, op_error *err)
{
    plugin_reg *reg = plugins_new();
    mem_stream *ms = calloc(1, sizeof *ms);
    const op_plugin *p;
    int rc;

    assert_non_null(ms);
    if (plugins_load_file(reg, CSV_SO, err))
        fail_msg("%s", err->msg);
    p = plugins_find(reg, "csv");
    ms->base.api = &ms_api;
    ms->name = name;
    ms->buf = text;
    ms->len = len;
    memset(mb, 0, sizeof *mb);
    mb->base.api = &mb_api;
    op_error_clear(err);
    rc = p->parse(&ms->base, &mb->base, err);
    free(ms);
    plugins_free(reg);
    return rc;
}

static const mnode *find_node(const mock_builder *mb, const char *id)
{
    for (size_t i = 0; i < mb->nnodes; i++)
        if (strcmp(mb->nodes[i].id, id) == 0)
            return &mb->nodes[i];
    fail_msg("no node %s", id);
    return NULL;
}

static double node_metric(const mnode *n, const char *k)
{
    const kv *x = get_kv(n->metrics, n->nmetrics, k);
    if (!x)
        fail_msg("node %s has no metric %s", n->id, k);
    return x->v;
}

static const mdistrec *node_dist(const mnode *n, const char *metric)
{
    for (size_t i = 0; i < n->ndists; i++)
        if (strcmp(n->dists[i].metric, metric) == 0)
            return &n->dists[i];
    return NULL;
}

static void test_csv_fixture(void **state)
{
    static mock_builder mb;
    char text[8192];
    size_t len;
    op_error err;
    FILE *f = fopen(OP_SOURCE_DIR "/fixtures/csv/tasks.csv", "rb");
    const mnode *s0, *s1, *s2;

    (void)state;
    assert_non_null(f);
    len = fread(text, 1, sizeof text, f);
    fclose(f);
    assert_true(len > 0 && len < sizeof text);
    if (csv_parse_text("fixtures/csv/tasks.csv", text, len, &mb, &err))
        fail_msg("%s", err.msg);

    assert_string_equal(mb.source, "csv");
    assert_string_equal(mb.id, "tasks.csv");
    assert_string_equal(mb.name, "tasks.csv");
    assert_int_equal(mb.nwarnings, 0);
    assert_int_equal(mb.nnodes, 3);
    assert_string_equal(mb.nodes[0].id, "stage-0");
    assert_string_equal(mb.nodes[1].id, "stage-1");
    assert_string_equal(mb.nodes[2].id, "stage-2");

    /* Stage 0: 1200 1150 1310 5400 ms; 3 x 128 MiB + 512 MiB. */
    s0 = find_node(&mb, "stage-0");
    assert_string_equal(s0->kind, "stage");
    assert_string_equal(s0->name, "stage 0");
    assert_int_equal(s0->parallelism, 4);
    assert_true(node_metric(s0, "tasks") == 4);
    assert_true(node_metric(s0, "duration_ms") == 5400);
    assert_true(node_metric(s0, "task_time_ms") == 9060);
    assert_true(node_metric(s0, "input_bytes") == 939524096.0);
    assert_int_equal(node_dist(s0, "duration_ms")->count, 4);
    assert_true(node_dist(s0, "duration_ms")->max == 5400);
    assert_int_equal(node_dist(s0, "input_bytes")->count, 4);

    /* Stage 1 has empty input_bytes cells: no byte metric or dist. */
    s1 = find_node(&mb, "stage-1");
    assert_true(node_metric(s1, "duration_ms") == 820);
    assert_true(node_metric(s1, "task_time_ms") == 2380);
    assert_null(get_kv(s1->metrics, s1->nmetrics, "input_bytes"));
    assert_null(node_dist(s1, "input_bytes"));

    s2 = find_node(&mb, "stage-2");
    assert_int_equal(s2->parallelism, 1);
    assert_true(node_metric(s2, "duration_ms") == 30000);

    assert_true(get_kv(mb.metrics, mb.nmetrics, "stages")->v == 3);
    assert_true(get_kv(mb.metrics, mb.nmetrics, "tasks")->v == 8);
    assert_true(get_kv(mb.metrics, mb.nmetrics, "task_time_ms")->v == 41440);
}

static void test_csv_bad_lines(void **state)
{
    static mock_builder mb;
    static const char text[] = "stage,task,duration_ms\r\n" /* 1 */
                               "a,1,10\n"                   /* 2 */
                               "a,2,abc\n"                  /* 3 */
                               "b,1\n"                      /* 4 */
                               "b,1,5,6\n"                  /* 5 */
                               "\n"                         /* 6 */
                               "c,1,-3\n"                   /* 7 */
                               ",1,3\n"                     /* 8 */
                               "a,3,30\r\n"                 /* 9 */
                               "d,1,nan\n"                  /* 10 */
                               "a,4,2.5";                   /* 11 */
    op_error err;
    const mnode *a;

    (void)state;
    if (csv_parse_text("/data/bad.csv", text, sizeof text - 1, &mb, &err))
        fail_msg("%s", err.msg);
    assert_string_equal(mb.id, "bad.csv");
    assert_int_equal(mb.nwarnings, 6);
    assert_has(mb.warnings[0], "/data/bad.csv:3: duration_ms 'abc'");
    assert_has(mb.warnings[1], "/data/bad.csv:4: expected 3 fields, got 2");
    assert_has(mb.warnings[2], "/data/bad.csv:5: expected 3 fields, got 4");
    assert_has(mb.warnings[3], "/data/bad.csv:7: duration_ms '-3'");
    assert_has(mb.warnings[4], "/data/bad.csv:8: stage must be");
    assert_has(mb.warnings[5], "/data/bad.csv:10: duration_ms 'nan'");
    assert_int_equal(mb.nnodes, 1);
    a = find_node(&mb, "stage-a");
    assert_true(node_metric(a, "tasks") == 3);
    assert_true(node_metric(a, "duration_ms") == 30);
    assert_true(node_metric(a, "task_time_ms") == 42.5);
}

static void test_csv_many_bad_lines(void **state)
{
    static mock_builder mb;
    char text[4096];
    size_t len;
    op_error err;

    (void)state;
    len = (size_t)snprintf(text, sizeof text, "stage,task,duration_ms\n");
    for (int i = 0; i < 30; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "x,%d,?\n", i);
    if (csv_parse_text("many.csv", text, len, &mb, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(mb.nwarnings, 21);
    assert_has(mb.warnings[20], "many.csv: 10 more bad lines were skipped");
    assert_int_equal(mb.nnodes, 0);
}

static void test_csv_bad_header(void **state)
{
    static mock_builder mb;
    static const char text[] = "stage,task\n1,2\n";
    op_error err;

    (void)state;
    assert_int_equal(csv_parse_text("h.csv", text, sizeof text - 1, &mb, &err),
                     OP_EPARSE);
    assert_has(err.msg, "h.csv:1: expected the header "
                        "'stage,task,duration_ms'");
    assert_int_equal(mb.nruns, 0);
    assert_int_equal(csv_parse_text("e.csv", "", 0, &mb, &err), OP_EPARSE);
    assert_has(err.msg, "e.csv: empty file");
}

static void test_csv_detect(void **state)
{
    plugin_reg *reg = plugins_new();
    op_error err;
    const op_plugin *p;
    static const struct {
        const char *head;
        int score;
    } cases[] = {
        {"stage,task,duration_ms\n", 90},
        {"stage,task,duration_ms,input_bytes\r\n", 90},
        {"\xef\xbb\xbfstage,task,duration_ms\n", 90},
        {"stage,task,duration_ms", 90},
        {"stage,task,duration_msec\n", 0},
        {"stage,task,dur", 0},
        {"", 0},
        {"task,stage,duration_ms\n", 0},
    };

    (void)state;
    if (plugins_load_file(reg, CSV_SO, &err))
        fail_msg("%s", err.msg);
    p = plugins_find(reg, "csv");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        op_probe probe = {.path = "x", .basename = "x",
                          .head = (const unsigned char *)cases[i].head,
                          .head_len = strlen(cases[i].head)};
        if (p->detect(&probe) != cases[i].score)
            fail_msg("detect(\"%s\") = %d, want %d", cases[i].head,
                     p->detect(&probe), cases[i].score);
    }
    plugins_free(reg);
}

/* --- optipipe/json.h and the model plugin -------------------------------- */

/* Parses text with the built-in plugin `name` into mb. */
static int builtin_parse_text(const char *name, const char *file,
                              const char *text, size_t len, mock_builder *mb,
                              op_error *err)
{
    mem_stream ms;
    size_t i;

    memset(&ms, 0, sizeof ms);
    ms.base.api = &ms_api;
    ms.name = file;
    ms.buf = text;
    ms.len = len;
    memset(mb, 0, sizeof *mb);
    mb->base.api = &mb_api;
    op_error_clear(err);
    for (i = 0; op_builtin_plugins[i]; i++)
        if (!strcmp(op_builtin_plugins[i]->name, name))
            return op_builtin_plugins[i]->parse(&ms.base, &mb->base, err);
    fail_msg("no built-in plugin %s", name);
    return -1;
}

static int has_warning(const mock_builder *mb, const char *want)
{
    for (size_t i = 0; i < mb->nwarnings; i++)
        if (strstr(mb->warnings[i], want))
            return 1;
    return 0;
}

static void collect_note(void *ud, const char *msg)
{
    errors *e = ud;
    if (e->n < 8)
        snprintf(e->msg[e->n], sizeof e->msg[0], "%s", msg);
    e->n++;
}

/* The estimate and the tidy walk of the header, directly. */
static void test_json_helpers(void **state)
{
    char big[4096];
    size_t o = 0, i;
    cJSON *root;
    errors e = {0};
    op_error err;

    (void)state;
    /* [0,0,0]: 4 values of 80 bytes (40 times 2 bytes per value) */
    assert_int_equal(op_json_cost("[0,0,0]", 7), 4 * OP_JSON_NODE_COST);
    /* a key is no value: {"a":"b"} is 2 values and 2 strings */
    assert_int_equal(op_json_cost("{\"a\":\"b\"}", 9),
                     2 * OP_JSON_NODE_COST + 2 * 32);
    assert_int_equal(op_json_check_cost("x", 100, op_json_budget(100), &err), 0);
    assert_int_equal(op_json_check_cost("x", 100, op_json_budget(100) + 1, &err),
                     OP_ELIMIT);
    assert_has(err.msg, "x: its JSON tree would take");
    assert_int_equal(op_json_budget((size_t)1 << 40), OP_JSON_MAX_TREE);
    /* 20 members, 12 of them repeated: the hashed path, the last value
     * kept, 10 warnings and one count */
    o += (size_t)snprintf(big + o, sizeof big - o, "{");
    for (i = 0; i < 20; i++)
        o += (size_t)snprintf(big + o, sizeof big - o, "\"k%zu\": %zu, ", i % 8, i);
    snprintf(big + o, sizeof big - o, "\"z\": 1}");
    root = cJSON_Parse(big);
    assert_non_null(root);
    assert_int_equal(op_json_tidy(root, "$", 0, 0, collect_note, &e), 0);
    assert_int_equal(cJSON_GetArraySize(root), 9);
    assert_int_equal(cJSON_GetObjectItem(root, "k3")->valueint, 19);
    assert_int_equal((int)e.n, OP_JSON_MAX_WARNINGS + 1);
    assert_has(e.msg[0], ": duplicated key: the last value is kept");
    cJSON_Delete(root);
}

/* The model plugin: duplicated keys keep the last value, 1e999 is absent,
 * each with a warning on the run; a [0,0,...] document is refused. */
static void test_model_json(void **state)
{
    static const char doc[] =
        "{\"schema\": 1, \"runs\": [{\"source\": \"flink\", \"id\": \"j\","
        " \"metrics\": {\"a\": 1, \"a\": 2, \"b\": 1e999}}]}";
    mock_builder *mb = calloc(1, sizeof *mb);
    op_error err;
    size_t n = (16u << 20) / 2 + 1000, i;
    const char head[] = "{\"schema\": 1, \"runs\": [{\"source\": \"s\", "
                        "\"id\": \"z\", \"config\": {\"x\": [0";
    char *big = malloc(sizeof head + 2 * n + 8), *p;

    (void)state;
    assert_non_null(mb);
    assert_non_null(big);
    if (builtin_parse_text("model", "m.json", doc, strlen(doc), mb, &err))
        fail_msg("%s", err.msg);
    assert_true(get_kv(mb->metrics, mb->nmetrics, "a")->v == 2);
    assert_null(get_kv(mb->metrics, mb->nmetrics, "b"));
    assert_true(has_warning(mb, "$.runs[0].metrics.a: duplicated key"));
    assert_true(has_warning(mb, "$.runs[0].metrics.b: number out of range"));
    memcpy(big, head, sizeof head - 1);
    for (i = 0, p = big + sizeof head - 1; i < n; i++, p += 2)
        memcpy(p, ",0", 2);
    memcpy(p, "]}}]}", 6);
    assert_int_equal(builtin_parse_text("model", "big.json", big, strlen(big),
                                        mb, &err),
                     OP_ELIMIT);
    assert_has(err.msg, "big.json: its JSON tree would take");
    free(big);
    free(mb);
}

/* The model plugin: an integer field that is null (not made so by
 * op_json_tidy) or impossible (parallelism 0 or above a Java int, a
 * negative duration or time) is absent with a warning naming the place. */
static void test_model_impossible_ints(void **state)
{
    static const char doc[] =
        "{\"schema\": 1, \"runs\": [{\"source\": \"spark\", \"id\": \"a\","
        " \"duration_ms\": -5, \"started_at\": null, \"ended_at\": 1e999,"
        " \"nodes\": [{\"id\": \"n1\", \"parallelism\": 0},"
        " {\"id\": \"n2\", \"parallelism\": 1e12, \"duration_ms\": -1},"
        " {\"id\": \"n3\", \"parallelism\": 40000}]}]}";
    mock_builder *mb = calloc(1, sizeof *mb);
    op_error err;

    (void)state;
    assert_non_null(mb);
    if (builtin_parse_text("model", "m.json", doc, strlen(doc), mb, &err))
        fail_msg("%s", err.msg);
    assert_int_equal(mb->nnodes, 3);
    assert_int_equal(mb->nodes[0].parallelism, 0);
    assert_int_equal(mb->nodes[1].parallelism, 0);
    assert_int_equal(mb->nodes[2].parallelism, 40000); /* Spark: many tasks */
    assert_true(has_warning(mb, "runs[1]: duration_ms: -5 is outside "
                                "0..9223372036854775807: ignored"));
    assert_true(has_warning(mb, "runs[1]: started_at: null where an integer "
                                "is expected: ignored"));
    assert_true(has_warning(mb, "runs[1].nodes[1] (node n1): parallelism: 0 "
                                "is outside 1..2147483647: ignored"));
    assert_true(has_warning(mb, "(node n2): parallelism: 1000000000000 is "
                                "outside 1..2147483647"));
    assert_true(has_warning(mb, "(node n2): duration_ms: -1 is outside"));
    /* 1e999: op_json_tidy's warning only */
    assert_true(has_warning(mb, "$.runs[0].ended_at: number out of range"));
    assert_false(has_warning(mb, "ended_at: null"));
    free(mb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_validate),
        cmocka_unit_test(test_static_refusals),
        cmocka_unit_test(test_duplicates_and_stable_pointers),
        cmocka_unit_test(test_short_descriptor_is_zero_padded),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_load_csv_so),
        cmocka_unit_test(test_load_refusals),
        cmocka_unit_test(test_writable_refused),
        cmocka_unit_test(test_load_path),
        cmocka_unit_test(test_csv_fixture),
        cmocka_unit_test(test_csv_bad_lines),
        cmocka_unit_test(test_csv_many_bad_lines),
        cmocka_unit_test(test_csv_bad_header),
        cmocka_unit_test(test_csv_detect),
        cmocka_unit_test(test_json_helpers),
        cmocka_unit_test(test_model_json),
        cmocka_unit_test(test_model_impossible_ints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
