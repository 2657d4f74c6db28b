/*
 * diff.h - what changed between two runs of a job (optipipe diff,
 * docs/history.md#diff): config keys, engine version, resources, run
 * metrics, the nodes that explain most of the change, and the findings
 * that are new, resolved or changed.
 *
 * Engine-agnostic: both sides are runs in the JSON shape `normalize`
 * writes and the run store keeps (id, job, source, name, status,
 * started_at, duration_ms, engine_version, config, metrics, nodes with
 * id, kind, name, duration_ms, parallelism, and findings with
 * fingerprint, legacy_fp, rule, severity, node, message, evidence), so a
 * run just read and a stored one compare alike. The result is a JSON object (the json format
 * of the command, docs/cli.md#diff) that the reporters render.
 */
#ifndef OP_CORE_DIFF_H
#define OP_CORE_DIFF_H

#include <stdio.h>

#include <cjson/cJSON.h>
#include <optipipe/common.h>

#include "findings.h"
#include "model.h"

/* Nodes listed by default, and at most. */
#define DIFF_TOP_DEFAULT 10
#define DIFF_TOP_MAX 1000
/* Longest node identity; a longer name is cut (the identity then says
 * so with a trailing "..."; two names equal in their first bytes match). */
#define DIFF_KEY_MAX 512

/* A node's identity across runs: "kind:name#k", k counting the nodes of
 * that kind and name (the id when unnamed) in node order from 1, since
 * ids shift between runs (a Spark stage id grows when a job is added, a
 * Flink job id changes on every submission). Writes into buf (cap bytes,
 * always terminated) and returns it. */
const char *diff_node_key(char *buf, size_t cap, const char *kind,
                          const char *name, unsigned k);

/* A frozen model run as the JSON object diff_runs reads. Returns 0 with
 * *out (the caller frees it with cJSON_Delete) or OP_ENOMEM with err. */
int diff_run_json(const struct op_run *r, cJSON **out, op_error *err);

/* Adds the findings of res about run run_index (every one, as the run
 * store keeps them) to run, an object from diff_run_json, as its
 * "findings" array. Returns 0 or OP_ENOMEM with err. */
int diff_run_findings(cJSON *run, const results *res, size_t run_index,
                      op_error *err);

/* What a diff leaves out (borrowed for the call). */
typedef struct diff_opts {
    size_t top;                /* nodes listed, 1..DIFF_TOP_MAX; 0: default */
    const char *const *ignore; /* config keys (fnmatch globs) not compared */
    size_t nignore;
} diff_opts;

/* Compares run a (the "before") with b (the "after"); la / lb label them
 * (the reference the user gave; copied); o may be NULL (defaults).
 * Returns 0 with *out (free with cJSON_Delete): the object documented in
 * docs/history.md#diff; or an op_status with err (OP_ENOMEM, or OP_EUSAGE
 * for a side that is not a JSON object). */
int diff_runs(const cJSON *a, const char *la, const cJSON *b,
              const char *lb, const diff_opts *o, cJSON **out, op_error *err);

/* A stored run named by ref (JOB@latest, JOB@previous, JOB@best, a run
 * id) of st as the object diff_runs reads, into *out (free with
 * cJSON_Delete), with its stored findings. Returns 0, OP_ENOTFOUND (no such run, err says so) or
 * another op_status with err. `optipipe diff` and the server's /diff
 * share it. */
struct store;
int diff_stored_run(struct store *st, const char *ref, cJSON **out,
                    op_error *err);

/* ---- output (report_diff.c) ---- */

/* The i-th format diff writes (text, json, markdown, html), NULL past the
 * last: the values of diff --format. */
const char *diff_format_name(size_t i);

/* Writes the diff d (from diff_runs) to f in format. Returns 0 or OP_EIO. */
int report_diff(FILE *f, const char *format, const cJSON *d);

/* The html format's content without the page around it, for a page of
 * its own (optipipe serve's /diff); strict: that page's CSP forbids
 * style attributes (hout.strict). Returns 0 or OP_EIO. */
int report_diff_html_body(FILE *f, const cJSON *d, int strict);

#endif
