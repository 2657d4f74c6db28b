/*
 * report_util.c - helpers shared by the reporters (see report_util.h).
 * Numbers take their form from fmt.c (the twin of the rules' sdk units.lua),
 * so a chart axis and a finding message name the same numbers the same way.
 */
#include "report_util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "costs.h"
#include "decision_merge.h"
#include "home.h"
#include "fmt.h"
#include "input.h"

#define DOC_MAX (64 * 1024)

int report_visible(const report_ctx *ctx, const finding *f)
{
    return !f->suppressed || ctx->show_suppressed;
}

size_t report_counts(const report_ctx *ctx, size_t count[3])
{
    size_t i, total = 0;

    count[0] = count[1] = count[2] = 0;
    for (i = 0; i < ctx->res->n; i++)
        if (report_visible(ctx, &ctx->res->f[i])) {
            count[ctx->res->f[i].sev]++;
            total++;
        }
    return total;
}

int report_fail_level(const report_ctx *ctx)
{
    return ctx->fail_on ? severity_parse(ctx->fail_on) : -1;
}

size_t report_run_findings(const report_ctx *ctx, size_t run, int *worst,
                           const finding **first)
{
    size_t i, n = 0;

    *worst = -1;
    if (first)
        *first = NULL;
    for (i = 0; i < ctx->res->n; i++) {
        const finding *f = &ctx->res->f[i];
        if (f->run_index != run || !report_visible(ctx, f))
            continue;
        if (!n && first)
            *first = f; /* sorted: the first is the most severe */
        if ((int)f->sev > *worst)
            *worst = (int)f->sev;
        n++;
    }
    return n;
}

/* A run's sort key: the rank of its first shown finding, SIZE_MAX when it
 * has none. */
typedef struct run_key {
    size_t rank, run;
} run_key;

static int run_key_cmp(const void *a, const void *b)
{
    const run_key *x = a, *y = b;

    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->run < y->run ? -1 : x->run > y->run;
}

size_t *report_run_order(const report_ctx *ctx, size_t *n)
{
    const model *m = ctx->an->m;
    run_key *keys;
    size_t *order = NULL, i, k = 0;

    *n = 0;
    if (!m->nruns || !(keys = malloc(m->nruns * sizeof *keys)))
        return NULL;
    for (i = 0; i < m->nruns; i++) {
        keys[i].rank = SIZE_MAX;
        keys[i].run = i;
    }
    for (i = 0; i < ctx->res->n; i++) {
        const finding *f = &ctx->res->f[i];
        if (f->run_index < m->nruns && keys[f->run_index].rank == SIZE_MAX &&
            report_visible(ctx, f))
            keys[f->run_index].rank = i;
    }
    for (i = 0; i < m->nruns; i++)
        if (!m->runs[i]->superseded)
            keys[k++] = keys[i];
    qsort(keys, k, sizeof *keys, run_key_cmp);
    if (k && (order = malloc(k * sizeof *order))) {
        for (i = 0; i < k; i++)
            order[i] = keys[i].run;
        *n = k;
    }
    free(keys);
    return order;
}

size_t report_run_at(const size_t *order, size_t k)
{
    return order ? order[k] : k;
}

/* Start-here order (docs/output-formats.md): errors first (a job that
 * failed comes before what a change would save), then what a finding
 * saves, largest first: money when the config gave rates (docs/costs.md),
 * else time; findings without an estimate after those with one. Stable:
 * ties keep the findings' own order (severity, then time saved). */
typedef struct sh_key {
    const finding *f;
    int error;
    double saves; /* < 0: no estimate */
    size_t at;    /* the findings' own order */
} sh_key;

static int sh_cmp(const void *a, const void *b)
{
    const sh_key *x = a, *y = b;

    if (x->error != y->error)
        return x->error ? -1 : 1;
    if (x->saves != y->saves)
        return x->saves > y->saves ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static double sh_saves(const finding *f, int priced)
{
    if (priced)
        return f->savings_basis ? f->savings : -1;
    return f->impact_ms > 0 ? f->impact_ms : -1;
}

size_t report_start_here(const report_ctx *ctx, const finding **out, size_t max)
{
    sh_key *cand = malloc((ctx->res->n + 1) * sizeof *cand);
    size_t i, j, n = 0, nc = 0;
    int pass, priced = 0;

    for (i = 0; i < ctx->res->n; i++)
        priced |= report_visible(ctx, &ctx->res->f[i]) &&
                  ctx->res->f[i].savings_basis != NULL;
    for (i = 0; i < ctx->res->n && cand; i++) {
        const finding *f = &ctx->res->f[i];
        if (!report_visible(ctx, f))
            continue;
        cand[nc].f = f;
        cand[nc].error = f->sev == SEV_ERROR;
        cand[nc].saves = sh_saves(f, priced);
        cand[nc].at = nc;
        nc++;
    }
    if (cand)
        qsort(cand, nc, sizeof *cand, sh_cmp);
    /* one per rule first, then filled up in that order */
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i < (cand ? nc : ctx->res->n) && n < max; i++) {
            const finding *f = cand ? cand[i].f : &ctx->res->f[i];
            int seen = 0;
            if (!cand && !report_visible(ctx, f))
                continue;
            for (j = 0; j < n; j++)
                seen |= pass ? out[j] == f : strcmp(out[j]->rule, f->rule) == 0;
            if (!seen)
                out[n++] = f;
        }
    free(cand);
    return n;
}

const char *report_amount(char *buf, size_t cap, double amount,
                          const char *currency)
{
    return costs_format(buf, cap, amount, currency ? currency : "USD");
}

const char *report_money(char *buf, size_t cap, const report_ctx *ctx,
                         double amount)
{
    return costs_format(buf, cap, amount,
                        ctx->applied.currency ? ctx->applied.currency : "USD");
}

size_t report_jobs_priced(const report_ctx *ctx, const char **jobs, size_t max)
{
    const model *m = ctx->an->m;
    size_t i, j, n = 0;

    for (i = 0; i < ctx->res->n && n < max; i++) {
        const finding *f = &ctx->res->f[i];
        const char *job;
        int seen = 0;
        if (!f->savings_basis || !report_visible(ctx, f) || f->run_index >= m->nruns)
            continue;
        job = model_run_job(m->runs[f->run_index]);
        for (j = 0; j < n; j++)
            seen |= !strcmp(jobs[j], job);
        if (!seen)
            jobs[n++] = job;
    }
    return n;
}

/* Whether f's savings add to a total: a finding on a run as a whole
 * restates its rule's priced node findings of that run (dbt.regression's
 * build and its slow models), so it counts only when there are none. */
static int counted(const report_ctx *ctx, const finding *f)
{
    size_t i;

    if (!f->savings_basis || !report_visible(ctx, f))
        return 0;
    if (f->node_id)
        return 1;
    for (i = 0; i < ctx->res->n; i++) {
        const finding *g = &ctx->res->f[i];
        if (g->node_id && g->savings_basis && g->run_index == f->run_index &&
            !strcmp(g->rule, f->rule) && report_visible(ctx, g))
            return 0;
    }
    return 1;
}

size_t report_savings(const report_ctx *ctx, size_t run, double *sum)
{
    size_t i, n = 0;

    *sum = 0;
    for (i = 0; i < ctx->res->n; i++) {
        const finding *f = &ctx->res->f[i];
        if (!counted(ctx, f) || (run != SIZE_MAX && f->run_index != run))
            continue;
        *sum += f->savings;
        n++;
    }
    return n;
}

size_t report_job_savings(const report_ctx *ctx, const char *job, double *sum)
{
    const model *m = ctx->an->m;
    size_t i, n = 0;

    *sum = 0;
    for (i = 0; i < ctx->res->n; i++) {
        const finding *f = &ctx->res->f[i];
        if (!counted(ctx, f) || f->run_index >= m->nruns ||
            strcmp(model_run_job(m->runs[f->run_index]), job))
            continue;
        *sum += f->savings;
        n++;
    }
    return n;
}

const struct op_run *report_finding_run(const report_ctx *ctx, const finding *f)
{
    return f->run_index < ctx->an->m->nruns ? ctx->an->m->runs[f->run_index] : NULL;
}

size_t report_first_line(const char *s)
{
    const char *nl = s ? strchr(s, '\n') : NULL;

    return s ? (nl ? (size_t)(nl - s) : strlen(s)) : 0;
}

const char *report_run_name(const struct op_run *r)
{
    return r->name ? r->name : r->id;
}

const char *report_fmt_value(char *buf, size_t n, const cJSON *v)
{
    if (cJSON_IsNumber(v)) {
        fmt_number(buf, n, v->valuedouble);
    } else if (cJSON_IsString(v)) {
        snprintf(buf, n, "%s", v->valuestring);
    } else if (cJSON_IsBool(v)) {
        snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else if (!v || cJSON_IsNull(v)) {
        snprintf(buf, n, "(unset)");
    } else {
        char *s = cJSON_PrintUnformatted(v);
        snprintf(buf, n, "%s", s ? s : "?");
        cJSON_free(s);
    }
    return buf;
}

const char *report_fmt_duration(char *buf, size_t n, double ms)
{
    return fmt_duration_ms(buf, n, ms);
}

const char *report_fmt_bytes(char *buf, size_t n, double bytes)
{
    return fmt_bytes(buf, n, bytes);
}

const char *report_fmt_time(char *buf, size_t n, int64_t ms)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    if (ms <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S UTC", &tm))
        snprintf(buf, n, "-");
    return buf;
}

/* 1 when key ends with suffix (and is longer). */
static int ends_with(const char *key, const char *suffix)
{
    size_t k = key ? strlen(key) : 0, n = strlen(suffix);
    return k > n && !strcmp(key + k - n, suffix);
}

int report_is_epoch_ms(const char *key, const cJSON *v)
{
    /* 1973 to 5138: an epoch-ms value, not a count or a duration */
    return cJSON_IsNumber(v) && (ends_with(key, "_at") || ends_with(key, "_at_ms")) &&
           v->valuedouble > 1e11 && v->valuedouble < 1e14;
}

const char *report_fmt_named(char *buf, size_t n, const char *key, const cJSON *v)
{
    if (report_is_epoch_ms(key, v))
        return report_fmt_time(buf, n, (int64_t)v->valuedouble);
    if (cJSON_IsNumber(v) && ends_with(key, "_ms"))
        return report_fmt_duration(buf, n, v->valuedouble);
    if (cJSON_IsNumber(v) && ends_with(key, "_bytes"))
        return report_fmt_bytes(buf, n, v->valuedouble);
    return report_fmt_value(buf, n, v);
}

char *report_clean_dup(const char *s, int keep_newlines)
{
    size_t len, o = 0, k;
    uint32_t cp;
    char *out;

    s = s ? s : "";
    len = strlen(s);
    out = malloc(len * 3 + 1); /* a broken byte grows to U+FFFD (3 bytes) */
    if (!out)
        return NULL;
    while ((k = utf8_next(s, &cp, NULL))) {
        s += k;
        if (cp == '\n' && keep_newlines)
            out[o++] = '\n';
        else if (cp == '\n' || cp == '\t' || cp == '\r')
            out[o++] = ' ';
        else if (!utf8_is_control(cp))
            o += utf8_put(out + o, cp);
    }
    out[o] = '\0';
    return out;
}

/* The terminal form of the character at s (see report_term_put) into
 * out[4]: returns its length there and the bytes it used in *used (0 at
 * the end of s). */
static size_t term_char(const char *s, char out[4], size_t *used)
{
    uint32_t cp;
    int bad;
    size_t k = utf8_next(s, &cp, &bad);

    *used = k;
    if (!k)
        return 0;
    if (cp == '\n' || cp == '\t' || cp == '\r')
        out[0] = ' ';
    else if (utf8_is_control(cp) || bad)
        out[0] = '?';
    else {
        memcpy(out, s, k);
        return k;
    }
    return 1;
}

void report_term_put(FILE *f, const char *s)
{
    char c[4];
    size_t used, n;

    s = s ? s : "";
    while ((n = term_char(s, c, &used))) {
        fwrite(c, 1, n, f);
        s += used;
    }
}

const char *report_term_copy(char *buf, size_t n, const char *s)
{
    char c[4];
    size_t used, k, o = 0;

    s = s ? s : "";
    while ((k = term_char(s, c, &used)) && o + k < n) {
        memcpy(buf + o, c, k);
        o += k;
        s += used;
    }
    buf[o] = '\0';
    return buf;
}

/* Bundled rule ids are dotted words; anything else never becomes a path. */
static int plain_id(const char *id)
{
    size_t i;

    if (!id || !*id || strlen(id) > 128 || id[0] == '.')
        return 0;
    for (i = 0; id[i]; i++)
        if (!isalnum((unsigned char)id[i]) && !strchr("._-", id[i]))
            return 0;
    return strstr(id, "..") == NULL;
}

char *report_rule_doc(const char *id)
{
    char path[4096 + 256];
    op_error e;
    size_t n;

    if (!plain_id(id))
        return NULL;
    snprintf(path, sizeof path, "%s/docs/rules/%s.md", op_home(), id);
    return input_read_file(path, DOC_MAX, &n, &e);
}

int report_applied_text(char *buf, size_t n, const report_applied *a)
{
    char c[4200] = "none", b[4200] = "none";

    buf[0] = '\0';
    if (!a->config && !a->baseline)
        return 0;
    if (a->config)
        snprintf(c, sizeof c, "%s (%zu finding%s ignored)", a->config,
                 a->ignored, a->ignored == 1 ? "" : "s");
    if (a->baseline)
        snprintf(b, sizeof b, "%s (%zu finding%s suppressed)", a->baseline,
                 a->suppressed, a->suppressed == 1 ? "" : "s");
    if (a->conflicts && a->conflicts->n)
        snprintf(b + strlen(b), sizeof b - strlen(b), ", %zu decision%s "
                 "differing from the run store's (the newer wins; stderr "
                 "names them)", a->conflicts->n,
                 a->conflicts->n == 1 ? "" : "s");
    snprintf(buf, n, "config: %s; baseline: %s", c, b);
    return 1;
}
