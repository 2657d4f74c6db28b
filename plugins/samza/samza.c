/*
 * samza.c - the Samza input plugin: MetricsSnapshotReporter messages
 * ({"header": {job-name, job-id, container-name, source, time, ...},
 * "metrics": {"<group class>": {"<name>": value}}}), one JSON document per
 * line (a dump of the metrics topic), a list of them, or one. Snapshots of
 * one job form its run: a container node, a task node per task source
 * ("TaskName-Partition 3"), store nodes from the stores' RocksDB gauges and
 * restore times, changelog nodes from the changelog partitions' lag. The
 * newest snapshot of each source gives the node metrics; every snapshot is
 * a record of run.series.samples (docs/model-samza.md).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optipipe/grow.h>
#include <optipipe/json.h>
#include <optipipe/plugin.h>

#define SZ_ID 512
/* The largest header.time taken (epoch ms; about year 290,000). */
#define SZ_TIME_MAX_MS 9.2e15

/* RocksDB properties (rocksdb.metrics.list) -> model names, as the Kafka
 * Streams stores use them (docs/model-kafka-streams.md). */
static const char *const rocks[][2] = {
    {"rocksdb.estimate-num-keys", "estimated_keys"},
    {"rocksdb.estimate-pending-compaction-bytes", "pending_compaction_bytes"},
    {"rocksdb.num-running-compactions", "running_compactions"},
    {"rocksdb.compaction-pending", "compaction_pending"},
    {"rocksdb.total-sst-files-size", "total_sst_bytes"},
    {"rocksdb.live-sst-files-size", "live_sst_bytes"},
    {"rocksdb.block-cache-usage", "block_cache_usage_bytes"},
    {"rocksdb.block-cache-capacity", "block_cache_capacity_bytes"},
    {"rocksdb.block-cache-pinned-usage", "block_cache_pinned_usage_bytes"},
    {"rocksdb.size-all-mem-tables", "all_memtables_bytes"},
    {"rocksdb.cur-size-active-mem-table", "active_memtable_bytes"},
    {"rocksdb.mem-table-flush-pending", "memtable_flush_pending"},
    {"rocksdb.background-errors", "background_errors"},
    {"rocksdb.estimate-table-readers-mem", "table_readers_mem_bytes"},
    {"rocksdb.num-live-versions", "live_versions"},
};

static int sz_detect(const op_probe *p)
{
    int first = op_probe_first(p);

    if ((first == '{' || first == '[') && op_probe_has(p, "\"header\"") &&
        op_probe_has(p, "\"metrics\"") &&
        (op_probe_has(p, "\"job-name\"") || op_probe_has(p, "\"samza-version\"")))
        return 90;
    return 0;
}

typedef struct snap {
    const char *job, *job_id, *container, *source, *version, *host;
    int64_t time;
} snap;

static const char *hstr(const cJSON *h, const char *k)
{
    return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, k));
}

/* "TaskName-Partition 3" (a task's registry) -> "Partition 3"; NULL for
 * the container's own registry. */
static const char *task_of(const char *source)
{
    return source && strncmp(source, "TaskName-", 9) == 0 ? source + 9 : NULL;
}

typedef struct sz_ctx {
    op_builder *b;
    op_run *run;
    const snap *s;
    char container_id[SZ_ID];
    op_record *rec; /* the samples record of the current node */
    char rec_node[SZ_ID];
    uint64_t ignored;
    int newest; /* no later snapshot of the run was read: node metrics */
} sz_ctx;

static op_node *node(sz_ctx *c, const char *id, const char *kind,
                     const char *parent)
{
    op_node *n = op_node_get(c->b, c->run, id);

    op_node_str(c->b, n, OP_F_KIND, kind);
    op_node_str(c->b, n, OP_F_NAME, id);
    if (parent)
        op_node_parent(c->b, n, parent);
    return n;
}

static void put(sz_ctx *c, op_node *n, const char *id, const char *metric,
                double v)
{
    if (c->newest)
        op_node_metric(c->b, n, metric, v);
    if (!c->rec || strcmp(c->rec_node, id) != 0) {
        c->rec = op_series_append(c->b, c->run, "samples");
        op_record_int(c->b, c->rec, "t_ms", c->s->time);
        op_record_str(c->b, c->rec, "node", id);
        snprintf(c->rec_node, sizeof c->rec_node, "%s", id);
    }
    op_record_num(c->b, c->rec, metric, v);
}

/* The task node of a task name under the container: 0, or -1 when its id
 * does not fit (the metric is then counted as ignored, not cut short). */
static int task_node(sz_ctx *c, const char *task, char *id, size_t cap)
{
    op_node *t;
    const char *sp = strrchr(task, ' ');
    int w = snprintf(id, cap, "%s/%s", c->container_id, task);

    if (w < 0 || (size_t)w >= cap)
        return -1;
    t = node(c, id, "task", c->container_id);
    op_node_attr(c->b, t, "task_id", task);
    if (sp)
        op_node_attr(c->b, t, "partition", sp + 1);
    op_node_attr(c->b, t, "role", strncmp(task, "Standby", 7) == 0 ? "standby"
                                                                    : "active");
    return 0;
}

static op_node *store_node(sz_ctx *c, const char *task, const char *store,
                           const char *type, char *id, size_t cap)
{
    char tid[SZ_ID * 2];
    op_node *n;
    int w;

    if (task_node(c, task, tid, sizeof tid))
        return NULL;
    w = snprintf(id, cap, "%s/%s", tid, store);
    if (w < 0 || (size_t)w >= cap)
        return NULL;
    n = node(c, id, "store", tid);
    op_node_attr(c->b, n, "task_id", task);
    op_node_attr(c->b, n, "store", store);
    if (type)
        op_node_attr(c->b, n, "store_type", type);
    return n;
}

/* "<task>-<store>-restore-time" where the task is "Partition N" or
 * "Standby-Partition N-M": 1 with task and store filled. */
static int restore_name(const char *name, char *task, char *store, size_t cap)
{
    const char *p = name, *end = name + strlen(name) - 13;
    size_t tl;

    if (strlen(name) < 14 || strcmp(end, "-restore-time") != 0)
        return 0;
    if (strncmp(p, "Standby-", 8) == 0)
        p += 8;
    if (strncmp(p, "Partition ", 10) != 0)
        return 0;
    p += 10;
    while (*p >= '0' && *p <= '9')
        p++;
    if (strncmp(name, "Standby-", 8) == 0 && *p == '-' && p[1] >= '0' &&
        p[1] <= '9')
        for (p++; *p >= '0' && *p <= '9'; p++)
            ;
    if (*p != '-' || p + 1 >= end)
        return 0;
    tl = (size_t)(p - name);
    if (tl >= cap || (size_t)(end - p - 1) >= cap)
        return 0;
    snprintf(task, cap, "%.*s", (int)tl, name);
    snprintf(store, cap, "%.*s", (int)(end - p - 1), p + 1);
    return 1;
}

/* "<system>-<topic>-<partition>-messages-behind-high-watermark" of a
 * changelog topic (its name holds "changelog"). */
static int lag_name(const char *name, char *sys, char *topic, char *part,
                    size_t cap)
{
    static const char sfx[] = "-messages-behind-high-watermark";
    size_t n = strlen(name), k = sizeof sfx - 1;
    const char *dash, *last;

    if (n <= k || strcmp(name + n - k, sfx) != 0 || !strstr(name, "changelog"))
        return 0;
    dash = strchr(name, '-');
    for (last = name + n - k - 1; last > name && *last != '-'; last--)
        ;
    if (!dash || last <= dash || (size_t)(n - k) >= cap)
        return 0;
    snprintf(sys, cap, "%.*s", (int)(dash - name), name);
    snprintf(topic, cap, "%.*s", (int)(last - dash - 1), dash + 1);
    snprintf(part, cap, "%.*s", (int)(name + n - k - last - 1), last + 1);
    return *sys && *topic && *part;
}

static void one_metric(sz_ctx *c, const char *name, double v)
{
    char a[SZ_ID], s[SZ_ID], p[SZ_ID], id[SZ_ID * 4];
    const char *task = task_of(c->s->source);
    op_node *n;
    size_t i;
    int w;

    if (restore_name(name, a, s, sizeof a)) {
        if ((n = store_node(c, a, s, NULL, id, sizeof id)))
            put(c, n, id, "restore_time_ms", v);
        else
            c->ignored++;
        return;
    }
    if (lag_name(name, a, s, p, sizeof a)) {
        w = snprintf(id, sizeof id, "%s/%s.%s-%s", c->container_id, a, s, p);
        if (w < 0 || (size_t)w >= sizeof id) {
            c->ignored++;
            return;
        }
        n = node(c, id, "changelog", c->container_id);
        op_node_attr(c->b, n, "topic", s);
        op_node_attr(c->b, n, "partition", p);
        put(c, n, id, "records_lag", v);
        return;
    }
    /* "<store>-rocksdb.<property>" of a task's registry */
    for (i = 0; task && i < sizeof rocks / sizeof *rocks; i++) {
        size_t nl = strlen(name), rl = strlen(rocks[i][0]);
        if (nl > rl + 1 && strcmp(name + nl - rl, rocks[i][0]) == 0 &&
            name[nl - rl - 1] == '-' && nl - rl - 1 < sizeof s) {
            snprintf(s, sizeof s, "%.*s", (int)(nl - rl - 1), name);
            if ((n = store_node(c, task, s, "rocksdb", id, sizeof id)))
                put(c, n, id, rocks[i][1], v);
            else
                c->ignored++;
            return;
        }
    }
    c->ignored++;
}

static int note_time(op_builder *b, const char *id, int64_t t);

static int one_snapshot(op_builder *b, const cJSON *doc, const char *in,
                        size_t idx, op_run **last, op_error *err)
{
    const cJSON *h = cJSON_GetObjectItemCaseSensitive(doc, "header");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "metrics"), *g, *v;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(h, "time");
    char id[SZ_ID * 2];
    sz_ctx c;
    snap s;

    memset(&s, 0, sizeof s);
    s.job = hstr(h, "job-name");
    s.job_id = hstr(h, "job-id");
    s.container = hstr(h, "container-name");
    s.source = hstr(h, "source");
    s.version = hstr(h, "samza-version");
    s.host = hstr(h, "host");
    if (!s.job || !cJSON_IsObject(m) || !cJSON_IsNumber(t) ||
        !isfinite(t->valuedouble))
        return op_error_set(err, OP_EPARSE, "%s: snapshot %zu: header.job-name, "
                            "header.time (epoch ms) and a metrics object were "
                            "expected", in, idx + 1);
    /* as the prometheus plugin's times: far inside int64_t, so that the
     * conversion is defined and differences of times cannot overflow */
    if (fabs(t->valuedouble) > SZ_TIME_MAX_MS)
        return op_error_set(err, OP_EPARSE, "%s: snapshot %zu: header.time "
                            "%g is out of range (epoch ms)", in, idx + 1,
                            t->valuedouble);
    s.time = (int64_t)t->valuedouble;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.s = &s;
    snprintf(id, sizeof id, "%s-%s", s.job, s.job_id ? s.job_id : "1");
    c.newest = note_time(b, id, s.time);
    c.run = op_run_get(b, "samza", id);
    *last = c.run;
    op_run_str(b, c.run, OP_F_NAME, s.job);
    op_run_job(b, c.run, s.job);
    op_run_str(b, c.run, OP_F_STATUS, "running");
    op_run_attr(b, c.run, "dialect", "samza-snapshot");
    if (s.version)
        op_run_str(b, c.run, OP_F_ENGINE_VERSION, s.version);
    snprintf(c.container_id, sizeof c.container_id, "%s",
             s.container ? s.container : "container");
    {
        op_node *cn = node(&c, c.container_id, "container", NULL);
        op_node_attr(b, cn, "container", c.container_id);
        if (s.host)
            op_node_attr(b, cn, "instance", s.host);
    }
    cJSON_ArrayForEach(g, m)
        cJSON_ArrayForEach(v, g)
            if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
                one_metric(&c, v->string, v->valuedouble);
            else
                c.ignored++;
    return 0;
}

/* Run times from the snapshots series are set by finish (the model keeps
 * records in order of arrival, so the plugin tracks the bounds). */
typedef struct sz_state {
    struct { char id[SZ_ID * 2]; int64_t lo, hi; uint64_t n; } *runs;
    size_t n, cap;
} sz_state;

/* Records t for run id: 1 when no later snapshot was seen. */
static int note_time(op_builder *b, const char *id, int64_t t)
{
    void **slot = op_plugin_slot(b);
    sz_state *st;
    size_t i;
    int newest;

    if (!slot)
        return 1;
    if (!*slot && !(*slot = calloc(1, sizeof(sz_state))))
        return 1;
    st = *slot;
    for (i = 0; i < st->n && strcmp(st->runs[i].id, id) != 0; i++)
        ;
    if (i == st->n) {
        if (OP_GROW(st->runs, st->cap, st->n + 1, 4))
            return 1;
        snprintf(st->runs[i].id, sizeof st->runs[i].id, "%s", id);
        st->runs[i].lo = st->runs[i].hi = t;
        st->runs[i].n = 0;
        st->n++;
    }
    newest = t >= st->runs[i].hi;
    st->runs[i].lo = t < st->runs[i].lo ? t : st->runs[i].lo;
    st->runs[i].hi = t > st->runs[i].hi ? t : st->runs[i].hi;
    st->runs[i].n++;
    return newest;
}

static int each_doc(op_builder *b, cJSON *doc, const char *in, size_t *idx,
                    op_run **last, op_error *first)
{
    op_error e;
    int rc;

    op_error_clear(&e);
    rc = one_snapshot(b, doc, in, (*idx)++, last, &e);
    if (rc && !first->code)
        *first = e;
    return rc;
}

static int sz_parse(op_stream *in, op_builder *b, op_error *err)
{
    const char *buf, *name = op_stream_name(in);
    size_t len, idx = 0, bad = 0;
    op_run *last = NULL;
    op_error first;
    cJSON *doc;
    int rc;

    if ((rc = op_stream_read_all(in, &buf, &len, err)))
        return rc;
    if ((rc = op_json_check_cost(name, len, op_json_cost(buf, len), err)))
        return rc;
    op_error_clear(&first);
    {
        const char *end = NULL;
        doc = cJSON_ParseWithLengthOpts(buf, len, &end, 0);
        /* more after the first document: one per line */
        if (doc && end && strspn(end, " \t\r\n") < (size_t)(buf + len - end)) {
            cJSON_Delete(doc);
            doc = NULL;
        }
    }
    if (doc && cJSON_IsArray(doc)) {
        cJSON *it;
        cJSON_ArrayForEach(it, doc)
            bad += each_doc(b, it, name, &idx, &last, &first) != 0;
    } else if (doc) {
        bad += each_doc(b, doc, name, &idx, &last, &first) != 0;
    } else { /* one document per line: a dump of the metrics topic */
        const char *p = buf, *end = buf + len;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
            cJSON *line = n ? cJSON_ParseWithLength(p, n) : NULL;
            if (line)
                bad += each_doc(b, line, name, &idx, &last, &first) != 0;
            else if (n && strspn(p, " \t\r") < n) {
                if (!first.code)
                    op_error_set(&first, OP_EPARSE, "%s: snapshot %zu: not a "
                                 "JSON document", name, idx + 1);
                idx++;
                bad++;
            }
            cJSON_Delete(line);
            p += n + 1;
        }
    }
    cJSON_Delete(doc);
    if (!bad)
        return 0;
    op_error_set(err, first.code ? first.code : OP_EPARSE, "%s (%zu of %zu "
                 "snapshots bad; the others were read)", first.msg, bad, idx);
    if (!last) /* nothing read: the input failed */
        return err->code;
    op_run_warning(b, last, err->msg); /* printed with the file's name */
    op_error_clear(err);
    return 0;
}

static int sz_finish(op_builder *b, op_error *err)
{
    void **slot = op_plugin_slot(b);
    sz_state *st = slot ? *slot : NULL;
    size_t i;

    (void)err;
    if (!st)
        return 0;
    for (i = 0; i < st->n; i++) {
        op_run *r = op_run_find(b, "samza", st->runs[i].id);
        if (!r)
            continue;
        op_run_int(b, r, OP_I_STARTED_AT, st->runs[i].lo);
        op_run_int(b, r, OP_I_ENDED_AT, st->runs[i].hi);
        op_run_metric_int(b, r, "window_ms", st->runs[i].hi - st->runs[i].lo);
        op_run_metric_int(b, r, "snapshots", (int64_t)st->runs[i].n);
    }
    free(st->runs);
    free(st);
    *slot = NULL;
    return 0;
}

const op_plugin op_plugin_samza = {
    OP_PLUGIN_HEADER,
    .name = "samza",
    .version = "1.0.0",
    .description = "Samza MetricsSnapshotReporter messages (header + metrics "
                   "by group): containers, tasks, stores, changelog lag",
    .detect = sz_detect,
    .parse = sz_parse,
    .finish = sz_finish,
};
