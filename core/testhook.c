/*
 * testhook.c - test hooks (testhook.h, docs/testing.md). A hook is inert
 * unless all of these hold, so that a production process cannot be paused
 * or made to write files by it:
 *   - the build has OP_TEST_HOOKS (CMake option, default ON; packagers
 *     can build without: every function here is then empty);
 *   - OPTIPIPE_TEST_HOOKS is set (secure_getenv: never for a setuid or
 *     otherwise privileged start) to an absolute path that is a folder,
 *     not a symlink, owned by this user and writable by nobody else;
 *   - no gate refused it (op_testhook_gate: `optipipe serve` listening
 *     beyond loopback).
 * Everything written goes into that folder under a name that is a point
 * of the code, never a value from input; a pause ends by itself after
 * OP_TESTHOOK_PAUSE_MAX_S.
 */
#define _GNU_SOURCE /* secure_getenv */
#include "testhook.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define OP_TESTHOOK_PAUSE_MAX_S 600
#define POINT_MAX 64

#if OP_TEST_HOOKS

static int refused; /* set by a gate; inherited by fork */

static int point_valid(const char *p)
{
    size_t n = 0;

    for (; p[n]; n++)
        if (!((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9') ||
              p[n] == '.' || p[n] == '_' || p[n] == '-'))
            return 0;
    return n > 0 && n < POINT_MAX && p[0] != '.';
}

/* The hooks folder, opened and checked, or -1 (why in *why when set but
 * unsafe, NULL when simply not set). */
static int hooks_open(const char **why)
{
    const char *d = refused ? NULL : secure_getenv(OP_TESTHOOK_ENV);
    struct stat st;
    int fd;

    *why = NULL;
    if (!d || !*d)
        return -1;
    if (d[0] != '/') {
        *why = "not an absolute path";
        return -1;
    }
    fd = open(d, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        *why = "not a folder (or a symlink)";
        return -1;
    }
    if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
        *why = "not owned by this user, or writable by others";
        close(fd);
        return -1;
    }
    return fd;
}

static void publish(int dfd, const char *point)
{
    char tmp[POINT_MAX + 32], line[32];
    int fd, n;

    snprintf(tmp, sizeof tmp, ".%s.%ld.tmp", point, (long)getpid());
    n = snprintf(line, sizeof line, "%ld\n", (long)getpid());
    fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    if (util_write_all(fd, line, (size_t)n) != 0 || close(fd) != 0 ||
        renameat(dfd, tmp, dfd, point) != 0)
        unlinkat(dfd, tmp, 0);
}

static int exists(int dfd, const char *point, const char *suffix)
{
    char name[POINT_MAX + 16];
    struct stat st;

    snprintf(name, sizeof name, "%s%s", point, suffix);
    return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void pause_until_released(int dfd, const char *point)
{
    const struct timespec tick = {0, 10 * 1000 * 1000};
    uint64_t end = util_now_ms() + OP_TESTHOOK_PAUSE_MAX_S * 1000ull;

    while (!exists(dfd, point, ".release")) {
        if (util_now_ms() >= end) {
            fprintf(stderr, "optipipe: warning: test hook %s: no release after %d s; "
                    "going on\n", point, OP_TESTHOOK_PAUSE_MAX_S);
            return;
        }
        nanosleep(&tick, NULL);
    }
}

void op_testhook(const char *point)
{
    int saved = errno, dfd;
    const char *why;

    if (point && point_valid(point) && (dfd = hooks_open(&why)) >= 0) {
        publish(dfd, point);
        if (exists(dfd, point, ".pause"))
            pause_until_released(dfd, point);
        close(dfd);
    }
    errno = saved;
}

void op_testhook_gate(const char *who, int allowed, const char *why)
{
    const char *d = secure_getenv(OP_TESTHOOK_ENV), *bad;
    int fd;

    if (!d)
        return;
    if (allowed && (fd = hooks_open(&bad)) >= 0) {
        close(fd);
        fprintf(stderr, "%s: notice: test hooks active in %s (%s; a test setting, "
                "never a production one)\n", who, d, OP_TESTHOOK_ENV);
        return;
    }
    if (allowed)
        why = bad ? bad : "empty";
    fprintf(stderr, "%s: warning: %s ignored: %s\n", who, OP_TESTHOOK_ENV, why);
    refused = 1;
    unsetenv(OP_TESTHOOK_ENV);
}

#else /* built without OP_TEST_HOOKS: inert */

void op_testhook(const char *point)
{
    (void)point;
}

void op_testhook_gate(const char *who, int allowed, const char *why)
{
    (void)who;
    (void)allowed;
    (void)why;
}

#endif
