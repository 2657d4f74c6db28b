/*
 * prom.c - the Prometheus input plugin: scrape files in the text
 * exposition format or OpenMetrics, and Prometheus API responses
 * (query_range / query JSON). Each input adds samples to one store kept
 * across inputs (the plugin slot); several scrapes of a target, in any
 * order, form a time series, and finish() builds the runs once every input
 * was read. Which engine, job and node a series is comes from the host's
 * mapping packs (docs/mapping-packs.md), never from this code.
 */
#include "prom_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <optipipe/plugin.h>

/* ---- detection ------------------------------------------------------------ */

static int count_sample(void *ud, const prom_sample *s)
{
    (void)s;
    (*(int *)ud)++;
    return 0;
}

/* Counts the head's first whole lines that are samples (*good) and that
 * are neither samples nor comments (*bad). */
static void head_samples(const op_probe *p, int *good, int *bad)
{
    prom_text t;
    size_t i = 0, lines = 0;

    *good = *bad = 0;
    prom_text_init(&t);
    while (i < p->head_len && lines < 16) {
        const unsigned char *nl = memchr(p->head + i, '\n', p->head_len - i);
        const char *why;
        if (!nl)
            break; /* a cut line says nothing */
        if (prom_text_line(&t, (const char *)p->head + i,
                           (size_t)(nl - (p->head + i)), count_sample, good,
                           &why))
            (*bad)++;
        i = (size_t)(nl - p->head) + 1;
        lines++;
    }
    prom_text_free(&t);
}

static int has_suffix(const char *s, const char *sfx)
{
    size_t n = strlen(s), k = strlen(sfx);
    return n >= k && strcmp(s + n - k, sfx) == 0;
}

static int prom_detect(const op_probe *p)
{
    int first = op_probe_first(p), good, bad;

    if (first == '{' || first == '[')
        return op_probe_has(p, "\"resultType\"") &&
                       (op_probe_has(p, "\"matrix\"") ||
                        op_probe_has(p, "\"vector\""))
                   ? 90
                   : 0;
    if (first == '#' && (op_probe_has(p, "# TYPE ") || op_probe_has(p, "# HELP ")))
        return 90;
    head_samples(p, &good, &bad);
    if (good && (has_suffix(p->basename, ".prom") ||
                 has_suffix(p->basename, ".om")) && bad < good)
        return 60; /* the name says so; a bad line is the parser's to name */
    return good && !bad ? 50 : good >= 2 && bad < good ? 40 : 0;
}

/* ---- when a scrape was taken ---------------------------------------------- */

static int digits(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* A time in a file name: 13 digits (epoch ms), 10 digits (epoch s), or
 * YYYYMMDD[T_-]HHMMSS / YYYY-MM-DDTHH:MM:SS (UTC), as `date` writes them. */
static int name_time(const char *base, int64_t *ms)
{
    size_t n = strlen(base), i, run;

    for (i = 0; i < n; i += run ? run : 1) {
        struct tm tm;
        char buf[16];
        run = strspn(base + i, "0123456789");
        if (run == 13 && (i == 0 || !isdigit((unsigned char)base[i - 1]))) {
            *ms = strtoll(base + i, NULL, 10);
            return 1;
        }
        if (run == 10) {
            *ms = strtoll(base + i, NULL, 10) * 1000;
            return 1;
        }
        memset(&tm, 0, sizeof tm);
        if (run == 8 && i + 15 <= n && strchr("T_-", base[i + 8]) &&
            digits(base + i + 9, 6)) {
            memcpy(buf, base + i, 8);
            buf[8] = '\0';
        } else if (run == 4 && i + 19 <= n && base[i + 4] == '-' &&
                   digits(base + i + 5, 2) && base[i + 7] == '-' &&
                   digits(base + i + 8, 2) && strchr("T_ ", base[i + 10]) &&
                   digits(base + i + 11, 2) && digits(base + i + 14, 2) &&
                   digits(base + i + 17, 2)) {
            tm.tm_year = atoi(base + i) - 1900;
            tm.tm_mon = atoi(base + i + 5) - 1;
            tm.tm_mday = atoi(base + i + 8);
            tm.tm_hour = atoi(base + i + 11);
            tm.tm_min = atoi(base + i + 14);
            tm.tm_sec = atoi(base + i + 17);
            *ms = (int64_t)timegm(&tm) * 1000;
            return 1;
        } else {
            continue;
        }
        tm.tm_year = (buf[0] - '0') * 1000 + (buf[1] - '0') * 100 +
                     (buf[2] - '0') * 10 + (buf[3] - '0') - 1900;
        tm.tm_mon = (buf[4] - '0') * 10 + (buf[5] - '0') - 1;
        tm.tm_mday = (buf[6] - '0') * 10 + (buf[7] - '0');
        tm.tm_hour = (base[i + 9] - '0') * 10 + (base[i + 10] - '0');
        tm.tm_min = (base[i + 11] - '0') * 10 + (base[i + 12] - '0');
        tm.tm_sec = (base[i + 13] - '0') * 10 + (base[i + 14] - '0');
        *ms = (int64_t)timegm(&tm) * 1000;
        return 1;
    }
    return 0;
}

/* The input's time for samples without their own, and where it came
 * from; the target is the input's folder. */
static enum prom_time input_time(const char *name, int64_t seq, int64_t *ms,
                                 char *target, size_t cap)
{
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    struct stat st;

    if (slash)
        snprintf(target, cap, "%.*s", (int)(slash - name), name);
    else
        snprintf(target, cap, "%s", strcmp(name, "-") == 0 ? "stdin" : ".");
    if (name_time(base, ms))
        return PROM_T_NAME;
    if (strstr(name, "://") == NULL && strcmp(name, "-") != 0 &&
        stat(name, &st) == 0) {
        *ms = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        return PROM_T_MTIME;
    }
    *ms = seq; /* keeps the inputs apart, in order; no rates from it */
    return PROM_T_NONE;
}

/* ---- parsing ---------------------------------------------------------------- */

typedef struct parse_ctx {
    prom_state *st;
    op_builder *b;
    op_error map_err; /* the first mapping error of this input */
    uint64_t map_errors;
} parse_ctx;

static int on_sample(void *ud, const prom_sample *s)
{
    parse_ctx *c = ud;
    op_error e;
    int rc;

    op_error_clear(&e);
    rc = prom_add(c->st, c->b, s, &e);
    if (rc == OP_ELIMIT) { /* a pack's template: that series stays unmapped */
        if (!c->map_errors++)
            c->map_err = e;
        return 0;
    }
    return rc;
}

static prom_state *state_of(op_builder *b)
{
    void **slot = op_plugin_slot(b);

    if (!slot)
        return NULL;
    if (!*slot)
        *slot = prom_state_new();
    return *slot;
}

static int parse_text(op_stream *in, const char *first, size_t first_len,
                      parse_ctx *c, op_error *err)
{
    prom_text t;
    const char *line = first, *why, *name = op_stream_name(in);
    size_t len = first_len;
    uint64_t bad = 0, bad_line = 0;
    const char *bad_why = NULL;
    int rc = 0, r;

    prom_text_init(&t);
    for (;;) {
        r = prom_text_line(&t, line, len, on_sample, c, &why);
        if (r == OP_EPARSE) {
            if (!bad++) {
                bad_line = op_stream_line_no(in);
                bad_why = why;
            }
        } else if (r) {
            rc = op_error_set(err, r, "%s: line %llu: %s", name,
                              (unsigned long long)op_stream_line_no(in),
                              r == OP_ENOMEM ? "out of memory" : "cannot go on");
            break;
        }
        r = op_stream_read_line(in, &line, &len, err);
        if (r == 0)
            break;
        if (r < 0) {
            rc = err->code ? err->code : OP_EIO;
            break;
        }
    }
    if (!rc && bad)
        rc = op_error_set(err, OP_EPARSE, "%s: line %llu: %s (%llu bad line%s; "
                          "every other line was read)", name,
                          (unsigned long long)bad_line, bad_why,
                          (unsigned long long)bad, bad > 1 ? "s" : "");
    prom_text_free(&t);
    return rc;
}

static int parse_json(op_stream *in, const char *first, size_t first_len,
                      parse_ctx *c, op_error *err)
{
    const char *rest = NULL;
    size_t rest_len = 0;
    char *doc;
    int rc;

    if ((rc = op_stream_read_all(in, &rest, &rest_len, err)))
        return rc;
    if (!(doc = malloc(first_len + 1 + rest_len + 1)))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    memcpy(doc, first, first_len);
    doc[first_len] = '\n';
    if (rest_len)
        memcpy(doc + first_len + 1, rest, rest_len);
    doc[first_len + 1 + rest_len] = '\0';
    rc = prom_range_parse(doc, first_len + 1 + rest_len, op_stream_name(in),
                          on_sample, c, err);
    free(doc);
    return rc;
}

static int prom_parse(op_stream *in, op_builder *b, op_error *err)
{
    static int64_t seq; /* input order, for inputs without any time */
    prom_state *st = state_of(b);
    parse_ctx c;
    char target[4096];
    const char *line, *name = op_stream_name(in), *p;
    size_t len;
    int64_t ms;
    enum prom_time src;
    int rc;

    if (!st)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    memset(&c, 0, sizeof c);
    c.st = st;
    c.b = b;
    src = input_time(name, ++seq, &ms, target, sizeof target);
    if ((rc = prom_input_begin(st, name, target, ms, src)))
        return op_error_set(err, rc, "out of memory");
    rc = op_stream_read_line(in, &line, &len, err);
    if (rc <= 0)
        return rc < 0 ? (err->code ? err->code : OP_EIO) : 0;
    for (p = line; p < line + len && isspace((unsigned char)*p); p++)
        ;
    if (p < line + len && (*p == '{' || *p == '['))
        rc = parse_json(in, line, len, &c, err);
    else
        rc = parse_text(in, line, len, &c, err);
    if (!rc && prom_input_refused(st))
        rc = op_error_set(err, OP_ELIMIT, "%s: %llu samples were refused: the "
                          "analysis holds at most %d series and %d samples of "
                          "mapped series, or a series key passed 64 KiB "
                          "(split the inputs)", name,
                          (unsigned long long)prom_input_refused(st),
                          PROM_MAX_SERIES, PROM_MAX_POINTS);
    if (!rc && c.map_errors)
        rc = op_error_set(err, OP_ELIMIT, "%s: %s (%llu series left unmapped)",
                          name, c.map_err.msg,
                          (unsigned long long)c.map_errors);
    /* what went wrong in an input that gave samples is a warning of the
     * runs it feeds (printed with the file and line): the rest is read */
    if ((rc == OP_EPARSE || rc == OP_ELIMIT) && prom_input_samples(st)) {
        if (prom_warn(st, err->msg))
            return op_error_set(err, OP_ENOMEM, "out of memory");
        op_error_clear(err);
        rc = 0;
    }
    return rc;
}

static int prom_finish(op_builder *b, op_error *err)
{
    void **slot = op_plugin_slot(b);
    prom_state *st = slot ? *slot : NULL;
    int rc;

    if (!st)
        return 0;
    rc = prom_emit(st, b, err);
    prom_state_free(st);
    *slot = NULL;
    return rc;
}

const op_plugin op_plugin_prometheus = {
    OP_PLUGIN_HEADER,
    .name = "prometheus",
    .version = "1.0.0",
    .description = "Prometheus text exposition / OpenMetrics scrapes and "
                   "query_range JSON, mapped to engines by mapping packs",
    .detect = prom_detect,
    .parse = prom_parse,
    .finish = prom_finish,
};
