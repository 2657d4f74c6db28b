/*
 * baseline.h - the decisions file (docs/baselines.md): which findings a
 * person approved or dismissed, keyed by fingerprint, so the decision
 * sticks across reruns. Written sorted by fingerprint with a fixed key
 * order and one key per line: stable, diff-friendly, safe to commit.
 */
#ifndef OP_CORE_BASELINE_H
#define OP_CORE_BASELINE_H

#include <optipipe/common.h>

#include "findings.h"

#define BASELINE_DEFAULT_FILE ".optipipe-baseline.json"
#define BASELINE_FORMAT 1

typedef struct decision {
    char fingerprint[17];
    char *rule, *run, *node; /* node may be NULL */
    decision_status status;
    char *reason;     /* may be NULL (approvals need none) */
    char *decided_at; /* "2024-11-29T12:00:00Z" */
} decision;

typedef struct baseline {
    decision *d;
    size_t n, cap;
} baseline;

void baseline_init(baseline *b);
void baseline_free(baseline *b);

/*
 * Reads the decisions file at path into b (initialised here). A file that
 * does not exist is an empty baseline when missing_ok, else OP_ENOTFOUND.
 * Malformed files are OP_EPARSE with err naming the file and the entry.
 */
int baseline_load(const char *path, baseline *b, int missing_ok,
                  op_error *err);

/* Writes b to path (sorted by fingerprint) through a temporary file and a
 * rename, so a crash never leaves half a file. 0 or OP_EIO with err. */
int baseline_save(baseline *b, const char *path, op_error *err);

/* The decision for a fingerprint, or NULL. */
const decision *baseline_find(const baseline *b, const char *fingerprint);

/* The decision for finding f: under its fingerprint, else under its
 * legacy one (decisions written before job keys). NULL when none. */
const decision *baseline_decision_of(const baseline *b, const finding *f);

/* The same by fingerprints: fp, else legacy_fp (either may be NULL), as
 * for a finding read back from the run store. NULL when none. */
const decision *baseline_decision_for(const baseline *b, const char *fp,
                                      const char *legacy_fp);

/* Records (or replaces) the decision for finding f. reason and when
 * (NULL: now) are copied. Returns 0 or OP_ENOMEM. */
int baseline_set(baseline *b, const finding *f, decision_status status,
                 const char *reason, const char *when);

/* Records (or replaces) a decision by its fields, for decisions that
 * come from elsewhere than a finding (the run store): fingerprint is 16
 * hex digits, the strings are copied (run, node, reason, when may be
 * NULL; when NULL: now). Returns 0, OP_EUSAGE for a bad fingerprint, or
 * OP_ENOMEM. */
int baseline_put(baseline *b, const char *fingerprint, const char *rule,
                 const char *run, const char *node, decision_status status,
                 const char *reason, const char *when);

/* Removes the decisions whose fingerprint no finding of res has; returns
 * how many were removed. */
size_t baseline_prune(baseline *b, const results *res);

/* Marks every finding that has a decision as suppressed
 * (FINDING_BASELINE) unless it is suppressed already; returns how many. */
size_t baseline_apply(const baseline *b, results *res);

/* The current UTC time as "YYYY-MM-DDTHH:MM:SSZ" into buf (>= 21 bytes);
 * SOURCE_DATE_EPOCH, when set, replaces the clock (reproducible tests). */
void baseline_now(char *buf, size_t len);

#endif
