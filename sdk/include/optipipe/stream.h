/*
 * optipipe/stream.h - the byte stream a plugin parses.
 *
 * The host opens every input (file, stdin, HTTP body), sniffs its
 * compression by magic bytes and hands the plugin a decompressed stream.
 * Every read is bounded: lines by the line cap, the whole stream by the
 * decompressed-size cap. A plugin never sees compressed bytes.
 *
 * The stream is reached through a function table so that external .so
 * plugins do not link against the host (SQLite extension style).
 */
#ifndef OPTIPIPE_STREAM_H
#define OPTIPIPE_STREAM_H

#include "common.h"

typedef struct op_stream op_stream;

struct op_stream_api {
    uint32_t size; /* sizeof(struct op_stream_api) of the host; append only */

    /* Reads up to n bytes into buf. Returns the count (0 at end of stream)
     * or -1 with err set (I/O error, corrupt compressed data, size cap). */
    long (*read)(op_stream *s, void *buf, size_t n, op_error *err);

    /* Reads the next line without its '\n' (a trailing '\r' is kept).
     * *line is borrowed: valid until the next call on this stream; it is
     * NUL-terminated. Returns 1 for a line, 0 at end of stream, -1 with err
     * set (line cap exceeded, I/O, corrupt data, size cap). A last line
     * without '\n' is returned; op_stream_api.truncated tells whether the
     * stream ended mid-line. */
    int (*read_line)(op_stream *s, const char **line, size_t *len,
                     op_error *err);

    /* Reads the rest of the stream into one NUL-terminated buffer, bounded
     * by the size cap. *buf is borrowed: valid until the stream is closed.
     * Returns 0 or an op_status with err set. */
    int (*read_all)(op_stream *s, const char **buf, size_t *len,
                    op_error *err);

    /* The display name of the input: its path, "-" or its URL. Borrowed. */
    const char *(*name)(const op_stream *s);

    /* 1-based number of the last line returned by read_line. */
    uint64_t (*line_no)(const op_stream *s);

    /* Decompressed bytes delivered so far. */
    uint64_t (*offset)(const op_stream *s);

    /* 1 when the last line returned had no terminating '\n' (the stream
     * ended mid-line: a truncated or in-progress file). */
    int (*truncated)(const op_stream *s);

    /* The codec that was detected: "plain", "gzip", "zstd", ... Borrowed. */
    const char *(*codec)(const op_stream *s);
};

/* Every stream starts with its function table. */
struct op_stream {
    const struct op_stream_api *api;
};

static inline long op_stream_read(op_stream *s, void *buf, size_t n,
                                  op_error *err)
{
    return s->api->read(s, buf, n, err);
}

static inline int op_stream_read_line(op_stream *s, const char **line,
                                      size_t *len, op_error *err)
{
    return s->api->read_line(s, line, len, err);
}

static inline int op_stream_read_all(op_stream *s, const char **buf,
                                     size_t *len, op_error *err)
{
    return s->api->read_all(s, buf, len, err);
}

static inline const char *op_stream_name(const op_stream *s)
{
    return s->api->name(s);
}

static inline uint64_t op_stream_line_no(const op_stream *s)
{
    return s->api->line_no(s);
}

static inline uint64_t op_stream_offset(const op_stream *s)
{
    return s->api->offset(s);
}

static inline int op_stream_truncated(const op_stream *s)
{
    return s->api->truncated(s);
}

static inline const char *op_stream_codec(const op_stream *s)
{
    return s->api->codec(s);
}

#endif
