/*
 * arena.h - one bump allocator per analysis. The model, its strings and the
 * findings live here and are released together when the analysis ends, so
 * no part of the model needs its own free().
 */
#ifndef OP_CORE_ARENA_H
#define OP_CORE_ARENA_H

#include <stddef.h>

typedef struct arena arena;

/* Returns a new arena or NULL on out of memory. Free with arena_free(). */
arena *arena_new(void);

/* Frees every block the arena handed out. Accepts NULL. */
void arena_free(arena *a);

/* Returns size zeroed bytes aligned for any type, owned by the arena, or
 * NULL on out of memory. */
void *arena_alloc(arena *a, size_t size);

/* Copies s (NULL stays NULL) into the arena. NULL on out of memory. */
char *arena_strdup(arena *a, const char *s);

/* Like arena_strdup, at a 4-byte boundary (so a pointer to it has two
 * low bits free for a tag: model.h's mentry). */
char *arena_keydup(arena *a, const char *s);
/* Copies n bytes of s and terminates them. NULL on out of memory. */
char *arena_strndup(arena *a, const char *s, size_t n);

/* Returns a block of new_size bytes holding the first old_size bytes of p
 * (an arena allocation of old_size bytes, or NULL), the rest zeroed; p is
 * then the arena's again (grown in place or recycled: do not use it).
 * NULL on out of memory, with p untouched. */
void *arena_grow(arena *a, void *p, size_t old_size, size_t new_size);

/* Grows p, an allocation of old_size bytes, to new_size where it is (the
 * bytes beyond old_size zeroed): 0, or -1 when p is not the last
 * allocation of the current block (or the last piece cut from the
 * recycled spare) or there is no room (p is then unchanged). */
int arena_extend(arena *a, void *p, size_t old_size, size_t new_size);

/* Gives back p, an aligned allocation of size bytes no longer used, for a
 * later allocation to reuse. Not for strings. */
void arena_release(arena *a, void *p, size_t size);

/* Bytes in live allocations (handed out and not released), for
 * statistics and tests. */
size_t arena_used(const arena *a);

/* Bytes the arena took from malloc (its blocks, headers included): what
 * the model costs in memory, deterministic for a given input. */
size_t arena_reserved(const arena *a);

#endif
