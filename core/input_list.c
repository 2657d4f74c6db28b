/*
 * input_list.c - several files read as one stream, one after the other,
 * each through its own codec (by magic bytes): the files a log was split
 * into, wherever they lie (a folder layout of an engine, the parts of
 * input_parts.c). Writers start whole lines and a fresh codec stream in
 * each file, so the lines are handed out zero-copy from the current file's
 * stream; line numbers and offsets count on across files, and --max-bytes
 * bounds the decoded bytes of all of them together.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"

typedef struct list_stream {
    input_stream base; /* first: op_stream * casts to list_stream * */
    char *name;
    input_limits lim;
    char **paths;
    size_t nfiles, next; /* paths[next] is the next one to open */
    op_stream *cur;      /* NULL once every file was read */
    uint64_t line_base;  /* lines of the files already closed */
    uint64_t off_base;   /* decoded bytes of the files already closed */
    int unfinished;      /* the writer had not stopped: truncated at the end */
    int last_cut;        /* the last file closed ended mid-line/frame */
    int done;
    op_error err; /* sticky */
    char *all;    /* read_all buffer */
    char warning[OP_ERROR_MAX];
    char cur_warning[OP_ERROR_MAX];
} list_stream;

static const struct op_stream_api list_api;
static const input_ops list_ops;

/* --- moving between files ----------------------------------------------- */

static int fail(list_stream *r, op_error *err)
{
    if (err)
        *err = r->err;
    return r->err.code;
}

/* Closes the current file (if any) and opens the next non-empty one.
 * Returns 0 (r->cur is NULL when there is none) or an op_status. */
static int open_next(list_stream *r)
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
        const char *path = r->paths[r->next++];
        int rc;
        if (l.max_bytes) {
            if (r->off_base >= l.max_bytes)
                return op_error_set(&r->err, OP_ELIMIT,
                                    "%s: more than %llu bytes after "
                                    "decompression (--max-bytes); stopped "
                                    "before %s",
                                    r->name,
                                    (unsigned long long)l.max_bytes, path);
            l.max_bytes -= r->off_base;
        }
        rc = input_open(path, &l, &r->cur, &r->err);
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
    list_stream *r = (list_stream *)st;

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
    list_stream *r = (list_stream *)st;

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
    list_stream *r = (list_stream *)st;
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
    return ((const list_stream *)st)->name;
}

static uint64_t ro_line_no(const op_stream *st)
{
    const list_stream *r = (const list_stream *)st;

    return r->line_base + (r->cur ? op_stream_line_no(r->cur) : 0);
}

static uint64_t ro_offset(const op_stream *st)
{
    const list_stream *r = (const list_stream *)st;

    return r->off_base + (r->cur ? op_stream_offset(r->cur) : 0);
}

static int ro_truncated(const op_stream *st)
{
    const list_stream *r = (const list_stream *)st;

    if (r->cur)
        return op_stream_truncated(r->cur);
    return r->last_cut || (r->done && r->unfinished);
}

static const char *ro_codec(const op_stream *st)
{
    const list_stream *r = (const list_stream *)st;

    return r->cur ? op_stream_codec(r->cur) : "plain";
}

static const struct op_stream_api list_api = {
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

int input_open_list(const char *name, char *const *paths, size_t n,
                    const input_limits *limits, op_stream **out,
                    op_error *err)
{
    list_stream *r = calloc(1, sizeof *r);
    size_t i;
    int rc = OP_OK;

    *out = NULL;
    if (!r)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
    r->base.base.api = &list_api;
    r->base.ops = &list_ops;
    input_limits_from(&r->lim, limits);
    r->name = strdup(name);
    r->paths = calloc(n ? n : 1, sizeof *r->paths);
    if (!r->name || !r->paths)
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
    for (i = 0; !rc && i < n; i++) {
        r->paths[i] = strdup(paths[i]);
        if (!r->paths[i])
            rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
        else
            r->nfiles++;
    }
    if (!rc && (rc = open_next(r)) != 0 && err)
        *err = r->err;
    if (rc) {
        input_close(&r->base.base);
        return rc;
    }
    *out = &r->base.base;
    return OP_OK;
}

void input_list_note(op_stream *st, const char *note)
{
    list_stream *r = (list_stream *)st;
    size_t n = strlen(r->warning);

    if (n)
        snprintf(r->warning + n, sizeof r->warning - n, "; ");
    n = strlen(r->warning);
    snprintf(r->warning + n, sizeof r->warning - n, "%s", note);
}

void input_list_set_unfinished(op_stream *st)
{
    ((list_stream *)st)->unfinished = 1;
}

static int list_peek(op_stream *st, size_t max, const unsigned char **head,
                        size_t *len, op_error *err)
{
    list_stream *r = (list_stream *)st;

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

static const char *list_warning(const op_stream *st)
{
    const list_stream *r = (const list_stream *)st;
    const char *w = r->cur ? input_warning(r->cur) : NULL;

    if (!w && r->cur_warning[0])
        w = r->cur_warning;
    if (w && !r->warning[0])
        return w;
    return r->warning[0] ? r->warning : NULL;
}

static void list_close(op_stream *st)
{
    list_stream *r = (list_stream *)st;
    size_t i;

    if (!r)
        return;
    input_close(r->cur);
    for (i = 0; i < r->nfiles; i++)
        free(r->paths[i]);
    free(r->paths);
    free(r->name);
    free(r->all);
    free(r);
}

static const input_ops list_ops = {
    .peek = list_peek,
    .warning = list_warning,
    .close = list_close, /* no source_offset: 0, the files' sizes vary */
};
