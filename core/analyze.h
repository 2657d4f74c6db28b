/*
 * analyze.h - reading a set of inputs into one model: walking paths,
 * detecting each file's plugin, parsing it through the builder, and
 * keeping a record per input (which plugin, which runs, which problems).
 */
#ifndef OP_CORE_ANALYZE_H
#define OP_CORE_ANALYZE_H

#include <stdio.h>

#include "input.h"
#include "model.h"
#include "plugins.h"

typedef struct input_rec {
    char *path;
    const char *plugin; /* name of the plugin that read it; NULL if none */
    char **warnings;    /* problems met while reading this input */
    size_t nwarnings, cap;
    int ok; /* parsed (possibly with warnings) */
} input_rec;

typedef struct analysis {
    model *m;
    plugin_reg *reg;
    input_limits limits;
    input_rec *inputs;
    size_t ninputs, cap;
    size_t nok;  /* inputs read successfully */
    FILE *diag;  /* where diagnostics go (stderr); NULL for silence */
    op_builder *finisher; /* made up front: finish() must run even when
                           * memory has run out, or plugin state leaks */
    const struct fetch_opts *fetch; /* for http(s):// inputs; NULL: defaults */
    int quiet;
    size_t *shown; /* per run (model order): its warnings already printed */
    size_t shown_cap;
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

/* Freezes the model: no input may be added afterwards. Run warnings added
 * by plugins' finish() or by the freeze are printed as warnings about the
 * run's first input. */
void analysis_freeze(analysis *an);

/* Whether run r came (at least in part) from input in. */
int analysis_run_from(const struct op_run *r, const input_rec *in);

#endif
