/*
 * input_parts.c - logs split over several files that say so in their
 * first line, found by content, never by name: Databricks rolls one app's
 * event log over into eventlog-<date>--<time>[.gz] files plus the current
 * eventlog, each starting with
 *   {"Event":"DBCEventLoggingListenerMetadata",...,"Rollover Number":N,
 *    "SparkContext Id":ID}
 * The parts of one app share the SparkContext Id and are read in Rollover
 * Number order as one stream (input_open_list), wherever they lie: in one
 * folder, given as separate files, in any name order. Gaps in the numbers
 * are the reader's to report (it sees every part's first line).
 */
#include <stdlib.h>
#include <string.h>

#include "input.h"

#define PART_HEAD 4096 /* the metadata line is ~160 bytes */

static const char part_event[] = "\"DBCEventLoggingListenerMetadata\"";

/* The digits of the number after "key": in line (the raw text: the
 * SparkContext Id is beyond a double's exact range). Returns the count of
 * digits copied into out (cap > 0), 0 when absent. */
static size_t raw_number(const char *line, const char *key, char *out,
                         size_t cap)
{
    const char *p = strstr(line, key);
    size_t n = 0;

    if (!p)
        return 0;
    p += strlen(key);
    while (*p == ' ' || *p == ':')
        p++;
    if (*p == '-' && n + 1 < cap)
        out[n++] = *p++;
    while (*p >= '0' && *p <= '9' && n + 1 < cap)
        out[n++] = *p++;
    out[n] = '\0';
    return *p >= '0' && *p <= '9' ? 0 : n; /* too long: not a part */
}

int input_part_of(const char *path, const input_limits *limits,
                  input_part *p)
{
    op_stream *s = NULL;
    const unsigned char *head;
    size_t len, i = 0;
    char line[PART_HEAD + 1], num[24];
    op_error err;
    int is = 0;

    memset(p, 0, sizeof *p);
    if (strcmp(path, "-") == 0 || input_open(path, limits, &s, &err))
        return 0;
    if (input_peek(s, PART_HEAD, &head, &len, &err) == 0) {
        while (i < len && head[i] != '\n' && i < PART_HEAD) {
            line[i] = (char)head[i];
            i++;
        }
        line[i] = '\0';
        /* the event name first, as Databricks writes it */
        is = strncmp(line, "{\"Event\":", 9) == 0 &&
             strncmp(line + 9, part_event, sizeof part_event - 1) == 0 &&
             raw_number(line, "\"SparkContext Id\"", p->key,
                        sizeof p->key) > 0 &&
             raw_number(line, "\"Rollover Number\"", num, sizeof num) > 0;
    }
    input_close(s);
    if (!is)
        return 0;
    p->order = strtoll(num, NULL, 10);
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
