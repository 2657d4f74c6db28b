/*
 * analyze.h - reading a set of inputs into one model: walking paths,
 * detecting each file's plugin, parsing it through the builder, and
 * keeping a record per input (which plugin, which runs, which problems).
 */
#ifndef OP_CORE_ANALYZE_H
#define OP_CORE_ANALYZE_H

#include <stdio.h>

#include "input.h"
#include "input_zip.h"
#include "model.h"
#include "plugins.h"

typedef struct input_rec {
    char *path;         /* as shown: <zip>/<member> inside a zip */
    char *real;         /* the file read when it differs from path; or NULL */
    const char *plugin; /* name of the plugin that read it; NULL if none */
    char **warnings;    /* problems met while reading this input */
    size_t nwarnings, cap;
    int ok; /* parsed (possibly with warnings) */
    int skipped; /* no plugin recognized it (not an input; not counted) */
} input_rec;

#define ANALYSIS_KINDS 6 /* kinds of skipped file told apart in the summary */

/* Skipped files of one kind ("PNG image"), for the one summary line. */
typedef struct skip_kind {
    char name[96];
    size_t n;
} skip_kind;

/* Watches every parse, e.g. the CLI's progress bar (cli/progress.c):
 * begin returns the stream the plugin reads (s itself, or one forwarding
 * to it), about input path, the index-th file (1-based) of count planned
 * (analysis_plan; 0: unknown); end follows every begin, after the parse.
 * The watcher's state is its own (ud). */
typedef struct analysis_watch {
    op_stream *(*begin)(void *ud, op_stream *s, const char *path,
                        size_t index, size_t count);
    void (*end)(void *ud);
    void *ud;
} analysis_watch;

typedef struct analysis {
    model *m;
    plugin_reg *reg;
    input_limits limits;
    input_rec *inputs;
    size_t ninputs, cap;
    size_t nok;  /* inputs read successfully */
    size_t nmissing; /* named paths that do not exist (ENOENT) */
    FILE *diag;  /* where diagnostics go (stderr); NULL for silence */
    op_builder *finisher; /* made up front: finish() must run even when
                           * memory has run out, or plugin state leaks */
    const struct fetch_opts *fetch; /* for http(s):// inputs; NULL: defaults */
    int quiet;
    int verbose;  /* -v: name every skipped file instead of a summary */
    size_t nskipped; /* inputs no plugin recognized */
    size_t nunlisted; /* ...of them found in folders and not yet named */
    skip_kind kinds[ANALYSIS_KINDS + 1]; /* the last: every other kind */
    size_t nplanned, nstarted; /* files to read, files begun ([n/N]) */
    const analysis_watch *watch; /* borrowed; NULL: none */
    size_t *shown; /* per run (model order): its warnings already printed */
    size_t shown_cap;
    /* Parts of split logs (input_parts.c) met so far: read at
     * analysis_freeze, each group as one input, whatever the order and the
     * arguments they came in. group: the paths of the one being read. */
    input_part *parts;
    size_t nparts, parts_cap;
    char **group;
    size_t ngroup;
    input_zips zips; /* zips given as inputs, unpacked (input_zip.c) */
    struct mapping_set *maps; /* the mapping packs the model's builders
                               * ask (map_packs.h), owned; NULL: none */
} analysis;

/* Sets up an empty analysis with the built-in plugins plus the external
 * ones found on plugin_path (':'-separated; may be NULL). limits may be
 * NULL for defaults. Returns 0 or an op_status with err. Free with
 * analysis_free() even on failure. */
int analysis_init(analysis *an, const char *plugin_path,
                  const input_limits *limits, FILE *diag, op_error *err);
void analysis_free(analysis *an);

/* Reads path: a file, a directory (walked), or "-". Every problem is
 * recorded on the input and printed to diag; it never stops the others.
 * The warnings plugins attach to runs while reading it are printed too
 * (as warnings about path). Returns the number of inputs that were read
 * successfully. */
size_t analysis_add(analysis *an, const char *path);

/* Counts the files analysis_add will read for paths (folders walked,
 * URLs and "-" one each) into an->nplanned, for a watcher's [n/N].
 * Costs a directory walk: call it only when a watcher shows the count. */
void analysis_plan(analysis *an, const char *const *paths, size_t n);

/* Inputs that are inputs: every record but the skipped files. */
size_t analysis_ninputs(const analysis *an);

/* Freezes the model: no input may be added afterwards. Run warnings added
 * by plugins' finish() or by the freeze are printed as warnings about the
 * run's first input; so is one summary line of the files found in folders
 * that no plugin recognized ("37 files skipped ...; -v lists them"),
 * unless -v named each. */
void analysis_freeze(analysis *an);

/* Whether run r came (at least in part) from input in. */
int analysis_run_from(const struct op_run *r, const input_rec *in);

#endif
