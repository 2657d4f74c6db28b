/*
 * test_store.c - the run store (core/store.c): record and read back,
 * the same run twice replaced, history order and exclusion, decisions and
 * legacy fingerprints, prune, the v0 -> v1 migration of a store built
 * here from SQL text, a newer schema refused, foreign and corrupt files
 * named, a writer killed mid-transaction leaving the store as it was, and
 * decisions of their own (schema 3: decide, undo, load, the 2 -> 3
 * migration).
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
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "baseline.h"
#include "findings.h"
#include "store.h"
#include "support.h"

static void tmp_path(char *buf, size_t len, const char *name)
{
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_and_read),
        cmocka_unit_test(test_findings_and_decisions),
        cmocka_unit_test(test_later_decisions),
        cmocka_unit_test(test_prune),
        cmocka_unit_test(test_migrate_v0),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_killed_writer),
        cmocka_unit_test(test_decide),
        cmocka_unit_test(test_migrate_v2),
        cmocka_unit_test(test_record_own),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
