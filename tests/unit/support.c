/*
 * support.c - helpers shared by the unit tests (see support.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

const mentry *tm_get(const mmap *map, const char *key)
{
    return mmap_get(map, key);
}

int tm_has(const mmap *map, const char *key)
{
    return tm_get(map, key) != NULL;
}

double tm_num(const mmap *map, const char *key)
{
    const mentry *e = tm_get(map, key);

    if (!e)
        fail_msg("missing metric %s", key);
    return e->v.t == MV_INT ? (double)e->v.u.i : e->v.u.n;
}

int64_t tm_inum(const mmap *map, const char *key)
{
    const mentry *e = tm_get(map, key);

    if (!e)
        fail_msg("missing metric %s", key);
    assert_int_equal(e->v.t, MV_INT);
    return e->v.u.i;
}

const char *tm_str(const mmap *map, const char *key)
{
    const mentry *e = tm_get(map, key);

    if (!e)
        fail_msg("missing key %s", key);
    assert_int_equal(e->v.t, MV_STR);
    return e->v.u.s;
}

const struct op_node *tm_node(const struct op_run *r, const char *id)
{
    const struct op_node *n = model_find_node(r, id);

    if (!n)
        fail_msg("missing node %s", id);
    return n;
}

const op_dist *tm_dist(const struct op_node *n, const char *metric)
{
    size_t i;

    for (i = 0; i < n->ndists; i++)
        if (!strcmp(n->dists[i].metric, metric))
            return &n->dists[i].d;
    return NULL;
}

int tm_has_warning(const struct op_run *r, const char *needle)
{
    size_t i;

    for (i = 0; i < r->nwarnings; i++)
        if (strstr(r->warnings[i], needle))
            return 1;
    return 0;
}

void db_add(dbuf *b, const void *src, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap : 1024;
        while (ncap < b->n + n + 1)
            ncap *= 2;
        b->p = realloc(b->p, ncap);
        assert_non_null(b->p);
        b->cap = ncap;
    }
    if (n)
        memcpy(b->p + b->n, src, n);
    b->n += n;
    b->p[b->n] = 0;
}

void db_u8(dbuf *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    db_add(b, &c, 1);
}

void db_le32(dbuf *b, uint32_t v)
{
    unsigned char c[4] = {(unsigned char)v, (unsigned char)(v >> 8),
                          (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    db_add(b, c, 4);
}

void db_be32(dbuf *b, uint32_t v)
{
    unsigned char c[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    db_add(b, c, 4);
}

void db_be16(dbuf *b, unsigned v)
{
    db_u8(b, v >> 8);
    db_u8(b, v & 0xff);
}
