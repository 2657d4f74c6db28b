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

/* Copies n bytes of s and terminates them. NULL on out of memory. */
char *arena_strndup(arena *a, const char *s, size_t n);

/* Bytes handed out so far (for statistics and tests). */
size_t arena_used(const arena *a);

#endif
