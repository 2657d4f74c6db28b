/*
 * flink_bad.c - values the Flink plugin finds present but unusable: null
 * or of the wrong type where a number is read, or a number impossible for
 * the engine (parallelism 1e12, a negative duration). Each is left out of
 * the model and reported as a run warning naming its JSON path; the first
 * FL_BAD_NAMED of an export are named, the rest counted per job (a path
 * costs a search of the document: a budget per export keeps that linear).
 *
 * The readers (fl_getnum and friends) have dozens of call sites and take
 * no context, so the job being built is a thread-local (fl_bad_begin /
 * fl_bad_end around fl_job). The path is found only for the named values,
 * by a search from the document's root: cJSON nodes have no parent.
 */
#include <stdio.h>
#include <string.h>

#include "flink_internal.h"

/* A private bit of cJSON's type word (cJSON masks the type with 0xFF and
 * uses 256 and 512): a value reported once is not reported again when a
 * second reader (or job) reads it. */
#define FL_BAD_SEEN 0x4000

static _Thread_local fl_bad *cur;

void fl_bad_begin(fl_bad *b, const cJSON *root, const cJSON *owned,
                  size_t *named)
{
    memset(b, 0, sizeof *b);
    b->root = root;
    b->owned = owned;
    b->named_in_export = named;
    cur = b;
}

void fl_bad_end(void)
{
    cur = NULL;
}

static int plain_key(const char *k)
{
    size_t i;

    for (i = 0; k[i]; i++)
        if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= 'A' && k[i] <= 'Z') ||
              (k[i] >= '0' && k[i] <= '9' && i) || k[i] == '_' || k[i] == '-'))
            return 0;
    return i > 0;
}

/* Appends the path step to it (a member of an object or an element of an
 * array); returns the new length (cut at n - 1). */
static size_t step(char *p, size_t len, size_t n, const cJSON *it, int i)
{
    int w;

    if (len >= n - 1)
        return len;
    if (!it->string)
        w = snprintf(p + len, n - len, "[%d]", i);
    else if (plain_key(it->string))
        w = snprintf(p + len, n - len, ".%s", it->string);
    else
        w = snprintf(p + len, n - len, "[\"%s\"]", it->string);
    if (w < 0)
        return len;
    return (size_t)w >= n - len ? n - 1 : len + (size_t)w;
}

/* Depth-first search for want below at; p holds at's path (len bytes). */
static int find(const cJSON *at, const cJSON *want, char *p, size_t len,
                size_t n, int depth)
{
    const cJSON *it;
    int i = 0;

    if (at == want)
        return 1;
    if (depth > 1000 || !(cJSON_IsObject(at) || cJSON_IsArray(at)))
        return 0;
    for (it = at->child; it; it = it->next, i++) {
        size_t l = step(p, len, n, it, i);
        if (find(it, want, p, l, n, depth + 1))
            return 1;
        p[len] = '\0';
    }
    return 0;
}

static void path_of(const fl_bad *b, const cJSON *it, char *p, size_t n)
{
    snprintf(p, n, "$");
    if (b->root && find(b->root, it, p, 1, n, 0))
        return;
    snprintf(p, n, "$.archive[].json"); /* payloads live in owned */
    if (b->owned && find(b->owned, it, p, strlen(p), n, 0))
        return;
    snprintf(p, n, "$ (somewhere)");
}

void fl_bad_note(const cJSON *it, const char *why)
{
    char path[OP_JSON_PATH_MAX];

    if (!cur || !it || (it->type & FL_BAD_SEEN))
        return;
    ((cJSON *)it)->type |= FL_BAD_SEEN; /* the plugin owns the tree */
    if (*cur->named_in_export >= FL_BAD_NAMED) {
        cur->unnamed++;
        return;
    }
    (*cur->named_in_export)++;
    path_of(cur, it, path, sizeof path);
    snprintf(cur->msg[cur->n++], sizeof cur->msg[0], "%s: %s: ignored", path,
             why);
}

/* The kind of a JSON value, for a message. */
static const char *kind(const cJSON *it)
{
    if (cJSON_IsNull(it))
        return "null";
    if (cJSON_IsString(it))
        return "a string that is no number";
    if (cJSON_IsBool(it))
        return "a boolean";
    if (cJSON_IsObject(it))
        return "an object";
    if (cJSON_IsArray(it))
        return "an array";
    return "no number";
}

void fl_bad_type(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_IsObject(obj)
                          ? cJSON_GetObjectItemCaseSensitive(obj, key)
                          : NULL;
    char why[80];
    double x;

    /* a number, only not an integer one; or warned about by op_json_tidy */
    if (!it || fl_num(it, &x) || (it->type & OP_JSON_TIDIED))
        return;
    snprintf(why, sizeof why, "%s where a number is expected", kind(it));
    fl_bad_note(it, why);
}

int fl_geti64_in(const cJSON *obj, const char *key, int64_t lo, int64_t hi,
                 int64_t *out)
{
    int64_t x;
    char why[120];

    if (!fl_geti64(obj, key, &x))
        return 0;
    if (x >= lo && x <= hi) {
        *out = x;
        return 1;
    }
    if (hi == INT64_MAX) /* durations, sizes, counts */
        snprintf(why, sizeof why, "%lld is below %lld", (long long)x,
                 (long long)lo);
    else if (lo == -1) /* Flink writes -1 for "not set" */
        snprintf(why, sizeof why, "%lld is outside 1..%lld (or -1, not set)",
                 (long long)x, (long long)hi);
    else
        snprintf(why, sizeof why, "%lld is outside %lld..%lld",
                 (long long)x, (long long)lo, (long long)hi);
    fl_bad_note(cJSON_GetObjectItemCaseSensitive(obj, key), why);
    return 0;
}

int fl_getnum_in(const cJSON *obj, const char *key, double lo, double hi,
                 double *out)
{
    double x;
    char why[120];

    if (!fl_getnum(obj, key, &x))
        return 0;
    if (x != x || (x >= lo && x <= hi)) { /* NaN: "no value", kept */
        *out = x;
        return 1;
    }
    snprintf(why, sizeof why, "%g is outside %g..%g", x, lo, hi);
    fl_bad_note(cJSON_GetObjectItemCaseSensitive(obj, key), why);
    return 0;
}

void fl_bad_flush(fl_bad *b, op_builder *bl, op_run *r)
{
    size_t i;
    char msg[200];

    for (i = 0; i < b->n; i++)
        op_run_warning(bl, r, b->msg[i]);
    if (b->unnamed) {
        snprintf(msg, sizeof msg,
                 "%zu more values null, of the wrong type or impossible "
                 "(an export names the first %d): ignored",
                 b->unnamed, FL_BAD_NAMED);
        op_run_warning(bl, r, msg);
    }
}
