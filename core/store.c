/*
 * store.c - the SQLite run store (store.h, docs/history.md): schema and
 * migrations, recording an analysis in one transaction, and the readers
 * behind ctx.history and `optipipe history`.
 */
#include "store.h"
#include "store_int.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "baseline.h"
#include "diag.h"
#include "jsonw.h"
#include "model_json.h"
#include "util.h"

void (*store_row_hook)(size_t rows);

struct store {
    sqlite3 *db;
    char *path;
    int writable;
    int immutable;      /* opened read-only as immutable (read-only media) */
    int64_t wait_ms;    /* how long one lock is waited for */
    int64_t wait_start; /* when the current wait began (monotonic ms) */
    int beginning;      /* in begin_write: a wait is said once */
    store_pg *pg;       /* a PostgreSQL store: every call goes there */
};

/* A PostgreSQL store's calls go to store_pg.c (store_int.h). */
#ifdef OP_HAVE_LIBPQ
#define PG_DISPATCH(call)                                                     \
    do {                                                                      \
        if (s->pg)                                                            \
            return call;                                                      \
    } while (0)
#else
#define PG_DISPATCH(call) ((void)0)
#endif

#define APP_KEY STORE_APP_KEY
#define APP_NAME STORE_APP_NAME

/* Schema 0: what the first store had. A new store is created at 0 and
 * migrated like an old one, so every migration runs on every new store. */
static const char schema_v0[] =
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO meta VALUES('" APP_KEY "', '" APP_NAME "');"
    "CREATE TABLE runs(pk INTEGER PRIMARY KEY, job TEXT NOT NULL,"
    " source TEXT NOT NULL, run_id TEXT NOT NULL, name TEXT, status TEXT,"
    " started_at INTEGER, ended_at INTEGER, duration_ms INTEGER,"
    " engine_version TEXT, config TEXT NOT NULL DEFAULT '{}',"
    " metrics TEXT NOT NULL DEFAULT '{}', UNIQUE(source, run_id));"
    "CREATE TABLE findings(run_pk INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " rule TEXT NOT NULL, fingerprint TEXT NOT NULL, node TEXT,"
    " severity TEXT NOT NULL, message TEXT, PRIMARY KEY(run_pk, seq));";

/* Schema 4: every change of a decision, oldest first by seq (kinds:
 * "decided" by a person through store_decide, "file" from a decisions
 * file through store_record, "conflict" a file's older decision that was
 * not applied: store_note_conflict). The statuses are approved,
 * dismissed or open (no decision). */
#define DECISION_LOG_SCHEMA                                                  \
    "CREATE TABLE decision_log(seq INTEGER PRIMARY KEY,"                     \
    " fingerprint TEXT NOT NULL, changed_at TEXT NOT NULL, changed_by TEXT," \
    " kind TEXT NOT NULL, old_status TEXT NOT NULL, old_comment TEXT,"       \
    " new_status TEXT NOT NULL, new_comment TEXT, detail TEXT);"             \
    "CREATE INDEX decision_log_fp ON decision_log(fingerprint, seq);"        \
    "INSERT INTO decision_log(fingerprint, changed_at, changed_by, kind,"    \
    " old_status, new_status, new_comment, detail) SELECT fingerprint,"      \
    " decided_at, decided_by, 'decided', 'open', status, comment,"           \
    " 'made before the audit trail existed' FROM decisions"                 \
    " ORDER BY decided_at, fingerprint;"

/* Schema 5: webhook notifications (core/notify.c): what each endpoint
 * was last told of each event (notify_said: "notifies once until it
 * changes") and every delivery, sent or failed (notify_log). */
#define NOTIFY_SCHEMA                                                        \
    "CREATE TABLE notify_said(endpoint TEXT NOT NULL,"                       \
    " fingerprint TEXT NOT NULL, digest TEXT NOT NULL, said_at TEXT NOT NULL,"\
    " PRIMARY KEY(endpoint, fingerprint));"                                  \
    "CREATE TABLE notify_log(seq INTEGER PRIMARY KEY, at TEXT NOT NULL,"     \
    " endpoint TEXT NOT NULL, event TEXT NOT NULL, fingerprint TEXT NOT NULL,"\
    " status TEXT NOT NULL, attempts INTEGER NOT NULL, error TEXT,"          \
    " digest TEXT);"

/* Schema 6: the servers' shared analyses queue and browser sessions
 * (store_queue_*, store_session_*). They are PostgreSQL's: an SQLite
 * store gets the same tables so that there is one schema, but its one
 * server keeps its queue in DATA and its sessions in memory and never
 * fills them. */
#define SHARED_SCHEMA                                                        \
    "CREATE TABLE analyses(id TEXT PRIMARY KEY, state TEXT NOT NULL,"        \
    " created_at INTEGER NOT NULL, started_at INTEGER NOT NULL DEFAULT 0,"   \
    " finished_at INTEGER NOT NULL DEFAULT 0, exit_code INTEGER NOT NULL"    \
    " DEFAULT 0, error TEXT NOT NULL DEFAULT '', files INTEGER NOT NULL"     \
    " DEFAULT 0, bytes INTEGER NOT NULL DEFAULT 0, instance TEXT,"           \
    " worker INTEGER, heartbeat_at INTEGER);"                                \
    "CREATE TABLE sessions(id_hash TEXT PRIMARY KEY, user_name TEXT NOT NULL,"\
    " role TEXT NOT NULL, created_at INTEGER NOT NULL,"                      \
    " expires_at INTEGER NOT NULL);"

/* migrations[v] takes a store from schema v to v + 1. */
static const char *const migrations[STORE_SCHEMA] = {
    /* 0 -> 1: origin, content hash, nodes, changes and decisions */
    "ALTER TABLE runs ADD COLUMN origin TEXT;"
    "ALTER TABLE runs ADD COLUMN content_hash TEXT NOT NULL DEFAULT '';"
    "ALTER TABLE runs ADD COLUMN recorded_at INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE runs ADD COLUMN attrs TEXT NOT NULL DEFAULT '{}';"
    "CREATE INDEX runs_job ON runs(job, started_at);"
    "CREATE TABLE nodes(run_pk INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " id TEXT NOT NULL, kind TEXT, name TEXT, status TEXT,"
    " started_at INTEGER, ended_at INTEGER, duration_ms INTEGER,"
    " parallelism INTEGER, metrics TEXT NOT NULL DEFAULT '{}',"
    " dist TEXT NOT NULL DEFAULT '{}', attrs TEXT NOT NULL DEFAULT '{}',"
    " PRIMARY KEY(run_pk, seq)) WITHOUT ROWID;"
    "ALTER TABLE findings ADD COLUMN changes TEXT NOT NULL DEFAULT '[]';"
    "ALTER TABLE findings ADD COLUMN impact_ms REAL;"
    "ALTER TABLE findings ADD COLUMN decision TEXT;"
    "ALTER TABLE findings ADD COLUMN comment TEXT;",
    /* 1 -> 2: legacy fingerprints, decisions found by fingerprint, and
     * the findings' evidence */
    "ALTER TABLE findings ADD COLUMN legacy_fp TEXT;"
    "CREATE INDEX findings_fp ON findings(fingerprint);"
    "CREATE INDEX findings_legacy ON findings(legacy_fp)"
    " WHERE legacy_fp IS NOT NULL;"
    "ALTER TABLE findings ADD COLUMN evidence TEXT;",
    /* 2 -> 3: decisions of their own (store_decide), keyed by fingerprint;
     * the stored findings' decisions carried over, the newest run's
     * winning, decided when that run was recorded */
    "CREATE TABLE decisions(fingerprint TEXT PRIMARY KEY, legacy_fp TEXT,"
    " rule TEXT NOT NULL, job TEXT, run_id TEXT, node TEXT,"
    " status TEXT NOT NULL, comment TEXT, decided_at TEXT NOT NULL,"
    " decided_by TEXT);"
    "CREATE INDEX decisions_legacy ON decisions(legacy_fp)"
    " WHERE legacy_fp IS NOT NULL;"
    "INSERT OR IGNORE INTO decisions SELECT f.fingerprint, f.legacy_fp,"
    " f.rule, r.job, r.run_id, f.node, f.decision, f.comment,"
    " strftime('%Y-%m-%dT%H:%M:%SZ', r.recorded_at / 1000, 'unixepoch'),"
    " NULL FROM findings f JOIN runs r ON r.pk = f.run_pk"
    " WHERE f.decision IN ('approved', 'dismissed')"
    " ORDER BY r.recorded_at DESC, r.pk DESC;",
    /* 3 -> 4: the decisions' audit trail (store_each_decision_change), begun
     * with the decisions already there */
    DECISION_LOG_SCHEMA,
    /* 4 -> 5: webhook notifications (store_notify_*) */
    NOTIFY_SCHEMA,
    /* 5 -> 6: the servers' shared state (PostgreSQL's; see above) */
    SHARED_SCHEMA,
};

static int db_fail(store *s, int code, const char *what, op_error *err)
{
    return op_error_set(err, code, "%s: %s: %s", s->path, what,
                        s->db ? sqlite3_errmsg(s->db) : "cannot open");
}

static int exec(store *s, const char *sql, const char *what, op_error *err)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, what, err);
    return 0;
}

/* The first column of the first row of sql as an integer; -1 when none. */
static int64_t scalar(store *s, const char *sql, int *rc)
{
    sqlite3_stmt *st = NULL;
    int64_t v = -1;

    *rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
    if (*rc == SQLITE_OK) {
        *rc = sqlite3_step(st);
        if (*rc == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0), *rc = SQLITE_OK;
        else if (*rc == SQLITE_DONE)
            *rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return v;
}

/* ---- waiting for another writer ---------------------------------------------- */

int64_t store_wait_default(void)
{
    const char *v = getenv(STORE_WAIT_ENV);
    char *end;
    long long ms;

    if (!v || !*v)
        return STORE_WAIT_MS;
    errno = 0;
    ms = strtoll(v, &end, 10);
    if (errno || *end || ms < 0 || ms > STORE_WAIT_MAX_MS) {
        static int said;
        if (!said++)
            diag_msg(DIAG_WARNING, "%s=%.40s is not a number of ms from 0 to "
                     "%d: waiting the default %d ms", STORE_WAIT_ENV, v,
                     STORE_WAIT_MAX_MS, STORE_WAIT_MS);
        return STORE_WAIT_MS;
    }
    return ms;
}

/* SQLite's busy handler: n is how often it was called for this lock.
 * Backs off 1, 2, 4 ... STORE_BACKOFF_MS ms until s->wait_ms have passed
 * since the first call, then gives up (the statement fails with
 * SQLITE_BUSY). */
static int busy_backoff(void *ud, int n)
{
    store *s = ud;
    int64_t now = store_mono_ms();

    if (n == 0) {
        s->wait_start = now;
        if (s->beginning && s->wait_ms > 0) /* tests wait for this line */
            diag_msg(DIAG_NOTE, "%s: another writer holds the run store; "
                     "waiting up to %lld ms (%s)", s->path,
                     (long long)s->wait_ms, STORE_WAIT_ENV);
    }
    if (now >= s->wait_start + s->wait_ms)
        return 0;
    store_pause_ms(n < 8 ? (int64_t)1 << n : STORE_BACKOFF_MS,
             s->wait_start + s->wait_ms);
    return 1;
}

void store_set_wait(store *s, int64_t ms)
{
    s->wait_ms = ms < 0 ? 0 : ms;
#ifdef OP_HAVE_LIBPQ
    if (s->pg)
        store_pg_set_wait(s->pg, s->wait_ms);
#endif
}

/* Whether the last failure of s was another connection holding a lock. */
static int was_busy(const store *s)
{
    int c = sqlite3_extended_errcode(s->db) & 0xff;

    return c == SQLITE_BUSY || c == SQLITE_LOCKED;
}

/* BEGIN IMMEDIATE; a store still locked after the wait says who to look
 * for, not just "database is locked". */
static int begin_write(store *s, op_error *err)
{
    int rc;

    s->beginning = 1;
    rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    s->beginning = 0;
    if (rc == SQLITE_OK)
        return 0;
    if (was_busy(s))
        return op_error_set(err, OP_EIO, "%s: another writer held the run "
                            "store for more than %lld ms (%s=MS waits "
                            "longer): %s", s->path, (long long)s->wait_ms,
                            STORE_WAIT_ENV, sqlite3_errmsg(s->db));
    return db_fail(s, OP_EIO, "cannot lock the store", err);
}

/* ---- opening -------------------------------------------------------------- */

/* A new store file is private to its owner (it holds configs). */
static int create_private(const char *path, op_error *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);

    if (fd < 0 && errno != EEXIST)
        return op_error_set(err, OP_EIO, "%s: cannot create the run store: %s",
                            path, strerror(errno));
    if (fd >= 0)
        close(fd);
    return 0;
}

/* 1 when the file is an opti-pipe store, 0 when it is an empty database
 * (new), -1 (err set) when it is not SQLite or another application's. */
static int identify(store *s, op_error *err)
{
    int rc;
    int64_t ntables = scalar(s, "SELECT count(*) FROM sqlite_master", &rc);
    sqlite3_stmt *st = NULL;
    int ours = 0;

    if (rc != SQLITE_OK)
        return op_error_set(err, OP_EPARSE, "%s: not a run store (%s); give "
                            "--history a new file or one optipipe wrote",
                            s->path, sqlite3_errstr(rc)), -1;
    if (ntables == 0)
        return 0;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = '"
                           APP_KEY "'", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const unsigned char *v = sqlite3_column_text(st, 0);
        ours = v && strcmp((const char *)v, APP_NAME) == 0;
    }
    sqlite3_finalize(st);
    if (!ours)
        return op_error_set(err, OP_EPARSE, "%s: an SQLite database, but not "
                            "an opti-pipe run store (no '%s' in its meta "
                            "table); refusing to write into it", s->path,
                            APP_NAME), -1;
    return 1;
}

/* Brings the store to STORE_SCHEMA inside one write transaction. */
static int migrate(store *s, int fresh, op_error *err)
{
    int rc;
    int64_t v;

    if ((rc = begin_write(s, err)))
        return rc;
    if (fresh && identify(s, err) == 0) {
        if ((rc = exec(s, schema_v0, "cannot create the schema", err)))
            goto out;
    }
    v = scalar(s, "PRAGMA user_version", &rc);
    for (; v >= 0 && v < STORE_SCHEMA; v++) {
        char sql[48];
        if ((rc = exec(s, migrations[v], "migrating the schema", err)))
            goto out;
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", (int)v + 1);
        if ((rc = exec(s, sql, "migrating the schema", err)))
            goto out;
    }
    rc = exec(s, "COMMIT", "cannot commit the schema", err);
out:
    if (rc)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static int check_schema(store *s, op_error *err)
{
    int rc, kind = identify(s, err);
    int64_t v;

    if (kind < 0)
        return err->code;
    /* No schema yet: an empty file, or one whose first recording has not
     * committed its schema. To a reader that is no store yet, as a missing
     * file is (a page asked while the first analysis records is not an
     * error); a writer makes it. */
    if (kind == 0 && !s->writable)
        return op_error_set(err, OP_ENOTFOUND, "%s: an empty file, no run "
                            "store yet (analyze --history makes one)",
                            s->path);
    v = kind ? scalar(s, "PRAGMA user_version", &rc) : 0;
    if (kind && rc != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the schema version", err);
    if (v < 0) /* no optipipe writes one: readers and writers refuse it */
        return op_error_set(err, OP_EPARSE, "%s: run store schema %lld is "
                            "not one optipipe writes (a damaged or tampered "
                            "store); give --history another file", s->path,
                            (long long)v);
    if (v > STORE_SCHEMA)
        return op_error_set(err, OP_EUSAGE, "%s: run store schema %lld is "
                            "newer than this optipipe reads (%d): upgrade "
                            "optipipe, or give --history another file",
                            s->path, (long long)v, STORE_SCHEMA);
    if (v == STORE_SCHEMA)
        return 0;
    if (!s->writable)
        return op_error_set(err, OP_EUSAGE, "%s: run store schema %lld is "
                            "older than %d: `optipipe analyze --history` "
                            "migrates it", s->path, (long long)v,
                            STORE_SCHEMA);
    return migrate(s, kind == 0, err);
}

int store_read_only_media(const char *path)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;

    if (store_uri_is_pg(path))
        return 0; /* a server: its privileges say, at the first write */
    if (n >= sizeof dir)
        return 0;
    if (slash) {
        memcpy(dir, path, n ? n : 1);
        dir[n ? n : 1] = '\0';
    } else
        snprintf(dir, sizeof dir, ".");
    /* the store and its -wal, -shm and -journal beside it */
    return (access(path, W_OK) != 0 && errno != ENOENT) ||
           access(dir, W_OK) != 0;
}

/* "file:PATH?immutable=1", PATH's '?', '#' and '%' escaped (they would
 * end or change the URI's path); sqlite3_free it. */
static char *immutable_uri(const char *path)
{
    size_t n = strlen(path), i, k = 0;
    char *uri = sqlite3_malloc64(3 * n + sizeof "file:?immutable=1");

    if (!uri)
        return NULL;
    k += (size_t)sprintf(uri, "file:");
    for (i = 0; i < n; i++)
        if (path[i] == '?' || path[i] == '#' || path[i] == '%')
            k += (size_t)sprintf(uri + k, "%%%02x", (unsigned char)path[i]);
        else
            uri[k++] = path[i];
    strcpy(uri + k, "?immutable=1");
    return uri;
}

/* Opens s->db: flags, or immutable (read-only media: SQLite neither
 * locks nor makes a -shm file). */
static int open_db(store *s, int flags, int immutable, op_error *err)
{
    char *uri = NULL;
    int rc;

    if (immutable) {
        if (!(uri = immutable_uri(s->path)))
            return op_error_set(err, OP_ENOMEM, "%s: out of memory", s->path);
        flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
    }
    sqlite3_close(s->db);
    s->db = NULL;
    rc = sqlite3_open_v2(uri ? uri : s->path, &s->db,
                         flags | SQLITE_OPEN_NOMUTEX, NULL);
    sqlite3_free(uri);
    if (rc != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot open the run store", err);
    s->immutable = immutable;
    s->wait_ms = store_wait_default();
    sqlite3_busy_handler(s->db, busy_backoff, s);
    sqlite3_extended_result_codes(s->db, 1);
    return 0;
}

/* WAL before the schema (lets readers run beside a writer); incremental
 * auto-vacuum so that pruning gives space back. */
static int set_wal(store *s, op_error *err)
{
    int dummy;

    if (scalar(s, "SELECT count(*) FROM sqlite_master", &dummy) == 0)
        sqlite3_exec(s->db, "PRAGMA auto_vacuum = INCREMENTAL", NULL, NULL, NULL);
    if (sqlite3_exec(s->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) !=
        SQLITE_OK)
        return op_error_set(err, OP_EPARSE, "%s: not a run store (%s)",
                            s->path, sqlite3_errmsg(s->db));
    sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
    return 0;
}

/* A reader of a store on read-only media: the plain read-only open needs
 * a -shm file it cannot make (WAL), so the store is read as immutable,
 * said once per process. */
static int open_reader(store *s, op_error *err)
{
    static int said;
    op_error first;
    int rc;

    op_error_clear(&first);
    if ((rc = open_db(s, SQLITE_OPEN_READONLY, 0, err)) ||
        !(rc = check_schema(s, &first)))
        return rc;
    if (!store_read_only_media(s->path)) {
        *err = first;
        return rc;
    }
    if ((rc = open_db(s, 0, 1, err)) || (rc = check_schema(s, err)))
        return rc;
    if (!said++)
        diag_msg(DIAG_NOTE, "%s: on read-only media: read as it is "
                 "(immutable), nothing can be recorded into it", s->path);
    return 0;
}

int store_open(const char *path, int writable, store **out, op_error *err)
{
    store *s = calloc(1, sizeof *s);
    struct stat sb;
    int rc;

    *out = NULL;
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", path);
    }
    s->writable = writable;
    s->wait_ms = store_wait_default();
    if (store_uri_is_pg(path)) {
        if ((rc = store_pg_open(path, writable, &s->pg, err)))
            goto fail;
        *out = s;
        return 0;
    }
    if (stat(path, &sb) != 0) {
        rc = writable ? create_private(path, err)
                      : op_error_set(err, OP_ENOTFOUND, "%s: no run store "
                                     "there (analyze --history creates it)",
                                     path);
        if (rc)
            goto fail;
    } else if (!S_ISREG(sb.st_mode)) {
        rc = op_error_set(err, OP_EUSAGE, "%s: not a regular file, so not a "
                          "run store", path);
        goto fail;
    } else if (writable && store_read_only_media(path)) {
        rc = op_error_set(err, OP_EIO, "%s: read-only (the file or its "
                          "folder cannot be written: %s); nothing can be "
                          "recorded into it", path, strerror(errno));
        goto fail;
    }
    if (!writable)
        rc = open_reader(s, err);
    else if (!(rc = open_db(s, SQLITE_OPEN_READWRITE, 0, err)) &&
             !(rc = set_wal(s, err)))
        rc = check_schema(s, err);
    if (rc)
        goto fail;
    *out = s;
    return 0;
fail:
    store_close(s);
    return rc;
}

int store_is_immutable(const store *s)
{
    return s->immutable;
}

void store_close(store *s)
{
    if (!s)
        return;
#ifdef OP_HAVE_LIBPQ
    store_pg_close(s->pg);
#endif
    sqlite3_close(s->db);
    free(s->path);
    free(s);
}

const char *store_path(const store *s)
{
    return s->path;
}

/* ---- recording ------------------------------------------------------------ */

typedef struct rec {
    store *s;
    store_text t[3]; /* one per JSON column of a row: bound without a copy */
    sqlite3_stmt *find, *del_nodes, *del_findings, *ins_run, *upd_run,
        *ins_node, *ins_finding, *set_hash, *decide[2], *upsert;
    uint64_t hash; /* content hash of the run being written */
    size_t rows;
    int64_t now;
    op_error *err;
} rec;

/* Binds a text (hashed into the run's content hash); NULL binds NULL.
 * Not copied: v (model memory or a text of its own column) stays as it is
 * until the statement has been stepped. */
static int bind_text(rec *r, sqlite3_stmt *st, int i, const char *v)
{
    store_hash_text(&r->hash, v);
    return v ? sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC)
             : sqlite3_bind_null(st, i);
}

static int bind_int(rec *r, sqlite3_stmt *st, int i, unsigned set,
                    unsigned bit, int64_t v)
{
    store_hash_int(&r->hash, set, bit, v);
    return set & bit ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);
}

/* Steps a write statement; 0 or an error naming what. */
static int step(rec *r, sqlite3_stmt *st, const char *what)
{
    int rc = sqlite3_step(st);

    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return db_fail(r->s, OP_EIO, what, r->err);
    r->rows++;
    if (store_row_hook)
        store_row_hook(r->rows);
    return 0;
}

static int prepare(rec *r, sqlite3_stmt **st, const char *sql)
{
    if (sqlite3_prepare_v2(r->s->db, sql, -1, st, NULL) != SQLITE_OK)
        return db_fail(r->s, OP_EIO, "cannot prepare a statement", r->err);
    return 0;
}

/* A decision of a decisions file into the decisions table: ?1
 * fingerprint, ?2 rule, ?3 run, ?4 node, ?5 status, ?6 comment, ?7 when.
 * Job and legacy fingerprint from the newest stored finding that has it;
 * who decided is kept while the decision stays the same. */
#define UPSERT_DECISION                                                      \
    "INSERT INTO decisions(fingerprint, legacy_fp, rule, job, run_id, node," \
    " status, comment, decided_at, decided_by) VALUES(?1,"                   \
    " (SELECT legacy_fp FROM findings WHERE fingerprint = ?1"                \
    " ORDER BY run_pk DESC LIMIT 1), ?2, (SELECT r.job FROM findings f"      \
    " JOIN runs r ON r.pk = f.run_pk WHERE f.fingerprint = ?1"               \
    " ORDER BY r.pk DESC LIMIT 1), ?3, ?4, ?5, ?6, ?7, NULL)"                \
    " ON CONFLICT(fingerprint) DO UPDATE SET"                                \
    " decided_by = CASE WHEN status IS excluded.status AND"                  \
    " comment IS excluded.comment THEN decided_by END,"                      \
    " decided_at = CASE WHEN status IS excluded.status AND"                  \
    " comment IS excluded.comment THEN decided_at ELSE excluded.decided_at"  \
    " END, legacy_fp = coalesce(excluded.legacy_fp, legacy_fp),"             \
    " job = coalesce(excluded.job, job), rule = excluded.rule,"              \
    " run_id = excluded.run_id, node = excluded.node,"                       \
    " status = excluded.status, comment = excluded.comment"                  \
    " WHERE excluded.decided_at >= decisions.decided_at"

/* A decision of a file (?1, decided at ?4) reaches the stored findings
 * unless the store holds a newer one for it (the newest decision wins). */
#define NOT_NEWER                                                            \
    " AND NOT EXISTS (SELECT 1 FROM decisions WHERE fingerprint = ?1"        \
    " AND decided_at > ?4)"

static int prepare_all(rec *r)
{
    static const char run_cols[] =
        "job = ?2, name = ?3, status = ?4, started_at = ?5, ended_at = ?6,"
        " duration_ms = ?7, engine_version = ?8, config = ?9, metrics = ?10,"
        " origin = ?11, recorded_at = ?12, attrs = ?13";
    char upd[512];

    snprintf(upd, sizeof upd, "UPDATE runs SET %s WHERE pk = ?1", run_cols);
    return prepare(r, &r->find, "SELECT pk FROM runs WHERE source = ?1 AND "
                   "run_id = ?2") ||
           prepare(r, &r->del_nodes, "DELETE FROM nodes WHERE run_pk = ?1") ||
           prepare(r, &r->del_findings, "DELETE FROM findings WHERE run_pk = ?1") ||
           prepare(r, &r->ins_run, "INSERT INTO runs(source, run_id, job) VALUES(?1, ?2, '')") ||
           prepare(r, &r->upd_run, upd) ||
           prepare(r, &r->ins_node, "INSERT INTO nodes(run_pk, seq, id, kind, name,"
                   " status, started_at, ended_at, duration_ms, parallelism,"
                   " metrics, dist, attrs) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7,"
                   " ?8, ?9, ?10, ?11, ?12, ?13)") ||
           prepare(r, &r->ins_finding, "INSERT INTO findings(run_pk, seq, rule,"
                   " fingerprint, node, severity, message, changes, impact_ms,"
                   " decision, comment, legacy_fp, evidence) VALUES(?1, ?2, ?3,"
                   " ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)") ||
           prepare(r, &r->decide[0], "UPDATE findings SET decision = ?2,"
                   " comment = ?3 WHERE legacy_fp = ?1" NOT_NEWER) ||
           prepare(r, &r->decide[1], "UPDATE findings SET decision = ?2,"
                   " comment = ?3 WHERE fingerprint = ?1" NOT_NEWER) ||
           prepare(r, &r->upsert, UPSERT_DECISION) ||
           prepare(r, &r->set_hash, "UPDATE runs SET content_hash = ?2 WHERE pk = ?1")
               ? r->err->code : 0;
}

static void finalize_all(rec *r)
{
    sqlite3_finalize(r->find);
    sqlite3_finalize(r->del_nodes);
    sqlite3_finalize(r->del_findings);
    sqlite3_finalize(r->ins_run);
    sqlite3_finalize(r->upd_run);
    sqlite3_finalize(r->ins_node);
    sqlite3_finalize(r->ins_finding);
    sqlite3_finalize(r->set_hash);
    sqlite3_finalize(r->decide[0]);
    sqlite3_finalize(r->decide[1]);
    sqlite3_finalize(r->upsert);
}

/* The row of run r: found (its nodes and findings cleared) or inserted. */
static int run_row(rec *c, const struct op_run *r, int64_t *pk)
{
    int rc;

    sqlite3_bind_text(c->find, 1, r->source, -1, SQLITE_STATIC);
    sqlite3_bind_text(c->find, 2, r->id, -1, SQLITE_STATIC);
    rc = sqlite3_step(c->find);
    *pk = rc == SQLITE_ROW ? sqlite3_column_int64(c->find, 0) : 0;
    sqlite3_reset(c->find);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return db_fail(c->s, OP_EIO, "cannot read the runs", c->err);
    if (*pk) {
        sqlite3_bind_int64(c->del_nodes, 1, *pk);
        sqlite3_bind_int64(c->del_findings, 1, *pk);
        return step(c, c->del_nodes, "cannot replace the run") ||
               step(c, c->del_findings, "cannot replace the run")
                   ? c->err->code : 0;
    }
    sqlite3_bind_text(c->ins_run, 1, r->source, -1, SQLITE_STATIC);
    sqlite3_bind_text(c->ins_run, 2, r->id, -1, SQLITE_STATIC);
    if ((rc = step(c, c->ins_run, "cannot add the run")))
        return rc;
    *pk = sqlite3_last_insert_rowid(c->s->db);
    return 0;
}

static int run_fields(rec *c, const struct op_run *r, int64_t pk)
{
    sqlite3_stmt *st = c->upd_run;
    const char *t;
    int bad = 0;

    sqlite3_bind_int64(st, 1, pk);
    c->hash = STORE_HASH_SEED;
    store_hash_text(&c->hash, r->source);
    store_hash_text(&c->hash, r->id);
    bad |= bind_text(c, st, 2, model_run_job(r));
    bad |= bind_text(c, st, 3, r->name);
    bad |= bind_text(c, st, 4, r->status ? r->status : "unknown");
    bad |= bind_int(c, st, 5, r->set, MSET_STARTED_AT, r->started_at);
    bad |= bind_int(c, st, 6, r->set, MSET_ENDED_AT, r->ended_at);
    bad |= bind_int(c, st, 7, r->set, MSET_DURATION_MS, r->duration_ms);
    bad |= bind_text(c, st, 8, r->engine_version);
    bad |= !(t = store_map_text(&c->t[0], &r->config)) || bind_text(c, st, 9, t);
    bad |= !(t = store_map_text(&c->t[1], &r->metrics)) || bind_text(c, st, 10, t);
    /* origins are where the input was, not what it holds: not hashed */
    bad |= sqlite3_bind_text(st, 11, r->norigins ? r->origins[0] : NULL, -1,
                             SQLITE_STATIC);
    bad |= sqlite3_bind_int64(st, 12, c->now);
    /* the run attrs (a failed Flink job's last exception: the server's run
     * page): not hashed, so that a run recorded before they were kept
     * keeps its content hash */
    bad |= !(t = store_map_text(&c->t[2], &r->attrs)) ||
           sqlite3_bind_text(st, 13, t, -1, SQLITE_STATIC);
    if (bad)
        return op_error_set(c->err, OP_ENOMEM, "%s: out of memory",
                            c->s->path);
    return step(c, st, "cannot write the run");
}

static int node_row(rec *c, const struct op_node *n, int64_t pk, size_t seq)
{
    sqlite3_stmt *st = c->ins_node;
    const char *t;
    int bad = 0;

    bad |= sqlite3_bind_int64(st, 1, pk);
    bad |= sqlite3_bind_int64(st, 2, (int64_t)seq);
    bad |= bind_text(c, st, 3, n->id);
    bad |= bind_text(c, st, 4, n->kind);
    bad |= bind_text(c, st, 5, n->name);
    bad |= bind_text(c, st, 6, n->status);
    bad |= bind_int(c, st, 7, n->set, MSET_STARTED_AT, n->started_at);
    bad |= bind_int(c, st, 8, n->set, MSET_ENDED_AT, n->ended_at);
    bad |= bind_int(c, st, 9, n->set, MSET_DURATION_MS, n->duration_ms);
    bad |= bind_int(c, st, 10, n->set, MSET_PARALLELISM, n->parallelism);
    bad |= !(t = store_map_text(&c->t[0], &n->metrics)) || bind_text(c, st, 11, t);
    bad |= !(t = store_dist_text(&c->t[1], n)) || bind_text(c, st, 12, t);
    bad |= !(t = store_map_text(&c->t[2], &n->attrs)) || bind_text(c, st, 13, t);
    if (bad)
        return op_error_set(c->err, OP_ENOMEM, "%s: out of memory",
                            c->s->path);
    return step(c, st, "cannot write a node");
}

static int finding_row(rec *c, const finding *f, const baseline *bl,
                       int64_t pk, size_t seq)
{
    sqlite3_stmt *st = c->ins_finding;
    const decision *d = bl ? baseline_decision_of(bl, f) : NULL;
    const char *t = store_cjson_text(&c->t[0], f->changes, "[]");
    int bad = !t;

    bad |= sqlite3_bind_int64(st, 1, pk);
    bad |= sqlite3_bind_int64(st, 2, (int64_t)seq);
    bad |= sqlite3_bind_text(st, 3, f->rule, -1, SQLITE_STATIC);
    bad |= sqlite3_bind_text(st, 4, f->fingerprint, -1, SQLITE_STATIC);
    bad |= sqlite3_bind_text(st, 5, f->node_id, -1, SQLITE_STATIC);
    bad |= sqlite3_bind_text(st, 6, severity_name(f->sev), -1, SQLITE_STATIC);
    bad |= sqlite3_bind_text(st, 7, f->message, -1, SQLITE_STATIC);
    bad |= t && sqlite3_bind_text(st, 8, t, -1, SQLITE_STATIC);
    t = bad ? NULL : store_cjson_text(&c->t[1], f->evidence, NULL);
    bad |= f->evidence && !t;
    bad |= sqlite3_bind_text(st, 13, t, -1, SQLITE_STATIC);
    bad |= f->impact_ms >= 0 ? sqlite3_bind_double(st, 9, f->impact_ms)
                             : sqlite3_bind_null(st, 9);
    bad |= sqlite3_bind_text(st, 10, d ? decision_status_name(d->status) : NULL,
                             -1, SQLITE_STATIC);
    bad |= sqlite3_bind_text(st, 11, d ? d->reason : NULL, -1, SQLITE_STATIC);
    bad |= sqlite3_bind_text(st, 12, f->legacy_fp[0] &&
                                         strcmp(f->legacy_fp, f->fingerprint)
                                         ? f->legacy_fp : NULL,
                             -1, SQLITE_STATIC);
    if (bad)
        return op_error_set(c->err, OP_ENOMEM, "%s: out of memory",
                            c->s->path);
    return step(c, st, "cannot write a finding");
}

static int record_run(rec *c, const model *m, const results *res,
                      const baseline *bl, size_t ri)
{
    const struct op_run *r = m->runs[ri];
    int64_t pk;
    size_t i, seq = 0;
    char hex[17];
    int rc;

    if ((rc = run_row(c, r, &pk)) || (rc = run_fields(c, r, pk)))
        return rc;
    for (i = 0; i < r->nnodes; i++)
        if ((rc = node_row(c, r->nodes[i], pk, i)))
            return rc;
    for (i = 0; res && i < res->n; i++)
        if (res->f[i].run_index == ri &&
            (rc = finding_row(c, &res->f[i], bl, pk, seq++)))
            return rc;
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)c->hash);
    sqlite3_bind_int64(c->set_hash, 1, pk);
    sqlite3_bind_text(c->set_hash, 2, hex, -1, SQLITE_TRANSIENT);
    return step(c, c->set_hash, "cannot write the run");
}

/* Steps a statement whose row count does not matter; 0 or an error. */
static int step_quiet(rec *c, sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);

    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0
                             : db_fail(c->s, OP_EIO, "cannot write a decision",
                                       c->err);
}

static int upsert_decision(rec *c, const decision *d)
{
    sqlite3_stmt *st = c->upsert;

    if (sqlite3_bind_text(st, 1, d->fingerprint, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 2, d->rule ? d->rule : "", -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 3, d->run, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 4, d->node, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 5, decision_status_name(d->status), -1,
                          SQLITE_STATIC) ||
        sqlite3_bind_text(st, 6, d->reason, -1, SQLITE_STATIC) ||
        sqlite3_bind_text(st, 7, d->decided_at ? d->decided_at : "", -1,
                          SQLITE_STATIC))
        return op_error_set(c->err, OP_ENOMEM, "%s: out of memory",
                            c->s->path);
    return step_quiet(c, st);
}

static int log_file_decision(store *s, const decision *d, op_error *err);

/* Writes bl's decisions onto the stored findings they name (legacy
 * fingerprints first, so that a decision under the new fingerprint wins)
 * and into the decisions table. Not counted as rows (store_row_hook): it
 * writes no new data. */
static int apply_decisions(rec *c, const baseline *bl)
{
    size_t pass, i;
    int rc;

    for (pass = 0; bl && pass < 2; pass++)
        for (i = 0; i < bl->n; i++) {
            sqlite3_stmt *st = c->decide[pass];
            const decision *d = &bl->d[i];
            if (sqlite3_bind_text(st, 1, d->fingerprint, -1, SQLITE_STATIC) ||
                sqlite3_bind_text(st, 2, decision_status_name(d->status), -1,
                                  SQLITE_STATIC) ||
                sqlite3_bind_text(st, 3, d->reason, -1, SQLITE_STATIC) ||
                sqlite3_bind_text(st, 4, d->decided_at ? d->decided_at : "",
                                  -1, SQLITE_STATIC))
                return op_error_set(c->err, OP_ENOMEM, "%s: out of memory",
                                    c->s->path);
            if ((pass == 1 && (rc = log_file_decision(c->s, d, c->err))) ||
                (rc = step_quiet(c, st)) ||
                (pass == 1 && (rc = upsert_decision(c, d))))
                return rc;
        }
    return 0;
}

/* One attempt at the recording's transaction; *busy says whether it
 * failed because another connection held a lock (worth another try). */
static int record_tx(rec *c, const model *m, const results *res,
                     const baseline *bl, int own, baseline *fresh, int *busy)
{
    store *s = c->s;
    size_t i;
    int rc;

    *busy = 0;
    if ((rc = begin_write(s, c->err))) {
        *busy = was_busy(s);
        return rc;
    }
    if (own) {
        baseline_free(fresh);
        if (!(rc = store_load_decisions(s, fresh, c->err)))
            bl = fresh;
    }
    for (i = 0; !rc && i < m->nruns; i++)
        rc = record_run(c, m, res, bl, i);
    if (!rc && !own)
        rc = apply_decisions(c, bl);
    if (!rc)
        rc = exec(s, "COMMIT", "cannot commit", c->err);
    if (rc) {
        *busy = was_busy(s);
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

/* own: the decisions are the store's, read inside the transaction (so
 * none made meanwhile is lost or undone) and not written back. A
 * transaction that fails on another writer's lock is tried again, backing
 * off, until s->wait_ms have passed since the first try. */
static int record(store *s, const model *m, const results *res,
                  const baseline *bl, int own, size_t *nruns, op_error *err)
{
    baseline fresh;
    rec c;
    size_t i;
    int rc, busy = 0;
    int64_t deadline = store_mono_ms() + s->wait_ms;

    PG_DISPATCH(store_pg_record(s->pg, m, res, bl, own, nruns, err));
    memset(&c, 0, sizeof c);
    baseline_init(&fresh);
    c.s = s;
    c.err = err;
    c.now = store_now_ms();
    if (nruns)
        *nruns = 0;
    for (i = 0; i < sizeof c.t / sizeof c.t[0]; i++) {
        if (store_text_open(&c.t[i])) {
            rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", s->path);
            goto out;
        }
    }
    if ((rc = prepare_all(&c)))
        goto out;
    for (unsigned n = 0;; n++) {
        rc = record_tx(&c, m, res, bl, own, &fresh, &busy);
        if (!rc || !busy || store_mono_ms() >= deadline)
            break;
        store_pause_ms(n < 8 ? (int64_t)1 << n : STORE_BACKOFF_MS, deadline);
    }
    if (!rc && nruns)
        *nruns = m->nruns;
out:
    finalize_all(&c);
    for (i = 0; i < sizeof c.t / sizeof c.t[0]; i++)
        store_text_close(&c.t[i]);
    baseline_free(&fresh);
    return rc;
}

int store_record(store *s, const model *m, const results *res,
                 const baseline *bl, size_t *nruns, op_error *err)
{
    return record(s, m, res, bl, 0, nruns, err);
}

int store_record_own(store *s, const model *m, const results *res,
                     size_t *nruns, op_error *err)
{
    return record(s, m, res, NULL, 1, nruns, err);
}

/* ---- reading ---------------------------------------------------------------- */

static const char *col_text(sqlite3_stmt *st, int i)
{
    const char *v = (const char *)sqlite3_column_text(st, i);

    return v && (size_t)sqlite3_column_bytes(st, i) <= STORE_TEXT_MAX ? v
                                                                        : NULL;
}

static int col_int(sqlite3_stmt *st, int i, unsigned *set, unsigned bit,
                   int64_t *out)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) {
        *out = 0;
        return 0;
    }
    *out = sqlite3_column_int64(st, i);
    *set |= bit;
    return 1;
}

#define RUN_SELECT                                                           \
    "SELECT pk, job, source, run_id, name, status, engine_version, origin,"  \
    " content_hash, config, metrics, attrs, started_at, ended_at,"           \
    " duration_ms, recorded_at,"                                             \
    " (SELECT count(*) FROM nodes WHERE run_pk = pk),"                       \
    " (SELECT count(*) FROM findings WHERE run_pk = pk) FROM runs "

static void run_of_row(sqlite3_stmt *st, store_run *r)
{
    memset(r, 0, sizeof *r);
    r->pk = sqlite3_column_int64(st, 0);
    r->job = col_text(st, 1);
    r->source = col_text(st, 2);
    r->run_id = col_text(st, 3);
    r->name = col_text(st, 4);
    r->status = col_text(st, 5);
    r->engine_version = col_text(st, 6);
    r->origin = col_text(st, 7);
    r->content_hash = col_text(st, 8);
    r->config_json = col_text(st, 9);
    r->metrics_json = col_text(st, 10);
    r->attrs_json = col_text(st, 11);
    col_int(st, 12, &r->set, MSET_STARTED_AT, &r->started_at);
    col_int(st, 13, &r->set, MSET_ENDED_AT, &r->ended_at);
    col_int(st, 14, &r->set, MSET_DURATION_MS, &r->duration_ms);
    r->recorded_at = sqlite3_column_int64(st, 15);
    r->nnodes = sqlite3_column_int64(st, 16);
    r->nfindings = sqlite3_column_int64(st, 17);
}

/* Steps st to the end, handing each row to row(); finalizes st. */
static int each_row(store *s, sqlite3_stmt *st,
                    int (*row)(sqlite3_stmt *, void *), void *ud,
                    op_error *err)
{
    int rc, stop = 0;

    while (!stop && (rc = sqlite3_step(st)) == SQLITE_ROW)
        stop = row(st, ud);
    if (!stop && rc != SQLITE_DONE)
        stop = db_fail(s, OP_EIO, "cannot read the run store", err);
    sqlite3_finalize(st);
    return stop;
}

typedef struct run_cb {
    store_run_fn fn;
    void *ud;
    int skip; /* rows to pass over first */
} run_cb;

static int run_row_cb(sqlite3_stmt *st, void *ud)
{
    run_cb *c = ud;
    store_run r;

    if (c->skip > 0) {
        c->skip--;
        return 0;
    }
    run_of_row(st, &r);
    if (!r.job || !r.source || !r.run_id)
        return 0; /* a row no optipipe wrote: nothing to show */
    return c->fn(c->ud, &r);
}

int store_each_run(store *s, const char *job, const char *source,
                   const char *run_id, int64_t before, int limit,
                   store_run_fn fn, void *ud, op_error *err)
{
    sqlite3_stmt *st = NULL;
    run_cb c = {fn, ud, 0};

    PG_DISPATCH(store_pg_each_run(s->pg, job, source, run_id, before, limit,
                                  fn, ud, err));
    if (sqlite3_prepare_v2(s->db, RUN_SELECT
                           "WHERE job = ?1 AND NOT (source IS ?2 AND run_id IS ?3)"
                           " AND (?4 <= 0 OR started_at IS NULL OR started_at < ?4)"
                           " ORDER BY started_at IS NULL, started_at DESC, pk DESC"
                           " LIMIT ?5", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the run store", err);
    sqlite3_bind_text(st, 1, job, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, source, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, run_id, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, before);
    sqlite3_bind_int(st, 5, limit);
    return each_row(s, st, run_row_cb, &c, err);
}

int store_find_run(store *s, const char *ref, store_run_fn fn, void *ud,
                   op_error *err)
{
    const char *at = strrchr(ref, '@');
    sqlite3_stmt *st = NULL;
    run_cb c = {fn, ud, 0};
    int rc;

    PG_DISPATCH(store_pg_find_run(s->pg, ref, fn, ud, err));
    if (at && (strcmp(at, "@latest") == 0 || strcmp(at, "@previous") == 0)) {
        c.skip = strcmp(at, "@previous") == 0;
        rc = sqlite3_prepare_v2(s->db, RUN_SELECT "WHERE job = ?1 ORDER BY "
                                "started_at IS NULL, started_at DESC, pk DESC"
                                " LIMIT 2", -1, &st, NULL);
        if (rc == SQLITE_OK)
            sqlite3_bind_text(st, 1, ref, (int)(at - ref), SQLITE_STATIC);
    } else {
        rc = sqlite3_prepare_v2(s->db, RUN_SELECT "WHERE run_id = ?1 ORDER BY"
                                " pk DESC LIMIT 1", -1, &st, NULL);
        if (rc == SQLITE_OK)
            sqlite3_bind_text(st, 1, ref, -1, SQLITE_STATIC);
    }
    if (rc != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the run store", err);
    return each_row(s, st, run_row_cb, &c, err);
}

typedef struct node_cb {
    store_node_fn fn;
    void *ud;
} node_cb;

static int node_row_cb(sqlite3_stmt *st, void *ud)
{
    node_cb *c = ud;
    store_node n;

    memset(&n, 0, sizeof n);
    n.id = col_text(st, 0);
    if (!n.id)
        return 0;
    n.kind = col_text(st, 1);
    n.name = col_text(st, 2);
    n.status = col_text(st, 3);
    col_int(st, 4, &n.set, MSET_STARTED_AT, &n.started_at);
    col_int(st, 5, &n.set, MSET_ENDED_AT, &n.ended_at);
    col_int(st, 6, &n.set, MSET_DURATION_MS, &n.duration_ms);
    col_int(st, 7, &n.set, MSET_PARALLELISM, &n.parallelism);
    n.metrics_json = col_text(st, 8);
    n.dist_json = col_text(st, 9);
    n.attrs_json = col_text(st, 10);
    return c->fn(c->ud, &n);
}

int store_each_node(store *s, int64_t run_pk, store_node_fn fn, void *ud,
                    op_error *err)
{
    sqlite3_stmt *st = NULL;
    node_cb c = {fn, ud};

    PG_DISPATCH(store_pg_each_node(s->pg, run_pk, fn, ud, err));
    if (sqlite3_prepare_v2(s->db, "SELECT id, kind, name, status, started_at,"
                           " ended_at, duration_ms, parallelism, metrics, dist,"
                           " attrs FROM nodes WHERE run_pk = ?1 ORDER BY seq",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the run store", err);
    sqlite3_bind_int64(st, 1, run_pk);
    return each_row(s, st, node_row_cb, &c, err);
}

typedef struct finding_cb {
    store_finding_fn fn;
    void *ud;
} finding_cb;

static int finding_row_cb(sqlite3_stmt *st, void *ud)
{
    finding_cb *c = ud;
    store_finding f;

    memset(&f, 0, sizeof f);
    f.rule = col_text(st, 0);
    f.fingerprint = col_text(st, 1);
    if (!f.rule || !f.fingerprint)
        return 0;
    f.node = col_text(st, 2);
    f.severity = col_text(st, 3);
    f.message = col_text(st, 4);
    f.changes_json = col_text(st, 5);
    f.impact_ms = sqlite3_column_type(st, 6) == SQLITE_NULL
                      ? -1 : sqlite3_column_double(st, 6);
    f.decision = col_text(st, 7);
    f.comment = col_text(st, 8);
    f.legacy_fp = col_text(st, 9);
    f.evidence_json = col_text(st, 10);
    return c->fn(c->ud, &f);
}

int store_each_finding(store *s, int64_t run_pk, store_finding_fn fn,
                       void *ud, op_error *err)
{
    sqlite3_stmt *st = NULL;
    finding_cb c = {fn, ud};

    PG_DISPATCH(store_pg_each_finding(s->pg, run_pk, fn, ud, err));
    if (sqlite3_prepare_v2(s->db, "SELECT rule, fingerprint, node, severity,"
                           " message, changes, impact_ms, decision, comment,"
                           " legacy_fp, evidence FROM findings WHERE run_pk = ?1 ORDER BY seq",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the run store", err);
    sqlite3_bind_int64(st, 1, run_pk);
    return each_row(s, st, finding_row_cb, &c, err);
}

static int metric_ok(const char *m)
{
    size_t n = strlen(m);

    return n > 0 && n <= STORE_METRIC_MAX &&
           strspn(m, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                     "0123456789_.:-") == n;
}

static int is_node_column(const char *m)
{
    static const char *const cols[] = {"duration_ms", "parallelism",
                                       "started_at", "ended_at"};
    size_t i;

    for (i = 0; i < sizeof cols / sizeof cols[0]; i++)
        if (strcmp(m, cols[i]) == 0)
            return 1;
    return 0;
}

typedef struct value_cb {
    store_value_fn fn;
    void *ud;
} value_cb;

static int value_row_cb(sqlite3_stmt *st, void *ud)
{
    value_cb *c = ud;
    const char *id = col_text(st, 0);
    int t = sqlite3_column_type(st, 1);

    if (!id || (t != SQLITE_INTEGER && t != SQLITE_FLOAT))
        return 0; /* no value, or a text one: not a number */
    return c->fn(c->ud, id, sqlite3_column_double(st, 1));
}

int store_each_node_value(store *s, int64_t run_pk,
                          const char *const *metrics, size_t nmetrics,
                          const char *status, store_value_fn fn, void *ud,
                          op_error *err)
{
    /* COALESCE of node columns (named literally, from the list above) and
     * json_extract(metrics, ?k) with the path bound: no name given by a
     * rule is ever spliced into the SQL text */
    char sql[512], path[STORE_SERIES_METRICS][STORE_METRIC_MAX + 8];
    sqlite3_stmt *st = NULL;
    value_cb c = {fn, ud};
    size_t i, len;

    if (nmetrics < 1 || nmetrics > STORE_SERIES_METRICS)
        return op_error_set(err, OP_EUSAGE, "from 1 to %d metrics",
                            STORE_SERIES_METRICS);
    for (i = 0; i < nmetrics; i++)
        if (!metric_ok(metrics[i]))
            return op_error_set(err, OP_EUSAGE, "metric '%.*s': a name of "
                                "letters, digits and _.:- (at most %d)",
                                STORE_METRIC_MAX, metrics[i],
                                STORE_METRIC_MAX);
    PG_DISPATCH(store_pg_each_node_value(s->pg, run_pk, metrics, nmetrics,
                                         status, fn, ud, err));
    len = (size_t)snprintf(sql, sizeof sql, "SELECT id, COALESCE(NULL");
    for (i = 0; i < nmetrics; i++) {
        snprintf(path[i], sizeof path[i], "$.\"%s\"", metrics[i]);
        if (is_node_column(metrics[i]))
            len += (size_t)snprintf(sql + len, sizeof sql - len, ", %s",
                                    metrics[i]);
        else
            len += (size_t)snprintf(sql + len, sizeof sql - len,
                                    ", json_extract(metrics, ?%d)",
                                    (int)i + 3);
    }
    snprintf(sql + len, sizeof sql - len, ") FROM nodes WHERE run_pk = ?1"
             " AND (?2 IS NULL OR status = ?2) ORDER BY seq");
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the run store", err);
    sqlite3_bind_int64(st, 1, run_pk);
    sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC);
    for (i = 0; i < nmetrics; i++)
        if (!is_node_column(metrics[i]))
            sqlite3_bind_text(st, (int)i + 3, path[i], -1, SQLITE_STATIC);
    return each_row(s, st, value_row_cb, &c, err);
}

typedef struct job_cb {
    store_job_fn fn;
    void *ud;
} job_cb;

static int job_row_cb(sqlite3_stmt *st, void *ud)
{
    job_cb *c = ud;
    store_job j;
    unsigned set = 0;

    j.job = col_text(st, 0);
    j.source = col_text(st, 1);
    if (!j.job || !j.source)
        return 0;
    j.nruns = sqlite3_column_int64(st, 2);
    col_int(st, 3, &set, 1, &j.last_started);
    return c->fn(c->ud, &j);
}

int store_each_job(store *s, store_job_fn fn, void *ud, op_error *err)
{
    sqlite3_stmt *st = NULL;
    job_cb c = {fn, ud};

    PG_DISPATCH(store_pg_each_job(s->pg, fn, ud, err));
    if (sqlite3_prepare_v2(s->db, "SELECT job, source, count(*),"
                           " max(started_at) FROM runs GROUP BY job, source"
                           " ORDER BY job, source", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the run store", err);
    return each_row(s, st, job_row_cb, &c, err);
}

static int find_job_cb(sqlite3_stmt *st, void *ud)
{
    store_job_find_row(ud, col_text(st, 0), col_text(st, 1), col_text(st, 2));
    return 0;
}

int store_find_job(store *s, const char *given, char *key, size_t keycap,
                   char *near, size_t nearcap, op_error *err)
{
    sqlite3_stmt *st = NULL;
    store_job_find f;
    int rc;

    store_job_find_init(&f, given, key, keycap, near, nearcap);
#ifdef OP_HAVE_LIBPQ
    if (s->pg)
        return (rc = store_pg_find_job(s->pg, &f, err))
                   ? rc : store_job_find_end(&f, s->path, err);
#endif
    /* the newest run of each job gives its shown name (SQLite takes the
     * bare column name from the row holding max(started_at)) */
    if (sqlite3_prepare_v2(s->db, "SELECT job, source, name, max(started_at)"
                           " FROM runs GROUP BY job, source ORDER BY job",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the run store", err);
    if ((rc = each_row(s, st, find_job_cb, &f, err)))
        return rc;
    return store_job_find_end(&f, s->path, err);
}

/* ---- decisions ------------------------------------------------------------- */

static int fp_ok(const char *fp)
{
    return fp && strlen(fp) == 16 && strspn(fp, "0123456789abcdef") == 16;
}

static int decide_check(store *s, const char *fp, const char *status,
                        const char *comment, const char *who, op_error *err)
{
    if (!fp_ok(fp))
        return op_error_set(err, OP_EUSAGE, "fingerprint '%.40s': 16 lowercase "
                            "hex digits", fp ? fp : "");
    if (!status || (strcmp(status, "approved") && strcmp(status, "dismissed") &&
                    strcmp(status, "open")))
        return op_error_set(err, OP_EUSAGE, "status '%.40s': approved, "
                            "dismissed or open", status ? status : "");
    if (comment && strlen(comment) > STORE_COMMENT_MAX)
        return op_error_set(err, OP_EUSAGE, "comment: longer than %d bytes",
                            STORE_COMMENT_MAX);
    if (who && strlen(who) > STORE_WHO_MAX)
        return op_error_set(err, OP_EUSAGE, "decided_by: longer than %d bytes",
                            STORE_WHO_MAX);
    if (!s->writable)
        return op_error_set(err, OP_EUSAGE, "%s: opened read-only", s->path);
    return 0;
}

/* Runs sql with the texts v[0..n) bound as ?1.. (NULL binds NULL). */
static int run_bound(store *s, const char *sql, const char *const *v, int n,
                     op_error *err)
{
    sqlite3_stmt *st = NULL;
    int i, rc;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot write a decision", err);
    for (i = 0; i < n; i++)
        sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW
               ? 0 : db_fail(s, OP_EIO, "cannot write a decision", err);
}

/* Whether a stored finding has fp (or it as its legacy fingerprint). */
static int has_finding(store *s, const char *fp, op_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM findings WHERE fingerprint"
                           " = ?1 OR legacy_fp = ?1 LIMIT 1", -1, &st,
                           NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the findings", err);
    sqlite3_bind_text(st, 1, fp, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc != SQLITE_DONE)
        return db_fail(s, OP_EIO, "cannot read the findings", err);
    return op_error_set(err, OP_ENOTFOUND, "%s: no stored finding has the "
                        "fingerprint %s", s->path, fp);
}

static int log_decide(store *s, const char *fp, const char *status,
                      const char *comment, const char *at, const char *who,
                      op_error *err);

int store_decide(store *s, const char *fp, const char *status,
                 const char *comment, const char *who, op_error *err)
{
    /* the newest stored finding names the decision's rule, job, run, node */
    static const char put[] =
        "INSERT OR REPLACE INTO decisions(fingerprint, legacy_fp, rule, job,"
        " run_id, node, status, comment, decided_at, decided_by)"
        " SELECT ?1, f.legacy_fp, f.rule, r.job, r.run_id, f.node, ?2, ?3,"
        " ?4, ?5 FROM findings f JOIN runs r ON r.pk = f.run_pk"
        " WHERE f.fingerprint = ?1 OR f.legacy_fp = ?1"
        " ORDER BY f.fingerprint = ?1 DESC, r.pk DESC LIMIT 1";
    /* a decision under the legacy fingerprint is replaced by this one */
    static const char drop_legacy[] =
        "DELETE FROM decisions WHERE fingerprint IN (SELECT legacy_fp FROM"
        " findings WHERE fingerprint = ?1 AND legacy_fp IS NOT NULL)";
    static const char drop[] = "DELETE FROM decisions WHERE fingerprint = ?1";
    static const char mark[] = "UPDATE findings SET decision = ?2, comment = ?3"
                               " WHERE fingerprint = ?1 OR legacy_fp = ?1";
    int open_ = status && strcmp(status, "open") == 0;
    const char *c = comment && *comment && !open_ ? comment : NULL;
    char now[32];
    const char *v[5];
    int rc;

    if ((rc = decide_check(s, fp, status, comment, who, err)))
        return rc;
    PG_DISPATCH(store_pg_decide(s->pg, fp, status, comment, who, err));
    if ((rc = begin_write(s, err)))
        return rc;
    baseline_now(now, sizeof now);
    v[0] = fp, v[1] = open_ ? NULL : status, v[2] = c, v[3] = now;
    v[4] = who && *who ? who : NULL;
    if (!(rc = has_finding(s, fp, err)) &&
        !(rc = log_decide(s, fp, status, c, now, v[4], err)) &&
        !(rc = run_bound(s, drop_legacy, v, 1, err)) &&
        !(rc = run_bound(s, open_ ? drop : put, v, open_ ? 1 : 5, err)) &&
        !(rc = run_bound(s, mark, v, 3, err)))
        rc = exec(s, "COMMIT", "cannot commit", err);
    if (rc)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

typedef struct decision_cb {
    store_decision_fn fn;
    void *ud;
} decision_cb;

static int decision_row_cb(sqlite3_stmt *st, void *ud)
{
    decision_cb *c = ud;
    store_decision d;

    d.fingerprint = col_text(st, 0);
    d.legacy_fp = col_text(st, 1);
    d.rule = col_text(st, 2);
    d.job = col_text(st, 3);
    d.run_id = col_text(st, 4);
    d.node = col_text(st, 5);
    d.status = col_text(st, 6);
    d.comment = col_text(st, 7);
    d.decided_at = col_text(st, 8);
    d.decided_by = col_text(st, 9);
    if (!d.fingerprint || !d.rule || !d.status || !d.decided_at)
        return 0; /* a row no optipipe wrote */
    return c->fn(c->ud, &d);
}

int store_each_decision(store *s, const char *fp, store_decision_fn fn,
                        void *ud, op_error *err)
{
    sqlite3_stmt *st = NULL;
    decision_cb c = {fn, ud};

    PG_DISPATCH(store_pg_each_decision(s->pg, fp, fn, ud, err));
    if (sqlite3_prepare_v2(s->db, "SELECT fingerprint, legacy_fp, rule, job,"
                           " run_id, node, status, comment, decided_at,"
                           " decided_by FROM decisions WHERE ?1 IS NULL OR"
                           " fingerprint = ?1 OR legacy_fp = ?1"
                           " ORDER BY fingerprint = ?1 DESC, fingerprint",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the decisions", err);
    sqlite3_bind_text(st, 1, fp, -1, SQLITE_STATIC);
    return each_row(s, st, decision_row_cb, &c, err);
}

int store_load_one(void *ud, const store_decision *d)
{
    store_load *c = ud;
    int st = decision_status_parse(d->status);
    int rc = st < 0 ? OP_EUSAGE
                    : baseline_put(c->b, d->fingerprint, d->rule, d->run_id,
                                   d->node, (decision_status)st, d->comment,
                                   d->decided_at);

    if (rc == OP_ENOMEM)
        return op_error_set(c->err, rc, "%s: out of memory", c->path);
    if (rc)
        return op_error_set(c->err, OP_EPARSE, "%s: decision '%.16s' (status "
                            "'%.20s'): not one optipipe wrote", c->path,
                            d->fingerprint, d->status);
    return 0;
}

int store_load_decisions(store *s, baseline *b, op_error *err)
{
    store_load c = {s->path, b, err};
    int rc;

    baseline_init(b);
    rc = store_each_decision(s, NULL, store_load_one, &c, err);
    if (rc)
        baseline_free(b);
    return rc;
}

/* ---- the decisions' audit trail (schema 4) ----------------------------------- */

/* One row of decision_log for fp going to status/comment, with the
 * decision it replaces read from the decisions table; none when nothing
 * changes, or when not_older is set (a file's decided_at) and the stored
 * decision is newer than it (then store_record does not apply it). */
static int log_change(store *s, const char *const v[8], op_error *err)
{
    static const char sql[] =
        "INSERT INTO decision_log(fingerprint, changed_at, changed_by, kind,"
        " old_status, old_comment, new_status, new_comment, detail)"
        " SELECT ?1, ?2, ?3, ?4, coalesce(d.status, 'open'), d.comment, ?5,"
        " ?6, ?7 FROM (SELECT 1) LEFT JOIN decisions d ON d.fingerprint = ?1"
        " WHERE NOT (coalesce(d.status, 'open') IS ?5 AND d.comment IS ?6)"
        " AND (?8 IS NULL OR d.decided_at IS NULL OR ?8 >= d.decided_at)";

    return run_bound(s, sql, v, 8, err);
}

static int log_decide(store *s, const char *fp, const char *status,
                      const char *comment, const char *at, const char *who,
                      op_error *err)
{
    const char *v[8] = {fp, at, who, "decided", status, comment, NULL, NULL};

    return log_change(s, v, err);
}

static int log_file_decision(store *s, const decision *d, op_error *err)
{
    const char *at = d->decided_at ? d->decided_at : "";
    const char *v[8] = {d->fingerprint, at, NULL, "file",
                        decision_status_name(d->status), d->reason,
                        "a decisions file", at};

    return log_change(s, v, err);
}

int store_note_conflict(store *s, const decision *refused, const char *source,
                        op_error *err)
{
    /* once: not again while the newest row of fp is this same conflict */
    static const char sql[] =
        "INSERT INTO decision_log(fingerprint, changed_at, changed_by, kind,"
        " old_status, old_comment, new_status, new_comment, detail)"
        " SELECT ?1, ?2, NULL, 'conflict', d.status, d.comment, ?3, ?4, ?5"
        " FROM decisions d WHERE d.fingerprint = ?1 AND NOT EXISTS (SELECT 1"
        " FROM decision_log l WHERE l.seq = (SELECT max(seq) FROM"
        " decision_log WHERE fingerprint = ?1) AND l.kind = 'conflict' AND"
        " l.new_status IS ?3 AND l.new_comment IS ?4 AND l.detail IS ?5)";
    char now[32], detail[STORE_WHO_MAX + 64];
    const char *v[5];
    int rc;

    if (!s->writable)
        return op_error_set(err, OP_EUSAGE, "%s: opened read-only", s->path);
    baseline_now(now, sizeof now);
    snprintf(detail, sizeof detail, "%.*s, decided %s", STORE_WHO_MAX,
             source ? source : "a decisions file",
             refused->decided_at ? refused->decided_at : "at no time given");
    v[0] = refused->fingerprint, v[1] = now;
    v[2] = decision_status_name(refused->status), v[3] = refused->reason;
    v[4] = detail;
    PG_DISPATCH(store_pg_note_conflict(s->pg, v, err));
    if ((rc = begin_write(s, err)))
        return rc;
    if (!(rc = run_bound(s, sql, v, 5, err)))
        rc = exec(s, "COMMIT", "cannot commit", err);
    if (rc)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

typedef struct change_cb {
    store_change_fn fn;
    void *ud;
} change_cb;

static int change_row_cb(sqlite3_stmt *st, void *ud)
{
    change_cb *c = ud;
    store_decision_change d;

    d.seq = sqlite3_column_int64(st, 0);
    d.fingerprint = col_text(st, 1);
    d.changed_at = col_text(st, 2);
    d.changed_by = col_text(st, 3);
    d.kind = col_text(st, 4);
    d.old_status = col_text(st, 5);
    d.old_comment = col_text(st, 6);
    d.new_status = col_text(st, 7);
    d.new_comment = col_text(st, 8);
    d.detail = col_text(st, 9);
    if (!d.fingerprint || !d.changed_at || !d.kind || !d.old_status ||
        !d.new_status)
        return 0; /* a row no optipipe wrote */
    return c->fn(c->ud, &d);
}

#define CHANGE_SELECT                                                        \
    "SELECT seq, fingerprint, changed_at, changed_by, kind, old_status,"     \
    " old_comment, new_status, new_comment, detail FROM decision_log "

int store_each_decision_change(store *s, const char *fp, int limit,
                               store_change_fn fn, void *ud, op_error *err)
{
    sqlite3_stmt *st = NULL;
    change_cb c = {fn, ud};

    PG_DISPATCH(store_pg_each_decision_change(s->pg, fp, limit, fn, ud, err));
    if (sqlite3_prepare_v2(s->db, CHANGE_SELECT "WHERE ?1 IS NULL OR"
                           " fingerprint = ?1 ORDER BY seq DESC LIMIT ?2", -1,
                           &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the decisions' history", err);
    sqlite3_bind_text(st, 1, fp, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, limit > 0 ? limit : -1);
    return each_row(s, st, change_row_cb, &c, err);
}

int store_each_change_all(store *s, store_change_fn fn, void *ud,
                          op_error *err)
{
    sqlite3_stmt *st = NULL;
    change_cb c = {fn, ud};

    PG_DISPATCH(store_pg_each_change_all(s->pg, fn, ud, err));
    if (sqlite3_prepare_v2(s->db, CHANGE_SELECT "ORDER BY seq", -1, &st,
                           NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the decisions' history", err);
    return each_row(s, st, change_row_cb, &c, err);
}

/* ---- notifications (schema 5) ------------------------------------------------ */

/* Over-long texts are refused before any SQL: a row stays readable. */
static int notify_texts_ok(const store_notification *n, const char *path,
                           op_error *err)
{
    const char *t[6] = {n->endpoint, n->event, n->fingerprint, n->status,
                        n->error, n->digest};
    size_t i;

    if (!n->endpoint || !n->event || !n->fingerprint || !n->status)
        return op_error_set(err, OP_EUSAGE, "%s: a notification needs an "
                            "endpoint, an event, a fingerprint and a status",
                            path);
    for (i = 0; i < 6; i++)
        if (t[i] && strlen(t[i]) > STORE_NOTIFY_TEXT_MAX)
            return op_error_set(err, OP_EUSAGE, "%s: a notification text is "
                                "longer than %d bytes", path,
                                STORE_NOTIFY_TEXT_MAX);
    return 0;
}

int store_notify_said(store *s, const char *endpoint, const char *fp,
                      char *digest, size_t cap, op_error *err)
{
    sqlite3_stmt *st = NULL;
    int rc;

    digest[0] = '\0';
    PG_DISPATCH(store_pg_notify_said(s->pg, endpoint, fp, digest, cap, err));
    if (sqlite3_prepare_v2(s->db, "SELECT digest FROM notify_said WHERE"
                           " endpoint = ?1 AND fingerprint = ?2", -1, &st,
                           NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the notifications sent", err);
    sqlite3_bind_text(st, 1, endpoint, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, fp, -1, SQLITE_STATIC);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && col_text(st, 0))
        snprintf(digest, cap, "%s", col_text(st, 0));
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE
               ? 0 : db_fail(s, OP_EIO, "cannot read the notifications sent",
                             err);
}

int store_notify_log(store *s, const store_notification *n, op_error *err)
{
    static const char log_sql[] =
        "INSERT INTO notify_log(at, endpoint, event, fingerprint, status,"
        " attempts, error, digest) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
    static const char said_sql[] =
        "INSERT INTO notify_said(endpoint, fingerprint, digest, said_at)"
        " VALUES(?2, ?4, ?8, ?1) ON CONFLICT(endpoint, fingerprint) DO UPDATE"
        " SET digest = excluded.digest, said_at = excluded.said_at";
    char now[32], tries[24];
    const char *v[8];
    int rc, sent = strcmp(n->status, "sent") == 0;

    if ((rc = notify_texts_ok(n, s->path, err)))
        return rc;
    if (!s->writable)
        return op_error_set(err, OP_EUSAGE, "%s: opened read-only", s->path);
    baseline_now(now, sizeof now);
    snprintf(tries, sizeof tries, "%lld", (long long)n->attempts);
    v[0] = n->at ? n->at : now, v[1] = n->endpoint, v[2] = n->event;
    v[3] = n->fingerprint, v[4] = n->status, v[5] = tries, v[6] = n->error;
    v[7] = n->digest;
    PG_DISPATCH(store_pg_notify_log(s->pg, v, sent && n->digest, err));
    if ((rc = begin_write(s, err)))
        return rc;
    rc = run_bound(s, log_sql, v, 8, err);
    if (!rc && sent && n->digest)
        rc = run_bound(s, said_sql, v, 8, err);
    if (!rc)
        rc = exec(s, "COMMIT", "cannot commit", err);
    if (rc)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int store_notify_forget(store *s, const char *event, op_error *err)
{
    static const char sql[] =
        "DELETE FROM notify_said WHERE fingerprint IN (SELECT fingerprint"
        " FROM notify_log WHERE event = ?1)";
    const char *v[1] = {event};
    int rc;

    if (!s->writable)
        return op_error_set(err, OP_EUSAGE, "%s: opened read-only", s->path);
    PG_DISPATCH(store_pg_notify_forget(s->pg, event, err));
    if ((rc = begin_write(s, err)))
        return rc;
    rc = run_bound(s, sql, v, 1, err);
    if (!rc)
        rc = exec(s, "COMMIT", "cannot commit", err);
    if (rc)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

typedef struct notification_cb {
    store_notification_fn fn;
    void *ud;
} notification_cb;

static int notification_row_cb(sqlite3_stmt *st, void *ud)
{
    notification_cb *c = ud;
    store_notification n;

    n.seq = sqlite3_column_int64(st, 0);
    n.at = col_text(st, 1);
    n.endpoint = col_text(st, 2);
    n.event = col_text(st, 3);
    n.fingerprint = col_text(st, 4);
    n.status = col_text(st, 5);
    n.attempts = sqlite3_column_int64(st, 6);
    n.error = col_text(st, 7);
    n.digest = col_text(st, 8);
    if (!n.at || !n.endpoint || !n.event || !n.fingerprint || !n.status)
        return 0; /* a row no optipipe wrote */
    return c->fn(c->ud, &n);
}

int store_each_notification(store *s, int limit, store_notification_fn fn,
                            void *ud, op_error *err)
{
    sqlite3_stmt *st = NULL;
    notification_cb c = {fn, ud};

    PG_DISPATCH(store_pg_each_notification(s->pg, limit, fn, ud, err));
    if (sqlite3_prepare_v2(s->db, "SELECT seq, at, endpoint, event,"
                           " fingerprint, status, attempts, error, digest"
                           " FROM notify_log ORDER BY seq DESC LIMIT ?1", -1,
                           &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the notification log", err);
    sqlite3_bind_int(st, 1, limit > 0 ? limit : -1);
    return each_row(s, st, notification_row_cb, &c, err);
}

/* ---- retention ---------------------------------------------------------------- */

void (*store_prune_hook)(size_t batches);

/* The runs a prune removes (a snapshot: read before any lock is taken),
 * into *pks (malloc'd), their count into *n. */
static int prune_select(store *s, int64_t keep, int64_t older_than,
                        int64_t **pks, size_t *n, op_error *err)
{
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    int rc = 0, step_rc;

    *pks = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT pk FROM"
                           " (SELECT pk, started_at, row_number() OVER"
                           " (PARTITION BY job ORDER BY started_at IS NULL,"
                           " started_at DESC, pk DESC) AS rn FROM runs)"
                           " WHERE (?1 > 0 AND rn > ?1) OR"
                           " (?2 > 0 AND started_at < ?2) ORDER BY pk", -1,
                           &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot prune", err);
    sqlite3_bind_int64(st, 1, keep);
    sqlite3_bind_int64(st, 2, older_than);
    while ((step_rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            size_t nc = cap ? cap * 2 : 256;
            int64_t *p = realloc(*pks, nc * sizeof *p);
            if (!p) {
                rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", s->path);
                break;
            }
            *pks = p;
            cap = nc;
        }
        (*pks)[(*n)++] = sqlite3_column_int64(st, 0);
    }
    if (!rc && step_rc != SQLITE_DONE)
        rc = db_fail(s, OP_EIO, "cannot prune", err);
    sqlite3_finalize(st);
    if (rc) {
        free(*pks);
        *pks = NULL;
        *n = 0;
    }
    return rc;
}

/* Removes pks[0..n) (runs, their nodes and findings, by key) in one
 * transaction; *removed counts the runs that were still there. */
static int prune_batch(store *s, sqlite3_stmt *const del[3],
                       const int64_t *pks, size_t n, size_t *removed,
                       op_error *err)
{
    size_t i, j, gone = 0;
    int rc;

    if ((rc = begin_write(s, err)))
        return rc;
    for (i = 0; !rc && i < n; i++)
        for (j = 0; !rc && j < 3; j++) {
            sqlite3_bind_int64(del[j], 1, pks[i]);
            if (sqlite3_step(del[j]) != SQLITE_DONE)
                rc = db_fail(s, OP_EIO, "cannot prune", err);
            else if (j == 2)
                gone += (size_t)sqlite3_changes(s->db);
            sqlite3_reset(del[j]);
        }
    if (!rc)
        rc = exec(s, "COMMIT", "cannot prune", err);
    if (rc)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    else
        *removed += gone;
    return rc;
}

int store_prune(store *s, int64_t keep, int64_t older_than, size_t *removed,
                op_error *err)
{
    static const char *const sql[3] = {
        "DELETE FROM nodes WHERE run_pk = ?1",
        "DELETE FROM findings WHERE run_pk = ?1",
        "DELETE FROM runs WHERE pk = ?1"};
    sqlite3_stmt *del[3] = {NULL, NULL, NULL};
    int64_t *pks = NULL;
    size_t n = 0, i, batches = 0;
    int rc;

    *removed = 0;
    PG_DISPATCH(store_pg_prune(s->pg, keep, older_than, removed, err));
    if ((rc = prune_select(s, keep, older_than, &pks, &n, err)))
        return rc;
    for (i = 0; i < 3; i++)
        if (sqlite3_prepare_v2(s->db, sql[i], -1, &del[i], NULL) != SQLITE_OK) {
            rc = db_fail(s, OP_EIO, "cannot prune", err);
            goto out;
        }
    /* short transactions: between two, a recording waiting for the lock
     * gets it (a big prune never holds the store for long) */
    for (i = 0; i < n; i += STORE_PRUNE_BATCH) {
        size_t k = n - i < STORE_PRUNE_BATCH ? n - i : STORE_PRUNE_BATCH;
        if ((rc = prune_batch(s, del, pks + i, k, removed, err)))
            goto out;
        if (store_prune_hook)
            store_prune_hook(++batches);
        store_pause_ms(STORE_PRUNE_GAP_MS, store_mono_ms() + STORE_PRUNE_GAP_MS);
    }
    /* gives the freed pages back to the file system (auto_vacuum), a few
     * pages per transaction for the same reason */
    for (int64_t left = INT64_MAX, was;;) {
        int vrc;
        was = left;
        left = scalar(s, "PRAGMA freelist_count", &vrc);
        if (vrc != SQLITE_OK || left <= 0 || left >= was || /* no auto_vacuum */
            sqlite3_exec(s->db, "PRAGMA incremental_vacuum("
                         STORE_VACUUM_PAGES_S ")", NULL, NULL, NULL) != SQLITE_OK)
            break;
    }
out:
    for (i = 0; i < 3; i++)
        sqlite3_finalize(del[i]);
    free(pks);
    return rc;
}

/* ---- copying (store_copy.c): SQLite's rows as read from another store ---------- */

int store_snapshot(store *s, int begin, op_error *err)
{
    PG_DISPATCH(store_pg_snapshot(s->pg, begin, err));
    return exec(s, begin ? "BEGIN" : "COMMIT", "cannot read a snapshot", err);
}

int store_tx(store *s, int begin, int commit, op_error *err)
{
    PG_DISPATCH(store_pg_tx(s->pg, begin, commit, err));
    if (begin)
        return begin_write(s, err);
    if (!commit)
        return exec(s, "ROLLBACK", "cannot roll back", err);
    return exec(s, "COMMIT", "cannot commit", err);
}

int store_each_run_all(store *s, store_run_fn fn, void *ud, op_error *err)
{
    sqlite3_stmt *st = NULL;
    run_cb c = {fn, ud, 0};

    PG_DISPATCH(store_pg_each_run_all(s->pg, fn, ud, err));
    if (sqlite3_prepare_v2(s->db, RUN_SELECT "ORDER BY pk", -1, &st, NULL) !=
        SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the run store", err);
    return each_row(s, st, run_row_cb, &c, err);
}

/* Binds texts v[0..n) as ?1.. and steps; one row written. */
static int put_row(store *s, const char *sql, const char *const *v, int n,
                   const int64_t *iv, const unsigned *iset, int ni,
                   op_error *err)
{
    sqlite3_stmt *st = NULL;
    int i, rc;

    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot copy into the store", err);
    for (i = 0; i < n; i++)
        sqlite3_bind_text(st, i + 1, v[i], -1, SQLITE_STATIC);
    for (i = 0; i < ni; i++)
        if (iset[i])
            sqlite3_bind_int64(st, n + i + 1, iv[i]);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0
                             : db_fail(s, OP_EIO, "cannot copy into the store",
                                       err);
}

int store_put_run(store *s, const store_run *r, int64_t *pk, op_error *err)
{
    const char *v[12] = {r->job, r->source, r->run_id, r->name, r->status,
                         r->engine_version, r->origin,
                         r->content_hash ? r->content_hash : "",
                         r->config_json ? r->config_json : "{}",
                         r->metrics_json ? r->metrics_json : "{}",
                         r->attrs_json ? r->attrs_json : "{}", NULL};
    const int64_t iv[4] = {r->started_at, r->ended_at, r->duration_ms,
                           r->recorded_at};
    const unsigned set[4] = {r->set & MSET_STARTED_AT, r->set & MSET_ENDED_AT,
                             r->set & MSET_DURATION_MS, 1};
    int rc;

    PG_DISPATCH(store_pg_put_run(s->pg, r, pk, err));
    rc = put_row(s, "INSERT INTO runs(job, source, run_id, name, status,"
                 " engine_version, origin, content_hash, config, metrics,"
                 " attrs, started_at, ended_at, duration_ms, recorded_at)"
                 " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12,"
                 " ?13, ?14, ?15)", v, 11, iv, set, 4, err);
    *pk = sqlite3_last_insert_rowid(s->db);
    return rc;
}

int store_put_node(store *s, int64_t pk, int64_t seq, const store_node *n,
                   op_error *err)
{
    const char *v[7] = {n->id, n->kind, n->name, n->status,
                        n->metrics_json ? n->metrics_json : "{}",
                        n->dist_json ? n->dist_json : "{}",
                        n->attrs_json ? n->attrs_json : "{}"};
    const int64_t iv[6] = {pk, seq, n->started_at, n->ended_at,
                           n->duration_ms, n->parallelism};
    const unsigned set[6] = {1, 1, n->set & MSET_STARTED_AT,
                             n->set & MSET_ENDED_AT, n->set & MSET_DURATION_MS,
                             n->set & MSET_PARALLELISM};

    PG_DISPATCH(store_pg_put_node(s->pg, pk, seq, n, err));
    return put_row(s, "INSERT INTO nodes(id, kind, name, status, metrics,"
                   " dist, attrs, run_pk, seq, started_at, ended_at,"
                   " duration_ms, parallelism) VALUES(?1, ?2, ?3, ?4, ?5, ?6,"
                   " ?7, ?8, ?9, ?10, ?11, ?12, ?13)", v, 7, iv, set, 6, err);
}

int store_put_finding(store *s, int64_t pk, int64_t seq,
                      const store_finding *f, op_error *err)
{
    const char *v[10] = {f->rule, f->fingerprint, f->node, f->severity,
                         f->message, f->changes_json ? f->changes_json : "[]",
                         f->decision, f->comment, f->legacy_fp,
                         f->evidence_json};
    const int64_t iv[2] = {pk, seq};
    const unsigned set[2] = {1, 1};
    sqlite3_stmt *st = NULL;
    int rc;

    PG_DISPATCH(store_pg_put_finding(s->pg, pk, seq, f, err));
    if ((rc = put_row(s, "INSERT INTO findings(rule, fingerprint, node,"
                      " severity, message, changes, decision, comment,"
                      " legacy_fp, evidence, run_pk, seq) VALUES(?1, ?2, ?3,"
                      " ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)", v, 10, iv,
                      set, 2, err)) || f->impact_ms < 0)
        return rc;
    /* a REAL of its own: bound as a double, not a text */
    if (sqlite3_prepare_v2(s->db, "UPDATE findings SET impact_ms = ?3 WHERE"
                           " run_pk = ?1 AND seq = ?2", -1, &st, NULL) !=
        SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot copy into the store", err);
    sqlite3_bind_int64(st, 1, pk);
    sqlite3_bind_int64(st, 2, seq);
    sqlite3_bind_double(st, 3, f->impact_ms);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0
                             : db_fail(s, OP_EIO, "cannot copy into the store",
                                       err);
}

int store_put_decision(store *s, const store_decision *d, op_error *err)
{
    const char *v[10] = {d->fingerprint, d->legacy_fp, d->rule, d->job,
                         d->run_id, d->node, d->status, d->comment,
                         d->decided_at, d->decided_by};

    PG_DISPATCH(store_pg_put_decision(s->pg, d, err));
    return put_row(s, "INSERT INTO decisions(fingerprint, legacy_fp, rule, job,"
                   " run_id, node, status, comment, decided_at, decided_by)"
                   " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", v, 10,
                   NULL, NULL, 0, err);
}

int store_put_change(store *s, const store_decision_change *c, op_error *err)
{
    const char *v[9] = {c->fingerprint, c->changed_at, c->changed_by, c->kind,
                        c->old_status, c->old_comment, c->new_status,
                        c->new_comment, c->detail};

    PG_DISPATCH(store_pg_put_change(s->pg, c, err));
    return put_row(s, "INSERT INTO decision_log(fingerprint, changed_at,"
                   " changed_by, kind, old_status, old_comment, new_status,"
                   " new_comment, detail) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7,"
                   " ?8, ?9)", v, 9, NULL, NULL, 0, err);
}

typedef struct said_cb {
    store_said_fn fn;
    void *ud;
} said_cb;

static int said_row_cb(sqlite3_stmt *st, void *ud)
{
    said_cb *c = ud;
    store_said n;

    n.endpoint = col_text(st, 0);
    n.fingerprint = col_text(st, 1);
    n.digest = col_text(st, 2);
    n.said_at = col_text(st, 3);
    if (!n.endpoint || !n.fingerprint || !n.digest || !n.said_at)
        return 0; /* a row no optipipe wrote */
    return c->fn(c->ud, &n);
}

int store_each_said(store *s, store_said_fn fn, void *ud, op_error *err)
{
    sqlite3_stmt *st = NULL;
    said_cb c = {fn, ud};

    PG_DISPATCH(store_pg_each_said(s->pg, fn, ud, err));
    if (sqlite3_prepare_v2(s->db, "SELECT endpoint, fingerprint, digest,"
                           " said_at FROM notify_said ORDER BY endpoint,"
                           " fingerprint", -1, &st, NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the notifications sent", err);
    return each_row(s, st, said_row_cb, &c, err);
}

int store_each_delivery_all(store *s, store_notification_fn fn, void *ud,
                            op_error *err)
{
    sqlite3_stmt *st = NULL;
    notification_cb c = {fn, ud};

    PG_DISPATCH(store_pg_each_delivery_all(s->pg, fn, ud, err));
    if (sqlite3_prepare_v2(s->db, "SELECT seq, at, endpoint, event,"
                           " fingerprint, status, attempts, error, digest"
                           " FROM notify_log ORDER BY seq", -1, &st,
                           NULL) != SQLITE_OK)
        return db_fail(s, OP_EIO, "cannot read the notification log", err);
    return each_row(s, st, notification_row_cb, &c, err);
}

int store_put_said(store *s, const store_said *n, op_error *err)
{
    const char *v[4] = {n->endpoint, n->fingerprint, n->digest, n->said_at};

    PG_DISPATCH(store_pg_put_said(s->pg, n, err));
    return put_row(s, "INSERT INTO notify_said(endpoint, fingerprint, digest,"
                   " said_at) VALUES(?1, ?2, ?3, ?4)", v, 4, NULL, NULL, 0,
                   err);
}

int store_put_delivery(store *s, const store_notification *n, op_error *err)
{
    const char *v[7] = {n->at, n->endpoint, n->event, n->fingerprint,
                        n->status, n->error, n->digest};
    const int64_t iv[1] = {n->attempts};
    const unsigned iset[1] = {1};

    PG_DISPATCH(store_pg_put_delivery(s->pg, n, err));
    return put_row(s, "INSERT INTO notify_log(at, endpoint, event,"
                   " fingerprint, status, error, digest, attempts)"
                   " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", v, 7, iv, iset,
                   1, err);
}

int store_count(store *s, store_counts *c, op_error *err)
{
    int rc;

    memset(c, 0, sizeof *c);
    PG_DISPATCH(store_pg_count(s->pg, c, err));
    c->runs = scalar(s, "SELECT count(*) FROM runs", &rc);
    if (rc == SQLITE_OK)
        c->nodes = scalar(s, "SELECT count(*) FROM nodes", &rc);
    if (rc == SQLITE_OK)
        c->findings = scalar(s, "SELECT count(*) FROM findings", &rc);
    if (rc == SQLITE_OK)
        c->decisions = scalar(s, "SELECT count(*) FROM decisions", &rc);
    if (rc == SQLITE_OK)
        c->changes = scalar(s, "SELECT count(*) FROM decision_log", &rc);
    if (rc == SQLITE_OK)
        c->said = scalar(s, "SELECT count(*) FROM notify_said", &rc);
    if (rc == SQLITE_OK)
        c->deliveries = scalar(s, "SELECT count(*) FROM notify_log", &rc);
    return rc == SQLITE_OK ? 0
                           : db_fail(s, OP_EIO, "cannot count the rows", err);
}

/* ---- the servers' shared state (schema 6; PostgreSQL only) ------------------ */

/* What the SQLite store answers: its one server keeps its queue in DATA
 * and its sessions in memory (store.h). */
static int shared_only(const store *s, op_error *err)
{
    return op_error_set(err, OP_EUSAGE, "%s: the shared analyses queue and "
                        "sessions need a PostgreSQL store", s->path);
}

static int analysis_ok(const store *s, const store_analysis *a, op_error *err)
{
    static const char *const states[] = {"queued", "running", "done",
                                         "failed", "record-failed"};
    size_t i, n = strlen(a->id);

    for (i = 0; i < n; i++)
        if (!((a->id[i] >= '0' && a->id[i] <= '9') ||
              (a->id[i] >= 'a' && a->id[i] <= 'f')))
            break;
    if (n != STORE_AID_LEN || i != n)
        return op_error_set(err, OP_EUSAGE, "%s: not an analysis id: %.32s",
                            s->path, a->id);
    for (i = 0; i < sizeof states / sizeof *states; i++)
        if (strcmp(a->state, states[i]) == 0)
            return 0;
    return op_error_set(err, OP_EUSAGE, "%s: not an analysis state: %.16s",
                        s->path, a->state);
}

int store_queue_add(store *s, const store_analysis *a, int64_t limit,
                    op_error *err)
{
    int rc = analysis_ok(s, a, err);

    if (rc)
        return rc;
    PG_DISPATCH(store_pg_queue_add(s->pg, a, limit, 0, err));
    return shared_only(s, err);
}

int store_queue_import(store *s, const store_analysis *a, op_error *err)
{
    int rc = analysis_ok(s, a, err);

    if (rc)
        return rc;
    PG_DISPATCH(store_pg_queue_add(s->pg, a, 0, 1, err));
    return shared_only(s, err);
}

int store_queue_claim(store *s, const char *instance, int worker,
                      store_analysis *out, op_error *err)
{
    PG_DISPATCH(store_pg_queue_claim(s->pg, instance, worker, out, err));
    return shared_only(s, err);
}

int store_queue_beat(store *s, const char *id, const char *instance,
                     int worker, op_error *err)
{
    PG_DISPATCH(store_pg_queue_beat(s->pg, id, instance, worker, err));
    return shared_only(s, err);
}

int store_queue_end(store *s, const store_analysis *a, const char *instance,
                    int worker, op_error *err)
{
    int rc = analysis_ok(s, a, err);

    if (rc)
        return rc;
    PG_DISPATCH(store_pg_queue_end(s->pg, a, instance, worker, err));
    return shared_only(s, err);
}

int store_queue_requeue_stale(store *s, int64_t stale_ms, size_t *n,
                              op_error *err)
{
    if (n)
        *n = 0;
    PG_DISPATCH(store_pg_queue_requeue_stale(s->pg, stale_ms, n, err));
    return shared_only(s, err);
}

int store_queue_retry(store *s, const char *id, int64_t limit, char *state,
                      op_error *err)
{
    PG_DISPATCH(store_pg_queue_retry(s->pg, id, limit, state, err));
    return shared_only(s, err);
}

int store_queue_get(store *s, const char *id, store_analysis *out,
                    op_error *err)
{
    PG_DISPATCH(store_pg_queue_get(s->pg, id, out, err));
    return shared_only(s, err);
}

int store_queue_each(store *s, store_analysis_fn fn, void *ud, op_error *err)
{
    PG_DISPATCH(store_pg_queue_each(s->pg, fn, ud, err));
    return shared_only(s, err);
}

int store_queue_wait(store *s, int fd, int ms, int *queued, op_error *err)
{
    if (queued)
        *queued = 0;
    PG_DISPATCH(store_pg_queue_wait(s->pg, fd, ms, queued, err));
    (void)fd, (void)ms;
    return shared_only(s, err);
}

int store_queue_counts(store *s, int64_t *queued, int64_t *running,
                       op_error *err)
{
    *queued = *running = 0;
    PG_DISPATCH(store_pg_queue_counts(s->pg, queued, running, err));
    return shared_only(s, err);
}

int store_session_put(store *s, const char *id_hash, const char *user,
                      const char *role, int64_t ttl_ms, op_error *err)
{
    PG_DISPATCH(store_pg_session_put(s->pg, id_hash, user, role, ttl_ms, err));
    return shared_only(s, err);
}

int store_session_get(store *s, const char *id_hash, char *user, size_t cap,
                      char *role, size_t rcap, op_error *err)
{
    PG_DISPATCH(store_pg_session_get(s->pg, id_hash, user, cap, role, rcap,
                                     err));
    return shared_only(s, err);
}

int store_session_end(store *s, const char *id_hash, op_error *err)
{
    PG_DISPATCH(store_pg_session_end(s->pg, id_hash, err));
    return shared_only(s, err);
}
