/*
 * optipipe/strmap.h - an open-addressing map from strings to size_t
 * values (FNV-1a, linear probing, at most 70 % full), the one plugins
 * share: node ids to positions, series keys to indexes, interned strings.
 * Header-only and libc-only, like grow.h. Zero-initialised it is empty:
 *
 *     op_strmap ix = {0};
 *     size_t pos;
 *     if (!op_strmap_get(&ix, id, &pos)) {
 *         pos = n;                          (make the entry first, then)
 *         if (op_strmap_put(&ix, id, pos, 0, NULL))
 *             return OP_ENOMEM;
 *     }
 *     op_strmap_free(&ix, 0);
 *
 * Put a key only once what its value names exists: a key left behind by
 * a failure would name an entry that was never made.
 */
#ifndef OPTIPIPE_STRMAP_H
#define OPTIPIPE_STRMAP_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

typedef struct op_strmap {
    const char **keys; /* borrowed, or the map's copies (put with copy) */
    size_t *vals;
    size_t cap, n;     /* cap: 0 or a power of two */
} op_strmap;

static inline size_t op_strmap_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;

    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return (size_t)h;
}

/* The slot of key: where it is, or the empty one where it goes; cap > 0. */
static inline size_t op_strmap_slot(const op_strmap *m, const char *key)
{
    size_t j = op_strmap_hash(key) & (m->cap - 1);

    while (m->keys[j] && strcmp(m->keys[j], key) != 0)
        j = (j + 1) & (m->cap - 1);
    return j;
}

/* Doubles the table (64 slots first). 0, or OP_ENOMEM with m unchanged. */
static inline int op_strmap_grow(op_strmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64, i;
    op_strmap t = {0};

    if (ncap < m->cap || ncap > SIZE_MAX / sizeof *t.vals)
        return OP_ENOMEM;
    t.keys = (const char **)calloc(ncap, sizeof *t.keys);
    t.vals = (size_t *)calloc(ncap, sizeof *t.vals);
    if (!t.keys || !t.vals) {
        free((void *)t.keys);
        free(t.vals);
        return OP_ENOMEM;
    }
    t.cap = ncap;
    for (i = 0; i < m->cap; i++) {
        size_t j;
        if (!m->keys[i])
            continue;
        j = op_strmap_slot(&t, m->keys[i]);
        t.keys[j] = m->keys[i];
        t.vals[j] = m->vals[i];
    }
    free((void *)m->keys);
    free(m->vals);
    t.n = m->n;
    *m = t;
    return 0;
}

/* Returns 1 and sets *val when key is in m, else 0. */
static inline int op_strmap_get(const op_strmap *m, const char *key,
                                size_t *val)
{
    size_t j;

    if (!m->cap || !key)
        return 0;
    j = op_strmap_slot(m, key);
    if (!m->keys[j])
        return 0;
    *val = m->vals[j];
    return 1;
}

/* Sets key's value to val, adding key when absent: borrowed (it must
 * outlive m), or with copy a strdup the map owns. *stored (when not NULL)
 * is the key as the map keeps it. Returns 0, or OP_ENOMEM with m as it
 * was. */
static inline int op_strmap_put(op_strmap *m, const char *key, size_t val,
                                int copy, const char **stored)
{
    size_t j;

    if ((m->n + 1) * 10 >= m->cap * 7 && op_strmap_grow(m))
        return OP_ENOMEM;
    j = op_strmap_slot(m, key);
    if (!m->keys[j]) {
        const char *k = copy ? strdup(key) : key;
        if (!k)
            return OP_ENOMEM;
        m->keys[j] = k;
        m->n++;
    }
    m->vals[j] = val;
    if (stored)
        *stored = m->keys[j];
    return 0;
}

/* Frees the table, and the keys when owned (the map's copies); m is
 * empty again. */
static inline void op_strmap_free(op_strmap *m, int owned)
{
    size_t i;

    if (owned)
        for (i = 0; i < m->cap; i++)
            free((void *)m->keys[i]);
    free((void *)m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

#endif
