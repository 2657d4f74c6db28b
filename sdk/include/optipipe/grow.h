/*
 * optipipe/grow.h - growing an array by doubling, with the overflow checks
 * written once (like Lua's luaM_growvector). Header-only and libc-only, so
 * core and plugins can share it:
 *
 *     if (OP_GROW(list->items, list->cap, list->n + 1, 16))
 *         return op_error_set(err, OP_ENOMEM, "out of memory");
 *     list->items[list->n++] = item;
 */
#ifndef OPTIPIPE_GROW_H
#define OPTIPIPE_GROW_H

#include <stdint.h>
#include <stdlib.h>

#include "common.h"

/* Returns p moved into a block of at least need elements of size bytes,
 * *cap doubled (starting from min when the array is empty) until it holds
 * need. When the size overflows or realloc fails, returns p with *cap
 * unchanged: the array and its elements stay as they were. */
static inline void *op_grow_array(void *p, size_t *cap, size_t need,
                                  size_t size, size_t min)
{
    size_t ncap = *cap ? *cap : (min ? min : 1);
    void *np;

    if (need <= *cap)
        return p;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2)
            return p;
        ncap *= 2;
    }
    if (size && ncap > SIZE_MAX / size)
        return p;
    np = realloc(p, ncap * size);
    if (!np)
        return p;
    *cap = ncap;
    return np;
}

/* Makes room for need elements in the array ptr whose capacity is the
 * size_t cap (ptr and cap are lvalues; all arguments may be evaluated more
 * than once). Returns 0, or OP_ENOMEM with ptr and cap unchanged. */
#define OP_GROW(ptr, cap, need, min)                                          \
    ((size_t)(need) <= (cap)                                                  \
         ? 0                                                                  \
         : ((ptr) = op_grow_array((ptr), &(cap), (size_t)(need),             \
                                  sizeof *(ptr), (min)),                      \
            (size_t)(need) <= (cap) ? 0 : OP_ENOMEM))

#endif
