/*
 * pgtest.c - the unit tests' PostgreSQL server (pgtest.h): tests/lib/pg.sh
 * does the work, so that the unit and the e2e tests start it one way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "pgtest.h"

#define PG_SH OP_SOURCE_DIR "/tests/lib/pg.sh"

static char pg_dir[256];
static unsigned pg_serial;

static void chomp(char *s)
{
    s[strcspn(s, "\r\n")] = '\0';
}

int pgtest_start(void)
{
    FILE *f = popen("'" PG_SH "' start", "r");
    char uri[512], pass[300];
    int st;

    if (!f)
        return -1;
    pg_dir[0] = uri[0] = '\0';
    if (fgets(pg_dir, sizeof pg_dir, f))
        chomp(pg_dir);
    if (fgets(uri, sizeof uri, f))
        chomp(uri);
    st = pclose(f);
    if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
        return 77;
    if (st != 0 || !pg_dir[0] || !uri[0]) {
        pg_dir[0] = '\0';
        return -1;
    }
    snprintf(pass, sizeof pass, "%s/pgpass", pg_dir);
    setenv("PGPASSFILE", pass, 1);
    return 0;
}

int pgtest_running(void)
{
    return pg_dir[0] != '\0';
}

void pgtest_db(const char *name, char *uri, size_t cap)
{
    char cmd[768], db[128];
    FILE *f;

    assert_true(pgtest_running());
    snprintf(db, sizeof db, "%s_%u", name, ++pg_serial);
    snprintf(cmd, sizeof cmd, "'" PG_SH "' createdb '%s' '%s'", pg_dir, db);
    assert_non_null(f = popen(cmd, "r"));
    uri[0] = '\0';
    if (!fgets(uri, (int)cap, f))
        uri[0] = '\0';
    chomp(uri);
    assert_int_equal(pclose(f), 0);
    assert_true(uri[0] != '\0');
}

void pgtest_stop(void)
{
    char cmd[512];

    if (!pgtest_running())
        return;
    snprintf(cmd, sizeof cmd, "'" PG_SH "' stop '%s'", pg_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "pgtest: could not stop the server in %s\n", pg_dir);
    pg_dir[0] = '\0';
}
