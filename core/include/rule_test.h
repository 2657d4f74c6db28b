/*
 * rule_test.h - the rule test harness (docs/writing-rules.md#testing):
 * runs the <rule>_test.lua files of a pack, each case through the whole
 * pipeline (op_session_run) with that one rule, and says which cases pass.
 * `optipipe rules test` prints what it finds; the same code can drive a
 * pack uploaded to the server or a fuzzer's test file.
 */
#ifndef OP_CORE_RULE_TEST_H
#define OP_CORE_RULE_TEST_H

#include <stddef.h>
#include <stdio.h>

#include <optipipe/common.h>

#include "input.h"
#include "rules.h"

typedef struct rule_test_opts {
    const char *plugin_path; /* ':'-separated; NULL: the built-in plugins */
    input_limits limits;     /* of the cases' inputs */
    rule_limits rlimits;     /* the pack's and the test files' */
    FILE *out;    /* "ok  RULE: CASE" / "FAIL ..." lines and a failure's
                   * details, borrowed; NULL: stdout */
    int keep;     /* keep every case's outcome (rule_test_junit) */
    int confine_inputs; /* a case's input files must be inside its test
                         * file's folder (a test from a stranger, the
                         * fuzzer's: it reads nothing else) */
} rule_test_opts;

typedef struct rule_case_result rule_case_result;

/* A run of the harness: its options and what it found so far. */
typedef struct rule_test {
    rule_test_opts o;
    unsigned passed, failed;   /* cases, and test files or folders that
                                * failed as a whole */
    rule_case_result *r;       /* o.keep: each outcome (bounded) */
    size_t n, cap;
} rule_test;

/* Starts a run with o's options (copied; o->out borrowed). */
void rule_test_init(rule_test *t, const rule_test_opts *o);

/* Runs path: a folder runs every *_test.lua in it with the folder's rules
 * (a folder without one fails); a file x_test.lua only that one, with the
 * rules of its folder. Counts into t. */
void rule_test_path(rule_test *t, const char *path);

/* Runs every pack folder under root (the bundled packs: root is
 * <home>/rules); a folder without tests is no failure. */
void rule_test_packs(rule_test *t, const char *root);

/* Writes the kept outcomes of t as JUnit XML (one testsuite per test
 * file) to path. Returns 0 or OP_EIO with err. */
int rule_test_junit(const rule_test *t, const char *path, op_error *err);

/* Frees what t holds (not t). */
void rule_test_free(rule_test *t);

#endif
