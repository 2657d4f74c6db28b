/*
 * dbt_util.c - small helpers of the dbt plugin: typed cJSON lookups,
 * ISO-8601 timestamps to epoch microseconds (no locale, no timezone
 * database: a days-from-civil computation), a string map, unique_id
 * splitting, the schema version number of an artifact and the slot
 * state's lifetime.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dbt_internal.h"

/* metadata.dbt_schema_version ("https://schemas.getdbt.com/.../v6.json") -> 6. */
int dbt_schema_number(const char *url)
{
    const char *v;
    int n = 0;

    if (!url || !(v = strrchr(url, '/')) || v[1] != 'v')
        return 0;
    for (v += 2; isdigit((unsigned char)*v) && n < 1000; v++)
        n = n * 10 + (*v - '0');
    return n;
}

const char *dbt_jstr(const cJSON *obj, const char *key)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

int dbt_jnum(const cJSON *obj, const char *key, double *out)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;

    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble))
        return 0;
    *out = v->valuedouble;
    return 1;
}

const cJSON *dbt_jobj(const cJSON *obj, const char *key)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return cJSON_IsObject(v) ? v : NULL;
}

const cJSON *dbt_jarr(const cJSON *obj, const char *key)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return cJSON_IsArray(v) ? v : NULL;
}

/* --- time ---------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil); exact for every year a timestamp can carry. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Reads exactly n digits at *p; returns -1 when they are not there. */
static int read_digits(const char **p, int n)
{
    int v = 0, i;

    for (i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*p)[i]))
            return -1;
        v = v * 10 + ((*p)[i] - '0');
    }
    *p += n;
    return v;
}

static int month_days(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30,
                                 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : days[m - 1];
}

/* The fractional part after '.', as microseconds (digits beyond the sixth
 * are read and dropped: Fusion writes nanoseconds). */
static int read_fraction(const char **p, int64_t *us)
{
    int ndig = 0;
    int64_t v = 0;

    while (isdigit((unsigned char)**p)) {
        if (ndig < 6)
            v = v * 10 + (**p - '0');
        ndig++;
        (*p)++;
        if (ndig > 30)
            return 0;
    }
    if (ndig == 0)
        return 0;
    for (; ndig < 6; ndig++)
        v *= 10;
    *us = v;
    return 1;
}

/* An optional 'Z' or ±HH[:]MM; stores the offset east of UTC in seconds. */
static int read_zone(const char **p, int *offset_s)
{
    int sign, hh, mm;

    *offset_s = 0;
    if (**p == 'Z' || **p == 'z') {
        (*p)++;
        return 1;
    }
    if (**p != '+' && **p != '-')
        return 1;
    sign = **p == '-' ? -1 : 1;
    (*p)++;
    if ((hh = read_digits(p, 2)) < 0 || hh > 23)
        return 0;
    if (**p == ':')
        (*p)++;
    if ((mm = read_digits(p, 2)) < 0 || mm > 59)
        return 0;
    *offset_s = sign * (hh * 3600 + mm * 60);
    return 1;
}

int dbt_parse_time(const char *s, int64_t *us)
{
    const char *p = s;
    int y, mo, d, h, mi, sec, off;
    int64_t frac = 0, days;

    if (!s)
        return 0;
    if ((y = read_digits(&p, 4)) < 0 || *p++ != '-' ||
        (mo = read_digits(&p, 2)) < 1 || mo > 12 || *p++ != '-' ||
        (d = read_digits(&p, 2)) < 1 || d > month_days(y, mo))
        return 0;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return 0;
    p++;
    if ((h = read_digits(&p, 2)) < 0 || h > 23 || *p++ != ':' ||
        (mi = read_digits(&p, 2)) < 0 || mi > 59 || *p++ != ':' ||
        (sec = read_digits(&p, 2)) < 0 || sec > 60)
        return 0;
    if (*p == '.' || *p == ',') {
        p++;
        if (!read_fraction(&p, &frac))
            return 0;
    }
    if (!read_zone(&p, &off) || *p != '\0')
        return 0;
    days = days_from_civil(y, mo, d);
    *us = ((days * 86400 + h * 3600 + mi * 60 + sec) - off) * 1000000 + frac;
    return 1;
}

int64_t dbt_us_to_ms(int64_t us)
{
    int64_t q = us / 1000;
    return (us % 1000 < 0) ? q - 1 : q;
}

char *dbt_strdup(const char *s, int *oom)
{
    char *c;

    if (!s)
        return NULL;
    c = strdup(s);
    if (!c && oom)
        *oom = 1;
    return c;
}

/* --- unique_id ------------------------------------------------------------- */

static void copy_span(char *buf, size_t cap, const char *s, size_t n)
{
    if (!cap)
        return;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
}

void dbt_id_type(const char *id, char *buf, size_t cap)
{
    const char *dot = strchr(id, '.');
    copy_span(buf, cap, id, dot ? (size_t)(dot - id) : 0);
}

void dbt_id_package(const char *id, char *buf, size_t cap)
{
    const char *a = strchr(id, '.'), *b;

    if (!a) {
        copy_span(buf, cap, "", 0);
        return;
    }
    b = strchr(a + 1, '.');
    copy_span(buf, cap, a + 1, b ? (size_t)(b - a - 1) : strlen(a + 1));
}

/* A dbt test hash: exactly 10 lowercase hex digits. */
static int is_test_hash(const char *s)
{
    size_t i;

    for (i = 0; i < 10; i++)
        if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
            return 0;
    return s[10] == '\0';
}

void dbt_id_name(const char *id, char *buf, size_t cap)
{
    const char *a = strchr(id, '.'), *b = a ? strchr(a + 1, '.') : NULL;
    const char *name = b ? b + 1 : (a ? a + 1 : id);
    size_t n = strlen(name);
    const char *last = strrchr(name, '.');

    if ((strncmp(id, "test.", 5) == 0 || strncmp(id, "unit_test.", 10) == 0) &&
        last && is_test_hash(last + 1))
        n = (size_t)(last - name);
    copy_span(buf, cap, name, n);
}

/* --- slot state --------------------------------------------------------- */

dbt_state *dbt_state_get(op_builder *b)
{
    void **slot = op_plugin_slot(b);

    if (!slot)
        return NULL;
    if (!*slot)
        *slot = calloc(1, sizeof(dbt_state));
    return *slot;
}

void dbt_rrun_free(dbt_rrun *r)
{
    size_t i;

    if (!r)
        return;
    for (i = 0; i < r->n; i++)
        free(r->nodes[i].id);
    free(r->nodes);
    op_strmap_free(&r->index, 0);
    free(r->run_id);
    free(r->which);
    free(r->select);
    free(r->origin);
    free(r->packages);
    free(r->project_dir);
    free(r);
}

static void mnode_free(dbt_mnode *n)
{
    size_t i;

    free(n->id);
    free(n->resource_type);
    free(n->name);
    free(n->package);
    free(n->materialized);
    free(n->file);
    free(n->tags);
    free(n->unique_key);
    free(n->incremental_strategy);
    free(n->full_refresh);
    free(n->relation_name);
    free(n->attached_node);
    free(n->test_name);
    free(n->severity);
    free(n->on_schema_change);
    free(n->checksum);
    free(n->macros);
    for (i = 0; i < n->ndeps; i++)
        free(n->deps[i]);
    free(n->deps);
}

void dbt_manifest_free(dbt_manifest *m)
{
    size_t i;

    if (!m)
        return;
    for (i = 0; i < m->n; i++)
        mnode_free(&m->nodes[i]);
    free(m->nodes);
    op_strmap_free(&m->index, 0);
    free(m->project);
    free(m->invocation);
    free(m->dbt_version);
    free(m->adapter);
    free(m->origin);
    free(m->notes);
    free(m);
}

void dbt_state_free(dbt_state *st)
{
    size_t i;

    if (!st)
        return;
    for (i = 0; i < st->nruns; i++)
        dbt_rrun_free(st->runs[i]);
    free(st->runs);
    for (i = 0; i < st->nmanifests; i++)
        dbt_manifest_free(st->manifests[i]);
    free(st->manifests);
    free(st);
}
