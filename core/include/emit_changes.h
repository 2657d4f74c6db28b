/*
 * emit_changes.h - `analyze --emit-changes DIR`: the `changes` of approved
 * findings written as patches a person applies (docs/baselines.md), one
 * file per run: <source>-<run>.<ext>, written by the patch writer of the
 * run's engine (engine.h: lines for the engine's config file), or for a
 * source without one as "target: key = value" lines in a .txt file. Every
 * change is preceded by a comment citing its rule, fingerprint and
 * message. Output is deterministic (no timestamps).
 *
 * A change the engine would read differently from what the rule meant is
 * refused, never written as config: a key or value with a control
 * character, a line separator or broken UTF-8; a key outside
 * [A-Za-z0-9._-]; what an engine's writer refuses besides (docs/baselines.md);
 * a value longer than 1023 bytes. The patch says "#   refused: <why>" at
 * the change and counts the refusals at its end; diag gets one line per
 * refusal naming the file, rule and finding.
 */
#ifndef OP_CORE_EMIT_CHANGES_H
#define OP_CORE_EMIT_CHANGES_H

#include <optipipe/common.h>
#include <stdio.h>

#include "baseline.h"
#include "findings.h"
#include "model.h"

typedef struct emit_stats {
    size_t nfiles;   /* files written */
    size_t nrefused; /* changes refused, in all files */
} emit_stats;

/*
 * Writes one file per run that has changes to emit into dir (created when
 * missing; files of the same name are replaced). Findings ignored by the
 * config never count; of the others, `all` takes every one not dismissed
 * in bl, otherwise only those approved in bl. Refusals are told on diag
 * (borrowed; NULL: only in the files). *st gets the counts. Returns 0 or
 * OP_EIO with err naming the file.
 */
int emit_changes(const char *dir, const model *m, const results *res,
                 const baseline *bl, int all, FILE *diag, emit_stats *st,
                 op_error *err);

/* ---- the pieces emit_changes and emit_stored.c share ---------------------- */

/* Whether f's changes are written: not ignored by the config, with
 * changes, approved in bl (all: not dismissed). */
int emit_selected(const finding *f, const baseline *bl, int all);

/* The file name (no folder) of run r's patch, "<source>-<name>.<ext>",
 * not among names[0..used) (the earlier runs of one call); remembered in
 * names[used] (the caller has room for one name a run). */
void emit_file_name(const struct op_run *r, char names[][128], size_t used,
                    char *name, size_t len);

/* Writes run r's patch of its n selected findings to f (borrowed), path
 * naming it in refusals; adds its refusals to *nrefused. Returns 0, or -1
 * when f has an error. */
int emit_run(FILE *f, const char *path, const struct op_run *r,
             const finding *const *fs, size_t n, FILE *diag, size_t *nrefused);

/* ---- for the engines' patch writers (<engine>/host/) ---------------------- */

#define EMIT_MAX_KEYS 512    /* keys remembered per file (repeats, conflicts) */
#define EMIT_COMMENT_MAX 200 /* bytes of a text quoted in a comment */
#define EMIT_VALUE_MAX 1024  /* bytes of a value written as config */
#define EMIT_SHOWN_MAX 80    /* bytes of a refused key or value quoted */

typedef struct emit_seen {
    char *scope, *key, *value;
} emit_seen;

/* The file being written; a writer writes to f. */
typedef struct emit_out {
    FILE *f;
    FILE *diag;       /* where refusals are also told (may be NULL) */
    const char *path; /* the file being written */
    const struct op_run *run;
    emit_seen keys[EMIT_MAX_KEYS];
    size_t nkeys;
    size_t nrefused;
} emit_out;

/* Writes the body of one run's file (the header line is written already)
 * from its n selected findings, each with changes. */
typedef void (*emit_writer_fn)(emit_out *o, const finding *const *fs, size_t n);

/* The string member k of o, or NULL. Borrowed. */
const char *emit_str(const cJSON *o, const char *k);

/* A value as text: strings as they are, whole numbers without a point.
 * Returns 0 when it did not fit into buf (then cut). */
int emit_value_text(const cJSON *v, char *buf, size_t len);

/* Writes s on one line (line breaks become spaces, broken UTF-8 U+FFFD),
 * cut after max bytes with "...". */
void emit_text(FILE *f, const char *s, size_t max);

/* What makes s unfit: why[] gets it and 1 is returned, else 0. text: a
 * line break of any reader or broken UTF-8; key: not [A-Za-z0-9._-]+. */
typedef int (*emit_problem_fn)(const char *s, char *why, size_t len);
int emit_text_problem(const char *s, char *why, size_t len);
int emit_key_problem(const char *key, char *why, size_t len);

/* Tells that a change of f is not written: in the patch (a comment at the
 * change, after indent) and on o->diag (file, rule and finding). */
void emit_refuse(emit_out *o, const finding *f, const char *indent,
                 const char *fmt, ...) OP_PRINTF(4, 5);

/* Refuses (and returns 1) when problem() finds one in s, which is what
 * of f (e.g. "key"); s is quoted with escapes. */
int emit_refused_if(emit_out *o, const finding *f, const char *indent,
                    emit_problem_fn problem, const char *what, const char *s);

/* The checks every change c passes: key and value are text a line holds,
 * the value fits. Returns 1 when refused; else val holds the value as
 * text (vlen bytes at most). */
int emit_refused_change(emit_out *o, const finding *f, const cJSON *c,
                        const char *indent, char *val, size_t vlen);

/* s as a YAML scalar: plain when safe, double-quoted otherwise. */
void emit_yaml(FILE *f, const char *s);

/* "# rule [fingerprint]: message" and "#   was: ..." comment lines. */
void emit_cite(emit_out *o, const finding *f, const char *indent);
void emit_was(emit_out *o, const cJSON *c, const char *indent);

/* Returns 1, saying so in the patch, when scope/key was set before in
 * this file (same or other value): write nothing more for the change. */
int emit_repeated(emit_out *o, const char *scope, const char *key,
                  const char *value, const char *indent);

/* Writes change c as a comment: code to change where the job is defined,
 * not configuration. */
void emit_code_change(emit_out *o, const cJSON *c, const char *val,
                      const char *indent);

#endif
