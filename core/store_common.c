/*
 * store_common.c - what both run-store backends use (store_int.h): the
 * JSON texts of a recording, the content hash, clocks and back-off, and
 * the job matching of store_find_job. One place, so that a run recorded
 * into SQLite and into PostgreSQL has the same texts and the same hash.
 */
#include "store_int.h"

#include <errno.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jsonw.h"
#include "model_json.h"
#include "util.h"

int store_text_open(store_text *t)
{
    memset(t, 0, sizeof *t);
    if (!(t->f = open_memstream(&t->buf, &t->len)))
        return OP_ENOMEM;
    /* one thread writes it: no lock per character (jw writes by fputc) */
    __fsetlocking(t->f, FSETLOCKING_BYCALLER);
    return 0;
}

void store_text_close(store_text *t)
{
    if (t->f)
        fclose(t->f);
    free(t->buf);
    memset(t, 0, sizeof *t);
}

static void text_begin(store_text *t, jw *w)
{
    rewind(t->f);
    jw_init(w, t->f, 0);
}

static const char *text_end(store_text *t)
{
    fputc(0, t->f);
    if (fflush(t->f) != 0 || ferror(t->f))
        return NULL;
    return t->buf;
}

const char *store_map_text(store_text *t, const mmap *m)
{
    jw w;
    size_t i;

    if (m->n == 0)
        return "{}"; /* most attrs, many metrics: no stream work */
    text_begin(t, &w);
    jw_obj(&w);
    for (i = 0; i < m->n; i++) {
        mvalue v = mentry_value(&m->items[i]);

        jw_key(&w, mentry_key(&m->items[i]));
        model_json_value(&w, &v);
    }
    jw_obj_end(&w);
    return text_end(t);
}

const char *store_dist_text(store_text *t, const struct op_node *n)
{
    jw w;
    size_t i;

    if (n->ndists == 0)
        return "{}";
    text_begin(t, &w);
    jw_obj(&w);
    for (i = 0; i < n->ndists; i++) {
        const op_dist *d = &n->dists[i].d;
        const double v[] = {d->count, d->min, d->p50, d->p75, d->p90,
                            d->p95, d->p99, d->max, d->mean, d->sum};
        static const char *const k[] = {"count", "min", "p50", "p75", "p90",
                                        "p95", "p99", "max", "mean", "sum"};
        size_t j;
        jw_key(&w, n->dists[i].metric);
        jw_obj(&w);
        for (j = 0; j < sizeof v / sizeof v[0]; j++) {
            jw_key(&w, k[j]);
            jw_num(&w, v[j]);
        }
        jw_obj_end(&w);
    }
    jw_obj_end(&w);
    return text_end(t);
}

const char *store_cjson_text(store_text *t, const cJSON *v, const char *empty)
{
    jw w;

    if (!v)
        return empty;
    text_begin(t, &w);
    jw_cjson(&w, v);
    return text_end(t);
}

void store_hash_text(uint64_t *hp, const char *v)
{
    uint64_t h = *hp;

    if (v)
        while (*v) {
            h ^= (unsigned char)*v++;
            h *= 1099511628211ull;
        }
    h ^= 0xff;
    h *= 1099511628211ull;
    *hp = h;
}

void store_hash_int(uint64_t *h, unsigned set, unsigned bit, int64_t v)
{
    char buf[JW_INT_TEXT];

    if (set & bit)
        jw_int_text(buf, v);
    store_hash_text(h, set & bit ? buf : NULL);
}

int64_t store_mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void store_pause_ms(int64_t ms, int64_t deadline)
{
    int64_t left = deadline - store_mono_ms();
    struct timespec ts;

    if (ms > STORE_BACKOFF_MS)
        ms = STORE_BACKOFF_MS;
    if (ms > left)
        ms = left;
    if (ms <= 0)
        return;
    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (long)(ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

int64_t store_now_ms(void)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");

    if (sde && *sde)
        return strtoll(sde, NULL, 10) * 1000;
    return (int64_t)time(NULL) * 1000;
}

void store_job_find_init(store_job_find *f, const char *given, char *key,
                         size_t keycap, char *near, size_t nearcap)
{
    size_t len = strlen(given);

    memset(f, 0, sizeof *f);
    f->given = given;
    f->key = key, f->keycap = keycap;
    f->near = near, f->nearcap = nearcap;
    near[0] = '\0';
    /* a suggestion is at most a third of the word away, and 3 at least */
    f->best_d = (len / 3 > 3 ? len / 3 : 3) + 1;
}

static void job_candidate(store_job_find *f, const char *cand, const char *key)
{
    size_t d;

    if (f->found || !cand)
        return;
    if (!strcmp(cand, f->given)) {
        snprintf(f->key, f->keycap, "%s", key);
        f->found = 1;
        return;
    }
    d = util_edit_distance(cand, f->given);
    if (d < f->best_d) {
        f->best_d = d;
        snprintf(f->near, f->nearcap, "%s", cand);
    }
}

void store_job_find_row(store_job_find *f, const char *job, const char *source,
                        const char *name)
{
    char shown[2 * STORE_JOB_KEY_MAX];

    if (!job)
        return;
    job_candidate(f, job, job);
    job_candidate(f, name, job);
    if (name && source) {
        snprintf(shown, sizeof shown, "%s %s", source, name);
        job_candidate(f, shown, job);
    }
}

int store_job_find_end(store_job_find *f, const char *path, op_error *err)
{
    if (f->found)
        return 0;
    return op_error_set(err, OP_ENOTFOUND, "%s: no job '%s'%s%s%s (`optipipe "
                        "history jobs` lists them)", path, f->given,
                        f->near[0] ? " (did you mean '" : "", f->near,
                        f->near[0] ? "'?)" : "");
}
