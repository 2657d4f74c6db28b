/*
 * test_serve_jobs.c - the analyses of `optipipe serve` (serve/serve_jobs.c):
 * the bounded queue, ids, meta.json, recovery of a DATA written by an
 * earlier server, the order of jobs_each, and how a worker's end becomes
 * done or failed. The worker is a small shell script (s.self_exe, as the
 * server would run itself) that does what the names of its input files
 * say: wait at a FIFO the test opens ("gate"), fail, crash or hang.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "serve.h"
#include "support.h"

static const char worker_script[] =
    "#!/bin/sh\n"
    "# a stand-in for `optipipe serve --worker ID --data DATA ...`\n"
    "id=$3 data=$5 dir=$5/analyses/$3\n"
    "printf '%s\\n' \"$@\" > \"$dir/args.txt\"\n"
    "echo \"$OPTIPIPE_SERVE_PARENT\" > \"$dir/parent.txt\"\n"
    "echo $$ > \"$dir/pid.txt\"\n"
    "echo \"$id\" >> \"$data/order.txt\"\n"
    "in=$dir/inputs\n"
    "if [ -e \"$in/gate\" ]; then read x < \"$data/gate\"; fi\n"
    "if [ -e \"$in/fail\" ]; then echo \"$dir/inputs/fail: error: boom\" >&2;"
    " echo 'optipipe: no input could be read' >&2; exit 3; fi\n"
    "if [ -e \"$in/segv\" ]; then kill -SEGV $$; fi\n"
    "if [ -e \"$in/noisy\" ]; then head -c 5000000 /dev/zero | tr '\\0' x >&2;"
    " echo >&2; echo 'optipipe: error: the last word' >&2; exit 3; fi\n"
    "if [ -e \"$in/oom\" ]; then echo 'optipipe: x: Cannot allocate memory' >&2; exit 3; fi\n"
    "if [ -e \"$in/hang\" ]; then sleep 1000 & echo $! > \"$dir/sleep.pid\"; wait; fi\n"
    "if [ -e \"$in/findings\" ]; then echo '{}' > \"$dir/report.json\"; exit 1; fi\n"
    "if [ -e \"$in/noreport\" ]; then exit 0; fi\n"
    "echo '{}' > \"$dir/report.json\"\n";

static serve_opts O;
static const char *allow[1]; /* O.fetch_allow */
static srv S;
static unsigned ndata, nstage;

/* ---- helpers --------------------------------------------------------------------- */

static void pathf(char *buf, size_t cap, const char *fmt, ...) OP_PRINTF(3, 4);
static void pathf(char *buf, size_t cap, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(buf, cap, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < cap);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static char *read_text(const char *path)
{
    static char buf[65536];
    FILE *f = fopen(path, "r");
    size_t n;

    if (!f)
        return NULL;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* The text of path from byte off on. */
static char *read_text_at(const char *path, long off)
{
    static char buf[4096];
    FILE *f = fopen(path, "r");
    size_t n;

    assert_non_null(f);
    assert_int_equal(fseek(f, off, SEEK_SET), 0);
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static size_t entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static int exists(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0;
}

/* A fresh DATA with the fake worker; the options every test starts from. */
static void fresh_server(void)
{
    char path[4096 + 64];

    memset(&O, 0, sizeof O);
    O.queue = 2;
    O.workers = 1;
    O.analysis_timeout_s = 60;
    O.analysis_memory = 1ull << 30;
    O.fetch_allow = allow; /* the CLI's list (a growing array) */
    O.fetch_allow[O.nfetch_allow++] = "127.0.0.1";
    memset(&S, 0, sizeof S);
    S.o = &O;
    snprintf(S.data, sizeof S.data, "%s/data%u", tm_tmpdir, ++ndata);
    assert_int_equal(mkdir(S.data, 0700), 0);
    snprintf(path, sizeof path, "%s/analyses", S.data);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/tmp", S.data);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/gate", S.data);
    assert_int_equal(mkfifo(path, 0600), 0);
    snprintf(S.self_exe, sizeof S.self_exe, "%s/worker.sh", tm_tmpdir);
    if (!exists(S.self_exe)) {
        write_file(S.self_exe, worker_script);
        assert_int_equal(chmod(S.self_exe, 0700), 0);
    }
}

/* A staged upload as serve_upload.c leaves it: DATA/tmp/<x>/inputs/<name>
 * for each name. */
static srv_upload *stage(const char *name, ...)
{
    srv_upload *up = calloc(1, sizeof *up);
    char path[4096 + 64];
    va_list ap;

    assert_non_null(up);
    pathf(up->dir, sizeof up->dir, "%s/tmp/stage%u", S.data, ++nstage);
    assert_int_equal(mkdir(up->dir, 0700), 0);
    snprintf(path, sizeof path, "%s/inputs", up->dir);
    assert_int_equal(mkdir(path, 0700), 0);
    up->files = calloc(8, sizeof *up->files);
    assert_non_null(up->files);
    va_start(ap, name);
    for (; name; name = va_arg(ap, const char *)) {
        srv_file *f = &up->files[up->nfiles++];
        snprintf(f->field, sizeof f->field, "file");
        snprintf(f->name, sizeof f->name, "%s", name);
        pathf(f->path, sizeof f->path, "%s/inputs/%s", up->dir, name);
        write_file(f->path, "x\n");
        f->size = 2;
        up->bytes += 2;
    }
    va_end(ap);
    return up;
}

static void submit(srv_jobs *j, srv_upload *up, char id[SRV_ID_LEN + 1])
{
    op_error err;

    op_error_clear(&err);
    assert_int_equal(jobs_submit(j, up, NULL, 0, id, &err), 0);
    assert_true(srv_id_valid(id));
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Waits (bounded: 120 s, a safety net) until analysis id is in state st. */
static srv_analysis wait_state(srv_jobs *j, const char *id, srv_state st)
{
    srv_analysis a;
    op_error err;

    for (int i = 0; i < 12000; i++) {
        assert_int_equal(jobs_get(j, id, &a, &err), 0);
        if (a.state == st)
            return a;
        pause_ms(10);
    }
    fail_msg("%s: still %s, not %s", id, srv_state_name(a.state), srv_state_name(st));
    return a;
}

/* Lets the worker waiting at DATA/gate go on (waits, bounded, for one). */
static void release(void)
{
    char path[4096 + 16];
    int fd = -1;

    snprintf(path, sizeof path, "%s/gate", S.data);
    for (int i = 0; i < 12000 && fd < 0; i++)
        if ((fd = open(path, O_WRONLY | O_NONBLOCK)) < 0)
            pause_ms(10);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "go\n", 3), 3);
    close(fd);
}

/* Waits (bounded) until DATA/order.txt has n lines: n workers started. */
static char *wait_started(size_t n)
{
    char path[4096 + 16], *t = NULL;

    snprintf(path, sizeof path, "%s/order.txt", S.data);
    for (int i = 0; i < 12000; i++) {
        size_t lines = 0;
        t = read_text(path);
        for (const char *p = t; p && *p; p++)
            lines += *p == '\n';
        if (lines >= n)
            return t;
        pause_ms(10);
    }
    fail_msg("%zu workers did not start", n);
    return t;
}

/* Waits (bounded) until process pid is gone (or a zombie of someone else). */
static void wait_gone(pid_t pid)
{
    char path[64], *stat;

    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    for (int i = 0; i < 12000; i++) {
        stat = read_text(path);
        if (!stat || strstr(stat, ") Z "))
            return;
        pause_ms(10);
    }
    fail_msg("process %ld still runs", (long)pid);
}

static pid_t pid_file(const srv_analysis *a, const char *name)
{
    char path[4096 + 32], *t;

    snprintf(path, sizeof path, "%s/%s", a->dir, name);
    t = read_text(path);
    assert_non_null(t);
    return (pid_t)atol(t);
}

/* ---- tests ----------------------------------------------------------------------- */

static void test_ids(void **state)
{
    srv_jobs *j;
    srv_analysis a;
    op_error err;
    const char *bad[] = {"", "0123456789abcde", "0123456789abcdef0",
                         "0123456789ABCDEF", "../../etc/passwd", "0123456789abcdeg",
                         "/123456789abcdef", "0123456789abcde/", " 123456789abcdef"};

    (void)state;
    assert_true(srv_id_valid("0123456789abcdef"));
    assert_false(srv_id_valid(NULL));
    fresh_server();
    assert_int_equal(jobs_open(&S, &j, &err), 0);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_false(srv_id_valid(bad[i]));
        assert_int_equal(jobs_get(j, bad[i], &a, &err), OP_ENOTFOUND);
    }
    assert_int_equal(jobs_get(j, "0123456789abcdef", &a, &err), OP_ENOTFOUND);
    assert_string_equal(srv_state_name(SRV_QUEUED), "queued");
    assert_string_equal(srv_state_name(SRV_RUNNING), "running");
    assert_string_equal(srv_state_name(SRV_DONE), "done");
    assert_string_equal(srv_state_name(SRV_FAILED), "failed");
    jobs_close(j);
}

static int collect(void *ud, const srv_analysis *a)
{
    char (*ids)[SRV_ID_LEN + 1] = ud;
    size_t i = 0;

    while (ids[i][0])
        i++;
    memcpy(ids[i], a->id, SRV_ID_LEN + 1);
    return 0;
}

static void check_meta(const srv_analysis *a)
{
    char path[4096 + 16];
    cJSON *m;

    snprintf(path, sizeof path, "%s/%s", a->dir, SRV_META);
    m = cJSON_Parse(read_text(path));
    assert_non_null(m);
    assert_string_equal(cJSON_GetObjectItem(m, "id")->valuestring, a->id);
    assert_string_equal(cJSON_GetObjectItem(m, "state")->valuestring,
                        srv_state_name(a->state));
    assert_true(cJSON_GetObjectItem(m, "created_ms")->valuedouble == (double)a->created_ms);
    assert_true(cJSON_GetObjectItem(m, "started_ms")->valuedouble == (double)a->started_ms);
    assert_true(cJSON_GetObjectItem(m, "finished_ms")->valuedouble == (double)a->finished_ms);
    assert_int_equal(cJSON_GetObjectItem(m, "exit_code")->valueint, a->exit_code);
    assert_string_equal(cJSON_GetObjectItem(m, "error")->valuestring, a->error);
    assert_int_equal(cJSON_GetObjectItem(m, "files")->valueint, (int)a->nfiles);
    assert_int_equal(cJSON_GetObjectItem(m, "bytes")->valueint, (int)a->bytes);
    cJSON_Delete(m);
}

/* workers 1, queue 2: one runs (held at the gate), two wait, the fourth
 * is refused and its upload removed; then all three finish in order. */
static void test_queue_full(void **state)
{
    srv_jobs *j;
    srv_analysis a, again;
    srv_jobs_stats st;
    srv_upload *up;
    op_error err;
    char id[4][SRV_ID_LEN + 1], rejected_dir[4096], listed[5][SRV_ID_LEN + 1];
    char path[4096 + 32], expect[4096 + 512], *args;

    (void)state;
    fresh_server();
    assert_int_equal(jobs_open(&S, &j, &err), 0);
    submit(j, stage("gate", "x.json", NULL), id[0]);
    wait_state(j, id[0], SRV_RUNNING);
    wait_started(1);
    submit(j, stage("gate", NULL), id[1]);
    submit(j, stage("gate", NULL), id[2]);
    up = stage("y.json", NULL);
    snprintf(rejected_dir, sizeof rejected_dir, "%s", up->dir);
    assert_int_equal(jobs_submit(j, up, NULL, 0, id[3], &err), OP_ELIMIT);
    assert_non_null(strstr(err.msg, "queue is full"));
    assert_false(exists(rejected_dir));
    assert_true(jobs_retry_after(j) >= 1);
    jobs_stats(j, &st);
    assert_int_equal(st.queued, 2);
    assert_int_equal(st.running, 1);
    assert_int_equal(st.rejected, 1);
    assert_int_equal(jobs_get(j, id[1], &a, &err), 0);
    assert_int_equal(a.state, SRV_QUEUED);
    assert_int_equal(a.queue_pos, 0);
    assert_int_equal(jobs_get(j, id[2], &a, &err), 0);
    assert_int_equal(a.queue_pos, 1);
    check_meta(&a);

    /* the worker's command line: what the analysis needs of the options */
    assert_int_equal(jobs_get(j, id[0], &a, &err), 0);
    snprintf(path, sizeof path, "%s/args.txt", a.dir);
    args = read_text(path);
    snprintf(expect, sizeof expect, "serve\n--worker\n%s\n--data\n%s\n--fetch-allow\n"
             "127.0.0.1\n--analysis-memory\n1073741824\n--analysis-timeout\n60\n",
             id[0], S.data);
    assert_string_equal(args, expect);
    snprintf(path, sizeof path, "%s/parent.txt", a.dir);
    assert_int_equal(atol(read_text(path)), (long)getpid());
    snprintf(path, sizeof path, "%s/%s/x.json", a.dir, SRV_INPUTS);
    assert_true(exists(path));
    assert_int_equal(a.nfiles, 2);
    assert_int_equal(a.bytes, 4);

    for (int i = 0; i < 3; i++) { /* one at a time: each gets its own "go" */
        wait_started((size_t)i + 1);
        release();
        a = wait_state(j, id[i], SRV_DONE);
        assert_int_equal(a.exit_code, 0);
        assert_string_equal(a.error, "");
        assert_true(a.started_ms >= a.created_ms && a.finished_ms >= a.started_ms);
        check_meta(&a);
    }
    snprintf(expect, sizeof expect, "%s\n%s\n%s\n", id[0], id[1], id[2]);
    assert_string_equal(wait_started(3), expect); /* oldest first */
    memset(listed, 0, sizeof listed);
    assert_int_equal(jobs_each(j, collect, listed), 0);
    assert_string_equal(listed[0], id[2]); /* newest first */
    assert_string_equal(listed[1], id[1]);
    assert_string_equal(listed[2], id[0]);
    assert_string_equal(listed[3], "");
    jobs_stats(j, &st);
    assert_int_equal(st.done, 3);
    assert_int_equal(st.queued + st.running + st.failed, 0);
    assert_int_equal(jobs_get(j, id[0], &a, &err), 0);
    jobs_close(j);

    /* meta round trip: a new server reads back what the first wrote */
    assert_int_equal(jobs_open(&S, &j, &err), 0);
    assert_int_equal(jobs_get(j, id[0], &again, &err), 0);
    assert_memory_equal(&a, &again, sizeof a);
    jobs_close(j);
}

/* How a worker's end is told: exit 1 (findings) is done; exit 3 says the
 * log's error line without the analysis folder; a signal; a timeout
 * (the whole process group killed); exit 0 without a report. */
static void test_outcomes(void **state)
{
    srv_jobs *j;
    srv_analysis a;
    op_error err;
    char id[SRV_ID_LEN + 1], path[4096 + 32];
    struct stat st;
    pid_t pid;

    (void)state;
    fresh_server();
    O.queue = 8;
    assert_int_equal(jobs_open(&S, &j, &err), 0);
    submit(j, stage("findings", NULL), id);
    a = wait_state(j, id, SRV_DONE);
    assert_int_equal(a.exit_code, 1);

    submit(j, stage("fail", NULL), id);
    a = wait_state(j, id, SRV_FAILED);
    assert_int_equal(a.exit_code, 3);
    assert_string_equal(a.error, "exit 3: inputs/fail: error: boom");
    check_meta(&a);

    submit(j, stage("segv", NULL), id);
    a = wait_state(j, id, SRV_FAILED);
    assert_non_null(strstr(a.error, "killed by signal 11"));

    submit(j, stage("oom", NULL), id);
    a = wait_state(j, id, SRV_FAILED);
    assert_string_equal(a.error, "out of memory (--analysis-memory 1073741824 bytes): "
                                 "optipipe: x: Cannot allocate memory");

    submit(j, stage("noisy", NULL), id); /* 5 MB of diagnostics */
    a = wait_state(j, id, SRV_FAILED);
    assert_string_equal(a.error, "exit 3: optipipe: error: the last word");
    snprintf(path, sizeof path, "%s/%s", a.dir, SRV_WORKER_LOG);
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_size > (4 << 20) && st.st_size < (4 << 20) + 100);
    assert_non_null(strstr(read_text_at(path, (4 << 20) - 10),
                           "optipipe serve: worker.log cut here at 4194304 bytes\n"));

    submit(j, stage("noreport", NULL), id);
    a = wait_state(j, id, SRV_FAILED);
    assert_string_equal(a.error, "exit 0 without a report");
    jobs_close(j);

    O.analysis_timeout_s = 1;
    assert_int_equal(jobs_open(&S, &j, &err), 0);
    submit(j, stage("hang", NULL), id);
    a = wait_state(j, id, SRV_FAILED);
    assert_string_equal(a.error, "timed out after 1 s (--analysis-timeout)");
    pid = pid_file(&a, "sleep.pid"); /* the worker's own child died too */
    wait_gone(pid);
    jobs_close(j);
}

static void make_analysis(const char *id, const char *meta)
{
    char path[4096 + 64];

    snprintf(path, sizeof path, "%s/analyses/%s", S.data, id);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/analyses/%s/inputs", S.data, id);
    assert_int_equal(mkdir(path, 0700), 0);
    if (meta) {
        snprintf(path, sizeof path, "%s/analyses/%s/%s", S.data, id, SRV_META);
        write_file(path, meta);
    }
}

static const char meta_fmt[] =
    "{\"id\": \"%s\", \"state\": \"%s\", \"created_ms\": %d, \"started_ms\": %d, "
    "\"finished_ms\": %d, \"exit_code\": %d, \"error\": \"%s\", \"files\": 1, "
    "\"bytes\": 2}\n";

/* A DATA an earlier server left (killed with kill -9): finished ones stay,
 * queued and running ones run again oldest first, broken ones are skipped
 * and kept, DATA/tmp is emptied. */
static void test_recovery(void **state)
{
    static const char *const ids[] = {"1111111111111111", "2222222222222222",
                                      "3333333333333333", "4444444444444444",
                                      "5555555555555555", "6666666666666666",
                                      "7777777777777777"};
    srv_jobs *j;
    srv_analysis a;
    op_error err;
    char meta[1024], path[4096 + 64], done_meta[2048], listed[8][SRV_ID_LEN + 1];
    char expect[64];

    (void)state;
    fresh_server();
    snprintf(meta, sizeof meta, meta_fmt, ids[0], "done", 1000, 1100, 1200, 0, "");
    make_analysis(ids[0], meta);
    snprintf(done_meta, sizeof done_meta, "%s", meta);
    snprintf(path, sizeof path, "%s/analyses/%s/%s", S.data, ids[0], SRV_REPORT_JSON);
    write_file(path, "{}\n");
    snprintf(meta, sizeof meta, meta_fmt, ids[1], "running", 3000, 3100, 0, 0, "");
    make_analysis(ids[1], meta);
    snprintf(meta, sizeof meta, meta_fmt, ids[2], "queued", 2000, 0, 0, 0, "");
    make_analysis(ids[2], meta);
    make_analysis(ids[3], NULL);                      /* no meta.json */
    make_analysis(ids[4], "{\"id\": \"5555555555555555\", \"state\": "); /* cut */
    snprintf(meta, sizeof meta, meta_fmt, ids[6], "done", 1000, 1100, 1200, 0, "");
    make_analysis(ids[5], meta);                      /* another folder's meta */
    snprintf(meta, sizeof meta, meta_fmt, ids[6], "failed", 500, 600, 700, 3, "exit 3: x");
    make_analysis(ids[6], meta);
    snprintf(path, sizeof path, "%s/analyses/not-an-id", S.data);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/tmp/leftover", S.data);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/tmp/leftover/part", S.data);
    write_file(path, "half an upload");

    assert_int_equal(jobs_open(&S, &j, &err), 0);
    wait_state(j, ids[1], SRV_DONE);
    wait_state(j, ids[2], SRV_DONE);
    snprintf(expect, sizeof expect, "%s\n%s\n", ids[2], ids[1]); /* by created */
    assert_string_equal(wait_started(2), expect);
    snprintf(path, sizeof path, "%s/analyses/%s/%s", S.data, ids[0], SRV_META);
    assert_string_equal(read_text(path), done_meta);
    assert_int_equal(jobs_get(j, ids[6], &a, &err), 0);
    assert_int_equal(a.state, SRV_FAILED);
    assert_string_equal(a.error, "exit 3: x");
    assert_int_equal(a.exit_code, 3);
    for (int i = 3; i < 6; i++) {
        assert_int_equal(jobs_get(j, ids[i], &a, &err), OP_ENOTFOUND);
        snprintf(path, sizeof path, "%s/analyses/%s", S.data, ids[i]);
        assert_true(exists(path)); /* skipped, never deleted */
    }
    snprintf(path, sizeof path, "%s/analyses/not-an-id", S.data);
    assert_true(exists(path));
    snprintf(path, sizeof path, "%s/tmp/leftover", S.data);
    assert_false(exists(path));
    memset(listed, 0, sizeof listed);
    assert_int_equal(jobs_each(j, collect, listed), 0);
    assert_string_equal(listed[0], ids[1]);
    assert_string_equal(listed[1], ids[2]);
    assert_string_equal(listed[2], ids[0]);
    assert_string_equal(listed[3], ids[6]);
    assert_string_equal(listed[4], "");
    jobs_close(j);
}

/* jobs_close kills a running worker and leaves its analysis queued; the
 * next server runs it again. */
static void test_close_requeues(void **state)
{
    srv_jobs *j;
    srv_analysis a;
    op_error err;
    char id[SRV_ID_LEN + 1], path[4096 + 32];

    (void)state;
    fresh_server();
    assert_int_equal(jobs_open(&S, &j, &err), 0);
    submit(j, stage("gate", NULL), id);
    wait_started(1);
    assert_int_equal(jobs_get(j, id, &a, &err), 0);
    jobs_close(j);
    wait_gone(pid_file(&a, "pid.txt"));
    snprintf(path, sizeof path, "%s/%s", a.dir, SRV_META);
    assert_non_null(strstr(read_text(path), "\"state\": \"queued\""));
    assert_int_equal(jobs_open(&S, &j, &err), 0);
    assert_int_equal(jobs_get(j, id, &a, &err), 0);
    assert_true(a.state == SRV_QUEUED || a.state == SRV_RUNNING);
    wait_started(2);
    release();
    wait_state(j, id, SRV_DONE);
    jobs_close(j);
}

/* URL inputs: urls.txt; refused URLs, empty submits and a folder that is
 * not a staging folder of DATA/tmp (left alone). */
static void test_submit_checks(void **state)
{
    srv_jobs *j;
    srv_analysis a;
    srv_upload *up;
    op_error err;
    char id[SRV_ID_LEN + 1], path[4096 + 32], outside[4096 + 32];
    const char *ok[] = {"http://127.0.0.1:9/jobs/overview"};
    const char *bad[][1] = {{"http://10.0.0.1/"}, {"file:///etc/passwd"},
                            {"http://127.0.0.1/\nhttp://10.0.0.1/"},
                            {"http://127.0.0.1@10.0.0.1/"}};

    (void)state;
    fresh_server();
    assert_int_equal(jobs_open(&S, &j, &err), 0);
    assert_int_equal(jobs_submit(j, NULL, ok, 1, id, &err), 0);
    a = wait_state(j, id, SRV_DONE);
    assert_int_equal(a.nfiles, 0);
    snprintf(path, sizeof path, "%s/%s", a.dir, SRV_URLS);
    assert_string_equal(read_text(path), "http://127.0.0.1:9/jobs/overview\n");
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        up = stage("a.json", NULL);
        snprintf(path, sizeof path, "%s", up->dir);
        assert_int_equal(jobs_submit(j, up, bad[i], 1, id, &err), OP_EUSAGE);
        assert_false(exists(path));
        assert_string_equal(id, "");
    }
    assert_int_equal(jobs_submit(j, NULL, NULL, 0, id, &err), OP_EUSAGE);
    {
        const char *many[SRV_FIELDS_MAX + 1];
        for (size_t i = 0; i <= SRV_FIELDS_MAX; i++)
            many[i] = ok[0];
        assert_int_equal(jobs_submit(j, NULL, many, SRV_FIELDS_MAX + 1, id, &err),
                         OP_EUSAGE);
        assert_non_null(strstr(err.msg, "more than 64 URL inputs"));
    }
    up = stage("a.json", NULL);
    snprintf(outside, sizeof outside, "%s/outside", tm_tmpdir);
    assert_int_equal(rename(up->dir, outside), 0);
    pathf(up->dir, sizeof up->dir, "%s", outside);
    assert_int_equal(jobs_submit(j, up, NULL, 0, id, &err), OP_EUSAGE);
    assert_true(exists(outside));
    snprintf(path, sizeof path, "%s/tmp", S.data);
    assert_int_equal(entries(path), 0); /* no staging folder left behind */
    jobs_close(j);
}

/* srv_url_allowed: the host as libcurl reads it, against --fetch-allow. */
static void test_url_allowed(void **state)
{
    serve_opts o;
    const char *hosts[3];

    (void)state;
    memset(&o, 0, sizeof o);
    assert_false(srv_url_allowed(&o, "http://127.0.0.1/")); /* none allowed */
    o.fetch_allow = hosts;
    o.fetch_allow[o.nfetch_allow++] = "127.0.0.1";
    o.fetch_allow[o.nfetch_allow++] = "::1";
    o.fetch_allow[o.nfetch_allow++] = "JobManager.example";
    assert_true(srv_url_allowed(&o, "http://127.0.0.1:8081/jobs/overview"));
    assert_true(srv_url_allowed(&o, "HTTPS://127.0.0.1/"));
    assert_true(srv_url_allowed(&o, "http://[::1]:8081/"));
    assert_true(srv_url_allowed(&o, "http://jobmanager.EXAMPLE/"));
    assert_false(srv_url_allowed(&o, "http://127.0.0.1@10.0.0.1/"));
    assert_false(srv_url_allowed(&o, "http://127.0.0.1.evil.example/"));
    assert_false(srv_url_allowed(&o, "http://10.0.0.1/?127.0.0.1"));
    assert_false(srv_url_allowed(&o, "ftp://127.0.0.1/"));
    assert_false(srv_url_allowed(&o, "file:///etc/passwd"));
    assert_false(srv_url_allowed(&o, "http://"));
    assert_false(srv_url_allowed(&o, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ids),
        cmocka_unit_test(test_url_allowed),
        cmocka_unit_test(test_queue_full),
        cmocka_unit_test(test_outcomes),
        cmocka_unit_test(test_recovery),
        cmocka_unit_test(test_close_requeues),
        cmocka_unit_test(test_submit_checks),
    };

    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
