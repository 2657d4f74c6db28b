/*
 * flink_rocksdb.c - a vertex's RocksDB / ForSt native metrics
 * (state.backend.rocksdb.metrics.* and state.backend.forst.metrics.*,
 * off by default). Flink names them per subtask "<operator>.<column
 * family>.rocksdb.<property>" (without the column family when
 * ...column-family-as-variable is on) and the DB's statistics
 * "<operator>.rocksdb.<ticker>"; ForSt uses the same "rocksdb." names.
 * Column families of one subtask are summed where each holds its own
 * share (keys, SST bytes, pending compaction), and the largest is taken
 * where they all report the one DB or cache (write stopped, delayed rate,
 * block cache capacity and usage). The result goes into the vertex with
 * the model's store names (docs/model-flink.md): a dist over subtasks and
 * a metric (sum, or max; `_max` the largest subtask).
 *
 * Bounded: at most RDB_MAX_PREFIXES operator/column family names and
 * RDB_MAX_CELLS values per vertex; what is over is counted and named in a
 * run warning, never dropped silently.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flink_internal.h"

#define RDB_MAX_PREFIXES 256
#define RDB_MAX_CELLS (1u << 20)
#define RDB_PREFIX_MAX 512

enum { AGG_SUM, AGG_MAX };

static const struct {
    const char *leaf; /* after "rocksdb." */
    const char *name; /* model name */
    int agg;          /* over the column families of a subtask */
    double scale;
} rdb_map[] = {
    {"estimate-num-keys", "estimated_keys", AGG_SUM, 1},
    {"estimate-pending-compaction-bytes", "pending_compaction_bytes", AGG_SUM, 1},
    {"num-running-compactions", "running_compactions", AGG_MAX, 1},
    {"compaction-pending", "compaction_pending", AGG_MAX, 1},
    {"actual-delayed-write-rate", "delayed_write_rate_bytes_per_s", AGG_MAX, 1},
    {"is-write-stopped", "write_stopped", AGG_MAX, 1},
    {"block-cache-capacity", "block_cache_capacity_bytes", AGG_MAX, 1},
    {"block-cache-usage", "block_cache_usage_bytes", AGG_MAX, 1},
    {"block-cache-pinned-usage", "block_cache_pinned_usage_bytes", AGG_MAX, 1},
    {"total-sst-files-size", "total_sst_bytes", AGG_SUM, 1},
    {"live-sst-files-size", "live_sst_bytes", AGG_SUM, 1},
    {"estimate-live-data-size", "live_data_bytes", AGG_SUM, 1},
    {"mem-table-flush-pending", "memtable_flush_pending", AGG_MAX, 1},
    {"num-running-flushes", "running_flushes", AGG_MAX, 1},
    {"background-errors", "background_errors", AGG_SUM, 1},
    {"size-all-mem-tables", "all_memtables_bytes", AGG_SUM, 1},
    {"cur-size-active-mem-table", "active_memtable_bytes", AGG_SUM, 1},
    {"num-immutable-mem-table", "immutable_memtables", AGG_SUM, 1},
    {"estimate-table-readers-mem", "table_readers_mem_bytes", AGG_SUM, 1},
    {"num-live-versions", "live_versions", AGG_SUM, 1},
    /* statistics (tickers, cumulative since the DB opened) */
    {"block_cache_hit", "block_cache_hits", AGG_SUM, 1},
    {"block_cache_miss", "block_cache_misses", AGG_SUM, 1},
    {"stall_micros", "write_stall_duration_total_ms", AGG_SUM, 0.001},
};

#define RDB_N (sizeof rdb_map / sizeof rdb_map[0])

/* Values of one (operator/column family, metric) by subtask; NaN: none. */
typedef struct rdb_col {
    double *v;
    size_t n;
} rdb_col;

struct fl_rdb {
    char *prefix[RDB_MAX_PREFIXES];
    rdb_col col[RDB_MAX_PREFIXES][RDB_N];
    size_t nprefix, cells, over_prefixes, over_cells, bad;
    int oom;
};

static int map_leaf(const char *leaf)
{
    size_t i;

    for (i = 0; i < RDB_N; i++)
        if (!strcmp(leaf, rdb_map[i].leaf))
            return (int)i;
    return -1;
}

/* Where "rocksdb." starts the metric's own name: at the start or after a
 * dot, the last such place (an operator may be called "rocksdb"). */
static const char *find_tag(const char *name)
{
    const char *p = name, *hit = NULL;

    while ((p = strstr(p, "rocksdb.")) != NULL) {
        if (p == name || p[-1] == '.')
            hit = p;
        p++;
    }
    return hit;
}

static int prefix_index(fl_rdb *r, const char *name, size_t len)
{
    size_t i;

    for (i = 0; i < r->nprefix; i++)
        if (strlen(r->prefix[i]) == len && !memcmp(r->prefix[i], name, len))
            return (int)i;
    if (r->nprefix >= RDB_MAX_PREFIXES) {
        r->over_prefixes++;
        return -1;
    }
    r->prefix[r->nprefix] = malloc(len + 1);
    if (!r->prefix[r->nprefix]) {
        r->oom = 1;
        return -1;
    }
    memcpy(r->prefix[r->nprefix], name, len);
    r->prefix[r->nprefix][len] = '\0';
    return (int)r->nprefix++;
}

static void col_set(fl_rdb *r, rdb_col *c, int64_t idx, double x)
{
    if ((size_t)idx >= c->n) {
        size_t nn = (size_t)idx + 1, i;
        double *nv;
        if (r->cells + (nn - c->n) > RDB_MAX_CELLS) {
            r->over_cells++;
            return;
        }
        nv = realloc(c->v, nn * sizeof *nv);
        if (!nv) {
            r->oom = 1;
            return;
        }
        for (i = c->n; i < nn; i++)
            nv[i] = NAN;
        r->cells += nn - c->n;
        c->v = nv;
        c->n = nn;
    }
    c->v[idx] = x;
}

int fl_rdb_metric(fl_rdb **rp, const char *name, const cJSON *e, int64_t idx)
{
    const char *tag = find_tag(name);
    size_t plen;
    int m, p;
    double x;

    if (!tag || (m = map_leaf(tag + 8)) < 0)
        return 0;
    /* It is ours from here: a bad value is not another metric's. */
    if (idx < 0)
        return 1; /* an aggregate over subtasks: fetch never asks for one */
    if (!*rp && !(*rp = calloc(1, sizeof **rp)))
        return 1;
    if (idx >= FL_MAX_SUBTASKS || !fl_getnum(e, "value", &x) || !isfinite(x) ||
        x < 0) {
        (*rp)->bad++;
        return 1;
    }
    plen = tag > name ? (size_t)(tag - name - 1) : 0;
    if (plen > RDB_PREFIX_MAX)
        plen = RDB_PREFIX_MAX; /* one long operator name: still one prefix */
    if ((p = prefix_index(*rp, name, plen)) < 0)
        return 1;
    col_set(*rp, &(*rp)->col[p][m], idx, x * rdb_map[m].scale);
    return 1;
}

/* Per subtask, metric m combined over the prefixes into out (NaN: none);
 * returns the number of subtasks slots (out has room for max_n). */
static size_t combine(const fl_rdb *r, size_t m, double *out, size_t max_n)
{
    size_t p, i, n = 0;

    for (i = 0; i < max_n; i++)
        out[i] = NAN;
    for (p = 0; p < r->nprefix; p++) {
        const rdb_col *c = &r->col[p][m];
        for (i = 0; i < c->n && i < max_n; i++) {
            double x = c->v[i];
            if (isnan(x))
                continue;
            if (isnan(out[i]))
                out[i] = x;
            else if (rdb_map[m].agg == AGG_SUM)
                out[i] += x;
            else if (x > out[i])
                out[i] = x;
            if (i + 1 > n)
                n = i + 1;
        }
    }
    return n;
}

/* The finite values of a[0..n) packed to the front; their count. */
static size_t pack(double *a, size_t n)
{
    size_t i, k = 0;

    for (i = 0; i < n; i++)
        if (!isnan(a[i]))
            a[k++] = a[i];
    return k;
}

static void emit_metric(op_builder *b, op_node *n, size_t m, double *vals,
                        size_t k)
{
    double sum = 0, max = vals[0];
    char key[96];
    size_t i;

    for (i = 0; i < k; i++) {
        sum += vals[i];
        if (vals[i] > max)
            max = vals[i];
    }
    op_node_dist_values(b, n, rdb_map[m].name, vals, k);
    op_node_metric(b, n, rdb_map[m].name,
                   rdb_map[m].agg == AGG_SUM ? sum : max);
    if (rdb_map[m].agg == AGG_SUM) {
        snprintf(key, sizeof key, "%s_max", rdb_map[m].name);
        op_node_metric(b, n, key, max);
    }
}

/* The block cache hit ratio per subtask and over the vertex, from the
 * hit and miss tickers of the same subtasks. */
static void emit_hit_ratio(op_builder *b, op_node *n, const double *hit,
                           const double *miss, size_t len, double *tmp)
{
    double h = 0, all = 0;
    size_t i, k = 0;

    for (i = 0; i < len; i++) {
        if (isnan(hit[i]) || isnan(miss[i]) || hit[i] + miss[i] <= 0)
            continue;
        tmp[k++] = hit[i] / (hit[i] + miss[i]);
        h += hit[i];
        all += hit[i] + miss[i];
    }
    if (!k)
        return;
    op_node_dist_values(b, n, "block_cache_hit_ratio", tmp, k);
    op_node_metric(b, n, "block_cache_hit_ratio", h / all);
}

static void warn_over(op_builder *b, op_run *run, const char *vid,
                      const fl_rdb *r)
{
    char msg[256];

    if (!r->over_prefixes && !r->over_cells && !r->bad && !r->oom)
        return;
    snprintf(msg, sizeof msg,
             "vertex %s: RocksDB native metrics not all read: %zu values "
             "over %d operator/column family names, %zu over %u values "
             "per vertex, %zu not a number >= 0%s",
             vid, r->over_prefixes, RDB_MAX_PREFIXES, r->over_cells,
             RDB_MAX_CELLS, r->bad, r->oom ? ", out of memory" : "");
    op_run_warning(b, run, msg);
}

void fl_rdb_emit(op_builder *b, op_run *run, op_node *n, const char *vid,
                 const fl_rdb *r)
{
    size_t m, len = 0, p, k;
    double *vals, *hit = NULL, *miss = NULL, *tmp;
    int ih = map_leaf("block_cache_hit"), im = map_leaf("block_cache_miss");

    if (!r)
        return;
    warn_over(b, run, vid, r);
    for (p = 0; p < r->nprefix; p++)
        for (m = 0; m < RDB_N; m++)
            if (r->col[p][m].n > len)
                len = r->col[p][m].n;
    if (!len)
        return;
    vals = malloc(len * sizeof *vals);
    hit = malloc(len * sizeof *hit);
    miss = malloc(len * sizeof *miss);
    tmp = malloc(len * sizeof *tmp);
    if (vals && hit && miss && tmp) {
        for (m = 0; m < RDB_N; m++) {
            k = pack(vals, combine(r, m, vals, len));
            if (k)
                emit_metric(b, n, m, vals, k);
        }
        combine(r, (size_t)ih, hit, len);
        combine(r, (size_t)im, miss, len);
        emit_hit_ratio(b, n, hit, miss, len, tmp);
        op_node_attr(b, n, "rocksdb_metrics", "native");
    } else {
        op_run_warning(b, run, "RocksDB native metrics: out of memory");
    }
    free(vals);
    free(hit);
    free(miss);
    free(tmp);
}

void fl_rdb_free(fl_rdb *r)
{
    size_t p, m;

    if (!r)
        return;
    for (p = 0; p < r->nprefix; p++) {
        free(r->prefix[p]);
        for (m = 0; m < RDB_N; m++)
            free(r->col[p][m].v);
    }
    free(r);
}
