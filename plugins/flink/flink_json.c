/*
 * flink_json.c - version-tolerant readers for Flink's REST JSON and the
 * small config map the plugin merges before emitting run config.
 *
 * Flink's Jackson writes NaN as the string "NaN", metric values and
 * watermarks as strings, and uses Long.MIN/MAX_VALUE as sentinels; these
 * helpers hide all of that (docs/flink.md).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <optipipe/grow.h>

#include "flink_internal.h"

/* Doubles at or beyond this magnitude can only be the Long sentinels:
 * no timestamp, size or count Flink reports gets near 9.2e18. */
#define FL_SENTINEL_MAG 9.2e18

static int parse_num_text(const char *s, double *out)
{
    char *end = NULL;
    double v;

    if (!s)
        return 0;
    while (*s == ' ')
        s++;
    if (!strcmp(s, "NaN") || !strcmp(s, "-NaN")) {
        *out = NAN;
        return 1;
    }
    if (!strcmp(s, "Infinity")) {
        *out = INFINITY;
        return 1;
    }
    if (!strcmp(s, "-Infinity")) {
        *out = -INFINITY;
        return 1;
    }
    errno = 0;
    v = strtod(s, &end);
    if (end == s)
        return 0;
    while (*end == ' ')
        end++;
    if (*end)
        return 0;
    *out = v;
    return 1;
}

int fl_num(const cJSON *it, double *out)
{
    if (!it)
        return 0;
    if (cJSON_IsNumber(it)) {
        *out = it->valuedouble;
        return 1;
    }
    if (cJSON_IsString(it))
        return parse_num_text(it->valuestring, out);
    return 0;
}

static int parse_i64_text(const char *s, int64_t *out)
{
    char *end = NULL;
    long long v;
    double d;

    if (!s)
        return 0;
    while (*s == ' ')
        s++;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (end != s && errno == 0) {
        while (*end == ' ')
            end++;
        if (!*end) {
            *out = (int64_t)v;
            return 1;
        }
    }
    /* "1.5E12" or "123.0": go through the double (not a sentinel). */
    if (!parse_num_text(s, &d) || !isfinite(d) || fabs(d) >= FL_SENTINEL_MAG)
        return 0;
    *out = (int64_t)llround(d);
    return 1;
}

int fl_i64(const cJSON *it, int64_t *out)
{
    double d;

    if (!it)
        return 0;
    if (cJSON_IsString(it))
        return parse_i64_text(it->valuestring, out);
    if (!cJSON_IsNumber(it))
        return 0;
    d = it->valuedouble;
    if (isnan(d))
        return 0;
    if (d >= FL_SENTINEL_MAG)
        *out = INT64_MAX;
    else if (d <= -FL_SENTINEL_MAG)
        *out = INT64_MIN;
    else
        *out = (int64_t)llround(d);
    return 1;
}

const cJSON *fl_get(const cJSON *obj, const char *key)
{
    const cJSON *it;

    if (!cJSON_IsObject(obj))
        return NULL;
    it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return (it && !cJSON_IsNull(it)) ? it : NULL;
}

const cJSON *fl_get2(const cJSON *obj, const char *a, const char *b)
{
    const cJSON *it = fl_get(obj, a);
    return it ? it : fl_get(obj, b);
}

const char *fl_str(const cJSON *obj, const char *key)
{
    const cJSON *it = fl_get(obj, key);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* A member that is there but no number is noted (flink_bad.c). */
int fl_getnum(const cJSON *obj, const char *key, double *out)
{
    if (fl_num(fl_get(obj, key), out))
        return 1;
    fl_bad_type(obj, key);
    return 0;
}

int fl_geti64(const cJSON *obj, const char *key, int64_t *out)
{
    if (fl_i64(fl_get(obj, key), out))
        return 1;
    fl_bad_type(obj, key);
    return 0;
}

int fl_getbool(const cJSON *obj, const char *key, int *out)
{
    const cJSON *it = fl_get(obj, key);

    if (cJSON_IsBool(it)) {
        *out = cJSON_IsTrue(it) ? 1 : 0;
        return 1;
    }
    if (cJSON_IsString(it)) {
        if (!strcmp(it->valuestring, "true")) {
            *out = 1;
            return 1;
        }
        if (!strcmp(it->valuestring, "false")) {
            *out = 0;
            return 1;
        }
    }
    return 0;
}

const char *fl_error_body(const cJSON *resp)
{
    const cJSON *errs, *first;

    if (!cJSON_IsObject(resp))
        return NULL;
    errs = fl_get(resp, "errors");
    if (!cJSON_IsArray(errs))
        return NULL;
    /* A real response never has "errors" next to other members. */
    if (cJSON_GetArraySize(resp) != 1)
        return NULL;
    first = cJSON_GetArrayItem(errs, 0);
    return cJSON_IsString(first) ? first->valuestring : "error";
}

static const struct {
    const char *ent;
    size_t len;
    char c;
} entities[] = {
    {"&gt;", 4, '>'},   {"&lt;", 4, '<'},    {"&amp;", 5, '&'},
    {"&quot;", 6, '"'}, {"&#39;", 5, '\''},  {"&#x27;", 6, '\''},
    {"<br/>", 5, '\n'}, {"<br>", 4, '\n'},   {"<br />", 6, '\n'},
};

void fl_unescape_html(const char *src, char *dst, size_t n)
{
    size_t o = 0;

    if (!n)
        return;
    while (src && *src && o + 1 < n) {
        size_t i, hit = 0;
        /* Every entity starts with '&' or '<': skip the table otherwise. */
        for (i = 0; (*src == '&' || *src == '<') &&
                    i < sizeof entities / sizeof entities[0];
             i++) {
            if (!strncmp(src, entities[i].ent, entities[i].len)) {
                dst[o++] = entities[i].c;
                src += entities[i].len;
                hit = 1;
                break;
            }
        }
        if (hit)
            continue;
        if ((unsigned char)*src >= 0x20 || *src == '\n')
            dst[o++] = *src;
        else if (*src == '\t')
            dst[o++] = ' ';
        src++;
    }
    /* Descriptions end with "<br/>": drop trailing newlines. */
    while (o > 0 && dst[o - 1] == '\n')
        o--;
    dst[o] = '\0';
}

void fl_first_line(const char *src, char *dst, size_t n)
{
    size_t o = 0;

    if (!n)
        return;
    while (src && *src && *src != '\n' && *src != '\r' && o + 1 < n) {
        dst[o++] = ((unsigned char)*src < 0x20) ? ' ' : *src;
        src++;
    }
    dst[o] = '\0';
}

/* --- lookups by id ------------------------------------------------------ */

size_t fl_hash(const char *s)
{
    size_t h = 2166136261u; /* FNV-1a */

    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

/* The slot of id: its own, or the empty one where it would go. */
static fl_byid_slot *byid_slot(const fl_byid *ix, const char *id)
{
    size_t h = fl_hash(id) & (ix->cap - 1);

    while (ix->slot[h].id && strcmp(ix->slot[h].id, id))
        h = (h + 1) & (ix->cap - 1);
    return &ix->slot[h];
}

int fl_byid_build(fl_byid *ix, const cJSON *arr, const char *key,
                  int missing_as_empty)
{
    const cJSON *it;
    size_t n = 0, cap = 8;

    ix->slot = NULL;
    ix->cap = 0;
    if (!arr)
        return OP_OK;
    cJSON_ArrayForEach(it, arr)
        n++;
    if (!n)
        return OP_OK;
    if (n > SIZE_MAX / 4 / sizeof *ix->slot)
        return OP_ENOMEM;
    while (cap < 2 * n)
        cap *= 2;
    ix->slot = calloc(cap, sizeof *ix->slot);
    if (!ix->slot)
        return OP_ENOMEM;
    ix->cap = cap;
    cJSON_ArrayForEach(it, arr)
    {
        const char *id = fl_str(it, key);
        fl_byid_slot *sl;
        if (!id && missing_as_empty)
            id = "";
        if (!id)
            continue;
        sl = byid_slot(ix, id);
        if (!sl->id) {
            sl->id = id;
            sl->first = it;
        }
        sl->last = it;
    }
    return OP_OK;
}

const cJSON *fl_byid_first(const fl_byid *ix, const char *id)
{
    return ix->cap ? byid_slot(ix, id)->first : NULL;
}

const cJSON *fl_byid_last(const fl_byid *ix, const char *id)
{
    return ix->cap ? byid_slot(ix, id)->last : NULL;
}

void fl_byid_free(fl_byid *ix)
{
    free(ix->slot);
    ix->slot = NULL;
    ix->cap = 0;
}

/* --- config ----------------------------------------------------------- */

/* Old (<= 1.19) key -> 1.20/2.x key (docs/model-flink.md), generated from the
 * one table of renames the Flink rules read too (rules/flink/lib/
 * flinkkeys.lua, by plugins/flink/plugin.cmake). */
static const struct {
    const char *old_key, *new_key;
} key_aliases[] = {
#include "flink_keys_gen.h"
};

const char *fl_canonical_key(const char *key)
{
    size_t i;

    for (i = 0; i < sizeof key_aliases / sizeof key_aliases[0]; i++)
        if (!strcmp(key, key_aliases[i].old_key))
            return key_aliases[i].new_key;
    return key;
}

static int is_alias(const char *key)
{
    return fl_canonical_key(key) != key;
}

void fl_config_init(fl_config *c)
{
    memset(c, 0, sizeof *c);
}

void fl_config_free(fl_config *c)
{
    size_t i;

    for (i = 0; i < c->n; i++) {
        free(c->items[i].key);
        free(c->items[i].value);
    }
    free(c->items);
    free(c->tab);
    memset(c, 0, sizeof *c);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

#define FL_TOMB SIZE_MAX /* a removed key's slot */

/* The hash slot holding key, or NULL. */
static size_t *config_slot(const fl_config *c, const char *key)
{
    size_t h;

    if (!c->tabcap)
        return NULL;
    h = fl_hash(key) & (c->tabcap - 1);
    while (c->tab[h]) {
        if (c->tab[h] != FL_TOMB && !strcmp(c->items[c->tab[h] - 1].key, key))
            return &c->tab[h];
        h = (h + 1) & (c->tabcap - 1);
    }
    return NULL;
}

static void config_put_slot(fl_config *c, size_t item)
{
    size_t h = fl_hash(c->items[item].key) & (c->tabcap - 1);

    while (c->tab[h])
        h = (h + 1) & (c->tabcap - 1);
    c->tab[h] = item + 1;
    c->used++;
}

/* Makes room for one more key: a table at most half used. */
static int config_reserve(fl_config *c)
{
    size_t ncap = 64, i;
    size_t *nt;

    if ((c->used + 1) * 2 <= c->tabcap)
        return 1;
    while (ncap < 4 * (c->n + 1))
        ncap *= 2;
    nt = calloc(ncap, sizeof *nt);
    if (!nt)
        return 0;
    free(c->tab);
    c->tab = nt;
    c->tabcap = ncap;
    c->used = 0;
    for (i = 0; i < c->n; i++)
        config_put_slot(c, i);
    return 1;
}

static fl_kv *config_find(const fl_config *c, const char *key)
{
    size_t *sl = config_slot(c, key);

    return sl ? &c->items[*sl - 1] : NULL;
}

void fl_config_set(fl_config *c, const char *key, const char *value)
{
    const char *k;
    fl_kv *kv;
    char *v;

    if (!key || !value || c->oom)
        return;
    k = fl_canonical_key(key);
    v = dup_str(value);
    if (!v) {
        c->oom = 1;
        return;
    }
    kv = config_find(c, k);
    if (kv) {
        free(kv->value);
        kv->value = v;
        return;
    }
    if (!config_reserve(c)) {
        free(v);
        c->oom = 1;
        return;
    }
    if (OP_GROW(c->items, c->cap, c->n + 1, 32)) {
        free(v);
        c->oom = 1;
        return;
    }
    c->items[c->n].key = dup_str(k);
    if (!c->items[c->n].key) {
        free(v);
        c->oom = 1;
        return;
    }
    c->items[c->n].value = v;
    config_put_slot(c, c->n);
    c->n++;
}

void fl_config_unset(fl_config *c, const char *key)
{
    size_t *sl = config_slot(c, fl_canonical_key(key)), i;

    if (!sl)
        return;
    i = *sl - 1;
    *sl = FL_TOMB;
    free(c->items[i].key);
    free(c->items[i].value);
    /* The last item fills the hole (as before the hash): repoint it. */
    if (i != --c->n) {
        *config_slot(c, c->items[c->n].key) = i + 1;
        c->items[i] = c->items[c->n];
    }
}

const char *fl_config_get(const fl_config *c, const char *key)
{
    const fl_kv *kv = config_find(c, fl_canonical_key(key));
    return kv ? kv->value : NULL;
}

size_t fl_config_merge_list(fl_config *c, const cJSON *list)
{
    const cJSON *it;
    size_t n = 0;
    int pass;

    if (!cJSON_IsArray(list))
        return 0;
    for (pass = 0; pass < 2; pass++) {
        cJSON_ArrayForEach(it, list)
        {
            const char *k = fl_str(it, "key");
            const cJSON *v = fl_get(it, "value");
            char num[64];
            const char *vs = NULL;

            if (!k || !*k || is_alias(k) != (pass == 0))
                continue;
            if (cJSON_IsString(v))
                vs = v->valuestring;
            else if (cJSON_IsNumber(v)) {
                snprintf(num, sizeof num, "%.17g", v->valuedouble);
                vs = num;
            } else if (cJSON_IsBool(v))
                vs = cJSON_IsTrue(v) ? "true" : "false";
            if (vs) {
                fl_config_set(c, k, vs);
                n++;
            }
        }
    }
    return n;
}
