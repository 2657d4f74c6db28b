/*
 * spark_json.c - makes an event parsed by cJSON read as Spark's own reader
 * (Jackson's readTree in JsonProtocol) would read it, and keeps values no
 * Spark writes out of the model:
 *   - a key that appears twice in one object: Jackson keeps the last value,
 *     cJSON's lookups find the first, so the earlier members are removed;
 *   - a number beyond +-SP_NUM_LIMIT (1e400, 2^64 + 1): turned into a
 *     marker that reads as absent, so no clamped value reaches a sum or a
 *     rule ("slowest task ran 106751991167d").
 * Each case gives a run warning naming the line and the field; repeats are
 * named SP_MAX_NUM_WARNED times per field, then counted, so a hostile log
 * cannot flood the warnings. The readers every other file takes values
 * with (sp_jnum, sp_jint, sp_jstr) are here too, beside what they rely on.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spark_internal.h"

#define PATH_MAX_LEN 160

/* --- readers: every value the plugin takes from an event ------------------ */

int64_t sp_jnum(const cJSON *v, int64_t def)
{
    /* Clamped to +-2^53, where doubles stop being exact: sums and
     * differences of event values then cannot overflow int64_t. */
    const double lim = 9007199254740992.0;

    if (!cJSON_IsNumber(v) || v->valuedouble != v->valuedouble)
        return def;
    if (v->valuedouble >= lim)
        return (int64_t)lim;
    if (v->valuedouble <= -lim)
        return -(int64_t)lim;
    return (int64_t)v->valuedouble;
}

int64_t sp_jint(const cJSON *o, const char *key, int64_t def)
{
    return sp_jnum(cJSON_GetObjectItemCaseSensitive(o, key), def);
}

const char *sp_jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int sp_out_of_range(const cJSON *v)
{
    return cJSON_IsNull(v) && v->valuedouble != 0;
}

/* Appends ".key" (or "key" at the top) or "[i]" to path, printable. */
static void path_join(char *out, const char *path, const char *key, int idx)
{
    size_t n = strlen(path), i;

    memcpy(out, path, n + 1);
    if (!key) {
        snprintf(out + n, PATH_MAX_LEN - n, "[%d]", idx);
        return;
    }
    if (n && n + 1 < PATH_MAX_LEN)
        out[n++] = '.';
    for (i = 0; key[i] && n + 1 < PATH_MAX_LEN; i++) /* plain ASCII only */
        out[n++] = key[i] >= 0x20 && key[i] < 0x7f ? key[i] : '?';
    out[n] = '\0';
}

/* The field a path names, array positions left out: the unit repeats
 * are counted by. */
static void field_of(char *out, size_t cap, const char *path)
{
    size_t o = 0;
    int in_idx = 0;

    for (; *path && o + 1 < cap; path++) {
        if (*path == '[')
            in_idx = 1;
        else if (*path == ']')
            in_idx = 0;
        else if (in_idx)
            continue;
        out[o++] = *path;
    }
    out[o] = '\0';
}

/* Counts one more out-of-range value of the field; whether to name it. */
static int num_note(sp_app *a, const char *path)
{
    char f[sizeof a->num_fields[0].path];
    int i;

    field_of(f, sizeof f, path);
    for (i = 0; i < a->nnum_fields; i++)
        if (strcmp(a->num_fields[i].path, f) == 0)
            return ++a->num_fields[i].count <= SP_MAX_NUM_WARNED;
    if (a->nnum_fields == SP_MAX_NUM_FIELDS) {
        a->num_other++;
        return 0;
    }
    memcpy(a->num_fields[a->nnum_fields].path, f, sizeof f);
    a->num_fields[a->nnum_fields++].count = 1;
    return 1;
}

static void check_number(sp_app *a, cJSON *v, const char *path)
{
    double d = v->valuedouble;
    char num[40];

    if (fabs(d) <= SP_NUM_LIMIT)
        return;
    if (num_note(a, path)) {
        if (isinf(d))
            snprintf(num, sizeof num, "%s", d > 0 ? "above 1.8e308"
                                                  : "below -1.8e308");
        else
            snprintf(num, sizeof num, "%.17g", d);
        sp_warn(a, "line %llu: %s %s is out of range (beyond +-2^53); "
                   "ignored (the value is absent from the model)",
                (unsigned long long)a->last_line_no, path, num);
    }
    v->type = cJSON_NULL;
    v->valuedouble = HUGE_VAL; /* the marker sp_out_of_range() reads */
    v->valueint = 0;
}

typedef struct member {
    cJSON *it;
    size_t pos;
} member;

static int cmp_member(const void *x, const void *y)
{
    const member *a = x, *b = y;
    int c = strcmp(a->it->string, b->it->string);

    if (c)
        return c;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

static void drop_duplicate(sp_app *a, cJSON *obj, cJSON *it, const char *path)
{
    char p[PATH_MAX_LEN];

    if (++a->dup_keys <= SP_MAX_NUM_WARNED) {
        path_join(p, path, it->string, 0);
        sp_warn(a, "line %llu: key %s appears more than once; the last "
                   "value is used (as Spark's reader does)",
                (unsigned long long)a->last_line_no, p);
    }
    cJSON_Delete(cJSON_DetachItemViaPointer(obj, it));
}

/* Removes every member of obj whose key appears again later. Small
 * objects are compared pairwise; large ones through a sorted copy, so a
 * line of a million keys stays O(n log n). */
static int dedup_object(sp_app *a, cJSON *obj, const char *path)
{
    cJSON *it, *next;
    member *m;
    size_t n = 0, i;

    for (it = obj->child; it; it = it->next)
        n++;
    if (n < 2)
        return 0;
    if (n <= 16) {
        for (it = obj->child; it; it = next) {
            cJSON *later;
            next = it->next;
            for (later = next; later; later = later->next)
                if (strcmp(it->string, later->string) == 0)
                    break;
            if (later)
                drop_duplicate(a, obj, it, path);
        }
        return 0;
    }
    m = malloc(n * sizeof *m);
    if (!m) {
        a->oom = 1;
        return -1;
    }
    for (i = 0, it = obj->child; it; it = it->next, i++)
        m[i] = (member){it, i}; /* parsed members always have a key */
    qsort(m, n, sizeof *m, cmp_member);
    for (i = 0; i + 1 < n; i++)
        if (strcmp(m[i].it->string, m[i + 1].it->string) == 0)
            drop_duplicate(a, obj, m[i].it, path);
    free(m);
    return 0;
}

static int walk(sp_app *a, cJSON *v, const char *path)
{
    char p[PATH_MAX_LEN];
    cJSON *it;
    int i = 0;

    if (cJSON_IsNumber(v)) {
        check_number(a, v, path);
        return 0;
    }
    if (cJSON_IsObject(v) && dedup_object(a, v, path))
        return -1;
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
        return 0;
    for (it = v->child; it; it = it->next, i++) {
        if (!cJSON_IsNumber(it) && !cJSON_IsObject(it) && !cJSON_IsArray(it))
            continue;
        path_join(p, path, cJSON_IsObject(v) ? it->string : NULL, i);
        if (walk(a, it, p))
            return -1;
    }
    return 0;
}

int sp_json_sanitize(sp_app *a, cJSON *o)
{
    return walk(a, o, "");
}
