/*
 * dbt_results.c - run_results.json (schema v1-v6, dbt 0.19 to Fusion 2.x)
 * and sources.json into runs. One run per invocation; one node per result
 * with its timeline rebuilt from `timing`; run metrics for the thread
 * timeline (span, busy time, utilization, peak concurrency) computed here
 * because they need no manifest. The node timeline is also kept in the
 * plugin slot for the critical path computed at finish() (dbt_join.c).
 *
 * Tolerated pitfalls (docs/dbt.md): errored nodes with an
 * empty `timing` but a positive `execution_time` (kept "untimed"), hooks
 * on thread `main`, 6 or 9 fractional digits, exponent-form numbers, null
 * fields, unknown keys.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optipipe/grow.h>

#include "dbt_internal.h"

#define MAX_WARNINGS 20
#define MAX_PACKAGES 64
/* Slack around [generated_at - elapsed_time, generated_at] within which a
 * node's timing counts as part of the invocation. */
#define WINDOW_SLACK_US ((int64_t)60 * 1000000)
/* Durations above this many seconds (31 years) are not durations. */
#define MAX_SECONDS 1e9
/* Counts and byte sizes above this are not counts (and would sum to inf). */
#define MAX_COUNT 1e18

typedef struct rr_ctx {
    op_builder *b;
    op_run *r;
    const char *name; /* input display name */
    dbt_rrun *rec;
    int kind;
    int nwarn;
    int oom;
    op_strmap threads; /* worker thread name (borrowed) -> index */
    int has_window;  /* the invocation's time window is known */
    int64_t win_lo, win_hi;
    long n_outside, n_overlap;
    const char *packages[MAX_PACKAGES];
    size_t npackages;
    char pkgbuf[MAX_PACKAGES][128];
    /* counters for run metrics */
    long n_results, n_error, n_skipped, n_fail, n_warn, n_untimed;
    long n_tests;
    long n_execute, n_compiled; /* results with an execute phase; status "compiled" */
    double bytes_billed, bytes_processed, slot_ms;
    int has_billed, has_processed, has_slot;
} rr_ctx;

static void warnf(rr_ctx *c, const char *fmt, ...) OP_PRINTF(2, 3);

static void warnf(rr_ctx *c, const char *fmt, ...)
{
    char msg[OP_ERROR_MAX];
    va_list ap;

    if (c->nwarn++ >= MAX_WARNINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    op_run_warning(c->b, c->r, msg);
}

/* A field of the wrong type or range: a warning naming the file, the node
 * (`where`: "node model.p.x" or "results[3]") and the field. */
static void bad_field(rr_ctx *c, const char *where, const char *key,
                      const cJSON *v, const char *why)
{
    char shown[48];

    if (cJSON_IsString(v))
        snprintf(shown, sizeof shown, "\"%.30s\"", v->valuestring);
    else if (cJSON_IsNumber(v))
        snprintf(shown, sizeof shown, "%.6g", v->valuedouble);
    else
        snprintf(shown, sizeof shown, "%s",
                 cJSON_IsArray(v) ? "a list" : cJSON_IsObject(v) ? "an object"
                                             : "a boolean");
    warnf(c, "%s: %s: %s is %s, %s; ignored", c->name, where, key, shown, why);
}

/* The number at key of obj when it lies in [lo, hi]; 0 and a warning when
 * it is there (not null) but not such a number. */
static int field_num(rr_ctx *c, const cJSON *obj, const char *key,
                     const char *where, double lo, double hi, double *out)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    char why[64];

    if (!v || cJSON_IsNull(v))
        return 0;
    if (!cJSON_IsNumber(v)) {
        bad_field(c, where, key, v, "not a number");
        return 0;
    }
    if (!(v->valuedouble >= lo && v->valuedouble <= hi)) {
        snprintf(why, sizeof why, "outside [%.6g, %.6g]", lo, hi);
        bad_field(c, where, key, v, why);
        return 0;
    }
    *out = v->valuedouble;
    return 1;
}

/* field_num for a field dbt always writes as a number (execution_time,
 * elapsed_time): a null is reported too, unless op_json_tidy made it of
 * 1e999 and reported that. (failures, rows_affected, ... are null by
 * design when they do not apply.) */
static int field_num_set(rr_ctx *c, const cJSON *obj, const char *key,
                         const char *where, double lo, double hi, double *out)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;

    if (cJSON_IsNull(v) && !(v->type & OP_JSON_TIDIED))
        warnf(c, "%s: %s: %s is null where a number is expected; ignored",
              c->name, where, key);
    return field_num(c, obj, key, where, lo, hi, out);
}

/* The string at key of obj; NULL and a warning when it is another type. */
static const char *field_str(rr_ctx *c, const cJSON *obj, const char *key,
                             const char *where)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;

    if (v && !cJSON_IsNull(v) && !cJSON_IsString(v))
        bad_field(c, where, key, v, "not a string");
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The object (or array, want_array) at key; NULL and a warning when it is
 * another type. */
static const cJSON *field_of(rr_ctx *c, const cJSON *obj, const char *key,
                             const char *where, int want_array)
{
    const cJSON *v = obj ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;

    if (!v || cJSON_IsNull(v))
        return NULL;
    if (want_array ? cJSON_IsArray(v) : cJSON_IsObject(v))
        return v;
    bad_field(c, where, key, v, want_array ? "not a list" : "not an object");
    return NULL;
}

/* Sets a metric as an exact integer when it is one, else as a float. */
static void node_num(op_builder *b, op_node *n, const char *key, double v)
{
    if (v == floor(v) && fabs(v) < 9007199254740992.0)
        op_node_metric_int(b, n, key, (int64_t)v);
    else
        op_node_metric(b, n, key, v);
}

static void run_num(op_builder *b, op_run *r, const char *key, double v)
{
    if (v == floor(v) && fabs(v) < 9007199254740992.0)
        op_run_metric_int(b, r, key, (int64_t)v);
    else
        op_run_metric(b, r, key, v);
}

/* dbt status words to the model's statuses (docs/model-dbt.md). */
static const char *map_status(const char *s)
{
    if (!s)
        return "unknown";
    if (!strcmp(s, "success") || !strcmp(s, "pass") || !strcmp(s, "warn") ||
        !strcmp(s, "no-op") || !strcmp(s, "reused"))
        return "succeeded";
    if (!strcmp(s, "error") || !strcmp(s, "fail") ||
        !strcmp(s, "runtime error") || !strcmp(s, "partial success"))
        return "failed";
    if (!strcmp(s, "skipped"))
        return "cancelled";
    return "unknown";
}

/* Commands whose node timings measure real execution. */
static int which_executes(const char *which)
{
    static const char *const yes[] = {"run", "build", "test", "seed",
                                      "snapshot", "run-operation", "retry",
                                      "source-freshness", "freshness"};
    size_t i;

    if (!which)
        return 1;
    for (i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!strcmp(which, yes[i]))
            return 1;
    return 0;
}

/* Keeps a short, single-spaced copy of a message (newlines folded). */
static void short_text(const char *s, char *buf, size_t cap)
{
    size_t i = 0;
    int space = 0;

    for (; *s && i + 1 < cap; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '\n' || ch == '\r' || ch == '\t' || ch == ' ') {
            space = i > 0;
            continue;
        }
        if (space && i + 2 < cap)
            buf[i++] = ' ';
        space = 0;
        buf[i++] = (char)ch;
    }
    if (*s && i >= 3) {
        /* mark the cut with an ASCII ellipsis */
        buf[i - 3] = buf[i - 2] = buf[i - 1] = '.';
    }
    buf[i] = '\0';
}

/* --- args → run config ----------------------------------------------------- */

static void config_value(rr_ctx *c, const char *key, const cJSON *v)
{
    char buf[DBT_CONFIG_MAX + 1];
    char *json;

    if (cJSON_IsString(v)) {
        snprintf(buf, sizeof buf, "%s", v->valuestring);
    } else if (cJSON_IsBool(v)) {
        snprintf(buf, sizeof buf, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d == floor(d) && fabs(d) < 1e15)
            snprintf(buf, sizeof buf, "%lld", (long long)d);
        else
            snprintf(buf, sizeof buf, "%.17g", d);
    } else if (cJSON_IsNull(v)) {
        return;
    } else {
        json = cJSON_PrintUnformatted(v);
        if (!json) {
            c->oom = 1;
            return;
        }
        snprintf(buf, sizeof buf, "%s", json);
        cJSON_free(json);
    }
    op_run_config(c->b, c->r, key, buf);
}

/* args.select (a string, or an array of strings) joined by spaces, for
 * the job key: one project's `dbt build -s tag:hourly` and its nightly
 * full build are different jobs. Longer than 512 bytes: cut (and still
 * stable from one run to the next). */
static void read_select(rr_ctx *c, const cJSON *args)
{
    const cJSON *sel = cJSON_GetObjectItemCaseSensitive(args, "select"), *it;
    char buf[512];
    size_t n = 0;

    buf[0] = 0;
    if (cJSON_IsString(sel))
        snprintf(buf, sizeof buf, "%s", sel->valuestring);
    else if (cJSON_IsArray(sel))
        cJSON_ArrayForEach(it, sel) {
            int k;
            if (!cJSON_IsString(it) || n >= sizeof buf - 1)
                continue;
            k = snprintf(buf + n, sizeof buf - n, "%s%s", n ? " " : "",
                         it->valuestring);
            n = k < 0 ? n : n + (size_t)k >= sizeof buf ? sizeof buf - 1
                                                       : n + (size_t)k;
        }
    if (buf[0])
        c->rec->select = strdup(buf); /* NULL on OOM: the key lacks it */
}

static void read_args(rr_ctx *c, const cJSON *args)
{
    const cJSON *it;

    read_select(c, args);
    cJSON_ArrayForEach(it, args)
        if (it->string && *it->string)
            config_value(c, it->string, it);
}

/* "--threads 8" / "--threads=8" in args.invocation_command. */
static int threads_from_command(const char *cmd)
{
    const char *p = cmd ? strstr(cmd, "--threads") : NULL;
    long v;

    if (!p)
        return 0;
    p += 9;
    if (*p != ' ' && *p != '=')
        return 0;
    while (*p == ' ' || *p == '=')
        p++;
    v = strtol(p, NULL, 10);
    return v > 0 && v < 100000 ? (int)v : 0;
}

static int threads_from_args(const cJSON *args)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(args, "threads");
    double d;

    if (cJSON_IsNumber(t)) {
        d = t->valuedouble;
        if (d >= 1 && d < 100000)
            return (int)d;
    }
    if (cJSON_IsString(t)) {
        long v = strtol(t->valuestring, NULL, 10);
        if (v >= 1 && v < 100000)
            return (int)v;
    }
    return threads_from_command(dbt_jstr(args, "invocation_command"));
}

/* --- timeline record -------------------------------------------------------- */

static dbt_rnode *rec_node(rr_ctx *c, const char *id)
{
    dbt_rrun *r = c->rec;
    size_t pos;

    if (op_strmap_get(&r->index, id, &pos))
        return &r->nodes[pos];
    if (OP_GROW(r->nodes, r->cap, r->n + 1, 64))
        goto oom;
    memset(&r->nodes[r->n], 0, sizeof r->nodes[r->n]);
    r->nodes[r->n].id = strdup(id);
    if (!r->nodes[r->n].id)
        goto oom;
    /* the map borrows the key from the node (stable: nodes only grow by
     * realloc, which moves the array of pointers, not the strings) */
    if (op_strmap_put(&r->index, r->nodes[r->n].id, r->n, 0, NULL)) {
        free(r->nodes[r->n].id);
        goto oom;
    }
    return &r->nodes[r->n++];
oom:
    c->oom = 1;
    return NULL;
}

static void note_package(rr_ctx *c, const char *id)
{
    char pkg[128];
    size_t i;

    dbt_id_package(id, pkg, sizeof pkg);
    if (!*pkg)
        return;
    for (i = 0; i < c->npackages; i++)
        if (!strcmp(c->packages[i], pkg))
            return;
    if (c->npackages == MAX_PACKAGES)
        return;
    memcpy(c->pkgbuf[c->npackages], pkg, sizeof pkg);
    c->packages[c->npackages] = c->pkgbuf[c->npackages];
    c->npackages++;
}

/* args.project_dir's last component, kept when it names one of the run's
 * packages: then it is the root project (docs/dbt.md "History"). */
static void project_hint(rr_ctx *c, const cJSON *args)
{
    const char *dir = dbt_jstr(args, "project_dir"), *base;
    char name[128];
    size_t n, i;

    if (!dir)
        return;
    n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    for (base = dir + n; base > dir && base[-1] != '/'; base--)
        ;
    if ((size_t)(dir + n - base) >= sizeof name || dir + n == base)
        return;
    memcpy(name, base, (size_t)(dir + n - base));
    name[dir + n - base] = '\0';
    for (i = 0; i < c->npackages; i++)
        if (!strcmp(c->packages[i], name)) {
            c->rec->project_dir = dbt_strdup(name, &c->oom);
            return;
        }
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *join_packages(rr_ctx *c)
{
    size_t i, len = 1;
    char *s;

    qsort(c->packages, c->npackages, sizeof *c->packages, str_cmp);
    for (i = 0; i < c->npackages; i++)
        len += strlen(c->packages[i]) + 1;
    s = malloc(len);
    if (!s)
        return NULL;
    s[0] = '\0';
    for (i = 0; i < c->npackages; i++) {
        if (i)
            strcat(s, "+");
        strcat(s, c->packages[i]);
    }
    return s;
}

/* --- one result ------------------------------------------------------------- */

typedef struct timing {
    int64_t start, end;         /* min start / max end over phases */
    int64_t compile_us, execute_us;
    int has_compile, has_execute, timed;
} timing;

static void read_timing(rr_ctx *c, const cJSON *arr, const char *id,
                        const char *where, timing *t)
{
    const cJSON *ph;
    char at[DBT_ID_MAX + 32];
    int k = 0;

    memset(t, 0, sizeof *t);
    cJSON_ArrayForEach(ph, arr) {
        int64_t s, e;
        const char *pname, *ss, *es;

        snprintf(at, sizeof at, "%s: timing[%d]", where, k++);
        if (!cJSON_IsObject(ph)) {
            bad_field(c, at, "the phase", ph, "not an object");
            continue;
        }
        pname = field_str(c, ph, "name", at);
        ss = field_str(c, ph, "started_at", at);
        es = field_str(c, ph, "completed_at", at);
        if (!ss && !es)
            continue;
        if (!dbt_parse_time(ss, &s) || !dbt_parse_time(es, &e) || e < s) {
            warnf(c, "%s: results[%s].timing: unreadable or reversed "
                  "timestamps (\"%.40s\" .. \"%.40s\"); phase ignored",
                  c->name, id, ss ? ss : "null", es ? es : "null");
            continue;
        }
        if (!t->timed || s < t->start)
            t->start = s;
        if (!t->timed || e > t->end)
            t->end = e;
        t->timed = 1;
        if (pname && !strcmp(pname, "compile")) {
            t->compile_us += e - s;
            t->has_compile = 1;
        } else if (pname && !strcmp(pname, "execute")) {
            t->execute_us += e - s;
            t->has_execute = 1;
        }
    }
}

static void read_adapter(rr_ctx *c, op_node *n, const cJSON *ar,
                         const char *where)
{
    static const char *const nums[] = {"rows_affected", "bytes_processed",
                                       "bytes_billed", "slot_ms"};
    static const char *const strs[][2] = {{"query_id", "query_id"},
                                          {"job_id", "job_id"},
                                          {"code", "adapter_code"},
                                          {"location", "location"}};
    size_t i;
    double v;

    for (i = 0; i < sizeof nums / sizeof *nums; i++) {
        /* rows_affected -1: the adapter does not know */
        if (!field_num(c, ar, nums[i], where, -1, MAX_COUNT, &v) || v < 0)
            continue;
        node_num(c->b, n, nums[i], v);
        if (!strcmp(nums[i], "bytes_billed")) {
            c->bytes_billed += v;
            c->has_billed = 1;
        } else if (!strcmp(nums[i], "bytes_processed")) {
            c->bytes_processed += v;
            c->has_processed = 1;
        } else if (!strcmp(nums[i], "slot_ms")) {
            c->slot_ms += v;
            c->has_slot = 1;
        }
    }
    for (i = 0; i < sizeof strs / sizeof *strs; i++) {
        const cJSON *sv = cJSON_GetObjectItemCaseSensitive(ar, strs[i][0]);
        const char *s = cJSON_IsNumber(sv) ? NULL /* codes may be numbers */
                                           : field_str(c, ar, strs[i][0], where);
        if (s && *s && strlen(s) < 512)
            op_node_attr(c->b, n, strs[i][1], s);
    }
}

static void count_status(rr_ctx *c, const char *type, const char *status)
{
    int test = !strcmp(type, "test") || !strcmp(type, "unit_test");

    c->n_tests += test;
    if (!status)
        return;
    if (!strcmp(status, "error") || !strcmp(status, "runtime error") ||
        !strcmp(status, "partial success"))
        c->n_error++;
    else if (!strcmp(status, "skipped"))
        c->n_skipped++;
    else if (!strcmp(status, "fail"))
        c->n_fail++;
    else if (!strcmp(status, "warn"))
        c->n_warn++;
}

static void read_batches(rr_ctx *c, op_node *n, const cJSON *br)
{
    const cJSON *ok = dbt_jarr(br, "successful"), *bad = dbt_jarr(br, "failed");

    if (ok)
        op_node_metric_int(c->b, n, "batches_succeeded", cJSON_GetArraySize(ok));
    if (bad)
        op_node_metric_int(c->b, n, "batches_failed", cJSON_GetArraySize(bad));
}

/* The index of a worker thread (SIZE_MAX for none / main). */
static size_t thread_index(rr_ctx *c, const char *thread)
{
    size_t pos;

    if (!thread)
        return SIZE_MAX;
    if (op_strmap_get(&c->threads, thread, &pos))
        return pos;
    pos = c->threads.n;
    if (op_strmap_put(&c->threads, thread, pos, 0, NULL))
        c->oom = 1;
    return pos;
}

/* Fields every result kind shares: id, kind, name, status, timing, thread,
 * execution time. Returns the node or NULL when the result is skipped. */
static op_node *read_common(rr_ctx *c, const cJSON *res, size_t idx,
                            char *where, size_t wcap, timing *t,
                            double *exec_s, int *has_exec)
{
    const char *id = dbt_jstr(res, "unique_id"), *status, *thread;
    char type[64], name[512];
    dbt_rnode *rn;
    op_node *n;

    if (!id || !*id || strlen(id) > DBT_ID_MAX) {
        warnf(c, "%s: results[%zu] has no usable unique_id; skipped",
              c->name, idx);
        return NULL;
    }
    snprintf(where, wcap, "node %s", id);
    status = field_str(c, res, "status", where);
    thread = field_str(c, res, "thread_id", where);
    n = op_node_get(c->b, c->r, id);
    if (!n)
        return NULL;
    dbt_id_type(id, type, sizeof type);
    dbt_id_name(id, name, sizeof name);
    op_node_str(c->b, n, OP_F_KIND, *type ? type : "node");
    op_node_str(c->b, n, OP_F_NAME, *name ? name : id);
    op_node_str(c->b, n, OP_F_STATUS, map_status(status));
    if (status && strlen(status) < 64)
        op_node_attr(c->b, n, "raw_status", status); /* nodes have no raw_status field */
    if (thread && strlen(thread) < 256)
        op_node_attr(c->b, n, "thread", thread);
    count_status(c, type, status);
    note_package(c, id);

    read_timing(c, field_of(c, res, "timing", where, 1), id, where, t);
    c->n_execute += t->has_execute;
    c->n_compiled += status && !strcmp(status, "compiled");
    *has_exec = field_num_set(c, res, "execution_time", where, 0,
                              MAX_SECONDS, exec_s);
    if (*has_exec)
        op_node_metric(c->b, n, "execution_time_ms", *exec_s * 1000.0);
    if (t->timed) {
        op_node_int(c->b, n, OP_I_STARTED_AT, dbt_us_to_ms(t->start));
        op_node_int(c->b, n, OP_I_ENDED_AT, dbt_us_to_ms(t->end));
        op_node_int(c->b, n, OP_I_DURATION_MS, (t->end - t->start + 500) / 1000);
        if (t->has_compile)
            op_node_metric(c->b, n, "compile_ms", t->compile_us / 1000.0);
        if (t->has_execute)
            op_node_metric(c->b, n, "execute_ms", t->execute_us / 1000.0);
    } else if (*has_exec && *exec_s > 0) {
        /* dbt-core #5476: errors lose their timing; the node's length is
         * known, its place on the timeline is not */
        op_node_int(c->b, n, OP_I_DURATION_MS, llround(*exec_s * 1000.0));
        op_node_attr(c->b, n, "untimed", "true");
        c->n_untimed++;
    }

    rn = rec_node(c, id);
    if (rn) {
        rn->timed = t->timed;
        rn->start_us = t->start;
        rn->end_us = t->end;
        rn->main_thread = thread && !strcmp(thread, "main");
        rn->thread = thread_index(c, rn->main_thread ? NULL : thread);
        if (t->timed && c->has_window &&
            (t->start < c->win_lo || t->end > c->win_hi)) {
            /* hand-assembled files mix runs: keep the node's own times but
             * leave it off the run's timeline */
            rn->timed = 0;
            op_node_attr(c->b, n, "timing_outside_run", "true");
            if (!c->n_outside++)
                warnf(c, "%s: %s ran outside this invocation's time window "
                      "(generated_at - elapsed_time); left out of the "
                      "timeline metrics", c->name, id);
        }
    }
    return n;
}

static void read_result(rr_ctx *c, const cJSON *res, size_t idx)
{
    char buf[DBT_MSG_MAX + 1];
    const char *msg, *rel;
    timing t;
    double v, exec_s = 0;
    int has_exec = 0;
    op_node *n;
    const cJSON *br, *ar;
    char where[DBT_ID_MAX + 8];

    if (!cJSON_IsObject(res)) {
        warnf(c, "%s: results[%zu] is not an object; skipped", c->name, idx);
        return;
    }
    n = read_common(c, res, idx, where, sizeof where, &t, &exec_s, &has_exec);
    if (!n)
        return;
    /* adapter_response: {} when empty; older adapters wrote [] */
    ar = cJSON_GetObjectItemCaseSensitive(res, "adapter_response");
    if (!(cJSON_IsArray(ar) && !ar->child))
        read_adapter(c, n, field_of(c, res, "adapter_response", where, 0),
                     where);
    if (field_num(c, res, "failures", where, 0, MAX_COUNT, &v))
        node_num(c->b, n, "failures", v);
    if ((msg = field_str(c, res, "message", where)) && *msg) {
        short_text(msg, buf, sizeof buf);
        op_node_attr(c->b, n, "message", buf);
    }
    if ((rel = field_str(c, res, "relation_name", where)) && *rel &&
        strlen(rel) < 1024)
        op_node_attr(c->b, n, "relation_name", rel);
    if ((br = field_of(c, res, "batch_results", where, 0)))
        read_batches(c, n, br);
}

/* --- freshness results ---------------------------------------------------- */

static double period_seconds(const char *p)
{
    if (!p)
        return 0;
    if (!strcmp(p, "minute"))
        return 60;
    if (!strcmp(p, "hour"))
        return 3600;
    if (!strcmp(p, "day"))
        return 86400;
    return 0;
}

static void read_criterion(rr_ctx *c, op_node *n, const cJSON *crit,
                           const char *key, const char *metric,
                           const char *where)
{
    char at[DBT_ID_MAX + 48];
    const cJSON *o;
    double count;
    double unit;

    snprintf(at, sizeof at, "%s: criteria", where);
    o = field_of(c, crit, key, at, 0);
    snprintf(at, sizeof at, "%s: criteria.%s", where, key);
    unit = period_seconds(field_str(c, o, "period", at));
    /* count 0 or null: no such criterion */
    if (o && field_num(c, o, "count", at, 0, MAX_SECONDS, &count) &&
        unit > 0 && count > 0)
        node_num(c->b, n, metric, count * unit * 1000.0);
}

static void read_freshness(rr_ctx *c, const cJSON *res, size_t idx)
{
    char buf[DBT_MSG_MAX + 1];
    const char *s;
    timing t;
    double v, exec_s = 0;
    int has_exec = 0;
    op_node *n;
    const cJSON *crit;
    char where[DBT_ID_MAX + 8];

    if (!cJSON_IsObject(res)) {
        warnf(c, "%s: results[%zu] is not an object; skipped", c->name, idx);
        return;
    }
    n = read_common(c, res, idx, where, sizeof where, &t, &exec_s, &has_exec);
    if (!n)
        return;
    if (field_num(c, res, "max_loaded_at_time_ago_in_s", where, -MAX_SECONDS,
                  MAX_SECONDS, &v))
        op_node_metric(c->b, n, "age_ms", v * 1000.0);
    if ((s = dbt_jstr(res, "max_loaded_at")) && strlen(s) < 64) {
        dbt_rnode *rn = rec_node(c, dbt_jstr(res, "unique_id"));
        int64_t us;
        op_node_attr(c->b, n, "max_loaded_at", s);
        if (dbt_parse_time(s, &us)) {
            op_node_metric_int(c->b, n, "max_loaded_at_ms", dbt_us_to_ms(us));
            if (rn) {
                rn->loaded_us = us;
                rn->has_loaded = 1;
            }
        } else {
            warnf(c, "%s: %s: max_loaded_at \"%s\" is not a timestamp; "
                  "ignored", c->name, where, s);
        }
    }
    if ((s = dbt_jstr(res, "snapshotted_at")) && strlen(s) < 64)
        op_node_attr(c->b, n, "snapshotted_at", s);
    crit = field_of(c, res, "criteria", where, 0);
    read_criterion(c, n, crit, "warn_after", "warn_after_ms", where);
    read_criterion(c, n, crit, "error_after", "error_after_ms", where);
    if ((s = dbt_jstr(crit, "filter")) && *s && strlen(s) < 1024)
        op_node_attr(c->b, n, "filter", s);
    if (((s = dbt_jstr(res, "error")) || (s = dbt_jstr(res, "message"))) && *s) {
        short_text(s, buf, sizeof buf);
        op_node_attr(c->b, n, "message", buf);
    }
}

/* --- run-level timeline metrics ------------------------------------------- */

typedef struct ev {
    int64_t t;
    int d; /* +1 start, -1 end */
} ev;

static int ev_cmp(const void *a, const void *b)
{
    const ev *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->d - y->d; /* ends before starts at the same instant */
}

typedef struct iv {
    size_t thread;
    int64_t s, e;
} iv;

static int iv_cmp(const void *a, const void *b)
{
    const iv *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    if (x->s != y->s)
        return x->s < y->s ? -1 : 1;
    return (x->e > y->e) - (x->e < y->e);
}

/* Merges the worker intervals of each thread (dbt never overlaps them, an
 * edited file may) and returns the merged count; busy is their length. */
static size_t merge_threads(rr_ctx *c, iv *v, size_t n, int64_t *busy)
{
    size_t i, m = 0;

    qsort(v, n, sizeof *v, iv_cmp);
    *busy = 0;
    for (i = 0; i < n; i++) {
        if (m && v[m - 1].thread == v[i].thread && v[i].s < v[m - 1].e) {
            c->n_overlap++;
            if (v[i].e > v[m - 1].e)
                v[m - 1].e = v[i].e;
            continue;
        }
        v[m++] = v[i];
    }
    for (i = 0; i < m; i++)
        *busy += v[i].e - v[i].s;
    return m;
}

static int peak_of(const iv *v, size_t n, int *peak)
{
    ev *evs = malloc((2 * n + 1) * sizeof *evs);
    size_t i;
    int cur = 0;

    *peak = 0;
    if (!evs)
        return OP_ENOMEM;
    for (i = 0; i < n; i++) {
        evs[2 * i] = (ev){v[i].s, +1};
        evs[2 * i + 1] = (ev){v[i].e, -1};
    }
    qsort(evs, 2 * n, sizeof *evs, ev_cmp);
    for (i = 0; i < 2 * n; i++) {
        cur += evs[i].d;
        if (cur > *peak)
            *peak = cur;
    }
    free(evs);
    return 0;
}

/* Span, busy time, peak concurrency and utilization (docs/dbt.md, "Threads and utilization"):
 * span over every timed node (hooks on `main` included), busy and peak over
 * worker threads only. */
static void timeline_metrics(rr_ctx *c, int threads, int inferred)
{
    dbt_rrun *r = c->rec;
    int64_t lo = 0, hi = 0, busy = 0, hook = 0;
    size_t i, nw = 0;
    int peak = 0;
    iv *v = malloc((r->n + 1) * sizeof *v);

    if (!v) {
        c->oom = 1;
        return;
    }
    for (i = 0; i < r->n; i++) {
        const dbt_rnode *n = &r->nodes[i];
        if (!n->timed)
            continue;
        if (!r->ntimed || n->start_us < lo)
            lo = n->start_us;
        if (!r->ntimed || n->end_us > hi)
            hi = n->end_us;
        r->ntimed++;
        if (n->main_thread)
            hook += n->end_us - n->start_us;
        else
            v[nw++] = (iv){n->thread, n->start_us, n->end_us};
    }
    nw = merge_threads(c, v, nw, &busy);
    if (peak_of(v, nw, &peak))
        c->oom = 1;
    free(v);
    if (c->n_overlap)
        warnf(c, "%s: %ld result%s an earlier one on the same thread "
              "(an edited file?); busy time counts each overlap once",
              c->name, c->n_overlap, c->n_overlap == 1 ? " overlaps" : "s overlap");
    if (inferred && peak > threads)
        threads = peak;
    r->t0_us = lo;
    r->span_us = hi - lo;
    r->busy_us = busy;
    r->threads = threads;
    if (threads > 0) {
        op_run_metric_int(c->b, c->r, "threads", threads);
        op_run_metric_int(c->b, c->r, "threads_inferred", inferred);
    }
    op_run_metric_int(c->b, c->r, "worker_threads", (int64_t)c->threads.n);
    if (!r->ntimed)
        return;
    op_run_metric(c->b, c->r, "span_ms", r->span_us / 1000.0);
    op_run_metric(c->b, c->r, "busy_ms", busy / 1000.0);
    op_run_metric(c->b, c->r, "hook_ms", hook / 1000.0);
    op_run_metric_int(c->b, c->r, "peak_concurrency", peak);
    if (r->span_us > 0) {
        op_run_metric(c->b, c->r, "avg_active", (double)busy / r->span_us);
        if (threads > 0)
            op_run_metric(c->b, c->r, "utilization_ratio",
                          (double)busy / ((double)threads * r->span_us));
    }
}

/* --- the run ---------------------------------------------------------------- */

static void run_times(rr_ctx *c, const cJSON *meta, double elapsed_s,
                      int has_elapsed)
{
    int64_t gen = 0, start = 0;
    int has_start = dbt_parse_time(dbt_jstr(meta, "invocation_started_at"),
                                   &start);

    if (c->rec->has_generated) {
        gen = c->rec->generated_us;
        op_run_int(c->b, c->r, OP_I_ENDED_AT, dbt_us_to_ms(gen));
        if (!has_start && has_elapsed) {
            start = gen - (int64_t)llround(elapsed_s * 1e6);
            has_start = 1;
        }
    }
    if (has_start)
        op_run_int(c->b, c->r, OP_I_STARTED_AT, dbt_us_to_ms(start));
    if (has_elapsed)
        op_run_int(c->b, c->r, OP_I_DURATION_MS, llround(elapsed_s * 1000.0));
    else if (has_start && c->rec->has_generated && gen >= start)
        op_run_int(c->b, c->r, OP_I_DURATION_MS, (gen - start + 500) / 1000);
}

static void run_status(rr_ctx *c)
{
    const char *raw;

    if (c->kind == DBT_RUN_FRESHNESS) {
        raw = c->n_error ? "error" : c->n_warn ? "warn" : "pass";
    } else {
        raw = c->n_error ? "error" : c->n_fail ? "fail" : "success";
    }
    op_run_str(c->b, c->r, OP_F_RAW_STATUS, raw);
    op_run_str(c->b, c->r, OP_F_STATUS,
               (c->n_error || c->n_fail) ? "failed" : "succeeded");
}

static void run_counts(rr_ctx *c)
{
    op_run_metric_int(c->b, c->r, "nodes_total", c->n_results);
    op_run_metric_int(c->b, c->r, "nodes_error", c->n_error);
    op_run_metric_int(c->b, c->r, "nodes_skipped", c->n_skipped);
    op_run_metric_int(c->b, c->r, "untimed_nodes", c->n_untimed);
    if (c->kind == DBT_RUN_RESULTS) {
        op_run_metric_int(c->b, c->r, "tests_total", c->n_tests);
        op_run_metric_int(c->b, c->r, "tests_failed", c->n_fail);
        op_run_metric_int(c->b, c->r, "tests_warned", c->n_warn);
    } else {
        op_run_metric_int(c->b, c->r, "sources_warned", c->n_warn);
    }
    if (c->has_billed)
        run_num(c->b, c->r, "bytes_billed", c->bytes_billed);
    if (c->has_processed)
        run_num(c->b, c->r, "bytes_processed", c->bytes_processed);
    if (c->has_slot)
        run_num(c->b, c->r, "slot_ms", c->slot_ms);
}

/* Keeps the run's record in the slot; a second file of the same
 * invocation replaces the first record. */
static int keep_record(rr_ctx *c, op_error *err)
{
    dbt_state *st = dbt_state_get(c->b);
    size_t i;

    if (!st)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", c->name);
    for (i = 0; i < st->nruns; i++)
        if (!strcmp(st->runs[i]->run_id, c->rec->run_id)) {
            dbt_rrun_free(st->runs[i]);
            st->runs[i] = c->rec;
            c->rec = NULL;
            return 0;
        }
    if (st->nruns >= DBT_MAX_RUNS)
        return op_error_set(err, OP_ELIMIT, "%s: more than %d dbt runs in "
                            "one analysis", c->name, DBT_MAX_RUNS);
    if (OP_GROW(st->runs, st->runs_cap, st->nruns + 1, 8))
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", c->name);
    st->runs[st->nruns++] = c->rec;
    c->rec = NULL;
    return 0;
}

/* The run id: invocation_id, else a stable stand-in from generated_at. */
static int make_run(rr_ctx *c, const cJSON *meta, op_error *err)
{
    const char *inv = dbt_jstr(meta, "invocation_id");
    const char *gen = dbt_jstr(meta, "generated_at");
    char id[160];

    if (inv && *inv && strlen(inv) < 128)
        snprintf(id, sizeof id, "%s", inv);
    else if (gen && strlen(gen) < 64)
        snprintf(id, sizeof id, "dbt-%s", gen);
    else
        snprintf(id, sizeof id, "dbt-%s", c->name);
    c->rec = calloc(1, sizeof *c->rec);
    if (!c->rec || !(c->rec->run_id = strdup(id)) ||
        !(c->rec->origin = strdup(c->name)))
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", c->name);
    c->rec->kind = c->kind;
    c->rec->has_generated = dbt_parse_time(gen, &c->rec->generated_us);
    c->r = op_run_get(c->b, "dbt", id);
    if (!c->r)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", c->name);
    if (gen && !c->rec->has_generated)
        warnf(c, "%s: metadata.generated_at \"%.64s\" is not an ISO-8601 "
              "timestamp", c->name, gen);
    return 0;
}

/* Whether the run's timings measure execution (docs/model-dbt.md
 * "executing"): args.which, else Fusion's args.command, else the RPC
 * method of dbt < 1.5 ("docs.generate"); a run none of these names
 * executes unless every result says "compiled" or none has an execute
 * phase (a compile-only file with its args stripped). */
static int run_executes(const rr_ctx *c, const cJSON *args, const char *which)
{
    const char *cmd = dbt_jstr(args, "command"), *rpc = dbt_jstr(args, "rpc_method");

    if (which)
        return which_executes(which);
    if (cmd && strlen(cmd) < 64)
        return which_executes(cmd);
    if (rpc && (!strncmp(rpc, "docs.", 5) || !strncmp(rpc, "compile", 7)))
        return 0;
    if (c->kind == DBT_RUN_RESULTS && c->n_results > 0 &&
        (c->n_compiled == c->n_results || c->n_execute == 0))
        return 0;
    return 1;
}

static void run_identity(rr_ctx *c, const cJSON *meta, const char *which)
{
    const char *ver = dbt_jstr(meta, "dbt_version");
    char name[128];

    if (ver && strlen(ver) < 64)
        op_run_str(c->b, c->r, OP_F_ENGINE_VERSION, ver);
    snprintf(name, sizeof name, "dbt %s", which ? which : "run");
    op_run_str(c->b, c->r, OP_F_NAME, name);
    op_run_metric_int(c->b, c->r, "schema_version",
                      dbt_schema_number(dbt_jstr(meta, "dbt_schema_version")));
    if (ver && ver[0] == '2' && ver[1] == '.')
        op_run_metric_int(c->b, c->r, "fusion", 1);
}

static int read_any(const cJSON *root, const char *name,
                    const dbt_notes *notes, op_builder *b, int kind,
                    op_error *err)
{
    rr_ctx c;
    const cJSON *meta = dbt_jobj(root, "metadata"), *args, *results, *res;
    const char *which;
    double elapsed = 0;
    int has_elapsed, threads, inferred = 0, rc;
    size_t idx = 0;

    memset(&c, 0, sizeof c);
    c.b = b;
    c.name = name;
    c.kind = kind;
    results = dbt_jarr(root, "results");
    if (!results) {
        rc = op_error_set(err, OP_EPARSE, "%s: `results` is missing or not "
                          "an array", name);
        goto out;
    }
    if ((rc = make_run(&c, meta, err)))
        goto out;
    op_json_notes_emit(notes, b, c.r);
    args = dbt_jobj(root, "args");
    which = dbt_jstr(args, "which");
    if (!which && kind == DBT_RUN_FRESHNESS)
        which = "source-freshness";
    if (which && !(c.rec->which = strdup(which))) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
        goto out;
    }
    run_identity(&c, meta, which);
    read_args(&c, args);
    if (kind == DBT_RUN_FRESHNESS && !dbt_jstr(args, "which"))
        op_run_config(b, c.r, "which", which);

    has_elapsed = field_num_set(&c, root, "elapsed_time", "$", 0,
                                MAX_SECONDS, &elapsed);
    if (has_elapsed && c.rec->has_generated) {
        c.has_window = 1;
        c.win_hi = c.rec->generated_us + WINDOW_SLACK_US;
        c.win_lo = c.rec->generated_us - (int64_t)llround(elapsed * 1e6) -
                   WINDOW_SLACK_US;
    }
    cJSON_ArrayForEach(res, results) {
        if (idx >= DBT_MAX_RESULTS) {
            warnf(&c, "%s: more than %d results; the rest were ignored", name,
                  DBT_MAX_RESULTS);
            break;
        }
        if (kind == DBT_RUN_FRESHNESS)
            read_freshness(&c, res, idx);
        else
            read_result(&c, res, idx);
        idx++;
    }
    c.n_results = (long)idx;
    c.rec->executing = run_executes(&c, args, which);
    op_run_metric_int(b, c.r, "executing", c.rec->executing);

    run_times(&c, meta, elapsed, has_elapsed);
    run_status(&c);
    run_counts(&c);
    threads = threads_from_args(args);
    if (!threads) {
        threads = (int)c.threads.n;
        inferred = 1;
    }
    timeline_metrics(&c, threads, inferred);
    project_hint(&c, args);
    if (!(c.rec->packages = join_packages(&c)))
        c.oom = 1;
    if (c.oom) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
        goto out;
    }
    if (c.nwarn > MAX_WARNINGS) {
        char more[160];
        snprintf(more, sizeof more, "%s: %d more warnings (not listed)", name,
                 c.nwarn - MAX_WARNINGS);
        op_run_warning(b, c.r, more);
    }
    rc = keep_record(&c, err);
out:
    op_strmap_free(&c.threads, 0);
    dbt_rrun_free(c.rec);
    return rc;
}

int dbt_read_results(const cJSON *root, const char *name,
                     const dbt_notes *notes, op_builder *b, op_error *err)
{
    return read_any(root, name, notes, b, DBT_RUN_RESULTS, err);
}

int dbt_read_sources(const cJSON *root, const char *name,
                     const dbt_notes *notes, op_builder *b, op_error *err)
{
    return read_any(root, name, notes, b, DBT_RUN_FRESHNESS, err);
}
