/*
 * test_testhook.c - the test hooks (core/testhook.c): an event names the
 * process that reached the point, a pause holds it until released, and
 * an unsafe or refused OPTIPIPE_TEST_HOOKS leaves every hook inert.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testhook.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/op-testhook-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    return setenv(OP_TESTHOOK_ENV, dir, 1);
}

static int teardown(void **state)
{
    char cmd[128];

    (void)state;
    unsetenv(OP_TESTHOOK_ENV);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

static int present(const char *name)
{
    char p[128];
    struct stat st;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0;
}

static long event_pid(const char *name)
{
    char p[128];
    long pid = -1;
    FILE *f;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    if (!(f = fopen(p, "r")))
        return -1;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = -1;
    fclose(f);
    return pid;
}

static void touch(const char *name)
{
    char p[128];
    FILE *f;

    snprintf(p, sizeof p, "%s/%s", dir, name);
    f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
}

static void test_event_names_the_process(void **state)
{
    (void)state;
    op_testhook("unit.point");
    assert_int_equal(event_pid("unit.point"), (long)getpid());
}

static void test_invalid_point_is_inert(void **state)
{
    (void)state;
    op_testhook("../escape");
    op_testhook(".hidden");
    op_testhook("UPPER");
    op_testhook("");
    op_testhook(NULL);
    assert_false(present("../escape"));
    assert_false(present(".hidden"));
    assert_false(present("UPPER"));
}

/* The child pauses at the point; the parent sees the event, finds the
 * child still there (it cannot pass before the release), releases it. */
static void test_pause_until_release(void **state)
{
    const struct timespec tick = {0, 10 * 1000 * 1000};
    int st, i;
    pid_t pid;

    (void)state;
    touch("unit.pause.pause");
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        op_testhook("unit.pause");
        _exit(present("unit.pause.release") ? 0 : 3);
    }
    for (i = 0; i < 30000 && event_pid("unit.pause") != (long)pid; i++)
        nanosleep(&tick, NULL); /* bounded at 300 s: a safety net */
    assert_int_equal(event_pid("unit.pause"), (long)pid);
    assert_int_equal(waitpid(pid, &st, WNOHANG), 0);
    touch("unit.pause.release");
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
}

static void test_unsafe_folder_is_inert(void **state)
{
    char sub[128];

    (void)state;
    setenv(OP_TESTHOOK_ENV, "relative/dir", 1);
    op_testhook("unit.rel");
    snprintf(sub, sizeof sub, "%s/open", dir);
    assert_int_equal(mkdir(sub, 0700), 0);
    assert_int_equal(chmod(sub, 0777), 0); /* writable by others */
    setenv(OP_TESTHOOK_ENV, sub, 1);
    op_testhook("unit.open");
    assert_false(present("open/unit.open"));
    setenv(OP_TESTHOOK_ENV, dir, 1);
    assert_false(present("unit.rel"));
}

/* A refusing gate removes the variable (no child inherits it) and makes
 * every later hook of this process inert; it runs last. */
static void test_gate_refuses(void **state)
{
    (void)state;
    op_testhook_gate("unit", 0, "a test says no");
    assert_null(getenv(OP_TESTHOOK_ENV));
    setenv(OP_TESTHOOK_ENV, dir, 1);
    op_testhook("unit.after");
    assert_false(present("unit.after"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_event_names_the_process),
        cmocka_unit_test(test_invalid_point_is_inert),
        cmocka_unit_test(test_pause_until_release),
        cmocka_unit_test(test_unsafe_folder_is_inert),
        cmocka_unit_test(test_gate_refuses),
    };
#if !OP_TEST_HOOKS
    return 77; /* built without the hooks: nothing to test */
#endif
    return cmocka_run_group_tests(tests, setup, teardown);
}
