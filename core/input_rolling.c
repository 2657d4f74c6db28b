/*
 * input_rolling.c - Spark rolling event-log folders (spark.md §2.3) as one
 * stream.
 *
 * A folder eventlog_v2_<app>/ holds events_<N>_<app>[.codec][.compact]
 * files and an appstatus_<app>[.inprogress] marker. Spark writes whole
 * lines into each file and starts a fresh codec stream per file, so the
 * folder reads as the files' lines one after the other, each file opened
 * with input_open() (its own codec by magic bytes). The order and the
 * choice of files follow Spark's RollingEventLogFilesFileReader: numeric
 * index order (events_10 after events_2), a .compact file after the normal
 * file of the same index, every file before the last .compact dropped.
 * Lines are handed out zero-copy from the current file's stream.
 *
 * The stream reports itself truncated at its end when the appstatus file
 * still says .inprogress (the application had not stopped), so a reader
 * treats it like an in-progress single file.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input.h"

#define ROLL_MAX_FILES 100000

typedef struct roll_file {
    char *path;
    uint64_t index;
    int compact;
} roll_file;

typedef struct rolling {
    op_stream base; /* first: op_stream * casts to rolling * */
    char *name;
    input_limits lim;
    roll_file *files;
    size_t nfiles, next; /* files[next] is the next one to open */
    op_stream *cur;      /* NULL once every file was read */
    uint64_t line_base;  /* lines of the files already closed */
    uint64_t off_base;   /* decoded bytes of the files already closed */
    int in_progress;     /* appstatus_*.inprogress */
    int last_cut;        /* the last file closed ended mid-line/frame */
    int done;
    op_error err; /* sticky */
    char *all;    /* read_all buffer */
    char warning[OP_ERROR_MAX];
    char cur_warning[OP_ERROR_MAX];
} rolling;

static const struct op_stream_api rolling_api;

int input_is_rolling_dir(const char *path)
{
    const char *base = strrchr(path, '/');
    size_t n;

    base = base ? base + 1 : path;
    n = strlen(base);
    /* "dir/" given with a trailing slash: look at the component before */
    if (n == 0 && base != path) {
        const char *end = base - 1, *start = end;
        while (start > path && start[-1] != '/')
            start--;
        return strncmp(start, "eventlog_v2_", 12) == 0 && end > start;
    }
    return strncmp(base, "eventlog_v2_", 12) == 0;
}

int input_rolling_owns(const op_stream *s)
{
    return s && s->api == &rolling_api;
}

/* --- listing ------------------------------------------------------------ */

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);

    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* "events_12_app.zstd" -> 12; 0 when the name is not an events file. */
static int events_index(const char *name, uint64_t *idx)
{
    const char *p = name + 7;
    uint64_t v = 0;
    int digits = 0;

    if (strncmp(name, "events_", 7) != 0)
        return 0;
    while (*p >= '0' && *p <= '9' && digits < 18) {
        v = v * 10 + (uint64_t)(*p - '0');
        p++;
        digits++;
    }
    if (!digits || *p != '_')
        return 0;
    *idx = v;
    return 1;
}

static int cmp_files(const void *x, const void *y)
{
    const roll_file *a = x, *b = y;

    if (a->index != b->index)
        return a->index < b->index ? -1 : 1;
    return a->compact - b->compact;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir), m = strlen(name);
    char *p = malloc(n + m + 2);

    if (!p)
        return NULL;
    memcpy(p, dir, n);
    p[n] = '/';
    memcpy(p + n + 1, name, m + 1);
    return p;
}

static void add_warning(rolling *r, const char *fmt, const char *detail)
{
    size_t n = strlen(r->warning);

    if (n)
        snprintf(r->warning + n, sizeof r->warning - n, "; ");
    n = strlen(r->warning);
    snprintf(r->warning + n, sizeof r->warning - n, fmt, detail);
}

/* Lists the events files and the appstatus marker. */
static int list_files(rolling *r, op_error *err)
{
    DIR *d = opendir(r->name);
    struct dirent *e;
    size_t cap = 0;
    int appstatus = 0;

    if (!d)
        return op_error_set(err, errno == ENOENT ? OP_ENOTFOUND : OP_EIO,
                            "%s: cannot open the rolling event-log folder: %s",
                            r->name, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        uint64_t idx;
        if (!strncmp(e->d_name, "appstatus_", 10)) {
            appstatus = 1;
            if (ends_with(e->d_name, ".inprogress"))
                r->in_progress = 1;
            continue;
        }
        if (!events_index(e->d_name, &idx))
            continue;
        if (r->nfiles >= ROLL_MAX_FILES)
            break;
        if (r->nfiles == cap) {
            size_t ncap = cap ? cap * 2 : 8;
            roll_file *nf = realloc(r->files, ncap * sizeof *nf);
            if (!nf)
                goto oom;
            r->files = nf;
            cap = ncap;
        }
        r->files[r->nfiles].path = join(r->name, e->d_name);
        if (!r->files[r->nfiles].path)
            goto oom;
        r->files[r->nfiles].index = idx;
        r->files[r->nfiles].compact = ends_with(e->d_name, ".compact");
        r->nfiles++;
    }
    closedir(d);
    if (!r->nfiles)
        return op_error_set(err, OP_EPARSE,
                            "%s: a rolling event-log folder without any "
                            "events_<N>_ file",
                            r->name);
    if (!appstatus)
        add_warning(r, "%s", "no appstatus_ file (Spark's reader would "
                             "refuse the folder); read anyway");
    return OP_OK;
oom:
    closedir(d);
    return op_error_set(err, OP_ENOMEM, "%s: out of memory", r->name);
}

/* Sorts the files and drops those a .compact file replaced. */
static void order_files(rolling *r)
{
    size_t i, last_compact = 0, k;
    int has_compact = 0;

    qsort(r->files, r->nfiles, sizeof *r->files, cmp_files);
    for (i = 0; i < r->nfiles; i++)
        if (r->files[i].compact) {
            last_compact = i;
            has_compact = 1;
        }
    if (has_compact && last_compact > 0) {
        for (i = 0; i < last_compact; i++)
            free(r->files[i].path);
        memmove(r->files, r->files + last_compact,
                (r->nfiles - last_compact) * sizeof *r->files);
        r->nfiles -= last_compact;
    }
    if (has_compact)
        add_warning(r, "%s", "compacted by the History Server: the events "
                             "of finished jobs before the .compact file "
                             "are gone");
    for (k = 1; k < r->nfiles; k++)
        if (r->files[k].index != r->files[k - 1].index + 1) {
            add_warning(r, "%s", "the events_ file numbers are not "
                                 "contiguous: some events are missing");
            break;
        }
}

/* --- moving between files ----------------------------------------------- */

static int fail(rolling *r, op_error *err)
{
    if (err)
        *err = r->err;
    return r->err.code;
}

/* Closes the current file (if any) and opens the next non-empty one.
 * Returns 0 (r->cur is NULL when there is none) or an op_status. */
static int open_next(rolling *r)
{
    if (r->cur) {
        const char *w = input_warning(r->cur);
        r->line_base += op_stream_line_no(r->cur);
        r->off_base += op_stream_offset(r->cur);
        r->last_cut = op_stream_truncated(r->cur);
        if (w)
            snprintf(r->cur_warning, sizeof r->cur_warning, "%s", w);
        input_close(r->cur);
        r->cur = NULL;
    }
    while (r->next < r->nfiles) {
        input_limits l = r->lim;
        const roll_file *f = &r->files[r->next++];
        int rc;
        if (l.max_bytes) {
            if (r->off_base >= l.max_bytes)
                return op_error_set(&r->err, OP_ELIMIT,
                                    "%s: more than %llu bytes after "
                                    "decompression (--max-bytes); stopped "
                                    "before %s",
                                    r->name,
                                    (unsigned long long)l.max_bytes, f->path);
            l.max_bytes -= r->off_base;
        }
        rc = input_open(f->path, &l, &r->cur, &r->err);
        if (rc)
            return rc;
        return OP_OK;
    }
    r->done = 1;
    return OP_OK;
}

/* --- op_stream_api ------------------------------------------------------ */

static int ro_read_line(op_stream *st, const char **line, size_t *len,
                        op_error *err)
{
    rolling *r = (rolling *)st;

    *line = "";
    *len = 0;
    if (r->err.code) {
        fail(r, err);
        return -1;
    }
    while (r->cur) {
        int rc = op_stream_read_line(r->cur, line, len, &r->err);
        if (rc > 0)
            return rc;
        if (rc < 0 || open_next(r)) {
            fail(r, err);
            return -1;
        }
    }
    return 0;
}

static long ro_read(op_stream *st, void *buf, size_t n, op_error *err)
{
    rolling *r = (rolling *)st;

    if (r->err.code) {
        fail(r, err);
        return -1;
    }
    while (r->cur) {
        long got = op_stream_read(r->cur, buf, n, &r->err);
        if (got != 0) {
            if (got < 0)
                fail(r, err);
            return got;
        }
        if (open_next(r)) {
            fail(r, err);
            return -1;
        }
    }
    return 0;
}

static int ro_read_all(op_stream *st, const char **out, size_t *len,
                       op_error *err)
{
    rolling *r = (rolling *)st;
    size_t cap = 0, n = 0;

    *out = "";
    *len = 0;
    if (r->all) /* handed out already: the stream is at its end */
        return OP_OK;
    for (;;) {
        long got;
        if (cap - n < 65536) {
            size_t ncap = cap ? cap * 2 : 1 << 20;
            char *nb;
            if (n > r->lim.max_doc) {
                op_error_set(&r->err, OP_ELIMIT,
                             "%s: larger than the limit of %zu bytes for a "
                             "whole document",
                             r->name, r->lim.max_doc);
                return fail(r, err);
            }
            nb = realloc(r->all, ncap + 1);
            if (!nb) {
                op_error_set(&r->err, OP_ENOMEM, "%s: out of memory",
                             r->name);
                return fail(r, err);
            }
            r->all = nb;
            cap = ncap;
        }
        got = ro_read(st, r->all + n, cap - n, err);
        if (got < 0)
            return r->err.code;
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (n > r->lim.max_doc) {
        op_error_set(&r->err, OP_ELIMIT,
                     "%s: larger than the limit of %zu bytes for a whole "
                     "document",
                     r->name, r->lim.max_doc);
        return fail(r, err);
    }
    r->all[n] = '\0';
    *out = r->all;
    *len = n;
    return OP_OK;
}

static const char *ro_name(const op_stream *st)
{
    return ((const rolling *)st)->name;
}

static uint64_t ro_line_no(const op_stream *st)
{
    const rolling *r = (const rolling *)st;

    return r->line_base + (r->cur ? op_stream_line_no(r->cur) : 0);
}

static uint64_t ro_offset(const op_stream *st)
{
    const rolling *r = (const rolling *)st;

    return r->off_base + (r->cur ? op_stream_offset(r->cur) : 0);
}

static int ro_truncated(const op_stream *st)
{
    const rolling *r = (const rolling *)st;

    if (r->cur)
        return op_stream_truncated(r->cur);
    return r->last_cut || (r->done && r->in_progress);
}

static const char *ro_codec(const op_stream *st)
{
    const rolling *r = (const rolling *)st;

    return r->cur ? op_stream_codec(r->cur) : "plain";
}

static const struct op_stream_api rolling_api = {
    .size = sizeof(struct op_stream_api),
    .read = ro_read,
    .read_line = ro_read_line,
    .read_all = ro_read_all,
    .name = ro_name,
    .line_no = ro_line_no,
    .offset = ro_offset,
    .truncated = ro_truncated,
    .codec = ro_codec,
};

/* --- the entry points ---------------------------------------------------- */

int input_open_rolling(const char *dir, const input_limits *limits,
                       op_stream **out, op_error *err)
{
    rolling *r = NULL;
    size_t n;
    int rc;

    if (!dir || !out)
        return op_error_set(err, OP_EUSAGE, "input_open_rolling: no folder");
    *out = NULL;
    r = calloc(1, sizeof *r);
    if (!r)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", dir);
    r->base.api = &rolling_api;
    input_limits_default(&r->lim);
    if (limits) { /* 0 keeps the default */
        if (limits->max_line)
            r->lim.max_line = limits->max_line;
        if (limits->max_bytes)
            r->lim.max_bytes = limits->max_bytes;
        if (limits->max_doc)
            r->lim.max_doc = limits->max_doc;
    }
    r->name = strdup(dir);
    if (!r->name) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", dir);
        goto out;
    }
    n = strlen(r->name); /* "dir/" names the same folder */
    while (n > 1 && r->name[n - 1] == '/')
        r->name[--n] = '\0';
    rc = list_files(r, err);
    if (rc)
        goto out;
    order_files(r);
    rc = open_next(r);
    if (rc && err)
        *err = r->err;
out:
    if (rc) {
        input_close(&r->base);
        return rc;
    }
    *out = &r->base;
    return OP_OK;
}

/* Opens the files paths[0..n) (borrowed; copied) as one stream named
 * name, in that order: the same stream as a rolling folder's, for parts of
 * one log that lie elsewhere (input_parts.c). */
int input_open_list(const char *name, char *const *paths, size_t n,
                    const input_limits *limits, op_stream **out,
                    op_error *err)
{
    rolling *r = calloc(1, sizeof *r);
    size_t i;
    int rc = OP_OK;

    *out = NULL;
    if (!r)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
    r->base.api = &rolling_api;
    input_limits_default(&r->lim);
    if (limits && limits->max_line)
        r->lim.max_line = limits->max_line;
    if (limits && limits->max_bytes)
        r->lim.max_bytes = limits->max_bytes;
    if (limits && limits->max_doc)
        r->lim.max_doc = limits->max_doc;
    r->name = strdup(name);
    r->files = calloc(n ? n : 1, sizeof *r->files);
    if (!r->name || !r->files)
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
    for (i = 0; !rc && i < n; i++) {
        r->files[i].path = strdup(paths[i]);
        r->files[i].index = i;
        if (!r->files[i].path)
            rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
        else
            r->nfiles++;
    }
    if (!rc && (rc = open_next(r)) != 0 && err)
        *err = r->err;
    if (rc) {
        input_close(&r->base);
        return rc;
    }
    *out = &r->base;
    return OP_OK;
}

int input_rolling_peek(op_stream *st, size_t max, const unsigned char **head,
                       size_t *len, op_error *err)
{
    rolling *r = (rolling *)st;

    *head = (const unsigned char *)"";
    *len = 0;
    /* an empty first file (just rolled over) shows nothing: look further */
    while (r->cur) {
        int rc = input_peek(r->cur, max, head, len, err);
        if (rc || *len > 0 || r->next >= r->nfiles)
            return rc;
        if (open_next(r))
            return fail(r, err);
    }
    return OP_OK;
}

const char *input_rolling_warning(const op_stream *st)
{
    const rolling *r = (const rolling *)st;
    const char *w = r->cur ? input_warning(r->cur) : NULL;

    if (!w && r->cur_warning[0])
        w = r->cur_warning;
    if (w && !r->warning[0])
        return w;
    return r->warning[0] ? r->warning : NULL;
}

void input_rolling_close(op_stream *st)
{
    rolling *r = (rolling *)st;
    size_t i;

    if (!r)
        return;
    input_close(r->cur);
    for (i = 0; i < r->nfiles; i++)
        free(r->files[i].path);
    free(r->files);
    free(r->name);
    free(r->all);
    free(r);
}
