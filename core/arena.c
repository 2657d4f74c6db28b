/*
 * arena.c - bump allocation in growing blocks. One arena per analysis
 * holds the model, so building it costs no per-object free and tearing it
 * down is one walk over the block list.
 *
 * Growing arrays are the one exception to "never free": a grown array's
 * old copy goes to a free bin of its size class and the next allocation
 * that fits takes it, and an array that is the last allocation of its
 * block grows in place. Without this, every node's maps left 2 to 3 times
 * their final size behind (issue 24: two thirds of a 100 000-stage peak).
 * A released chunk of ARENA_SPARE_MIN bytes or more (the old copy of a
 * node list or an index, which nothing of its size asks for again)
 * becomes the spare: small allocations are cut from it before a block
 * is bumped, so those bytes are used again too.
 * Strings are bump-allocated unaligned in blocks of their own.
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

/* A recycled chunk: its first bytes, while it sits in a bin. */
struct chunk {
    struct chunk *next;
    size_t size;
};

#define ARENA_BINS 48 /* bin k: chunks of [2^k, 2^(k+1)) bytes */
#define ARENA_SPARE_MIN 4096

struct arena {
    struct block *head;  /* aligned allocations */
    struct block *shead; /* strings, unaligned */
    size_t used, reserved;
    struct chunk *bins[ARENA_BINS];
    unsigned char *spare; /* a released chunk being cut up, and its */
    size_t spare_left;    /* bytes not yet handed out */
};

arena *arena_new(void)
{
    return calloc(1, sizeof(arena));
}

static void free_list(struct block *b)
{
    struct block *next;

    for (; b; b = next) {
        next = b->next;
        free(b);
    }
}

void arena_free(arena *a)
{
    if (!a)
        return;
    free_list(a->head);
    free_list(a->shead);
    free(a);
}

static struct block *block_new(arena *a, size_t want)
{
    size_t size = want > ARENA_BLOCK ? want : ARENA_BLOCK;
    struct block *b = malloc(sizeof *b + size);

    if (!b)
        return NULL;
    b->next = NULL;
    b->size = size;
    b->used = 0;
    a->reserved += sizeof *b + size;
    return b;
}

/* Bump-allocates n bytes (already rounded as the list needs) from the
 * list *head; NULL on out of memory. */
static void *bump(arena *a, struct block **head, size_t n)
{
    struct block *b = *head;
    void *p;

    if (!b || b->size - b->used < n) {
        b = block_new(a, n);
        if (!b)
            return NULL;
        /* A block made for one big object goes behind the head so the
         * head's remaining space is not wasted. */
        if (*head && n > ARENA_BLOCK) {
            b->next = (*head)->next;
            (*head)->next = b;
        } else {
            b->next = *head;
            *head = b;
        }
    }
    p = b->data + b->used;
    b->used += n;
    return p;
}

static size_t round_up(size_t size)
{
    size_t r = (size + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    return r ? r : ARENA_ALIGN;
}

static unsigned log2_floor(size_t n)
{
    unsigned k = 0;

    while (n >>= 1)
        k++;
    return k;
}

/* Chunks of a bin looked at for one that fits, before the next bin: a
 * bound, so a bin full of slightly smaller chunks costs no scan of all. */
#define ARENA_BIN_PROBES 4

/* A recycled chunk of at least rounded bytes, or NULL. Bin k holds chunks
 * of at least 2^k bytes, so the bin of ceil(log2(rounded)) fits without a
 * search; the first chunks of the bin below it are tried first (arrays of
 * the same size come back to it). */
static void *from_bin(arena *a, size_t rounded, size_t *got)
{
    unsigned k = log2_floor(rounded), probes = 0;
    struct chunk **pc, *c;

    if (k >= ARENA_BINS)
        return NULL;
    for (pc = &a->bins[k]; (c = *pc) != NULL && probes < ARENA_BIN_PROBES;
         pc = &c->next, probes++)
        if (c->size >= rounded)
            break;
    if (c && c->size < rounded)
        c = NULL;
    if (!c && (rounded & (rounded - 1)) && k + 1 < ARENA_BINS &&
        a->bins[k + 1]) {
        pc = &a->bins[k + 1];
        c = *pc;
    }
    if (!c)
        return NULL;
    *pc = c->next;
    *got = c->size;
    return c;
}

/* rounded bytes cut from the spare, or NULL when it has too few. */
static void *from_spare(arena *a, size_t rounded)
{
    void *p;

    if (a->spare_left < rounded)
        return NULL;
    p = a->spare;
    a->spare += rounded;
    a->spare_left -= rounded;
    return p;
}

static void to_bin(arena *a, void *p, size_t rounded)
{
    struct chunk *c = p;
    unsigned k = log2_floor(rounded);

    if (k >= ARENA_BINS)
        return;
    c->size = rounded;
    c->next = a->bins[k];
    a->bins[k] = c;
}

void *arena_alloc(arena *a, size_t size)
{
    size_t rounded, got;
    void *p;

    if (size > SIZE_MAX - ARENA_ALIGN)
        return NULL;
    rounded = round_up(size);
    p = from_bin(a, rounded, &got);
    if (p) {
        a->used += got;
    } else if ((p = from_spare(a, rounded)) != NULL) {
        a->used += rounded;
    } else {
        p = bump(a, &a->head, rounded);
        if (!p)
            return NULL;
        a->used += rounded;
    }
    memset(p, 0, size);
    return p;
}

void arena_release(arena *a, void *p, size_t size)
{
    size_t rounded;

    if (!p || !size || size > SIZE_MAX - ARENA_ALIGN)
        return;
    rounded = round_up(size);
    a->used -= rounded <= a->used ? rounded : a->used;
    if (rounded >= ARENA_SPARE_MIN && rounded > a->spare_left) {
        if (a->spare_left >= ARENA_ALIGN)
            to_bin(a, a->spare, a->spare_left);
        a->spare = p;
        a->spare_left = rounded;
        return;
    }
    to_bin(a, p, rounded);
}

int arena_extend(arena *a, void *p, size_t old_size, size_t new_size)
{
    struct block *b = a->head;
    size_t oldr, newr;

    if (!p || !old_size || new_size < old_size ||
        new_size > SIZE_MAX - ARENA_ALIGN)
        return -1;
    oldr = round_up(old_size);
    newr = round_up(new_size);
    /* the last piece cut from the spare grows into what is left of it */
    if ((unsigned char *)p + oldr == a->spare &&
        a->spare_left >= newr - oldr) {
        a->spare += newr - oldr;
        a->spare_left -= newr - oldr;
        a->used += newr - oldr;
        memset((unsigned char *)p + old_size, 0, new_size - old_size);
        return 0;
    }
    if (!b || (unsigned char *)p + oldr != b->data + b->used ||
        b->size - b->used < newr - oldr)
        return -1;
    b->used += newr - oldr;
    a->used += newr - oldr;
    memset((unsigned char *)p + old_size, 0, new_size - old_size);
    return 0;
}

void *arena_grow(arena *a, void *p, size_t old_size, size_t new_size)
{
    void *np;

    if (!p || !old_size)
        return arena_alloc(a, new_size);
    if (new_size <= old_size || new_size > SIZE_MAX - ARENA_ALIGN)
        return new_size <= old_size ? p : NULL;
    /* The last allocation of the head block grows where it is. */
    if (arena_extend(a, p, old_size, new_size) == 0)
        return p;
    np = arena_alloc(a, new_size);
    if (!np)
        return NULL;
    memcpy(np, p, old_size);
    arena_release(a, p, old_size);
    return np;
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
    char *d;

    if (!s)
        return NULL;
    if (n == SIZE_MAX)
        return NULL;
    d = bump(a, &a->shead, n + 1);
    if (!d)
        return NULL;
    a->used += n + 1;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *arena_keydup(arena *a, const char *s)
{
    size_t n = strlen(s);
    unsigned char *d;

    if (n > SIZE_MAX - 4)
        return NULL;
    d = bump(a, &a->shead, n + 4);
    if (!d)
        return NULL;
    a->used += n + 4;
    d += (4 - ((uintptr_t)d & 3)) & 3;
    memcpy(d, s, n + 1);
    return (char *)d;
}

char *arena_strdup(arena *a, const char *s)
{
    return s ? arena_strndup(a, s, strlen(s)) : NULL;
}

size_t arena_used(const arena *a)
{
    return a->used;
}

size_t arena_reserved(const arena *a)
{
    return a->reserved;
}
