/*
 * emit_stored.h - the config patches of the approved changes of stored
 * runs (docs/baselines.md, docs/api.md), from the run store alone: the
 * stored findings (their changes), the store's decisions and the runs'
 * engines' patch writers, exactly what `analyze --emit-changes` writes for
 * the same runs and approvals, with the same refusals. No input is read
 * again and no rule runs.
 */
#ifndef OP_CORE_EMIT_STORED_H
#define OP_CORE_EMIT_STORED_H

#include <optipipe/common.h>
#include <stdio.h>

#include "emit_changes.h"
#include "store.h"

/* Gets one patch: its file name (as --emit-changes names it, no folder)
 * and its text (len bytes, NUL-terminated), both borrowed for the call.
 * Returns 0 to go on, else an op_status that stops (with err set). */
typedef int (*emit_patch_fn)(void *ud, const char *name, const char *text,
                             size_t len, op_error *err);

/* For each stored run of run_ids[0..nruns) in that order (a run id no
 * longer stored is said on diag and passed over), the patch of its
 * findings approved in the store (store_load_decisions), handed to fn.
 * At most EMIT_STORED_MAX_FINDINGS findings a run are read (OP_ELIMIT
 * beyond). Refusals are told on diag (may be NULL) and counted in *st.
 * Returns 0 or an op_status with err. */
#define EMIT_STORED_MAX_FINDINGS 100000
int emit_changes_stored(store *s, const char *const *run_ids, size_t nruns,
                        FILE *diag, emit_patch_fn fn, void *ud,
                        emit_stats *st, op_error *err);

#endif
