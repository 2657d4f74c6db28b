/*
 * spark_emit.c - writes one application into the model: the run (config,
 * metrics, warnings, the executor timeline and task-failure series) and its
 * nodes, jobs first, then stage attempts, then SQL executions. Names and
 * units are documented in docs/model-spark.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spark_internal.h"

/* Saturating arithmetic for products of event values (cores x ms), which
 * a hostile log can push past int64_t even after sp_jint's clamp. */
static int64_t sat_mul(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_mul_overflow(a, b, &r))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
}

static const char *stage_status(int st, const char **raw)
{
    switch (st) {
    case SP_ST_COMPLETE:
        *raw = "COMPLETE";
        return "succeeded";
    case SP_ST_FAILED:
        *raw = "FAILED";
        return "failed";
    case SP_ST_ACTIVE:
        *raw = "ACTIVE";
        return "running";
    case SP_ST_SKIPPED:
        *raw = "SKIPPED";
        return "unknown";
    default:
        *raw = "PENDING";
        return "unknown";
    }
}

int sp_stage_emitted(const sp_stage *s)
{
    return s->seen_submit || s->status == SP_ST_ACTIVE ||
           s->status == SP_ST_COMPLETE || s->status == SP_ST_FAILED;
}

static void times(op_builder *b, op_node *n, int64_t start, int64_t end)
{
    if (start > 0)
        op_node_int(b, n, OP_I_STARTED_AT, start);
    if (end > 0)
        op_node_int(b, n, OP_I_ENDED_AT, end);
    if (start > 0 && end >= start)
        op_node_int(b, n, OP_I_DURATION_MS, end - start);
}

/* The newest emitted attempt of stage id, or NULL. Attempts are numbered
 * from 0; a few missing numbers (a compacted log) are stepped over. */
static const sp_stage *latest_attempt(sp_app *a, int64_t id)
{
    const sp_stage *best = NULL;
    int64_t att;
    int misses = 0;

    for (att = 0; misses < 4 && att < 1000; att++) {
        const sp_stage *s = sp_stage_find(a, id, att);
        if (!s) {
            misses++;
            continue;
        }
        misses = 0;
        if (sp_stage_emitted(s))
            best = s;
    }
    return best;
}

static void stage_metrics(op_builder *b, op_node *n, const sp_stage *s)
{
    const sp_metrics *m = &s->sum;

    op_node_metric_int(b, n, "tasks", s->num_tasks);
    op_node_metric_int(b, n, "completed_tasks", s->completed);
    op_node_metric_int(b, n, "failed_tasks", s->failed);
    op_node_metric_int(b, n, "killed_tasks", s->killed);
    op_node_metric_int(b, n, "executor_run_ms", m->run_ms);
    op_node_metric(b, n, "executor_cpu_ms", (double)m->cpu_ns / 1e6);
    op_node_metric_int(b, n, "executor_deserialize_ms", m->deser_ms);
    op_node_metric(b, n, "executor_deserialize_cpu_ms",
                   (double)m->deser_cpu_ns / 1e6);
    op_node_metric_int(b, n, "gc_ms", m->gc_ms);
    op_node_metric_int(b, n, "result_size_bytes", m->result_size);
    op_node_metric_int(b, n, "result_serialization_ms", m->ser_ms);
    op_node_metric_int(b, n, "memory_spill_bytes", m->mem_spill);
    op_node_metric_int(b, n, "disk_spill_bytes", m->disk_spill);
    op_node_metric_int(b, n, "peak_execution_memory_bytes", m->peak_mem);
    op_node_metric_int(b, n, "shuffle_read_bytes",
                       m->sr_remote_bytes + m->sr_local_bytes);
    op_node_metric_int(b, n, "shuffle_read_records", m->sr_records);
    op_node_metric_int(b, n, "shuffle_remote_bytes_read", m->sr_remote_bytes);
    op_node_metric_int(b, n, "shuffle_local_bytes_read", m->sr_local_bytes);
    op_node_metric_int(b, n, "shuffle_fetch_wait_ms", m->sr_fetch_wait_ms);
    op_node_metric_int(b, n, "shuffle_write_bytes", m->sw_bytes);
    op_node_metric_int(b, n, "shuffle_write_records", m->sw_records);
    op_node_metric(b, n, "shuffle_write_time_ms", (double)m->sw_time_ns / 1e6);
    op_node_metric_int(b, n, "input_bytes", m->in_bytes);
    op_node_metric_int(b, n, "input_records", m->in_records);
    op_node_metric_int(b, n, "output_bytes", m->out_bytes);
    op_node_metric_int(b, n, "output_records", m->out_records);
    op_node_metric_int(b, n, "task_time_ms", s->task_time_ms);
    if (s->has_slow) {
        op_node_metric_int(b, n, "slowest_task_run_ms", s->slow_run);
        op_node_metric_int(b, n, "slowest_task_duration_ms", s->slow_duration);
        op_node_metric_int(b, n, "slowest_task_index", s->slow_index);
        if (s->slow_partition >= 0)
            op_node_metric_int(b, n, "slowest_task_partition",
                               s->slow_partition);
        op_node_metric_int(b, n, "slowest_task_input_bytes", s->slow_in);
        op_node_metric_int(b, n, "slowest_task_shuffle_read_bytes",
                           s->slow_sr);
        op_node_attr(b, n, "slowest_task_executor", s->slow_exec);
        op_node_attr(b, n, "slowest_task_host", s->slow_host);
    }
}

static void stage_dists(op_builder *b, op_node *n, const sp_stage *s)
{
    static const char *const names[SP_D_COUNT] = {
        [SP_D_RUN] = "executor_run_ms",
        [SP_D_DURATION] = "duration_ms",
        [SP_D_GC] = "gc_ms",
        [SP_D_MEM_SPILL] = "memory_spill_bytes",
        [SP_D_DISK_SPILL] = "disk_spill_bytes",
        [SP_D_SR_BYTES] = "shuffle_read_bytes",
        [SP_D_SW_BYTES] = "shuffle_write_bytes",
        [SP_D_IN_BYTES] = "input_bytes",
    };
    int i;

    for (i = 0; i < SP_D_COUNT; i++)
        if (s->has_summary & (1u << i))
            op_node_dist(b, n, names[i], &s->summary[i]);
}

static void emit_stage(sp_app *a, op_run *r, const sp_stage *s)
{
    op_builder *b = a->b;
    char id[64], buf[64];
    const char *raw, *st = stage_status(s->status, &raw);
    op_node *n;
    size_t i;

    snprintf(id, sizeof id, "stage-%lld-%lld", (long long)s->id,
             (long long)s->attempt);
    n = op_node_get(b, r, id);
    if (!n)
        return;
    op_node_str(b, n, OP_F_KIND, "stage");
    op_node_str(b, n, OP_F_NAME, s->name ? s->name : id);
    op_node_str(b, n, OP_F_STATUS, st);
    op_node_str(b, n, OP_F_RAW_STATUS, raw);
    op_node_attr(b, n, "spark_status", raw);
    times(b, n, s->submitted_at, s->completed_at);
    op_node_int(b, n, OP_I_PARALLELISM, s->num_tasks);
    for (i = 0; i < s->nparents; i++) {
        const sp_stage *p = latest_attempt(a, s->parents[i]);
        if (p) {
            snprintf(buf, sizeof buf, "stage-%lld-%lld", (long long)p->id,
                     (long long)p->attempt);
            op_node_parent(b, n, buf);
        }
    }
    snprintf(buf, sizeof buf, "%lld", (long long)s->id);
    op_node_attr(b, n, "stage_id", buf);
    snprintf(buf, sizeof buf, "%lld", (long long)s->attempt);
    op_node_attr(b, n, "attempt", buf);
    if (s->job_id >= 0) {
        snprintf(buf, sizeof buf, "job-%lld", (long long)s->job_id);
        op_node_attr(b, n, "job", buf);
    }
    if (s->failure)
        op_node_attr(b, n, "failure_reason", s->failure);
    if (s->first_launch > 0)
        op_node_metric_int(b, n, "first_task_launched_at", s->first_launch);
    stage_metrics(b, n, s);
    stage_dists(b, n, s);
}

static void emit_job(sp_app *a, op_run *r, const sp_job *j)
{
    op_builder *b = a->b;
    char id[64], buf[256];
    op_node *n;
    size_t i, len = 0;
    int64_t tasks = 0;

    snprintf(id, sizeof id, "job-%lld", (long long)j->id);
    n = op_node_get(b, r, id);
    if (!n)
        return;
    op_node_str(b, n, OP_F_KIND, "job");
    op_node_str(b, n, OP_F_NAME, j->name ? j->name : id);
    op_node_str(b, n, OP_F_STATUS,
                !j->ended ? "running" : j->succeeded ? "succeeded" : "failed");
    op_node_str(b, n, OP_F_RAW_STATUS,
                !j->ended ? "RUNNING" : j->succeeded ? "SUCCEEDED" : "FAILED");
    times(b, n, j->submitted_at, j->completed_at);
    buf[0] = '\0';
    for (i = 0; i < j->nstages; i++) {
        const sp_stage *s = latest_attempt(a, j->stages[i]);
        int w;
        if (s)
            SP_SAT_ADD(tasks, s->num_tasks);
        w = snprintf(buf + len, sizeof buf - len, "%s%lld", i ? "," : "",
                     (long long)j->stages[i]);
        if (w < 0 || (size_t)w >= sizeof buf - len) {
            buf[len] = '\0';
            break;
        }
        len += (size_t)w;
    }
    op_node_attr(b, n, "stage_ids", buf);
    op_node_metric_int(b, n, "stages", (int64_t)j->nstages);
    op_node_metric_int(b, n, "tasks", tasks);
    if (j->sql_id >= 0) {
        snprintf(buf, sizeof buf, "sql-%lld", (long long)j->sql_id);
        op_node_attr(b, n, "sql", buf);
    }
    if (j->group)
        op_node_attr(b, n, "job_group", j->group);
    if (j->description)
        op_node_attr(b, n, "description", j->description);
    if (j->failure)
        op_node_attr(b, n, "failure_reason", j->failure);
    if (j->derived)
        op_node_attr(b, n, "times", "from its stages (no job times in this log)");
}

static void emit_sql(sp_app *a, op_run *r, const sp_sql *q)
{
    op_builder *b = a->b;
    char id[64];
    op_node *n;

    snprintf(id, sizeof id, "sql-%lld", (long long)q->id);
    n = op_node_get(b, r, id);
    if (!n)
        return;
    op_node_str(b, n, OP_F_KIND, "sql");
    op_node_str(b, n, OP_F_NAME,
                q->description && *q->description ? q->description : id);
    op_node_str(b, n, OP_F_STATUS,
                !q->ended ? "running" : q->error ? "failed" : "succeeded");
    op_node_str(b, n, OP_F_RAW_STATUS,
                !q->ended ? "RUNNING" : q->error ? "FAILED" : "COMPLETED");
    times(b, n, q->started_at, q->ended_at);
    if (q->error)
        op_node_attr(b, n, "error", q->error);
    op_node_metric_int(b, n, "jobs", q->jobs);
}

/* --- run level ---------------------------------------------------------- */

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;

    return (a > b) - (a < b);
}

/* Wall time covered by at least one job (Sparklens' jobTime). */
static int64_t jobs_wall(const sp_app *a, int64_t end_default)
{
    int64_t (*iv)[2] = a->njobs ? malloc(a->njobs * sizeof *iv) : NULL;
    int64_t total = 0, cs = -1, ce = -1;
    size_t i, n = 0;

    if (!iv)
        return 0;
    for (i = 0; i < a->njobs; i++) {
        const sp_job *j = &a->jobs[i];
        int64_t e = j->completed_at > 0 ? j->completed_at : end_default;
        if (j->submitted_at <= 0 || e < j->submitted_at)
            continue;
        iv[n][0] = j->submitted_at;
        iv[n][1] = e;
        n++;
    }
    qsort(iv, n, sizeof *iv, cmp_i64); /* by start: the first member */
    for (i = 0; i < n; i++) {
        if (cs < 0 || iv[i][0] > ce) {
            if (cs >= 0)
                total += ce - cs;
            cs = iv[i][0];
            ce = iv[i][1];
        } else if (iv[i][1] > ce) {
            ce = iv[i][1];
        }
    }
    if (cs >= 0)
        total += ce - cs;
    free(iv);
    return total;
}

typedef struct ev_point {
    int64_t t;
    int64_t dcores;
    int dexec;
} ev_point;

static int cmp_point(const void *x, const void *y)
{
    const ev_point *a = x, *b = y;

    if (a->t != b->t)
        return (a->t > b->t) - (a->t < b->t);
    return a->dexec - b->dexec; /* removals first at the same instant */
}

static void executor_stats(sp_app *a, op_run *r, int64_t end)
{
    op_builder *b = a->b;
    ev_point *pt = a->nexecs ? malloc(2 * a->nexecs * sizeof *pt) : NULL;
    int64_t core_ms = 0, cores = 0, max_cores = 0, removed = 0;
    int64_t execs = 0, max_execs = 0;
    size_t i, n = 0;

    for (i = 0; i < a->nexecs; i++) {
        const sp_exec *e = &a->execs[i];
        op_record *rec = op_series_append(b, r, "executors");
        int64_t stop = e->removed_at >= 0 ? e->removed_at : end;
        if (rec) {
            op_record_str(b, rec, "executor_id", e->id);
            if (e->host)
                op_record_str(b, rec, "host", e->host);
            op_record_int(b, rec, "cores", e->cores);
            if (e->added_at >= 0)
                op_record_int(b, rec, "added_at", e->added_at);
            if (e->removed_at >= 0) {
                op_record_int(b, rec, "removed_at", e->removed_at);
                op_record_str(b, rec, "removed_reason",
                              e->reason ? e->reason : "");
            }
            if (e->added_at >= 0 && stop >= e->added_at)
                op_record_int(b, rec, "lifetime_ms", stop - e->added_at);
        }
        if (e->removed_at >= 0)
            removed++;
        if (e->added_at < 0 || stop < e->added_at)
            continue;
        SP_SAT_ADD(core_ms, sat_mul(e->cores, stop - e->added_at));
        if (pt) {
            pt[n++] = (ev_point){e->added_at, e->cores, 1};
            pt[n++] = (ev_point){stop, -e->cores, -1};
        }
    }
    if (pt) {
        qsort(pt, n, sizeof *pt, cmp_point);
        for (i = 0; i < n; i++) {
            SP_SAT_ADD(cores, pt[i].dcores);
            execs += pt[i].dexec;
            if (cores > max_cores)
                max_cores = cores;
            if (execs > max_execs)
                max_execs = execs;
        }
        free(pt);
    }
    op_run_metric_int(b, r, "executors_added", (int64_t)a->nexecs);
    op_run_metric_int(b, r, "executors_removed", removed);
    op_run_metric_int(b, r, "executors_max", max_execs);
    op_run_metric_int(b, r, "executor_cores_max", max_cores);
    op_run_metric_int(b, r, "executor_core_ms", core_ms);
}

static void failure_series(sp_app *a, op_run *r)
{
    op_builder *b = a->b;
    char id[64];
    size_t i;

    for (i = 0; i < a->nfails; i++) {
        const sp_failure *f = &a->fails[i];
        op_record *rec = op_series_append(b, r, "task_failures");
        if (!rec)
            return;
        snprintf(id, sizeof id, "stage-%lld-%lld", (long long)f->stage_id,
                 (long long)f->stage_attempt);
        op_record_str(b, rec, "stage", id);
        op_record_str(b, rec, "reason", f->reason);
        op_record_str(b, rec, "detail", f->detail);
        if (f->executor[0])
            op_record_str(b, rec, "executor_id", f->executor);
        op_record_int(b, rec, "count", f->count);
        if (f->first_at > 0)
            op_record_int(b, rec, "first_at", f->first_at);
    }
}

/* Whether a sum reached the bounds of int64_t (SP_SAT_ADD stops there):
 * it is then a lower bound, which the run's warnings must say. */
static int at_bound(int64_t v)
{
    return v == INT64_MAX || v == INT64_MIN;
}

static int metrics_at_bound(const sp_metrics *m)
{
    const int64_t *v = (const int64_t *)(const void *)m;
    size_t i;

    for (i = 0; i < sizeof *m / sizeof *v; i++)
        if (at_bound(v[i]))
            return 1;
    return 0;
}

static void run_sums(sp_app *a, op_run *r)
{
    op_builder *b = a->b;
    sp_metrics t;
    int64_t stages = 0, failed = 0, skipped = 0, tasks = 0, tfail = 0,
            tkill = 0, task_time = 0, jfail = 0, nbound = 0;
    const sp_stage *first = NULL;
    size_t i;

    memset(&t, 0, sizeof t);
    for (i = 0; i < a->nstages; i++) {
        const sp_stage *s = a->stages[i];
        if (s->status == SP_ST_SKIPPED)
            skipped++;
        if (!sp_stage_emitted(s))
            continue;
        stages++;
        if (metrics_at_bound(&s->sum) || at_bound(s->task_time_ms)) {
            if (!nbound++)
                first = s;
        }
        failed += s->status == SP_ST_FAILED;
        tasks += s->completed + s->failed + s->killed; /* counts of events */
        tfail += s->failed;
        tkill += s->killed;
        /* the stage totals saturate; so must their sum (fuzzing found it) */
        SP_SAT_ADD(task_time, s->task_time_ms);
        SP_SAT_ADD(t.run_ms, s->sum.run_ms);
        SP_SAT_ADD(t.cpu_ns, s->sum.cpu_ns);
        SP_SAT_ADD(t.gc_ms, s->sum.gc_ms);
        SP_SAT_ADD(t.mem_spill, s->sum.mem_spill);
        SP_SAT_ADD(t.disk_spill, s->sum.disk_spill);
        SP_SAT_ADD(t.sr_remote_bytes, s->sum.sr_remote_bytes);
        SP_SAT_ADD(t.sr_remote_bytes, s->sum.sr_local_bytes);
        SP_SAT_ADD(t.sw_bytes, s->sum.sw_bytes);
        SP_SAT_ADD(t.in_bytes, s->sum.in_bytes);
        SP_SAT_ADD(t.out_bytes, s->sum.out_bytes);
    }
    if (first)
        sp_warn(a, "%lld stage attempts (the first stage-%lld-%lld) have task "
                   "sums beyond +-2^63, kept at that bound: those sums are "
                   "lower bounds",
                (long long)nbound, (long long)first->id,
                (long long)first->attempt);
    else if (metrics_at_bound(&t) || at_bound(task_time))
        sp_warn(a, "the run's totals pass +-2^63 and are kept at that bound: "
                   "they are lower bounds");
    for (i = 0; i < a->njobs; i++)
        jfail += a->jobs[i].ended && !a->jobs[i].succeeded;
    op_run_metric_int(b, r, "jobs", (int64_t)a->njobs);
    op_run_metric_int(b, r, "failed_jobs", jfail);
    op_run_metric_int(b, r, "stages", stages);
    op_run_metric_int(b, r, "failed_stages", failed);
    op_run_metric_int(b, r, "skipped_stages", skipped);
    op_run_metric_int(b, r, "sql_executions", (int64_t)a->nsqls);
    op_run_metric_int(b, r, "tasks", tasks);
    op_run_metric_int(b, r, "failed_tasks", tfail);
    op_run_metric_int(b, r, "killed_tasks", tkill);
    op_run_metric_int(b, r, "task_time_ms", task_time);
    op_run_metric_int(b, r, "executor_run_ms", t.run_ms);
    op_run_metric(b, r, "executor_cpu_ms", (double)t.cpu_ns / 1e6);
    op_run_metric_int(b, r, "gc_ms", t.gc_ms);
    op_run_metric_int(b, r, "memory_spill_bytes", t.mem_spill);
    op_run_metric_int(b, r, "disk_spill_bytes", t.disk_spill);
    op_run_metric_int(b, r, "shuffle_read_bytes", t.sr_remote_bytes);
    op_run_metric_int(b, r, "shuffle_write_bytes", t.sw_bytes);
    op_run_metric_int(b, r, "input_bytes", t.in_bytes);
    op_run_metric_int(b, r, "output_bytes", t.out_bytes);
}

/* The app id when the log has no ApplicationStart: the file name without
 * directory, rolling prefix/suffixes and attempt-free codec extension. */
static void fallback_id(const sp_app *a, char *out, size_t cap)
{
    const char *base = strrchr(a->input, '/');
    size_t n;
    char *dot;

    base = base ? base + 1 : a->input;
    if (!*base) /* "dir/" */
        base = a->input;
    if (strncmp(base, "eventlog_v2_", 12) == 0)
        base += 12;
    snprintf(out, cap, "%s", base);
    n = strlen(out);
    while (n && out[n - 1] == '/')
        out[--n] = '\0';
    if ((dot = strstr(out, ".inprogress")) != NULL)
        *dot = '\0';
    if ((dot = strchr(out, '.')) != NULL)
        *dot = '\0';
}

static void run_status(sp_app *a, op_run *r)
{
    op_builder *b = a->b;
    const sp_job *last = NULL;
    size_t i;

    if (a->in_progress || !a->has_end) {
        op_run_str(b, r, OP_F_STATUS, "running");
        op_run_str(b, r, OP_F_RAW_STATUS, "IN_PROGRESS");
        return;
    }
    for (i = 0; i < a->njobs; i++)
        if (a->jobs[i].ended &&
            (!last || a->jobs[i].completed_at >= last->completed_at))
            last = &a->jobs[i];
    if (a->has_exit_code && a->exit_code != 0) {
        char raw[48];
        snprintf(raw, sizeof raw, "EXIT_CODE_%lld", (long long)a->exit_code);
        op_run_str(b, r, OP_F_STATUS, "failed");
        op_run_str(b, r, OP_F_RAW_STATUS, raw);
    } else if (last && !last->succeeded) {
        op_run_str(b, r, OP_F_STATUS, "failed");
        op_run_str(b, r, OP_F_RAW_STATUS, "LAST_JOB_FAILED");
    } else {
        op_run_str(b, r, OP_F_STATUS, "succeeded");
        op_run_str(b, r, OP_F_RAW_STATUS, "COMPLETED");
    }
}

static int cmp_stage(const void *x, const void *y)
{
    const sp_stage *a = *(sp_stage *const *)x, *b = *(sp_stage *const *)y;

    if (a->id != b->id)
        return (a->id > b->id) - (a->id < b->id);
    return (a->attempt > b->attempt) - (a->attempt < b->attempt);
}

static int cmp_job(const void *x, const void *y)
{
    const sp_job *a = x, *b = y;

    return (a->id > b->id) - (a->id < b->id);
}

static int cmp_sql(const void *x, const void *y)
{
    const sp_sql *a = x, *b = y;

    return (a->id > b->id) - (a->id < b->id);
}

static void emit_nodes(sp_app *a, op_run *r)
{
    sp_stage **order = NULL;
    size_t i;

    if (a->nsqls) {
        qsort(a->sqls, a->nsqls, sizeof *a->sqls, cmp_sql);
        for (i = 0; i < a->njobs; i++) { /* sorted: no scan per execution */
            sp_sql key, *q;
            key.id = a->jobs[i].sql_id;
            q = key.id < 0 ? NULL
                           : bsearch(&key, a->sqls, a->nsqls, sizeof *a->sqls,
                                     cmp_sql);
            if (q)
                q->jobs++;
        }
    }
    for (i = 0; i < a->njobs; i++)
        emit_job(a, r, &a->jobs[i]);
    if (a->nstages) {
        order = malloc(a->nstages * sizeof *order);
        if (!order) {
            a->oom = 1;
            return;
        }
        memcpy(order, a->stages, a->nstages * sizeof *order);
        qsort(order, a->nstages, sizeof *order, cmp_stage);
    }
    for (i = 0; i < a->nstages; i++)
        if (sp_stage_emitted(order[i]))
            emit_stage(a, r, order[i]);
    free(order);
    for (i = 0; i < a->nsqls; i++)
        emit_sql(a, r, &a->sqls[i]);
    sp_detect_emit(a, r);
}

/* Spark before 1.3 wrote no job times: take them from the job's stages
 * (and say so). Jobs are sorted by id first. */
static void job_times_from_stages(sp_app *a)
{
    size_t i;

    if (!a->njobs)
        return;
    qsort(a->jobs, a->njobs, sizeof *a->jobs, cmp_job);
    for (i = 0; i < a->nstages; i++) {
        const sp_stage *s = a->stages[i];
        sp_job key, *j;
        key.id = s->job_id;
        if (s->job_id < 0 || !sp_stage_emitted(s))
            continue;
        j = bsearch(&key, a->jobs, a->njobs, sizeof *a->jobs, cmp_job);
        if (!j || (j->submitted_at > 0 && j->completed_at > 0 && !j->derived))
            continue;
        j->derived = 1;
        if (s->submitted_at > 0 &&
            (j->submitted_at <= 0 || s->submitted_at < j->submitted_at))
            j->submitted_at = s->submitted_at;
        if (s->completed_at > 0 && s->completed_at > j->completed_at)
            j->completed_at = s->completed_at;
    }
}

static const char *prop(const sp_app *a, const char *key)
{
    const cJSON *v = a->props ? cJSON_GetObjectItemCaseSensitive(a->props, key)
                              : NULL;
    return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

/* The logical job (docs/model.md "Job identity"): what stays the same from
 * one night's app to the next, whose app id is new every time. An explicit
 * spark.optipipe.job wins; a Databricks job run names its job (job.id, or
 * the "job-<id>-run-<n>" cluster a job launches, whose app is always
 * "Databricks Shell"); otherwise the app name, joined by its main class,
 * user and cluster when the name says nothing (spark_jobkey.c). */
static const char *job_key(const sp_app *a, char *buf, size_t cap)
{
    const char *v = prop(a, "spark.optipipe.job");
    long id, runno;
    char tail;

    if (v)
        return v;
    if ((v = prop(a, "spark.databricks.job.id"))) {
        snprintf(buf, cap, "databricks job %s", v);
        return buf;
    }
    v = prop(a, "spark.databricks.clusterUsageTags.clusterName");
    if (v && sscanf(v, "job-%ld-run-%ld%c", &id, &runno, &tail) == 2) {
        snprintf(buf, cap, "databricks job %ld", id);
        return buf;
    }
    if (sp_generic_name(a->app_name))
        return sp_generic_key(a, buf, cap);
    return a->app_name;
}

void sp_app_emit(sp_app *a)
{
    char jobbuf[512];
    op_builder *b = a->b;
    char idbuf[256];
    const char *id = a->app_id;
    int64_t end;
    op_run *r;
    int k;

    if (!id || !*id) {
        fallback_id(a, idbuf, sizeof idbuf);
        id = idbuf;
    }
    job_times_from_stages(a);
    r = op_run_get(b, "spark", id);
    if (!r)
        return;
    /* attempts of one app are one run (spark_attempts.c): the id stays */
    if (a->attempt_id)
        op_run_attr(b, r, "attempt", a->attempt_id);
    op_run_str(b, r, OP_F_NAME, a->app_name ? a->app_name : id);
    op_run_job(b, r, job_key(a, jobbuf, sizeof jobbuf));
    if (a->version || a->dbc_version)
        op_run_str(b, r, OP_F_ENGINE_VERSION,
                   a->version ? a->version : a->dbc_version);
    run_status(a, r);
    end = a->has_end && a->app_end > 0 ? a->app_end : a->last_time;
    if (a->app_start > 0)
        op_run_int(b, r, OP_I_STARTED_AT, a->app_start);
    if (a->has_end && a->app_end > 0)
        op_run_int(b, r, OP_I_ENDED_AT, a->app_end);
    if (a->app_start > 0 && end >= a->app_start) {
        int64_t jw = jobs_wall(a, end);
        op_run_int(b, r, OP_I_DURATION_MS, end - a->app_start);
        op_run_metric_int(b, r, "jobs_wall_ms", jw);
        op_run_metric_int(b, r, "driver_ms",
                          end - a->app_start > jw ? end - a->app_start - jw
                                                  : 0);
    }
    if (a->props) {
        const cJSON *it;
        cJSON_ArrayForEach(it, a->props)
        {
            if (cJSON_IsString(it))
                op_run_config(b, r, it->string, it->valuestring);
        }
    }
    sp_platform_emit(a, r);
    run_sums(a, r);
    executor_stats(a, r, end);
    failure_series(a, r);
    op_run_metric_int(b, r, "events", a->events);
    op_run_metric_int(b, r, "malformed_lines", a->bad_lines);
    op_run_metric_int(b, r, "orphan_task_ends", a->orphan_task_ends);
    if (a->sql_adaptive_updates)
        op_run_metric_int(b, r, "sql_adaptive_updates",
                          a->sql_adaptive_updates);
    if (a->blacklist_events)
        op_run_metric_int(b, r, "exclusion_events", a->blacklist_events);
    for (k = 0; k < a->nwarnings; k++)
        op_run_warning(b, r, a->warnings[k]);
    if (a->warnings_dropped) {
        char msg[96];
        snprintf(msg, sizeof msg, "%lld more warnings not shown",
                 (long long)a->warnings_dropped);
        op_run_warning(b, r, msg);
    }
    emit_nodes(a, r);
}
