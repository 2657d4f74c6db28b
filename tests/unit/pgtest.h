/*
 * pgtest.h - a throw-away PostgreSQL server for the unit tests (over
 * tests/lib/pg.sh, the one the e2e tests use): started once per test
 * executable, a fresh database per test, stopped at the end.
 */
#ifndef OP_TEST_PGTEST_H
#define OP_TEST_PGTEST_H

#include <stddef.h>

/* Starts the server (PGPASSFILE set for this process). 0 when it runs;
 * 77 when PostgreSQL is not installed (a notice on stderr says so, the
 * PostgreSQL group is skipped); -1 when it failed to start. */
int pgtest_start(void);
/* Whether pgtest_start succeeded. */
int pgtest_running(void);
/* A new empty database name (letters, digits, _): its URI into uri.
 * Fails the test when it cannot be made. */
void pgtest_db(const char *name, char *uri, size_t cap);
void pgtest_stop(void);

#endif
