/*
 * store_int.h - what the run store's two backends share (core/store.c,
 * SQLite; core/store_pg.c, PostgreSQL; core/store_common.c): the JSON
 * texts of a recording and its content hash (so that both write the same
 * bytes and the same hash), the clocks and back-off, the job matching of
 * store_find_job, and the PostgreSQL backend's entry points that store.c
 * dispatches to. Core's alone: nothing above the store sees it.
 */
#ifndef OP_CORE_STORE_INT_H
#define OP_CORE_STORE_INT_H

#include <stdio.h>

#include "store.h"

#define STORE_APP_KEY "application"
#define STORE_APP_NAME "optipipe run store"

/* ---- the texts of a recording -------------------------------------------- */

/* A reusable in-memory text: JSON of maps and dists for one column. */
typedef struct store_text {
    FILE *f;
    char *buf;
    size_t len;
} store_text;

/* Opens t (0, or OP_ENOMEM); store_text_close frees it (also a t that
 * failed to open or was never opened, when zeroed). */
int store_text_open(store_text *t);
void store_text_close(store_text *t);
/* The JSON text of m, of n's dists, of v (empty when v is NULL), in t's
 * buffer (valid until t is used again) or a constant; NULL: no memory. */
const char *store_map_text(store_text *t, const mmap *m);
const char *store_dist_text(store_text *t, const struct op_node *n);
const char *store_cjson_text(store_text *t, const cJSON *v, const char *empty);

/* The content hash of a run (FNV-1a over its bound values, in the order
 * store.c binds them): seeded with STORE_HASH_SEED, one call per value,
 * NULL for a value not set. */
#define STORE_HASH_SEED 1469598103934665603ull
void store_hash_text(uint64_t *h, const char *v);
/* v as a decimal text when bit is in set, else NULL (hashed the same). */
void store_hash_int(uint64_t *h, unsigned set, unsigned bit, int64_t v);

/* ---- clocks ----------------------------------------------------------------- */

int64_t store_mono_ms(void);
/* Sleeps ms (at most STORE_BACKOFF_MS), not past deadline (monotonic). */
void store_pause_ms(int64_t ms, int64_t deadline);
/* The recording time (epoch ms): SOURCE_DATE_EPOCH when set. */
int64_t store_now_ms(void);

/* ---- store_find_job's matching ---------------------------------------------- */

typedef struct store_job_find {
    const char *given;
    char *key, *near;
    size_t keycap, nearcap, best_d;
    int found;
} store_job_find;

void store_job_find_init(store_job_find *f, const char *given, char *key,
                         size_t keycap, char *near, size_t nearcap);
/* One job of the store: its key, source and its newest run's name. */
void store_job_find_row(store_job_find *f, const char *job, const char *source,
                        const char *name);
/* 0 when found, else OP_ENOTFOUND with err naming path and the near one. */
int store_job_find_end(store_job_find *f, const char *path, op_error *err);

/* ---- decisions -------------------------------------------------------------- */

/* store_load_decisions' reader (a store_decision_fn): each decision into
 * b, a row no optipipe wrote an OP_EPARSE naming path. */
typedef struct store_load {
    const char *path;
    baseline *b;
    op_error *err;
} store_load;
int store_load_one(void *ud, const store_decision *d);

/* ---- copying (store_copy.c over either backend) ------------------------------ */

/* A read snapshot of s (begin) and its end. */
int store_snapshot(store *s, int begin, op_error *err);
/* A write transaction of s: begin, then end with commit or rollback. */
int store_tx(store *s, int begin, int commit, op_error *err);
/* Every run of s, in recording order (pk). */
int store_each_run_all(store *s, store_run_fn fn, void *ud, op_error *err);
/* Rows as they were read from another store (store_copy); *pk gets the
 * new run's key. */
int store_put_run(store *s, const store_run *r, int64_t *pk, op_error *err);
int store_put_node(store *s, int64_t pk, int64_t seq, const store_node *n,
                   op_error *err);
int store_put_finding(store *s, int64_t pk, int64_t seq,
                      const store_finding *f, op_error *err);
int store_put_decision(store *s, const store_decision *d, op_error *err);
/* Every row of the audit trail, oldest first (seq ascending), and one
 * written as read from another store (its seq dst's next). */
int store_each_change_all(store *s, store_change_fn fn, void *ud,
                          op_error *err);
int store_put_change(store *s, const store_decision_change *c, op_error *err);
/* The notifications: every notify_said row, and the delivery log oldest
 * first (seq ascending); each written as read (a log row's seq dst's
 * next; it changes no notify_said row: those are copied themselves). */
int store_each_said(store *s, store_said_fn fn, void *ud, op_error *err);
int store_each_delivery_all(store *s, store_notification_fn fn, void *ud,
                            op_error *err);
int store_put_said(store *s, const store_said *n, op_error *err);
int store_put_delivery(store *s, const store_notification *n, op_error *err);

/* ---- the PostgreSQL backend (store_pg.c) -------------------------------------- */

typedef struct store_pg store_pg;

/* Opens the store at the libpq URI uri (a password in it is refused: it
 * would show in ps); *out owned by the caller (store_pg_close). Without
 * libpq in the build: OP_EUSAGE, "PostgreSQL support is not compiled in". */
int store_pg_open(const char *uri, int writable, store_pg **out, op_error *err);

#ifdef OP_HAVE_LIBPQ
void store_pg_close(store_pg *p);
void store_pg_set_wait(store_pg *p, int64_t ms);
int store_pg_record(store_pg *p, const model *m, const results *res,
                    const baseline *bl, int own, size_t *nruns, op_error *err);
int store_pg_each_run(store_pg *p, const char *job, const char *source,
                      const char *run_id, int64_t before, int limit,
                      store_run_fn fn, void *ud, op_error *err);
int store_pg_find_run(store_pg *p, const char *ref, store_run_fn fn, void *ud,
                      op_error *err);
int store_pg_each_node(store_pg *p, int64_t run_pk, store_node_fn fn, void *ud,
                       op_error *err);
int store_pg_each_finding(store_pg *p, int64_t run_pk, store_finding_fn fn,
                          void *ud, op_error *err);
int store_pg_each_node_value(store_pg *p, int64_t run_pk,
                             const char *const *metrics, size_t nmetrics,
                             const char *status, store_value_fn fn, void *ud,
                             op_error *err);
int store_pg_each_job(store_pg *p, store_job_fn fn, void *ud, op_error *err);
int store_pg_find_job(store_pg *p, store_job_find *f, op_error *err);
int store_pg_prune(store_pg *p, int64_t keep, int64_t older_than,
                   size_t *removed, op_error *err);
int store_pg_decide(store_pg *p, const char *fp, const char *status,
                    const char *comment, const char *who, op_error *err);
int store_pg_each_decision(store_pg *p, const char *fp, store_decision_fn fn,
                           void *ud, op_error *err);
/* The audit trail (schema 4), as store.c's: v of store_pg_note_conflict
 * is {fingerprint, now, refused status, refused comment, detail}. */
int store_pg_note_conflict(store_pg *p, const char *const v[5], op_error *err);
int store_pg_each_decision_change(store_pg *p, const char *fp, int limit,
                                  store_change_fn fn, void *ud, op_error *err);
int store_pg_each_change_all(store_pg *p, store_change_fn fn, void *ud,
                             op_error *err);
int store_pg_put_change(store_pg *p, const store_decision_change *c,
                        op_error *err);
/* Notifications (schema 5), as store.c's: v of store_pg_notify_log is
 * {at, endpoint, event, fingerprint, status, attempts, error, digest};
 * said: also remember the digest. */
int store_pg_notify_said(store_pg *p, const char *endpoint, const char *fp,
                         char *digest, size_t cap, op_error *err);
int store_pg_notify_log(store_pg *p, const char *const v[8], int said,
                        op_error *err);
int store_pg_notify_forget(store_pg *p, const char *event, op_error *err);
int store_pg_each_said(store_pg *p, store_said_fn fn, void *ud,
                       op_error *err);
int store_pg_each_delivery_all(store_pg *p, store_notification_fn fn,
                               void *ud, op_error *err);
int store_pg_put_said(store_pg *p, const store_said *n, op_error *err);
int store_pg_put_delivery(store_pg *p, const store_notification *n,
                          op_error *err);
int store_pg_each_notification(store_pg *p, int limit,
                               store_notification_fn fn, void *ud,
                               op_error *err);
int store_pg_each_run_all(store_pg *p, store_run_fn fn, void *ud,
                          op_error *err);
int store_pg_snapshot(store_pg *p, int begin, op_error *err);
int store_pg_tx(store_pg *p, int begin, int commit, op_error *err);
int store_pg_put_run(store_pg *p, const store_run *r, int64_t *pk,
                     op_error *err);
int store_pg_put_node(store_pg *p, int64_t pk, int64_t seq,
                      const store_node *n, op_error *err);
int store_pg_put_finding(store_pg *p, int64_t pk, int64_t seq,
                         const store_finding *f, op_error *err);
int store_pg_put_decision(store_pg *p, const store_decision *d, op_error *err);
int store_pg_count(store_pg *p, store_counts *c, op_error *err);
/* The servers' shared state (schema 6), as store.h's store_queue_* and
 * store_session_*; import: store_queue_import (no limit, an id there
 * already is kept). */
int store_pg_queue_add(store_pg *p, const store_analysis *a, int64_t limit,
                       int import, op_error *err);
int store_pg_queue_claim(store_pg *p, const char *instance, int worker,
                         store_analysis *out, op_error *err);
int store_pg_queue_beat(store_pg *p, const char *id, const char *instance,
                        int worker, op_error *err);
int store_pg_queue_end(store_pg *p, const store_analysis *a,
                       const char *instance, int worker, op_error *err);
int store_pg_queue_requeue_stale(store_pg *p, int64_t stale_ms, size_t *n,
                                 op_error *err);
int store_pg_queue_retry(store_pg *p, const char *id, int64_t limit,
                         char *state, op_error *err);
int store_pg_queue_get(store_pg *p, const char *id, store_analysis *out,
                       op_error *err);
int store_pg_queue_each(store_pg *p, store_analysis_fn fn, void *ud,
                        op_error *err);
int store_pg_queue_counts(store_pg *p, int64_t *queued, int64_t *running,
                          op_error *err);
int store_pg_queue_wait(store_pg *p, int fd, int ms, int *queued,
                        op_error *err);
int store_pg_session_put(store_pg *p, const char *id_hash, const char *user,
                         const char *role, int64_t ttl_ms, op_error *err);
int store_pg_session_get(store_pg *p, const char *id_hash, char *user,
                         size_t cap, char *role, size_t rcap, op_error *err);
int store_pg_session_end(store_pg *p, const char *id_hash, op_error *err);
#endif

#endif
