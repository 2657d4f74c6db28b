/*
 * progress.c - the progress bar of long parses (see progress.h): a
 * forwarding op_stream that redraws one line on stderr as bytes go by.
 */
#include "progress.h"
#include "input.h"
#include "report_util.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_DELAY 0.5  /* seconds before the first draw */
#define PROGRESS_EVERY 0.1  /* seconds between draws */
#define PROGRESS_BAR 24     /* characters of the bar itself */

double progress_now(void)
{
    return (double)util_now_ns() / 1e9;
}

const char *progress_format(char *buf, size_t n, const char *name,
                            uint64_t done, uint64_t total, double secs)
{
    return progress_format_of(buf, n, 0, 0, name, done, total, 0, secs);
}

const char *progress_format_of(char *buf, size_t n, size_t index,
                               size_t count, const char *name, uint64_t done,
                               uint64_t total, int compressed, double secs)
{
    char d[32], t[32], r[32], bar[PROGRESS_BAR + 1], of[48] = "";
    double rate = secs > 0 ? (double)done / secs : 0;
    size_t i, fill;

    if (count && index && index <= count)
        snprintf(of, sizeof of, "[%zu/%zu] ", index, count);
    fmt_bytes(d, sizeof d, (double)done);
    fmt_bytes(r, sizeof r, rate);
    if (!total) {
        snprintf(buf, n, "%s%s  %s read  %s/s", of, name, d, r);
        return buf;
    }
    if (done > total)
        done = total;
    fill = (size_t)((double)done / (double)total * PROGRESS_BAR);
    for (i = 0; i < PROGRESS_BAR; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[PROGRESS_BAR] = '\0';
    fmt_bytes(t, sizeof t, (double)total);
    snprintf(buf, n, "%s%s  [%s] %3.0f%%  %s of %s%s  %s/s", of, name, bar,
             100.0 * (double)done / (double)total, d, t,
             compressed ? " compressed" : "", r);
    return buf;
}

static void draw(progress *p)
{
    char line[256];
    double t = progress_now();
    double begun = p->since > 0 && p->since < p->started ? p->since : p->started;

    if (!p->out || (!p->force && t - begun < PROGRESS_DELAY) ||
        (p->drawn && t - p->last_draw < PROGRESS_EVERY))
        return;
    p->last_draw = t;
    p->drawn = 1;
    progress_format_of(line, sizeof line, p->index, p->count, p->name,
                       p->compressed ? input_source_offset(p->inner)
                                     : op_stream_offset(p->inner),
                       p->total, p->compressed, t - p->started);
    fprintf(p->out, "\r%s\033[K", line);
    fflush(p->out);
}

static progress *of(op_stream *s)
{
    return (progress *)s; /* base is the first member */
}

static const progress *cof(const op_stream *s)
{
    return (const progress *)s;
}

static long fw_read(op_stream *s, void *buf, size_t n, op_error *err)
{
    long got = op_stream_read(of(s)->inner, buf, n, err);

    draw(of(s));
    return got;
}

static int fw_read_line(op_stream *s, const char **line, size_t *len, op_error *err)
{
    int rc = op_stream_read_line(of(s)->inner, line, len, err);

    draw(of(s));
    return rc;
}

/* A whole document: the bar names the file while it is read, then 100%. */
static int fw_read_all(op_stream *s, const char **buf, size_t *len, op_error *err)
{
    int rc;

    draw(of(s));
    rc = op_stream_read_all(of(s)->inner, buf, len, err);
    of(s)->last_draw = 0; /* redraw now: the document is read */
    draw(of(s));
    return rc;
}

static const char *fw_name(const op_stream *s)
{
    return op_stream_name(cof(s)->inner);
}

static uint64_t fw_line_no(const op_stream *s)
{
    return op_stream_line_no(cof(s)->inner);
}

static uint64_t fw_offset(const op_stream *s)
{
    return op_stream_offset(cof(s)->inner);
}

static int fw_truncated(const op_stream *s)
{
    return op_stream_truncated(cof(s)->inner);
}

static const char *fw_codec(const op_stream *s)
{
    return op_stream_codec(cof(s)->inner);
}

/* Whether to draw at all: a terminal that is not "dumb", unless forced. */
static int wanted(FILE *out, int quiet, int *force)
{
    const char *env = getenv("OPTIPIPE_PROGRESS");
    const char *term = getenv("TERM");

    *force = env && strcmp(env, "always") == 0;
    if (quiet || !out || (env && strcmp(env, "never") == 0))
        return 0;
    if (*force)
        return 1;
    return isatty(fileno(out)) && !(term && strcmp(term, "dumb") == 0);
}

int progress_wanted(FILE *out, int quiet)
{
    int force;

    return wanted(out, quiet, &force);
}

void progress_count(progress *p, size_t index, size_t count, double since)
{
    p->index = index;
    p->count = count;
    p->since = since;
}

op_stream *progress_wrap(progress *p, op_stream *inner, const char *path,
                         FILE *out, int quiet)
{
    const char *base = strrchr(path, '/');
    struct stat st;

    memset(p, 0, sizeof *p);
    p->inner = inner;
    if (!inner || !wanted(out, quiet, &p->force))
        return inner;
    p->out = out;
    report_term_copy(p->name, sizeof p->name, base && base[1] ? base + 1 : path);
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        p->total = (uint64_t)st.st_size;
        p->compressed = strcmp(op_stream_codec(inner), "plain") != 0;
    }
    p->api.size = sizeof p->api; /* every field below: the host's own table */
    p->api.read = fw_read;
    p->api.read_line = fw_read_line;
    p->api.read_all = fw_read_all;
    p->api.name = fw_name;
    p->api.line_no = fw_line_no;
    p->api.offset = fw_offset;
    p->api.truncated = fw_truncated;
    p->api.codec = fw_codec;
    p->base.api = &p->api;
    p->started = progress_now();
    return &p->base;
}

void progress_end(progress *p)
{
    if (p->out && p->drawn) {
        fputs("\r\033[K", p->out);
        fflush(p->out);
    }
    p->drawn = 0;
}

static op_stream *watch_begin(void *ud, op_stream *s, const char *path,
                              size_t index, size_t count)
{
    progress_watcher *w = ud;
    op_stream *ps = progress_wrap(&w->pg, s, path, w->out, w->quiet);

    if (!w->t0)
        w->t0 = progress_now();
    progress_count(&w->pg, index, count, w->t0);
    return ps;
}

static void watch_end(void *ud)
{
    progress_end(&((progress_watcher *)ud)->pg);
}

void progress_watcher_init(progress_watcher *w, FILE *out, int quiet)
{
    memset(w, 0, sizeof *w);
    w->watch.begin = watch_begin;
    w->watch.end = watch_end;
    w->watch.ud = w;
    w->out = out;
    w->quiet = quiet;
}
