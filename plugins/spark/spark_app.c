/*
 * spark_app.c - the application state of one event log and the task
 * handlers, which follow Spark's AppStatusListener so that stage numbers
 * equal the History Server's to the unit:
 *   - a stage attempt exists from JobStart/StageSubmitted ("live") until it
 *     completed and has no running task left; task events for a stage that
 *     is not live are ignored, as Spark ignores them;
 *   - a TaskEnd adds its metrics only when its TaskStart was seen (Spark's
 *     liveTasks), whatever its outcome: failed and killed attempts count;
 *   - Success -> completed, TaskKilled/TaskCommitDenied -> killed, any other
 *     reason (Resubmitted included) -> failed.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optipipe/grow.h>

#include "spark_internal.h"

/* --- small helpers ------------------------------------------------------ */

char *sp_strdup_max(const char *s, size_t max)
{
    size_t n;
    char *d;

    if (!s)
        return NULL;
    n = strnlen(s, max);
    d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

void sp_warn(sp_app *a, const char *fmt, ...)
{
    char msg[SP_TEXT_MAX];
    va_list ap;
    char *copy;

    if (a->nwarnings >= SP_MAX_WARNINGS) {
        a->warnings_dropped++;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    copy = sp_strdup_max(msg, sizeof msg);
    if (!copy) {
        a->oom = 1;
        return;
    }
    a->warnings[a->nwarnings++] = copy;
}

/* --- indexes ----------------------------------------------------------- */

uint64_t sp_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

uint64_t sp_hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */

    while (*s)
        h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return sp_mix(h);
}

size_t sp_index_find(const sp_index *x, uint64_t h, sp_eq_fn eq,
                     const void *ctx, const void *key)
{
    size_t j;

    if (!x->cap)
        return 0;
    for (j = h & (x->cap - 1); x->slot[j]; j = (j + 1) & (x->cap - 1))
        if (eq(ctx, x->slot[j] - 1, key))
            return x->slot[j];
    return 0;
}

static void index_place(size_t *slot, size_t cap, uint64_t h, size_t i)
{
    size_t j = h & (cap - 1);

    while (slot[j])
        j = (j + 1) & (cap - 1);
    slot[j] = i + 1;
}

int sp_index_put(sp_index *x, size_t n, size_t i, sp_hash_fn hash,
                 const void *ctx)
{
    if (n * 2 > x->cap) {
        size_t ncap = x->cap ? x->cap * 2 : 64, k;
        size_t *ns;
        while (n * 2 > ncap)
            ncap *= 2;
        ns = calloc(ncap, sizeof *ns);
        if (!ns)
            return -1;
        for (k = 0; k < n; k++)
            if (k != i)
                index_place(ns, ncap, hash(ctx, k), k);
        free(x->slot);
        x->slot = ns;
        x->cap = ncap;
    }
    index_place(x->slot, x->cap, hash(ctx, i), i);
    return 0;
}

int sp_grow(sp_app *a, void **arr, size_t n, size_t *cap, size_t sz)
{
    *arr = op_grow_array(*arr, cap, n + 1, sz, 16);
    if (n < *cap)
        return 0;
    a->oom = 1;
    return -1;
}

/* --- caps --------------------------------------------------------------- */

static const char *const cap_what[SP_CAP_COUNT] = {
    [SP_CAP_STAGES] = "stage attempts",
    [SP_CAP_JOBS] = "jobs",
    [SP_CAP_SQLS] = "SQL executions",
    [SP_CAP_EXECS] = "executors",
};

static const size_t cap_max[SP_CAP_COUNT] = {
    [SP_CAP_STAGES] = SP_MAX_STAGES,
    [SP_CAP_JOBS] = SP_MAX_JOBS,
    [SP_CAP_SQLS] = SP_MAX_SQLS,
    [SP_CAP_EXECS] = SP_MAX_EXECS,
};

/* What the model lacks past each cap. */
static const char *const cap_lacks[SP_CAP_COUNT] = {
    [SP_CAP_STAGES] = "later stage attempts have no node and their tasks "
                      "count as orphan task ends, so run totals cover only "
                      "the first ones",
    [SP_CAP_JOBS] = "later jobs have no node and are not in the job counts "
                    "or jobs_wall_ms",
    [SP_CAP_SQLS] = "later SQL executions have no node",
    [SP_CAP_EXECS] = "later executors are not in the executors series or "
                     "the executor_* metrics",
};

int sp_cap_allows(sp_app *a, int c, size_t n)
{
    sp_cap *k = &a->caps[c];

    if (n < cap_max[c])
        return 1;
    if (!k->over++) {
        k->first_line = a->last_line_no;
        sp_warn(a, "line %llu: more than %zu %s; %s",
                (unsigned long long)a->last_line_no, cap_max[c], cap_what[c],
                cap_lacks[c]);
    }
    return 0;
}

void sp_limit_warnings(sp_app *a)
{
    int c;

    for (c = 0; c < SP_CAP_COUNT; c++)
        if (a->caps[c].over)
            sp_warn(a, "%lld events about %s past the first %zu were left "
                       "out (the first at line %llu)",
                    (long long)a->caps[c].over, cap_what[c], cap_max[c],
                    (unsigned long long)a->caps[c].first_line);
    for (c = 0; c < a->nnum_fields; c++)
        if (a->num_fields[c].count > SP_MAX_NUM_WARNED)
            sp_warn(a, "%s: %lld out-of-range values in all were ignored",
                    a->num_fields[c].path, (long long)a->num_fields[c].count);
    if (a->num_other)
        sp_warn(a, "%lld out-of-range values of other fields were ignored",
                (long long)a->num_other);
    if (a->dup_keys > SP_MAX_NUM_WARNED)
        sp_warn(a, "%lld duplicated keys in all (the last of each was used)",
                (long long)a->dup_keys);
}

/* --- the set of running task ids ---------------------------------------- */

static int idset_grow(sp_idset *s)
{
    size_t ncap = s->cap ? s->cap * 2 : 1024, i;
    int64_t *nk = malloc(ncap * sizeof *nk);

    if (!nk)
        return -1;
    for (i = 0; i < ncap; i++)
        nk[i] = INT64_MIN;
    for (i = 0; i < s->cap; i++) {
        size_t j;
        if (s->keys[i] == INT64_MIN)
            continue;
        j = sp_mix((uint64_t)s->keys[i]) & (ncap - 1);
        while (nk[j] != INT64_MIN)
            j = (j + 1) & (ncap - 1);
        nk[j] = s->keys[i];
    }
    free(s->keys);
    s->keys = nk;
    s->cap = ncap;
    return 0;
}

/* Returns 0, 1 when the set is full (not added), -1 on no memory. */
static int idset_add(sp_idset *s, int64_t k)
{
    size_t j;

    if (k == INT64_MIN)
        return 0;
    if (s->n >= SP_LIVE_TASKS_MAX)
        return 1;
    if ((s->n + 1) * 2 > s->cap && idset_grow(s))
        return -1;
    j = sp_mix((uint64_t)k) & (s->cap - 1);
    while (s->keys[j] != INT64_MIN) {
        if (s->keys[j] == k)
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->keys[j] = k;
    s->n++;
    return 0;
}

/* Removes k (backward-shift deletion); returns whether it was there. */
static int idset_remove(sp_idset *s, int64_t k)
{
    size_t j, i;

    if (!s->cap || k == INT64_MIN)
        return 0;
    j = sp_mix((uint64_t)k) & (s->cap - 1);
    while (s->keys[j] != k) {
        if (s->keys[j] == INT64_MIN)
            return 0;
        j = (j + 1) & (s->cap - 1);
    }
    s->keys[j] = INT64_MIN;
    s->n--;
    i = j;
    for (;;) {
        size_t home;
        i = (i + 1) & (s->cap - 1);
        if (s->keys[i] == INT64_MIN)
            return 1;
        home = sp_mix((uint64_t)s->keys[i]) & (s->cap - 1);
        /* move keys[i] to the hole j unless its home lies in (j, i] */
        if ((i > j && (home <= j || home > i)) ||
            (i < j && home <= j && home > i)) {
            s->keys[j] = s->keys[i];
            s->keys[i] = INT64_MIN;
            j = i;
        }
    }
}

/* --- stages ------------------------------------------------------------- */

typedef struct stage_key {
    int64_t id, attempt;
} stage_key;

static uint64_t stage_hash(int64_t id, int64_t attempt)
{
    return sp_mix((uint64_t)id * 1000003u + (uint64_t)attempt);
}

static uint64_t stage_hash_at(const void *ctx, size_t i)
{
    const sp_stage *s = ((const sp_app *)ctx)->stages[i];

    return stage_hash(s->id, s->attempt);
}

static int stage_eq(const void *ctx, size_t i, const void *key)
{
    const sp_stage *s = ((const sp_app *)ctx)->stages[i];
    const stage_key *k = key;

    return s->id == k->id && s->attempt == k->attempt;
}

sp_stage *sp_stage_find(sp_app *a, int64_t id, int64_t attempt)
{
    stage_key k = {id, attempt};
    size_t i = sp_index_find(&a->stage_ix, stage_hash(id, attempt), stage_eq,
                             a, &k);

    return i ? a->stages[i - 1] : NULL;
}

sp_stage *sp_stage_get(sp_app *a, int64_t id, int64_t attempt)
{
    sp_stage *s = sp_stage_find(a, id, attempt);

    if (s)
        return s;
    if (!sp_cap_allows(a, SP_CAP_STAGES, a->nstages))
        return NULL;
    if (sp_grow(a, (void **)&a->stages, a->nstages, &a->cap_stages,
                sizeof *a->stages))
        return NULL;
    s = calloc(1, sizeof *s);
    if (!s)
        goto oom;
    s->id = id;
    s->attempt = attempt;
    s->job_id = -1;
    s->submitted_at = s->completed_at = s->first_launch = -1;
    a->stages[a->nstages++] = s;
    if (sp_index_put(&a->stage_ix, a->nstages, a->nstages - 1, stage_hash_at,
                     a)) {
        a->nstages--;
        free(s);
        goto oom;
    }
    return s;
oom:
    a->oom = 1;
    return NULL;
}

void sp_stage_drop_dists(sp_stage *s)
{
    int i;

    if (s->dist)
        for (i = 0; i < SP_D_COUNT; i++)
            sp_dist_free(&s->dist[i]);
    free(s->dist);
    free(s->summary);
    s->dist = NULL;
    s->summary = NULL;
    s->has_summary = 0;
}

/* Summarizes a stage's distributions once no task can change them. */
static void stage_close_dists(sp_app *a, sp_stage *s)
{
    op_dist sum[SP_D_COUNT];
    unsigned has = 0;
    int i;

    if (s->dists_done)
        return;
    s->dists_done = 1;
    if (!s->dist)
        return;
    for (i = 0; i < SP_D_COUNT; i++)
        if (sp_dist_finish(&s->dist[i], &sum[i]) == 0)
            has |= 1u << i;
    free(s->dist);
    s->dist = NULL;
    if (!has)
        return;
    s->summary = malloc(sizeof sum);
    if (!s->summary) {
        a->oom = 1;
        return;
    }
    memcpy(s->summary, sum, sizeof sum);
    s->has_summary = has;
}

/* Spark drops a stage from liveStages once it completed or failed and no
 * task of it is running. */
static void stage_maybe_retire(sp_app *a, sp_stage *s)
{
    if (s->live && s->active == 0 &&
        (s->status == SP_ST_COMPLETE || s->status == SP_ST_FAILED)) {
        s->live = 0;
        stage_close_dists(a, s);
    }
}

void sp_stage_completed(sp_app *a, sp_stage *s)
{
    stage_maybe_retire(a, s);
}

/* --- tasks -------------------------------------------------------------- */

void sp_on_task_start(sp_app *a, const sp_task *t)
{
    sp_stage *s;
    int rc = idset_add(&a->live, t->task_id);

    if (rc < 0) {
        a->oom = 1;
    } else if (rc > 0 && !a->live.full_warned) {
        a->live.full_warned = 1;
        sp_warn(a, "more than %u tasks were running at once; the metrics of "
                   "later tasks are not summed (a dropped TaskEnd stream?)",
                (unsigned)SP_LIVE_TASKS_MAX);
    }
    if (t->launch > a->last_time)
        a->last_time = t->launch;
    s = sp_stage_find(a, t->stage_id, t->stage_attempt);
    if (s && s->live) {
        s->active++;
        if (s->first_launch < 0 || t->launch < s->first_launch)
            s->first_launch = t->launch;
    }
}

/* Task metrics are within +-SP_NUM_LIMIT (larger ones never get here:
 * sp_json_sanitize); summed over many tasks they saturate instead of
 * overflowing. */

static void add_metrics(sp_metrics *d, const sp_metrics *m)
{
    SP_SAT_ADD(d->run_ms, m->run_ms);
    SP_SAT_ADD(d->cpu_ns, m->cpu_ns);
    SP_SAT_ADD(d->deser_ms, m->deser_ms);
    SP_SAT_ADD(d->deser_cpu_ns, m->deser_cpu_ns);
    SP_SAT_ADD(d->gc_ms, m->gc_ms);
    SP_SAT_ADD(d->result_size, m->result_size);
    SP_SAT_ADD(d->ser_ms, m->ser_ms);
    SP_SAT_ADD(d->mem_spill, m->mem_spill);
    SP_SAT_ADD(d->disk_spill, m->disk_spill);
    if (m->peak_mem > d->peak_mem) /* Spark sums it; the max is more use */
        d->peak_mem = m->peak_mem;
    SP_SAT_ADD(d->sr_remote_blocks, m->sr_remote_blocks);
    SP_SAT_ADD(d->sr_local_blocks, m->sr_local_blocks);
    SP_SAT_ADD(d->sr_fetch_wait_ms, m->sr_fetch_wait_ms);
    SP_SAT_ADD(d->sr_remote_bytes, m->sr_remote_bytes);
    SP_SAT_ADD(d->sr_remote_disk_bytes, m->sr_remote_disk_bytes);
    SP_SAT_ADD(d->sr_local_bytes, m->sr_local_bytes);
    SP_SAT_ADD(d->sr_records, m->sr_records);
    SP_SAT_ADD(d->sw_bytes, m->sw_bytes);
    SP_SAT_ADD(d->sw_time_ns, m->sw_time_ns);
    SP_SAT_ADD(d->sw_records, m->sw_records);
    SP_SAT_ADD(d->in_bytes, m->in_bytes);
    SP_SAT_ADD(d->in_records, m->in_records);
    SP_SAT_ADD(d->out_bytes, m->out_bytes);
    SP_SAT_ADD(d->out_records, m->out_records);
}

/* Adds v to distribution d unless the task's value was out of range. */
static void dist_add(sp_stage *s, const sp_task *t, int d, double v)
{
    if (!(t->absent & (1u << d)))
        sp_dist_add(&s->dist[d], v);
}

static void add_dists(sp_app *a, sp_stage *s, const sp_task *t)
{
    const sp_metrics *m = &t->m;
    int64_t dur = t->finish > 0 && t->launch > 0 && t->finish >= t->launch
                      ? t->finish - t->launch
                      : 0;

    if (s->dists_done)
        return;
    if (!s->dist && !(s->dist = calloc(SP_D_COUNT, sizeof *s->dist))) {
        a->oom = 1;
        return;
    }
    dist_add(s, t, SP_D_RUN, (double)m->run_ms);
    dist_add(s, t, SP_D_DURATION, (double)dur);
    dist_add(s, t, SP_D_GC, (double)m->gc_ms);
    dist_add(s, t, SP_D_MEM_SPILL, (double)m->mem_spill);
    dist_add(s, t, SP_D_DISK_SPILL, (double)m->disk_spill);
    dist_add(s, t, SP_D_SR_BYTES,
             (double)(m->sr_remote_bytes + m->sr_local_bytes));
    dist_add(s, t, SP_D_SW_BYTES, (double)m->sw_bytes);
    dist_add(s, t, SP_D_IN_BYTES, (double)m->in_bytes);
    if (t->absent & (1u << SP_D_RUN)) /* no run time: not the slowest */
        return;
    if (!s->has_slow || m->run_ms > s->slow_run) {
        s->has_slow = 1;
        s->slow_run = m->run_ms;
        s->slow_index = t->index;
        s->slow_partition = t->partition;
        s->slow_in = m->in_bytes;
        s->slow_sr = m->sr_remote_bytes + m->sr_local_bytes;
        s->slow_duration = dur;
        sp_unescape(t->executor, s->slow_exec, sizeof s->slow_exec);
        sp_unescape(t->host, s->slow_host, sizeof s->slow_host);
    }
}

/* Reads "Task End Reason" details for a failed or killed task. */
static void reason_text(const sp_task *t, char *reason, size_t rcap,
                        char *detail, size_t dcap, char *exec, size_t ecap)
{
    cJSON *o = NULL;
    const char *cls = NULL, *desc = NULL;

    sp_unescape(t->reason_name, reason, rcap);
    detail[0] = '\0';
    exec[0] = '\0';
    if (t->reason_obj.n)
        o = cJSON_ParseWithLength(t->reason_obj.s, t->reason_obj.n);
    if (o) {
        const cJSON *bm = cJSON_GetObjectItemCaseSensitive(
            o, "Block Manager Address");
        cls = sp_jstr(o, "Class Name");
        desc = sp_jstr(o, "Description");
        if (!desc)
            desc = sp_jstr(o, "Loss Reason");
        if (!desc)
            desc = sp_jstr(o, "Kill Reason");
        if (!desc)
            desc = sp_jstr(o, "Message");
        if (sp_jstr(o, "Executor ID"))
            snprintf(exec, ecap, "%s", sp_jstr(o, "Executor ID"));
        else if (bm && sp_jstr(bm, "Executor ID"))
            snprintf(exec, ecap, "%s", sp_jstr(bm, "Executor ID"));
    }
    if (cls && desc)
        snprintf(detail, dcap, "%s: %s", cls, desc);
    else if (cls || desc)
        snprintf(detail, dcap, "%s", cls ? cls : desc);
    if (!exec[0])
        sp_unescape(t->executor, exec, ecap);
    cJSON_Delete(o);
}

static void note_failure(sp_app *a, const sp_task *t)
{
    char reason[64], detail[SP_TEXT_MAX], exec[SP_ID_MAX];
    sp_failure *f;
    size_t i;

    reason_text(t, reason, sizeof reason, detail, sizeof detail, exec,
                sizeof exec);
    for (i = 0; i < a->nfails; i++) {
        f = &a->fails[i];
        if (f->stage_id == t->stage_id && f->stage_attempt == t->stage_attempt &&
            strcmp(f->reason, reason) == 0) {
            f->count++;
            return;
        }
    }
    if (a->nfails >= SP_MAX_FAILURE_KINDS) {
        a->fail_overflow++;
        return;
    }
    if (sp_grow(a, (void **)&a->fails, a->nfails, &a->cap_fails,
                sizeof *a->fails))
        return;
    f = &a->fails[a->nfails++];
    memset(f, 0, sizeof *f);
    f->stage_id = t->stage_id;
    f->stage_attempt = t->stage_attempt;
    f->reason = sp_strdup_max(reason, sizeof reason);
    f->detail = sp_strdup_max(detail, sizeof detail);
    f->executor = sp_strdup_max(exec, sizeof exec);
    f->count = 1;
    f->first_at = t->finish;
    if (!f->reason || !f->detail || !f->executor)
        a->oom = 1;
}

void sp_on_task_end(sp_app *a, const sp_task *t)
{
    int had_start = idset_remove(&a->live, t->task_id);
    sp_stage *s = sp_stage_find(a, t->stage_id, t->stage_attempt);

    if (t->finish > a->last_time)
        a->last_time = t->finish;
    if (t->reason != SP_R_SUCCESS)
        note_failure(a, t);
    if (!s || !s->live) {
        a->orphan_task_ends++;
        return;
    }
    if (had_start && t->has_metrics) {
        add_metrics(&s->sum, &t->m);
        if (t->finish > 0 && t->launch > 0 && t->finish >= t->launch &&
            !(t->absent & (1u << SP_D_DURATION)))
            SP_SAT_ADD(s->task_time_ms, t->finish - t->launch);
        if (t->reason == SP_R_SUCCESS)
            add_dists(a, s, t);
    }
    s->active--;
    switch (t->reason) {
    case SP_R_SUCCESS:
        s->completed++;
        break;
    case SP_R_KILLED:
    case SP_R_COMMIT_DENIED:
        s->killed++;
        break;
    default:
        s->failed++;
        break;
    }
    stage_maybe_retire(a, s);
}

/* --- lifetime ----------------------------------------------------------- */

void sp_app_init(sp_app *a, op_builder *b, const char *input)
{
    memset(a, 0, sizeof *a);
    a->b = b;
    a->input = input;
    a->exit_code = 0;
    a->app_start = a->app_end = -1;
}

void sp_app_free(sp_app *a)
{
    size_t i;

    for (i = 0; i < a->nstages; i++) {
        sp_stage *s = a->stages[i];
        sp_stage_drop_dists(s);
        free(s->name);
        free(s->failure);
        free(s->parents);
        free(s->scan);
        free(s);
    }
    free(a->stages);
    free(a->stage_ix.slot);
    free(a->job_ix.slot);
    free(a->sql_ix.slot);
    free(a->exec_ix.slot);
    for (i = 0; i < a->njobs; i++) {
        free(a->jobs[i].stages);
        free(a->jobs[i].name);
        free(a->jobs[i].group);
        free(a->jobs[i].description);
        free(a->jobs[i].failure);
    }
    free(a->jobs);
    for (i = 0; i < a->nsqls; i++) {
        free(a->sqls[i].description);
        free(a->sqls[i].error);
        sp_plan_free(a->sqls[i].plan);
    }
    free(a->sqls);
    for (i = 0; i < a->nexecs; i++) {
        free(a->execs[i].id);
        free(a->execs[i].host);
        free(a->execs[i].reason);
    }
    free(a->execs);
    for (i = 0; i < a->nfails; i++) {
        free(a->fails[i].reason);
        free(a->fails[i].detail);
        free(a->fails[i].executor);
    }
    free(a->fails);
    free(a->live.keys);
    sp_detect_free(a);
    for (i = 0; i < (size_t)a->nwarnings; i++)
        free(a->warnings[i]);
    free(a->app_id);
    free(a->app_name);
    free(a->user);
    free(a->java_command);
    free(a->attempt_id);
    free(a->version);
    free(a->dbc_version);
    cJSON_Delete(a->props);
    memset(a, 0, sizeof *a);
}

void sp_app_close_all(sp_app *a)
{
    size_t i;

    for (i = 0; i < a->nstages; i++)
        stage_close_dists(a, a->stages[i]);
}
