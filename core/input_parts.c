/*
 * input_parts.c - logs split over several files that say so in their
 * first line, found by content. Which first lines open a part, and of
 * which log (key) at which place (order), each engine says in the engine
 * table (op_engine_parts, engine.h); here the parts of one key are put in
 * order and read as one stream (input_open_list), wherever they lie: in
 * one folder, given as separate files, in any name order. A file whose
 * first line says nothing may still be a part by its name (an engine's
 * part_name: parts written without that line); those join only the parts
 * named so in the same folder, in the order their names give.
 * Gaps in the order are the reader's to report (it sees every part's
 * first line).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "input.h"

#define PART_HEAD 4096 /* the first line that says so is short */

/* A part by its name (engine_part_named), its key scoped to its folder:
 * "<key>@<hash of the folder>". */
static int part_by_name(const char *path, const char *line, size_t len,
                        input_part *p)
{
    const char *base = strrchr(path, '/');
    uint64_t h = 1469598103934665603ull;
    size_t d = base ? (size_t)(base - path) : 0, i, n;
    char key[sizeof p->key];

    if (!engine_part_named(base ? base + 1 : path, line, len, key, sizeof key,
                           &p->order))
        return 0;
    for (i = 0; i < d; i++)
        h = (h ^ (unsigned char)path[i]) * 1099511628211ull;
    n = (size_t)snprintf(p->key, sizeof p->key, "%s@%016llx", key,
                         (unsigned long long)h);
    return n < sizeof p->key;
}

int input_part_of(const char *path, const input_limits *limits,
                  input_part *p)
{
    op_stream *s = NULL;
    const unsigned char *head;
    size_t len, i = 0;
    op_error err;
    int is = 0;

    memset(p, 0, sizeof *p);
    if (strcmp(path, "-") == 0 || input_open(path, limits, &s, &err))
        return 0;
    if (input_peek(s, PART_HEAD, &head, &len, &err) == 0) {
        while (i < len && i < PART_HEAD && head[i] != '\n')
            i++;
        is = engine_part_of((const char *)head, i, p->key, sizeof p->key,
                            &p->order) ||
             part_by_name(path, (const char *)head, i, p);
    }
    input_close(s);
    if (!is)
        return 0;
    p->path = strdup(path);
    return p->path ? 1 : -1;
}

static int cmp_part(const void *x, const void *y)
{
    const input_part *a = x, *b = y;
    int c = strcmp(a->key, b->key);

    if (c)
        return c;
    if (a->order != b->order)
        return a->order < b->order ? -1 : 1;
    return strcmp(a->path, b->path);
}

void input_parts_sort(input_part *parts, size_t n)
{
    if (n > 1)
        qsort(parts, n, sizeof *parts, cmp_part);
}

/* The length of path's folder part ("a/b/eventlog" -> 3), 0 for none. */
static size_t dir_len(const char *path)
{
    const char *s = strrchr(path, '/');

    return s ? (size_t)(s - path) : 0;
}

/* Whether path lies in the folder of d bytes that prefix names. */
static int in_dir(const char *path, const char *prefix, size_t d)
{
    return dir_len(path) == d && strncmp(path, prefix, d) == 0;
}

char *input_parts_name(const input_part *all, size_t n, size_t from,
                       size_t to)
{
    const char *first = all[from].path;
    size_t d = dir_len(first), i;
    int own = to - from > 1 && d > 0;

    /* the folder names the group when it holds this group's parts only */
    for (i = 0; own && i < n; i++)
        if (in_dir(all[i].path, first, d) != (i >= from && i < to))
            own = 0;
    return own ? strndup(first, d) : strdup(first);
}
