/*
 * store.h - the run store (DESIGN §12, docs/history.md): an SQLite file
 * that remembers every run analyzed with --history, so rules see the
 * earlier runs of the same job (ctx.history), decisions stick and
 * `optipipe history` can list jobs and trends.
 *
 * What is kept per run: job key, run id, times, status, engine version,
 * config, run metrics, per-node summaries and distributions, findings with
 * fingerprints and the decisions of the baseline applied, the run's
 * content hash and origin. Never the raw input.
 *
 * Engine-agnostic: it stores the model's shape, whatever the source. One
 * connection per store handle; the file is opened in WAL mode with a busy
 * timeout, so several analyze processes may share it, and every recording
 * is one transaction (a killed writer leaves the store as it was).
 *
 * Two backends behind this one interface: an SQLite file (store.c, the
 * default) and PostgreSQL over libpq (store_pg.c), chosen by the path
 * (store_uri_is_pg). Same tables, same texts, same answers.
 */
#ifndef OP_CORE_STORE_H
#define OP_CORE_STORE_H

#include <optipipe/common.h>

#include "baseline.h"
#include "findings.h"
#include "model.h"

/* The schema this build writes; older stores are migrated on open for
 * writing, newer ones are refused. */
#define STORE_SCHEMA 6
/* How long a writer waits for another one to let go of the store (ms):
 * STORE_WAIT_ENV (0 to STORE_WAIT_MAX_MS) or this. Waiting backs off from
 * 1 ms to STORE_BACKOFF_MS between tries (docs/history.md "Several
 * writers"). */
#define STORE_WAIT_MS 120000
#define STORE_WAIT_MAX_MS 86400000
#define STORE_WAIT_ENV "OPTIPIPE_STORE_WAIT_MS"
#define STORE_BACKOFF_MS 64
/* store_prune removes this many runs per transaction, and pauses this
 * long between two so that a waiting writer gets the lock; freed pages
 * go back this many per transaction. */
#define STORE_PRUNE_BATCH 64
#define STORE_PRUNE_GAP_MS 2
#define STORE_VACUUM_PAGES_S "256"
/* ctx.history: default and largest number of runs. */
#define STORE_HISTORY_DEFAULT 30
#define STORE_HISTORY_MAX 1000
/* Longest JSON text read back from one column (config, metrics, a node's
 * dist); a longer one is an error naming the store: a store is written by
 * optipipe, so this only trips on a tampered file. */
#define STORE_TEXT_MAX (16u << 20)

typedef struct store store;

/* Opens the store at path. writable: created when missing (mode 0600),
 * migrated to STORE_SCHEMA; else read-only and it must exist. A file that
 * is not SQLite, an SQLite file that is not a run store, or a newer schema
 * is an error naming path. Returns 0 with *out (close with store_close),
 * or an op_status with err. */
int store_open(const char *path, int writable, store **out, op_error *err);

/* Whether a --history / --store value names a PostgreSQL store (a
 * postgresql:// or postgres:// libpq URI, docs/history.md) rather than an
 * SQLite file: then there is no file to look at, and store_open says
 * whether it is there. */
int store_uri_is_pg(const char *path);

/* Read-only media (a CI cache, an artifact mount): whether the store at
 * path or its folder cannot be written (access(2): EROFS, EACCES). There
 * store_open for writing fails (OP_EIO, saying so), and for reading, when
 * SQLite cannot make the -shm file a WAL store needs, opens it immutable
 * (no lock, no -shm; a note says so once per process). */
int store_read_only_media(const char *path);
/* Whether s was opened immutable (read-only media). */
int store_is_immutable(const store *s);
void store_close(store *s);

/* The wait of every store opened: STORE_WAIT_ENV when it is a number of
 * ms from 0 to STORE_WAIT_MAX_MS, else STORE_WAIT_MS. */
int64_t store_wait_default(void);
/* How long s waits for a lock another connection holds, per lock (and a
 * recording, over all its tries); 0: not at all. */
void store_set_wait(store *s, int64_t ms);
const char *store_path(const store *s);

/* Records every run of m that is not superseded, with its findings of res
 * and their decisions in bl (may be NULL), in one transaction: a run
 * already stored (same source and run id) is replaced. In the same
 * transaction every decision of bl is written onto the stored findings of
 * earlier runs it names (by fingerprint, else legacy fingerprint), so a
 * decision made after a run was recorded reaches the store; stored
 * decisions bl does not name stay, and a stored decision newer than bl's
 * (by decided_at; a decision without one is the oldest) stays too: the
 * newest decision wins. Each change is kept in the audit trail. bl's decisions are also written into
 * the decisions table (store_decide's; decided_by kept when the status
 * and comment are unchanged, else NULL: a decisions file made them). *nruns (may be NULL) gets how many
 * runs were written. Returns 0 or an op_status with
 * err naming the store. */
int store_record(store *s, const model *m, const results *res,
                 const baseline *bl, size_t *nruns, op_error *err);

/* store_record for an analysis whose decisions came from this store
 * (session decisions_from_store): the new findings get the store's
 * decisions as they are when the transaction writes (a decision made or
 * taken back while the analysis ran is neither lost nor undone), and
 * nothing is written back into the decisions table. */
int store_record_own(store *s, const model *m, const results *res,
                     size_t *nruns, op_error *err);

/* One stored run, as the readers below hand it out: strings borrowed for
 * the duration of the callback; *_json are JSON texts (objects). */
typedef struct store_run {
    int64_t pk;
    const char *job, *source, *run_id, *name, *status, *engine_version;
    const char *origin, *content_hash;
    const char *config_json, *metrics_json, *attrs_json;
    int64_t started_at, ended_at, duration_ms, recorded_at;
    unsigned set; /* MSET_STARTED_AT | MSET_ENDED_AT | MSET_DURATION_MS */
    int64_t nnodes, nfindings;
} store_run;

typedef struct store_node {
    const char *id, *kind, *name, *status;
    int64_t started_at, ended_at, duration_ms, parallelism;
    unsigned set; /* MSET_* bits */
    const char *metrics_json, *dist_json, *attrs_json;
} store_node;

typedef struct store_finding {
    const char *rule, *fingerprint, *node, *severity, *message;
    const char *legacy_fp;    /* NULL when the same as fingerprint */
    const char *changes_json; /* array */
    const char *evidence_json; /* object; NULL when the finding had none */
    double impact_ms;         /* < 0: none */
    const char *decision, *comment; /* NULL when undecided */
} store_finding;

/* Each callback returns 0 to go on, nonzero to stop (that value is then
 * returned). Readers return 0, that value, or an op_status with err. */
typedef int (*store_run_fn)(void *ud, const store_run *r);
typedef int (*store_node_fn)(void *ud, const store_node *n);
typedef int (*store_finding_fn)(void *ud, const store_finding *f);

/* The runs of job, newest first (started_at, then recording order), at
 * most limit, leaving out the run (source, run_id) and, when before > 0,
 * runs that started at or after it. */
int store_each_run(store *s, const char *job, const char *source,
                   const char *run_id, int64_t before, int limit,
                   store_run_fn fn, void *ud, op_error *err);

/* The run named by ref: a stored run id, or JOB@latest / JOB@previous. */
int store_find_run(store *s, const char *ref, store_run_fn fn, void *ud,
                   op_error *err);

int store_each_node(store *s, int64_t run_pk, store_node_fn fn, void *ud,
                    op_error *err);
int store_each_finding(store *s, int64_t run_pk, store_finding_fn fn,
                       void *ud, op_error *err);

/* ctx.node_history's read: for each node of run run_pk (in node order)
 * whose status is status (NULL: any), the first of metrics it has as a
 * number: a node column (STORE_NODE_COLUMNS) or a name in its metrics.
 * Nodes with none are left out. One statement, no JSON parsed in C.
 * metrics: 1 to STORE_SERIES_METRICS names of at most STORE_METRIC_MAX
 * bytes from [A-Za-z0-9_.:-] (else OP_EUSAGE). */
#define STORE_NODE_COLUMNS "duration_ms, parallelism, started_at, ended_at"
#define STORE_SERIES_METRICS 4
#define STORE_METRIC_MAX 128
typedef int (*store_value_fn)(void *ud, const char *node_id, double v);
int store_each_node_value(store *s, int64_t run_pk,
                          const char *const *metrics, size_t nmetrics,
                          const char *status, store_value_fn fn, void *ud,
                          op_error *err);

/* One job: its key, source, how many runs, the newest start. */
typedef struct store_job {
    const char *job, *source;
    int64_t nruns, last_started;
} store_job;
typedef int (*store_job_fn)(void *ud, const store_job *j);
int store_each_job(store *s, store_job_fn fn, void *ud, op_error *err);

/* Finds the job a user means by given: a job key as stored, else the
 * name its newest run shows in reports ("shop: dbt build"), alone or after
 * its source ("dbt shop: dbt build"). Writes the key into key (keycap
 * bytes) and returns 0; OP_ENOTFOUND when no job matches, with the closest
 * key or shown name in near ("" when none is close); another op_status
 * with err set when the store cannot be read. The caller owns both
 * buffers. */
#define STORE_JOB_KEY_MAX 512
int store_find_job(store *s, const char *given, char *key, size_t keycap,
                   char *near, size_t nearcap, op_error *err);

/* Retention: per job, keeps the newest keep runs (0: no count limit) and
 * removes runs started before older_than (epoch ms; 0: no age limit);
 * a run both among the newest keep and old is removed. *removed gets the
 * count. The runs to remove are chosen first, then removed
 * STORE_PRUNE_BATCH per transaction (a prune stopped half way has
 * removed whole runs only; another writer gets the store between two). */
int store_prune(store *s, int64_t keep, int64_t older_than, size_t *removed,
                op_error *err);

/* ---- decisions (schema 3) -------------------------------------------------- */

/* Bounds of store_decide's texts (OP_EUSAGE beyond). */
#define STORE_COMMENT_MAX 4096
#define STORE_WHO_MAX 256

/* Decides the finding fingerprint (16 lowercase hex digits): status
 * "approved" or "dismissed" (with comment, may be NULL, and who decided,
 * may be NULL) writes its row of the decisions table, with the rule, job,
 * run and node of the newest stored finding that has it, and sets the
 * decision and comment of every stored finding with that fingerprint (or
 * that legacy fingerprint); "open" removes the decision (also one kept
 * under the finding's legacy fingerprint) and clears theirs. One
 * transaction. OP_ENOTFOUND when no stored finding has the fingerprint,
 * OP_EUSAGE for a bad fingerprint, status or an over-long text; err says
 * which. The store must be open for writing. */
int store_decide(store *s, const char *fingerprint, const char *status,
                 const char *comment, const char *who, op_error *err);

/* One row of the decisions table; strings borrowed for the callback,
 * NULL when not known (legacy_fp, job, run_id, node, comment,
 * decided_by). */
typedef struct store_decision {
    const char *fingerprint, *legacy_fp, *rule, *job, *run_id, *node;
    const char *status, *comment, *decided_at, *decided_by;
} store_decision;
typedef int (*store_decision_fn)(void *ud, const store_decision *d);

/* The decision of fingerprint (NULL: every decision, by fingerprint),
 * also one kept under it as a legacy fingerprint. */
int store_each_decision(store *s, const char *fingerprint,
                        store_decision_fn fn, void *ud, op_error *err);

/* Every decision of the store into b (initialised here; the caller frees
 * it with baseline_free), as a decisions file would give them. A row no
 * optipipe wrote (bad fingerprint or status) is OP_EPARSE naming the
 * store. */
int store_load_decisions(store *s, baseline *b, op_error *err);

/* ---- the decisions' audit trail (schema 4) ------------------------------- */

/* Every change of a decision, as the table decision_log keeps it: kind
 * "decided" (store_decide; changed_by who, NULL when not given), "file"
 * (a decisions file's decision store_record applied; changed_by NULL,
 * detail "a decisions file") or "conflict" (store_note_conflict: old_*
 * is the stored decision kept, new_* the file's that was not applied,
 * detail names the file and when it was decided). Statuses are
 * "approved", "dismissed" or "open" (no decision); comments may be NULL.
 * Strings borrowed for the callback. A decision store_record would not
 * apply because the store's is newer (by decided_at) is not a change. */
typedef struct store_decision_change {
    int64_t seq; /* grows with every change */
    const char *fingerprint, *changed_at, *changed_by, *kind;
    const char *old_status, *old_comment, *new_status, *new_comment;
    const char *detail;
} store_decision_change;
typedef int (*store_change_fn)(void *ud, const store_decision_change *c);

/* The changes of fingerprint (NULL: of every one), newest first, at most
 * limit (<= 0: all). Returns 0, fn's nonzero value, or an op_status. */
int store_each_decision_change(store *s, const char *fingerprint, int limit,
                               store_change_fn fn, void *ud, op_error *err);

/* Notes that refused (a decision of the file source, borrowed) was not
 * applied because the store holds a newer, different decision for its
 * fingerprint: one "conflict" row, unless the newest row of that
 * fingerprint is already this conflict (a file read on every run notes it
 * once). Nothing when the store has no decision for it. One transaction;
 * the store must be open for writing. */
int store_note_conflict(store *s, const decision *refused, const char *source,
                        op_error *err);

/* ---- notifications (schema 5, core/notify.c, docs/notify.md) ------------ */

/* Bounds of a notification row's texts (OP_EUSAGE beyond). */
#define STORE_NOTIFY_TEXT_MAX 1024

/* One delivery of one event to one endpoint, as the table notify_log
 * keeps it: status "sent" or "failed", error NULL when sent, digest (a
 * hash of what was said) NULL when failed. Strings borrowed. */
typedef struct store_notification {
    int64_t seq;            /* grows with every row (readers only) */
    const char *at;         /* ISO 8601 UTC; NULL when writing: now */
    const char *endpoint, *event, *fingerprint, *status;
    int64_t attempts;
    const char *error, *digest;
} store_notification;
typedef int (*store_notification_fn)(void *ud, const store_notification *n);

/* What endpoint was last told of the event fingerprint: its digest into
 * digest (cap bytes, at least SHA256_HEX_LEN + 1), "" when nothing was
 * sent. Returns 0 or an op_status with err. */
int store_notify_said(store *s, const char *endpoint, const char *fingerprint,
                      char *digest, size_t cap, op_error *err);

/* Logs one delivery (n borrowed); a "sent" one also remembers its digest
 * as what n->endpoint was told of n->fingerprint (store_notify_said). One
 * transaction; the store must be open for writing. */
int store_notify_log(store *s, const store_notification *n, op_error *err);

/* Forgets what every endpoint was told of the events the log names as
 * event ("failed": an analysis succeeded, so the next failure is news).
 * One transaction; the store must be open for writing (OP_EUSAGE). */
int store_notify_forget(store *s, const char *event, op_error *err);

/* What an endpoint was last told of an event: a notify_said row. */
typedef struct store_said {
    const char *endpoint, *fingerprint, *digest, *said_at;
} store_said;
typedef int (*store_said_fn)(void *ud, const store_said *n);

/* The deliveries, newest first, at most limit (<= 0: all). */
int store_each_notification(store *s, int limit, store_notification_fn fn,
                            void *ud, op_error *err);

/* ---- the server's shared state (schema 6; PostgreSQL only) ------------- */

/* Several `optipipe serve` instances on one PostgreSQL store share their
 * analyses queue and browser sessions through the tables analyses and
 * sessions (docs/serve.md "Several instances"). An SQLite store has the
 * tables too (one schema), but its single server keeps its queue in
 * DATA and its sessions in memory: every store_queue_* and
 * store_session_* call on an SQLite store is OP_EUSAGE. Times are epoch
 * ms; heartbeats and their staleness are the database server's clock, so
 * the instances' clocks need not agree. */
#define STORE_AID_LEN 16        /* an analysis id: 16 lowercase hex digits */
#define STORE_INSTANCE_MAX 96   /* an instance's name */
#define STORE_AERROR_MAX 1023   /* an analysis' error text */

/* One row of analyses. state: "queued", "running", "done", "failed" or
 * "record-failed" (serve.h's srv_state names). */
typedef struct store_analysis {
    char id[STORE_AID_LEN + 1];
    char state[16];
    int64_t created_at, started_at, finished_at, heartbeat_at;
    int exit_code;
    char error[STORE_AERROR_MAX + 1];
    int64_t files, bytes;
    char instance[STORE_INSTANCE_MAX + 1]; /* running it; "" none */
    int worker;                            /* its slot there */
    int64_t ahead; /* readers, a queued one: queued analyses before it */
} store_analysis;
typedef int (*store_analysis_fn)(void *ud, const store_analysis *a);

/* Adds a (state "queued") when fewer than limit analyses are queued
 * (limit <= 0: always), the count and the insert in one transaction under
 * an advisory lock, so that the limit holds over every instance. OP_ELIMIT
 * when full; OP_EUSAGE for a bad id or state. */
int store_queue_add(store *s, const store_analysis *a, int64_t limit,
                    op_error *err);
/* Adds a as it is unless its id is there already (a DATA folder of an
 * earlier server). */
int store_queue_import(store *s, const store_analysis *a, op_error *err);
/* Takes the oldest queued analysis (FOR UPDATE SKIP LOCKED: two slots
 * never take the same one, none waits for another) as running by
 * instance's slot worker, started and heartbeat now; 0 with *out, or
 * OP_ENOTFOUND when none is queued. */
int store_queue_claim(store *s, const char *instance, int worker,
                      store_analysis *out, op_error *err);
/* The heartbeat of analysis id, running by (instance, worker).
 * OP_ENOTFOUND when it is not (any more): another instance found it stale
 * and queued it again, so its worker must stop. */
int store_queue_beat(store *s, const char *id, const char *instance,
                     int worker, op_error *err);
/* How analysis a->id, running by (instance, worker), ended: a->state,
 * finished_at, exit_code, error; state "queued" hands it back (started
 * and finished cleared). OP_ENOTFOUND when it is not running by them. */
int store_queue_end(store *s, const store_analysis *a, const char *instance,
                    int worker, op_error *err);
/* Queues again every running analysis whose heartbeat is older than
 * stale_ms (its instance died or hangs); *n (may be NULL) gets how many. */
int store_queue_requeue_stale(store *s, int64_t stale_ms, size_t *n,
                              op_error *err);
/* Queues a failed or record-failed analysis again (limit as
 * store_queue_add). OP_ENOTFOUND, OP_EUSAGE (not failed: *state gets it,
 * may be NULL, 16 bytes), OP_ELIMIT. */
int store_queue_retry(store *s, const char *id, int64_t limit, char *state,
                      op_error *err);
/* One analysis (with ahead); OP_ENOTFOUND. */
int store_queue_get(store *s, const char *id, store_analysis *out,
                    op_error *err);
/* Every analysis, newest first (created_at, then id), with ahead. */
int store_queue_each(store *s, store_analysis_fn fn, void *ud, op_error *err);
/* Waits at most ms for an analysis to be queued by any connection
 * (store_queue_add, _retry and _requeue_stale notify at their commit:
 * LISTEN/NOTIFY; the first call starts listening) or for fd (>= 0; -1
 * none) to be readable. *queued (may be NULL) says whether one was
 * queued (since the last call, or while waiting). 0, or an op_status. */
int store_queue_wait(store *s, int fd, int ms, int *queued, op_error *err);
/* How many are queued and running now. */
int store_queue_counts(store *s, int64_t *queued, int64_t *running,
                       op_error *err);

/* A browser session, by the SHA-256 (hex) of its cookie, never the
 * cookie itself: who (user "" for none) and role, until expires_at (epoch
 * ms, the database's clock). */
#define STORE_SESSION_HASH_LEN 64
int store_session_put(store *s, const char *id_hash, const char *user,
                      const char *role, int64_t ttl_ms, op_error *err);
/* The session id_hash: user (cap bytes) and role (rcap bytes); OP_ENOTFOUND
 * when there is none or it expired (store_session_put removes the
 * expired ones). */
int store_session_get(store *s, const char *id_hash, char *user, size_t cap,
                      char *role, size_t rcap, op_error *err);
int store_session_end(store *s, const char *id_hash, op_error *err);

/* ---- copying a store (optipipe history copy) ----------------------------------- */

/* What a store holds: its rows per table (changes: decision_log's, the
 * decisions' audit trail). */
typedef struct store_counts {
    int64_t runs, nodes, findings, decisions, changes;
    int64_t said, deliveries; /* notify_said's rows, notify_log's */
} store_counts;
int store_count(store *s, store_counts *c, op_error *err);

/* Copies every run (with its nodes and findings, keys, times, content
 * hash and recording time as they are), every decision and the whole
 * audit trail (oldest first: its order kept, its seq numbers dst's own)
 * of src into dst, SQLite or PostgreSQL either way. All or nothing: one transaction
 * of dst, committed only when dst's counts equal src's (read in one
 * snapshot of src); else rolled back (OP_EIO naming the table). dst must
 * be open for writing and hold no run, no decision and no change
 * (OP_EUSAGE).
 * *copied (may be NULL) gets the counts. */
int store_copy(store *src, store *dst, store_counts *copied, op_error *err);

/* Test hook: called after every row written by store_record, with the
 * count so far (tests/unit/test_store.c kills the writer there). */
extern void (*store_row_hook)(size_t rows);
/* Test hook: called after each committed transaction of store_prune. */
extern void (*store_prune_hook)(size_t batches);

#endif
