/*
 * test_wfile.c - writing a user-named file safely (core/wfile.h): a
 * planted symbolic link where the file goes is refused and its target
 * untouched; the old temp name (<file>.tmp.<pid>) planted as a link is no
 * longer followed (baseline_save used to truncate what it pointed to);
 * the file is replaced whole, keeps its mode, gets 0666 less the umask
 * when new; a failed write leaves the target as it was and no temporary
 * file; a fifo or /dev/null is written in place.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "baseline.h"
#include "support.h"
#include "wfile.h"

static void path_in_tmp(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", tm_tmpdir, name);
    unlink(buf);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static int has_text(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    size_t n;

    if (!f)
        return 0;
    n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strcmp(buf, text) == 0;
}

/* How many entries of the scratch folder start with prefix. */
static int count_prefix(const char *prefix)
{
    DIR *d = opendir(tm_tmpdir);
    struct dirent *e;
    int n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    closedir(d);
    return n;
}

static void test_link_refused(void **state)
{
    char victim[256], link[256];
    wfile w;
    op_error err;

    (void)state;
    path_in_tmp(victim, sizeof victim, "victim.txt");
    path_in_tmp(link, sizeof link, "planted.json");
    write_text(victim, "precious\n");
    assert_int_equal(symlink(victim, link), 0);
    op_error_clear(&err);
    assert_int_equal(wfile_open(&w, link, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "planted.json: a symbolic link; refusing "
                                    "to write through it"));
    assert_true(has_text(victim, "precious\n"));
    assert_int_equal(wfile_check(link, &err), OP_EUSAGE);
    /* a folder is refused too */
    assert_int_equal(wfile_open(&w, tm_tmpdir, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "a folder"));
    /* a dangling link as well (it would create its target) */
    path_in_tmp(link, sizeof link, "dangling.json");
    assert_int_equal(symlink("/nonexistent-dir/x", link), 0);
    assert_int_equal(wfile_open(&w, link, &err), OP_EUSAGE);
    unlink(link);
    unlink(victim);
}

/* The temp name baseline_save used (<file>.tmp.<pid>), planted as a link
 * to a file of the user's: saving no longer writes through it. */
static void test_old_temp_name_planted(void **state)
{
    char path[256], victim[256], planted[300];
    baseline b;
    op_error err;

    (void)state;
    path_in_tmp(path, sizeof path, "decisions.json");
    path_in_tmp(victim, sizeof victim, "victim2.txt");
    write_text(victim, "precious\n");
    snprintf(planted, sizeof planted, "%s.tmp.%ld", path, (long)getpid());
    unlink(planted);
    assert_int_equal(symlink(victim, planted), 0);
    baseline_init(&b);
    op_error_clear(&err);
    assert_int_equal(baseline_save(&b, path, &err), 0);
    assert_true(has_text(victim, "precious\n"));
    assert_int_equal(baseline_load(path, &b, 0, &err), 0);
    baseline_free(&b);
    /* the decisions file itself a link: refused, the target untouched */
    unlink(path);
    assert_int_equal(symlink(victim, path), 0);
    baseline_init(&b);
    assert_int_equal(baseline_save(&b, path, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "symbolic link"));
    assert_true(has_text(victim, "precious\n"));
    unlink(path);
    unlink(planted);
    unlink(victim);
}

static void test_replace_modes_abort(void **state)
{
    char path[256];
    struct stat st;
    wfile w;
    op_error err;
    mode_t mask = umask(027);

    (void)state;
    path_in_tmp(path, sizeof path, "out.txt");
    /* new: 0666 less the umask */
    assert_int_equal(wfile_open(&w, path, &err), 0);
    fputs("one\n", w.f);
    assert_int_equal(lstat(path, &st), -1); /* not there until complete */
    assert_int_equal(wfile_commit(&w, &err), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_true(has_text(path, "one\n"));
    /* replaced: keeps its mode */
    assert_int_equal(chmod(path, 0604), 0);
    assert_int_equal(wfile_open(&w, path, &err), 0);
    fputs("two\n", w.f);
    assert_int_equal(wfile_commit(&w, &err), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0604);
    assert_true(has_text(path, "two\n"));
    /* abandoned: the target as it was, no temporary file left */
    assert_int_equal(wfile_open(&w, path, &err), 0);
    fputs("three\n", w.f);
    wfile_abort(&w);
    assert_true(has_text(path, "two\n"));
    assert_int_equal(count_prefix("out.txt.tmp."), 0);
    umask(mask);
    unlink(path);
}

static void test_in_place(void **state)
{
    char fifo[256];
    wfile w;
    op_error err;
    int fd;
    char buf[16] = "";

    (void)state;
    assert_int_equal(wfile_open(&w, "/dev/null", &err), 0);
    fputs("gone\n", w.f);
    assert_int_equal(wfile_commit(&w, &err), 0);
    path_in_tmp(fifo, sizeof fifo, "pipe");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    fd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so the open does not wait */
    assert_true(fd >= 0);
    assert_int_equal(wfile_open(&w, fifo, &err), 0);
    assert_string_equal(w.tmp, "");
    fputs("hi\n", w.f);
    assert_int_equal(wfile_commit(&w, &err), 0);
    assert_int_equal(read(fd, buf, sizeof buf - 1), 3);
    assert_string_equal(buf, "hi\n");
    close(fd);
    unlink(fifo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_link_refused),
        cmocka_unit_test(test_old_temp_name_planted),
        cmocka_unit_test(test_replace_modes_abort),
        cmocka_unit_test(test_in_place),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
