/*
 * test_store.c - the run store (core/store.c): record and read back,
 * the same run twice replaced, history order and exclusion, decisions and
 * legacy fingerprints, prune, the v0 -> v1 migration of a store built
 * here from SQL text, a newer schema refused, foreign and corrupt files
 * named, a writer killed mid-transaction leaving the store as it was, and
 * decisions of their own (schema 3: decide, undo, load, the 2 -> 3
 * migration), and their audit trail (schema 4: every change kept, a
 * file's older decision never replacing a newer stored one, conflicts
 * noted once).
 * The tests of what the interface promises run twice: on an
 * SQLite file and on a PostgreSQL database of a throw-away server
 * (pgtest.h; skipped with a notice when PostgreSQL is not installed),
 * and a PostgreSQL store answers as the SQLite one does, byte for byte,
 * also after store_copy both ways (its audit trail too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef OP_HAVE_LIBPQ
#include <libpq-fe.h>
#endif

#include "baseline.h"
#include "findings.h"
#include "pgtest.h"
#include "sha256.h"
#include "store.h"
#include "support.h"

/* The backend the running group tests: 0 SQLite, 1 PostgreSQL. */
static int on_pg;

/* A new store named name: a file of the group's folder, or (PostgreSQL)
 * a new database. */
static void tmp_path(char *buf, size_t len, const char *name)
{
    char db[64];
    size_t i;

    if (on_pg) {
        snprintf(db, sizeof db, "%s", name);
        for (i = 0; db[i]; i++)
            if (db[i] == '.')
                db[i] = '_';
        pgtest_db(db, buf, len);
        return;
    }
    snprintf(buf, len, "%s/%s", tm_tmpdir, name);
    unlink(buf);
}

/* One run of job "nightly" with n nodes, started at t. */
static model *night(const char *id, int64_t t, int nnodes, int64_t dur)
{
    model *m = model_new();
    op_builder *b;
    op_run *r;
    int i;

    assert_non_null(m);
    b = model_builder_new(m, "night.log");
    r = op_run_get(b, "spark", id);
    op_run_str(b, r, OP_F_NAME, "nightly");
    op_run_job(b, r, "nightly");
    op_run_history(b, r, id, 1); /* like a Spark attempt: legacy key = id */
    op_run_str(b, r, OP_F_STATUS, "succeeded");
    op_run_str(b, r, OP_F_ENGINE_VERSION, "3.5.1");
    op_run_int(b, r, OP_I_STARTED_AT, t);
    op_run_int(b, r, OP_I_DURATION_MS, dur);
    op_run_config(b, r, "spark.sql.shuffle.partitions", "200");
    op_run_metric_int(b, r, "tasks", 42);
    for (i = 0; i < nnodes; i++) {
        char nid[32];
        static const double v[] = {1, 2, 3, 4};
        op_node *n;
        snprintf(nid, sizeof nid, "stage-%d", i);
        n = op_node_get(b, r, nid);
        op_node_str(b, n, OP_F_KIND, "stage");
        op_node_int(b, n, OP_I_DURATION_MS, 1000 + i);
        op_node_metric_int(b, n, "input_bytes", 1024 * i);
        op_node_dist_values(b, n, "duration_ms", v, 4);
    }
    model_builder_free(b);
    model_freeze(m);
    return m;
}

static void one_finding(results *res, const model *m)
{
    cJSON *o = cJSON_CreateObject(), *ch = cJSON_AddArrayToObject(o, "changes"),
          *c = cJSON_CreateObject();
    op_error err;

    cJSON_AddStringToObject(c, "key", "spark.sql.shuffle.partitions");
    cJSON_AddStringToObject(c, "to", "400");
    cJSON_AddItemToArray(ch, c);
    cJSON_AddStringToObject(o, "rule", "spark.x");
    cJSON_AddStringToObject(o, "title", "T");
    cJSON_AddStringToObject(o, "severity", "warning");
    cJSON_AddNumberToObject(o, "run", 0);
    cJSON_AddStringToObject(o, "node", "stage-1");
    cJSON_AddStringToObject(o, "message", "slow");
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "evidence"), "ratio", 3);
    results_init(res);
    assert_int_equal(results_add_finding(res, m, o, &err), 0);
    cJSON_Delete(o);
    results_finish(res, m);
}

static void record(const char *path, const model *m, const results *res,
                   const baseline *bl)
{
    store *s = NULL;
    op_error err;

    assert_int_equal(store_open(path, 1, &s, &err), 0);
    assert_int_equal(store_record(s, m, res, bl, NULL, &err), 0);
    store_close(s);
}

typedef struct seen {
    char ids[8][64];
    int n;
    int64_t nnodes;
    char hash[17];
    char decision[16];
} seen;

static int collect_run(void *ud, const store_run *r)
{
    seen *s = ud;

    if (s->n < 8)
        snprintf(s->ids[s->n], sizeof s->ids[0], "%s", r->run_id);
    s->n++;
    s->nnodes = r->nnodes;
    snprintf(s->hash, sizeof s->hash, "%s", r->content_hash);
    return 0;
}

static seen runs_of(const char *path, const char *job, const char *skip,
                    int64_t before)
{
    store *s = NULL;
    op_error err;
    seen v;

    memset(&v, 0, sizeof v);
    assert_int_equal(store_open(path, 0, &s, &err), 0);
    assert_int_equal(store_each_run(s, job, "spark", skip, before, 30,
                                    collect_run, &v, &err), 0);
    store_close(s);
    return v;
}

static void test_record_and_read(void **state)
{
    char path[128];
    model *a = night("app-1", 1000, 3, 500), *b = night("app-2", 2000, 3, 600),
          *c = night("app-3", 3000, 3, 700);
    seen v;

    (void)state;
    tmp_path(path, sizeof path, "r.db");
    record(path, a, NULL, NULL);
    record(path, b, NULL, NULL);
    record(path, c, NULL, NULL);
    /* newest first, the run itself left out */
    v = runs_of(path, "nightly", "app-3", 0);
    assert_int_equal(v.n, 2);
    assert_string_equal(v.ids[0], "app-2");
    assert_string_equal(v.ids[1], "app-1");
    assert_int_equal(v.nnodes, 3);
    /* earlier than a start only */
    v = runs_of(path, "nightly", "none", 2000);
    assert_int_equal(v.n, 1);
    assert_string_equal(v.ids[0], "app-1");
    /* the same run again: replaced, not duplicated, same content hash */
    v = runs_of(path, "nightly", "none", 0);
    {
        char before[17];
        memcpy(before, v.hash, sizeof before);
        record(path, a, NULL, NULL);
        v = runs_of(path, "nightly", "none", 0);
        assert_int_equal(v.n, 3);
        assert_string_equal(v.hash, before); /* app-1 is the oldest: last */
    }
    assert_int_equal(runs_of(path, "other", "none", 0).n, 0);
    model_free(a);
    model_free(b);
    model_free(c);
}

static int collect_finding(void *ud, const store_finding *f)
{
    seen *s = ud;

    s->n++;
    snprintf(s->decision, sizeof s->decision, "%s",
             f->decision ? f->decision : "none");
    assert_string_equal(f->changes_json,
                        "[{\"key\":\"spark.sql.shuffle.partitions\",\"to\":\"400\"}]");
    /* the evidence as reported (hist-store.requests.md 1) */
    assert_non_null(f->evidence_json);
    assert_string_equal(f->evidence_json, "{\"ratio\":3}");
    return 0;
}

static int first_pk(void *ud, const store_run *r)
{
    *(int64_t *)ud = r->pk;
    return 1;
}

/* A decision made under the fingerprint of the time before job keys
 * still applies, and the store records it with the finding. */
static void test_findings_and_decisions(void **state)
{
    char path[128];
    model *m = night("app-9", 9000, 2, 100);
    results res;
    baseline bl;
    store *s = NULL;
    op_error err;
    finding legacy;
    int64_t pk = 0;
    seen v;

    (void)state;
    tmp_path(path, sizeof path, "f.db");
    one_finding(&res, m);
    assert_string_not_equal(res.f[0].fingerprint, res.f[0].legacy_fp);
    baseline_init(&bl);
    legacy = res.f[0];
    memcpy(legacy.fingerprint, res.f[0].legacy_fp, 17);
    assert_int_equal(baseline_set(&bl, &legacy, DECISION_DISMISSED, "noise",
                                  NULL), 0);
    assert_int_equal(baseline_apply(&bl, &res), 1);
    record(path, m, &res, &bl);
    assert_int_equal(store_open(path, 0, &s, &err), 0);
    assert_int_equal(store_find_run(s, "nightly@latest", first_pk, &pk, &err), 1);
    memset(&v, 0, sizeof v);
    assert_int_equal(store_each_finding(s, pk, collect_finding, &v, &err), 0);
    assert_int_equal(v.n, 1);
    assert_string_equal(v.decision, "dismissed");
    store_close(s);
    /* writing the decision again moves it to the new fingerprint */
    assert_int_equal(baseline_set(&bl, &res.f[0], DECISION_DISMISSED, "noise",
                                  NULL), 0);
    assert_int_equal(bl.n, 1);
    assert_string_equal(bl.d[0].fingerprint, res.f[0].fingerprint);
    baseline_free(&bl);
    results_free(&res);
    model_free(m);
}

static const char *stored_decision(const char *path, const char *ref,
                                   seen *v)
{
    store *s = NULL;
    op_error err;
    int64_t pk = 0;

    memset(v, 0, sizeof *v);
    assert_int_equal(store_open(path, 0, &s, &err), 0);
    assert_int_equal(store_find_run(s, ref, first_pk, &pk, &err), 1);
    assert_int_equal(store_each_finding(s, pk, collect_finding, v, &err), 0);
    store_close(s);
    assert_int_equal(v->n, 1);
    return v->decision;
}

/* A decision made after a run was recorded reaches that run's stored
 * finding when the next analysis records: under the legacy fingerprint,
 * and the new fingerprint wins over the legacy one. */
static void test_later_decisions(void **state)
{
    char path[128];
    model *a = night("app-1", 1000, 2, 100), *b = night("app-2", 2000, 2, 100);
    results ra, rb;
    baseline bl;
    finding legacy;
    seen v;

    (void)state;
    tmp_path(path, sizeof path, "d.db");
    one_finding(&ra, a);
    one_finding(&rb, b);
    record(path, a, &ra, NULL);
    assert_string_equal(stored_decision(path, "app-1", &v), "none");
    /* dismissed under night 1's legacy fingerprint, after night 1 */
    baseline_init(&bl);
    legacy = ra.f[0];
    memcpy(legacy.fingerprint, ra.f[0].legacy_fp, 17);
    assert_int_equal(baseline_set(&bl, &legacy, DECISION_DISMISSED, "noise",
                                  NULL), 0);
    record(path, b, &rb, &bl);
    assert_string_equal(stored_decision(path, "app-1", &v), "dismissed");
    assert_string_equal(stored_decision(path, "app-2", &v), "none");
    /* approved under the job's fingerprint: wins on both nights */
    assert_int_equal(baseline_set(&bl, &rb.f[0], DECISION_APPROVED, NULL,
                                  NULL), 0);
    record(path, b, &rb, &bl);
    assert_string_equal(stored_decision(path, "app-1", &v), "approved");
    assert_string_equal(stored_decision(path, "app-2", &v), "approved");
    baseline_free(&bl);
    results_free(&ra);
    results_free(&rb);
    model_free(a);
    model_free(b);
}

static void test_prune(void **state)
{
    char path[128];
    store *s = NULL;
    op_error err;
    size_t removed = 0;
    int i;

    (void)state;
    tmp_path(path, sizeof path, "p.db");
    for (i = 1; i <= 5; i++) {
        char id[16];
        model *m;
        snprintf(id, sizeof id, "app-%d", i);
        m = night(id, i * 1000, 2, 100);
        record(path, m, NULL, NULL);
        model_free(m);
    }
    assert_int_equal(store_open(path, 1, &s, &err), 0);
    assert_int_equal(store_prune(s, 3, 0, &removed, &err), 0);
    assert_int_equal(removed, 2);
    assert_int_equal(store_prune(s, 0, 2500, &removed, &err), 0);
    assert_int_equal(removed, 0); /* app-1, app-2 went already */
    assert_int_equal(store_prune(s, 0, 3500, &removed, &err), 0);
    assert_int_equal(removed, 1);
    store_close(s);
    assert_int_equal(runs_of(path, "nightly", "none", 0).n, 2);
}

/* A big prune works in short transactions: between two of them another
 * connection records without waiting at all (a wait of 0 ms fails at
 * once on a held lock). */
static const char *batch_path;
static size_t batch_seen, batch_recorded;
static void record_between(size_t batches)
{
    store *s = NULL;
    op_error err;
    char id[32];
    model *m;

    batch_seen = batches;
    if (batches != 2)
        return;
    snprintf(id, sizeof id, "between-%zu", batches);
    m = night(id, 999999, 1, 100);
    assert_int_equal(store_open(batch_path, 1, &s, &err), 0);
    store_set_wait(s, 0);
    assert_int_equal(store_record(s, m, NULL, NULL, NULL, &err), 0);
    batch_recorded++;
    store_close(s);
    model_free(m);
}

static int64_t first_pk_of;

static int count_node(void *ud, const store_node *n)
{
    (void)n;
    ((seen *)ud)->n++;
    return 0;
}

static void test_prune_batches(void **state)
{
    const int n = 3 * STORE_PRUNE_BATCH + 5;
    char path[128];
    store *s = NULL;
    op_error err;
    size_t removed = 0;
    model *m;
    int i;

    (void)state;
    tmp_path(path, sizeof path, "pb.db");
    assert_int_equal(store_open(path, 1, &s, &err), 0);
    for (i = 1; i <= n; i++) {
        char id[16];
        snprintf(id, sizeof id, "app-%d", i);
        m = night(id, i * 1000, 1, 100);
        assert_int_equal(store_record(s, m, NULL, NULL, NULL, &err), 0);
        model_free(m);
    }
    assert_int_equal(store_find_run(s, "app-1", first_pk, &first_pk_of, &err), 1);
    batch_path = path;
    batch_seen = batch_recorded = 0;
    store_prune_hook = record_between;
    assert_int_equal(store_prune(s, 1, 0, &removed, &err), 0);
    store_prune_hook = NULL;
    assert_int_equal(removed, (size_t)n - 1);
    assert_int_equal(batch_seen, (size_t)(n - 1 + STORE_PRUNE_BATCH - 1) / STORE_PRUNE_BATCH);
    assert_int_equal(batch_recorded, 1);
    /* the run recorded meanwhile was not chosen (newer than the choice) */
    assert_int_equal(runs_of(path, "nightly", "none", 0).n, 2);
    /* the nodes of the removed runs went with them */
    {
        seen g;
        memset(&g, 0, sizeof g);
        assert_int_equal(store_each_node(s, first_pk_of, count_node, &g, &err), 0);
        assert_int_equal(g.n, 0);
    }
    if (!on_pg) {
        sqlite3 *db;
        sqlite3_stmt *st;
        assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
        assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM nodes",
                                            -1, &st, NULL), SQLITE_OK);
        assert_int_equal(sqlite3_step(st), SQLITE_ROW);
        assert_int_equal(sqlite3_column_int(st, 0), 2);
        sqlite3_finalize(st);
        sqlite3_close(db);
    }
    store_close(s);
}

/* Another connection in a write transaction: a recording that may not
 * wait fails naming the lock and the variable; the store is unchanged. */
static void test_held_store(void **state)
{
    char path[128];
    store *s = NULL;
    sqlite3 *db;
    op_error err;
    model *m = night("app-1", 1000, 2, 100), *m2 = night("app-2", 2000, 2, 100);

    (void)state;
    tmp_path(path, sizeof path, "held.db");
    record(path, m, NULL, NULL);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    assert_int_equal(store_open(path, 1, &s, &err), 0);
    store_set_wait(s, 0);
    op_error_clear(&err);
    assert_int_equal(store_record(s, m2, NULL, NULL, NULL, &err), OP_EIO);
    assert_non_null(strstr(err.msg, "another writer held the run store"));
    assert_non_null(strstr(err.msg, STORE_WAIT_ENV));
    assert_int_equal(store_decide(s, "0123456789abcdef", "approved", NULL, NULL,
                                  &err), OP_EIO);
    assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(runs_of(path, "nightly", "none", 0).n, 1);
    /* let go: the same connection records */
    assert_int_equal(store_record(s, m2, NULL, NULL, NULL, &err), 0);
    store_close(s);
    assert_int_equal(runs_of(path, "nightly", "none", 0).n, 2);
    model_free(m);
    model_free(m2);
}

/* A schema-0 store as the first store wrote it, built from SQL text. */
static void make_v0(const char *path)
{
    static const char sql[] =
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES('application', 'optipipe run store');"
        "CREATE TABLE runs(pk INTEGER PRIMARY KEY, job TEXT NOT NULL,"
        " source TEXT NOT NULL, run_id TEXT NOT NULL, name TEXT, status TEXT,"
        " started_at INTEGER, ended_at INTEGER, duration_ms INTEGER,"
        " engine_version TEXT, config TEXT NOT NULL DEFAULT '{}',"
        " metrics TEXT NOT NULL DEFAULT '{}', UNIQUE(source, run_id));"
        "CREATE TABLE findings(run_pk INTEGER NOT NULL, seq INTEGER NOT NULL,"
        " rule TEXT NOT NULL, fingerprint TEXT NOT NULL, node TEXT,"
        " severity TEXT NOT NULL, message TEXT, PRIMARY KEY(run_pk, seq));"
        "INSERT INTO runs(job, source, run_id, status, started_at, duration_ms)"
        " VALUES('nightly', 'spark', 'app-old', 'succeeded', 500, 450);"
        "INSERT INTO findings VALUES(1, 0, 'spark.x', '0123456789abcdef',"
        " 'stage-1', 'warning', 'old');";
    sqlite3 *db;

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

static void test_migrate_v0(void **state)
{
    char path[128];
    store *s = NULL;
    op_error err;
    model *m = night("app-new", 1000, 2, 100);
    seen v;

    (void)state;
    tmp_path(path, sizeof path, "v0.db");
    make_v0(path);
    /* read-only: says it needs migrating */
    assert_int_not_equal(store_open(path, 0, &s, &err), 0);
    assert_non_null(strstr(err.msg, "schema 0 is older"));
    record(path, m, NULL, NULL); /* migrates, then writes */
    v = runs_of(path, "nightly", "none", 0);
    assert_int_equal(v.n, 2);
    assert_string_equal(v.ids[0], "app-new");
    assert_string_equal(v.ids[1], "app-old"); /* kept through the migration */
    assert_int_equal(v.nnodes, 0);
    model_free(m);
}

static void set_version(const char *path, int v)
{
    sqlite3 *db;
    char sql[64];

    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", v);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
}

/* A store with no schema yet, to a reader: an empty file, and the first
 * recording's schema transaction not yet committed (what a page asked
 * meanwhile sees) are "no store yet" (OP_ENOTFOUND), as no file is. */
static void test_unmade(void **state)
{
    char path[128];
    store *s = NULL;
    op_error err;
    sqlite3 *db;
    FILE *f;

    (void)state;
    tmp_path(path, sizeof path, "empty.db");
    f = fopen(path, "w");
    fclose(f);
    op_error_clear(&err);
    assert_int_equal(store_open(path, 0, &s, &err), OP_ENOTFOUND);
    assert_non_null(strstr(err.msg, path));
    tmp_path(path, sizeof path, "making.db");
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA journal_mode = WAL; BEGIN "
                                  "IMMEDIATE; CREATE TABLE meta(key, value)",
                                  NULL, NULL, NULL), SQLITE_OK);
    op_error_clear(&err);
    assert_int_equal(store_open(path, 0, &s, &err), OP_ENOTFOUND);
    assert_null(s);
    assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}

static void test_refusals(void **state)
{
    char path[128];
    store *s = NULL;
    op_error err;
    FILE *f;
    sqlite3 *db;
    model *m = night("app-1", 1000, 1, 100);

    (void)state;
    /* newer schema */
    tmp_path(path, sizeof path, "new.db");
    record(path, m, NULL, NULL);
    set_version(path, STORE_SCHEMA + 1);
    assert_int_equal(store_open(path, 1, &s, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "newer than this optipipe"));
    assert_non_null(strstr(err.msg, path));
    /* a negative schema: refused by writers and readers alike (a writer
     * used to write into it, a reader then to ask for a migration) */
    set_version(path, -2);
    assert_int_equal(store_open(path, 1, &s, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "schema -2 is not one optipipe writes"));
    assert_int_equal(store_open(path, 0, &s, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "schema -2 is not one optipipe writes"));
    /* not SQLite */
    tmp_path(path, sizeof path, "junk.db");
    f = fopen(path, "w");
    fputs("this is a text file, not a database, with enough bytes to look "
          "like something more than a header of sixteen", f);
    fclose(f);
    assert_int_not_equal(store_open(path, 1, &s, &err), 0);
    assert_non_null(strstr(err.msg, "not a run store"));
    assert_non_null(strstr(err.msg, path));
    assert_int_not_equal(store_open(path, 0, &s, &err), 0);
    assert_non_null(strstr(err.msg, path));
    /* another application's SQLite file */
    tmp_path(path, sizeof path, "other.db");
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_not_equal(store_open(path, 1, &s, &err), 0);
    assert_non_null(strstr(err.msg, "not an opti-pipe run store"));
    /* missing, read-only */
    tmp_path(path, sizeof path, "missing.db");
    assert_int_equal(store_open(path, 0, &s, &err), OP_ENOTFOUND);
    /* a directory */
    assert_int_not_equal(store_open(tm_tmpdir, 1, &s, &err), 0);
    assert_non_null(strstr(err.msg, "not a regular file"));
    model_free(m);
}

/* ---- decisions (schema 3) ---------------------------------------------- */

typedef struct dseen {
    int n;
    char status[16], by[32], job[32], run[32], node[32], comment[32];
} dseen;

static int collect_decision(void *ud, const store_decision *d)
{
    dseen *v = ud;

    v->n++;
    snprintf(v->status, sizeof v->status, "%s", d->status);
    snprintf(v->by, sizeof v->by, "%s", d->decided_by ? d->decided_by : "-");
    snprintf(v->job, sizeof v->job, "%s", d->job ? d->job : "-");
    snprintf(v->run, sizeof v->run, "%s", d->run_id ? d->run_id : "-");
    snprintf(v->node, sizeof v->node, "%s", d->node ? d->node : "-");
    snprintf(v->comment, sizeof v->comment, "%s", d->comment ? d->comment : "-");
    return 0;
}

static dseen decisions_of(const char *path, const char *fp)
{
    store *s = NULL;
    op_error err;
    dseen v;

    memset(&v, 0, sizeof v);
    assert_int_equal(store_open(path, 0, &s, &err), 0);
    assert_int_equal(store_each_decision(s, fp, collect_decision, &v, &err), 0);
    store_close(s);
    return v;
}

static void load_decisions(const char *path, baseline *bl)
{
    store *s = NULL;
    op_error err;

    assert_int_equal(store_open(path, 0, &s, &err), 0);
    assert_int_equal(store_load_decisions(s, bl, &err), 0);
    store_close(s);
}

static int decide(const char *path, const char *fp, const char *status,
                  const char *comment, const char *who)
{
    store *s = NULL;
    op_error err;
    int rc;

    assert_int_equal(store_open(path, 1, &s, &err), 0);
    rc = store_decide(s, fp, status, comment, who, &err);
    store_close(s);
    return rc;
}

/* store_decide: approve, see it on the stored findings and in the
 * decisions table; an unknown fingerprint, a bad status, an over-long
 * comment refused; "open" undoes it; loading gives a baseline. */
static void test_decide(void **state)
{
    char path[128], *big;
    model *a = night("app-1", 1000, 2, 100), *b = night("app-2", 2000, 2, 100);
    results ra, rb;
    baseline bl;
    seen v;
    dseen d;

    (void)state;
    tmp_path(path, sizeof path, "decide.db");
    one_finding(&ra, a);
    one_finding(&rb, b);
    record(path, a, &ra, NULL);
    record(path, b, &rb, NULL);
    assert_string_equal(ra.f[0].fingerprint, rb.f[0].fingerprint); /* a job */
    assert_int_equal(decide(path, ra.f[0].fingerprint, "approved", "yes",
                            "alice"), 0);
    assert_string_equal(stored_decision(path, "app-1", &v), "approved");
    assert_string_equal(stored_decision(path, "app-2", &v), "approved");
    d = decisions_of(path, ra.f[0].fingerprint);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.status, "approved");
    assert_string_equal(d.by, "alice");
    assert_string_equal(d.job, "nightly");
    assert_string_equal(d.run, "app-2"); /* the newest finding's run */
    assert_string_equal(d.node, "stage-1");
    assert_string_equal(d.comment, "yes");
    load_decisions(path, &bl);
    assert_int_equal(bl.n, 1);
    assert_int_equal(bl.d[0].status, DECISION_APPROVED);
    assert_string_equal(bl.d[0].reason, "yes");
    assert_non_null(baseline_decision_of(&bl, &rb.f[0]));
    baseline_free(&bl);
    /* refusals */
    assert_int_equal(decide(path, "0123456789abcdef", "approved", NULL, NULL),
                     OP_ENOTFOUND);
    assert_int_equal(decide(path, "0123", "approved", NULL, NULL), OP_EUSAGE);
    assert_int_equal(decide(path, ra.f[0].fingerprint, "maybe", NULL, NULL),
                     OP_EUSAGE);
    big = calloc(STORE_COMMENT_MAX + 2, 1);
    memset(big, 'x', STORE_COMMENT_MAX + 1);
    assert_int_equal(decide(path, ra.f[0].fingerprint, "dismissed", big, NULL),
                     OP_EUSAGE);
    free(big);
    assert_string_equal(decisions_of(path, ra.f[0].fingerprint).status,
                        "approved"); /* a refusal changes nothing */
    /* undo */
    assert_int_equal(decide(path, ra.f[0].fingerprint, "open", NULL, "bob"), 0);
    assert_string_equal(stored_decision(path, "app-1", &v), "none");
    assert_int_equal(decisions_of(path, NULL).n, 0);
    load_decisions(path, &bl);
    assert_int_equal(bl.n, 0);
    baseline_free(&bl);
    /* a recording with the store's own decisions keeps who decided; a
     * decisions file that changes it does not */
    assert_int_equal(decide(path, ra.f[0].fingerprint, "dismissed", "noise",
                            "carol"), 0);
    load_decisions(path, &bl);
    record(path, b, &rb, &bl);
    assert_string_equal(decisions_of(path, NULL).by, "carol");
    assert_int_equal(baseline_set(&bl, &rb.f[0], DECISION_APPROVED, NULL, NULL),
                     0);
    record(path, b, &rb, &bl);
    d = decisions_of(path, NULL);
    assert_string_equal(d.status, "approved");
    assert_string_equal(d.by, "-");
    assert_string_equal(stored_decision(path, "app-1", &v), "approved");
    baseline_free(&bl);
    results_free(&ra);
    results_free(&rb);
    model_free(a);
    model_free(b);
}

static void record_own(const char *path, const model *m, const results *res)
{
    store *s = NULL;
    op_error err;

    assert_int_equal(store_open(path, 1, &s, &err), 0);
    assert_int_equal(store_record_own(s, m, res, NULL, &err), 0);
    store_close(s);
}

/* A server's analysis reads the store's decisions when it starts and
 * records when it ends: a decision taken back or changed meanwhile stays
 * as the person left it. */
static void test_record_own(void **state)
{
    char path[128];
    model *a = night("app-1", 1000, 2, 100), *b = night("app-2", 2000, 2, 100),
          *c = night("app-3", 3000, 2, 100);
    results ra, rb, rc;
    seen v;

    (void)state;
    tmp_path(path, sizeof path, "own.db");
    one_finding(&ra, a);
    one_finding(&rb, b);
    one_finding(&rc, c);
    record(path, a, &ra, NULL);
    assert_int_equal(decide(path, ra.f[0].fingerprint, "approved", NULL, "x"), 0);
    /* (an analysis loads the approval here) then it is taken back */
    assert_int_equal(decide(path, ra.f[0].fingerprint, "open", NULL, "x"), 0);
    record_own(path, b, &rb);
    assert_string_equal(stored_decision(path, "app-2", &v), "none");
    assert_int_equal(decisions_of(path, NULL).n, 0);
    /* changed meanwhile: the new run gets the change */
    assert_int_equal(decide(path, ra.f[0].fingerprint, "dismissed", "later",
                            "y"), 0);
    record_own(path, c, &rc);
    assert_string_equal(stored_decision(path, "app-3", &v), "dismissed");
    assert_string_equal(decisions_of(path, NULL).by, "y");
    results_free(&ra);
    results_free(&rb);
    results_free(&rc);
    model_free(a);
    model_free(b);
    model_free(c);
}

/* A schema-2 store (decisions only on the findings) migrates to 3: the
 * decisions table gets each decided fingerprint, the newest run's. */
static void test_migrate_v2(void **state)
{
    char path[128];
    model *a = night("app-1", 1000, 2, 100);
    results ra;
    baseline bl;
    store *s = NULL;
    op_error err;
    sqlite3 *db;
    dseen d;

    (void)state;
    tmp_path(path, sizeof path, "v2.db");
    one_finding(&ra, a);
    baseline_init(&bl);
    assert_int_equal(baseline_set(&bl, &ra.f[0], DECISION_DISMISSED, "noise",
                                  NULL), 0);
    record(path, a, &ra, &bl);
    baseline_free(&bl);
    /* back to schema 2: no decisions table */
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "DROP TABLE decisions;"
                                  "DROP TABLE decision_log;"
                                  "DROP TABLE notify_said;"
                                  "DROP TABLE notify_log;"
                                  "DROP TABLE analyses;"
                                  "DROP TABLE sessions;"
                                  "PRAGMA user_version = 2", NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_not_equal(store_open(path, 0, &s, &err), 0);
    assert_non_null(strstr(err.msg, "schema 2 is older"));
    assert_int_equal(store_open(path, 1, &s, &err), 0); /* migrates */
    store_close(s);
    d = decisions_of(path, ra.f[0].fingerprint);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.status, "dismissed");
    assert_string_equal(d.comment, "noise");
    assert_string_equal(d.job, "nightly");
    load_decisions(path, &bl);
    assert_int_equal(bl.n, 1);
    assert_non_null(bl.d[0].decided_at);
    assert_non_null(strchr(bl.d[0].decided_at, 'T'));
    baseline_free(&bl);
    results_free(&ra);
    model_free(a);
}

/* ---- the audit trail (schema 4) ------------------------------------------ */

typedef struct cseen {
    int n;
    char kind[4][16], from[4][16], to[4][16], by[4][32], comment[4][32];
} cseen;

static int collect_change(void *ud, const store_decision_change *c)
{
    cseen *v = ud;

    if (v->n < 4) {
        snprintf(v->kind[v->n], sizeof v->kind[0], "%s", c->kind);
        snprintf(v->from[v->n], sizeof v->from[0], "%s", c->old_status);
        snprintf(v->to[v->n], sizeof v->to[0], "%s", c->new_status);
        snprintf(v->by[v->n], sizeof v->by[0], "%s",
                 c->changed_by ? c->changed_by : "-");
        snprintf(v->comment[v->n], sizeof v->comment[0], "%s",
                 c->new_comment ? c->new_comment : "-");
    }
    v->n++;
    return 0;
}

static cseen changes_of(const char *path, const char *fp)
{
    store *s = NULL;
    op_error err;
    cseen v;

    memset(&v, 0, sizeof v);
    assert_int_equal(store_open(path, 0, &s, &err), 0);
    assert_int_equal(store_each_decision_change(s, fp, 0, collect_change, &v,
                                                &err), 0);
    store_close(s);
    return v;
}

/* Every change is kept, newest first, with who and from what to what; a
 * decision set again unchanged is no change. */
static void test_audit_trail(void **state)
{
    char path[128];
    model *a = night("app-1", 1000, 2, 100);
    results ra;
    baseline bl;
    cseen c;
    const char *fp;

    (void)state;
    tmp_path(path, sizeof path, "trail.db");
    one_finding(&ra, a);
    fp = ra.f[0].fingerprint;
    record(path, a, &ra, NULL);
    assert_int_equal(decide(path, fp, "approved", "ok", "alice"), 0);
    assert_int_equal(decide(path, fp, "approved", "ok", "alice"), 0);
    assert_int_equal(decide(path, fp, "dismissed", "noise", "bob"), 0);
    assert_int_equal(decide(path, fp, "open", NULL, "carol"), 0);
    c = changes_of(path, fp);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.kind[2], "decided");
    assert_string_equal(c.from[2], "open");
    assert_string_equal(c.to[2], "approved");
    assert_string_equal(c.by[2], "alice");
    assert_string_equal(c.from[1], "approved");
    assert_string_equal(c.to[1], "dismissed");
    assert_string_equal(c.comment[1], "noise");
    assert_string_equal(c.by[1], "bob");
    assert_string_equal(c.from[0], "dismissed");
    assert_string_equal(c.to[0], "open");
    assert_string_equal(c.by[0], "carol");
    /* a decisions file's decision is a change of kind "file" */
    baseline_init(&bl);
    assert_int_equal(baseline_set(&bl, &ra.f[0], DECISION_DISMISSED, "later",
                                  NULL), 0);
    record(path, a, &ra, &bl);
    record(path, a, &ra, &bl); /* the same again: no change */
    c = changes_of(path, fp);
    assert_int_equal(c.n, 4);
    assert_string_equal(c.kind[0], "file");
    assert_string_equal(c.to[0], "dismissed");
    assert_string_equal(c.by[0], "-");
    assert_int_equal(changes_of(path, "0123456789abcdef").n, 0);
    baseline_free(&bl);
    results_free(&ra);
    model_free(a);
}

/* A decisions file's older decision never replaces a newer stored one
 * (store_record), neither in the decisions table nor on the findings;
 * store_note_conflict notes it once. */
static void test_newest_wins(void **state)
{
    char path[128];
    model *a = night("app-1", 1000, 2, 100), *b = night("app-2", 2000, 2, 100);
    results ra, rb;
    baseline old;
    store *s = NULL;
    op_error err;
    seen v;
    dseen d;
    cseen c;
    const char *fp;

    (void)state;
    tmp_path(path, sizeof path, "newest.db");
    one_finding(&ra, a);
    one_finding(&rb, b);
    fp = ra.f[0].fingerprint;
    record(path, a, &ra, NULL);
    assert_int_equal(decide(path, fp, "approved", "fine", "alice"), 0);
    baseline_init(&old);
    assert_int_equal(baseline_set(&old, &ra.f[0], DECISION_DISMISSED, "stale",
                                  "2020-01-01T00:00:00Z"), 0);
    record(path, b, &rb, &old);
    d = decisions_of(path, fp);
    assert_string_equal(d.status, "approved");
    assert_string_equal(d.by, "alice");
    assert_string_equal(stored_decision(path, "app-1", &v), "approved");
    c = changes_of(path, fp);
    assert_int_equal(c.n, 1); /* not applied: no change */
    assert_int_equal(store_open(path, 1, &s, &err), 0);
    assert_int_equal(store_note_conflict(s, &old.d[0], "old.json", &err), 0);
    assert_int_equal(store_note_conflict(s, &old.d[0], "old.json", &err), 0);
    store_close(s);
    c = changes_of(path, fp);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.kind[0], "conflict");
    assert_string_equal(c.from[0], "approved"); /* kept */
    assert_string_equal(c.to[0], "dismissed");  /* the file's, not applied */
    assert_string_equal(c.comment[0], "stale");
    baseline_free(&old);
    results_free(&ra);
    results_free(&rb);
    model_free(a);
    model_free(b);
}

static size_t kill_after;
static void kill_hook(size_t rows)
{
    if (rows == kill_after)
        raise(SIGKILL);
}

/* A writer killed after n rows of its transaction: the store has what it
 * had before (one run of 50 nodes), and it opens and records again. */
static void test_killed_writer(void **state)
{
    char path[128];
    model *a = night("app-1", 1000, 50, 100), *b = night("app-2", 2000, 50, 200);
    size_t n;
    seen v;

    (void)state;
    tmp_path(path, sizeof path, "k.db");
    record(path, a, NULL, NULL);
    for (n = 1; n <= 53; n += 26) { /* 53 rows: run, fields, 50 nodes, hash */
        pid_t pid = fork();
        int status = 0;
        assert_true(pid >= 0);
        if (pid == 0) {
            kill_after = n;
            store_row_hook = kill_hook;
            record(path, b, NULL, NULL);
            _exit(3); /* the hook did not fire */
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        if (!WIFSIGNALED(status))
            fail_msg("writer exited %d", WEXITSTATUS(status));
        assert_int_equal(WTERMSIG(status), SIGKILL);
        v = runs_of(path, "nightly", "none", 0);
        assert_int_equal(v.n, 1);
        assert_string_equal(v.ids[0], "app-1");
        assert_int_equal(v.nnodes, 50);
    }
    record(path, b, NULL, NULL);
    v = runs_of(path, "nightly", "none", 0);
    assert_int_equal(v.n, 2);
    assert_int_equal(v.nnodes, 50);
    model_free(a);
    model_free(b);
}

/* ---- PostgreSQL: the same answers, its refusals, a lost connection ------ */

/* A run whose texts need COPY's escapes and JSON's: tab, newline,
 * backslash, quotes, non-ASCII; a fractional metric and an attribute. */
static model *odd_run(void)
{
    model *m = model_new();
    op_builder *b;
    op_run *r;
    op_node *n;

    assert_non_null(m);
    b = model_builder_new(m, "odd.json");
    r = op_run_get(b, "spark", "odd-1");
    op_run_str(b, r, OP_F_NAME, "odd\tname \"q\" \\ é");
    op_run_job(b, r, "nightly");
    op_run_int(b, r, OP_I_STARTED_AT, 5000);
    op_run_config(b, r, "k\nv", "a\\b\tc");
    op_run_metric_int(b, r, "tasks", 7);
    n = op_node_get(b, r, "n 1\\x");
    op_node_str(b, n, OP_F_NAME, "line\nbreak\r\n ünï");
    op_node_metric(b, n, "ratio", 0.1);
    op_node_metric(b, n, "input_bytes", 1e300);
    op_node_attr(b, n, "path", "C:\\dir\\file");
    n = op_node_get(b, r, "plain");
    op_node_int(b, n, OP_I_PARALLELISM, 8);
    model_builder_free(b);
    model_freeze(m);
    return m;
}

typedef struct dump {
    FILE *f;
    store *s;
    char job[STORE_JOB_KEY_MAX]; /* the first job's key */
} dump;

static const char *nz(const char *v)
{
    return v ? v : "(null)";
}

static int dump_value(void *ud, const char *id, double v)
{
    fprintf(((dump *)ud)->f, "  value %s %.17g\n", id, v);
    return 0;
}

static int dump_node(void *ud, const store_node *n)
{
    fprintf(((dump *)ud)->f, "  node %s|%s|%s|%s|%lld|%lld|%lld|%lld|%u|%s|%s|%s\n",
            n->id, nz(n->kind), nz(n->name), nz(n->status),
            (long long)n->started_at, (long long)n->ended_at,
            (long long)n->duration_ms, (long long)n->parallelism, n->set,
            nz(n->metrics_json), nz(n->dist_json), nz(n->attrs_json));
    return 0;
}

static int dump_finding(void *ud, const store_finding *f)
{
    fprintf(((dump *)ud)->f, "  finding %s|%s|%s|%s|%s|%s|%s|%s|%.17g|%s|%s\n",
            f->rule, f->fingerprint, nz(f->node), nz(f->severity),
            nz(f->message), nz(f->legacy_fp), nz(f->changes_json),
            nz(f->evidence_json), f->impact_ms, nz(f->decision),
            nz(f->comment));
    return 0;
}

static int dump_run(void *ud, const store_run *r)
{
    static const char *const metrics[] = {"input_bytes", "ratio", "parallelism"};
    dump *d = ud;
    op_error err;

    fprintf(d->f, "run %s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%lld|%lld|%lld|%u|%lld|%lld|%lld\n",
            r->job, r->source, r->run_id, nz(r->name), nz(r->status),
            nz(r->engine_version), nz(r->origin), nz(r->content_hash),
            nz(r->config_json), nz(r->metrics_json), nz(r->attrs_json),
            (long long)r->started_at, (long long)r->ended_at,
            (long long)r->duration_ms, r->set, (long long)r->recorded_at,
            (long long)r->nnodes, (long long)r->nfindings);
    assert_int_equal(store_each_node(d->s, r->pk, dump_node, d, &err), 0);
    assert_int_equal(store_each_finding(d->s, r->pk, dump_finding, d, &err), 0);
    if (store_each_node_value(d->s, r->pk, metrics, 3, NULL, dump_value, d,
                              &err))
        fail_msg("%s", err.msg);
    return 0;
}

static int dump_job(void *ud, const store_job *j)
{
    dump *d = ud;
    op_error err;

    if (!d->job[0])
        snprintf(d->job, sizeof d->job, "%s", j->job);
    fprintf(d->f, "job %s|%s|%lld|%lld\n", j->job, j->source,
            (long long)j->nruns, (long long)j->last_started);
    assert_int_equal(store_each_run(d->s, j->job, NULL, NULL, 0, 100, dump_run,
                                    d, &err), 0);
    return 0;
}

static int dump_decision(void *ud, const store_decision *x)
{
    fprintf(((dump *)ud)->f, "decision %s|%s|%s|%s|%s|%s|%s|%s|%s\n",
            x->fingerprint, nz(x->legacy_fp), x->rule, nz(x->job),
            nz(x->run_id), nz(x->node), x->status, nz(x->comment),
            nz(x->decided_by));
    return 0;
}

/* Everything the interface hands out of the store at path, as text (the
 * run keys pk left out: a PostgreSQL identity may skip numbers). */
static char *dump_store(const char *path)
{
    char *buf = NULL, key[STORE_JOB_KEY_MAX], near[STORE_JOB_KEY_MAX];
    size_t len = 0;
    op_error err;
    dump d;

    memset(&d, 0, sizeof d);
    assert_non_null(d.f = open_memstream(&buf, &len));
    assert_int_equal(store_open(path, 0, &d.s, &err), 0);
    assert_int_equal(store_each_job(d.s, dump_job, &d, &err), 0);
    assert_int_equal(store_each_decision(d.s, NULL, dump_decision, &d, &err), 0);
    assert_int_equal(store_find_job(d.s, "nightl", key, sizeof key, near,
                                    sizeof near, &err), OP_ENOTFOUND);
    fprintf(d.f, "near %s\n", near);
    assert_int_equal(store_find_job(d.s, d.job, key, sizeof key,
                                    near, sizeof near, &err), 0);
    fprintf(d.f, "found %s\n", key);
    store_close(d.s);
    fclose(d.f);
    return buf;
}

static int note_row(void *ud, const store_notification *n)
{
    fprintf(ud, "%s|%s|%s|%s|%s|%lld|%s|%s\n", n->at, n->endpoint, n->event,
            n->fingerprint, n->status, (long long)n->attempts,
            n->error ? n->error : "-", n->digest ? n->digest : "-");
    return 0;
}

/* The notification tables of the store at path as text: the log (newest
 * first) and what was said of the fingerprints the tests use. */
static char *dump_notes(const char *path)
{
    static const char *const said_of[][2] = {
        {"team", "00000000000000aa"}, {"chat", "00000000000000aa"},
        {"team", "00000000000000bb"}};
    char *buf = NULL, said[SHA256_HEX_LEN + 1];
    size_t len = 0, i;
    store *s = NULL;
    op_error err;
    FILE *f;

    assert_non_null(f = open_memstream(&buf, &len));
    assert_int_equal(store_open(path, 0, &s, &err), 0);
    assert_int_equal(store_each_notification(s, 0, note_row, f, &err), 0);
    for (i = 0; i < 3; i++) {
        assert_int_equal(store_notify_said(s, said_of[i][0], said_of[i][1],
                                           said, sizeof said, &err), 0);
        fprintf(f, "said %s %s %s\n", said_of[i][0], said_of[i][1], said);
    }
    store_close(s);
    fclose(f);
    return buf;
}

/* The same analyses into SQLite and PostgreSQL: every answer is the same,
 * texts, content hashes, order, decisions. */
static void test_pg_same_answers(void **state)
{
    char uri[128], file[128], *a, *b;
    model *m1 = night("app-1", 1000, 3, 500), *m2 = night("app-2", 2000, 3, 600),
          *odd = odd_run();
    results r1, r2;
    baseline bl;
    int k;

    (void)state;
    setenv("SOURCE_DATE_EPOCH", "1732870000", 1); /* the same recorded_at */
    tmp_path(uri, sizeof uri, "same.db");
    snprintf(file, sizeof file, "%s/same-sqlite.db", tm_tmpdir);
    unlink(file);
    one_finding(&r1, m1);
    one_finding(&r2, m2);
    baseline_init(&bl);
    assert_int_equal(baseline_set(&bl, &r1.f[0], DECISION_DISMISSED, "noise",
                                  NULL), 0);
    for (k = 0; k < 2; k++) {
        const char *p = k ? file : uri;
        record(p, m1, &r1, NULL);
        record(p, m2, &r2, &bl);
        record(p, odd, NULL, NULL);
        record(p, m1, &r1, &bl); /* replaced */
        assert_int_equal(decide(p, r2.f[0].fingerprint, "approved", "ok",
                                "alice"), 0);
    }
    a = dump_store(uri);
    b = dump_store(file);
    if (strcmp(a, b)) { /* the two dumps side by side, for diff(1) */
        char pa[128];
        FILE *f;
        snprintf(pa, sizeof pa, "/tmp/test_store.%d.pg", (int)getpid());
        if ((f = fopen(pa, "w")))
            fputs(a, f), fclose(f);
        snprintf(pa, sizeof pa, "/tmp/test_store.%d.sqlite", (int)getpid());
        if ((f = fopen(pa, "w")))
            fputs(b, f), fclose(f);
        fail_msg("the stores answer differently: diff /tmp/test_store.%d.*",
                 (int)getpid());
    }
    assert_non_null(strstr(a, "line\nbreak\r\n ünï"));
    assert_non_null(strstr(a, "value n 1\\x 1.0000000000000001e+300"));
    free(a);
    free(b);
    unsetenv("SOURCE_DATE_EPOCH");
    baseline_free(&bl);
    results_free(&r1);
    results_free(&r2);
    model_free(m1);
    model_free(m2);
    model_free(odd);
}

/* store_copy: SQLite -> PostgreSQL -> SQLite answers as the first store
 * did, counts said; a DST holding runs is refused and left as it was. */
static void test_pg_copy(void **state)
{
    char uri[128], file[128], back[128], *a, *b;
    model *m1 = night("app-1", 1000, 3, 500), *odd = odd_run();
    results r1;
    store *src = NULL, *dst = NULL;
    store_counts n;
    op_error err;

    (void)state;
    snprintf(file, sizeof file, "%s/copy-src.db", tm_tmpdir);
    snprintf(back, sizeof back, "%s/copy-back.db", tm_tmpdir);
    unlink(file);
    unlink(back);
    one_finding(&r1, m1);
    record(file, m1, &r1, NULL);
    record(file, odd, NULL, NULL);
    assert_int_equal(decide(file, r1.f[0].fingerprint, "approved", "ok", "bo"), 0);
    assert_int_equal(decide(file, r1.f[0].fingerprint, "dismissed", "no", "al"), 0);
    { /* webhook deliveries: two said, one failed */
        store_notification no[3] = {
            {0, NULL, "team", "finding", "00000000000000aa", "sent", 1, NULL,
             "d1"},
            {0, NULL, "team", "failed", "00000000000000bb", "failed", 4,
             "HTTP 500", NULL},
            {0, NULL, "chat", "finding", "00000000000000aa", "sent", 2, NULL,
             "d2"}};
        assert_int_equal(store_open(file, 1, &src, &err), 0);
        for (size_t i = 0; i < 3; i++)
            assert_int_equal(store_notify_log(src, &no[i], &err), 0);
        store_close(src);
        src = NULL;
    }
    tmp_path(uri, sizeof uri, "copy");
    assert_int_equal(store_open(file, 0, &src, &err), 0);
    assert_int_equal(store_open(uri, 1, &dst, &err), 0);
    assert_int_equal(store_copy(src, dst, &n, &err), 0);
    assert_int_equal(n.runs, 2);
    assert_int_equal(n.nodes, 5);
    assert_int_equal(n.findings, 1);
    assert_int_equal(n.decisions, 1);
    assert_int_equal(n.changes, 2);
    assert_int_equal(n.said, 2);
    assert_int_equal(n.deliveries, 3);
    assert_int_equal(store_copy(src, dst, &n, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "holds 2 runs"));
    store_close(dst);
    store_close(src);
    assert_int_equal(store_open(uri, 0, &src, &err), 0);
    assert_int_equal(store_open(back, 1, &dst, &err), 0);
    assert_int_equal(store_copy(src, dst, &n, &err), 0);
    store_close(dst);
    store_close(src);
    a = dump_store(file);
    b = dump_store(uri);
    assert_string_equal(a, b);
    free(b);
    b = dump_store(back);
    assert_string_equal(a, b);
    free(a);
    free(b);
    /* the notification tables, both ways, in the log's order */
    a = dump_notes(file);
    assert_non_null(strstr(a, "said team 00000000000000aa d1"));
    assert_non_null(strstr(a, "said team 00000000000000bb \n"));
    b = dump_notes(uri);
    assert_string_equal(a, b);
    free(b);
    b = dump_notes(back);
    assert_string_equal(a, b);
    free(a);
    free(b);
    /* the audit trail, in its order, on both sides */
    {
        cseen c1 = changes_of(file, r1.f[0].fingerprint),
              c2 = changes_of(back, r1.f[0].fingerprint);
        assert_int_equal(c1.n, 2);
        assert_memory_equal(&c1, &c2, sizeof c1);
        assert_string_equal(c2.to[0], "dismissed");
        assert_string_equal(c2.by[1], "bo");
    }
    results_free(&r1);
    model_free(m1);
    model_free(odd);
}

#ifdef OP_HAVE_LIBPQ
/* Runs sql on the database at uri (another connection than the store's). */
static void pg_sql(const char *uri, const char *sql)
{
    PGconn *c = PQconnectdb(uri);
    PGresult *r;

    assert_int_equal(PQstatus(c), CONNECTION_OK);
    r = PQexec(c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK &&
        PQresultStatus(r) != PGRES_TUPLES_OK)
        fail_msg("%s: %s", sql, PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(c);
}
#endif

/* What a PostgreSQL store refuses, each named: a password in the URI
 * (it would show in ps), a bad URI, a server not there, another
 * application's database, no store for a reader, a newer schema. */
static void test_pg_refusals(void **state)
{
    char uri[128];
    store *s = NULL;
    op_error err;

    (void)state;
    assert_int_equal(store_open("postgresql://u:s3cret@127.0.0.1:1/x", 0, &s,
                                &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "pgpass"));
    assert_null(strstr(err.msg, "s3cret"));
    assert_int_equal(store_open("postgresql://u@127.0.0.1:1/x?password=s3cret",
                                0, &s, &err), OP_EUSAGE);
    assert_null(strstr(err.msg, "s3cret"));
    assert_int_equal(store_open("postgresql://[::1", 0, &s, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "not a PostgreSQL connection URI"));
    assert_int_equal(store_open("postgresql://u@127.0.0.1:1/x", 1, &s, &err),
                     OP_EIO);
    assert_non_null(strstr(err.msg, "cannot connect"));
    assert_null(s);
    tmp_path(uri, sizeof uri, "empty");
    assert_int_equal(store_open(uri, 0, &s, &err), OP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "no run store there"));
#ifdef OP_HAVE_LIBPQ
    tmp_path(uri, sizeof uri, "foreign");
    pg_sql(uri, "CREATE TABLE accounts(id int)");
    assert_int_equal(store_open(uri, 1, &s, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "not an opti-pipe run store"));
    tmp_path(uri, sizeof uri, "newer");
    assert_int_equal(store_open(uri, 1, &s, &err), 0);
    store_close(s);
    pg_sql(uri, "UPDATE meta SET value = '99' WHERE key = 'schema_version'");
    assert_int_equal(store_open(uri, 1, &s, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "schema 99 is newer"));
#endif
}

/* The server drops the store's connection (a restart, a failover): the
 * next recording and read reconnect, and nothing is counted twice. */
static void test_pg_reconnect(void **state)
{
#ifdef OP_HAVE_LIBPQ
    char uri[128];
    model *a = night("app-1", 1000, 2, 100), *b = night("app-2", 2000, 2, 100);
    store *s = NULL;
    op_error err;
    seen v;

    (void)state;
    tmp_path(uri, sizeof uri, "reconnect");
    assert_int_equal(store_open(uri, 1, &s, &err), 0);
    assert_int_equal(store_record(s, a, NULL, NULL, NULL, &err), 0);
    pg_sql(uri, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'optipipe' AND pid <> pg_backend_pid()");
    assert_int_equal(store_record(s, b, NULL, NULL, NULL, &err), 0);
    memset(&v, 0, sizeof v);
    pg_sql(uri, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = 'optipipe' AND pid <> pg_backend_pid()");
    assert_int_equal(store_each_run(s, "nightly", NULL, NULL, 0, 30,
                                    collect_run, &v, &err), 0);
    assert_int_equal(v.n, 2);
    store_close(s);
    model_free(a);
    model_free(b);
#else
    (void)state;
#endif
}

/* ---- the servers' shared state (schema 6) -------------------------------- */

static store_analysis queued_row(const char *id, int64_t created)
{
    store_analysis a;

    memset(&a, 0, sizeof a);
    snprintf(a.id, sizeof a.id, "%s", id);
    snprintf(a.state, sizeof a.state, "queued");
    a.created_at = created;
    a.files = 1;
    a.bytes = 10;
    return a;
}

/* An SQLite store has the tables (one schema) but its server keeps its
 * queue in DATA: every shared call says it needs PostgreSQL. */
static void test_queue_sqlite(void **state)
{
    char path[128];
    store *s = NULL;
    store_analysis a = queued_row("00000000000000a1", 1);
    char u[64], r[16];
    op_error err;

    (void)state;
    tmp_path(path, sizeof path, "queue.db");
    assert_int_equal(store_open(path, 1, &s, &err), 0);
    assert_int_equal(store_queue_add(s, &a, 0, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "need a PostgreSQL store"));
    assert_int_equal(store_queue_claim(s, "i", 0, &a, &err), OP_EUSAGE);
    assert_int_equal(store_session_get(s, "x", u, sizeof u, r, sizeof r, &err),
                     OP_EUSAGE);
    assert_int_equal(store_queue_wait(s, -1, 0, NULL, &err), OP_EUSAGE);
    store_close(s);
}

#ifdef OP_HAVE_LIBPQ
static int keep_ids(void *ud, const store_analysis *a)
{
    char *out = ud;

    strcat(out, a->id + 12); /* the last 4 digits */
    strcat(out, a->state[0] == 'q' ? "q " : a->state[0] == 'r' ? "r " : "e ");
    return 0;
}
#endif

/* The queue over two connections (two instances): the --queue count over
 * the table, the oldest first, FOR UPDATE SKIP LOCKED (a row another
 * connection holds is skipped, not waited for), heartbeats of the owner
 * only, a stale heartbeat queued again (and its old owner told), ends,
 * retries, what readers see. */
static void test_pg_queue(void **state)
{
#ifdef OP_HAVE_LIBPQ
    char uri[128], list[256] = "";
    store *s1 = NULL, *s2 = NULL;
    store_analysis a, got;
    PGconn *hold;
    PGresult *res;
    int64_t q, r;
    size_t n;
    op_error err;

    (void)state;
    tmp_path(uri, sizeof uri, "queue");
    assert_int_equal(store_open(uri, 1, &s1, &err), 0);
    assert_int_equal(store_open(uri, 1, &s2, &err), 0);
    a = queued_row("0000000000000001", 100);
    assert_int_equal(store_queue_add(s1, &a, 3, &err), 0);
    a = queued_row("0000000000000002", 200);
    assert_int_equal(store_queue_add(s2, &a, 3, &err), 0);
    a = queued_row("0000000000000003", 300);
    assert_int_equal(store_queue_add(s1, &a, 3, &err), 0);
    a = queued_row("0000000000000004", 400);
    assert_int_equal(store_queue_add(s2, &a, 3, &err), OP_ELIMIT);
    assert_non_null(strstr(err.msg, "the queue is full (3"));
    a = queued_row("not-an-id", 1);
    assert_int_equal(store_queue_add(s1, &a, 0, &err), OP_EUSAGE);
    assert_int_equal(store_queue_get(s2, "0000000000000003", &got, &err), 0);
    assert_string_equal(got.state, "queued");
    assert_int_equal(got.ahead, 2);

    /* another connection holds the oldest queued row: skipped, at once */
    hold = PQconnectdb(uri);
    assert_int_equal(PQstatus(hold), CONNECTION_OK);
    PQclear(PQexec(hold, "BEGIN"));
    res = PQexec(hold, "SELECT id FROM analyses WHERE id = '0000000000000001'"
                       " FOR UPDATE");
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    PQclear(res);
    assert_int_equal(store_queue_claim(s2, "i2", 0, &got, &err), 0);
    assert_string_equal(got.id, "0000000000000002");
    PQclear(PQexec(hold, "COMMIT"));
    PQfinish(hold);
    assert_int_equal(store_queue_claim(s1, "i1", 0, &got, &err), 0);
    assert_string_equal(got.id, "0000000000000001");
    assert_string_equal(got.state, "running");
    assert_string_equal(got.instance, "i1");
    assert_true(got.heartbeat_at > 0 && got.started_at > 0);
    assert_int_equal(store_queue_claim(s1, "i1", 1, &got, &err), 0);
    assert_string_equal(got.id, "0000000000000003");
    assert_int_equal(got.worker, 1);
    assert_int_equal(store_queue_claim(s2, "i2", 1, &got, &err), OP_ENOTFOUND);
    assert_int_equal(store_queue_counts(s2, &q, &r, &err), 0);
    assert_true(q == 0 && r == 3);

    /* heartbeats: the owner's only */
    assert_int_equal(store_queue_beat(s1, "0000000000000001", "i1", 0, &err), 0);
    assert_int_equal(store_queue_beat(s1, "0000000000000001", "i2", 0, &err),
                     OP_ENOTFOUND);
    assert_int_equal(store_queue_beat(s1, "0000000000000001", "i1", 1, &err),
                     OP_ENOTFOUND);
    /* i2's heartbeat of 2 goes stale (an hour ago): queued again, once */
    pg_sql(uri, "UPDATE analyses SET heartbeat_at = heartbeat_at - 3600000"
                " WHERE id = '0000000000000002'");
    assert_int_equal(store_queue_requeue_stale(s1, 60000, &n, &err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(store_queue_requeue_stale(s1, 60000, &n, &err), 0);
    assert_int_equal(n, 0);
    assert_int_equal(store_queue_beat(s2, "0000000000000002", "i2", 0, &err),
                     OP_ENOTFOUND); /* its old owner stops */
    a = queued_row("0000000000000002", 200);
    snprintf(a.state, sizeof a.state, "done");
    assert_int_equal(store_queue_end(s2, &a, "i2", 0, &err), OP_ENOTFOUND);
    assert_int_equal(store_queue_claim(s1, "i1", 2, &got, &err), 0);
    assert_string_equal(got.id, "0000000000000002");

    /* ends: done, failed, handed back */
    a = queued_row("0000000000000001", 100);
    snprintf(a.state, sizeof a.state, "done");
    a.finished_at = 5000;
    assert_int_equal(store_queue_end(s1, &a, "i1", 0, &err), 0);
    assert_int_equal(store_queue_end(s1, &a, "i1", 0, &err), OP_ENOTFOUND);
    a = queued_row("0000000000000003", 300);
    snprintf(a.state, sizeof a.state, "failed");
    snprintf(a.error, sizeof a.error, "exit 3: no input");
    a.exit_code = 3;
    assert_int_equal(store_queue_end(s1, &a, "i1", 1, &err), 0);
    a = queued_row("0000000000000002", 200);
    assert_int_equal(store_queue_end(s1, &a, "i1", 2, &err), 0); /* handed back */
    assert_int_equal(store_queue_get(s2, "0000000000000002", &got, &err), 0);
    assert_string_equal(got.state, "queued");
    assert_true(got.started_at == 0 && got.instance[0] == '\0');
    assert_int_equal(store_queue_get(s2, "0000000000000003", &got, &err), 0);
    assert_string_equal(got.state, "failed");
    assert_string_equal(got.error, "exit 3: no input");
    assert_int_equal(got.exit_code, 3);

    /* retries: a failed one only, within the limit */
    assert_int_equal(store_queue_retry(s2, "0000000000000001", 0, NULL, &err),
                     OP_EUSAGE);
    assert_non_null(strstr(err.msg, "the analysis is done"));
    assert_int_equal(store_queue_retry(s2, "00000000000000ff", 0, NULL, &err),
                     OP_ENOTFOUND);
    assert_int_equal(store_queue_retry(s2, "0000000000000003", 1, NULL, &err),
                     OP_ELIMIT); /* 2 is queued: no place left */
    assert_int_equal(store_queue_retry(s2, "0000000000000003", 2, NULL, &err), 0);
    assert_int_equal(store_queue_get(s1, "0000000000000003", &got, &err), 0);
    assert_true(!strcmp(got.state, "queued") && got.error[0] == '\0' &&
                got.ahead == 1);
    assert_int_equal(store_queue_each(s1, keep_ids, list, &err), 0);
    assert_string_equal(list, "0003q 0002q 0001e ");
    /* an import keeps what is there */
    a = queued_row("0000000000000001", 100);
    assert_int_equal(store_queue_import(s1, &a, &err), 0);
    assert_int_equal(store_queue_get(s1, "0000000000000001", &got, &err), 0);
    assert_string_equal(got.state, "done");
    assert_int_equal(store_queue_get(s1, "0000000000000009", &got, &err),
                     OP_ENOTFOUND);

    /* waiting: woken by an analysis queued on another connection (NOTIFY
     * at its commit), by a stale one queued again, and by the fd */
    {
        int queued = -1, fds[2];

        assert_int_equal(store_queue_wait(s1, -1, 0, &queued, &err), 0);
        assert_int_equal(queued, 0); /* listening from now on */
        a = queued_row("0000000000000005", 500);
        assert_int_equal(store_queue_add(s2, &a, 0, &err), 0);
        /* 60 s: a safety net, the notification is there at once */
        assert_int_equal(store_queue_wait(s1, -1, 60000, &queued, &err), 0);
        assert_int_equal(queued, 1);
        assert_int_equal(store_queue_claim(s2, "i2", 0, &got, &err), 0);
        pg_sql(uri, "UPDATE analyses SET heartbeat_at = 0 WHERE state = 'running'");
        assert_int_equal(store_queue_requeue_stale(s2, 60000, &n, &err), 0);
        assert_true(n >= 1);
        assert_int_equal(store_queue_wait(s1, -1, 60000, &queued, &err), 0);
        assert_int_equal(queued, 1);
        assert_int_equal(pipe(fds), 0);
        assert_int_equal(write(fds[1], "x", 1), 1);
        assert_int_equal(store_queue_wait(s1, fds[0], 60000, &queued, &err), 0);
        assert_int_equal(queued, 0);
        close(fds[0]);
        close(fds[1]);
    }
    store_close(s1);
    store_close(s2);
#else
    (void)state;
#endif
}

/* Browser sessions by the hash of their id: who and role, until they
 * expire; ended on one connection, gone on the other. */
static void test_pg_sessions(void **state)
{
#ifdef OP_HAVE_LIBPQ
    char uri[128], u[64], r[16];
    store *s1 = NULL, *s2 = NULL;
    op_error err;

    (void)state;
    tmp_path(uri, sizeof uri, "sessions");
    assert_int_equal(store_open(uri, 1, &s1, &err), 0);
    assert_int_equal(store_open(uri, 1, &s2, &err), 0);
    assert_int_equal(store_session_put(s1, "aaaa", "bo", "decide", 60000, &err), 0);
    assert_int_equal(store_session_put(s1, "bbbb", "", "admin", -1, &err), 0);
    assert_int_equal(store_session_get(s2, "aaaa", u, sizeof u, r, sizeof r,
                                       &err), 0);
    assert_string_equal(u, "bo");
    assert_string_equal(r, "decide");
    assert_int_equal(store_session_get(s2, "bbbb", u, sizeof u, r, sizeof r,
                                       &err), OP_ENOTFOUND); /* expired */
    assert_int_equal(store_session_get(s2, "cccc", u, sizeof u, r, sizeof r,
                                       &err), OP_ENOTFOUND);
    assert_int_equal(store_session_end(s2, "aaaa", &err), 0);
    assert_int_equal(store_session_get(s1, "aaaa", u, sizeof u, r, sizeof r,
                                       &err), OP_ENOTFOUND);
    /* a sign-in removes the expired ones */
    assert_int_equal(store_session_put(s1, "dddd", "al", "read", 60000, &err), 0);
    pg_sql(uri, "DO $$ BEGIN IF (SELECT count(*) FROM sessions) <> 1 THEN"
                " RAISE 'expired sessions kept'; END IF; END $$");
    store_close(s1);
    store_close(s2);
#else
    (void)state;
#endif
}

#ifdef OP_HAVE_LIBPQ
/* The deadlock test's other transaction (T), in a thread of its own: it
 * holds run app-b (taken before), and once the store's recording holds
 * app-a (the row hook says so) it asks for app-a too. */
typedef struct deadlock_t {
    PGconn *c;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go, ok;
    size_t hook_calls;
} deadlock_t;
static deadlock_t *dl;

static void deadlock_hook(size_t rows)
{
    pthread_mutex_lock(&dl->mu);
    dl->hook_calls++;
    if (rows == 1 && dl->go == 0) { /* the first try holds app-a now */
        dl->go = 1;
        pthread_cond_signal(&dl->cv);
    }
    pthread_mutex_unlock(&dl->mu);
}

static void *deadlock_other(void *ud)
{
    deadlock_t *d = ud;
    PGresult *res;

    pthread_mutex_lock(&d->mu);
    while (!d->go)
        pthread_cond_wait(&d->cv, &d->mu);
    pthread_mutex_unlock(&d->mu);
    /* waits for the recording's lock on app-a, which waits for ours on
     * app-b: a deadlock, which the recording's 1 s deadlock_timeout finds
     * first (ours is 60 s), so the recording is the one rolled back */
    res = PQexec(d->c, "SELECT pk FROM runs WHERE run_id = 'app-a' FOR UPDATE");
    d->ok = PQresultStatus(res) == PGRES_TUPLES_OK;
    PQclear(res);
    res = PQexec(d->c, "COMMIT");
    d->ok &= PQresultStatus(res) == PGRES_COMMAND_OK;
    PQclear(res);
    return NULL;
}

/* Two runs, app-a then app-b, of one model (recorded in that order). */
static model *two_runs(void)
{
    model *m = model_new();
    op_builder *b;

    assert_non_null(m);
    b = model_builder_new(m, "two.log");
    for (int i = 0; i < 2; i++) {
        op_run *r = op_run_get(b, "spark", i ? "app-b" : "app-a");
        op_run_str(b, r, OP_F_NAME, "nightly");
        op_run_job(b, r, "nightly");
        op_run_int(b, r, OP_I_STARTED_AT, 1000 + i);
    }
    model_builder_free(b);
    model_freeze(m);
    return m;
}
#endif

/* A deadlock (40P01) is tried again: a recording holds run app-a and
 * wants app-b, which another transaction holds while it wants app-a
 * (coordinated by the row hook, no sleep); PostgreSQL rolls the
 * recording back, and its second try, once the other committed, records
 * both runs. */
static void test_pg_deadlock(void **state)
{
#ifdef OP_HAVE_LIBPQ
    char uri[128];
    model *m = two_runs();
    store *s = NULL;
    deadlock_t d;
    pthread_t t;
    PGresult *res;
    store_counts c;
    op_error err;
    size_t nruns = 0;

    (void)state;
    memset(&d, 0, sizeof d);
    pthread_mutex_init(&d.mu, NULL);
    pthread_cond_init(&d.cv, NULL);
    tmp_path(uri, sizeof uri, "deadlock");
    assert_int_equal(store_open(uri, 1, &s, &err), 0);
    store_set_wait(s, 60000);
    assert_int_equal(store_record(s, m, NULL, NULL, NULL, &err), 0);
    d.c = PQconnectdb(uri);
    assert_int_equal(PQstatus(d.c), CONNECTION_OK);
    PQclear(PQexec(d.c, "SET deadlock_timeout = '60s'"));
    PQclear(PQexec(d.c, "BEGIN"));
    res = PQexec(d.c, "SELECT pk FROM runs WHERE run_id = 'app-b' FOR UPDATE");
    assert_int_equal(PQresultStatus(res), PGRES_TUPLES_OK);
    assert_int_equal(PQntuples(res), 1);
    PQclear(res);
    dl = &d;
    store_row_hook = deadlock_hook;
    assert_int_equal(pthread_create(&t, NULL, deadlock_other, &d), 0);
    assert_int_equal(store_record(s, m, NULL, NULL, &nruns, &err), 0);
    pthread_join(t, NULL);
    store_row_hook = NULL;
    dl = NULL;
    assert_true(d.ok);          /* the other one was not the victim */
    /* 3 hook calls a run (added, written, done): the first try wrote
     * app-a and waited on app-b, the second (one retry) wrote both */
    assert_int_equal(d.hook_calls, 3 + 6);
    assert_int_equal(nruns, 2);
    assert_int_equal(store_count(s, &c, &err), 0);
    assert_int_equal(c.runs, 2);
    PQfinish(d.c);
    store_close(s);
    pthread_cond_destroy(&d.cv);
    pthread_mutex_destroy(&d.mu);
    model_free(m);
#else
    (void)state;
#endif
}

static int pg_group_setup(void **state)
{
    on_pg = 1;
    return tm_tmpdir_setup(state);
}

static int pg_group_teardown(void **state)
{
    on_pg = 0;
    return tm_tmpdir_teardown(state);
}

/* Notifications (schema 5): what an endpoint was told of an event is
 * remembered per endpoint by a sent delivery only, the newest replacing
 * it; every delivery is logged, newest first; a read-only store and an
 * over-long text are refused. */
typedef struct nseen {
    int n;
    char status[4][16], endpoint[4][16], error[4][64];
    int64_t attempts[4];
} nseen;

static int notification_cb(void *ud, const store_notification *n)
{
    nseen *c = ud;

    if (c->n < 4) {
        snprintf(c->status[c->n], 16, "%s", n->status);
        snprintf(c->endpoint[c->n], 16, "%s", n->endpoint);
        snprintf(c->error[c->n], 64, "%s", n->error ? n->error : "");
        c->attempts[c->n] = n->attempts;
    }
    c->n++;
    return 0;
}

static void test_notifications(void **state)
{
    char path[128], said[SHA256_HEX_LEN + 1], big[STORE_NOTIFY_TEXT_MAX + 2];
    store *s = NULL;
    op_error err;
    nseen c;
    store_notification n = {0, NULL, "team", "finding", "00000000000000aa",
                            "failed", 4, "HTTP 500", NULL};

    (void)state;
    tmp_path(path, sizeof path, "notify.db");
    assert_int_equal(store_open(path, 1, &s, &err), 0);
    assert_int_equal(store_notify_said(s, "team", n.fingerprint, said,
                                       sizeof said, &err), 0);
    assert_string_equal(said, "");
    assert_int_equal(store_notify_log(s, &n, &err), 0); /* failed: not said */
    assert_int_equal(store_notify_said(s, "team", n.fingerprint, said,
                                       sizeof said, &err), 0);
    assert_string_equal(said, "");
    n.status = "sent", n.error = NULL, n.digest = "d1", n.attempts = 2;
    assert_int_equal(store_notify_log(s, &n, &err), 0);
    n.digest = "d2";
    assert_int_equal(store_notify_log(s, &n, &err), 0);
    assert_int_equal(store_notify_said(s, "team", n.fingerprint, said,
                                       sizeof said, &err), 0);
    assert_string_equal(said, "d2");
    assert_int_equal(store_notify_said(s, "chat", n.fingerprint, said,
                                       sizeof said, &err), 0);
    assert_string_equal(said, ""); /* per endpoint */
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    n.error = big;
    assert_int_equal(store_notify_log(s, &n, &err), OP_EUSAGE);
    memset(&c, 0, sizeof c);
    assert_int_equal(store_each_notification(s, 0, notification_cb, &c, &err),
                     0);
    assert_int_equal(c.n, 3);
    assert_string_equal(c.status[0], "sent");
    assert_string_equal(c.status[2], "failed");
    assert_string_equal(c.error[2], "HTTP 500");
    assert_int_equal(c.attempts[2], 4);
    memset(&c, 0, sizeof c);
    assert_int_equal(store_each_notification(s, 1, notification_cb, &c, &err),
                     0);
    assert_int_equal(c.n, 1);
    /* a failure told, then forgotten when an analysis succeeded: the
     * findings' digests stay */
    n.error = NULL;
    n.event = "failed", n.fingerprint = "00000000000000bb", n.digest = "f1";
    assert_int_equal(store_notify_log(s, &n, &err), 0);
    assert_int_equal(store_notify_said(s, "team", "00000000000000bb", said,
                                       sizeof said, &err), 0);
    assert_string_equal(said, "f1");
    assert_int_equal(store_notify_forget(s, "failed", &err), 0);
    assert_int_equal(store_notify_said(s, "team", "00000000000000bb", said,
                                       sizeof said, &err), 0);
    assert_string_equal(said, "");
    assert_int_equal(store_notify_said(s, "team", "00000000000000aa", said,
                                       sizeof said, &err), 0);
    assert_string_equal(said, "d2");
    assert_int_equal(store_notify_forget(s, "failed", &err), 0); /* none */
    store_close(s);
    assert_int_equal(store_open(path, 0, &s, &err), 0);
    assert_int_equal(store_notify_log(s, &n, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "read-only"));
    assert_int_equal(store_notify_forget(s, "failed", &err), OP_EUSAGE);
    store_close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_and_read),
        cmocka_unit_test(test_findings_and_decisions),
        cmocka_unit_test(test_later_decisions),
        cmocka_unit_test(test_prune),
        cmocka_unit_test(test_prune_batches),
        cmocka_unit_test(test_held_store),
        cmocka_unit_test(test_migrate_v0),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_unmade),
        cmocka_unit_test(test_killed_writer),
        cmocka_unit_test(test_decide),
        cmocka_unit_test(test_migrate_v2),
        cmocka_unit_test(test_record_own),
        cmocka_unit_test(test_audit_trail),
        cmocka_unit_test(test_newest_wins),
        cmocka_unit_test(test_notifications),
        cmocka_unit_test(test_queue_sqlite),
    };
    /* what the interface promises, on PostgreSQL */
    const struct CMUnitTest pg_tests[] = {
        cmocka_unit_test(test_record_and_read),
        cmocka_unit_test(test_findings_and_decisions),
        cmocka_unit_test(test_later_decisions),
        cmocka_unit_test(test_prune),
        cmocka_unit_test(test_prune_batches),
        cmocka_unit_test(test_killed_writer),
        cmocka_unit_test(test_decide),
        cmocka_unit_test(test_record_own),
        cmocka_unit_test(test_audit_trail),
        cmocka_unit_test(test_newest_wins),
        cmocka_unit_test(test_notifications),
        cmocka_unit_test(test_pg_same_answers),
        cmocka_unit_test(test_pg_copy),
        cmocka_unit_test(test_pg_refusals),
        cmocka_unit_test(test_pg_reconnect),
        cmocka_unit_test(test_pg_queue),
        cmocka_unit_test(test_pg_sessions),
        cmocka_unit_test(test_pg_deadlock),
    };
    int failed = cmocka_run_group_tests_name("sqlite", tests, tm_tmpdir_setup,
                                             tm_tmpdir_teardown);
    int pg;

#ifndef OP_HAVE_LIBPQ
    fprintf(stderr, "SKIP: the PostgreSQL store tests: PostgreSQL support is "
                    "not compiled in\n");
    return failed;
#endif
    if ((pg = pgtest_start()) == 77)
        return failed; /* pg.sh said why */
    if (pg != 0) {
        fprintf(stderr, "test_store: the PostgreSQL test server did not start\n");
        return 1;
    }
    failed += cmocka_run_group_tests_name("postgresql", pg_tests,
                                          pg_group_setup, pg_group_teardown);
    pgtest_stop();
    return failed;
}
