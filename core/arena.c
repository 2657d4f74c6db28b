/*
 * arena.c - bump allocation in growing blocks. One arena per analysis
 * holds the model, so building it costs no per-object free and tearing it
 * down is one walk over the block list.
 */
#include "arena.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_BLOCK (64 * 1024)
#define ARENA_ALIGN alignof(max_align_t)

struct block {
    struct block *next;
    size_t size, used;
    alignas(max_align_t) unsigned char data[];
};

struct arena {
    struct block *head;
    size_t used;
};

arena *arena_new(void)
{
    return calloc(1, sizeof(arena));
}

void arena_free(arena *a)
{
    struct block *b, *next;

    if (!a)
        return;
    for (b = a->head; b; b = next) {
        next = b->next;
        free(b);
    }
    free(a);
}

static struct block *block_new(size_t want)
{
    size_t size = want > ARENA_BLOCK ? want : ARENA_BLOCK;
    struct block *b = malloc(sizeof *b + size);

    if (!b)
        return NULL;
    b->next = NULL;
    b->size = size;
    b->used = 0;
    return b;
}

void *arena_alloc(arena *a, size_t size)
{
    struct block *b = a->head;
    size_t rounded;
    void *p;

    if (size > SIZE_MAX - ARENA_ALIGN)
        return NULL;
    rounded = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (rounded == 0)
        rounded = ARENA_ALIGN;
    if (!b || b->size - b->used < rounded) {
        b = block_new(rounded);
        if (!b)
            return NULL;
        /* A block made for one big object goes behind the head so the
         * head's remaining space is not wasted. */
        if (a->head && rounded > ARENA_BLOCK) {
            b->next = a->head->next;
            a->head->next = b;
        } else {
            b->next = a->head;
            a->head = b;
        }
    }
    p = b->data + b->used;
    b->used += rounded;
    a->used += rounded;
    memset(p, 0, size);
    return p;
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
    char *d;

    if (!s)
        return NULL;
    if (n == SIZE_MAX)
        return NULL;
    d = arena_alloc(a, n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *arena_strdup(arena *a, const char *s)
{
    return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

size_t arena_used(const arena *a)
{
    return a->used;
}
