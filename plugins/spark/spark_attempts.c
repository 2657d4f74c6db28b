/*
 * spark_attempts.c - the attempts of one application (YARN/EMR retries:
 * the same App ID, App Attempt ID 1, 2, ...) as one run with retries.
 *
 * The logs of the attempts may come as separate inputs in any order, so a
 * log with an App Attempt ID is not written out when read: its state is
 * kept in the plugin slot, the latest attempt of each app whole, every
 * attempt as a summary (sp_attempt). finish() writes one run per app, id
 * the App ID, analyzed from its latest attempt; the earlier attempts are
 * the app's failures, in the `attempts` series with their end reasons and
 * in the `failed_attempts*` metrics (docs/model-spark.md "Attempts").
 * What this keeps grows with the apps, never with their tasks: a closed
 * sp_app holds summaries only.
 */
#include <stdlib.h>
#include <string.h>

#include "spark_internal.h"

typedef struct sp_attempt {
    long attempt;
    char *origin;          /* the input it came from */
    int64_t started, ended; /* -1: unknown */
    int64_t jobs, failed_jobs, tasks, failed_tasks;
    int ended_cleanly;      /* ApplicationEnd read */
    char reason[SP_TEXT_MAX + 64];
    int nwarnings;          /* of an attempt not analyzed: kept here */
    char warning[SP_TEXT_MAX];
} sp_attempt;

typedef struct sp_retried {
    char *app_id;
    sp_app *latest; /* the whole state of the latest attempt read */
    sp_attempt *att;
    size_t natt, cap;
} sp_retried;

typedef struct sp_retries {
    sp_retried *apps;
    size_t n, cap;
} sp_retries;

/* The last job to end, or NULL. */
static const sp_job *last_job(const sp_app *a)
{
    const sp_job *last = NULL;
    size_t i;

    for (i = 0; i < a->njobs; i++)
        if (a->jobs[i].ended &&
            (!last || a->jobs[i].completed_at >= last->completed_at))
            last = &a->jobs[i];
    return last;
}

/* Why the attempt ended as its log tells (a later attempt then followed:
 * the cluster manager counted it as failed whatever the log says). */
static void end_reason(const sp_app *a, char *out, size_t cap)
{
    const sp_job *j = last_job(a);

    if (!a->has_end)
        snprintf(out, cap, "the log ends without SparkListenerApplicationEnd "
                           "(the driver stopped without closing it)");
    else if (a->has_exit_code && a->exit_code != 0)
        snprintf(out, cap, "exit code %lld", (long long)a->exit_code);
    else if (j && !j->succeeded)
        snprintf(out, cap, "job %lld failed%s%s", (long long)j->id,
                 j->failure ? ": " : "", j->failure ? j->failure : "");
    else
        snprintf(out, cap, "the log shows no failure: the driver failed "
                           "after its last event");
}

static void summarize(const sp_app *a, const char *origin, sp_attempt *t)
{
    size_t i;

    memset(t, 0, sizeof *t);
    t->attempt = strtol(a->attempt_id, NULL, 10);
    t->origin = sp_strdup_max(origin, 4096);
    t->started = a->app_start;
    t->ended = a->has_end && a->app_end > 0 ? a->app_end : a->last_time;
    t->ended_cleanly = a->has_end;
    t->jobs = (int64_t)a->njobs;
    for (i = 0; i < a->njobs; i++)
        t->failed_jobs += a->jobs[i].ended && !a->jobs[i].succeeded;
    for (i = 0; i < a->nstages; i++) {
        const sp_stage *s = a->stages[i];
        t->tasks += s->completed + s->failed + s->killed;
        t->failed_tasks += s->failed;
    }
    end_reason(a, t->reason, sizeof t->reason);
    t->nwarnings = a->nwarnings + (a->warnings_dropped > 0);
    if (a->nwarnings)
        snprintf(t->warning, sizeof t->warning, "%s", a->warnings[0]);
}

static sp_retried *find_app(sp_app *a, sp_retries *st, const char *id)
{
    size_t i;

    for (i = 0; i < st->n; i++)
        if (strcmp(st->apps[i].app_id, id) == 0)
            return &st->apps[i];
    if (st->n == st->cap &&
        sp_grow(a, (void **)&st->apps, st->n, &st->cap, sizeof *st->apps))
        return NULL;
    memset(&st->apps[st->n], 0, sizeof st->apps[0]);
    st->apps[st->n].app_id = sp_strdup_max(id, 4096);
    if (!st->apps[st->n].app_id)
        return NULL;
    return &st->apps[st->n++];
}

int sp_attempt_defer(sp_app *a, const char *origin)
{
    void **slot = op_plugin_slot(a->b);
    sp_retries *st;
    sp_retried *ap;
    sp_attempt t;
    sp_app *keep;
    size_t i;

    if (!slot)
        return -1;
    if (!*slot && !(*slot = calloc(1, sizeof(sp_retries))))
        return -1;
    st = *slot;
    if (!(ap = find_app(a, st, a->app_id)))
        return -1;
    summarize(a, origin, &t);
    if (!t.origin || (ap->natt == ap->cap &&
                      sp_grow(a, (void **)&ap->att, ap->natt, &ap->cap,
                              sizeof t))) {
        free(t.origin);
        return -1;
    }
    for (i = 0; i < ap->natt; i++)
        if (ap->att[i].attempt == t.attempt)
            break;
    if (i < ap->natt) { /* the same attempt again: the later input wins */
        sp_warn(a, "attempt %ld of %s was also read from %s: this input "
                   "is used",
                t.attempt, a->app_id, ap->att[i].origin);
        free(ap->att[i].origin);
        ap->att[i] = t;
    } else {
        ap->att[ap->natt++] = t;
    }
    /* the run is created now so that every attempt's input is its origin */
    op_run_get(a->b, "spark", a->app_id);
    if (ap->latest) {
        long held = strtol(ap->latest->attempt_id, NULL, 10);
        if (held > t.attempt)
            return 1; /* an older attempt: its summary is enough */
        sp_app_free(ap->latest);
        free(ap->latest);
        ap->latest = NULL;
    }
    if (!(keep = malloc(sizeof *keep)))
        return -1;
    *keep = *a; /* moved: a is left empty (sp_app_free does nothing) */
    keep->input = "";
    ap->latest = keep;
    memset(a, 0, sizeof *a);
    return 0;
}

static int cmp_attempt(const void *x, const void *y)
{
    const sp_attempt *a = x, *b = y;

    return (a->attempt > b->attempt) - (a->attempt < b->attempt);
}

/* The attempts series, metrics and attrs of the app's run. */
static void emit_attempts(op_builder *b, op_run *r, sp_retried *ap)
{
    int64_t failed_ms = 0;
    size_t i;
    char num[32];

    qsort(ap->att, ap->natt, sizeof *ap->att, cmp_attempt);
    for (i = 0; i < ap->natt; i++) {
        const sp_attempt *t = &ap->att[i];
        int last = i + 1 == ap->natt;
        op_record *rec = op_series_append(b, r, "attempts");
        op_record_int(b, rec, "attempt", t->attempt);
        op_record_str(b, rec, "origin", t->origin);
        if (t->started > 0)
            op_record_int(b, rec, "started_at", t->started);
        if (t->ended > 0)
            op_record_int(b, rec, "ended_at", t->ended);
        if (t->started > 0 && t->ended >= t->started) {
            op_record_int(b, rec, "duration_ms", t->ended - t->started);
            if (!last)
                failed_ms += t->ended - t->started;
        }
        op_record_int(b, rec, "jobs", t->jobs);
        op_record_int(b, rec, "failed_jobs", t->failed_jobs);
        op_record_int(b, rec, "tasks", t->tasks);
        op_record_int(b, rec, "failed_tasks", t->failed_tasks);
        if (!last) {
            op_record_str(b, rec, "status", "failed");
            op_record_str(b, rec, "end_reason", t->reason);
        } else {
            op_record_bool(b, rec, "analyzed", 1);
        }
        if (!last && t->nwarnings) { /* the attempt has no run of its own */
            char msg[SP_TEXT_MAX + 128];
            snprintf(msg, sizeof msg, "attempt %ld (%s): %d warning%s, the "
                     "first: %s", t->attempt, t->origin, t->nwarnings,
                     t->nwarnings > 1 ? "s" : "", t->warning);
            op_run_warning(b, r, msg);
        }
    }
    op_run_metric_int(b, r, "failed_attempts", (int64_t)ap->natt - 1);
    op_run_metric_int(b, r, "failed_attempts_ms", failed_ms);
    snprintf(num, sizeof num, "%zu", ap->natt);
    if (ap->natt > 1)
        op_run_attr(b, r, "attempts", num);
}

int sp_attempts_finish(op_builder *b, op_error *err)
{
    void **slot = op_plugin_slot(b);
    sp_retries *st = slot ? *slot : NULL;
    size_t i, j;
    int oom = 0;

    if (!st)
        return OP_OK;
    for (i = 0; i < st->n; i++) {
        sp_retried *ap = &st->apps[i];
        if (ap->latest) {
            op_run *r;
            ap->latest->b = b;
            sp_app_emit(ap->latest);
            oom |= ap->latest->oom;
            r = op_run_find(b, "spark", ap->app_id);
            if (r)
                emit_attempts(b, r, ap);
            sp_app_free(ap->latest);
            free(ap->latest);
        }
        for (j = 0; j < ap->natt; j++)
            free(ap->att[j].origin);
        free(ap->att);
        free(ap->app_id);
    }
    free(st->apps);
    free(st);
    *slot = NULL;
    if (oom)
        return op_error_set(err, OP_ENOMEM, "spark: out of memory writing "
                                            "the attempts of an app");
    return OP_OK;
}
