/*
 * test_emit_stored.c - patches from the run store (core/emit_stored.h)
 * and decisions from it (session decisions_from_store): the demo analyzed
 * and recorded, every finding with changes approved through store_decide,
 * then the patches from the store are byte for byte the files `analyze
 * --emit-changes` writes with a decisions file approving the same
 * findings; a second session with decisions_from_store shows them
 * decided.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "emit_stored.h"
#include "session.h"
#include "support.h"

#define DEMO OP_SOURCE_DIR "/fixtures/demo"
#define HOME OP_BINARY_DIR "/share/optipipe"

static const char *const demo[] = {DEMO};

static void opts(op_session_opts *o, const char *db)
{
    op_session_opts_default(o);
    o->inputs = demo;
    o->ninputs = 1;
    o->home = HOME;
    o->no_config = 1;
    o->no_baseline = 1;
    o->quiet = 1;
    o->rlimits.isolate = 0;
    o->history = db;
    o->record = 1;
}

typedef struct got {
    char dir[256];
    int n;
} got;

/* Each patch from the store equals the file --emit-changes wrote. */
static int same_as_file(void *ud, const char *name, const char *text,
                        size_t len, op_error *err)
{
    got *g = ud;
    char path[512], *want;
    size_t wlen = 0;
    FILE *f;

    (void)err;
    snprintf(path, sizeof path, "%s/%s", g->dir, name);
    f = fopen(path, "rb");
    assert_non_null(f);
    want = calloc(1, 1 << 20);
    wlen = fread(want, 1, (1 << 20) - 1, f);
    fclose(f);
    assert_int_equal(len, wlen);
    assert_memory_equal(text, want, len);
    free(want);
    g->n++;
    return 0;
}

static void test_patches_from_store(void **state)
{
    char db[256];
    op_session_opts o;
    op_session s, again;
    op_error err;
    baseline bl;
    store *st = NULL;
    const char *ids[16];
    emit_stats es, ss;
    got g;
    size_t i, napproved = 0, nsupp = 0;

    (void)state;
    snprintf(db, sizeof db, "%s/emit.db", tm_tmpdir);
    unlink(db);
    opts(&o, db);
    assert_int_equal(op_session_run(&s, &o, &err), 0);
    assert_int_equal(s.nrecorded, s.an.m->nruns);
    /* approve every finding with changes, in the store and in a file */
    baseline_init(&bl);
    assert_int_equal(store_open(db, 1, &st, &err), 0);
    for (i = 0; i < s.res.n; i++) {
        const finding *f = &s.res.f[i];
        if (!cJSON_GetArraySize(f->changes))
            continue;
        assert_int_equal(store_decide(st, f->fingerprint, "approved", "ok",
                                      "test", &err), 0);
        assert_int_equal(baseline_set(&bl, f, DECISION_APPROVED, "ok", NULL), 0);
        napproved++;
    }
    assert_true(napproved >= 2);
    snprintf(g.dir, sizeof g.dir, "%s/emit", tm_tmpdir);
    g.n = 0;
    assert_int_equal(emit_changes(g.dir, s.an.m, &s.res, &bl, 0, NULL, &es,
                                  &err), 0);
    assert_true(es.nfiles >= 2);
    for (i = 0; i < s.an.m->nruns && i < 16; i++)
        ids[i] = s.an.m->runs[i]->id;
    assert_int_equal(emit_changes_stored(st, ids, i, NULL, same_as_file, &g,
                                         &ss, &err), 0);
    assert_int_equal(ss.nfiles, es.nfiles);
    assert_int_equal(ss.nrefused, es.nrefused);
    assert_int_equal((size_t)g.n, es.nfiles);
    store_close(st);
    baseline_free(&bl);
    /* the next session takes the decisions from the store */
    o.decisions_from_store = 1;
    assert_int_equal(op_session_run(&again, &o, &err), 0);
    for (i = 0; i < again.res.n; i++)
        nsupp += again.res.f[i].suppressed == FINDING_BASELINE;
    assert_int_equal(nsupp, napproved);
    assert_int_equal(again.nbaselined, napproved);
    assert_string_equal(again.baseline_path, db);
    op_session_free(&again);
    /* ... and refuses a decisions file beside them */
    o.baseline = "x.json";
    o.no_baseline = 0;
    assert_int_equal(op_session_run(&again, &o, &err), OP_EUSAGE);
    op_session_free(&again);
    op_session_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_patches_from_store),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
