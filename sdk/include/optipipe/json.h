/*
 * optipipe/json.h - optional, header-only helpers for plugins that parse
 * JSON with cJSON (the built-in Flink, dbt and model plugins use them).
 * Nothing here is part of the plugin ABI: a plugin that includes it also
 * links cJSON. See docs/writing-plugins.md "JSON inputs".
 *
 * Two defences a cJSON tree needs against hostile documents:
 *  - its size: cJSON costs about 80 bytes per value (64-byte node plus the
 *    allocator's header) and a copy of every key and string, so `[0,0,...]`
 *    costs 40 times its size. op_json_cost() estimates the tree from the
 *    text in one pass without allocating; op_json_check_cost() refuses a
 *    document whose tree would pass OP_JSON_MAX_RATIO times its size (plus
 *    OP_JSON_SLACK) or OP_JSON_MAX_TREE.
 *  - its meaning: cJSON keeps duplicated keys as siblings (lookups find the
 *    first), turns 1e400 into inf and keeps 1.8e308 as is. op_json_tidy()
 *    deletes the earlier duplicates (the last value wins, as in Python and
 *    jq) and turns out-of-range numbers into null (absent), each with a
 *    warning naming its JSON path.
 */
#ifndef OPTIPIPE_JSON_H
#define OPTIPIPE_JSON_H

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder.h"
#include "common.h"

#define OP_JSON_NODE_COST 80          /* one cJSON value, malloc header in */
#define OP_JSON_MAX_RATIO 24          /* tree bytes per document byte */
#define OP_JSON_SLACK ((size_t)16 << 20) /* small documents always pass */
#define OP_JSON_MAX_TREE ((size_t)2 << 30) /* whatever the document size */
#define OP_JSON_PATH_MAX 200          /* longest path in a warning */
#define OP_JSON_MAX_WARNINGS 10       /* warnings per document, then a count */
/* op_json_tidy flag: strings that are whole numbers too ("1e400", as
 * Jackson writes metric values) are checked for overflow. */
#define OP_JSON_NUMERIC_STRINGS 1
/* A bit op_json_tidy sets in the type of a value it made null (cJSON masks
 * types with 0xFF), so that a reader warns about it only once. */
#define OP_JSON_TIDIED 0x2000

/* glibc's chunk for a malloc(n): what cJSON pays for a key or string. */
static inline size_t op_json_str_cost(size_t n)
{
    size_t c = (n + 1 + 8 + 15) & ~(size_t)15;
    return c < 32 ? 32 : c;
}

/* The bytes cJSON_ParseWithLength would allocate for buf (an upper bound
 * for valid JSON: escapes are counted at their source length). One pass,
 * no allocation; the result for invalid JSON is meaningless but bounded. */
static inline size_t op_json_cost(const char *buf, size_t len)
{
    size_t i = 0, values = 0, colons = 0, strings = 0, bytes = 0;

    while (i < len) {
        char ch = buf[i];
        if (ch == '"') {
            size_t start = ++i;
            while (i < len && buf[i] != '"')
                i += buf[i] == '\\' ? 2 : 1;
            bytes += op_json_str_cost((i < len ? i : len) - start);
            strings++;
            i++;
        } else if (ch == '{' || ch == '[' || ch == '-' ||
                   (ch >= '0' && ch <= '9') || ch == 't' || ch == 'f' ||
                   ch == 'n') {
            values++;
            i++;
            if (ch != '{' && ch != '[')
                while (i < len && buf[i] != ',' && buf[i] != ']' &&
                       buf[i] != '}' && buf[i] != ' ' && buf[i] != '\n' &&
                       buf[i] != '"')
                    i++;
        } else {
            colons += ch == ':';
            i++;
        }
    }
    /* a key is a string followed by ':' and is no value of its own */
    values += strings - (colons < strings ? colons : strings);
    return values * OP_JSON_NODE_COST + bytes;
}

/* The largest tree accepted for a document of len bytes. */
static inline size_t op_json_budget(size_t len)
{
    size_t b = len > (OP_JSON_MAX_TREE - OP_JSON_SLACK) / OP_JSON_MAX_RATIO
                   ? OP_JSON_MAX_TREE
                   : len * OP_JSON_MAX_RATIO + OP_JSON_SLACK;
    return b;
}

/* Refuses (OP_ELIMIT, err names the input) a document whose tree (cost,
 * from op_json_cost, possibly summed over several payloads of one input)
 * exceeds op_json_budget(len). Returns 0 otherwise. */
static inline int op_json_check_cost(const char *name, size_t len,
                                     size_t cost, op_error *err)
{
    if (cost <= op_json_budget(len))
        return 0;
    return op_error_set(err, OP_ELIMIT,
                        "%s: its JSON tree would take about %zu MiB, %.0f "
                        "times its %zu bytes (many tiny values); the limit "
                        "is %d times the size + %zu MiB, at most %zu MiB "
                        "(docs/inputs.md \"Memory\")",
                        name, cost >> 20, len ? (double)cost / len : 0.0,
                        len, OP_JSON_MAX_RATIO, OP_JSON_SLACK >> 20,
                        OP_JSON_MAX_TREE >> 20);
}

/* What op_json_tidy reports to: one message per fix (already formatted as
 * "PATH: what"), at most OP_JSON_MAX_WARNINGS and then one count. */
typedef void (*op_json_warn_fn)(void *ctx, const char *msg);

typedef struct op_json_tidy_ctx {
    double max_abs; /* numbers with |v| > max_abs are out of range; 0: none */
    int flags;      /* OP_JSON_NUMERIC_STRINGS */
    op_json_warn_fn warn;
    void *ud;
    /* internal */
    char path[OP_JSON_PATH_MAX];
    size_t warned, fixes;
    const cJSON **seen; /* hash of one object's keys */
    size_t seen_cap;
    int oom;
} op_json_tidy_ctx;

static inline void op_json__warn(op_json_tidy_ctx *t, const char *what,
                                 const char *extra)
{
    char msg[OP_JSON_PATH_MAX + 200];

    t->fixes++;
    if (t->warned >= OP_JSON_MAX_WARNINGS || !t->warn)
        return;
    t->warned++;
    snprintf(msg, sizeof msg, "%s: %s%s", t->path, what, extra);
    t->warn(t->ud, msg);
}

/* Appends ".key", "[\"key\"]" or "[i]" to the path; returns the old end. */
static inline size_t op_json__push(op_json_tidy_ctx *t, const char *key,
                                   size_t index)
{
    size_t end = strlen(t->path), room = sizeof t->path - end, i;
    int plain = key && *key;

    for (i = 0; key && key[i] && plain; i++)
        plain = (key[i] >= 'a' && key[i] <= 'z') ||
                (key[i] >= 'A' && key[i] <= 'Z') || key[i] == '_' ||
                key[i] == '-' || (i && key[i] >= '0' && key[i] <= '9');
    if (room > 1) {
        if (!key)
            snprintf(t->path + end, room, "[%zu]", index);
        else if (plain)
            snprintf(t->path + end, room, ".%.120s", key);
        else
            snprintf(t->path + end, room, "[\"%.120s\"]", key);
    }
    return end;
}

static inline size_t op_json__hash(const char *s)
{
    size_t h = 2166136261u; /* FNV-1a */

    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* The name two siblings must not share: a member's key (member NULL), or
 * the string at `member` of an array's objects (an id); NULL: none. */
static inline const char *op_json__name(const cJSON *it, const char *member)
{
    const cJSON *m;

    if (!member)
        return it->string;
    m = cJSON_GetObjectItemCaseSensitive(it, member);
    return cJSON_IsString(m) ? m->valuestring : NULL;
}

/* Deletes every child of parent whose name comes again in a later child
 * (the last wins), warning for each. Up to 8 children compare pairwise;
 * more use the t->seen hash. Returns the count deleted. */
static inline size_t op_json__dedup(op_json_tidy_ctx *t, cJSON *parent,
                                    const char *member, const char *what)
{
    cJSON *it, *next;
    size_t n = 0, cap = 16, h, idx, gone = 0;
    char extra[80];

    for (it = parent->child; it; it = it->next)
        n++;
    if (n < 2)
        return 0;
    while (cap < 2 * n)
        cap *= 2;
    if (n > 8 && cap > t->seen_cap) {
        const cJSON **s = (const cJSON **)realloc(t->seen, cap * sizeof *s);
        if (!s) {
            t->oom = 1;
            return 0;
        }
        t->seen = s;
        t->seen_cap = cap;
    }
    if (n > 8)
        memset(t->seen, 0, cap * sizeof *t->seen);
    /* backwards: the first time a name is met is its last occurrence */
    idx = n;
    for (it = parent->child->prev; it; it = next) {
        const char *name = op_json__name(it, member);
        cJSON *later = NULL, *k;
        size_t end;
        next = it == parent->child ? NULL : it->prev;
        idx--;
        if (!name)
            continue;
        if (n <= 8) {
            for (k = it->next; k && !later; k = k->next) {
                const char *kn = op_json__name(k, member);
                if (kn && !strcmp(kn, name))
                    later = k;
            }
        } else {
            for (h = op_json__hash(name) & (cap - 1); t->seen[h];
                 h = (h + 1) & (cap - 1))
                if (!strcmp(op_json__name(t->seen[h], member), name)) {
                    later = (cJSON *)t->seen[h];
                    break;
                }
            if (!later)
                t->seen[h] = it;
        }
        if (!later)
            continue;
        end = op_json__push(t, member ? NULL : name, idx);
        extra[0] = '\0';
        if (member)
            snprintf(extra, sizeof extra, " (\"%.60s\")", name);
        op_json__warn(t, what, extra);
        t->path[end] = '\0';
        cJSON_Delete(cJSON_DetachItemViaPointer(parent, it));
        gone++;
    }
    return gone;
}

static inline void op_json__number(op_json_tidy_ctx *t, cJSON *it)
{
    char extra[80];
    double v = it->valuedouble;

    if (isfinite(v) && (t->max_abs <= 0 || fabs(v) <= t->max_abs))
        return;
    if (isfinite(v))
        snprintf(extra, sizeof extra, " (%.3g; more than %.3g)", v,
                 t->max_abs);
    else
        snprintf(extra, sizeof extra, " (beyond a double)");
    op_json__warn(t, "number out of range, read as absent", extra);
    /* null is what every reader treats as absent; the key stays */
    it->type = cJSON_NULL | OP_JSON_TIDIED | (it->type & cJSON_StringIsConst);
    it->valuedouble = 0;
    it->valueint = 0;
}

/* A string that is all a number beyond a double ("1e400") becomes null. */
static inline void op_json__numeric_string(op_json_tidy_ctx *t, cJSON *it)
{
    const char *s = it->valuestring;
    char *end = NULL;
    double v;

    if (!s || !*s || *s == ' ')
        return;
    errno = 0;
    v = strtod(s, &end);
    if (*end || errno != ERANGE || !isinf(v))
        return;
    op_json__warn(t, "numeric string out of range, read as absent",
                  " (beyond a double)");
    cJSON_free(it->valuestring);
    it->valuestring = NULL;
    it->type = cJSON_NULL | OP_JSON_TIDIED;
}

/* Depth is bounded by cJSON's nesting limit (CJSON_NESTING_LIMIT). */
static inline void op_json__walk(op_json_tidy_ctx *t, cJSON *v)
{
    cJSON *it;
    size_t i = 0;

    if (cJSON_IsNumber(v)) {
        op_json__number(t, v);
        return;
    }
    if (cJSON_IsString(v) && (t->flags & OP_JSON_NUMERIC_STRINGS) &&
        !(v->type & cJSON_IsReference)) {
        op_json__numeric_string(t, v);
        return;
    }
    if (cJSON_IsObject(v))
        op_json__dedup(t, v, NULL, "duplicated key: the last value is kept");
    if (!cJSON_IsObject(v) && !cJSON_IsArray(v))
        return;
    for (it = v->child; it && !t->oom; it = it->next, i++) {
        size_t end = op_json__push(t, cJSON_IsObject(v) ? it->string : NULL,
                                   i);
        op_json__walk(t, it);
        t->path[end] = '\0';
    }
}

static inline void op_json__begin(op_json_tidy_ctx *t, const char *prefix,
                                  double max_abs, int flags,
                                  op_json_warn_fn warn, void *ud)
{
    memset(t, 0, sizeof *t);
    t->max_abs = max_abs;
    t->flags = flags;
    t->warn = warn;
    t->ud = ud;
    snprintf(t->path, sizeof t->path, "%.100s", prefix ? prefix : "$");
}

/* Frees the scratch table and counts the fixes left unlisted. */
static inline int op_json__end(op_json_tidy_ctx *t, const char *prefix)
{
    free((void *)t->seen);
    if (t->fixes > t->warned && t->warn) {
        char msg[OP_JSON_PATH_MAX + 100];
        snprintf(msg, sizeof msg, "%.100s: %zu more of these (not listed)",
                 prefix ? prefix : "$", t->fixes - t->warned);
        t->warn(t->ud, msg);
    }
    return t->oom ? OP_ENOMEM : 0;
}

/* Walks root once: duplicated keys keep their last value, numbers that are
 * not finite (1e400 overflowed) or beyond max_abs (when > 0) become null,
 * and with OP_JSON_NUMERIC_STRINGS so do numeric strings beyond a double.
 * Each fix is reported to warn(ud, "PATH: ...") with PATH starting at
 * `prefix` ("$" for a whole document); past OP_JSON_MAX_WARNINGS, one
 * message counts the rest. Returns 0 or OP_ENOMEM (root then partly
 * tidied). Allocates only a scratch table, freed before it returns. */
static inline int op_json_tidy(cJSON *root, const char *prefix,
                               double max_abs, int flags,
                               op_json_warn_fn warn, void *ud)
{
    op_json_tidy_ctx t;

    op_json__begin(&t, prefix, max_abs, flags, warn, ud);
    if (root)
        op_json__walk(&t, root);
    return op_json__end(&t, prefix);
}

/* Deletes the objects of array arr (at path `prefix`) whose string member
 * `member` (an id) comes again in a later object: the last one is kept.
 * Warns like op_json_tidy. *removed (may be NULL) gets the count. Returns 0
 * or OP_ENOMEM. */
static inline int op_json_dedup_ids(cJSON *arr, const char *member,
                                    const char *prefix, op_json_warn_fn warn,
                                    void *ud, size_t *removed)
{
    op_json_tidy_ctx t;
    size_t n = 0;
    char what[120];

    op_json__begin(&t, prefix, 0, 0, warn, ud);
    snprintf(what, sizeof what,
             "duplicated %.40s: the later entry with it is kept", member);
    if (cJSON_IsArray(arr))
        n = op_json__dedup(&t, arr, member, what);
    if (removed)
        *removed = n;
    return op_json__end(&t, prefix);
}

/* The warnings of a document kept until its runs exist: an
 * op_json_warn_fn target (ud = the notes) that prefixes each message with
 * `prefix` (the file name; NULL: none). */
#define OP_JSON_MAX_NOTES (OP_JSON_MAX_WARNINGS + 2)

typedef struct op_json_notes {
    const char *prefix;
    char msg[OP_JSON_MAX_NOTES][OP_ERROR_MAX];
    size_t n;
} op_json_notes;

static inline void op_json_note(void *ud, const char *msg)
{
    op_json_notes *notes = (op_json_notes *)ud;

    if (notes->n >= OP_JSON_MAX_NOTES)
        return;
    if (notes->prefix)
        snprintf(notes->msg[notes->n++], OP_ERROR_MAX, "%.200s: %.300s",
                 notes->prefix, msg); /* 200 + 2 + 300 < OP_ERROR_MAX */
    else
        snprintf(notes->msg[notes->n++], OP_ERROR_MAX, "%s", msg);
}

/* Adds every note (notes may be NULL) to run r as a run warning. */
static inline void op_json_notes_emit(const op_json_notes *notes,
                                      op_builder *b, op_run *r)
{
    size_t i;

    for (i = 0; notes && r && i < notes->n; i++)
        op_run_warning(b, r, notes->msg[i]);
}

#endif
