/*
 * flink_job.c - one Flink job into one run: job details, plan (the DAG),
 * vertices with IO metrics, per-subtask busy / backpressure / idle ratios
 * (from /backpressure or subtask metrics), input watermarks, rates, job
 * metrics, and the merged config. Names: docs/model-flink.md.
 *
 * Snapshot values come from the newest poll that has the path; series are
 * merged over every poll; rates compare the oldest and newest poll.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flink_internal.h"

const char *fl_status(const char *state)
{
    if (!state)
        return "unknown";
    if (!strcmp(state, "RUNNING"))
        return "running";
    if (!strcmp(state, "FINISHED"))
        return "succeeded";
    if (!strcmp(state, "FAILED"))
        return "failed";
    if (!strcmp(state, "CANCELED"))
        return "cancelled";
    return "unknown";
}

/* --- per-subtask values and accumulators ------------------------------ */

typedef struct fl_arr {
    double *v;
    size_t n;
    int oom;
} fl_arr;

static void arr_set(fl_arr *a, int64_t idx, double x)
{
    size_t i;

    if (idx < 0 || idx >= FL_MAX_SUBTASKS || a->oom)
        return;
    if ((size_t)idx >= a->n) {
        size_t nn = (size_t)idx + 1;
        double *nv = realloc(a->v, nn * sizeof *nv);
        if (!nv) {
            a->oom = 1;
            return;
        }
        for (i = a->n; i < nn; i++)
            nv[i] = NAN;
        a->v = nv;
        a->n = nn;
    }
    a->v[idx] = x;
}

static size_t arr_finite(const fl_arr *a, double *mean, double *max,
                         double *sum)
{
    size_t i, k = 0;
    double s = 0, m = -INFINITY;

    for (i = 0; i < a->n; i++) {
        if (!isfinite(a->v[i]))
            continue;
        s += a->v[i];
        if (a->v[i] > m)
            m = a->v[i];
        k++;
    }
    if (k) {
        *mean = s / (double)k;
        *max = m;
        *sum = s;
    }
    return k;
}

typedef struct fl_acc {
    size_t n;
    double min, max, sum, avg_sum; /* avg_sum: sum of reported averages */
} fl_acc;

static void acc_add(fl_acc *a, double mn, double mx, double sum, double avg)
{
    if (!isfinite(mn) || !isfinite(mx))
        return;
    if (!a->n || mn < a->min)
        a->min = mn;
    if (!a->n || mx > a->max)
        a->max = mx;
    a->sum += isfinite(sum) ? sum : 0;
    a->avg_sum += isfinite(avg) ? avg : 0;
    a->n++;
}

/* The metrics the model reads from Flink's metric system. */
enum {
    M_BUSY, M_BP, M_IDLE, M_RIN, M_ROUT, M_BIN, M_BOUT, M_START_DELAY,
    M_WM_OUT, M_PENDING, M_LATE, M_WM_LAG, M_SRC_IDLE, M_CONSUMER_LAG,
    M_EMIT_LAG, M_SRC_RIN, M_COUNT
};

static const struct {
    const char *name;
    int op_level; /* reported per operator: "<operator>.<name>" */
    int m;
    double scale;
} metric_map[] = {
    {"busyTimeMsPerSecond", 0, M_BUSY, 0.001},
    {"backPressuredTimeMsPerSecond", 0, M_BP, 0.001},
    {"idleTimeMsPerSecond", 0, M_IDLE, 0.001},
    {"numRecordsInPerSecond", 0, M_RIN, 1},
    {"numRecordsOutPerSecond", 0, M_ROUT, 1},
    {"numBytesInPerSecond", 0, M_BIN, 1},
    {"numBytesOutPerSecond", 0, M_BOUT, 1},
    {"checkpointStartDelayNanos", 0, M_START_DELAY, 1e-6},
    {"currentOutputWatermark", 1, M_WM_OUT, 1},
    {"pendingRecords", 1, M_PENDING, 1},
    {"numLateRecordsDropped", 1, M_LATE, 1},
    {"watermarkLag", 1, M_WM_LAG, 1},
    {"sourceIdleTime", 1, M_SRC_IDLE, 1},
    {"records-lag-max", 1, M_CONSUMER_LAG, 1},
    {"currentEmitEventTimeLag", 1, M_EMIT_LAG, 1},
};

/* Watermarks per subtask, kept as exact 64-bit values. */
typedef struct fl_wm {
    int64_t *v;
    unsigned char *set;
    size_t n;
    int oom;
} fl_wm;

typedef struct fl_vx {
    char id[FL_ID_MAX + 1];
    op_node *node;
    const cJSON *vjson;  /* entry of /jobs/<jid> vertices[] or NULL */
    const cJSON *pnode;  /* entry of plan.nodes[] or NULL */
    int is_source;
    fl_arr bp_src[3];    /* busy, backpressure, idle from /backpressure */
    fl_arr sub[M_COUNT]; /* per subtask from metrics, scaled */
    fl_acc agg[M_COUNT]; /* aggregates (subtasks/metrics, operators) */
    fl_wm in_wm;         /* task input watermark per subtask */
    fl_wm out_wm;        /* highest operator output watermark per subtask */
    fl_rdb *rdb;         /* RocksDB / ForSt native metrics, or NULL */
    int have_ratios;
} fl_vx;

static void wm_free(fl_wm *w)
{
    free(w->v);
    free(w->set);
}

static void vx_free(fl_vx *v)
{
    int i;

    for (i = 0; i < 3; i++)
        free(v->bp_src[i].v);
    for (i = 0; i < M_COUNT; i++)
        free(v->sub[i].v);
    wm_free(&v->in_wm);
    wm_free(&v->out_wm);
    fl_rdb_free(v->rdb);
}

/* Sets subtask idx to wm; with keep_max an existing higher value stays
 * (a chain's operators each report an output watermark: the one leaving
 * the task is the highest). */
static void wm_put(fl_wm *w, int64_t idx, int64_t wm, int keep_max)
{
    if (idx < 0 || idx >= FL_MAX_SUBTASKS || w->oom)
        return;
    if ((size_t)idx >= w->n) {
        size_t nn = (size_t)idx + 1;
        int64_t *nv = realloc(w->v, nn * sizeof *nv);
        unsigned char *ns;
        if (!nv) {
            w->oom = 1;
            return;
        }
        w->v = nv;
        ns = realloc(w->set, nn);
        if (!ns) {
            w->oom = 1;
            return;
        }
        memset(ns + w->n, 0, nn - w->n);
        w->set = ns;
        w->n = nn;
    }
    if (keep_max && w->set[idx] && w->v[idx] >= wm)
        return;
    w->v[idx] = wm;
    w->set[idx] = 1;
}

/* --- metric responses -------------------------------------------------- */

static int lookup_metric(const char *name, int *op_level)
{
    const char *dot = strrchr(name, '.');
    const char *leaf = dot ? dot + 1 : name;
    size_t i;

    for (i = 0; i < sizeof metric_map / sizeof metric_map[0]; i++) {
        if (strcmp(leaf, metric_map[i].name))
            continue;
        if (dot && !metric_map[i].op_level)
            break;
        *op_level = metric_map[i].op_level;
        return (int)i;
    }
    /* A source operator's own input rate (the task-level one is 0). */
    if (dot && !strcmp(leaf, "numRecordsInPerSecond") &&
        !strncmp(name, "Source", 6)) {
        *op_level = 1;
        return -2;
    }
    return -1;
}

/* Busy, backpressured and idle time are ms per second: 0..1000. An entry
 * with a value outside is left out whole (its ratios would be nonsense). */
static int time_ms_ok(int m, const cJSON *e)
{
    static const char *const f[] = {"value", "min", "max", "avg"};
    size_t i;
    double x;

    if (m != M_BUSY && m != M_BP && m != M_IDLE)
        return 1;
    for (i = 0; i < sizeof f / sizeof f[0]; i++)
        if (cJSON_GetObjectItemCaseSensitive(e, f[i]) &&
            fl_getnum(e, f[i], &x) && !fl_getnum_in(e, f[i], 0, 1000, &x))
            return 0;
    return 1;
}

/* One metric entry ({id, value} of subtask idx, or {id, min, max, avg,
 * sum}) into the vertex. idx < 0 for aggregates. */
static void vx_metric(fl_vx *v, const char *name, const cJSON *e,
                      int64_t idx)
{
    int op = 0, k = lookup_metric(name, &op), m;
    double scale, x, mn, mx, avg, sum;
    const char *leaf = strrchr(name, '.');

    leaf = leaf ? leaf + 1 : name;
    if (fl_rdb_metric(&v->rdb, name, e, idx))
        return;
    if (!strcmp(leaf, "currentInputWatermark") && leaf == name) {
        int64_t w;
        if (idx >= 0 && fl_geti64(e, "value", &w))
            wm_put(&v->in_wm, idx, w, 0);
        return;
    }
    if (k == -1)
        return;
    m = k == -2 ? M_SRC_RIN : metric_map[k].m;
    scale = k == -2 ? 1 : metric_map[k].scale;
    if (m == M_WM_OUT && idx >= 0) {
        int64_t w;
        if (fl_geti64(e, "value", &w))
            wm_put(&v->out_wm, idx, w, 1);
        return;
    }
    if (!time_ms_ok(m, e))
        return;
    if (fl_getnum(e, "value", &x)) {
        if (!op && idx >= 0)
            arr_set(&v->sub[m], idx, x * scale);
        else
            acc_add(&v->agg[m], x * scale, x * scale, x * scale, x * scale);
        return;
    }
    if (fl_getnum(e, "min", &mn) && fl_getnum(e, "max", &mx)) {
        if (!fl_getnum(e, "avg", &avg))
            avg = NAN;
        if (!fl_getnum(e, "sum", &sum))
            sum = NAN;
        if (m == M_WM_OUT && mn <= -9.2e18)
            return;
        acc_add(&v->agg[m], mn * scale, mx * scale, sum * scale,
                avg * scale);
    }
}

/* "3.busyTimeMsPerSecond" -> 3 and "busyTimeMsPerSecond". */
static int64_t split_subtask(const char *id, const char **rest)
{
    int64_t idx = 0;
    const char *p = id;

    if (*p < '0' || *p > '9')
        return -1;
    while (*p >= '0' && *p <= '9' && idx < FL_MAX_SUBTASKS)
        idx = idx * 10 + (*p++ - '0');
    if (*p != '.')
        return -1;
    *rest = p + 1;
    return idx;
}

static void vx_metrics_response(fl_vx *v, const fl_path *path,
                                const cJSON *resp)
{
    const cJSON *e;

    cJSON_ArrayForEach(e, resp)
    {
        const char *id = fl_str(e, "id"), *rest = NULL;
        int64_t idx = -1;

        if (!id)
            continue;
        if (path->ep == EP_SUBTASK_METRICS)
            idx = path->num;
        else if (path->ep == EP_VERTEX_METRICS) {
            idx = split_subtask(id, &rest);
            if (idx < 0)
                continue; /* vertex metrics are named "<subtask>.<m>" */
            id = rest;
        }
        vx_metric(v, id, e, idx);
    }
}

static void vx_backpressure(fl_vx *v, const cJSON *bp, op_builder *b)
{
    const cJSON *subs = fl_get(bp, "subtasks"), *s, *lvl;
    const char *status = fl_str(bp, "status");
    int pos = 0;

    if (status)
        op_node_attr(b, v->node, "backpressure_status", status);
    lvl = fl_get2(bp, "backpressureLevel", "backpressure-level");
    if (cJSON_IsString(lvl))
        op_node_attr(b, v->node, "backpressure_level", lvl->valuestring);
    cJSON_ArrayForEach(s, subs)
    {
        int64_t idx = pos++;
        double x;

        if (!fl_geti64_in(s, "subtask", 0, FL_MAX_SUBTASKS - 1, &idx) &&
            cJSON_GetObjectItemCaseSensitive(s, "subtask"))
            continue; /* refused: noted */
        if (fl_getnum_in(s, "busyRatio", 0, 1, &x))
            arr_set(&v->bp_src[0], idx, x);
        if (fl_getnum_in(s, "ratio", 0, 1, &x))
            arr_set(&v->bp_src[1], idx, x);
        if (fl_getnum_in(s, "idleRatio", 0, 1, &x))
            arr_set(&v->bp_src[2], idx, x);
    }
}

static void vx_watermarks(fl_vx *v, const cJSON *resp)
{
    const cJSON *e;

    cJSON_ArrayForEach(e, resp)
    {
        const char *id = fl_str(e, "id"), *rest = NULL;
        int64_t idx = id ? split_subtask(id, &rest) : -1, w;

        if (idx < 0 || strcmp(rest, "currentInputWatermark"))
            continue;
        if (fl_geti64(e, "value", &w))
            wm_put(&v->in_wm, idx, w, 0);
    }
}

/* --- emission ------------------------------------------------------------ */

static const char *ratio_names[3] = {"busy_ratio", "backpressure_ratio",
                                     "idle_ratio"};
static const int ratio_metrics[3] = {M_BUSY, M_BP, M_IDLE};

static void emit_arr(op_builder *b, op_node *n, const char *name,
                     const fl_arr *a)
{
    double mean = 0, max = 0, sum = 0;
    char key[64];

    if (!arr_finite(a, &mean, &max, &sum))
        return;
    op_node_dist_values(b, n, name, a->v, a->n);
    op_node_metric(b, n, name, mean);
    snprintf(key, sizeof key, "%s_max", name);
    op_node_metric(b, n, key, max);
}

static void emit_ratios(op_builder *b, fl_vx *v)
{
    int i, have_bp = 0, have_sub = 0;
    double mean, max, sum;
    const char *src = NULL;
    char key[64];

    for (i = 0; i < 3; i++) {
        have_bp |= arr_finite(&v->bp_src[i], &mean, &max, &sum) > 0;
        have_sub |= arr_finite(&v->sub[ratio_metrics[i]], &mean, &max,
                               &sum) > 0;
    }
    for (i = 0; i < 3; i++) {
        const fl_acc *a = &v->agg[ratio_metrics[i]];
        if (have_bp) {
            emit_arr(b, v->node, ratio_names[i], &v->bp_src[i]);
            src = "backpressure";
        } else if (have_sub) {
            emit_arr(b, v->node, ratio_names[i], &v->sub[ratio_metrics[i]]);
            src = "subtask_metrics";
        } else if (a->n) {
            op_node_metric(b, v->node, ratio_names[i],
                           a->avg_sum / (double)a->n);
            snprintf(key, sizeof key, "%s_max", ratio_names[i]);
            op_node_metric(b, v->node, key, a->max);
            src = "aggregated_metrics";
        }
    }
    if (src) {
        op_node_attr(b, v->node, "ratio_source", src);
        v->have_ratios = 1;
    }
}

/* Sum of a per-subtask rate, or of its aggregate; NAN when unknown. */
static double rate_of(const fl_vx *v, int m)
{
    double mean, max, sum;

    if (arr_finite(&v->sub[m], &mean, &max, &sum))
        return sum;
    if (v->agg[m].n)
        return v->agg[m].sum;
    return NAN;
}

static void emit_simple_metrics(op_builder *b, const fl_vx *v)
{
    static const struct {
        int m;
        const char *name;
        int how; /* 0 sum, 1 max, 2 min */
    } simple[] = {
        {M_BIN, "bytes_in_per_s", 0},
        {M_BOUT, "bytes_out_per_s", 0},
        {M_START_DELAY, "checkpoint_start_delay_max_ms", 1},
        {M_PENDING, "pending_records", 0},
        {M_LATE, "late_records_dropped", 0},
        {M_WM_LAG, "watermark_lag_max_ms", 1},
        {M_SRC_IDLE, "source_idle_time_max_ms", 1},
        {M_CONSUMER_LAG, "consumer_lag_max", 1},
        {M_EMIT_LAG, "emit_event_time_lag_max_ms", 1},
    };
    size_t i;

    for (i = 0; i < sizeof simple / sizeof simple[0]; i++) {
        const fl_acc *a = &v->agg[simple[i].m];
        double mean, max, sum, x = NAN;
        if (arr_finite(&v->sub[simple[i].m], &mean, &max, &sum))
            x = simple[i].how == 0 ? sum : max;
        else if (a->n)
            x = simple[i].how == 0 ? a->sum
                                   : (simple[i].how == 1 ? a->max : a->min);
        if (isfinite(x))
            op_node_metric(b, v->node, simple[i].name, x);
    }
    /* Aggregated output watermarks (no per-subtask values to list). */
    if (!v->out_wm.n && v->agg[M_WM_OUT].n) {
        op_node_metric(b, v->node, "output_watermark_min_ms",
                       v->agg[M_WM_OUT].min);
        op_node_metric(b, v->node, "output_watermark_max_ms",
                       v->agg[M_WM_OUT].max);
    }
}

/* a - b into *out unless it overflows (watermarks near the Long sentinels
 * are real input: a spread or lag that does not fit is left out). */
static int sub_i64(int64_t a, int64_t b, int64_t *out)
{
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b))
        return 0;
    *out = a - b;
    return 1;
}

/* One direction of watermarks: series records and node metrics named
 * <prefix>watermark_min_ms ... ("" for input, "output_" for output). */
static void emit_wm(fl_ctx *c, op_run *r, fl_vx *v, const fl_wm *w,
                    const char *kind, const char *prefix, int64_t now)
{
    size_t i, with = 0, without = 0;
    int64_t mn = INT64_MAX, mx = INT64_MIN, d;
    char key[64];

    for (i = 0; i < w->n; i++) {
        op_record *rec;
        if (!w->set[i])
            continue;
        rec = op_series_append(c->b, r, "watermarks");
        op_record_str(c->b, rec, "vertex", v->id);
        op_record_int(c->b, rec, "subtask", (int64_t)i);
        op_record_str(c->b, rec, "kind", kind);
        if (w->v[i] == INT64_MIN) {
            op_record_bool(c->b, rec, "has_watermark", 0);
            without++;
            continue;
        }
        op_record_bool(c->b, rec, "has_watermark", 1);
        op_record_int(c->b, rec, "watermark_ms", w->v[i]);
        with++;
        if (w->v[i] < mn)
            mn = w->v[i];
        if (w->v[i] > mx)
            mx = w->v[i];
    }
    if (!with && !without)
        return;
    snprintf(key, sizeof key, "%swatermark_subtasks", prefix);
    op_node_metric_int(c->b, v->node, key, (int64_t)(with + without));
    snprintf(key, sizeof key, "subtasks_without_%swatermark", prefix);
    op_node_metric_int(c->b, v->node, key, (int64_t)without);
    if (!with)
        return;
    snprintf(key, sizeof key, "%swatermark_min_ms", prefix);
    op_node_metric_int(c->b, v->node, key, mn);
    snprintf(key, sizeof key, "%swatermark_max_ms", prefix);
    op_node_metric_int(c->b, v->node, key, mx);
    snprintf(key, sizeof key, "%swatermark_spread_ms", prefix);
    if (mx != INT64_MAX && sub_i64(mx, mn, &d))
        op_node_metric_int(c->b, v->node, key, d);
    snprintf(key, sizeof key, "%swatermark_lag_ms", prefix);
    if (now > 0 && mn <= now && sub_i64(now, mn, &d))
        op_node_metric_int(c->b, v->node, key, d);
}

static void emit_watermarks(fl_ctx *c, op_run *r, fl_vx *v, int64_t now)
{
    emit_wm(c, r, v, &v->in_wm, "input", "", now);
    emit_wm(c, r, v, &v->out_wm, "output", "output_", now);
}

/* --- job details --------------------------------------------------------- */

/* One IO counter of vertices[].metrics; skipped (and listed) when Flink
 * marks it incomplete, since its zeros are then not trustworthy. */
static void io_counter(op_builder *b, op_node *n, const cJSON *m,
                       const char *field, const char *flag, const char *name,
                       char *incomplete, size_t isz)
{
    int complete = 1;
    double x;

    fl_getbool(m, flag, &complete);
    if (!fl_getnum(m, field, &x) || !isfinite(x))
        return;
    if (!complete) {
        size_t l = strlen(incomplete);
        snprintf(incomplete + l, isz - l, "%s%s", l ? "," : "", name);
        return;
    }
    op_node_metric(b, n, name, x);
}

static void vx_io(op_builder *b, const fl_vx *v)
{
    const cJSON *m = fl_get(v->vjson, "metrics");
    char incomplete[128] = "";
    double x;

    if (!m)
        return;
    io_counter(b, v->node, m, "read-records", "read-records-complete",
               "records_in", incomplete, sizeof incomplete);
    io_counter(b, v->node, m, "write-records", "write-records-complete",
               "records_out", incomplete, sizeof incomplete);
    io_counter(b, v->node, m, "read-bytes", "read-bytes-complete", "bytes_in",
               incomplete, sizeof incomplete);
    io_counter(b, v->node, m, "write-bytes", "write-bytes-complete",
               "bytes_out", incomplete, sizeof incomplete);
    if (incomplete[0])
        op_node_attr(b, v->node, "metrics_incomplete", incomplete);
    if (fl_getnum(m, "accumulated-busy-time", &x) && isfinite(x))
        op_node_metric(b, v->node, "accumulated_busy_ms", x);
    if (fl_getnum(m, "accumulated-idle-time", &x) && isfinite(x))
        op_node_metric(b, v->node, "accumulated_idle_ms", x);
    if (fl_getnum(m, "accumulated-backpressured-time", &x) && isfinite(x))
        op_node_metric(b, v->node, "accumulated_backpressured_ms", x);
}

static void vx_basics(op_builder *b, const fl_vx *v)
{
    const cJSON *vj = v->vjson;
    const char *name = fl_str(vj, "name"), *st = fl_str(vj, "status");
    int64_t x;

    op_node_str(b, v->node, OP_F_KIND, "vertex");
    if (!name && v->pnode) {
        char buf[512];
        fl_unescape_html(fl_str(v->pnode, "description"), buf, sizeof buf);
        fl_first_line(buf, buf, sizeof buf);
        if (buf[0])
            op_node_str(b, v->node, OP_F_NAME, buf);
    } else if (name)
        op_node_str(b, v->node, OP_F_NAME, name);
    if (st) {
        op_node_str(b, v->node, OP_F_STATUS, fl_status(st));
        op_node_str(b, v->node, OP_F_RAW_STATUS, st);
    }
    if (fl_geti64_in(vj, "parallelism", 1, FL_MAX_SUBTASKS, &x) ||
        fl_geti64_in(v->pnode, "parallelism", 1, FL_MAX_SUBTASKS, &x))
        op_node_int(b, v->node, OP_I_PARALLELISM, x);
    /* -1: "not set", as Flink writes it; other values outside are refused */
    if (fl_geti64_in(vj, "maxParallelism", -1, FL_MAX_SUBTASKS, &x) && x > 0)
        op_node_int(b, v->node, OP_I_MAX_PARALLELISM, x);
    if (fl_geti64(vj, "start-time", &x) && x > 0)
        op_node_int(b, v->node, OP_I_STARTED_AT, x);
    if (fl_geti64(vj, "end-time", &x) && x > 0)
        op_node_int(b, v->node, OP_I_ENDED_AT, x);
    if (fl_geti64_in(vj, "duration", -1, INT64_MAX, &x) && x >= 0)
        op_node_int(b, v->node, OP_I_DURATION_MS, x);
    if (fl_str(vj, "slotSharingGroupId"))
        op_node_attr(b, v->node, "slot_sharing_group",
                     fl_str(vj, "slotSharingGroupId"));
}

/* Parents, ship strategies and the description from the plan node. */
static void vx_plan(op_builder *b, fl_vx *v)
{
    const cJSON *inputs = fl_get(v->pnode, "inputs"), *in;
    char ship[256] = "", exch[256] = "";
    char *desc;
    size_t ls, le;

    v->is_source = !cJSON_IsArray(inputs) || cJSON_GetArraySize(inputs) == 0;
    cJSON_ArrayForEach(in, inputs)
    {
        const char *pid = fl_str(in, "id");
        const char *ss = fl_str(in, "ship_strategy");
        const char *ex = fl_str(in, "exchange");
        if (pid)
            op_node_parent(b, v->node, pid);
        ls = strlen(ship);
        snprintf(ship + ls, sizeof ship - ls, "%s%s", ls ? "," : "",
                 ss ? ss : "?");
        le = strlen(exch);
        snprintf(exch + le, sizeof exch - le, "%s%s", le ? "," : "",
                 ex ? ex : "?");
    }
    if (ship[0])
        op_node_attr(b, v->node, "ship_strategy", ship);
    if (exch[0])
        op_node_attr(b, v->node, "exchange", exch);
    if (!v->pnode || !fl_str(v->pnode, "description"))
        return;
    desc = malloc(FL_TEXT_MAX);
    if (!desc)
        return;
    fl_unescape_html(fl_str(v->pnode, "description"), desc, FL_TEXT_MAX);
    op_node_attr(b, v->node, "description", desc);
    free(desc);
}

/* Per-subtask IO and attempts from /jobs/<jid>/vertices/<vid>. */
static void vx_details(op_builder *b, const fl_vx *v, const cJSON *vd)
{
    static const struct {
        const char *field, *name;
    } io[] = {{"read-records", "records_in"},
              {"write-records", "records_out"},
              {"read-bytes", "bytes_in"},
              {"write-bytes", "bytes_out"}};
    const cJSON *subs = fl_get(vd, "subtasks"), *s;
    size_t n = (size_t)cJSON_GetArraySize(subs), i, k;
    int64_t max_attempt = -1;
    double *vals;

    if (!n || n > FL_MAX_SUBTASKS)
        return;
    vals = malloc(n * sizeof *vals);
    if (!vals)
        return;
    for (i = 0; i < sizeof io / sizeof io[0]; i++) {
        char flag[64];
        k = 0;
        snprintf(flag, sizeof flag, "%s-complete", io[i].field);
        cJSON_ArrayForEach(s, subs)
        {
            const cJSON *m = fl_get(s, "metrics");
            int complete = 1;
            double x;
            fl_getbool(m, flag, &complete);
            if (k < n && complete && fl_getnum(m, io[i].field, &x))
                vals[k++] = x;
        }
        if (k)
            op_node_dist_values(b, v->node, io[i].name, vals, k);
    }
    free(vals);
    cJSON_ArrayForEach(s, subs)
    {
        int64_t a;
        if (fl_geti64(s, "attempt", &a) && a > max_attempt)
            max_attempt = a;
    }
    if (max_attempt >= 0)
        op_node_metric_int(b, v->node, "max_attempt", max_attempt);
}

/* What vx_rates compares, looked up once per job: the oldest and newest
 * /jobs/<jid> responses, their times, and their vertices[] by id. */
typedef struct fl_rates {
    const cJSON *j0, *j1;
    size_t p0, p1;
    int64_t t0, t1;
    fl_byid ix0, ix1; /* ix1 unused when j1 == j0 */
} fl_rates;

static int rates_init(fl_ctx *c, fl_rates *rt, const char *jid)
{
    memset(rt, 0, sizeof *rt);
    rt->j0 = fl_find_oldest(c, EP_JOB, jid, NULL, &rt->p0);
    rt->j1 = fl_find_newest(c, EP_JOB, jid, NULL, &rt->p1);
    if (!fl_geti64(rt->j0, "now", &rt->t0))
        rt->t0 = c->polls[rt->p0].captured_at;
    if (!fl_geti64(rt->j1, "now", &rt->t1))
        rt->t1 = c->polls[rt->p1].captured_at;
    /* The last vertices[] entry with the id wins (an entry without an id
     * counts as ""), as a scan of the list would find it. */
    if (fl_byid_build(&rt->ix0, fl_get(rt->j0, "vertices"), "id", 1))
        return OP_ENOMEM;
    if (rt->j1 != rt->j0 &&
        fl_byid_build(&rt->ix1, fl_get(rt->j1, "vertices"), "id", 1))
        return OP_ENOMEM;
    return OP_OK;
}

static void rates_free(fl_rates *rt)
{
    fl_byid_free(&rt->ix0);
    fl_byid_free(&rt->ix1);
}

/* records_in_per_s / records_out_per_s: current metrics, else the delta
 * between the oldest and newest /jobs/<jid> poll, else the lifetime mean. */
static void vx_rates(fl_ctx *c, const fl_vx *v, const fl_rates *rt)
{
    static const struct {
        const char *field, *name;
        int m;
    } rates[] = {{"read-records", "records_in_per_s", M_RIN},
                 {"write-records", "records_out_per_s", M_ROUT}};
    const fl_byid *ix1 = rt->j1 == rt->j0 ? &rt->ix0 : &rt->ix1;
    const char *src = NULL;
    size_t i;

    for (i = 0; i < 2; i++) {
        double x = rate_of(v, rates[i].m), a, bb, d;
        const cJSON *m0, *m1;
        if (i == 0 && v->is_source && isfinite(rate_of(v, M_SRC_RIN)) &&
            !(isfinite(x) && x > 0))
            x = rate_of(v, M_SRC_RIN);
        if (isfinite(x)) {
            op_node_metric(c->b, v->node, rates[i].name, x);
            src = "metrics";
            continue;
        }
        m0 = fl_get(fl_byid_last(&rt->ix0, v->id), "metrics");
        m1 = fl_get(fl_byid_last(ix1, v->id), "metrics");
        if (rt->p1 > rt->p0 && rt->t1 > rt->t0 &&
            fl_getnum(m0, rates[i].field, &a) &&
            fl_getnum(m1, rates[i].field, &bb) && bb >= a) {
            op_node_metric(c->b, v->node, rates[i].name,
                           (bb - a) /
                               (((double)rt->t1 - (double)rt->t0) / 1000.0));
            src = src ? src : "samples";
            continue;
        }
        if (fl_getnum(m1, rates[i].field, &a) &&
            fl_getnum(v->vjson, "duration", &d) && d > 0) {
            op_node_metric(c->b, v->node, rates[i].name, a / (d / 1000.0));
            src = src ? src : "lifetime";
        }
    }
    if (src)
        op_node_attr(c->b, v->node, "rate_source", src);
}

/* The endpoints that answer metrics of a vertex. */
static const enum fl_ep meps[3] = {EP_SUBTASKS_METRICS, EP_SUBTASK_METRICS,
                                   EP_VERTEX_METRICS};

/* The metrics responses of one vertex over every poll: one slice per
 * metrics endpoint, each in poll order. */
typedef struct fl_mslices {
    const fl_entry *const *ent[3];
    size_t n[3];
} fl_mslices;

static int metrics_usable(const fl_entry *e)
{
    return cJSON_IsArray(e->resp) && !e->err;
}

/* The newest poll with a usable metrics response; 0 when there is none. */
static int metrics_newest(const fl_mslices *s, size_t *newest)
{
    size_t k, i;
    int found = 0;

    for (k = 0; k < 3; k++)
        for (i = s->n[k]; i-- > 0;)
            if (metrics_usable(s->ent[k][i])) {
                if (!found || s->ent[k][i]->poll > *newest)
                    *newest = s->ent[k][i]->poll;
                found = 1;
                break;
            }
    return found;
}

/* Every usable metrics response of poll p, in the poll's order (the three
 * slices merged by position). */
static void metrics_apply(fl_vx *v, const fl_mslices *s, size_t p)
{
    size_t at[3], k;

    for (k = 0; k < 3; k++) {
        at[k] = s->n[k];
        while (at[k] > 0 && s->ent[k][at[k] - 1]->poll >= p)
            at[k]--;
    }
    for (;;) {
        const fl_entry *e = NULL;
        size_t pick = 0;
        for (k = 0; k < 3; k++) {
            const fl_entry *h;
            if (at[k] >= s->n[k] || s->ent[k][at[k]]->poll != p)
                continue;
            h = s->ent[k][at[k]];
            if (!e || h->pos < e->pos) {
                e = h;
                pick = k;
            }
        }
        if (!e)
            return;
        at[pick]++;
        if (metrics_usable(e))
            vx_metrics_response(v, &e->path, e->resp);
    }
}

/* The oldest poll with a usable metrics response; 0 when there is none. */
static int metrics_oldest(const fl_mslices *s, size_t *oldest)
{
    size_t k, i;
    int found = 0;

    for (k = 0; k < 3; k++)
        for (i = 0; i < s->n[k]; i++)
            if (metrics_usable(s->ent[k][i])) {
                if (!found || s->ent[k][i]->poll < *oldest)
                    *oldest = s->ent[k][i]->poll;
                found = 1;
                break;
            }
    return found;
}

/* When poll p was taken: the JobManager's "now" of its /jobs/<jid>
 * response (the clock the job's own rates use), else the poll's time. */
static int64_t poll_time(const fl_ctx *c, const char *jid, size_t p)
{
    int64_t t;

    if (fl_geti64(fl_find(c, p, EP_JOB, jid, NULL, -1), "now", &t) && t > 0)
        return t;
    return c->polls[p].captured_at;
}

/* Counters that only mean something as a rate (late records dropped) or a
 * trend (a source's pending records): their change between the oldest and
 * the newest poll with metrics, per second. v holds the newest values.
 * Returns 1 when the late-records rate was emitted. */
static int vx_counter_rates(fl_ctx *c, const fl_vx *v, const char *jid,
                             const fl_mslices *s, size_t newest)
{
    static const struct {
        int m;
        const char *name;
    } counters[] = {{M_LATE, "late_records_dropped_per_s"},
                    {M_PENDING, "pending_records_change_per_s"}};
    size_t oldest = 0, i;
    int64_t t0, t1;
    int late = 0;
    fl_vx old;

    if (!metrics_oldest(s, &oldest) || oldest >= newest)
        return 0;
    t0 = poll_time(c, jid, oldest);
    t1 = poll_time(c, jid, newest);
    if (t0 <= 0 || t1 <= t0)
        return 0;
    memset(&old, 0, sizeof old);
    metrics_apply(&old, s, oldest);
    for (i = 0; i < sizeof counters / sizeof counters[0]; i++) {
        double a = rate_of(&old, counters[i].m);
        double b = rate_of(v, counters[i].m);
        if (!isfinite(a) || !isfinite(b) || old.sub[counters[i].m].oom)
            continue;
        /* A counter that went down was reset by a restart: no rate. */
        if (counters[i].m == M_LATE && b < a)
            continue;
        if (!isfinite(b - a))
            continue;
        op_node_metric(c->b, v->node, counters[i].name,
                       (b - a) / (((double)t1 - (double)t0) / 1000.0));
        if (counters[i].m == M_LATE) {
            op_node_attr(c->b, v->node, "late_rate_source", "samples");
            late = 1;
        }
    }
    vx_free(&old);
    return late;
}

/* Without two polls of it: late records over the vertex's running time. */
static void vx_late_lifetime(op_builder *b, const fl_vx *v)
{
    double late = rate_of(v, M_LATE), d;

    if (!isfinite(late))
        return;
    if (fl_getnum(v->vjson, "duration", &d) && d > 0) {
        op_node_metric(b, v->node, "late_records_dropped_per_s",
                       late / (d / 1000.0));
        op_node_attr(b, v->node, "late_rate_source", "lifetime");
    }
}

/* Where the partition names first went wrong: a response and an index. */
typedef struct fl_part_at {
    const fl_entry *e;
    int i;
} fl_part_at;

static void part_warning(fl_ctx *c, op_run *r, const fl_part_at *at,
                         const char *what)
{
    char msg[700];

    snprintf(msg, sizeof msg, "%.300s: $[%d].id: %.300s", at->e->resp->string,
             at->i, what);
    op_run_warning(c->b, r, msg);
}

/* source_partitions / source_topics: the distinct (topic, partition)
 * pairs that the metric names of vertex v name, over every poll
 * (flink_partitions.c); unusable names and too many pairs are warned. */
static void vx_partitions(fl_ctx *c, op_run *r, const char *jid, fl_vx *v)
{
    fl_parts pt;
    fl_part_at bad = {NULL, 0}, over = {NULL, 0};
    const fl_entry *const *ent;
    size_t k, n, i;
    char what[300];

    memset(&pt, 0, sizeof pt);
    for (k = 0; k < 3; k++) {
        n = fl_entries(c, meps[k], jid, v->id, &ent);
        for (i = 0; i < n; i++) {
            const cJSON *e;
            int idx = 0;
            if (!metrics_usable(ent[i]))
                continue;
            cJSON_ArrayForEach(e, ent[i]->resp)
            {
                size_t was_bad = pt.bad;
                const char *id = fl_str(e, "id");
                if (id)
                    fl_parts_add(&pt, id);
                if (pt.bad > was_bad && !bad.e)
                    bad = (fl_part_at){ent[i], idx};
                if (pt.over && !over.e)
                    over = (fl_part_at){ent[i], idx};
                idx++;
            }
        }
    }
    if (bad.e) {
        snprintf(what, sizeof what,
                 "%zu Kafka offset metric name%s with a topic or partition "
                 "that cannot be (partition 0..2147483647, topic 1..249 "
                 "bytes): not counted as partitions",
                 pt.bad, pt.bad == 1 ? "" : "s");
        part_warning(c, r, &bad, what);
    }
    if (over.e) {
        snprintf(what, sizeof what,
                 "more than %d distinct topic partitions named by the metrics "
                 "of vertex %s: its partition count is left out",
                 FL_MAX_PARTITIONS, v->id);
        part_warning(c, r, &over, what);
    } else if (pt.oom) {
        op_run_warning(c->b, r, "out of memory counting the partitions of a "
                                "source: its partition count is left out");
    } else if (pt.n) {
        op_node_metric_int(c->b, v->node, "source_partitions", (int64_t)pt.n);
        if (pt.topics <= FL_MAX_TOPICS)
            op_node_metric_int(c->b, v->node, "source_topics",
                               (int64_t)pt.topics);
    }
    fl_parts_free(&pt);
}

/* Everything the polls say about vertex v's subtasks. */
static void vx_collect(fl_ctx *c, fl_vx *v, const char *jid)
{
    const cJSON *bp = fl_find_newest(c, EP_BACKPRESSURE, jid, v->id, NULL);
    const cJSON *wm = fl_find_newest(c, EP_WATERMARKS, jid, v->id, NULL);
    fl_mslices s;
    size_t k, newest = 0;

    if (bp)
        vx_backpressure(v, bp, c->b);
    if (wm)
        vx_watermarks(v, wm);
    /* Metrics: the newest poll with any metrics response for v. */
    for (k = 0; k < 3; k++)
        s.n[k] = fl_entries(c, meps[k], jid, v->id, &s.ent[k]);
    if (metrics_newest(&s, &newest)) {
        metrics_apply(v, &s, newest);
        if (!vx_counter_rates(c, v, jid, &s, newest))
            vx_late_lifetime(c->b, v);
    }
}

static int64_t job_now(fl_ctx *c, const char *jid)
{
    size_t p = 0;
    const cJSON *job = fl_find_newest(c, EP_JOB, jid, NULL, &p);
    int64_t now = 0;

    if (job && fl_geti64(job, "now", &now) && now > 0)
        return now;
    if (job && c->polls[p].captured_at > 0)
        return c->polls[p].captured_at;
    for (p = c->npolls; p-- > 0;)
        if (c->polls[p].captured_at > 0)
            return c->polls[p].captured_at;
    return 0;
}

/* A vertex to build, and what vertex_warnings needs once it is built (the
 * bulky fl_vx exists for one vertex at a time). */
typedef struct fl_vref {
    char id[FL_ID_MAX + 1];
    const cJSON *vjson, *pnode;
    int have_ratios, have_wm;
    /* Busy, backpressured, idle ms per subtask summed over consecutive
     * /jobs/<jid> polls, and the wall time they cover (acc_ratios). */
    double acc_ms[3], acc_dt[3];
} fl_vref;

/* Builds the vertex list: vertices[] order, else plan order (pix: the plan
 * nodes by id). *oom is set when the list could not be allocated. */
static size_t vx_list_ix(const cJSON *job, const cJSON *plan,
                         const fl_byid *pix, const fl_ctx *c, fl_vref **out,
                         int *oom)
{
    const cJSON *varr = fl_get(job, "vertices"), *arr = varr, *it;
    size_t n = 0, cap;
    fl_vref *v;

    if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0)
        arr = fl_get(plan, "nodes");
    cap = (size_t)cJSON_GetArraySize(arr);
    if (c->lone && !cap) {
        /* A lone vertex-scoped response: one vertex from its path. */
        const fl_path *path;
        const cJSON *resp;
        if (fl_entry_at(c, 0, 0, &path, &resp) && path->vid[0]) {
            v = calloc(1, sizeof *v);
            if (!v) {
                *oom = 1;
                return 0;
            }
            snprintf(v->id, sizeof v->id, "%s", path->vid);
            if (path->ep == EP_VERTEX)
                v->vjson = resp;
            *out = v;
            return 1;
        }
    }
    if (!cap)
        return 0;
    v = calloc(cap, sizeof *v);
    if (!v) {
        *oom = 1;
        return 0;
    }
    cJSON_ArrayForEach(it, arr)
    {
        const char *id = fl_str(it, "id");
        size_t len = id ? strlen(id) : 0;
        if (!id || n >= cap || len > FL_ID_MAX)
            continue;
        memcpy(v[n].id, id, len + 1);
        v[n].vjson = arr == varr ? it : NULL;
        v[n].pnode = fl_byid_first(pix, id);
        n++;
    }
    *out = v;
    return n;
}

static size_t vx_list(const cJSON *job, const cJSON *plan, const fl_ctx *c,
                      fl_vref **out, int *oom)
{
    fl_byid pix;
    size_t n;

    /* plan.nodes[] by id; the first node with an id wins. */
    if (fl_byid_build(&pix, fl_get(plan, "nodes"), "id", 0)) {
        *oom = 1;
        return 0;
    }
    n = vx_list_ix(job, plan, &pix, c, out, oom);
    fl_byid_free(&pix);
    return n;
}

/* --- ratios from accumulated times --------------------------------------- */

static const char *const acc_fields[3] = {"accumulated-busy-time",
                                          "accumulated-backpressured-time",
                                          "accumulated-idle-time"};

/* The time of a /jobs/<jid> response: its "now", else its poll's. */
static int64_t job_time(const fl_ctx *c, const fl_entry *e)
{
    int64_t t;

    if (fl_geti64(e->resp, "now", &t) && t > 0)
        return t;
    return c->polls[e->poll].captured_at;
}

/* One pair of consecutive polls of a vertex (a: older, b: newer, dt ms
 * apart): the counters' growth per subtask. A parallelism change or a
 * counter that went down (tasks restarted) makes the pair unusable. */
static void acc_pair(fl_vref *v, const cJSON *a, const cJSON *b, int64_t dt)
{
    const cJSON *ma = fl_get(a, "metrics"), *mb = fl_get(b, "metrics");
    int64_t pa, pb;
    int i;

    if (!fl_geti64(a, "parallelism", &pa) ||
        !fl_geti64(b, "parallelism", &pb) || pa != pb || pa <= 0)
        return;
    for (i = 0; i < 3; i++) {
        double x, y;
        if (!fl_getnum(ma, acc_fields[i], &x) ||
            !fl_getnum(mb, acc_fields[i], &y) || !isfinite(x) ||
            !isfinite(y) || x < 0 || y < x || !isfinite(y - x))
            continue;
        v->acc_ms[i] += (y - x) / (double)pa;
        v->acc_dt[i] += (double)dt;
    }
}

/* Busy ratio = growth of accumulated-busy-time / wall time / parallelism
 * over consecutive /jobs/<jid> polls (the Kubernetes autoscaler's
 * ScalingMetricCollector does the same), for exports without /backpressure
 * or subtask metrics. One poll's vertices are indexed at a time. */
static int acc_ratios(fl_ctx *c, const char *jid, fl_vref *v, size_t n)
{
    const fl_entry *const *ents;
    size_t ne = fl_entries(c, EP_JOB, jid, "", &ents), i, k, last = 0;
    fl_byid prev, cur;
    int64_t tprev = 0;
    int have_prev = 0;

    memset(&prev, 0, sizeof prev);
    for (i = 0; i < ne; i++) {
        const fl_entry *e = ents[i];
        int64_t t;
        /* the first response of a poll wins, as for fl_find */
        if (e->err || (have_prev && e->poll == last))
            continue;
        t = job_time(c, e);
        if (t <= 0 || (have_prev && t <= tprev))
            continue;
        if (fl_byid_build(&cur, fl_get(e->resp, "vertices"), "id", 1)) {
            fl_byid_free(&prev);
            return OP_ENOMEM;
        }
        if (have_prev)
            for (k = 0; k < n; k++)
                acc_pair(&v[k], fl_byid_last(&prev, v[k].id),
                         fl_byid_last(&cur, v[k].id), t - tprev);
        fl_byid_free(&prev);
        prev = cur;
        tprev = t;
        last = e->poll;
        have_prev = 1;
    }
    fl_byid_free(&prev);
    return OP_OK;
}

/* The ratios from accumulated times, for a vertex that has no others. */
static void emit_acc_ratios(op_builder *b, fl_vx *v, const fl_vref *ref)
{
    double window = 0;
    int i;

    if (v->have_ratios)
        return;
    for (i = 0; i < 3; i++)
        if (ref->acc_dt[i] > 0) {
            op_node_metric(b, v->node, ratio_names[i],
                           ref->acc_ms[i] / ref->acc_dt[i]);
            if (ref->acc_dt[i] > window)
                window = ref->acc_dt[i];
        }
    if (window > 0) {
        v->have_ratios = 1;
        op_node_attr(b, v->node, "ratio_source", "accumulated");
        op_node_metric_int(b, v->node, "ratio_window_ms", (int64_t)window);
    }
}

static void vertex_warnings(fl_ctx *c, op_run *r, const fl_vref *v,
                            size_t n)
{
    size_t i, missing = 0, wm = 0;
    char names[200] = "", msg[400];

    for (i = 0; i < n; i++) {
        if (v[i].have_wm)
            wm++;
        if (v[i].have_ratios)
            continue;
        if (missing < 3) {
            size_t l = strlen(names);
            snprintf(names + l, sizeof names - l, "%s%.40s", l ? ", " : "",
                     v[i].id);
        }
        missing++;
    }
    if (missing) {
        snprintf(msg, sizeof msg,
                 "no /backpressure or subtask metrics for %zu of %zu "
                 "vertices (%s%s): their busy and backpressure ratios are "
                 "unknown",
                 missing, n, names, missing > 3 ? ", ..." : "");
        op_run_warning(c->b, r, msg);
    }
    if (n && !wm)
        op_run_warning(c->b, r,
                       "no /watermarks responses: watermark checks have "
                       "nothing to read");
}

/* A running job of several vertices whose plan has no edges (an empty
 * plan of a job still deploying): the DAG is unknown, which silences every
 * check that follows it, so say so. */
static void edge_warning(fl_ctx *c, op_run *r, const cJSON *job,
                         const fl_vref *v, size_t n)
{
    const char *state = fl_str(job, "state");
    size_t i;
    char msg[300];

    if (n < 2 || !state || strcmp(state, "RUNNING"))
        return;
    for (i = 0; i < n; i++)
        if (cJSON_GetArraySize(fl_get(v[i].pnode, "inputs")) > 0)
            return;
    snprintf(msg, sizeof msg,
             "$.plan.nodes: no edges between the %zu vertices of a running "
             "job (an empty plan, e.g. while it deploys): the DAG is "
             "unknown, so backpressure cannot be traced to its bottleneck",
             n);
    op_run_warning(c->b, r, msg);
}

/* Builds the node of vertex ref into run r. */
static void vertex(fl_ctx *c, op_run *r, const char *jid, fl_vref *ref,
                  const fl_rates *rt, int64_t now)
{
    fl_vx v;
    const cJSON *vd;

    memset(&v, 0, sizeof v);
    memcpy(v.id, ref->id, sizeof v.id);
    v.vjson = ref->vjson;
    v.pnode = ref->pnode;
    v.node = op_node_get(c->b, r, v.id);
    if (v.node) {
        vx_basics(c->b, &v);
        vx_plan(c->b, &v);
        vx_io(c->b, &v);
        vd = fl_find_newest(c, EP_VERTEX, jid, v.id, NULL);
        if (vd)
            vx_details(c->b, &v, vd);
        vx_collect(c, &v, jid);
        emit_ratios(c->b, &v);
        emit_acc_ratios(c->b, &v, ref);
        emit_simple_metrics(c->b, &v);
        fl_rdb_emit(c->b, r, v.node, v.id, v.rdb);
        vx_rates(c, &v, rt);
        emit_watermarks(c, r, &v, now);
        vx_partitions(c, r, jid, &v);
    }
    ref->have_ratios = v.have_ratios;
    ref->have_wm = v.in_wm.n || v.out_wm.n;
    vx_free(&v);
}

static int vertices(fl_ctx *c, op_run *r, const char *jid, const cJSON *job,
                    const cJSON *plan)
{
    fl_vref *v = NULL;
    int oom = 0;
    size_t n = vx_list(job, plan, c, &v, &oom), i;
    int64_t now = job_now(c, jid);
    fl_rates rt;

    if (oom)
        return OP_ENOMEM;
    if (acc_ratios(c, jid, v, n)) {
        free(v);
        return OP_ENOMEM;
    }
    if (rates_init(c, &rt, jid)) {
        rates_free(&rt);
        free(v);
        return OP_ENOMEM;
    }
    for (i = 0; i < n; i++)
        vertex(c, r, jid, &v[i], &rt, now);
    if (!c->lone) {
        vertex_warnings(c, r, v, n);
        edge_warning(c, r, job, v, n);
    }
    op_run_metric_int(c->b, r, "vertices", (int64_t)n);
    free(v);
    rates_free(&rt);
    return OP_OK;
}

/* --- run level ------------------------------------------------------------ */

/* Job jid's entry of the newest /jobs/overview (the first one listed). */
static const cJSON *overview_entry(fl_ctx *c, const char *jid)
{
    const cJSON *ov, *j;

    if (c->overview_built)
        return fl_byid_first(&c->overview, jid);
    ov = fl_find_newest(c, EP_JOBS_OVERVIEW, NULL, NULL, NULL);
    if (!fl_byid_build(&c->overview, fl_get(ov, "jobs"), "jid", 0)) {
        c->overview_built = 1;
        return fl_byid_first(&c->overview, jid);
    }
    /* No memory for the index: scan (one job at a time). */
    cJSON_ArrayForEach(j, fl_get(ov, "jobs"))
    {
        const char *id = fl_str(j, "jid");
        if (id && !strcmp(id, jid))
            return j;
    }
    return NULL;
}

static void run_state_timestamps(op_builder *b, op_run *r, const cJSON *job)
{
    const cJSON *ts = fl_get(job, "timestamps"), *t;

    cJSON_ArrayForEach(t, ts)
    {
        int64_t x;
        char key[64];
        size_t i;
        if (!t->string || !fl_i64(t, &x) || x <= 0 || strlen(t->string) > 40)
            continue;
        for (i = 0; t->string[i]; i++)
            key[i] = (char)((t->string[i] >= 'A' && t->string[i] <= 'Z')
                                ? t->string[i] - 'A' + 'a'
                                : t->string[i]);
        snprintf(key + i, sizeof key - i, "_at");
        op_run_metric_int(b, r, key, x);
    }
}

static void run_basics(fl_ctx *c, op_run *r, const char *jid,
                       const cJSON *job, const cJSON *plan)
{
    const cJSON *ov = overview_entry(c, jid);
    const cJSON *src = job ? job : ov;
    const cJSON *jc = fl_find_newest(c, EP_JOB_CONFIG, jid, NULL, NULL);
    const cJSON *dash = fl_find_newest(c, EP_DASH_CONFIG, NULL, NULL, NULL);
    const char *name = fl_str(src, "name"), *state = fl_str(src, "state");
    int64_t x;

    if (!name)
        name = fl_str(plan, "name");
    if (!name)
        name = fl_str(jc, "name");
    if (name) {
        op_run_str(c->b, r, OP_F_NAME, name);
        op_run_job(c->b, r, name); /* job ids change on every submission */
    }
    op_run_str(c->b, r, OP_F_STATUS, fl_status(state));
    if (state)
        op_run_str(c->b, r, OP_F_RAW_STATUS, state);
    if (fl_geti64(src, "start-time", &x) && x > 0)
        op_run_int(c->b, r, OP_I_STARTED_AT, x);
    if (fl_geti64(src, "end-time", &x) && x > 0)
        op_run_int(c->b, r, OP_I_ENDED_AT, x);
    if (fl_geti64_in(src, "duration", -1, INT64_MAX, &x) && x >= 0)
        op_run_int(c->b, r, OP_I_DURATION_MS, x);
    if (fl_geti64_in(job, "maxParallelism", -1, FL_MAX_SUBTASKS, &x) &&
        x > 0)
        op_run_metric_int(c->b, r, "max_parallelism", x);
    if (fl_str(dash, "flink-version"))
        op_run_str(c->b, r, OP_F_ENGINE_VERSION, fl_str(dash, "flink-version"));
    x = job_now(c, jid);
    if (x > 0)
        op_run_metric_int(c->b, r, "captured_at", x);
    if (c->npolls > 1)
        op_run_metric_int(c->b, r, "samples", (int64_t)(c->npolls - 1));
    run_state_timestamps(c->b, r, job);
}

static void job_metrics(fl_ctx *c, op_run *r, const char *jid)
{
    static const struct {
        const char *flink, *name;
    } map[] = {
        {"numRestarts", "restarts"},
        {"fullRestarts", "full_restarts"},
        {"lastCheckpointDuration", "last_checkpoint_duration_ms"},
        {"lastCheckpointSize", "last_checkpoint_size_bytes"},
        {"lastCheckpointFullSize", "last_checkpoint_full_size_bytes"},
        {"uptime", "uptime_ms"},
        {"downtime", "downtime_ms"},
        {"restartingTime", "restarting_time_ms"},
    };
    const cJSON *jm = fl_find_newest(c, EP_JOB_METRICS, jid, NULL, NULL), *e;

    cJSON_ArrayForEach(e, jm)
    {
        const char *id = fl_str(e, "id");
        double x;
        size_t i;
        if (!id || !(fl_getnum(e, "value", &x) || fl_getnum(e, "max", &x)) ||
            !isfinite(x))
            continue;
        for (i = 0; i < sizeof map / sizeof map[0]; i++)
            if (!strcmp(id, map[i].flink) && x >= 0)
                op_run_metric(c->b, r, map[i].name, x);
    }
}

static void job_config(fl_ctx *c, op_run *r, const char *jid,
                       const cJSON *job, const cJSON *plan, fl_config *cfg)
{
    const cJSON *jc = fl_find_newest(c, EP_JOB_CONFIG, jid, NULL, NULL);
    const cJSON *ec = fl_get(jc, "execution-config");
    const char *type;
    int64_t x;
    int bv;
    char num[32];
    size_t keys;

    keys = fl_config_merge_list(
        cfg, fl_find_newest(c, EP_JM_CONFIG, NULL, NULL, NULL));
    keys += fl_config_merge_list(
        cfg, fl_find_newest(c, EP_JOB_JM_CONFIG, jid, NULL, NULL));
    /* Lets rules tell "not set" from "cluster config not exported". */
    if (keys)
        op_run_metric_int(c->b, r, "cluster_config_keys", (int64_t)keys);
    if (fl_geti64_in(ec, "job-parallelism", -1, FL_MAX_SUBTASKS, &x) &&
        x > 0) {
        snprintf(num, sizeof num, "%lld", (long long)x);
        fl_config_set(cfg, "parallelism.default", num);
    }
    if (fl_getbool(ec, "object-reuse-mode", &bv))
        fl_config_set(cfg, "pipeline.object-reuse", bv ? "true" : "false");
    type = fl_str(job, "job-type");
    if (!type)
        type = fl_str(plan, "type");
    if (type && (!strcmp(type, "STREAMING") || !strcmp(type, "BATCH")))
        fl_config_set(cfg, "execution.runtime-mode", type);
}

static void missing_warnings(fl_ctx *c, op_run *r, const char *jid,
                             const cJSON *job)
{
    static const struct {
        enum fl_ep ep;
        int per_job;
        const char *msg;
    } need[] = {
        {EP_CKPTS, 1,
         "no /jobs/<jid>/checkpoints: checkpoint history unknown"},
        {EP_CKPT_CONFIG, 1,
         "no /jobs/<jid>/checkpoints/config: checkpoint interval, timeout "
         "and state backend unknown"},
        {EP_DASH_CONFIG, 0, "no /config: Flink version unknown"},
    };
    size_t i;

    if (c->lone)
        return;
    if (!job)
        op_run_warning(c->b, r,
                       "no /jobs/<jid> response: job state, vertices and IO "
                       "metrics unknown");
    for (i = 0; i < sizeof need / sizeof need[0]; i++)
        if (!fl_find_newest(c, need[i].ep, need[i].per_job ? jid : NULL,
                            NULL, NULL))
            op_run_warning(c->b, r, need[i].msg);
    if (!fl_find_newest(c, EP_JM_CONFIG, NULL, NULL, NULL) &&
        !fl_find_newest(c, EP_JOB_JM_CONFIG, jid, NULL, NULL))
        op_run_warning(c->b, r,
                       "no /jobmanager/config: checkpoint directory, "
                       "incremental checkpoints and retained checkpoints "
                       "cannot be checked");
}

static void emit_config(fl_ctx *c, op_run *r, const fl_config *cfg)
{
    size_t i;

    for (i = 0; i < cfg->n; i++)
        op_run_config(c->b, r, cfg->items[i].key, cfg->items[i].value);
}

static int plan_nodes(const cJSON *plan)
{
    const cJSON *nodes = fl_get(plan, "nodes");

    return cJSON_IsArray(nodes) ? cJSON_GetArraySize(nodes) : 0;
}

/* The plan of /jobs/<jid>, unless it is empty (a job still deploying) and
 * /jobs/<jid>/plan has nodes. */
static const cJSON *pick_plan(const cJSON *in_job, const cJSON *own)
{
    if (!in_job || (!plan_nodes(in_job) && plan_nodes(own)))
        return own;
    return in_job;
}

int fl_job(fl_ctx *c, const char *jid, op_error *err)
{
    const cJSON *job = fl_find_newest(c, EP_JOB, jid, NULL, NULL);
    const cJSON *pr = fl_find_newest(c, EP_PLAN, jid, NULL, NULL);
    const cJSON *plan = fl_get(job, "plan");
    fl_config cfg;
    op_run *r;
    int rc = OP_OK;

    plan = pick_plan(plan, fl_get(pr, "plan"));
    r = op_run_get(c->b, "flink", jid);
    if (!r)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", c->input);
    fl_config_init(&cfg);
    run_basics(c, r, jid, job, plan);
    if ((rc = vertices(c, r, jid, job, plan))) {
        op_error_set(err, rc, "%s: out of memory", c->input);
        goto out;
    }
    job_config(c, r, jid, job, plan, &cfg);
    if ((rc = fl_checkpoints(c, r, jid, &cfg))) {
        op_error_set(err, rc, "%s: out of memory", c->input);
        goto out;
    }
    fl_exceptions(c, r, jid);
    job_metrics(c, r, jid);
    missing_warnings(c, r, jid, job);
    if (cfg.oom) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", c->input);
        goto out;
    }
    emit_config(c, r, &cfg);
out:
    fl_config_free(&cfg);
    return rc;
}
