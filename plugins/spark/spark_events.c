/*
 * spark_events.c - the rare events, read with cJSON: application, log
 * start, environment, jobs, stage submission and completion, executors,
 * SQL executions. Field names follow JsonProtocol.scala of every Spark
 * version (docs/spark.md); SQL events come with their fully qualified
 * class names and camelCase fields. Unknown events are ignored, as Spark's
 * replay ignores them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spark_internal.h"

/* "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart" and
 * "...StreamingQueryListener$QueryProgressEvent" -> the class's own name. */
static const char *short_name(const char *ev)
{
    const char *dot = strrchr(ev, '.');
    const char *dollar;

    if (dot)
        ev = dot + 1;
    dollar = strrchr(ev, '$');
    return dollar ? dollar + 1 : ev;
}

static void set_str(sp_app *a, char **dst, const char *v)
{
    char *c;

    if (!v)
        return;
    c = sp_strdup_max(v, SP_TEXT_MAX);
    if (!c) {
        a->oom = 1;
        return;
    }
    free(*dst);
    *dst = c;
}

static void saw_time(sp_app *a, int64_t t)
{
    if (t > a->last_time)
        a->last_time = t;
}

/* --- application -------------------------------------------------------- */

static void on_app_start(sp_app *a, const cJSON *o)
{
    set_str(a, &a->app_id, sp_jstr(o, "App ID"));
    set_str(a, &a->app_name, sp_jstr(o, "App Name"));
    set_str(a, &a->user, sp_jstr(o, "User"));
    set_str(a, &a->attempt_id, sp_jstr(o, "App Attempt ID"));
    a->app_start = sp_jint(o, "Timestamp", -1);
    a->has_start = 1;
    saw_time(a, a->app_start);
}

static void on_app_end(sp_app *a, const cJSON *o)
{
    const cJSON *ec = cJSON_GetObjectItemCaseSensitive(o, "ExitCode");

    a->has_end = 1;
    a->app_end = sp_jint(o, "Timestamp", -1);
    saw_time(a, a->app_end);
    if (cJSON_IsNumber(ec)) {
        a->has_exit_code = 1;
        a->exit_code = sp_jnum(ec, 0);
    }
}

/* One entry of a properties map as Spark writes it (a map of strings;
 * a list of [key, value] pairs is accepted too): *k and *v, NULL when it
 * is neither. */
static void prop_entry(const cJSON *it, const char **k, const char **v)
{
    *k = it->string;
    *v = NULL;
    if (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 2) {
        const cJSON *kk = cJSON_GetArrayItem(it, 0);
        const cJSON *vv = cJSON_GetArrayItem(it, 1);
        *k = cJSON_IsString(kk) ? kk->valuestring : NULL;
        *v = cJSON_IsString(vv) ? vv->valuestring : NULL;
    } else if (cJSON_IsString(it)) {
        *v = it->valuestring;
    }
}

/* The driver's command line from System Properties: the job key of an
 * app with a generic name needs its main class (spark_jobkey.c). */
static void java_command(sp_app *a, const cJSON *o)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "System Properties");
    const cJSON *it;
    const char *v = NULL;
    char *c;

    cJSON_ArrayForEach(it, p)
    {
        const char *ek, *ev;
        prop_entry(it, &ek, &ev);
        if (ek && ev && !strcmp(ek, "sun.java.command"))
            v = ev;
    }
    if (!v)
        return;
    if (!(c = sp_strdup_max(v, SP_COMMAND_MAX))) {
        a->oom = 1;
        return;
    }
    free(a->java_command);
    a->java_command = c;
}

/* Spark Properties: an object of strings (every version writes a map; a
 * list of [key, value] pairs is accepted too). */
static void on_environment(sp_app *a, const cJSON *o)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "Spark Properties");
    const cJSON *it;
    cJSON *props;

    java_command(a, o);
    if (!p)
        return;
    a->has_env = 1;
    props = cJSON_CreateObject();
    if (!props) {
        a->oom = 1;
        return;
    }
    cJSON_ArrayForEach(it, p)
    {
        const char *k, *v;
        prop_entry(it, &k, &v);
        if (!k || !v)
            continue;
        cJSON_DeleteItemFromObjectCaseSensitive(props, k);
        if (!cJSON_AddStringToObject(props, k, v)) {
            a->oom = 1;
            break;
        }
    }
    cJSON_Delete(a->props);
    a->props = props;
}

/* --- stages and jobs ---------------------------------------------------- */

/* Copies what a StageInfo says into s (name, task count, parents). */
static void stage_info(sp_app *a, sp_stage *s, const cJSON *info)
{
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(info, "Parent IDs");
    const char *name = sp_jstr(info, "Stage Name");
    int64_t n = sp_jint(info, "Number of Tasks", -1);

    if (name)
        set_str(a, &s->name, name);
    if (n >= 0)
        s->num_tasks = n;
    sp_stage_rdds(a, s, info);
    if (cJSON_IsArray(par)) {
        int k = cJSON_GetArraySize(par), i;
        int64_t *ids = k > 0 ? malloc((size_t)k * sizeof *ids) : NULL;
        size_t m = 0;
        if (k > 0 && !ids) {
            a->oom = 1;
            return;
        }
        for (i = 0; i < k; i++) {
            const cJSON *e = cJSON_GetArrayItem(par, i);
            if (cJSON_IsNumber(e))
                ids[m++] = sp_jnum(e, -1);
        }
        free(s->parents);
        s->parents = ids;
        s->nparents = m;
    }
}

static uint64_t job_hash(const void *ctx, size_t i)
{
    return sp_mix((uint64_t)((const sp_app *)ctx)->jobs[i].id);
}

static int job_eq(const void *ctx, size_t i, const void *key)
{
    return ((const sp_app *)ctx)->jobs[i].id == *(const int64_t *)key;
}

/* Indexes the item just appended (n items now); undoes it on no memory. */
static int index_last(sp_app *a, sp_index *x, size_t *n, sp_hash_fn hash)
{
    if (sp_index_put(x, *n, *n - 1, hash, a) == 0)
        return 0;
    (*n)--;
    a->oom = 1;
    return -1;
}

static sp_job *job_get(sp_app *a, int64_t id)
{
    size_t i = sp_index_find(&a->job_ix, sp_mix((uint64_t)id), job_eq, a, &id);
    sp_job *j;

    if (i)
        return &a->jobs[i - 1];
    if (!sp_cap_allows(a, SP_CAP_JOBS, a->njobs) ||
        sp_grow(a, (void **)&a->jobs, a->njobs, &a->cap_jobs, sizeof *j))
        return NULL;
    j = &a->jobs[a->njobs++];
    memset(j, 0, sizeof *j);
    j->id = id;
    j->submitted_at = j->completed_at = -1;
    j->sql_id = -1;
    return index_last(a, &a->job_ix, &a->njobs, job_hash) ? NULL : j;
}

static int64_t prop_int(const cJSON *props, const char *key)
{
    const char *v = sp_jstr(props, key);
    char *end;
    long long x;

    if (!v || !*v)
        return -1;
    x = strtoll(v, &end, 10);
    return *end ? -1 : (int64_t)x;
}

static void on_job_start(sp_app *a, const cJSON *o)
{
    const cJSON *infos = cJSON_GetObjectItemCaseSensitive(o, "Stage Infos");
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(o, "Stage IDs");
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(o, "Properties");
    const cJSON *it, *last = NULL;
    sp_job *j = job_get(a, sp_jint(o, "Job ID", -1));
    int n, k = 0;

    if (!j)
        return;
    j->submitted_at = sp_jint(o, "Submission Time", -1);
    saw_time(a, j->submitted_at);
    j->sql_id = prop_int(props, "spark.sql.execution.id");
    set_str(a, &j->group, sp_jstr(props, "spark.jobGroup.id"));
    set_str(a, &j->description, sp_jstr(props, "spark.job.description"));
    n = cJSON_GetArraySize(ids);
    if (n <= 0)
        n = cJSON_GetArraySize(infos);
    free(j->stages);
    j->stages = n > 0 ? calloc((size_t)n, sizeof *j->stages) : NULL;
    j->nstages = 0;
    cJSON_ArrayForEach(it, infos)
    {
        int64_t sid = sp_jint(it, "Stage ID", -1);
        sp_stage *s = sp_stage_get(a, sid, sp_jint(it, "Stage Attempt ID", 0));
        if (!s && a->oom)
            return;
        if (!s)
            continue; /* past SP_MAX_STAGES */
        if (s->status == SP_ST_PENDING && !s->seen_submit) {
            s->live = 1;
            stage_info(a, s, it);
        }
        if (s->job_id < 0)
            s->job_id = j->id;
        if (j->stages && k < n)
            j->stages[k++] = sid;
        if (!last || sid > sp_jint(last, "Stage ID", -1))
            last = it;
    }
    j->nstages = (size_t)k;
    /* the UI names a job after its last stage */
    if (last)
        set_str(a, &j->name, sp_jstr(last, "Stage Name"));
}

static void on_job_end(sp_app *a, const cJSON *o)
{
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(o, "Job Result");
    const char *r = sp_jstr(res, "Result");
    sp_job *j = job_get(a, sp_jint(o, "Job ID", -1));
    size_t k;

    if (!j)
        return;
    j->ended = 1;
    j->completed_at = sp_jint(o, "Completion Time", -1);
    saw_time(a, j->completed_at);
    j->succeeded = !r || strcmp(r, "JobSucceeded") == 0;
    if (!j->succeeded) {
        const cJSON *ex = cJSON_GetObjectItemCaseSensitive(res, "Exception");
        const char *msg = sp_jstr(ex, "Message");
        set_str(a, &j->failure, msg ? msg : r);
    }
    /* stages of the job that never ran were skipped (AppStatusListener) */
    for (k = 0; k < j->nstages; k++) {
        int64_t att;
        int misses = 0;
        for (att = 0; misses < 4 && att < 1000; att++) {
            sp_stage *s = sp_stage_find(a, j->stages[k], att);
            if (!s) {
                misses++;
                continue;
            }
            misses = 0;
            if (s->live && s->status == SP_ST_PENDING) {
                s->status = SP_ST_SKIPPED;
                s->live = 0;
            }
        }
    }
}

static void on_stage_submitted(sp_app *a, const cJSON *o)
{
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(o, "Stage Info");
    sp_stage *s;

    if (!cJSON_IsObject(info))
        return;
    s = sp_stage_get(a, sp_jint(info, "Stage ID", -1),
                     sp_jint(info, "Stage Attempt ID", 0));
    if (!s)
        return;
    if (!s->live && s->seen_submit) {
        /* Spark would start a new live stage: begin again from zero */
        sp_stage_drop_dists(s);
        memset(&s->sum, 0, sizeof s->sum);
        s->active = s->completed = s->failed = s->killed = 0;
        s->task_time_ms = 0;
        s->dists_done = 0;
        s->has_slow = 0;
    }
    s->live = 1;
    s->seen_submit = 1;
    s->status = SP_ST_ACTIVE;
    stage_info(a, s, info);
    s->submitted_at = sp_jint(info, "Submission Time", -1);
    saw_time(a, s->submitted_at);
}

static void on_stage_completed(sp_app *a, const cJSON *o)
{
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(o, "Stage Info");
    const char *fail;
    sp_stage *s;

    if (!cJSON_IsObject(info))
        return;
    s = sp_stage_find(a, sp_jint(info, "Stage ID", -1),
                      sp_jint(info, "Stage Attempt ID", 0));
    if (!s || !s->live)
        return;
    stage_info(a, s, info);
    sp_accum_stage(a, info);
    if (s->submitted_at < 0)
        s->submitted_at = sp_jint(info, "Submission Time", -1);
    s->completed_at = sp_jint(info, "Completion Time", -1);
    saw_time(a, s->completed_at);
    fail = sp_jstr(info, "Failure Reason");
    if (fail) {
        s->status = SP_ST_FAILED;
        set_str(a, &s->failure, fail);
    } else if (s->submitted_at >= 0 ||
               cJSON_GetObjectItemCaseSensitive(info, "Submission Time")) {
        s->status = SP_ST_COMPLETE;
    } else {
        s->status = SP_ST_SKIPPED;
        s->live = 0;
        return;
    }
    sp_stage_completed(a, s);
}

/* --- executors ---------------------------------------------------------- */

static uint64_t exec_hash(const void *ctx, size_t i)
{
    return sp_hash_str(((const sp_app *)ctx)->execs[i].id);
}

static int exec_eq(const void *ctx, size_t i, const void *key)
{
    return strcmp(((const sp_app *)ctx)->execs[i].id, key) == 0;
}

static sp_exec *exec_get(sp_app *a, const char *id)
{
    char key[SP_ID_MAX + 1];
    size_t i;
    sp_exec *e;

    snprintf(key, sizeof key, "%.*s", SP_ID_MAX, id); /* as stored */
    i = sp_index_find(&a->exec_ix, sp_hash_str(key), exec_eq, a, key);
    if (i)
        return &a->execs[i - 1];
    if (!sp_cap_allows(a, SP_CAP_EXECS, a->nexecs) ||
        sp_grow(a, (void **)&a->execs, a->nexecs, &a->cap_execs, sizeof *e))
        return NULL;
    e = &a->execs[a->nexecs];
    memset(e, 0, sizeof *e);
    e->id = sp_strdup_max(key, sizeof key);
    if (!e->id) {
        a->oom = 1;
        return NULL;
    }
    e->added_at = e->removed_at = -1;
    a->nexecs++;
    if (index_last(a, &a->exec_ix, &a->nexecs, exec_hash)) {
        free(e->id);
        return NULL;
    }
    return e;
}

static void on_executor_added(sp_app *a, const cJSON *o)
{
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(o, "Executor Info");
    const char *id = sp_jstr(o, "Executor ID");
    sp_exec *e;

    if (!id || !(e = exec_get(a, id)))
        return;
    e->added_at = sp_jint(o, "Timestamp", -1);
    e->removed_at = -1;
    e->cores = sp_jint(info, "Total Cores", 0);
    saw_time(a, e->added_at);
    set_str(a, &e->host, sp_jstr(info, "Host"));
}

static void on_executor_removed(sp_app *a, const cJSON *o)
{
    const char *id = sp_jstr(o, "Executor ID");
    sp_exec *e;

    if (!id || !(e = exec_get(a, id)))
        return;
    e->removed_at = sp_jint(o, "Timestamp", -1);
    saw_time(a, e->removed_at);
    set_str(a, &e->reason, sp_jstr(o, "Removed Reason"));
}

/* --- SQL ---------------------------------------------------------------- */

static uint64_t sql_hash(const void *ctx, size_t i)
{
    return sp_mix((uint64_t)((const sp_app *)ctx)->sqls[i].id);
}

static int sql_eq(const void *ctx, size_t i, const void *key)
{
    return ((const sp_app *)ctx)->sqls[i].id == *(const int64_t *)key;
}

static sp_sql *sql_get(sp_app *a, int64_t id)
{
    size_t i = sp_index_find(&a->sql_ix, sp_mix((uint64_t)id), sql_eq, a, &id);
    sp_sql *q;

    if (i)
        return &a->sqls[i - 1];
    if (!sp_cap_allows(a, SP_CAP_SQLS, a->nsqls) ||
        sp_grow(a, (void **)&a->sqls, a->nsqls, &a->cap_sqls, sizeof *q))
        return NULL;
    q = &a->sqls[a->nsqls++];
    memset(q, 0, sizeof *q);
    q->id = id;
    q->started_at = q->ended_at = -1;
    return index_last(a, &a->sql_ix, &a->nsqls, sql_hash) ? NULL : q;
}

static void on_sql_start(sp_app *a, const cJSON *o)
{
    sp_sql *q = sql_get(a, sp_jint(o, "executionId", -1));

    if (!q)
        return;
    q->started_at = sp_jint(o, "time", -1);
    saw_time(a, q->started_at);
    set_str(a, &q->description, sp_jstr(o, "description"));
    sp_sql_plan(a, q, o);
}

static void on_sql_end(sp_app *a, const cJSON *o)
{
    sp_sql *q = sql_get(a, sp_jint(o, "executionId", -1));
    const char *err = sp_jstr(o, "errorMessage");

    if (!q)
        return;
    q->ended = 1;
    q->ended_at = sp_jint(o, "time", -1);
    saw_time(a, q->ended_at);
    if (err && *err)
        set_str(a, &q->error, err);
}

/* --- dispatch ----------------------------------------------------------- */

int sp_on_event(sp_app *a, const char *ev, const cJSON *o)
{
    const char *n = short_name(ev);

    if (strcmp(n, "SparkListenerLogStart") == 0) {
        set_str(a, &a->version, sp_jstr(o, "Spark Version"));
    } else if (strcmp(n, "SparkListenerApplicationStart") == 0) {
        on_app_start(a, o);
    } else if (strcmp(n, "SparkListenerApplicationEnd") == 0) {
        on_app_end(a, o);
    } else if (strcmp(n, "SparkListenerEnvironmentUpdate") == 0) {
        on_environment(a, o);
    } else if (strcmp(n, "SparkListenerJobStart") == 0) {
        on_job_start(a, o);
    } else if (strcmp(n, "SparkListenerJobEnd") == 0) {
        on_job_end(a, o);
    } else if (strcmp(n, "SparkListenerStageSubmitted") == 0) {
        on_stage_submitted(a, o);
    } else if (strcmp(n, "SparkListenerStageCompleted") == 0) {
        on_stage_completed(a, o);
    } else if (strcmp(n, "SparkListenerExecutorAdded") == 0) {
        on_executor_added(a, o);
    } else if (strcmp(n, "SparkListenerExecutorRemoved") == 0) {
        on_executor_removed(a, o);
    } else if (strcmp(n, "SparkListenerSQLExecutionStart") == 0) {
        on_sql_start(a, o);
    } else if (strcmp(n, "SparkListenerSQLExecutionEnd") == 0) {
        on_sql_end(a, o);
    } else if (strcmp(n, "SparkListenerSQLAdaptiveExecutionUpdate") == 0) {
        a->sql_adaptive_updates++;
        if (o && sp_jint(o, "executionId", -1) >= 0)
            sp_sql_plan(a, sql_get(a, sp_jint(o, "executionId", -1)), o);
    } else if (strcmp(n, "SparkListenerDriverAccumUpdates") == 0) {
        if (o)
            sp_accum_driver(a, o);
    } else if (strcmp(n, "SparkListenerStageExecutorMetrics") == 0 ||
               strcmp(n, "SparkListenerExecutorMetricsUpdate") == 0) {
        if (o)
            sp_on_exec_metrics(a, o, strstr(n, "Update") != NULL);
    } else if (strstr(n, "Blacklisted") || strstr(n, "Excluded")) {
        a->blacklist_events++;
    } else {
        return 0;
    }
    return 1;
}

/* A task metric, noting in t->absent (bit) when the sanitizer took an
 * out-of-range value out: 0 in the sums, absent from the distribution. */
static int64_t metric(sp_task *t, const cJSON *o, const char *key,
                      unsigned bit)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    if (sp_out_of_range(v))
        t->absent |= bit;
    return sp_jnum(v, 0);
}

#define BIT(d) (1u << (d))

/* The slow path for task events the scanner would not take. */
int sp_task_from_json(const cJSON *o, int end_event, sp_task *t, char *buf,
                      size_t cap)
{
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(o, "Task Info");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "Task Metrics");
    const cJSON *reason =
        cJSON_GetObjectItemCaseSensitive(o, "Task End Reason");
    const char *ex = sp_jstr(info, "Executor ID"), *host = sp_jstr(info, "Host");
    const char *rn = sp_jstr(reason, "Reason");

    memset(t, 0, sizeof *t);
    if (!cJSON_IsObject(info))
        return -1;
    t->stage_id = sp_jint(o, "Stage ID", 0);
    t->stage_attempt = sp_jint(o, "Stage Attempt ID", 0);
    t->task_id = sp_jint(info, "Task ID", 0);
    t->index = sp_jint(info, "Index", -1);
    t->attempt = sp_jint(info, "Attempt", 0);
    t->partition = sp_jint(info, "Partition ID", -1);
    t->launch = metric(t, info, "Launch Time", BIT(SP_D_DURATION));
    t->finish = metric(t, info, "Finish Time", BIT(SP_D_DURATION));
    t->speculative = cJSON_IsTrue(
        cJSON_GetObjectItemCaseSensitive(info, "Speculative"));
    /* spans must outlive o only as long as the caller keeps o */
    if (ex) {
        t->executor.s = ex;
        t->executor.n = strlen(ex);
    }
    if (host) {
        t->host.s = host;
        t->host.n = strlen(host);
    }
    if (!end_event)
        return 0;
    t->has_peak = sp_peaks_from_json(
        cJSON_GetObjectItemCaseSensitive(o, "Task Executor Metrics"), t->peak);
    if (cJSON_IsObject(reason) && cap > 0 && cap <= 1u << 30) {
        /* the failure details are read again from this text */
        if (cJSON_PrintPreallocated((cJSON *)reason, buf, (int)cap, 0)) {
            t->reason_obj.s = buf;
            t->reason_obj.n = strlen(buf);
        }
    }
    t->reason_name.s = rn ? rn : "Success";
    t->reason_name.n = strlen(t->reason_name.s);
    if (rn && strcmp(rn, "Success") != 0) {
        t->reason = strcmp(rn, "TaskKilled") == 0         ? SP_R_KILLED
                    : strcmp(rn, "TaskCommitDenied") == 0 ? SP_R_COMMIT_DENIED
                                                          : SP_R_FAILED;
    }
    if (cJSON_IsObject(m)) {
        const cJSON *sr = cJSON_GetObjectItemCaseSensitive(m, "Shuffle Read Metrics");
        const cJSON *sw = cJSON_GetObjectItemCaseSensitive(m, "Shuffle Write Metrics");
        const cJSON *in = cJSON_GetObjectItemCaseSensitive(m, "Input Metrics");
        const cJSON *out = cJSON_GetObjectItemCaseSensitive(m, "Output Metrics");
        sp_metrics *x = &t->m;
        t->has_metrics = 1;
        x->deser_ms = sp_jint(m, "Executor Deserialize Time", 0);
        x->deser_cpu_ns = sp_jint(m, "Executor Deserialize CPU Time", 0);
        x->run_ms = metric(t, m, "Executor Run Time", BIT(SP_D_RUN));
        x->cpu_ns = sp_jint(m, "Executor CPU Time", 0);
        x->peak_mem = sp_jint(m, "Peak Execution Memory", 0);
        x->result_size = sp_jint(m, "Result Size", 0);
        x->gc_ms = metric(t, m, "JVM GC Time", BIT(SP_D_GC));
        x->ser_ms = sp_jint(m, "Result Serialization Time", 0);
        x->mem_spill = metric(t, m, "Memory Bytes Spilled", BIT(SP_D_MEM_SPILL));
        x->disk_spill = metric(t, m, "Disk Bytes Spilled", BIT(SP_D_DISK_SPILL));
        x->sr_remote_blocks = sp_jint(sr, "Remote Blocks Fetched", 0);
        x->sr_local_blocks = sp_jint(sr, "Local Blocks Fetched", 0);
        x->sr_fetch_wait_ms = sp_jint(sr, "Fetch Wait Time", 0);
        x->sr_remote_bytes = metric(t, sr, "Remote Bytes Read", BIT(SP_D_SR_BYTES));
        x->sr_remote_disk_bytes = sp_jint(sr, "Remote Bytes Read To Disk", 0);
        x->sr_local_bytes = metric(t, sr, "Local Bytes Read", BIT(SP_D_SR_BYTES));
        x->sr_records = sp_jint(sr, "Total Records Read", 0);
        x->sw_bytes = metric(t, sw, "Shuffle Bytes Written", BIT(SP_D_SW_BYTES));
        x->sw_time_ns = sp_jint(sw, "Shuffle Write Time", 0);
        x->sw_records = sp_jint(sw, "Shuffle Records Written", 0);
        x->in_bytes = metric(t, in, "Bytes Read", BIT(SP_D_IN_BYTES));
        x->in_records = sp_jint(in, "Records Read", 0);
        x->out_bytes = sp_jint(out, "Bytes Written", 0);
        x->out_records = sp_jint(out, "Records Written", 0);
    }
    return 0;
}
