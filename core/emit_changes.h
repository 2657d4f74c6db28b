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
 */
#ifndef OP_CORE_EMIT_CHANGES_H
#define OP_CORE_EMIT_CHANGES_H

#include <optipipe/common.h>

#include "baseline.h"
#include "findings.h"
#include "model.h"

/*
 * Writes one file per run that has changes to emit into dir (created when
 * missing; files of the same name are replaced). Findings ignored by the
 * config never count; of the others, `all` takes every one not dismissed
 * in bl, otherwise only those approved in bl. *nfiles gets the number of
 * files written. Returns 0 or OP_EIO with err naming the file.
 */
int emit_changes(const char *dir, const model *m, const results *res,
                 const baseline *bl, int all, size_t *nfiles, op_error *err);

#endif
