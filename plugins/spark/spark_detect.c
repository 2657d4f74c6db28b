/*
 * spark_detect.c - what the detection rules need beyond the History
 * Server's stage numbers: the peak memory of every executor and of the
 * driver (executor metrics), what each stage reads from outside and
 * whether it persists an RDD (recomputation), and the physical plan of
 * each SQL execution with its SQL metric values (per-query rules).
 * Names and units: docs/model-spark.md.
 *
 * Memory: bounded by SP_MAX_EXECS peak records, SP_MAX_ACCUMS metric
 * values and SP_PLAN_OPS_MAX operators per plan; past a bound the rest is
 * left out with a run warning, never silently.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spark_internal.h"

#define SP_MAX_ACCUMS (1u << 20)  /* SQL metric values kept per app */
#define SP_PLAN_OPS_MAX 4096      /* operators kept per plan */
#define SP_PLAN_DEPTH 256         /* plan nesting followed (cJSON: 500) */
#define SP_OP_METRICS 8           /* known metrics kept per operator */
#define SP_MAX_OP_RECORDS 20000   /* sql_operators records per run */
#define SP_SCAN_MAX 1024          /* bytes of attrs.scan */

#define PK(spark, model) {spark, sizeof(spark) - 1, model}
const sp_peak_key sp_peak_keys[SP_PK_COUNT] = {
    [SP_PK_JVM_HEAP] = PK("JVMHeapMemory", "peak_jvm_heap_bytes"),
    [SP_PK_JVM_OFFHEAP] = PK("JVMOffHeapMemory", "peak_jvm_offheap_bytes"),
    [SP_PK_ONHEAP_EXEC] =
        PK("OnHeapExecutionMemory", "peak_onheap_execution_bytes"),
    [SP_PK_OFFHEAP_EXEC] =
        PK("OffHeapExecutionMemory", "peak_offheap_execution_bytes"),
    [SP_PK_ONHEAP_STORAGE] =
        PK("OnHeapStorageMemory", "peak_onheap_storage_bytes"),
    [SP_PK_OFFHEAP_STORAGE] =
        PK("OffHeapStorageMemory", "peak_offheap_storage_bytes"),
    [SP_PK_DIRECT_POOL] = PK("DirectPoolMemory", "peak_direct_pool_bytes"),
    [SP_PK_JVM_RSS] = PK("ProcessTreeJVMRSSMemory", "peak_jvm_rss_bytes"),
    [SP_PK_PYTHON_RSS] =
        PK("ProcessTreePythonRSSMemory", "peak_python_rss_bytes"),
    [SP_PK_OTHER_RSS] = PK("ProcessTreeOtherRSSMemory", "peak_other_rss_bytes"),
    [SP_PK_MINOR_GC_MS] = PK("MinorGCTime", "minor_gc_ms"),
    [SP_PK_MAJOR_GC_MS] = PK("MajorGCTime", "major_gc_ms"),
    [SP_PK_TOTAL_GC_MS] = PK("TotalGCTime", "total_gc_ms"),
};
/* memory peaks come before the GC counters in the enum */
#define SP_PK_MEMORY SP_PK_MINOR_GC_MS

/* SQL metrics the rules read, by the name Spark gives them. */
static const char *const op_metric_names[][2] = {
    {"number of output rows", "rows"},
    {"number of files read", "files_read"},
    {"size of files read", "files_bytes"},
    {"number of partitions read", "partitions_read"},
    {"data size", "data_size_bytes"},
    {"time to build", "build_ms"},
    {"time to broadcast", "broadcast_ms"},
    {"time to collect", "collect_ms"},
    {"scan time", "scan_ms"},
    {"duration", "duration_ms"},
    {"spill size", "spill_bytes"},
    {"peak memory", "peak_memory_bytes"},
    {"shuffle bytes written", "shuffle_write_bytes"},
    {"metadata time", "metadata_ms"},
    {"sort time", "sort_ms"},
};
#define SP_OP_KNOWN (sizeof op_metric_names / sizeof op_metric_names[0])

typedef struct sp_peak_rec {
    char id[SP_ID_MAX + 1];
    int64_t v[SP_PK_COUNT];
} sp_peak_rec;

typedef struct sp_accum {
    int64_t id, value;
} sp_accum;

typedef struct sp_op_metric {
    int kind; /* index into op_metric_names */
    int ns;   /* nsTiming: the value is in ns */
    int64_t acc;
} sp_op_metric;

typedef struct sp_op {
    char *name, *desc, *partition_filters, *location;
    char *partition_columns; /* scan output not in ReadSchema: "year#12,day#13" */
    sp_op_metric m[SP_OP_METRICS];
    int nm;
} sp_op;

struct sp_plan {
    sp_op *ops;
    size_t n, cap;
    int cut; /* more operators than SP_PLAN_OPS_MAX or too deep */
};

struct sp_detect {
    sp_peak_rec *peaks;
    size_t npeaks, cap_peaks;
    sp_index peak_ix;
    int peaks_full;
    sp_accum *acc;
    size_t nacc, cap_acc;
    sp_index acc_ix;
    int acc_full;
    int64_t acc_bad;  /* SQL metric values that were not whole numbers */
};

static struct sp_detect *det(sp_app *a)
{
    if (!a->det && !(a->det = calloc(1, sizeof *a->det)))
        a->oom = 1;
    return a->det;
}

/* --- executor peaks ----------------------------------------------------- */

int sp_peaks_from_json(const cJSON *o, int64_t peak[SP_PK_COUNT])
{
    int i, any = 0;

    memset(peak, 0, SP_PK_COUNT * sizeof *peak);
    if (!cJSON_IsObject(o))
        return 0;
    for (i = 0; i < SP_PK_COUNT; i++) {
        const cJSON *v =
            cJSON_GetObjectItemCaseSensitive(o, sp_peak_keys[i].spark);
        if (cJSON_IsNumber(v)) {
            peak[i] = sp_jnum(v, 0);
            any = 1;
        }
    }
    return any;
}

static uint64_t peak_hash(const void *ctx, size_t i)
{
    return sp_hash_str(((const struct sp_detect *)ctx)->peaks[i].id);
}

static int peak_eq(const void *ctx, size_t i, const void *key)
{
    return strcmp(((const struct sp_detect *)ctx)->peaks[i].id, key) == 0;
}

static sp_peak_rec *peak_get(sp_app *a, struct sp_detect *d, const char *id)
{
    size_t i = sp_index_find(&d->peak_ix, sp_hash_str(id), peak_eq, d, id);
    sp_peak_rec *p;

    if (i)
        return &d->peaks[i - 1];
    if (d->npeaks > SP_MAX_EXECS) { /* executors and the driver */
        if (!d->peaks_full++)
            sp_warn(a, "more than %d executors report peak memory; the "
                       "others are left out of executor_peaks",
                    SP_MAX_EXECS + 1);
        return NULL;
    }
    if (sp_grow(a, (void **)&d->peaks, d->npeaks, &d->cap_peaks, sizeof *p))
        return NULL;
    p = &d->peaks[d->npeaks];
    memset(p, 0, sizeof *p);
    snprintf(p->id, sizeof p->id, "%s", id);
    if (sp_index_put(&d->peak_ix, d->npeaks + 1, d->npeaks, peak_hash, d)) {
        a->oom = 1;
        return NULL;
    }
    d->npeaks++;
    return p;
}

void sp_peaks_add(sp_app *a, sp_span executor, const int64_t *peak)
{
    char id[SP_ID_MAX + 1];
    struct sp_detect *d = det(a);
    sp_peak_rec *p;
    int i;

    if (!d || !executor.n)
        return;
    sp_unescape(executor, id, sizeof id);
    if (!(p = peak_get(a, d, id)))
        return;
    for (i = 0; i < SP_PK_COUNT; i++)
        if (peak[i] > p->v[i])
            p->v[i] = peak[i];
}

static void peaks_of(sp_app *a, const char *id, const cJSON *metrics)
{
    int64_t peak[SP_PK_COUNT];
    sp_span s;

    if (!id || !sp_peaks_from_json(metrics, peak))
        return;
    s.s = id;
    s.n = strlen(id);
    sp_peaks_add(a, s, peak);
}

void sp_on_exec_metrics(sp_app *a, const cJSON *o, int heartbeat)
{
    const char *id = sp_jstr(o, "Executor ID");
    const cJSON *up, *it;

    if (!heartbeat) {
        peaks_of(a, id, cJSON_GetObjectItemCaseSensitive(o, "Executor Metrics"));
        return;
    }
    up = cJSON_GetObjectItemCaseSensitive(o, "Executor Metrics Updated");
    cJSON_ArrayForEach(it, up)
    {
        peaks_of(a, id,
                 cJSON_GetObjectItemCaseSensitive(it, "Executor Metrics"));
    }
}

/* --- what a stage reads -------------------------------------------------- */

/* The "name" of an RDD scope, a small JSON text Spark writes as
 * {"id":"...","name":"..."}: read in place (no allocation), unescaped
 * into buf. Returns 0 when there is none. */
static int scope_name(const char *scope, char *buf, size_t cap)
{
    const char *p = strstr(scope, "\"name\"");
    sp_span v;

    if (!p)
        return 0;
    p += 6;
    while (*p == ' ' || *p == ':')
        p++;
    if (*p != '"')
        return 0;
    v.s = ++p;
    while (*p && *p != '"')
        p += p[0] == '\\' && p[1] ? 2 : 1;
    if (*p != '"')
        return 0;
    v.n = (size_t)(p - v.s);
    return sp_unescape(v, buf, cap) > 0;
}

/* A scan: an RDD whose operator scope names a scan (SQL; op, the scope's
 * name or NULL), or a root RDD of the lineage that is not a shuffle read
 * (RDD API: its name is the path or the source). */
static const char *scan_of(const cJSON *rdd, const char *op)
{
    const char *name = sp_jstr(rdd, "Name");
    const cJSON *par = cJSON_GetObjectItemCaseSensitive(rdd, "Parent IDs");
    size_t n;

    if (op && (strstr(op, "Scan") || strstr(op, "scan")))
        return op;
    if (!name || (cJSON_IsArray(par) && cJSON_GetArraySize(par) > 0))
        return NULL;
    /* a bare class name (FileScanRDD, PhotonFileScanRDD, ShuffledRDD) says
     * nothing about the input; textFile's RDDs are named after the path */
    n = strlen(name);
    if (!strpbrk(name, " /:") && n >= 3 && !strcmp(name + n - 3, "RDD"))
        return NULL;
    return name;
}

/* Whether s (a list "a; b") holds item already. */
static int has_item(const char *s, const char *item)
{
    size_t n = strlen(item);
    const char *p = s;

    while ((p = strstr(p, item)) != NULL) {
        if ((p == s || p[-1] == ' ') && (p[n] == '\0' || p[n] == ';'))
            return 1;
        p += n;
    }
    return 0;
}

void sp_stage_rdds(sp_app *a, sp_stage *s, const cJSON *info)
{
    const cJSON *rdds = cJSON_GetObjectItemCaseSensitive(info, "RDD Info"), *r;
    char buf[SP_SCAN_MAX], one[SP_TEXT_MAX];
    size_t len = 0;

    if (!cJSON_IsArray(rdds))
        return;
    buf[0] = '\0';
    cJSON_ArrayForEach(r, rdds)
    {
        const cJSON *lvl = cJSON_GetObjectItemCaseSensitive(r, "Storage Level");
        const char *sc, *scope = sp_jstr(r, "Scope");
        int op = scope && scope_name(scope, one, sizeof one);
        /* a SQL shuffle (UnsafeRow, whatever spark.serializer says), also
         * in jobs that carry no SQL execution id (Databricks) */
        if (op && !strcmp(one, "Exchange"))
            s->sql_exchange = 1;
        sc = scan_of(r, op ? one : NULL);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lvl, "Use Memory")) ||
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lvl, "Use Disk")))
            s->persisted = 1;
        if (sc && *sc && !has_item(buf, sc)) {
            int w = snprintf(buf + len, sizeof buf - len, "%s%s",
                             len ? "; " : "", sc);
            if (w < 0 || (size_t)w >= sizeof buf - len)
                break; /* the first scans are kept; said in model-spark.md */
            len += (size_t)w;
        }
    }
    if (!len)
        return;
    free(s->scan);
    if (!(s->scan = sp_strdup_max(buf, sizeof buf)))
        a->oom = 1;
}

/* --- SQL plans and metric values --------------------------------------- */

void sp_plan_free(struct sp_plan *p)
{
    size_t i;

    if (!p)
        return;
    for (i = 0; i < p->n; i++) {
        free(p->ops[i].name);
        free(p->ops[i].desc);
        free(p->ops[i].partition_filters);
        free(p->ops[i].location);
        free(p->ops[i].partition_columns);
    }
    free(p->ops);
    free(p);
}

static char *dup_or_null(sp_app *a, const char *s)
{
    char *d;

    if (!s)
        return NULL;
    if (!(d = sp_strdup_max(s, SP_TEXT_MAX)))
        a->oom = 1;
    return d;
}

static void op_metrics(sp_op *op, const cJSON *metrics)
{
    const cJSON *m;

    cJSON_ArrayForEach(m, metrics)
    {
        const char *name = sp_jstr(m, "name"), *type = sp_jstr(m, "metricType");
        size_t k;
        if (!name || op->nm >= SP_OP_METRICS)
            continue;
        for (k = 0; k < SP_OP_KNOWN; k++)
            if (!strcmp(name, op_metric_names[k][0]))
                break;
        if (k == SP_OP_KNOWN)
            continue;
        op->m[op->nm].kind = (int)k;
        op->m[op->nm].ns = type && !strcmp(type, "nsTiming");
        op->m[op->nm].acc = sp_jint(m, "accumulatorId", -1);
        op->nm++;
    }
}

/* Whether ReadSchema ("struct<a:int,b:string>") has the field name[0..n). */
static int schema_has(const char *schema, const char *name, size_t n)
{
    const char *p = strchr(schema, '<');

    while (p && *p) {
        p++;
        if (strncmp(p, name, n) == 0 && p[n] == ':')
            return 1;
        p = strchr(p, ','); /* a nested struct's fields only add false matches */
    }
    return 0;
}

/* A file scan's partition columns: the attributes of its output list
 * ("FileScan parquet db.t[a#1,year#2] ...") that its ReadSchema lacks
 * (Spark reads only data columns from the files). NULL when the scan has
 * no ReadSchema, none is missing, or Spark cut the list ("... 4 more
 * fields"): then nothing is known. */
static char *partition_columns(sp_app *a, const char *desc, const char *schema)
{
    const char *l = desc ? strchr(desc, '[') : NULL, *r, *p;
    char out[SP_TEXT_MAX];
    size_t len = 0;

    if (!l || !schema || !(r = strchr(l, ']')) || strstr(desc, " more fields]") ||
        (size_t)(r - l) >= sizeof out)
        return NULL;
    for (p = l + 1; p < r;) {
        const char *e = p, *hash;
        while (e < r && *e != ',')
            e++;
        hash = memchr(p, '#', (size_t)(e - p));
        if (hash && !schema_has(schema, p, (size_t)(hash - p))) {
            if (len + (size_t)(e - p) + 2 >= sizeof out)
                return NULL;
            if (len)
                out[len++] = ',';
            memcpy(out + len, p, (size_t)(e - p));
            len += (size_t)(e - p);
        }
        p = e < r ? e + 1 : e;
    }
    out[len] = '\0';
    return len ? dup_or_null(a, out) : NULL;
}

static void plan_walk(sp_app *a, struct sp_plan *p, const cJSON *node,
                      int depth)
{
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(node, "metadata");
    const cJSON *kids = cJSON_GetObjectItemCaseSensitive(node, "children"), *c;
    sp_op *op;

    if (!cJSON_IsObject(node) || a->oom)
        return;
    if (p->n >= SP_PLAN_OPS_MAX || depth > SP_PLAN_DEPTH) {
        p->cut = 1;
        return;
    }
    if (sp_grow(a, (void **)&p->ops, p->n, &p->cap, sizeof *op))
        return;
    op = &p->ops[p->n++];
    memset(op, 0, sizeof *op);
    op->name = dup_or_null(a, sp_jstr(node, "nodeName"));
    op->desc = dup_or_null(a, sp_jstr(node, "simpleString"));
    op->partition_filters = dup_or_null(a, sp_jstr(meta, "PartitionFilters"));
    op->location = dup_or_null(a, sp_jstr(meta, "Location"));
    op->partition_columns = partition_columns(a, op->desc, sp_jstr(meta, "ReadSchema"));
    op_metrics(op, cJSON_GetObjectItemCaseSensitive(node, "metrics"));
    cJSON_ArrayForEach(c, kids)
    {
        plan_walk(a, p, c, depth + 1);
    }
}

void sp_sql_plan(sp_app *a, sp_sql *q, const cJSON *o)
{
    const cJSON *info = cJSON_GetObjectItemCaseSensitive(o, "sparkPlanInfo");
    struct sp_plan *p;

    if (!q || !cJSON_IsObject(info))
        return;
    if (!(p = calloc(1, sizeof *p))) {
        a->oom = 1;
        return;
    }
    plan_walk(a, p, info, 0);
    if (p->cut)
        sp_warn(a, "SQL execution %lld: its plan has more than %d operators "
                   "or is nested deeper than %d; the rest is left out of "
                   "sql_operators",
                (long long)q->id, SP_PLAN_OPS_MAX, SP_PLAN_DEPTH);
    sp_plan_free(q->plan); /* an adaptive update replaces the plan */
    q->plan = p;
}

static uint64_t acc_hash(const void *ctx, size_t i)
{
    return sp_mix((uint64_t)((const struct sp_detect *)ctx)->acc[i].id);
}

static int acc_eq(const void *ctx, size_t i, const void *key)
{
    return ((const struct sp_detect *)ctx)->acc[i].id == *(const int64_t *)key;
}

static sp_accum *acc_find(struct sp_detect *d, int64_t id)
{
    size_t i = sp_index_find(&d->acc_ix, sp_mix((uint64_t)id), acc_eq, d, &id);

    return i ? &d->acc[i - 1] : NULL;
}

/* Adds v to accumulator id (SQL metrics are sums over tasks and stages;
 * driver metrics arrive once). */
static void acc_add(sp_app *a, int64_t id, int64_t v)
{
    struct sp_detect *d = det(a);
    sp_accum *x;

    if (!d || id < 0)
        return;
    if ((x = acc_find(d, id)) != NULL) {
        SP_SAT_ADD(x->value, v);
        return;
    }
    if (d->nacc >= SP_MAX_ACCUMS) {
        if (!d->acc_full++)
            sp_warn(a, "more than %u SQL metric values; the others are left "
                       "out of sql_operators", SP_MAX_ACCUMS);
        return;
    }
    if (sp_grow(a, (void **)&d->acc, d->nacc, &d->cap_acc, sizeof *x))
        return;
    d->acc[d->nacc].id = id;
    d->acc[d->nacc].value = v;
    if (sp_index_put(&d->acc_ix, d->nacc + 1, d->nacc, acc_hash, d)) {
        a->oom = 1;
        return;
    }
    d->nacc++;
}

/* A value Spark wrote as a number or as its decimal text: 0 with *out,
 * or -1 when it is neither (told once per log, counted at the end, never
 * added as 0). */
static int acc_value(sp_app *a, const cJSON *v, int64_t *out)
{
    struct sp_detect *d;

    if (!v || cJSON_IsNull(v))
        return -1; /* no value given: nothing to add */
    if (cJSON_IsNumber(v) && v->valuedouble == v->valuedouble) {
        *out = sp_jnum(v, 0);
        return 0;
    }
    if (cJSON_IsString(v) && v->valuestring[0]) {
        char *end;
        long long x;

        errno = 0;
        x = strtoll(v->valuestring, &end, 10);
        if (!*end && errno != ERANGE) {
            *out = (int64_t)x;
            return 0;
        }
    }
    if ((d = det(a)) != NULL && !d->acc_bad++)
        sp_warn(a, "line %llu: a SQL metric value is not a whole number "
                   "(%s); such values are left out of sql_operators",
                (unsigned long long)a->last_line_no,
                cJSON_IsString(v) ? "text" : "not a number");
    return -1;
}

void sp_accum_stage(sp_app *a, const cJSON *info)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(info, "Accumulables");
    const cJSON *it;
    int64_t v;

    cJSON_ArrayForEach(it, list)
    {
        const char *meta = sp_jstr(it, "Metadata");
        if (meta && !strcmp(meta, "sql") &&
            !acc_value(a, cJSON_GetObjectItemCaseSensitive(it, "Value"), &v))
            acc_add(a, sp_jint(it, "ID", -1), v);
    }
}

void sp_accum_driver(sp_app *a, const cJSON *o)
{
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(o, "accumUpdates");
    const cJSON *it;
    int64_t v;

    cJSON_ArrayForEach(it, list)
    {
        if (cJSON_IsArray(it) && cJSON_GetArraySize(it) == 2 &&
            !acc_value(a, cJSON_GetArrayItem(it, 1), &v))
            acc_add(a, sp_jnum(cJSON_GetArrayItem(it, 0), -1), v);
    }
}

/* --- emission ------------------------------------------------------------ */

static void emit_peaks(sp_app *a, op_run *r)
{
    struct sp_detect *d = a->det;
    int64_t exec_max[SP_PK_COUNT] = {0};
    size_t i, nexec = 0;
    char name[96];
    int k;

    if (!d || !d->npeaks)
        return;
    for (i = 0; i < d->npeaks; i++) {
        const sp_peak_rec *p = &d->peaks[i];
        int driver = !strcmp(p->id, "driver");
        op_record *rec = op_series_append(a->b, r, "executor_peaks");
        if (rec)
            op_record_str(a->b, rec, "executor_id", p->id);
        for (k = 0; k < SP_PK_COUNT; k++) {
            if (rec && p->v[k] > 0)
                op_record_int(a->b, rec, sp_peak_keys[k].model, p->v[k]);
            if (driver && k < SP_PK_MEMORY && p->v[k] > 0) {
                snprintf(name, sizeof name, "driver_%s", sp_peak_keys[k].model);
                op_run_metric_int(a->b, r, name, p->v[k]);
            } else if (!driver && p->v[k] > exec_max[k]) {
                exec_max[k] = p->v[k];
            }
        }
        nexec += !driver;
    }
    if (nexec)
        op_run_metric_int(a->b, r, "executors_with_peaks", (int64_t)nexec);
    for (k = 0; k < SP_PK_MEMORY; k++)
        if (exec_max[k] > 0) {
            snprintf(name, sizeof name, "executor_%s", sp_peak_keys[k].model);
            op_run_metric_int(a->b, r, name, exec_max[k]);
        }
}

static void stage_id(char *buf, size_t cap, const sp_stage *s)
{
    snprintf(buf, cap, "stage-%lld-%lld", (long long)s->id,
             (long long)s->attempt);
}

static int cmp_job_id(const void *key, const void *x)
{
    int64_t k = *(const int64_t *)key, j = ((const sp_job *)x)->id;
    return k < j ? -1 : k > j;
}

static int cmp_sql_id(const void *key, const void *x)
{
    int64_t k = *(const int64_t *)key, j = ((const sp_sql *)x)->id;
    return k < j ? -1 : k > j;
}

/* The SQL execution a stage ran for (jobs and executions sorted by id at
 * emission), or NULL. */
static const sp_sql *stage_sql(const sp_app *a, const sp_stage *s)
{
    const sp_job *j;

    if (s->job_id < 0)
        return NULL;
    j = bsearch(&s->job_id, a->jobs, a->njobs, sizeof *a->jobs, cmp_job_id);
    if (!j || j->sql_id < 0)
        return NULL;
    return bsearch(&j->sql_id, a->sqls, a->nsqls, sizeof *a->sqls, cmp_sql_id);
}

/* attrs.scan_inputs: each scan of the stage with the files its plan
 * operator of the same name reads (Location, PartitionFilters), so that
 * one table read for different partitions is not the same input. When no
 * operator, or several reading different files, carry the name, the item
 * is the name alone. */
static void scan_inputs(const sp_sql *q, const char *scan, char *out,
                        size_t cap)
{
    const char *p = scan;
    size_t len = 0;

    out[0] = '\0';
    while (*p && len + 1 < cap) {
        const char *e = strstr(p, "; ");
        size_t n = e ? (size_t)(e - p) : strlen(p), i;
        const sp_op *op = NULL;
        int w;
        for (i = 0; q && q->plan && i < q->plan->n; i++) {
            const sp_op *o = &q->plan->ops[i];
            if (!o->name || strlen(o->name) != n || memcmp(o->name, p, n) ||
                !o->location)
                continue;
            if (op && (strcmp(op->location, o->location) ||
                       !op->partition_filters != !o->partition_filters ||
                       (op->partition_filters &&
                        strcmp(op->partition_filters, o->partition_filters)))) {
                op = NULL; /* two operators of that name read other files */
                break;
            }
            op = o;
        }
        w = snprintf(out + len, cap - len, "%s%.*s%s%s%s%s", len ? "; " : "",
                     (int)n, p, op ? " @ " : "", op ? op->location : "",
                     op && op->partition_filters ? " PartitionFilters: " : "",
                     op && op->partition_filters ? op->partition_filters : "");
        if (w < 0 || (size_t)w >= cap - len)
            break;
        len += (size_t)w;
        p = e ? e + 2 : p + n;
    }
}

static void emit_scans(sp_app *a, op_run *r)
{
    size_t i;
    char id[64], inputs[SP_SCAN_MAX * 2];

    for (i = 0; i < a->nstages; i++) {
        const sp_stage *s = a->stages[i];
        op_node *n;
        if ((!s->scan && !s->persisted && !s->sql_exchange) || !sp_stage_emitted(s))
            continue;
        stage_id(id, sizeof id, s);
        if (!(n = op_node_get(a->b, r, id)))
            continue;
        if (s->scan) {
            op_node_attr(a->b, n, "scan", s->scan);
            scan_inputs(stage_sql(a, s), s->scan, inputs, sizeof inputs);
            op_node_attr(a->b, n, "scan_inputs", inputs);
        }
        if (s->persisted)
            op_node_attr(a->b, n, "persisted", "true");
        if (s->sql_exchange)
            op_node_attr(a->b, n, "sql_exchange", "true");
    }
}

/* Per SQL execution: the stage attempts of its jobs, summed. */
typedef struct sql_sums {
    int64_t stages, tasks, task_ms, run_ms, in_bytes;
    char ids[256];
    size_t len;
} sql_sums;

static sql_sums *sum_stages(sp_app *a)
{
    sql_sums *sums = calloc(a->nsqls ? a->nsqls : 1, sizeof *sums);
    size_t i;

    if (!sums) {
        a->oom = 1;
        return NULL;
    }
    for (i = 0; i < a->nstages; i++) {
        const sp_stage *s = a->stages[i];
        const sp_sql *q;
        sql_sums *x;
        if (!sp_stage_emitted(s) || !(q = stage_sql(a, s)))
            continue;
        x = &sums[q - a->sqls];
        x->stages++;
        SP_SAT_ADD(x->tasks, s->num_tasks);
        SP_SAT_ADD(x->task_ms, s->task_time_ms);
        SP_SAT_ADD(x->run_ms, s->sum.run_ms);
        SP_SAT_ADD(x->in_bytes, s->sum.in_bytes);
        if (x->len < sizeof x->ids - 1) {
            int w = snprintf(x->ids + x->len, sizeof x->ids - x->len, "%s%lld",
                             x->len ? "," : "", (long long)s->id);
            x->len = w < 0 ? sizeof x->ids - 1
                           : x->len + (size_t)w >= sizeof x->ids
                               ? sizeof x->ids - 1
                               : x->len + (size_t)w;
        }
    }
    return sums;
}

/* Operators worth a record: those with a metric value, and the kinds the
 * rules look at whatever their values (write commands: spark.commit-time). */
static int op_notable(const sp_op *op)
{
    const char *n = op->name ? op->name : "";
    return strstr(n, "Scan") || strstr(n, "Join") || strstr(n, "Cartesian") ||
           strstr(n, "Exchange") || strstr(n, "Insert") ||
           strstr(n, "AsSelect") || strstr(n, "SaveIntoDataSource") ||
           strstr(n, "WriteFiles") || strstr(n, "AppendData") ||
           strstr(n, "Overwrite");
}

/* Returns 1 when a record was written. */
static int emit_op(sp_app *a, op_run *r, const char *sql, size_t idx,
                   const sp_op *op)
{
    struct sp_detect *d = a->det;
    int64_t vals[SP_OP_METRICS];
    int k, any = 0;
    op_record *rec;

    for (k = 0; k < op->nm; k++) {
        const sp_accum *x = d ? acc_find(d, op->m[k].acc) : NULL;
        vals[k] = x ? (op->m[k].ns ? x->value / 1000000 : x->value) : -1;
        any |= x != NULL;
    }
    if (!any && !op_notable(op))
        return 0;
    if (!(rec = op_series_append(a->b, r, "sql_operators")))
        return 0;
    op_record_str(a->b, rec, "sql", sql);
    op_record_int(a->b, rec, "op", (int64_t)idx);
    op_record_str(a->b, rec, "name", op->name ? op->name : "");
    if (op->desc)
        op_record_str(a->b, rec, "detail", op->desc);
    if (op->partition_filters)
        op_record_str(a->b, rec, "partition_filters", op->partition_filters);
    if (op->location)
        op_record_str(a->b, rec, "location", op->location);
    if (op->partition_columns)
        op_record_str(a->b, rec, "partition_columns", op->partition_columns);
    for (k = 0; k < op->nm; k++)
        if (vals[k] >= 0)
            op_record_int(a->b, rec, op_metric_names[op->m[k].kind][1],
                          vals[k]);
    return 1;
}

static void emit_sqls(sp_app *a, op_run *r)
{
    sql_sums *sums;
    size_t i, j, records = 0;
    int cut = 0;
    char id[64];

    if (!a->nsqls || !(sums = sum_stages(a)))
        return;
    for (i = 0; i < a->nsqls; i++) {
        const sp_sql *q = &a->sqls[i];
        const sql_sums *x = &sums[i];
        op_node *n;
        snprintf(id, sizeof id, "sql-%lld", (long long)q->id);
        if (!(n = op_node_get(a->b, r, id)))
            continue;
        op_node_metric_int(a->b, n, "stages", x->stages);
        op_node_metric_int(a->b, n, "tasks", x->tasks);
        op_node_metric_int(a->b, n, "task_time_ms", x->task_ms);
        op_node_metric_int(a->b, n, "executor_run_ms", x->run_ms);
        op_node_metric_int(a->b, n, "input_bytes", x->in_bytes);
        if (x->len)
            op_node_attr(a->b, n, "stage_ids", x->ids);
        if (!q->plan)
            continue;
        op_node_metric_int(a->b, n, "operators", (int64_t)q->plan->n);
        for (j = 0; j < q->plan->n; j++) {
            if (records >= SP_MAX_OP_RECORDS) {
                cut = 1;
                break;
            }
            records += (size_t)emit_op(a, r, id, j, &q->plan->ops[j]);
        }
    }
    if (cut) {
        char msg[128];
        snprintf(msg, sizeof msg, "more than %d SQL operators; the rest are "
                 "left out of sql_operators", SP_MAX_OP_RECORDS);
        op_run_warning(a->b, r, msg);
    }
    free(sums);
}

void sp_detect_emit(sp_app *a, op_run *r)
{
    if (a->det && a->det->acc_bad > 1)
        sp_warn(a, "%lld SQL metric values in all were not whole numbers "
                   "and were left out", (long long)a->det->acc_bad);
    emit_peaks(a, r);
    emit_scans(a, r);
    emit_sqls(a, r);
}

void sp_detect_free(sp_app *a)
{
    struct sp_detect *d = a->det;

    if (!d)
        return;
    free(d->peaks);
    free(d->peak_ix.slot);
    free(d->acc);
    free(d->acc_ix.slot);
    free(d);
    a->det = NULL;
}
