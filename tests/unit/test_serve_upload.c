/*
 * test_serve_upload.c - staging uploads (serve/serve_upload.c) in a scratch
 * DATA: client file names sanitized and made unique, "../../x" kept
 * inside, files and rules in their folders with their bytes, text fields,
 * every limit exact at its edge, a full disk named, abort and failure
 * removing everything, and nothing ever written outside DATA/tmp.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve.h"
#include "util.h"
#include "support.h"

#define CT "multipart/form-data; boundary=BnD"

static serve_opts opts;
static srv server;

/* A fresh DATA for each test (its parent is the group's tm_tmpdir). */
static int setup(void **state)
{
    static int n;

    (void)state;
    memset(&opts, 0, sizeof opts);
    opts.max_upload_bytes = SRV_UPLOAD_DEFAULT;
    opts.max_files = SRV_FILES_DEFAULT;
    memset(&server, 0, sizeof server);
    server.o = &opts;
    snprintf(server.data, sizeof server.data, "%s/data%d", tm_tmpdir, ++n);
    return mkdir(server.data, 0700);
}

/* ---- building bodies -------------------------------------------------------- */

static void part(dbuf *b, const char *name, const char *filename,
                 const char *data, size_t len)
{
    char h[1024];
    int n = snprintf(h, sizeof h, "--BnD\r\nContent-Disposition: form-data; "
                     "name=\"%s\"%s%s%s\r\n\r\n", name,
                     filename ? "; filename=\"" : "", filename ? filename : "",
                     filename ? "\"" : "");
    db_add(b, h, (size_t)n);
    db_add(b, data, len);
    db_add(b, "\r\n", 2);
}

static void part_s(dbuf *b, const char *name, const char *filename,
                   const char *data)
{
    part(b, name, filename, data, strlen(data));
}

static void close_body(dbuf *b)
{
    db_add(b, "--BnD--\r\n", 9);
}

/* Stages body (fed in pieces of step bytes) and returns the status; *out
 * on success, the message in err. */
static int stage(const char *ct, const char *raw, const dbuf *b, size_t step,
                 srv_upload **out, op_error *err)
{
    srv_stage *st = NULL;
    size_t at = 0;
    int rc;

    *out = NULL;
    op_error_clear(err);
    if ((rc = stage_begin(&server, ct, raw, &st, err)) != 0)
        return rc;
    assert_non_null(st);
    while (at < b->n) {
        size_t k = b->n - at < step ? b->n - at : step;
        if ((rc = stage_feed(st, (const char *)b->p + at, k, err)) != 0) {
            stage_abort(st);
            return rc;
        }
        at += k;
    }
    return stage_end(st, out, err);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = malloc(1 << 20);

    assert_non_null(f);
    assert_non_null(buf);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

/* Every path below dir (relative), one per line, sorted by readdir order
 * of each level is enough here: the tests compare counts and names. */
static void walk(const char *dir, const char *rel, dbuf *out)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        char p[4096], r[4096];
        struct stat st;

        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        snprintf(r, sizeof r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        db_add(out, r, strlen(r));
        db_add(out, "\n", 1);
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
            walk(p, r, out);
    }
    closedir(d);
}

static size_t count_lines(const dbuf *b)
{
    size_t i, n = 0;

    for (i = 0; i < b->n; i++)
        n += b->p[i] == '\n';
    return n;
}

/* DATA/tmp holds nothing (or does not exist). */
static void assert_tmp_empty(void)
{
    char tmp[4200];
    dbuf b = {0};

    snprintf(tmp, sizeof tmp, "%s/tmp", server.data);
    walk(tmp, "", &b);
    if (b.n)
        fail_msg("DATA/tmp is not empty:\n%s", (char *)b.p);
    free(b.p);
}

/* ---- names ------------------------------------------------------------------- */

static void client_names_are_sanitized(void **state)
{
    static const struct {
        const char *client, *want;
    } cases[] = {
        {"../../x", "x"},
        {"/etc/passwd", "passwd"},
        {"C:\\\\Users\\\\me\\\\run.json", "run.json"},
        {"..\\\\..\\\\evil.zip", "evil.zip"},
        {"...hidden", "hidden"},
        {"a b$c;d.json", "a_b_c_d.json"},
        {"\xc3\xa9t\xc3\xa9.json.gz", "__t__.json.gz"},
        {"..", "upload"},
        {"", "upload"},
        {"dir/", "upload"},
        {"ok-1_2.3", "ok-1_2.3"},
    };
    dbuf b = {0};
    srv_upload *up;
    op_error err;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++)
        part_s(&b, "file", cases[i].client, "x");
    part_s(&b, "file", NULL, "no filename at all");
    close_body(&b);
    assert_int_equal(stage(CT, NULL, &b, 5, &up, &err), 0);
    assert_int_equal(up->nfiles, sizeof cases / sizeof cases[0] + 1);
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *want = cases[i].want;
        char uniq[64];
        /* "upload" comes three times: upload, upload.1, upload.2 */
        if (!strcmp(want, "upload") && i > 7) {
            snprintf(uniq, sizeof uniq, "upload.%zu", i - 7);
            want = uniq;
        }
        assert_string_equal(up->files[i].name, want);
        assert_string_equal(up->files[i].field, "file");
    }
    assert_string_equal(up->files[i].name, "upload.3");
    free(b.p);
    srv_upload_free(up);
    assert_tmp_empty();
}

static void long_names_keep_their_extension(void **state)
{
    char name[400], want[SRV_NAME_MAX + 1];
    dbuf b = {0};
    srv_upload *up;
    op_error err;

    (void)state;
    memset(name, 'n', 300);
    memcpy(name + 300, ".json.gz", 9);
    part_s(&b, "file", name, "a");
    part_s(&b, "file", name, "b");
    /* an over-long "extension" is no extension: the name is just cut */
    memset(name, 'm', 10);
    name[10] = '.';
    memset(name + 11, 'e', 300);
    name[311] = '\0';
    part_s(&b, "file", name, "c");
    close_body(&b);
    assert_int_equal(stage(CT, NULL, &b, 4096, &up, &err), 0);
    assert_int_equal(up->nfiles, 3);
    memset(want, 'n', SRV_NAME_MAX - 8);
    memcpy(want + SRV_NAME_MAX - 8, ".json.gz", 9);
    assert_string_equal(up->files[0].name, want);
    memset(want, 'n', SRV_NAME_MAX - 10);
    memcpy(want + SRV_NAME_MAX - 10, ".json.gz.1", 11);
    assert_string_equal(up->files[1].name, want);
    assert_int_equal(strlen(up->files[2].name), SRV_NAME_MAX);
    assert_memory_equal(up->files[2].name, "mmmmmmmmmm.eee", 14);
    free(b.p);
    srv_upload_free(up);
}

static void names_are_unique_within_the_upload(void **state)
{
    dbuf b = {0};
    srv_upload *up;
    op_error err;

    (void)state;
    part_s(&b, "file", "x", "1");
    part_s(&b, "file", "../x", "2");
    part_s(&b, "rules", "x", "3");
    part_s(&b, "file", "x.1", "4");
    close_body(&b);
    assert_int_equal(stage(CT, NULL, &b, 3, &up, &err), 0);
    assert_int_equal(up->nfiles, 4);
    assert_string_equal(up->files[0].name, "x");
    assert_string_equal(up->files[1].name, "x.1");
    assert_string_equal(up->files[2].name, "x.2");
    assert_string_equal(up->files[2].field, "rules");
    assert_string_equal(up->files[3].name, "x.1.1");
    free(b.p);
    srv_upload_free(up);
}

/* ---- contents, folders, fields -------------------------------------------------- */

static void files_land_inside_with_their_bytes(void **state)
{
    char big[200000], path[4200], data[4200];
    dbuf b = {0}, tree = {0};
    srv_upload *up;
    op_error err;
    struct stat st;
    size_t i, len;
    char *got;

    (void)state;
    for (i = 0; i < sizeof big; i++) /* CR, LF and dashes in the data */
        big[i] = "\r\n-BnD\r\n--BnX-"[i % 15];
    part(&b, "file", "../../x", big, sizeof big);
    part_s(&b, "rules", "../my_rule.lua", "return {}");
    part_s(&b, "csrf", NULL, "tok");
    part_s(&b, "url", NULL, "http://a/1");
    part_s(&b, "url", NULL, "http://a/2");
    close_body(&b);
    assert_int_equal(stage(CT, NULL, &b, 777, &up, &err), 0);
    assert_int_equal(up->nfiles, 2);
    assert_int_equal(up->bytes, sizeof big + 9);
    assert_int_equal(up->files[0].size, sizeof big);

    /* the staging folder: DATA/tmp/<16 hex>, 0700; files 0600 */
    snprintf(path, sizeof path, "%s/tmp/", server.data);
    assert_memory_equal(up->dir, path, strlen(path));
    assert_int_equal(strlen(up->dir + strlen(path)), 16);
    assert_int_equal(strspn(up->dir + strlen(path), "0123456789abcdef"), 16);
    assert_int_equal(stat(up->dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    snprintf(path, sizeof path, "%s/inputs/x", up->dir);
    assert_string_equal(up->files[0].path, path);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    got = slurp(path, &len);
    assert_int_equal(len, sizeof big);
    assert_memory_equal(got, big, sizeof big);
    free(got);
    snprintf(path, sizeof path, "%s/rules/my_rule.lua", up->dir);
    assert_string_equal(up->files[1].path, path);
    got = slurp(path, &len);
    assert_int_equal(len, 9);
    free(got);

    assert_string_equal(srv_upload_field(up, "csrf"), "tok");
    assert_string_equal(srv_upload_field(up, "url"), "http://a/1");
    assert_int_equal(up->nfields, 3);
    assert_string_equal(up->field_value[2], "http://a/2");
    assert_null(srv_upload_field(up, "nope"));

    /* nothing anywhere else in DATA */
    walk(server.data, "", &tree);
    snprintf(data, sizeof data, "tmp\ntmp/%s\n", up->dir + strlen(server.data) + 5);
    assert_int_equal(count_lines(&tree), 6); /* tmp, <r>, inputs, x, rules, lua */
    assert_memory_equal(tree.p, data, strlen(data));
    free(tree.p);
    free(b.p);
    srv_upload_free(up);
    assert_tmp_empty();
}

static void raw_bodies_are_one_file(void **state)
{
    dbuf b = {0};
    srv_upload *up;
    op_error err;

    (void)state;
    db_add(&b, "PK\3\4 not really a zip", 22);
    assert_int_equal(stage("application/zip", "../../a/bundle.zip", &b, 5, &up, &err), 0);
    assert_int_equal(up->nfiles, 1);
    assert_string_equal(up->files[0].name, "bundle.zip");
    assert_string_equal(up->files[0].field, "file");
    assert_int_equal(up->files[0].size, 22);
    srv_upload_free(up);
    assert_int_equal(stage(NULL, NULL, &b, 100, &up, &err), 0);
    assert_string_equal(up->files[0].name, "upload");
    srv_upload_free(up);
    /* an empty raw body is an empty file */
    b.n = 0;
    assert_int_equal(stage("application/gzip", "e.gz", &b, 100, &up, &err), 0);
    assert_int_equal(up->files[0].size, 0);
    srv_upload_free(up);
    free(b.p);
    assert_tmp_empty();
}

static void uploads_without_files_are_fine(void **state)
{
    dbuf b = {0};
    srv_upload *up;
    op_error err;

    (void)state;
    part_s(&b, "url", NULL, "http://jm:8081/jobs/x");
    close_body(&b);
    assert_int_equal(stage(CT, NULL, &b, 9, &up, &err), 0);
    assert_int_equal(up->nfiles, 0);
    assert_string_equal(srv_upload_field(up, "url"), "http://jm:8081/jobs/x");
    srv_upload_free(up);
    free(b.p);
    assert_tmp_empty();
}

/* A browser sends an empty file input as filename="" with no bytes: no
 * file; the same with bytes is a file named "upload". */
static void unchosen_file_inputs_are_no_file(void **state)
{
    dbuf b = {0};
    srv_upload *up;
    op_error err;

    (void)state;
    opts.max_files = 1;
    part_s(&b, "file", "", "");
    part_s(&b, "rules", "", "");
    part_s(&b, "url", NULL, "http://h/x");
    part_s(&b, "file", "", "bytes");
    close_body(&b);
    assert_int_equal(stage(CT, NULL, &b, 3, &up, &err), 0);
    assert_int_equal(up->nfiles, 1);
    assert_string_equal(up->files[0].name, "upload");
    assert_int_equal(up->files[0].size, 5);
    srv_upload_free(up);
    free(b.p);
    assert_tmp_empty();
}

/* ---- refusals ---------------------------------------------------------------------- */

/* Stages b expecting code and needle in the message, DATA/tmp empty after. */
static void expect_refused(const char *ct, const dbuf *b, size_t step, int code,
                           const char *needle)
{
    srv_upload *up;
    op_error err;
    int rc = stage(ct, NULL, b, step, &up, &err);

    if (rc != code || !strstr(err.msg, needle))
        fail_msg("want %d '%s', got %d '%s'", code, needle, rc, err.msg);
    assert_null(up);
    assert_tmp_empty();
}

static void bad_bodies_are_refused(void **state)
{
    dbuf b = {0};

    (void)state;
    part_s(&b, "other", "x.json", "1");
    close_body(&b);
    expect_refused(CT, &b, 4, OP_EPARSE, "the field 'other' carries a file");
    b.n = 0;
    part_s(&b, "file", "x.json", "cut before the final boundary");
    expect_refused(CT, &b, 4, OP_EPARSE, "before the final boundary");
    expect_refused("multipart/mixed; boundary=BnD", &b, 4, OP_EPARSE,
                   "must be multipart/form-data");
    expect_refused("multipart/form-data", &b, 4, OP_EPARSE, "no boundary");
    expect_refused("Multipart/Form-Data; boundary=\"\"", &b, 4, OP_EPARSE,
                   "1 to 70");
    b.n = 0;
    part(&b, "url", NULL, "a\0b", 3);
    close_body(&b);
    expect_refused(CT, &b, 4, OP_EPARSE, "the field 'url' holds a NUL byte");
    b.n = 0;
    db_add(&b, "--BnD\r\nbad header\r\n\r\n", 21);
    expect_refused(CT, &b, 1, OP_EPARSE, "multipart: byte 7:");
    free(b.p);
}

static void byte_limit_is_exact(void **state)
{
    char data[100];
    dbuf b = {0};
    srv_upload *up;
    op_error err;

    (void)state;
    memset(data, 'd', sizeof data);
    opts.max_upload_bytes = 100; /* of files: text fields do not count */
    part(&b, "file", "a", data, 60);
    part_s(&b, "csrf", NULL, "token");
    part(&b, "file", "b", data, 40);
    close_body(&b);
    assert_int_equal(stage(CT, NULL, &b, 7, &up, &err), 0);
    assert_int_equal(up->bytes, 100);
    srv_upload_free(up);
    b.n = 0;
    part(&b, "file", "a", data, 60);
    part(&b, "file", "b", data, 41);
    close_body(&b);
    expect_refused(CT, &b, 7, OP_ELIMIT, "over 100 bytes of files (--max-upload-bytes)");
    /* a raw body: the same limit */
    b.n = 0;
    db_add(&b, data, 100);
    assert_int_equal(stage("application/octet-stream", "r", &b, 30, &up, &err), 0);
    srv_upload_free(up);
    db_add(&b, "x", 1);
    expect_refused("application/octet-stream", &b, 30, OP_ELIMIT, "--max-upload-bytes");
    free(b.p);
}

static void file_limit_is_exact(void **state)
{
    dbuf b = {0};
    srv_upload *up;
    op_error err;

    (void)state;
    opts.max_files = 3;
    part_s(&b, "file", "a", "1");
    part_s(&b, "rules", "r.lua", "2");
    part_s(&b, "file", NULL, "");
    close_body(&b);
    assert_int_equal(stage(CT, NULL, &b, 11, &up, &err), 0);
    assert_int_equal(up->nfiles, 3);
    srv_upload_free(up);
    b.n -= 9;
    part_s(&b, "file", "d", "4");
    close_body(&b);
    expect_refused(CT, &b, 11, OP_ELIMIT, "more than 3 files in one upload (--max-files)");
    free(b.p);
}

static void field_limits_are_exact(void **state)
{
    char *val = malloc(SRV_FIELD_MAX + 2), name[80];
    dbuf b = {0};
    srv_upload *up;
    op_error err;
    int i;

    (void)state;
    assert_non_null(val);
    memset(val, 'v', SRV_FIELD_MAX + 1);
    part(&b, "url", NULL, val, SRV_FIELD_MAX);
    for (i = 1; i < SRV_FIELDS_MAX; i++)
        part_s(&b, "f", NULL, "x");
    close_body(&b);
    assert_int_equal(stage(CT, NULL, &b, 1000, &up, &err), 0);
    assert_int_equal(up->nfields, SRV_FIELDS_MAX);
    assert_int_equal(strlen(srv_upload_field(up, "url")), SRV_FIELD_MAX);
    srv_upload_free(up);
    b.n -= 9;
    part_s(&b, "f", NULL, "x");
    close_body(&b);
    expect_refused(CT, &b, 1000, OP_ELIMIT, "more than 64 text fields");
    b.n = 0;
    part(&b, "url", NULL, val, SRV_FIELD_MAX + 1);
    close_body(&b);
    expect_refused(CT, &b, 1000, OP_ELIMIT, "the field 'url' is over 8192 bytes");
    b.n = 0;
    memset(name, 'n', 64);
    name[64] = '\0';
    part_s(&b, name, NULL, "x");
    close_body(&b);
    expect_refused(CT, &b, 1000, OP_ELIMIT, "is over 63 bytes");
    b.n = 0;
    name[63] = '\0';
    part_s(&b, name, NULL, "x");
    close_body(&b);
    assert_int_equal(stage(CT, NULL, &b, 1000, &up, &err), 0);
    srv_upload_free(up);
    free(b.p);
    free(val);
}

/* A write that fails (here: RLIMIT_FSIZE, as a full disk would) is
 * OP_EIO naming the file, and the staged files are removed. */
static void write_errors_name_the_file(void **state)
{
    struct rlimit old, small;
    char data[300000];
    dbuf b = {0};
    void (*prev)(int);

    (void)state;
    memset(data, 'z', sizeof data);
    part(&b, "file", "big.json", data, sizeof data);
    close_body(&b);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    small = old;
    small.rlim_cur = 100000;
    prev = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    expect_refused(CT, &b, 50000, OP_EIO, "upload: cannot write inputs/big.json: ");
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, prev);
    free(b.p);
}

/* ---- removal ------------------------------------------------------------------------ */

static void abort_removes_everything(void **state)
{
    char data[100000];
    dbuf b = {0};
    srv_stage *st;
    op_error err;

    (void)state;
    memset(data, 'a', sizeof data);
    part(&b, "file", "one", data, sizeof data);
    part(&b, "rules", "r.lua", data, 10);
    part(&b, "file", "two", data, sizeof data);
    /* the client goes away in the middle of the third file */
    assert_int_equal(stage_begin(&server, CT, NULL, &st, &err), 0);
    assert_int_equal(stage_feed(st, (char *)b.p, b.n - 50000, &err), 0);
    stage_abort(st);
    assert_tmp_empty();
    /* and right after the start */
    assert_int_equal(stage_begin(&server, CT, NULL, &st, &err), 0);
    stage_abort(st);
    assert_tmp_empty();
    stage_abort(NULL);
    srv_upload_free(NULL);
    free(b.p);
}

static void remove_tree_never_follows_symlinks(void **state)
{
    char out[4200], tree[4200], p[4300];
    struct stat st;
    FILE *f;

    (void)state;
    snprintf(out, sizeof out, "%s/outside", server.data);
    snprintf(tree, sizeof tree, "%s/tree", server.data);
    assert_int_equal(mkdir(out, 0700), 0);
    snprintf(p, sizeof p, "%s/keep", out);
    assert_non_null(f = fopen(p, "w"));
    fclose(f);
    assert_int_equal(mkdir(tree, 0700), 0);
    snprintf(p, sizeof p, "%s/a", tree);
    assert_int_equal(mkdir(p, 0700), 0);
    snprintf(p, sizeof p, "%s/a/link", tree);
    assert_int_equal(symlink(out, p), 0);
    snprintf(p, sizeof p, "%s/file", tree);
    assert_non_null(f = fopen(p, "w"));
    fclose(f);
    assert_int_equal(util_remove_tree(tree), 0);
    assert_int_equal(lstat(tree, &st), -1);
    snprintf(p, sizeof p, "%s/keep", out);
    assert_int_equal(stat(p, &st), 0);
    assert_int_equal(util_remove_tree(tree), 0); /* absent: fine */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(client_names_are_sanitized, setup),
        cmocka_unit_test_setup(long_names_keep_their_extension, setup),
        cmocka_unit_test_setup(names_are_unique_within_the_upload, setup),
        cmocka_unit_test_setup(files_land_inside_with_their_bytes, setup),
        cmocka_unit_test_setup(raw_bodies_are_one_file, setup),
        cmocka_unit_test_setup(uploads_without_files_are_fine, setup),
        cmocka_unit_test_setup(unchosen_file_inputs_are_no_file, setup),
        cmocka_unit_test_setup(bad_bodies_are_refused, setup),
        cmocka_unit_test_setup(byte_limit_is_exact, setup),
        cmocka_unit_test_setup(file_limit_is_exact, setup),
        cmocka_unit_test_setup(field_limits_are_exact, setup),
        cmocka_unit_test_setup(write_errors_name_the_file, setup),
        cmocka_unit_test_setup(abort_removes_everything, setup),
        cmocka_unit_test_setup(remove_tree_never_follows_symlinks, setup),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
