/*
 * progress.h - a progress bar on stderr for long parses: bytes read of
 * the total and the rate, redrawn at most ten times a second, shown only
 * on a terminal, only once a parse has taken half a second, never with
 * --quiet and never into a pipe or file.
 *
 * It works by wrapping the stream a plugin reads (progress_wrap): every
 * read goes through to the real stream and then updates the bar, so no
 * plugin needs to know about it.
 */
#ifndef OP_CORE_PROGRESS_H
#define OP_CORE_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#include <optipipe/stream.h>

typedef struct progress {
    struct op_stream base; /* what the plugin reads: forwards to inner */
    struct op_stream_api api;
    op_stream *inner;
    FILE *out;           /* NULL when disabled */
    char name[64];       /* the input's base name, cut */
    uint64_t total;      /* bytes expected; 0 when unknown (compressed) */
    double started, last_draw;
    int drawn;           /* a bar is on screen and must be cleared */
    int force;           /* OPTIPIPE_PROGRESS=always: no TTY or delay check */
} progress;

/*
 * Prepares p for reading inner (borrowed), named path, and returns the
 * stream the plugin should read: &p->base when a bar may be shown on out,
 * else inner itself. quiet disables it. The total is the file's size when
 * the stream is not compressed (else only bytes and rate are shown).
 * Call progress_end() after the parse, whichever stream was returned.
 */
op_stream *progress_wrap(progress *p, op_stream *inner, const char *path,
                         FILE *out, int quiet);

/* Clears the bar if one was drawn. */
void progress_end(progress *p);

/* Writes the bar's text for done of total bytes (total 0: unknown) after
 * secs seconds into buf: "name  [#####.....]  45%  1.2 GiB of 2.6 GiB
 * 310.0 MiB/s". Returns buf. */
const char *progress_format(char *buf, size_t n, const char *name,
                            uint64_t done, uint64_t total, double secs);

#endif
