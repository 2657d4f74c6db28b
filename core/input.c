/*
 * input.c - inputs as bounded, transparently decompressed streams, and the
 * directory walk that finds them.
 *
 * Layout of a stream: a source (a file descriptor read into a raw buffer,
 * or a borrowed memory buffer used in place), a codec chosen by magic
 * bytes (codec.h) and one decoded buffer that read_line scans with memchr.
 * A line inside the buffer is returned in place (its '\n' replaced by NUL),
 * so the hot path of reading a multi-GB log is memchr plus a few stores.
 * Plain files are read straight into the decoded buffer.
 *
 * Errors are sticky: once a stream failed, every later call returns the
 * same error. A compressed stream that ends inside a frame/block is not an
 * error: what was decoded is delivered and the stream is flagged truncated
 * (input_warning says where), since that is how Spark in-progress logs end.
 */
#include "input.h"

#include "codec.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define INPUT_BUF_INIT (512u * 1024u) /* decoded buffer, grows for long lines */
#define INPUT_RAW_SIZE (256u * 1024u) /* compressed read buffer */

#define MIB ((uint64_t)1024 * 1024)

typedef struct stream {
    input_stream base; /* first: op_stream * casts to stream * */
    char *name;
    input_limits lim;

    /* source: raw bytes src[rpos..rlen) not yet decoded */
    int fd; /* -1 for memory */
    int own_fd;
    const unsigned char *src;
    unsigned char *rbuf;
    size_t rpos, rlen;
    uint64_t rbase; /* compressed offset of src[0] */
    uint64_t nread; /* bytes read from fd so far */
    int src_eof;

    const codec_impl *codec;
    void *cstate;
    int done;      /* the codec (or plain source) reached its end */
    int cut;       /* ...and it ended inside a frame/block */

    /* decoded bytes buf[start..end); buf[cap-1] is kept for a NUL */
    unsigned char *buf;
    size_t cap, start, end;
    size_t scan; /* buf[start..start+scan) is known to hold no '\n' */
    uint64_t produced; /* decoded bytes so far (for the size cap) */

    uint64_t line_no;
    int trunc_line; /* the last line returned had no '\n' */
    int eof_seen;   /* a read reached the end of the stream */
    int all_done;   /* read_all handed out buf; keep it stable */

    op_error err; /* sticky */
    char warning[OP_ERROR_MAX]; /* "" when none */
} stream;

static const struct op_stream_api stream_api;
static const input_ops stream_ops;

void input_limits_default(input_limits *l)
{
    l->max_line = (size_t)(256 * MIB);
    l->max_bytes = 64 * 1024 * MIB;
    l->max_doc = (size_t)(1024 * MIB);
}

void input_limits_from(input_limits *l, const input_limits *given)
{
    input_limits_default(l);
    if (!given)
        return;
    if (given->max_line)
        l->max_line = given->max_line;
    if (given->max_bytes)
        l->max_bytes = given->max_bytes;
    if (given->max_doc)
        l->max_doc = given->max_doc;
}

/* --- errors ------------------------------------------------------------- */

static int fail(const stream *s, op_error *err)
{
    if (err)
        *err = s->err;
    return s->err.code;
}

/* decoded: bytes decoded in total, including the last step's. */
static void set_warning(stream *s, uint64_t decoded)
{
    snprintf(s->warning, sizeof s->warning,
             "%s: the %s stream ends inside a %s after %llu compressed "
             "bytes (an in-progress or cut file); the %llu bytes decoded "
             "before that point were read",
             s->name, s->codec->name, s->codec->unit,
             (unsigned long long)(s->rbase + s->rlen),
             (unsigned long long)decoded);
}

/* --- source ------------------------------------------------------------- */

/* read(2) that retries on EINTR. */
static long fd_read(stream *s, void *dst, size_t n)
{
    ssize_t r;

    if (n > (size_t)LONG_MAX)
        n = (size_t)LONG_MAX;
    do {
        r = read(s->fd, dst, n);
    } while (r < 0 && errno == EINTR);
    if (r < 0) {
        op_error_set(&s->err, OP_EIO, "%s: read error after %llu bytes: %s",
                     s->name, (unsigned long long)s->nread, strerror(errno));
        return -1;
    }
    if (r == 0)
        s->src_eof = 1;
    s->nread += (uint64_t)r;
    return (long)r;
}

/* Appends more compressed bytes to the raw buffer (moving the unread ones
 * to its front first). Returns 0 or -1 with s->err set. */
static int src_more(stream *s)
{
    long n;

    if (s->fd < 0) {
        s->src_eof = 1;
        return 0;
    }
    if (s->rpos > 0) {
        memmove(s->rbuf, s->rbuf + s->rpos, s->rlen - s->rpos);
        s->rbase += s->rpos;
        s->rlen -= s->rpos;
        s->rpos = 0;
    }
    if (s->rlen == INPUT_RAW_SIZE)
        return 0;
    n = fd_read(s, s->rbuf + s->rlen, INPUT_RAW_SIZE - s->rlen);
    if (n < 0)
        return -1;
    s->rlen += (size_t)n;
    return 0;
}

/* --- decoding ----------------------------------------------------------- */

static long fill_plain(stream *s, unsigned char *dst, size_t cap)
{
    long n;

    if (s->rpos < s->rlen) { /* the sniffed head first */
        size_t k = s->rlen - s->rpos;
        if (k > cap)
            k = cap;
        memcpy(dst, s->src + s->rpos, k);
        s->rpos += k;
        return (long)k;
    }
    if (s->fd < 0 || s->src_eof) {
        s->done = 1;
        return 0;
    }
    n = fd_read(s, dst, cap);
    if (n == 0)
        s->done = 1;
    return n;
}

/* A codec that takes no input and gives no output would loop forever;
 * the codecs never do that, but bad input must not find a way to. */
static long stalled(stream *s)
{
    op_error_set(&s->err, OP_EPARSE,
                 "%s: %s decoder stalled at compressed byte %llu", s->name,
                 s->codec->name, (unsigned long long)(s->rbase + s->rpos));
    return -1;
}

static long fill_codec(stream *s, unsigned char *dst, size_t cap)
{
    for (;;) {
        codec_io io;
        size_t before;
        int rc;

        memset(&io, 0, sizeof io);
        io.in = s->src + s->rpos;
        io.in_len = s->rlen - s->rpos;
        io.out = dst;
        io.out_cap = cap;
        io.in_eof = s->src_eof;
        io.in_base = s->rbase + s->rpos;
        io.name = s->name;
        rc = s->codec->step(s->cstate, &io, &s->err);
        s->rpos += io.in_pos;
        if (rc == CODEC_ERR) {
            if (!s->err.code)
                op_error_set(&s->err, OP_EPARSE, "%s: corrupt %s data",
                             s->name, s->codec->name);
            return io.out_pos ? (long)io.out_pos : -1; /* error comes next */
        }
        if (rc == CODEC_END || rc == CODEC_TRUNC) {
            s->done = 1;
            s->cut = rc == CODEC_TRUNC;
            if (s->cut)
                set_warning(s, s->produced + io.out_pos);
            return (long)io.out_pos;
        }
        if (io.out_pos)
            return (long)io.out_pos;
        if (io.in_pos)
            continue;
        if (s->src_eof)
            return stalled(s);
        before = s->rlen - s->rpos;
        if (src_more(s))
            return -1;
        if (s->rlen - s->rpos == before && !s->src_eof)
            return stalled(s);
    }
}

static long fill_any(stream *s, unsigned char *dst, size_t cap)
{
    if (s->err.code)
        return -1;
    if (s->done)
        return 0;
    return s->codec->step ? fill_codec(s, dst, cap) : fill_plain(s, dst, cap);
}

/* Decodes up to cap bytes into dst, enforcing max_bytes. Returns the count,
 * 0 at the end of the stream, -1 with s->err set. */
static long fill(stream *s, unsigned char *dst, size_t cap)
{
    uint64_t room = s->lim.max_bytes - s->produced;
    long n;

    if (s->err.code)
        return -1;
    if (room == 0) { /* at the cap: is there more? */
        unsigned char probe;
        n = fill_any(s, &probe, 1);
        if (n > 0) {
            op_error_set(&s->err, OP_ELIMIT,
                         "%s: more than %llu bytes after decompression "
                         "(--max-bytes); stopped there",
                         s->name, (unsigned long long)s->lim.max_bytes);
            return -1;
        }
        return n;
    }
    if (cap > room)
        cap = (size_t)room;
    n = fill_any(s, dst, cap);
    if (n > 0)
        s->produced += (uint64_t)n;
    return n;
}

/* Reads more decoded bytes after buf[end], first moving the pending bytes
 * to the front or growing buf (up to limit bytes of capacity). Returns the
 * count, 0 at the end, -1 on error (s->err), -2 when buf is full at limit. */
static long buf_more(stream *s, size_t limit)
{
    size_t room = s->cap - 1 - s->end;
    long n;

    if (s->start > 0 && room < s->cap / 4) {
        memmove(s->buf, s->buf + s->start, s->end - s->start);
        s->end -= s->start;
        s->start = 0;
        room = s->cap - 1 - s->end;
    }
    if (room == 0) {
        size_t ncap = s->cap <= SIZE_MAX / 2 ? s->cap * 2 : SIZE_MAX;
        unsigned char *nb;
        if (s->cap >= limit)
            return -2;
        if (ncap > limit)
            ncap = limit;
        nb = realloc(s->buf, ncap);
        if (!nb) {
            op_error_set(&s->err, OP_ENOMEM, "%s: out of memory", s->name);
            return -1;
        }
        s->buf = nb;
        s->cap = ncap;
        room = s->cap - 1 - s->end;
    }
    n = fill(s, s->buf + s->end, room);
    if (n > 0)
        s->end += (size_t)n;
    return n;
}

static size_t sat_add(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

/* --- op_stream_api ------------------------------------------------------ */

/* read_line's failure: -1 with err set from the sticky error. */
static int line_fail(const stream *s, op_error *err)
{
    fail(s, err);
    return -1;
}

static int line_too_long(stream *s, op_error *err)
{
    op_error_set(&s->err, OP_ELIMIT,
                 "%s: line %llu is longer than the limit of %zu bytes "
                 "(--max-line)",
                 s->name, (unsigned long long)(s->line_no + 1),
                 s->lim.max_line);
    return line_fail(s, err);
}

static int st_read_line(op_stream *st, const char **line, size_t *len,
                        op_error *err)
{
    stream *s = (stream *)st;
    size_t limit = sat_add(s->lim.max_line, 2); /* line + '\n' + NUL */

    *line = "";
    *len = 0;
    if (s->all_done)
        return 0;
    for (;;) {
        unsigned char *p = s->buf + s->start;
        size_t avail = s->end - s->start;
        unsigned char *nl = NULL;
        long n;

        if (s->scan < avail)
            nl = memchr(p + s->scan, '\n', avail - s->scan);
        if (nl) {
            size_t k = (size_t)(nl - p);
            if (k > s->lim.max_line)
                return line_too_long(s, err);
            *nl = '\0';
            *line = (const char *)p;
            *len = k;
            s->start += k + 1;
            s->scan = 0;
            s->line_no++;
            s->trunc_line = 0;
            return 1;
        }
        s->scan = avail;
        if (avail > s->lim.max_line)
            return line_too_long(s, err);
        n = buf_more(s, limit);
        if (n == -2)
            return line_too_long(s, err);
        if (n < 0)
            return line_fail(s, err);
        if (n > 0)
            continue;
        s->eof_seen = 1;
        if (avail == 0)
            return 0;
        p = s->buf + s->start; /* the last line, without '\n' */
        p[avail] = '\0';
        *line = (const char *)p;
        *len = avail;
        s->start = s->end;
        s->scan = 0;
        s->line_no++;
        s->trunc_line = 1;
        return 1;
    }
}

static long st_read(op_stream *st, void *out, size_t n, op_error *err)
{
    stream *s = (stream *)st;
    size_t avail = s->end - s->start;
    long got;

    if (n == 0 || s->all_done)
        return 0;
    if (n > (size_t)LONG_MAX)
        n = (size_t)LONG_MAX;
    if (avail) {
        if (avail > n)
            avail = n;
        memcpy(out, s->buf + s->start, avail);
        s->start += avail;
        s->scan = s->scan > avail ? s->scan - avail : 0;
        return (long)avail;
    }
    got = fill(s, out, n);
    if (got < 0) {
        fail(s, err);
        return -1;
    }
    if (got == 0)
        s->eof_seen = 1;
    return got;
}

static int st_read_all(op_stream *st, const char **out, size_t *len,
                       op_error *err)
{
    stream *s = (stream *)st;
    size_t limit = sat_add(s->lim.max_doc, 2);

    *out = "";
    *len = 0;
    if (s->all_done)
        return OP_OK;
    for (;;) {
        long n;
        if (s->end - s->start > s->lim.max_doc) {
            op_error_set(&s->err, OP_ELIMIT,
                         "%s: larger than the limit of %zu bytes for a whole "
                         "document",
                         s->name, s->lim.max_doc);
            return fail(s, err);
        }
        n = buf_more(s, limit);
        if (n == 0)
            break;
        if (n == -1)
            return fail(s, err);
        /* -2 (full at limit) is caught by the size check above */
    }
    s->buf[s->end] = '\0';
    *out = (const char *)s->buf + s->start;
    *len = s->end - s->start;
    s->start = s->end;
    s->scan = 0;
    s->eof_seen = 1;
    s->all_done = 1;
    return OP_OK;
}

static const char *st_name(const op_stream *st)
{
    return ((const stream *)st)->name;
}

static uint64_t st_line_no(const op_stream *st)
{
    return ((const stream *)st)->line_no;
}

static uint64_t st_offset(const op_stream *st)
{
    const stream *s = (const stream *)st;

    return s->produced - (uint64_t)(s->end - s->start);
}

static int st_truncated(const op_stream *st)
{
    const stream *s = (const stream *)st;

    return s->trunc_line || (s->eof_seen && s->cut);
}

static uint64_t st_source_offset(const op_stream *st)
{
    const stream *s = (const stream *)st;

    return s->codec->step ? s->rbase + s->rpos : st_offset(st);
}

static const char *st_codec(const op_stream *st)
{
    return ((const stream *)st)->codec->name;
}

static const struct op_stream_api stream_api = {
    .size = sizeof(struct op_stream_api),
    .read = st_read,
    .read_line = st_read_line,
    .read_all = st_read_all,
    .name = st_name,
    .line_no = st_line_no,
    .offset = st_offset,
    .truncated = st_truncated,
    .codec = st_codec,
};

/* --- opening ------------------------------------------------------------ */

static stream *stream_new(const char *name, const input_limits *limits)
{
    stream *s = calloc(1, sizeof *s);

    if (!s)
        return NULL;
    s->base.base.api = &stream_api;
    s->base.ops = &stream_ops;
    s->fd = -1;
    input_limits_from(&s->lim, limits);
    s->name = strdup(name);
    s->cap = INPUT_BUF_INIT;
    s->buf = malloc(s->cap);
    if (!s->name || !s->buf) {
        free(s->name);
        free(s->buf);
        free(s);
        return NULL;
    }
    return s;
}

/* Reads the head, picks the codec and starts it. */
static int stream_start(stream *s, op_error *err)
{
    int rc;

    while (s->fd >= 0 && s->rlen < CODEC_SNIFF_LEN && !s->src_eof) {
        if (src_more(s))
            return fail(s, err);
    }
    rc = codec_detect(s->src + s->rpos, s->rlen - s->rpos, s->name, &s->codec,
                      err);
    if (rc)
        return rc;
    if (s->codec->init)
        return s->codec->init(&s->cstate, s->name, err);
    return OP_OK;
}

/* What a file that is not a regular one is, for the messages. */
static const char *special_kind(mode_t m)
{
    return S_ISFIFO(m)   ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "a special file";
}

/* Opens path for reading only when it is a regular file: O_NONBLOCK so a
 * FIFO without a writer (or a device) cannot block the open, then fstat.
 * verb names the action in messages ("open", "read"). */
static int open_regular(const char *path, const char *verb, int *fd,
                        op_error *err)
{
    struct stat st;
    int e, flags;

    *fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (*fd < 0) {
        e = errno;
        if (e == ENXIO && stat(path, &st) == 0 && !S_ISREG(st.st_mode))
            return op_error_set(err, OP_EUSAGE, "%s: %s, not a regular file",
                                path, special_kind(st.st_mode));
        return op_error_set(err, e == ENOENT ? OP_ENOTFOUND : OP_EIO,
                            "%s: cannot %s: %s", path, verb, strerror(e));
    }
    if (fstat(*fd, &st) != 0) {
        e = errno;
        close(*fd);
        *fd = -1;
        return op_error_set(err, OP_EIO, "%s: cannot %s: %s", path, verb,
                            strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(*fd);
        *fd = -1;
        if (S_ISDIR(st.st_mode))
            return op_error_set(err, OP_EUSAGE,
                                "%s: is a directory (walk it instead)", path);
        return op_error_set(err, OP_EUSAGE, "%s: %s, not a regular file",
                            path, special_kind(st.st_mode));
    }
    flags = fcntl(*fd, F_GETFL);
    if (flags >= 0)
        (void)fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK);
    return OP_OK;
}

static int open_fd(const char *path, int *fd, op_error *err)
{
    if (strcmp(path, "-") == 0) {
        *fd = STDIN_FILENO;
        return OP_OK;
    }
    return open_regular(path, "open", fd, err);
}

int input_open(const char *path, const input_limits *limits, op_stream **out,
               op_error *err)
{
    stream *s = NULL;
    int fd = -1, rc;

    if (!path || !out)
        return op_error_set(err, OP_EUSAGE, "input_open: no path");
    *out = NULL;
    rc = open_fd(path, &fd, err);
    if (rc)
        goto out;
    s = stream_new(path, limits);
    if (s)
        s->rbuf = malloc(INPUT_RAW_SIZE);
    if (!s || !s->rbuf) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    s->fd = fd;
    s->own_fd = fd != STDIN_FILENO;
    fd = -1;
    s->src = s->rbuf;
    rc = stream_start(s, err);
out:
    if (fd >= 0 && fd != STDIN_FILENO)
        close(fd);
    if (rc) {
        input_close(s ? &s->base.base : NULL);
        return rc;
    }
    *out = &s->base.base;
    return OP_OK;
}

int input_open_mem(const char *name, const void *buf, size_t len,
                   const input_limits *limits, op_stream **out, op_error *err)
{
    stream *s;
    int rc;

    if (!out || (!buf && len))
        return op_error_set(err, OP_EUSAGE, "input_open_mem: no buffer");
    *out = NULL;
    if (!name)
        name = "<memory>";
    s = stream_new(name, limits);
    if (!s)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
    s->src = buf ? buf : (const unsigned char *)"";
    s->rlen = len;
    s->src_eof = 1;
    rc = stream_start(s, err);
    if (rc) {
        input_close(&s->base.base);
        return rc;
    }
    *out = &s->base.base;
    return OP_OK;
}

static int st_peek(op_stream *st, size_t max, const unsigned char **head,
                   size_t *len, op_error *err)
{
    stream *s = (stream *)st;
    size_t limit;

    *head = s->buf + s->start;
    *len = 0;
    if (max > s->lim.max_doc)
        max = s->lim.max_doc;
    limit = sat_add(max, 1);
    if (limit < s->cap)
        limit = s->cap;
    while (s->end - s->start < max && !s->all_done) {
        long n = buf_more(s, limit);
        if (n == 0 || n == -2)
            break;
        if (n < 0) {
            if (s->end == s->start) /* nothing at all: report it now */
                return fail(s, err);
            break; /* the reads after the head will report it */
        }
    }
    *head = s->buf + s->start;
    *len = s->end - s->start < max ? s->end - s->start : max;
    return OP_OK;
}

static const char *st_warning(const op_stream *st)
{
    const stream *s = (const stream *)st;

    return s->warning[0] ? s->warning : NULL;
}

char *input_read_file(const char *path, size_t max, size_t *len,
                      op_error *err)
{
    FILE *f = NULL;
    char *buf = NULL;
    size_t n;
    int fd;

    if (open_regular(path, "read", &fd, err))
        return NULL;
    if (!(f = fdopen(fd, "rb"))) {
        op_error_set(err, OP_ENOMEM, "%s: cannot read: %s", path,
                     strerror(errno));
        close(fd);
        return NULL;
    }
    if (!(buf = malloc(max + 1))) {
        op_error_set(err, OP_ENOMEM, "out of memory");
        goto out;
    }
    n = fread(buf, 1, max + 1, f); /* one more byte tells "too large" */
    if (ferror(f) || n > max) {
        op_error_set(err, ferror(f) ? OP_EIO : OP_ELIMIT,
                     ferror(f) ? "%s: read error" : "%s: larger than %zu bytes",
                     path, max);
        free(buf);
        buf = NULL;
        goto out;
    }
    buf[n] = '\0';
    *len = n;
out:
    fclose(f);
    return buf;
}

static void st_close(op_stream *st)
{
    stream *s = (stream *)st;

    if (s->codec && s->codec->free)
        s->codec->free(s->cstate);
    if (s->own_fd && s->fd >= 0)
        close(s->fd);
    free(s->rbuf);
    free(s->buf);
    free(s->name);
    free(s);
}

static const input_ops stream_ops = {
    .peek = st_peek,
    .warning = st_warning,
    .source_offset = st_source_offset,
    .close = st_close,
};

/* --- any host stream: through its input_ops ------------------------------ */

static const input_ops *ops_of(const op_stream *st)
{
    return ((const input_stream *)st)->ops;
}

int input_peek(op_stream *st, size_t max, const unsigned char **head,
               size_t *len, op_error *err)
{
    return ops_of(st)->peek(st, max, head, len, err);
}

const char *input_warning(const op_stream *st)
{
    return st && ops_of(st)->warning ? ops_of(st)->warning(st) : NULL;
}

uint64_t input_source_offset(const op_stream *st)
{
    return st && ops_of(st)->source_offset ? ops_of(st)->source_offset(st) : 0;
}

void input_close(op_stream *st)
{
    if (st)
        ops_of(st)->close(st);
}

/* --- walking ------------------------------------------------------------ */

#define WALK_MAX_DEPTH 64

struct dir_id {
    dev_t dev;
    ino_t ino;
};

typedef struct walker {
    input_visit_fn fn;
    input_error_fn on_error;
    void *ud;
    op_error *err;
    struct dir_id *seen; /* every directory entered, against loops */
    size_t nseen, cap_seen;
} walker;

static void walk_report(walker *w, const char *file, const char *fmt,
                        const char *detail)
{
    char msg[OP_ERROR_MAX];

    if (!w->on_error)
        return;
    snprintf(msg, sizeof msg, fmt, detail);
    w->on_error(file, msg, w->ud);
}

/* Returns 1 when the directory was entered before, else records it (0), or
 * -1 on no memory. */
static int walk_seen(walker *w, const struct stat *st)
{
    size_t i;

    for (i = 0; i < w->nseen; i++)
        if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
            return 1;
    if (OP_GROW(w->seen, w->cap_seen, w->nseen + 1, 16))
        return -1;
    w->seen[w->nseen].dev = st->st_dev;
    w->seen[w->nseen].ino = st->st_ino;
    w->nseen++;
    return 0;
}

static void free_names(char **names, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Lists the visible entries of dir, byte-sorted. Returns 0, -1 when dir
 * cannot be opened (errno kept), or OP_ENOMEM. */
static int list_dir(const char *dir, char ***out, size_t *count)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;

    *out = NULL;
    *count = 0;
    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') /* hidden, "." and ".." */
            continue;
        if (OP_GROW(names, cap, n + 1, 32))
            goto nomem;
        names[n] = strdup(e->d_name);
        if (!names[n])
            goto nomem;
        n++;
    }
    closedir(d);
    if (n > 1) /* an empty folder has no array at all: qsort(NULL) is UB */
        qsort(names, n, sizeof *names, util_strp_cmp);
    *out = names;
    *count = n;
    return 0;
nomem:
    closedir(d);
    free_names(names, n);
    return OP_ENOMEM;
}

static char *join_path(const char *dir, const char *name)
{
    size_t dl = strlen(dir), nl = strlen(name);
    int slash = dl > 0 && dir[dl - 1] == '/';
    char *p = malloc(dl + nl + 2);

    if (!p)
        return NULL;
    memcpy(p, dir, dl);
    if (!slash)
        p[dl++] = '/';
    memcpy(p + dl, name, nl + 1);
    return p;
}

static int walk_dir(walker *w, const char *dir, int depth);

/* Visits one entry of a directory. Returns 0 to go on, else the value that
 * stops the walk. */
static int walk_entry(walker *w, const char *path, int depth)
{
    struct stat st;
    int seen;

    if (stat(path, &st) != 0) {
        walk_report(w, path, "cannot read: %s (skipped)", strerror(errno));
        return 0;
    }
    if (S_ISREG(st.st_mode)) {
        if (access(path, R_OK) != 0) {
            walk_report(w, path, "cannot read: %s (skipped)", strerror(errno));
            return 0;
        }
        return w->fn(path, w->ud);
    }
    if (!S_ISDIR(st.st_mode)) { /* never opened: a FIFO would block */
        walk_report(w, path, "%s, not a regular file (skipped)",
                    special_kind(st.st_mode));
        return 0;
    }
    if (depth >= WALK_MAX_DEPTH) {
        walk_report(w, path, "%s", "directories nested too deep (skipped)");
        return 0;
    }
    seen = walk_seen(w, &st);
    if (seen < 0)
        return op_error_set(w->err, OP_ENOMEM, "%s: out of memory", path);
    if (seen)
        return 0; /* reached again through a symlink: visited already */
    return walk_dir(w, path, depth + 1);
}

static int walk_dir(walker *w, const char *dir, int depth)
{
    char **names;
    size_t n, i;
    int rc = 0;

    rc = list_dir(dir, &names, &n);
    if (rc == OP_ENOMEM)
        return op_error_set(w->err, OP_ENOMEM, "%s: out of memory", dir);
    if (rc) {
        if (depth == 0)
            return op_error_set(w->err, OP_EIO, "%s: cannot read directory: %s",
                                dir, strerror(errno));
        walk_report(w, dir, "cannot read directory: %s (skipped)",
                    strerror(errno));
        return 0;
    }
    for (i = 0; i < n && rc == 0; i++) {
        char *path = join_path(dir, names[i]);
        if (!path) {
            rc = op_error_set(w->err, OP_ENOMEM, "%s: out of memory", dir);
            break;
        }
        rc = walk_entry(w, path, depth);
        free(path);
    }
    free_names(names, n);
    return rc;
}

int input_walk(const char *path, input_visit_fn fn, input_error_fn on_error,
               void *ud, op_error *err)
{
    walker w;
    struct stat st;
    int rc;

    if (!path || !fn)
        return op_error_set(err, OP_EUSAGE, "input_walk: no path");
    if (strcmp(path, "-") == 0)
        return fn(path, ud);
    if (stat(path, &st) != 0)
        return op_error_set(err, errno == ENOENT ? OP_ENOTFOUND : OP_EIO,
                            "%s: %s", path, strerror(errno));
    if (!S_ISDIR(st.st_mode)) /* a file, or a pipe given on purpose */
        return fn(path, ud);
    memset(&w, 0, sizeof w);
    w.fn = fn;
    w.on_error = on_error;
    w.ud = ud;
    w.err = err;
    if (walk_seen(&w, &st) < 0)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", path);
    rc = walk_dir(&w, path, 0);
    free(w.seen);
    return rc;
}
