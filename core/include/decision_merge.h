/*
 * decision_merge.h - a decisions file read beside a run store
 * (docs/baselines.md "Newest decision wins"): the decisions of both, the
 * newest of each fingerprint winning by decided_at, and the conflicts
 * (both hold a decision for the same finding and they differ), which the
 * session says on stderr, in the report and in the store's audit trail.
 */
#ifndef OP_CORE_DECISION_MERGE_H
#define OP_CORE_DECISION_MERGE_H

#include <optipipe/common.h>

#include "baseline.h"
#include "store.h"

/* One conflict: the file's decision and the store's, and which won. */
typedef struct decision_conflict {
    decision file;        /* a copy of the file's decision (owned) */
    char *rule;           /* the store's rule id */
    char *store_status, *store_comment, *store_at, *store_by; /* may be NULL */
    int store_won;        /* the store's was newer: the file's is not applied */
} decision_conflict;

typedef struct decision_conflicts {
    decision_conflict *c;
    size_t n, cap;
} decision_conflicts;

/* Lays the decisions of st over file (which the caller owns): a
 * fingerprint only the store decided is added; one both decided keeps the
 * newer (decided_at compared as the UTC text it is; a missing one is the
 * oldest; on a tie the file's, as a file read later is the later word).
 * Every fingerprint both decided differently goes into out (initialised
 * here; free with decision_conflicts_free). Returns 0, OP_ENOMEM, or the
 * store's op_status with err. */
int decision_merge_store(baseline *file, store *st, decision_conflicts *out,
                         op_error *err);

void decision_conflicts_free(decision_conflicts *c);

/* One line for stderr: "decision of FP (RULE) differs: FILE says ...,
 * the run store says ... (by WHO); the newer (...) wins". */
void decision_conflict_text(const decision_conflict *c, const char *file_path,
                            char *buf, size_t n);

#endif
