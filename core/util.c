/*
 * util.c - the helpers of util.h: one clock, one write loop, one comparator,
 * one strdup, one edit distance and one tree removal for the whole of core.
 */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

uint64_t util_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int util_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;

    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

uint64_t util_now_ms(void)
{
    return util_now_ns() / 1000000u;
}

int util_strp_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char *util_strdup(const char *s, int *oom)
{
    char *d;

    if (!s)
        return NULL;
    d = strdup(s);
    if (!d && oom)
        *oom = 1;
    return d;
}

size_t util_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), i, j;
    size_t r0[UTIL_DISTANCE_MAX + 1], r1[UTIL_DISTANCE_MAX + 1];
    size_t r2[UTIL_DISTANCE_MAX + 1];
    size_t *pp = r0, *prev = r1, *cur = r2, *t;

    if (la > UTIL_DISTANCE_MAX || lb > UTIL_DISTANCE_MAX)
        return SIZE_MAX;
    for (j = 0; j <= lb; j++)
        prev[j] = j;
    for (i = 1; i <= la; i++) {
        cur[0] = i;
        for (j = 1; j <= lb; j++) {
            size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < best)
                best = prev[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                pp[j - 2] + 1 < best) /* a swap of neighbours is one edit */
                best = pp[j - 2] + 1;
            cur[j] = best;
        }
        t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[lb];
}

const char *util_suggest(const char *word, const char *const *cands,
                         size_t n, size_t max_d)
{
    const char *best = NULL;
    size_t len = strlen(word), bd = SIZE_MAX, i;

    for (i = 0; i < n; i++) {
        size_t d;
        if (!cands[i])
            continue;
        d = util_edit_distance(word, cands[i]);
        if (d < bd) {
            bd = d;
            best = cands[i];
        }
    }
    while (*word == '-') /* "--x": only the name counts for the length */
        word++, len--;
    /* at least half of the word must survive: "-x" is no typo of "-q" */
    if (!best || bd == 0 || bd > max_d || 2 * bd >= len)
        return NULL;
    return best;
}

/* Removes name inside the folder at and, for a folder, all it holds;
 * symlinks are removed, never followed. */
static int remove_at(int at, const char *name, int depth)
{
    struct stat st;
    DIR *d;
    struct dirent *e;
    int fd, rc = 0;

    if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW))
        return errno == ENOENT ? 0 : -1;
    if (!S_ISDIR(st.st_mode))
        return unlinkat(at, name, 0) && errno != ENOENT ? -1 : 0;
    if (depth > UTIL_TREE_DEPTH) {
        errno = ELOOP;
        return -1;
    }
    fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || !(d = fdopendir(fd))) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (remove_at(dirfd(d), e->d_name, depth + 1))
            rc = -1;
    }
    closedir(d);
    if (unlinkat(at, name, AT_REMOVEDIR) && errno != ENOENT)
        rc = -1;
    return rc;
}

int util_remove_tree(const char *path)
{
    return remove_at(AT_FDCWD, path, 0);
}
