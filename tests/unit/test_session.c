/*
 * test_session.c - the one pipeline (core/session.h) called the way a
 * server or a history store will call it, not from main(): twice in one
 * process with the same outcome, in each mode, with a lent ruleset, and
 * failing at the right stage with the right status. Also the baseline
 * states of findings.h.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "findings.h"
#include "session.h"
#include "support.h"

#define DEMO OP_SOURCE_DIR "/fixtures/demo"
#define HOME OP_BINARY_DIR "/share/optipipe"

static const char *const demo[] = {DEMO};

static void opts(op_session_opts *o, op_session_mode mode)
{
    op_session_opts_default(o);
    o->mode = mode;
    o->inputs = demo;
    o->ninputs = 1;
    o->home = HOME;
    o->no_config = 1;
    o->no_baseline = 1;
    o->quiet = 1;
    o->rlimits.isolate = 0;
}

static void test_twice_the_same(void **state)
{
    op_session_opts o;
    op_session a, b;
    op_error err;
    size_t i;

    opts(&o, OP_SESSION_ALL);
    assert_int_equal(op_session_run(&a, &o, &err), 0);
    assert_int_equal(op_session_run(&b, &o, &err), 0);
    assert_int_equal(a.failed, OP_STAGE_NONE);
    assert_true(a.res.n > 0);
    assert_int_equal(a.res.n, b.res.n);
    assert_int_equal(a.an.m->nruns, b.an.m->nruns);
    for (i = 0; i < a.res.n; i++)
        assert_string_equal(a.res.f[i].fingerprint, b.res.f[i].fingerprint);
    assert_null(a.baseline_path); /* no_baseline */
    op_session_free(&a);
    op_session_free(&b);
}

static void test_modes(void **state)
{
    op_session_opts o;
    op_session s;
    op_error err;

    opts(&o, OP_SESSION_READ); /* normalize: the model alone */
    assert_int_equal(op_session_run(&s, &o, &err), 0);
    assert_true(s.an.m->nruns > 0);
    assert_null(s.rs);
    assert_int_equal(s.res.n, 0);
    op_session_free(&s);

    opts(&o, OP_SESSION_RULES); /* rules list: no input read */
    assert_int_equal(op_session_run(&s, &o, &err), 0);
    assert_non_null(s.rs);
    assert_true(ruleset_count(s.rs) > 0);
    assert_null(s.an.m);
    op_session_free(&s);
}

static void test_lent_rules(void **state)
{
    op_session_opts o;
    op_session s, first;
    op_error err;

    opts(&o, OP_SESSION_RULES);
    assert_int_equal(op_session_run(&first, &o, &err), 0);
    opts(&o, OP_SESSION_ALL);
    o.rules = first.rs; /* rules test: loaded once, run per case */
    o.home = "/nonexistent"; /* not looked at: nothing is loaded */
    assert_int_equal(op_session_run(&s, &o, &err), 0);
    assert_ptr_equal(s.rs, first.rs);
    assert_true(s.res.n > 0);
    op_session_free(&s); /* leaves the lent ruleset alone */
    assert_true(ruleset_count(first.rs) > 0);
    op_session_free(&first);
}

static void test_failures(void **state)
{
    static const char *const missing[] = {"/nonexistent/in.json", DEMO};
    op_session_opts o;
    op_session s;
    op_error err;

    opts(&o, OP_SESSION_ALL);
    o.baseline = "b.json"; /* with no_baseline */
    assert_int_equal(op_session_run(&s, &o, &err), OP_EUSAGE);
    assert_int_equal(s.failed, OP_STAGE_CONFIG);
    assert_non_null(strstr(err.msg, "contradict"));
    op_session_free(&s);

    opts(&o, OP_SESSION_ALL);
    static const char *const packs[] = {"no-such-pack"};
    o.packs = packs;
    o.npacks = 1;
    assert_int_equal(op_session_run(&s, &o, &err), OP_EUSAGE);
    assert_int_equal(s.failed, OP_STAGE_RULES);
    op_session_free(&s);

    opts(&o, OP_SESSION_READ);
    o.inputs = missing;
    o.ninputs = 2;
    assert_int_equal(op_session_run(&s, &o, &err), 0); /* the other is read */
    assert_true(s.an.nok > 0);
    assert_true(s.an.inputs[0].nwarnings > 0); /* the missing one, said */
    op_session_free(&s);

    o.strict_inputs = 1; /* rules test: the first problem fails */
    assert_int_not_equal(op_session_run(&s, &o, &err), 0);
    assert_int_equal(s.failed, OP_STAGE_INPUTS);
    assert_non_null(strstr(err.msg, "/nonexistent/in.json"));
    op_session_free(&s);

    o.strict_inputs = 0;
    o.ninputs = 1;
    assert_int_equal(op_session_run(&s, &o, &err), OP_EIO);
    assert_string_equal(err.msg, "no input could be read");
    op_session_free(&s);
}

static void test_decision_states(void **state)
{
    assert_int_equal(decision_status_parse("approved"), DECISION_APPROVED);
    assert_int_equal(decision_status_parse("dismissed"), DECISION_DISMISSED);
    assert_int_equal(decision_status_parse("Approved"), -1);
    assert_int_equal(decision_status_parse(NULL), -1);
    assert_string_equal(decision_status_name(DECISION_APPROVED), "approved");
    assert_string_equal(decision_status_name(DECISION_DISMISSED), "dismissed");
    assert_int_equal(FINDING_SHOWN, 0); /* a zeroed finding is shown */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_twice_the_same),
        cmocka_unit_test(test_modes),
        cmocka_unit_test(test_lent_rules),
        cmocka_unit_test(test_failures),
        cmocka_unit_test(test_decision_states),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
