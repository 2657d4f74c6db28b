/*
 * progress.h - a progress bar on stderr for long parses: which file of
 * how many ([3/40]), bytes read of the total and the rate, redrawn at most ten times a second, shown only
 * on a terminal, only once a parse has taken half a second, never with
 * --quiet and never into a pipe or file.
 *
 * It works by wrapping the stream a plugin reads (progress_wrap): every
 * read goes through to the real stream and then updates the bar, so no
 * plugin needs to know about it.
 */
#ifndef OP_CLI_PROGRESS_H
#define OP_CLI_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#include <optipipe/stream.h>

#include "analyze.h"

typedef struct progress {
    struct op_stream base; /* what the plugin reads: forwards to inner */
    struct op_stream_api api;
    op_stream *inner;
    FILE *out;           /* NULL when disabled */
    char name[64];       /* the input's base name, cut */
    uint64_t total;      /* bytes expected; 0 when unknown */
    int compressed;      /* total and done count compressed bytes */
    size_t index, count; /* file index of count ([n/N]); count 0: unknown */
    double since;        /* when the whole set of files began (0: this one) */
    double started, last_draw;
    int drawn;           /* a bar is on screen and must be cleared */
    int force;           /* OPTIPIPE_PROGRESS=always: no TTY or delay check */
} progress;

/*
 * Prepares p for reading inner (borrowed), named path, and returns the
 * stream the plugin should read: &p->base when a bar may be shown on out,
 * else inner itself. quiet disables it. The total is the file's size; for
 * a compressed file the bar counts the compressed bytes consumed (its
 * decoded size is unknown until the end).
 * Call progress_end() after the parse, whichever stream was returned.
 */
op_stream *progress_wrap(progress *p, op_stream *inner, const char *path,
                         FILE *out, int quiet);

/* Whether a bar may be drawn on out at all (a terminal, not -q, or
 * OPTIPIPE_PROGRESS=always): worth counting the files for [n/N]. */
int progress_wanted(FILE *out, int quiet);

/* The file being read is the index-th (1-based) of count (0: unknown),
 * of a set begun at since (progress_now(); 0: with this file): once the
 * set has taken the half second, every file's bar is drawn, however
 * quick. */
void progress_count(progress *p, size_t index, size_t count, double since);

/* Seconds on a monotonic clock. */
double progress_now(void);

/* Clears the bar if one was drawn. */
void progress_end(progress *p);

/* Writes the bar's text for done of total bytes (total 0: unknown) after
 * secs seconds into buf: "name  [#####.....]  45%  1.2 GiB of 2.6 GiB
 * 310.0 MiB/s". Returns buf. */
const char *progress_format(char *buf, size_t n, const char *name,
                            uint64_t done, uint64_t total, double secs);

/* The same with "[index/count] " before the name (count 0: left out) and
 * " compressed" after the total when the bytes are compressed ones. */
const char *progress_format_of(char *buf, size_t n, size_t index,
                               size_t count, const char *name, uint64_t done,
                               uint64_t total, int compressed, double secs);

/* The bar as an analysis_watch: set an->watch = &w->watch after
 * progress_watcher_init(w, out, quiet); w must outlive the analysis. The
 * [n/N] set begins with the first file w sees. */
typedef struct progress_watcher {
    analysis_watch watch;
    progress pg;
    FILE *out;
    int quiet;
    double t0; /* when the first file was begun */
} progress_watcher;

void progress_watcher_init(progress_watcher *w, FILE *out, int quiet);

#endif
