/*
 * spark.c - the Spark event-log input plugin: detection and the line loop.
 *
 * A Spark event log is one JSON event per line (docs/spark.md). The host
 * hands us the decompressed stream (every codec, and rolling folders as one
 * stream). TaskStart/TaskEnd lines, nearly all of a big log, go through the
 * allocation-free scanner (spark_scan.c); the few other events we use are
 * parsed with cJSON; every other event is skipped by its name without being
 * parsed. A line that does not parse is counted and named (the first few),
 * and the loop goes on. A last line cut in the middle (an in-progress log)
 * is not an error: the run is marked running and a warning says where the
 * log stopped. See docs/spark.md.
 *
 * Two threads: a reader fills large chunks from the stream (reading and
 * decompressing: the host's codecs run there) while this thread splits
 * them into lines and parses, so decompression and parsing overlap. The
 * model is only touched by the parsing thread.
 */
#include <ctype.h>
#include <dirent.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <optipipe/grow.h>

#include "spark_internal.h"

/* --- detection ---------------------------------------------------------- */

static int spark_detect(const op_probe *p)
{
    size_t i = 0;
    static const char a[] = "{\"Event\":\"SparkListener";
    static const char b[] = "{\"Event\":\"org.apache.spark.";

    if (p->head_len >= 3 && p->head[0] == 0xEF && p->head[1] == 0xBB &&
        p->head[2] == 0xBF)
        i = 3;
    while (i < p->head_len && isspace(p->head[i]))
        i++;
    if ((p->head_len - i >= sizeof a - 1 &&
         !memcmp(p->head + i, a, sizeof a - 1)) ||
        (p->head_len - i >= sizeof b - 1 &&
         !memcmp(p->head + i, b, sizeof b - 1)))
        return 95;
    if (op_probe_has(p, "\"Event\":\"SparkListener") ||
        op_probe_has(p, "\"Event\": \"SparkListener"))
        return 85;
    return 0;
}

/* --- line handling ------------------------------------------------------ */

/* Events used from their parsed JSON; the rest are counted by name. */
static int wanted(const char *n, size_t len)
{
    static const char *const names[] = {
        "SparkListenerLogStart",          "SparkListenerApplicationStart",
        "SparkListenerApplicationEnd",    "SparkListenerEnvironmentUpdate",
        "SparkListenerJobStart",          "SparkListenerJobEnd",
        "SparkListenerStageSubmitted",    "SparkListenerStageCompleted",
        "SparkListenerExecutorAdded",     "SparkListenerExecutorRemoved",
        "SparkListenerSQLExecutionStart", "SparkListenerSQLExecutionEnd",
        /* spark_detect.c: plans, SQL metric values, executor peaks */
        "SparkListenerSQLAdaptiveExecutionUpdate",
        "SparkListenerDriverAccumUpdates",
        "SparkListenerStageExecutorMetrics",
        "SparkListenerExecutorMetricsUpdate",
    };
    const char *dot;
    size_t i;

    for (dot = n + len; dot > n; dot--) /* fully qualified names */
        if (dot[-1] == '.' || dot[-1] == '\\')
            break;
    len -= (size_t)(dot - n);
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == len && !memcmp(names[i], dot, len))
            return 1;
    return 0;
}

static void bad_line(sp_app *a, uint64_t line_no, const char *line,
                     size_t len)
{
    char snip[48];
    size_t i, n = len < sizeof snip - 1 ? len : sizeof snip - 1;

    a->bad_lines++;
    if (a->nbad_report >= SP_MAX_BAD_REPORTED)
        return;
    for (i = 0; i < n; i++) /* terminals and reports get plain ASCII */
        snip[i] = line[i] >= 0x20 && line[i] < 0x7f ? line[i] : '?';
    snip[n] = '\0';
    snprintf(a->bad_report[a->nbad_report++], sizeof a->bad_report[0],
             "line %llu is not valid JSON (starts \"%s%s\"); skipped",
             (unsigned long long)line_no, snip, len > n ? "..." : "");
}

static void task_event(sp_app *a, int end, const sp_task *t)
{
    if (end && t->has_peak)
        sp_peaks_add(a, t->executor, t->peak);
    if (end)
        sp_on_task_end(a, t);
    else
        sp_on_task_start(a, t);
}

/* The slow path: cJSON for the whole line. Returns 0, or -1 when the line
 * is not JSON (the caller decides whether that is a cut last line). */
static int parse_json_line(sp_app *a, const char *line, size_t len)
{
    cJSON *o = cJSON_ParseWithLength(line, len);
    const char *ev;
    int rc = 0;

    if (!o || !cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return -1;
    }
    if (sp_json_sanitize(a, o)) { /* no memory: a->oom stops the run */
        cJSON_Delete(o);
        return 0;
    }
    ev = sp_jstr(o, "Event");
    if (!ev) {
        rc = 0; /* valid JSON but no event: ignored like an unknown one */
    } else if (!strcmp(ev, "SparkListenerTaskEnd") ||
               !strcmp(ev, "SparkListenerTaskStart")) {
        char buf[8192];
        sp_task t;
        int end = ev[17] == 'E';
        if (sp_task_from_json(o, end, &t, buf, sizeof buf) == 0)
            task_event(a, end, &t);
    } else if (!sp_on_event(a, ev, o)) {
        a->unknown_events++;
    }
    a->events++;
    cJSON_Delete(o);
    return rc;
}

static int handle_line(sp_app *a, const char *line, size_t len)
{
    static const char dbc[] = "DBCEventLoggingListenerMetadata";
    sp_span name;
    sp_task t;
    int ev;

    while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
        len--;
    if (!len)
        return 0;
    ev = sp_scan_event(line, &name);
    if (name.n == sizeof dbc - 1 && !memcmp(name.s, dbc, name.n))
        return sp_on_rollover_line(a, line, len, a->last_line_no);
    if (ev != SP_EV_OTHER &&
        sp_scan_task(line, len, ev == SP_EV_TASK_END, &t) == 0) {
        a->events++;
        task_event(a, ev == SP_EV_TASK_END, &t);
        return 0;
    }
    if (ev == SP_EV_OTHER && name.n && !wanted(name.s, name.n)) {
        char n[96];
        sp_span s = name;
        if (s.n >= sizeof n)
            s.n = sizeof n - 1;
        memcpy(n, s.s, s.n);
        n[s.n] = '\0';
        a->events++;
        if (!sp_on_event(a, n, NULL))
            a->unknown_events++;
        return 0;
    }
    return parse_json_line(a, line, len);
}

/* --- rolling folders and names ------------------------------------------ */

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);

    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* A rolling folder (the stream is named after it): its appstatus file says
 * whether the app still runs, a .compact file that older events are gone. */
static void rolling_info(sp_app *a, const char *path)
{
    struct stat st;
    struct dirent *e;
    DIR *d;

    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return;
    d = opendir(path);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        if (!strncmp(e->d_name, "appstatus_", 10) &&
            ends_with(e->d_name, ".inprogress"))
            a->in_progress = 1;
        if (!strncmp(e->d_name, "events_", 7) &&
            ends_with(e->d_name, ".compact"))
            a->compact = 1;
    }
    closedir(d);
}

static void final_warnings(sp_app *a, op_stream *in, int stream_cut)
{
    int i;

    for (i = 0; i < a->nbad_report; i++)
        sp_warn(a, "%s", a->bad_report[i]);
    if (a->bad_lines > a->nbad_report)
        sp_warn(a, "%lld malformed lines in all were skipped",
                (long long)a->bad_lines);
    sp_limit_warnings(a);
    if (a->compact)
        sp_warn(a, "the rolling log was compacted by the History Server "
                   "(an events_N...compact file): events of finished jobs "
                   "before it are gone, so totals cover only what is left");
    if (!a->has_start || !a->has_env)
        sp_warn(a, "incomplete: the log has no %s%s%s (a rolled-over part without "
                   "the first part, or a line that could not be read): the app's "
                   "settings are unknown, so no size is derived from Spark's defaults",
                a->has_start ? "" : "SparkListenerApplicationStart",
                !a->has_start && !a->has_env ? ", no " : "",
                a->has_env ? "" : "SparkListenerEnvironmentUpdate");
    if (a->cut_last_line || a->in_progress || !a->has_end) {
        a->in_progress = 1;
        sp_warn(a,
                "in progress or cut: the log ends at line %llu%s%s; analyzed "
                "up to the last whole event",
                (unsigned long long)a->last_line_no,
                a->cut_last_line ? " inside an unfinished event" : "",
                a->has_end ? "" : " without SparkListenerApplicationEnd");
    } else if (stream_cut) {
        sp_warn(a, "the stream ends early (after line %llu) but the "
                   "application's end was read",
                (unsigned long long)a->last_line_no);
    }
    (void)in;
}

/* --- reading: a reader thread and chunks ---------------------------------- */

#define SP_CHUNK (256u << 10) /* bytes per chunk: stays in L2 */
#define SP_NCHUNK 4         /* chunks in flight */
#define SP_MAX_LINE ((size_t)256 << 20)

typedef struct chunk {
    char *buf; /* SP_CHUNK + 1 bytes (room for a NUL) */
    size_t len;
} chunk;

typedef struct reader {
    op_stream *in;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chunk ch[SP_NCHUNK];
    unsigned head, tail; /* filled chunks: tail..head-1 (mod SP_NCHUNK) */
    int eof, failed, stop;
    op_error err;
} reader;

static void *reader_main(void *arg)
{
    reader *r = arg;

    for (;;) {
        chunk *c;
        size_t n = 0;
        int eof = 0, failed = 0;
        op_error err;

        pthread_mutex_lock(&r->mu);
        while (!r->stop && r->head - r->tail == SP_NCHUNK)
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->stop) {
            pthread_mutex_unlock(&r->mu);
            return NULL;
        }
        c = &r->ch[r->head % SP_NCHUNK];
        pthread_mutex_unlock(&r->mu);

        op_error_clear(&err);
        while (n < SP_CHUNK) {
            long got = op_stream_read(r->in, c->buf + n, SP_CHUNK - n, &err);
            if (got < 0) {
                failed = 1;
                break;
            }
            if (got == 0) {
                eof = 1;
                break;
            }
            n += (size_t)got;
        }
        c->len = n;

        pthread_mutex_lock(&r->mu);
        r->head++;
        r->eof = eof;
        if (failed) {
            r->failed = 1;
            r->err = err;
        }
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        if (eof || failed)
            return NULL;
    }
}

/* Waits for the next filled chunk; NULL once the reader is done (check
 * r->failed). */
static chunk *next_chunk(reader *r)
{
    chunk *c = NULL;

    pthread_mutex_lock(&r->mu);
    while (r->head == r->tail && !r->eof && !r->failed)
        pthread_cond_wait(&r->cv, &r->mu);
    if (r->head != r->tail)
        c = &r->ch[r->tail % SP_NCHUNK];
    pthread_mutex_unlock(&r->mu);
    return c;
}

static void release_chunk(reader *r)
{
    pthread_mutex_lock(&r->mu);
    r->tail++;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* One line (line[len] is a writable NUL). Returns 0, or -1 to stop. */
static int one_line(sp_app *a, const char *line, size_t len, uint64_t no,
                    int last_unterminated)
{
    a->lines++;
    a->last_line_no = no;
    if (handle_line(a, line, len) != 0) {
        if (last_unterminated)
            a->cut_last_line = 1;
        else
            bad_line(a, no, line, len);
    }
    return a->oom ? -1 : 0;
}

typedef struct carry {
    char *buf;
    size_t len, cap;
} carry;

static int carry_add(carry *k, const char *p, size_t n)
{
    if (OP_GROW(k->buf, k->cap, k->len + n + 1, 65536))
        return -1;
    memcpy(k->buf + k->len, p, n);
    k->len += n;
    k->buf[k->len] = '\0';
    return 0;
}

/* Splits chunks into lines. Returns 0, or an op_status with err set when
 * nothing could be read. *stream_cut is set when reading stopped early. */
static int parse_chunks(sp_app *a, reader *r, op_error *err, int *stream_cut)
{
    carry k = {NULL, 0, 0};
    uint64_t no = 0;
    chunk *c;
    int rc = OP_OK, stop = 0;

    while (!stop && (c = next_chunk(r)) != NULL) {
        char *p = c->buf, *end = c->buf + c->len;
        while (p < end && !stop) {
            char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl) { /* the line goes on in the next chunk */
                if (k.len + (size_t)(end - p) > SP_MAX_LINE) {
                    sp_warn(a, "line %llu is longer than %zu bytes; reading "
                               "stopped there",
                            (unsigned long long)no + 1, SP_MAX_LINE);
                    *stream_cut = 1;
                    stop = 1;
                } else if (carry_add(&k, p, (size_t)(end - p))) {
                    a->oom = 1;
                    stop = 1;
                }
                break;
            }
            *nl = '\0';
            no++;
            if (k.len) {
                if (carry_add(&k, p, (size_t)(nl - p))) {
                    a->oom = 1;
                    break;
                }
                stop = one_line(a, k.buf, k.len, no, 0) != 0;
                k.len = 0;
            } else {
                stop = one_line(a, p, (size_t)(nl - p), no, 0) != 0;
            }
            p = nl + 1;
        }
        release_chunk(r);
    }
    if (!stop && k.len) /* a last line without '\n' */
        one_line(a, k.buf, k.len, ++no, 1);
    free(k.buf);
    if (r->failed) {
        if (a->events == 0)
            rc = op_error_set(err, r->err.code ? r->err.code : OP_EIO, "%s",
                              r->err.msg);
        else
            sp_warn(a, "reading stopped after line %llu: %s",
                    (unsigned long long)a->last_line_no, r->err.msg);
        *stream_cut = 1;
    }
    return rc;
}

/* Runs the reader thread over `in`. Returns -1 when no thread could be
 * started (the caller then reads line by line), else 0 or an op_status. */
static int parse_threaded(sp_app *a, op_stream *in, op_error *err,
                          int *stream_cut)
{
    reader r;
    pthread_t th;
    int i, rc = -1, started = 0;

    memset(&r, 0, sizeof r);
    r.in = in;
    for (i = 0; i < SP_NCHUNK; i++) {
        r.ch[i].buf = malloc(SP_CHUNK + 1);
        if (!r.ch[i].buf)
            goto out;
    }
    if (pthread_mutex_init(&r.mu, NULL))
        goto out;
    if (pthread_cond_init(&r.cv, NULL)) {
        pthread_mutex_destroy(&r.mu);
        goto out;
    }
    if (pthread_create(&th, NULL, reader_main, &r) == 0) {
        started = 1;
        rc = parse_chunks(a, &r, err, stream_cut);
        pthread_mutex_lock(&r.mu);
        r.stop = 1;
        pthread_cond_broadcast(&r.cv);
        pthread_mutex_unlock(&r.mu);
        pthread_join(th, NULL);
    }
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
out:
    for (i = 0; i < SP_NCHUNK; i++)
        free(r.ch[i].buf);
    return started ? rc : -1;
}

/* The single-threaded path: the stream's own zero-copy lines. */
static int parse_lines(sp_app *a, op_stream *in, op_error *err,
                       int *stream_cut)
{
    op_error rerr;

    op_error_clear(&rerr);
    for (;;) {
        const char *line;
        size_t len;
        int r = op_stream_read_line(in, &line, &len, &rerr);
        if (r == 0)
            break;
        if (r < 0) {
            /* a stream error is final: keep what was read */
            if (a->events == 0)
                return op_error_set(err, rerr.code ? rerr.code : OP_EIO, "%s",
                                    rerr.msg);
            sp_warn(a, "reading stopped after line %llu: %s",
                    (unsigned long long)a->last_line_no, rerr.msg);
            *stream_cut = 1;
            break;
        }
        if (one_line(a, line, len, op_stream_line_no(in),
                     op_stream_truncated(in)) != 0)
            break;
    }
    return OP_OK;
}

static int spark_parse(op_stream *in, op_builder *b, op_error *err)
{
    const char *name = op_stream_name(in);
    int rc, stream_cut = 0;
    sp_app a;

    sp_app_init(&a, b, name);
    if (ends_with(name, ".inprogress"))
        a.in_progress = 1;
    rolling_info(&a, name);
    rc = parse_threaded(&a, in, err, &stream_cut);
    if (rc < 0)
        rc = parse_lines(&a, in, err, &stream_cut);
    if (rc)
        goto out;
    if (op_stream_truncated(in))
        stream_cut = 1;
    if (a.oom) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory at line %llu",
                          name, (unsigned long long)a.last_line_no);
        goto out;
    }
    if (a.events == 0) {
        rc = op_error_set(err, OP_EPARSE,
                          "%s: no Spark event could be read (%lld lines, "
                          "%lld malformed)",
                          name, (long long)a.lines, (long long)a.bad_lines);
        goto out;
    }
    sp_app_close_all(&a);
    final_warnings(&a, in, stream_cut);
    if (!a.app_id || !a.attempt_id)
        sp_app_emit(&a);
    else if (sp_attempt_defer(&a, name) < 0)
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
out:
    sp_app_free(&a);
    return rc;
}

const op_plugin op_plugin_spark = {
    OP_PLUGIN_HEADER,
    .name = "spark",
    .version = "0.1.0",
    .description = "Spark event logs (Spark 1.x-4.x; single files and "
                   "eventlog_v2_ rolling folders; every codec)",
    .detect = spark_detect,
    .parse = spark_parse,
    .finish = sp_attempts_finish,
};
