/*
 * emit_changes.h - `analyze --emit-changes DIR`: the `changes` of approved
 * findings written as patches a person applies (docs/baselines.md):
 *   flink-<job>.yaml   lines for config.yaml / flink-conf.yaml, vertex
 *                      parallelism as pipeline.jobvertex-parallelism-overrides
 *   spark-<app>.conf   spark-defaults.conf lines (or --conf key=value)
 *   dbt-<run>.yml      a models: properties block per model, with the
 *                      equivalent {{ config(...) }} line for the .sql file
 *   <source>-<run>.txt anything else, as "target: key = value"
 * Every change is preceded by a comment citing its rule, fingerprint and
 * message. Output is deterministic (no timestamps).
 *
 * A change the engine would read differently from what the rule meant is
 * refused, never written as config: a key or value with a control
 * character, a line separator or broken UTF-8; a Flink, Spark or dbt key
 * outside [A-Za-z0-9._-]; a Flink vertex id that is not 32 hex digits or a
 * parallelism outside 1..32768 (or more than 512 of them in a run); a
 * value longer than 1023 bytes. The patch says "#   refused: <why>" at
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

#endif
