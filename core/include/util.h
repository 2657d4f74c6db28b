/*
 * util.h - the small helpers every part of core would otherwise write
 * again: a monotonic clock, writing a whole buffer, the qsort comparator of
 * string arrays, a NULL-safe strdup, edit distance for "did you mean",
 * removing a folder tree, and array growth
 * (OP_GROW, from the SDK's <optipipe/grow.h>, so plugins share it).
 */
#ifndef OP_CORE_UTIL_H
#define OP_CORE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <optipipe/grow.h>

/* Nanoseconds and milliseconds of CLOCK_MONOTONIC (never goes back; only
 * differences mean anything). */
uint64_t util_now_ns(void);
uint64_t util_now_ms(void);

/* Writes all n bytes of buf to fd, again after EINTR and short writes.
 * 0, or -1 with errno (EIO when write wrote nothing). */
int util_write_all(int fd, const void *buf, size_t n);

/* qsort comparator of an array of `char *` (or `const char *`): byte order. */
int util_strp_cmp(const void *a, const void *b);

/* strdup that maps NULL to NULL. When s is not NULL and the copy fails,
 * returns NULL and sets *oom (oom may be NULL). The copy is the caller's. */
char *util_strdup(const char *s, int *oom);

/* Edit distance of a and b (insertions, deletions, substitutions and
 * swaps of neighbours, one each); SIZE_MAX when either is longer than
 * UTIL_DISTANCE_MAX bytes (the bound keeps it on the stack). */
#define UTIL_DISTANCE_MAX 120
size_t util_edit_distance(const char *a, const char *b);

/* The candidate closest to word, or NULL when none is close enough to be
 * what was meant: at most max_d edits, and fewer than half the word's
 * length (leading dashes not counted). cands[0..n) may hold NULLs (skipped).
 * Returns a pointer into cands. */
const char *util_suggest(const char *word, const char *const *cands,
                         size_t n, size_t max_d);

/* Removes path and everything below it (a file, or a folder at most
 * UTIL_TREE_DEPTH deep: deeper than any tree the zip unpacker writes, its
 * names being at most 1024 bytes), removing symlinks, never following
 * them. Returns 0 (also when path is absent) or -1 with errno; what could
 * not be removed stays. For every removal of a folder core or the server
 * made. */
#define UTIL_TREE_DEPTH 512
int util_remove_tree(const char *path);

#endif
