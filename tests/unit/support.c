/*
 * support.c - helpers shared by the unit tests (see support.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

const mentry *tm_get(const mmap *map, const char *key)
{
    return mmap_get(map, key);
}

int tm_has(const mmap *map, const char *key)
{
    return tm_get(map, key) != NULL;
}

double tm_num(const mmap *map, const char *key)
{
    const mentry *e = tm_get(map, key);

    if (!e)
        fail_msg("missing metric %s", key);
    return mentry_type(e) == MV_INT ? (double)e->u.i : e->u.n;
}

int64_t tm_inum(const mmap *map, const char *key)
{
    const mentry *e = tm_get(map, key);

    if (!e)
        fail_msg("missing metric %s", key);
    assert_int_equal(mentry_type(e), MV_INT);
    return e->u.i;
}

const char *tm_str(const mmap *map, const char *key)
{
    const mentry *e = tm_get(map, key);

    if (!e)
        fail_msg("missing key %s", key);
    assert_int_equal(mentry_type(e), MV_STR);
    return e->u.s;
}

const struct op_node *tm_node(const struct op_run *r, const char *id)
{
    const struct op_node *n = model_find_node(r, id);

    if (!n)
        fail_msg("missing node %s", id);
    return n;
}

const op_dist *tm_dist(const struct op_node *n, const char *metric)
{
    size_t i;

    for (i = 0; i < n->ndists; i++)
        if (!strcmp(n->dists[i].metric, metric))
            return &n->dists[i].d;
    return NULL;
}

int tm_has_warning(const struct op_run *r, const char *needle)
{
    size_t i;

    for (i = 0; i < r->nwarnings; i++)
        if (strstr(r->warnings[i], needle))
            return 1;
    return 0;
}

/* The model the engine tests share: a Flink job of three vertices with
 * config, metrics, a distribution, a checkpoints series and a warning, and
 * two Spark runs (one with a node, one empty). Its shape is what the
 * rules under tests/lua/good check. */
model *tm_fixture_model(void)
{
    static const double busy[] = {0.97, 0.95, 0.99};
    model *m = model_new();
    op_builder *b;
    op_run *r;
    op_node *n;
    op_record *rec;

    assert_non_null(m);
    b = model_builder_new(m, "fixture.json");
    assert_non_null(b);
    r = op_run_get(b, "flink", "job-1");
    op_run_str(b, r, OP_F_NAME, "wordcount");
    op_run_str(b, r, OP_F_STATUS, "running");
    op_run_str(b, r, OP_F_RAW_STATUS, "RUNNING");
    op_run_str(b, r, OP_F_ENGINE_VERSION, "1.18");
    op_run_int(b, r, OP_I_STARTED_AT, 1000);
    op_run_int(b, r, OP_I_ENDED_AT, 5000);
    op_run_int(b, r, OP_I_DURATION_MS, 4000);
    op_run_config(b, r, "state.backend", "rocksdb");
    op_run_config(b, r, "parallelism.default", "4");
    op_run_metric_int(b, r, "checkpoints", 12);
    op_run_metric(b, r, "uptime_ratio", 0.5);
    op_run_metric(b, r, "nan_metric", NAN);
    op_run_warning(b, r, "something odd");
    n = op_node_get(b, r, "src");
    op_node_str(b, n, OP_F_KIND, "vertex");
    op_node_str(b, n, OP_F_NAME, "Source");
    op_node_int(b, n, OP_I_PARALLELISM, 2);
    op_node_metric(b, n, "busy_ratio", 0.1);
    n = op_node_get(b, r, "map");
    op_node_str(b, n, OP_F_KIND, "vertex");
    op_node_str(b, n, OP_F_NAME, "Map");
    op_node_int(b, n, OP_I_PARALLELISM, 4);
    op_node_int(b, n, OP_I_MAX_PARALLELISM, 128);
    op_node_parent(b, n, "src");
    op_node_metric(b, n, "busy_ratio", 0.97);
    op_node_metric_int(b, n, "records_in", 1000);
    op_node_attr(b, n, "operator", "Map");
    op_node_dist_values(b, n, "busy_ratio", busy, 3);
    n = op_node_get(b, r, "sink");
    op_node_str(b, n, OP_F_KIND, "vertex");
    op_node_str(b, n, OP_F_NAME, "Sink");
    op_node_parent(b, n, "map");
    rec = op_series_append(b, r, "checkpoints");
    op_record_int(b, rec, "id", 1);
    op_record_num(b, rec, "duration_ms", 100);
    op_record_str(b, rec, "status", "COMPLETED");
    op_record_bool(b, rec, "ok", 1);
    rec = op_series_append(b, r, "checkpoints");
    op_record_int(b, rec, "id", 2);
    op_record_num(b, rec, "duration_ms", 250.5);
    op_record_str(b, rec, "status", "COMPLETED");
    op_record_bool(b, rec, "ok", 0);
    r = op_run_get(b, "spark", "app-1");
    op_node_get(b, r, "stage-1");
    op_run_get(b, "spark", "app-2");
    assert_int_equal(op_builder_failed(b, NULL), 0);
    model_builder_free(b);
    model_freeze(m);
    return m;
}

void db_add(dbuf *b, const void *src, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        size_t ncap = b->cap ? b->cap : 1024;
        while (ncap < b->n + n + 1)
            ncap *= 2;
        b->p = realloc(b->p, ncap);
        assert_non_null(b->p);
        b->cap = ncap;
    }
    if (n)
        memcpy(b->p + b->n, src, n);
    b->n += n;
    b->p[b->n] = 0;
}

void db_u8(dbuf *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    db_add(b, &c, 1);
}

void db_le32(dbuf *b, uint32_t v)
{
    unsigned char c[4] = {(unsigned char)v, (unsigned char)(v >> 8),
                          (unsigned char)(v >> 16), (unsigned char)(v >> 24)};
    db_add(b, c, 4);
}

void db_be32(dbuf *b, uint32_t v)
{
    unsigned char c[4] = {(unsigned char)(v >> 24), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 8), (unsigned char)v};
    db_add(b, c, 4);
}

void db_be16(dbuf *b, unsigned v)
{
    db_u8(b, v >> 8);
    db_u8(b, v & 0xff);
}

/* ---- a scratch directory ------------------------------------------------ */

char tm_tmpdir[64];

int tm_tmpdir_setup(void **state)
{
    (void)state;
    snprintf(tm_tmpdir, sizeof tm_tmpdir, "/tmp/op-test.XXXXXX");
    return mkdtemp(tm_tmpdir) ? 0 : -1;
}

int tm_tmpdir_teardown(void **state)
{
    char cmd[128];

    (void)state;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tm_tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}
