/*
 * input.h - opening inputs as bounded, transparently decompressed streams,
 * and walking directories of inputs.
 *
 * The codec is chosen by magic bytes, never by file name. Every stream
 * enforces two caps (input_limits): the longest line read_line returns and
 * the total decompressed bytes; both end in a clear error naming the input.
 */
#ifndef OP_CORE_INPUT_H
#define OP_CORE_INPUT_H

#include <optipipe/stream.h>

typedef struct input_limits {
    size_t max_line;    /* bytes in one line; default 256 MiB */
    uint64_t max_bytes; /* decompressed bytes per input; default 64 GiB */
    size_t max_doc;     /* bytes read_all may return; default 1 GiB */
} input_limits;

/* Fills l with the defaults above. */
void input_limits_default(input_limits *l);
/* Fills l with given's limits (may be NULL), a 0 there keeping the
 * default. */
void input_limits_from(input_limits *l, const input_limits *given);

/* Opens path ("-" is standard input) with limits (copied; NULL = defaults).
 * Only a regular file (or "-") is read: a FIFO, device or socket is an
 * OP_EUSAGE error "PATH: a FIFO, not a regular file" without blocking (the
 * open uses O_NONBLOCK, then fstat). On success *out is a new stream owned by the caller (input_close). On
 * failure returns an op_status with err naming the path. */
int input_open(const char *path, const input_limits *limits, op_stream **out,
               op_error *err);

/* Opens an in-memory buffer (borrowed; must outlive the stream) as a stream
 * named name, with the same sniffing and caps as a file. */
int input_open_mem(const char *name, const void *buf, size_t len,
                   const input_limits *limits, op_stream **out,
                   op_error *err);

/* Returns the first up to max decompressed bytes without consuming them
 * (later reads still start at byte 0). *head is borrowed. Call before any
 * read. Returns 0 or an op_status with err set. */
int input_peek(op_stream *s, size_t max, const unsigned char **head,
               size_t *len, op_error *err);

/* A warning about the stream, or NULL: set once a compressed stream was
 * found to end inside a frame/block (an in-progress or cut file). Such a
 * stream is not an error: everything decodable is delivered and
 * op_stream_truncated() becomes 1 at its end. The message names the input
 * and the codec. Borrowed; valid until input_close. */
const char *input_warning(const op_stream *s);

/* Compressed bytes consumed so far by a compressed stream (the progress
 * bar of a .zst or .gz file: its size is known, its decoded size is not);
 * 0 for a folder layout's stream (input_ops without source_offset).
 * Equals op_stream_offset() for a plain stream. */
uint64_t input_source_offset(const op_stream *s);

/* Closes the stream and frees it. Accepts NULL. */
void input_close(op_stream *s);

/* Reads the whole file at path (a small local file: a config, baseline,
 * Lua data file) into a new NUL-terminated buffer of *len bytes, the
 * caller's to free. Not a stream: no codec, no line cap. Regular files
 * only, as input_open. Returns NULL with
 * err set: OP_ENOTFOUND when path does not exist, OP_EIO when it cannot be
 * read, OP_ELIMIT when it is larger than max bytes, OP_ENOMEM. */
char *input_read_file(const char *path, size_t max, size_t *len,
                      op_error *err);

/* Calls fn for every regular file under path (path itself when it is a
 * file or "-"), recursing into directories in byte-sorted name order,
 * skipping hidden entries (".name") and never following a directory
 * symlink twice. fn returning nonzero stops the walk with that value.
 * Unreadable entries and entries that are neither a regular file nor a
 * directory (FIFOs, devices, sockets: never opened) are reported through
 * on_error (may be NULL) and skipped. Returns 0, fn's value, or an op_status with err when path
 * itself cannot be read. */
typedef int (*input_visit_fn)(const char *file, void *ud);
typedef void (*input_error_fn)(const char *file, const char *msg, void *ud);
int input_walk(const char *path, input_visit_fn fn, input_error_fn on_error,
               void *ud, op_error *err);

/* A kind of host stream. The SDK's op_stream_api is what plugins read
 * through; these are what the host does besides (input_peek, input_warning,
 * input_source_offset, input_close). Every stream the host hands out starts
 * with an input_stream: input.c's own, and a folder layout's
 * (op_engine_layout, engine.h), so a new kind of stream needs no edit here.
 * warning and source_offset may be NULL (none; 0). */
typedef struct input_ops {
    int (*peek)(op_stream *s, size_t max, const unsigned char **head,
                size_t *len, op_error *err);
    const char *(*warning)(const op_stream *s);
    uint64_t (*source_offset)(const op_stream *s);
    void (*close)(op_stream *s);
} input_ops;

typedef struct input_stream {
    op_stream base; /* first: an op_stream * casts to input_stream * */
    const input_ops *ops;
} input_stream;

/* Opens paths[0..n) (copied) as one stream named name, file after file,
 * each decompressed by its own codec (input_list.c): the files one log
 * was split into (an engine's folder layout, the parts of input_parts.c).
 * Returns 0 with *out (input_close) or an op_status with err. */
int input_open_list(const char *name, char *const *paths, size_t n,
                    const input_limits *limits, op_stream **out,
                    op_error *err);
/* On a stream of input_open_list only: adds note to what input_warning
 * says of it (copied); marks it truncated at its end (the writer had not
 * stopped, e.g. a log still in progress). */
void input_list_note(op_stream *s, const char *note);
void input_list_set_unfinished(op_stream *s);

/* A file that is one part of a log split over several files, each saying
 * so in its first line (an engine's op_engine_parts, engine.h). */
typedef struct input_part {
    char *path;
    char key[96];  /* the parts of one log share it */
    int64_t order; /* their reading order */
} input_part;

/* Whether the file at path starts as a part (its first line, read through
 * its codec); fills p (p->path is a copy, the caller's to free) and returns
 * 1, else 0 (also when it cannot be read: it is then read as a file of its
 * own and that says why). -1 on no memory. */
int input_part_of(const char *path, const input_limits *limits,
                  input_part *p);

/* Sorts parts by key, then order, then path. */
void input_parts_sort(input_part *parts, size_t n);
/* The name of the group all[from..to) of one key (all sorted, n parts):
 * their folder when it holds these parts and no other, else the first
 * part's path. malloc'd; NULL on no memory. */
char *input_parts_name(const input_part *all, size_t n, size_t from,
                       size_t to);

#endif
