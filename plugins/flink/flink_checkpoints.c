/*
 * flink_checkpoints.c - checkpoint statistics, checkpoint config, per-
 * checkpoint details (per vertex, and per subtask with the phases of the
 * checkpoint) and the exception history of one job.
 *
 * The `checkpoints` series merges the history of every poll (Flink keeps
 * only the last web.checkpoints.history entries, default 10): deduplicated
 * by id, the newest poll's view of an id wins, ordered by id.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <optipipe/grow.h>

#include "flink_internal.h"

/* One JSON item seen for an id; seq orders polls (later wins). */
typedef struct ck_item {
    int64_t id;
    size_t seq;
    const cJSON *j;
} ck_item;

typedef struct ck_list {
    ck_item *v;
    size_t n, cap;
    int oom;
} ck_list;

static void ck_add(ck_list *l, int64_t id, const cJSON *j)
{
    if (l->oom)
        return;
    if (OP_GROW(l->v, l->cap, l->n + 1, 64)) {
        l->oom = 1;
        return;
    }
    l->v[l->n].id = id;
    l->v[l->n].seq = l->n;
    l->v[l->n].j = j;
    l->n++;
}

static int ck_cmp(const void *a, const void *b)
{
    const ck_item *x = a, *y = b;

    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* Sorts by id and keeps the last-added item of every id. */
static void ck_dedup(ck_list *l)
{
    size_t i, o = 0;

    if (!l->n)
        return;
    qsort(l->v, l->n, sizeof *l->v, ck_cmp);
    for (i = 0; i < l->n; i++) {
        if (i + 1 < l->n && l->v[i + 1].id == l->v[i].id)
            continue;
        l->v[o++] = l->v[i];
    }
    l->n = o;
}

static void ck_add_stat(ck_list *l, const cJSON *j)
{
    int64_t id;

    if (cJSON_IsObject(j) && fl_geti64(j, "id", &id))
        ck_add(l, id, j);
}

/* --- records ---------------------------------------------------------- */

static void rec_i64(op_builder *b, op_record *rec, const cJSON *j,
                    const char *field, const char *key)
{
    int64_t x;

    if (fl_geti64_in(j, field, -1, INT64_MAX, &x) && x >= 0)
        op_record_int(b, rec, key, x);
}

static void rec_str(op_builder *b, op_record *rec, const cJSON *j,
                    const char *field, const char *key)
{
    const char *s = fl_str(j, field);
    char buf[FL_MSG_MAX];

    if (!s)
        return;
    fl_first_line(s, buf, sizeof buf);
    op_record_str(b, rec, key, buf);
}

static void rec_bool(op_builder *b, op_record *rec, const cJSON *j,
                     const char *field, const char *key)
{
    int v;

    if (fl_getbool(j, field, &v))
        op_record_bool(b, rec, key, v);
}

/* Sizes: since 1.15 state_size is the full size and checkpointed_size what
 * was uploaded; before, state_size was the only field and meant the
 * uploaded (checkpointed) size. */
static void rec_sizes(op_builder *b, op_record *rec, const cJSON *j)
{
    if (fl_get(j, "checkpointed_size")) {
        rec_i64(b, rec, j, "state_size", "state_size_bytes");
        rec_i64(b, rec, j, "checkpointed_size", "checkpointed_size_bytes");
    } else {
        rec_i64(b, rec, j, "state_size", "checkpointed_size_bytes");
    }
}

static void emit_checkpoint(op_builder *b, op_run *r, const cJSON *j)
{
    op_record *rec = op_series_append(b, r, "checkpoints");

    rec_i64(b, rec, j, "id", "id");
    rec_str(b, rec, j, "status", "status");
    rec_bool(b, rec, j, "is_savepoint", "is_savepoint");
    rec_str(b, rec, j, "checkpoint_type", "checkpoint_type");
    rec_i64(b, rec, j, "trigger_timestamp", "trigger_ms");
    rec_i64(b, rec, j, "latest_ack_timestamp", "latest_ack_ms");
    rec_i64(b, rec, j, "end_to_end_duration", "end_to_end_duration_ms");
    rec_sizes(b, rec, j);
    rec_i64(b, rec, j, "processed_data", "processed_data_bytes");
    rec_i64(b, rec, j, "persisted_data", "persisted_data_bytes");
    rec_i64(b, rec, j, "alignment_buffered", "alignment_buffered_bytes");
    rec_i64(b, rec, j, "num_subtasks", "num_subtasks");
    rec_i64(b, rec, j, "num_acknowledged_subtasks",
            "num_acknowledged_subtasks");
    rec_str(b, rec, j, "external_path", "external_path");
    rec_bool(b, rec, j, "discarded", "discarded");
    rec_i64(b, rec, j, "failure_timestamp", "failure_ms");
    rec_str(b, rec, j, "failure_message", "failure_message");
}

/* --- statistics ------------------------------------------------------- */

static void summary_metrics(op_builder *b, op_run *r, const cJSON *summary)
{
    static const struct {
        const char *field, *base, *unit;
    } parts[] = {
        {"end_to_end_duration", "checkpoint_duration", "ms"},
        {"state_size", "checkpoint_state_size", "bytes"},
        {"checkpointed_size", "checkpoint_checkpointed_size", "bytes"},
        {"persisted_data", "checkpoint_persisted_data", "bytes"},
        {"processed_data", "checkpoint_processed_data", "bytes"},
    };
    static const char *stats[] = {"min", "max", "avg", "p50",
                                  "p90", "p95", "p99"};
    int modern = fl_get(summary, "checkpointed_size") != NULL;
    size_t i, k;

    for (i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        const cJSON *s = fl_get(summary, parts[i].field);
        const char *base = parts[i].base;
        if (!s)
            continue;
        if (!modern && !strcmp(parts[i].field, "state_size"))
            base = "checkpoint_checkpointed_size";
        for (k = 0; k < sizeof stats / sizeof stats[0]; k++) {
            char key[96];
            double x;
            if (!fl_getnum(s, stats[k], &x) || !isfinite(x) || x < 0)
                continue;
            snprintf(key, sizeof key, "%s_%s_%s", base, stats[k],
                     parts[i].unit);
            op_run_metric(b, r, key, x);
        }
    }
}

static void stats_metrics(fl_ctx *c, op_run *r, const cJSON *ck)
{
    static const struct {
        const char *field, *name;
    } counts[] = {
        {"total", "checkpoints_total"},
        {"completed", "checkpoints_completed"},
        {"failed", "checkpoints_failed"},
        {"in_progress", "checkpoints_in_progress"},
        {"restored", "checkpoints_restored"},
    };
    const cJSON *cnt = fl_get(ck, "counts");
    const cJSON *rest = fl_get(fl_get(ck, "latest"), "restored");
    int64_t x, completed = 0;
    size_t i;
    int sp;

    for (i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (fl_geti64_in(cnt, counts[i].field, -1, INT64_MAX, &x) &&
            x >= 0)
            op_run_metric_int(c->b, r, counts[i].name, x);
    fl_geti64(cnt, "completed", &completed);
    if (completed > 0)
        summary_metrics(c->b, r, fl_get(ck, "summary"));
    if (fl_geti64(rest, "id", &x))
        op_run_metric_int(c->b, r, "restored_checkpoint_id", x);
    if (fl_geti64(rest, "restore_timestamp", &x) && x > 0)
        op_run_metric_int(c->b, r, "restored_at", x);
    if (fl_getbool(rest, "is_savepoint", &sp))
        op_run_metric_int(c->b, r, "restored_from_savepoint", sp);
}

/* --- checkpoint config ------------------------------------------------- */

static const char *backend_name(const char *cls)
{
    if (!strcmp(cls, "HashMapStateBackend") ||
        !strcmp(cls, "MemoryStateBackend") || !strcmp(cls, "FsStateBackend"))
        return "hashmap";
    if (!strcmp(cls, "EmbeddedRocksDBStateBackend") ||
        !strcmp(cls, "RocksDBStateBackend"))
        return "rocksdb";
    if (!strcmp(cls, "ForStStateBackend"))
        return "forst";
    return cls;
}

static const char *storage_name(const char *cls)
{
    if (!strcmp(cls, "JobManagerCheckpointStorage"))
        return "jobmanager";
    if (!strcmp(cls, "FileSystemCheckpointStorage"))
        return "filesystem";
    return cls;
}

static void cfg_ms(fl_config *cfg, op_builder *b, op_run *r, const cJSON *cc,
                   const char *field, const char *key, const char *metric)
{
    int64_t x;
    char num[32];

    if (!fl_geti64(cc, field, &x) || x < 0 || x == INT64_MAX)
        return;
    snprintf(num, sizeof num, "%lld", (long long)x);
    fl_config_set(cfg, key, num);
    op_run_metric_int(b, r, metric, x);
}

static void cfg_bool(fl_config *cfg, const cJSON *cc, const char *field,
                     const char *key)
{
    int v;

    if (fl_getbool(cc, field, &v))
        fl_config_set(cfg, key, v ? "true" : "false");
}

static void checkpoint_config(fl_ctx *c, op_run *r, const cJSON *cc,
                              fl_config *cfg)
{
    const cJSON *ext = fl_get(cc, "externalization");
    const char *s;
    int64_t iv;
    int en, del;

    if (fl_geti64(cc, "interval", &iv)) {
        /* Long.MAX_VALUE (or <= 0): checkpointing is off for the job. */
        int on = iv > 0 && iv != INT64_MAX;
        op_run_metric_int(c->b, r, "checkpointing_enabled", on);
        if (!on)
            fl_config_unset(cfg, "execution.checkpointing.interval");
        else
            cfg_ms(cfg, c->b, r, cc, "interval",
                   "execution.checkpointing.interval",
                   "checkpoint_interval_ms");
    }
    cfg_ms(cfg, c->b, r, cc, "timeout", "execution.checkpointing.timeout",
           "checkpoint_timeout_ms");
    cfg_ms(cfg, c->b, r, cc, "min_pause", "execution.checkpointing.min-pause",
           "checkpoint_min_pause_ms");
    cfg_ms(cfg, c->b, r, cc, "max_concurrent",
           "execution.checkpointing.max-concurrent-checkpoints",
           "checkpoint_max_concurrent");
    cfg_ms(cfg, c->b, r, cc, "tolerable_failed_checkpoints",
           "execution.checkpointing.tolerable-failed-checkpoints",
           "checkpoint_tolerable_failures");
    cfg_ms(cfg, c->b, r, cc, "aligned_checkpoint_timeout",
           "execution.checkpointing.aligned-checkpoint-timeout",
           "checkpoint_aligned_timeout_ms");
    cfg_bool(cfg, cc, "unaligned_checkpoints",
             "execution.checkpointing.unaligned.enabled");
    cfg_bool(cfg, cc, "checkpoints_after_tasks_finish",
             "execution.checkpointing.checkpoints-after-tasks-finish");
    cfg_bool(cfg, cc, "state_changelog_enabled", "state.changelog.enabled");
    if ((s = fl_str(cc, "mode")))
        fl_config_set(cfg, "execution.checkpointing.mode",
                      !strcmp(s, "exactly_once")    ? "EXACTLY_ONCE"
                      : !strcmp(s, "at_least_once") ? "AT_LEAST_ONCE"
                                                    : s);
    if (fl_getbool(ext, "enabled", &en)) {
        del = 1;
        fl_getbool(ext, "delete_on_cancellation", &del);
        fl_config_set(cfg,
                      "execution.checkpointing.externalized-checkpoint-"
                      "retention",
                      !en    ? "NO_EXTERNALIZED_CHECKPOINTS"
                      : del ? "DELETE_ON_CANCELLATION"
                            : "RETAIN_ON_CANCELLATION");
    }
    if ((s = fl_str(cc, "state_backend")))
        fl_config_set(cfg, "state.backend.type", backend_name(s));
    if ((s = fl_str(cc, "checkpoint_storage")))
        fl_config_set(cfg, "execution.checkpointing.storage",
                      storage_name(s));
    else if ((s = fl_str(cc, "state_backend")) &&
             !strcmp(s, "MemoryStateBackend"))
        fl_config_set(cfg, "execution.checkpointing.storage", "jobmanager");
}

/* --- details ------------------------------------------------------------ */

/* The vertex ids of the newest /jobs/<jid> and /jobs/<jid>/plan. */
typedef struct ck_known {
    fl_byid job, plan;
} ck_known;

static int known_init(fl_ctx *c, const char *jid, ck_known *k)
{
    const cJSON *job = fl_find_newest(c, EP_JOB, jid, NULL, NULL);
    const cJSON *pr = fl_find_newest(c, EP_PLAN, jid, NULL, NULL);

    k->plan.slot = NULL;
    k->plan.cap = 0;
    if (fl_byid_build(&k->job, fl_get(job, "vertices"), "id", 0))
        return OP_ENOMEM;
    return fl_byid_build(&k->plan, fl_get(fl_get(pr, "plan"), "nodes"), "id",
                         0);
}

static void known_free(ck_known *k)
{
    fl_byid_free(&k->job);
    fl_byid_free(&k->plan);
}

static int vertex_known(const ck_known *k, const char *vid)
{
    return fl_byid_first(&k->job, vid) || fl_byid_first(&k->plan, vid);
}

static void emit_task(op_builder *b, op_run *r, int64_t ckid,
                      const char *vid, const cJSON *t)
{
    op_record *rec = op_series_append(b, r, "checkpoint_tasks");

    op_record_int(b, rec, "checkpoint_id", ckid);
    op_record_str(b, rec, "vertex", vid);
    rec_str(b, rec, t, "status", "status");
    rec_sizes(b, rec, t);
    rec_i64(b, rec, t, "end_to_end_duration", "end_to_end_duration_ms");
    rec_i64(b, rec, t, "processed_data", "processed_data_bytes");
    rec_i64(b, rec, t, "persisted_data", "persisted_data_bytes");
    rec_i64(b, rec, t, "num_subtasks", "num_subtasks");
    rec_i64(b, rec, t, "num_acknowledged_subtasks",
            "num_acknowledged_subtasks");
}

/* Node metrics from the tasks of one detail. Returns 0 or OP_ENOMEM. */
static int node_sizes(fl_ctx *c, op_run *r, const char *jid, int64_t ckid,
                      const cJSON *tasks)
{
    const cJSON *t;
    ck_known k;

    if (known_init(c, jid, &k)) {
        known_free(&k);
        return OP_ENOMEM;
    }
    cJSON_ArrayForEach(t, tasks)
    {
        op_node *n;
        int64_t x;
        int modern = fl_get(t, "checkpointed_size") != NULL;
        if (!t->string || !vertex_known(&k, t->string))
            continue;
        n = op_node_get(c->b, r, t->string);
        op_node_metric_int(c->b, n, "checkpoint_id", ckid);
        if (modern && fl_geti64_in(t, "state_size", -1, INT64_MAX, &x) &&
            x >= 0)
            op_node_metric_int(c->b, n, "checkpoint_state_size_bytes", x);
        if (fl_geti64_in(t, modern ? "checkpointed_size" : "state_size", -1,
                         INT64_MAX, &x) &&
            x >= 0)
            op_node_metric_int(c->b, n, "checkpoint_checkpointed_size_bytes",
                               x);
        if (fl_geti64_in(t, "end_to_end_duration", -1, INT64_MAX, &x) &&
            x >= 0)
            op_node_metric_int(c->b, n, "checkpoint_duration_ms", x);
        if (fl_geti64_in(t, "persisted_data", -1, INT64_MAX, &x) &&
            x >= 0)
            op_node_metric_int(c->b, n, "checkpoint_persisted_data_bytes", x);
    }
    known_free(&k);
    return OP_OK;
}

/* Every /checkpoints/details/<id> response: the per-vertex series, and node
 * metrics from the newest completed one. Returns 0 or OP_ENOMEM. */
static int details(fl_ctx *c, op_run *r, const char *jid, ck_list *all)
{
    ck_list d = {0};
    const fl_entry *const *ent;
    const cJSON *t;
    size_t n, i;
    int rc = OP_OK;

    /* Detail paths carry no vertex id: "" selects all of them, in poll
     * order. */
    n = fl_entries(c, EP_CKPT_DETAIL, jid, "", &ent);
    for (i = 0; i < n; i++)
        if (cJSON_IsObject(ent[i]->resp) && !ent[i]->err) {
            ck_add(&d, ent[i]->path.num, ent[i]->resp);
            ck_add_stat(all, ent[i]->resp);
        }
    if (d.oom) {
        rc = OP_ENOMEM;
        goto out;
    }
    ck_dedup(&d);
    for (i = 0; i < d.n; i++)
        cJSON_ArrayForEach(t, fl_get(d.v[i].j, "tasks"))
            if (t->string && cJSON_IsObject(t))
                emit_task(c->b, r, d.v[i].id, t->string, t);
    for (i = d.n; i-- > 0;) {
        const char *st = fl_str(d.v[i].j, "status");
        if (!st || !strcmp(st, "COMPLETED")) {
            rc = node_sizes(c, r, jid, d.v[i].id, fl_get(d.v[i].j, "tasks"));
            break;
        }
    }
out:
    free(d.v);
    return rc;
}

/* --- per-subtask details ------------------------------------------------ */

/* One /checkpoints/details/<id>/subtasks/<vid> response; seq orders polls. */
typedef struct st_item {
    int64_t id;
    const char *vid;
    size_t seq;
    const cJSON *j;
} st_item;

static int st_cmp(const void *a, const void *b)
{
    const st_item *x = a, *y = b;
    int d;

    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if ((d = strcmp(x->vid, y->vid)))
        return d;
    return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* Phases of one subtask (sync, async, alignment, start delay) as Flink's
 * CompletedSubtaskCheckpointStatistics has them; a pending_or_failed
 * subtask has only its index and status. */
static void emit_subtask(op_builder *b, op_run *r, const st_item *it,
                         int64_t index, const cJSON *s)
{
    op_record *rec = op_series_append(b, r, "checkpoint_subtasks");
    const cJSON *ck = fl_get(s, "checkpoint"), *al = fl_get(s, "alignment");

    op_record_int(b, rec, "checkpoint_id", it->id);
    op_record_str(b, rec, "vertex", it->vid);
    op_record_int(b, rec, "subtask", index);
    rec_str(b, rec, s, "status", "status");
    rec_i64(b, rec, s, "ack_timestamp", "ack_ms");
    rec_i64(b, rec, s, "end_to_end_duration", "end_to_end_duration_ms");
    rec_sizes(b, rec, s);
    rec_i64(b, rec, ck, "sync", "sync_ms");
    rec_i64(b, rec, ck, "async", "async_ms");
    rec_i64(b, rec, al, "duration", "alignment_ms");
    rec_i64(b, rec, al, "processed", "alignment_processed_bytes");
    rec_i64(b, rec, al, "persisted", "alignment_persisted_bytes");
    rec_i64(b, rec, s, "start_delay", "start_delay_ms");
    rec_bool(b, rec, s, "unaligned_checkpoint", "unaligned");
    rec_bool(b, rec, s, "aborted", "aborted");
}

static void emit_subtasks(fl_ctx *c, op_run *r, const char *jid,
                          const st_item *it)
{
    const cJSON *s;
    int i = -1;

    cJSON_ArrayForEach(s, fl_get(it->j, "subtasks"))
    {
        int64_t index;
        char msg[512];
        i++;
        if (cJSON_IsObject(s) && fl_geti64(s, "index", &index) &&
            index >= 0 && index < FL_MAX_SUBTASKS) {
            emit_subtask(c->b, r, it, index, s);
            continue;
        }
        snprintf(msg, sizeof msg,
                 "/jobs/%s/checkpoints/details/%lld/subtasks/%s: "
                 "$.subtasks[%d].index: not a subtask index (0..%d): entry "
                 "skipped",
                 jid, (long long)it->id, it->vid, i, FL_MAX_SUBTASKS - 1);
        op_run_warning(c->b, r, msg);
    }
}

/* Every /checkpoints/details/<id>/subtasks/<vid> response into the
 * checkpoint_subtasks series, ordered by checkpoint, vertex and subtask;
 * the newest poll's answer for a (checkpoint, vertex) wins. Returns 0 or
 * OP_ENOMEM. */
static int subtask_details(fl_ctx *c, op_run *r, const char *jid)
{
    const fl_entry *const *ent;
    size_t n = fl_entries(c, EP_CKPT_SUBTASKS, jid, NULL, &ent), i, k = 0;
    st_item *v;

    if (!n)
        return OP_OK;
    v = malloc(n * sizeof *v);
    if (!v)
        return OP_ENOMEM;
    for (i = 0; i < n; i++)
        if (cJSON_IsObject(ent[i]->resp) && !ent[i]->err) {
            v[k].id = ent[i]->path.num;
            v[k].vid = ent[i]->path.vid;
            v[k].seq = i;
            v[k++].j = ent[i]->resp;
        }
    qsort(v, k, sizeof *v, st_cmp);
    for (i = 0; i < k; i++)
        if (i + 1 == k || v[i + 1].id != v[i].id ||
            strcmp(v[i + 1].vid, v[i].vid))
            emit_subtasks(c, r, jid, &v[i]);
    free(v);
    return OP_OK;
}

int fl_checkpoints(fl_ctx *c, op_run *r, const char *jid, fl_config *cfg)
{
    const cJSON *ck = fl_find_newest(c, EP_CKPTS, jid, NULL, NULL), *h;
    const cJSON *cc = fl_find_newest(c, EP_CKPT_CONFIG, jid, NULL, NULL);
    ck_list all = {0};
    size_t p, i;
    int rc;

    if (cc)
        checkpoint_config(c, r, cc, cfg);
    if (ck)
        stats_metrics(c, r, ck);
    for (p = 0; p < c->npolls; p++) {
        const cJSON *pk = fl_find(c, p, EP_CKPTS, jid, NULL, -1);
        const cJSON *latest = fl_get(pk, "latest");
        if (!pk)
            continue;
        ck_add_stat(&all, fl_get(latest, "completed"));
        ck_add_stat(&all, fl_get(latest, "savepoint"));
        ck_add_stat(&all, fl_get(latest, "failed"));
        cJSON_ArrayForEach(h, fl_get(pk, "history"))
            ck_add_stat(&all, h);
    }
    rc = details(c, r, jid, &all);
    if (!rc)
        rc = subtask_details(c, r, jid);
    if (all.oom)
        rc = OP_ENOMEM;
    if (!rc) {
        ck_dedup(&all);
        for (i = 0; i < all.n; i++)
            emit_checkpoint(c->b, r, all.v[i].j);
    }
    free(all.v);
    return rc;
}

/* --- exceptions ------------------------------------------------------------ */

typedef struct ex_item {
    int64_t ts;
    const cJSON *j;
    int legacy; /* an all-exceptions entry or the root-exception */
} ex_item;

static int ex_cmp(const void *a, const void *b)
{
    const ex_item *x = a, *y = b;
    return x->ts < y->ts ? -1 : (x->ts > y->ts);
}

static const char *ex_name(const ex_item *e, const char *root, char *buf,
                           size_t n)
{
    const char *s = fl_str(e->j, e->legacy ? "exception" : "stacktrace");

    if (!s && e->legacy)
        s = root;
    if (!s)
        s = fl_str(e->j, "exceptionName");
    fl_first_line(s ? s : "", buf, n);
    return buf;
}

/* The deepest "Caused by: " line of a Java stack trace (what failed first,
 * under the wrappers such as "Recovery is suppressed by ..."); NULL when
 * the trace has none. Bounded by the trace's own length. */
static const char *ex_root_cause(const char *trace, char *buf, size_t n)
{
    static const char mark[] = "Caused by: ";
    const char *p = trace, *last = NULL;

    while (p && (p = strstr(p, mark)) != NULL) {
        if (p == trace || p[-1] == '\n')
            last = p + sizeof mark - 1;
        p += sizeof mark - 1;
    }
    if (!last)
        return NULL;
    fl_first_line(last, buf, n);
    return buf;
}

static void emit_exception(op_builder *b, op_run *r, const ex_item *e)
{
    op_record *rec = op_series_append(b, r, "exceptions");
    const cJSON *conc = fl_get(e->j, "concurrentExceptions");
    const char *trace;
    char buf[FL_MSG_MAX];

    op_record_int(b, rec, "timestamp_ms", e->ts);
    op_record_str(b, rec, "exception", ex_name(e, NULL, buf, sizeof buf));
    trace = fl_str(e->j, e->legacy ? "exception" : "stacktrace");
    if (!trace && e->legacy)
        trace = fl_str(e->j, "root-exception");
    if (ex_root_cause(trace, buf, sizeof buf))
        op_record_str(b, rec, "root_cause", buf);
    rec_str(b, rec, e->j, "exceptionName", "exception_class");
    rec_str(b, rec, e->j, e->legacy ? "task" : "taskName", "task");
    if (fl_str(e->j, "endpoint"))
        rec_str(b, rec, e->j, "endpoint", "location");
    else
        rec_str(b, rec, e->j, "location", "location");
    if (cJSON_IsArray(conc)) {
        const cJSON *first = cJSON_GetArrayItem(conc, 0);
        op_record_int(b, rec, "concurrent", cJSON_GetArraySize(conc));
        if (fl_str(first, "stacktrace"))
            rec_str(b, rec, first, "stacktrace", "cause");
    }
}

/* The newest exception as run attrs (what a run page shows of a failed
 * job without the series): last_exception, its first line, and
 * last_root_cause, its deepest "Caused by:" when the trace has one. */
static void ex_newest_attrs(op_builder *b, op_run *r, const ex_item *e)
{
    const char *trace = fl_str(e->j, e->legacy ? "exception" : "stacktrace");
    char buf[FL_MSG_MAX];

    if (!trace && e->legacy)
        trace = fl_str(e->j, "root-exception");
    if (e->legacy) /* as its "exception" record */
        fl_first_line(fl_str(e->j, "root-exception"), buf, sizeof buf);
    else
        ex_name(e, NULL, buf, sizeof buf);
    op_run_attr(b, r, "last_exception", buf);
    if (ex_root_cause(trace, buf, sizeof buf))
        op_run_attr(b, r, "last_root_cause", buf);
}

static size_t ex_collect(const cJSON *ex, ex_item *out, size_t cap)
{
    const cJSON *hist = fl_get(ex, "exceptionHistory"), *e;
    size_t n = 0;
    int64_t ts;

    if (hist) {
        cJSON_ArrayForEach(e, fl_get(hist, "entries"))
            if (n < cap && fl_geti64(e, "timestamp", &ts)) {
                out[n].ts = ts;
                out[n].j = e;
                out[n++].legacy = 0;
            }
        return n;
    }
    /* Before the history existed (and 1.x without it): the root cause. */
    if (fl_str(ex, "root-exception") && fl_geti64(ex, "timestamp", &ts) &&
        n < cap) {
        out[n].ts = ts;
        out[n].j = ex;
        out[n++].legacy = 1;
    }
    return n;
}

static int ex_same(const ex_item *a, const ex_item *b)
{
    char x[FL_MSG_MAX], y[FL_MSG_MAX];

    return a->ts == b->ts && !strcmp(ex_name(a, fl_str(a->j, "root-exception"),
                                             x, sizeof x),
                                     ex_name(b, fl_str(b->j, "root-exception"),
                                             y, sizeof y));
}

void fl_exceptions(fl_ctx *c, op_run *r, const char *jid)
{
    const cJSON *newest = fl_find_newest(c, EP_EXCEPTIONS, jid, NULL, NULL);
    size_t cap = 0, n = 0, p, i, kept = 0;
    ex_item *items;
    int tr;

    if (!newest)
        return;
    for (p = 0; p < c->npolls; p++) {
        const cJSON *ex = fl_find(c, p, EP_EXCEPTIONS, jid, NULL, -1);
        cap += (size_t)cJSON_GetArraySize(
                   fl_get(fl_get(ex, "exceptionHistory"), "entries")) +
               1;
    }
    items = malloc(cap * sizeof *items);
    if (!items)
        return;
    for (p = 0; p < c->npolls; p++) {
        const cJSON *ex = fl_find(c, p, EP_EXCEPTIONS, jid, NULL, -1);
        if (ex)
            n += ex_collect(ex, items + n, cap - n);
    }
    qsort(items, n, sizeof *items, ex_cmp);
    for (i = 0; i < n; i++) {
        size_t k;
        int dup = 0;
        /* Same timestamp and text as an earlier poll's entry: one event. */
        for (k = i; k-- > 0 && items[k].ts == items[i].ts;)
            if (ex_same(&items[k], &items[i]))
                dup = 1;
        if (dup)
            continue;
        if (items[i].legacy) {
            op_record *rec = op_series_append(c->b, r, "exceptions");
            char buf[FL_MSG_MAX];
            op_record_int(c->b, rec, "timestamp_ms", items[i].ts);
            fl_first_line(fl_str(items[i].j, "root-exception"), buf,
                          sizeof buf);
            op_record_str(c->b, rec, "exception", buf);
        } else {
            emit_exception(c->b, r, &items[i]);
        }
        kept++;
    }
    if (kept)
        ex_newest_attrs(c->b, r, &items[n - 1]);
    op_run_metric_int(c->b, r, "exceptions", (int64_t)kept);
    if (fl_getbool(fl_get(newest, "exceptionHistory"), "truncated", &tr) ||
        fl_getbool(newest, "truncated", &tr))
        op_run_metric_int(c->b, r, "exceptions_truncated", tr);
    free(items);
}
