/*
 * test_model.c - the metrics model and its builder: runs, nodes, maps,
 * distributions, series, freezing, parent checks, arena behaviour and the
 * JSON view normalize prints.
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

#include "arena.h"
#include "jsonw.h"
#include "model.h"
#include "model_json.h"

static void test_arena(void **state)
{
    arena *a = arena_new();
    char *big, *s;
    int i;

    (void)state;
    assert_non_null(a);
    for (i = 0; i < 10000; i++) {
        int *p = arena_alloc(a, sizeof(int) * 3);
        assert_non_null(p);
        assert_int_equal(p[0] | p[1] | p[2], 0); /* zeroed */
        assert_int_equal((uintptr_t)p % sizeof(void *), 0);
    }
    big = arena_alloc(a, 1 << 20);
    assert_non_null(big);
    s = arena_strdup(a, "hello");
    assert_string_equal(s, "hello");
    assert_null(arena_strdup(a, NULL));
    assert_string_equal(arena_strndup(a, "abcdef", 3), "abc");
    assert_true(arena_used(a) >= (1 << 20));
    assert_null(arena_alloc(a, SIZE_MAX));
    arena_free(a);
    arena_free(NULL);
}

static void test_runs_and_nodes(void **state)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "in.json");
    op_run *r, *r2;
    op_node *n, *n2;
    char id[32];
    int i;

    (void)state;
    r = op_run_get(b, "flink", "job-1");
    assert_non_null(r);
    r2 = op_run_get(b, "flink", "job-1");
    assert_ptr_equal(r, r2); /* same source + id: same run */
    assert_ptr_not_equal(r, op_run_get(b, "spark", "job-1"));
    op_run_str(b, r, OP_F_NAME, "My job");
    op_run_str(b, r, OP_F_STATUS, "running");
    op_run_int(b, r, OP_I_DURATION_MS, 1234);
    op_run_config(b, r, "b.key", "2");
    op_run_config(b, r, "a.key", "1");
    op_run_config(b, r, "a.key", "3"); /* last write wins */
    op_run_metric_int(b, r, "restarts", INT64_MIN);
    op_run_metric(b, r, "ratio", 0.5);
    for (i = 0; i < 5000; i++) {
        snprintf(id, sizeof id, "v%d", i);
        n = op_node_get(b, r, id);
        assert_non_null(n);
        if (i)
            op_node_parent(b, n, "v0");
    }
    n = op_node_get(b, r, "v42");
    n2 = op_node_get(b, r, "v42");
    assert_ptr_equal(n, n2);
    op_node_parent(b, n, "v0"); /* duplicate parent ignored */
    op_node_parent(b, n, "ghost"); /* dropped at freeze with a warning */
    op_node_str(b, n, OP_F_KIND, "vertex");
    op_node_int(b, n, OP_I_PARALLELISM, 4);
    op_node_attr(b, n, "ship_strategy", "HASH");
    op_node_metric(b, n, "busy_ratio", 0.97);
    assert_int_equal(op_builder_failed(b, NULL), 0);
    model_builder_free(b);
    model_freeze(m);

    assert_int_equal(m->nruns, 2);
    assert_string_equal(mentry_key(&r->config.items[0]), "a.key"); /* sorted */
    assert_string_equal(mmap_get(&r->config, "a.key")->u.s, "3");
    assert_int_equal(mmap_get(&r->metrics, "restarts")->u.i, INT64_MIN);
    assert_null(mmap_get(&r->metrics, "nope"));
    assert_int_equal(r->nnodes, 5000);
    assert_ptr_equal(model_find_node(r, "v4999"), r->nodes[4999]);
    assert_null(model_find_node(r, "v5000"));
    assert_int_equal(n->nparents, 1);
    assert_int_equal(r->nwarnings, 1);
    assert_non_null(strstr(r->warnings[0], "ghost"));
    assert_string_equal(r->origins[0], "in.json");
    assert_true(n->set & MSET_PARALLELISM);
    assert_false(n->set & MSET_STARTED_AT);
    model_free(m);
}

static void test_frozen_is_read_only(void **state)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "x");
    op_run *r = op_run_get(b, "dbt", "inv");

    (void)state;
    model_freeze(m);
    op_run_config(b, r, "late", "1");
    assert_int_equal(r->config.n, 0);
    assert_null(op_run_get(b, "dbt", "other"));
    assert_int_equal(m->nruns, 1);
    model_builder_free(b);
    model_free(m);
}

static void test_dist(void **state)
{
    double v[] = {5, 1, NAN, 3, 2, 4};
    op_dist d;
    model *m = model_new();
    op_builder *b = model_builder_new(m, "x");
    op_run *r = op_run_get(b, "spark", "app");
    op_node *n = op_node_get(b, r, "stage-1-0");
    double big[101];
    int i;

    (void)state;
    model_dist_from_values(v, 6, &d);
    assert_int_equal((int)d.count, 5);
    assert_true(d.min == 1 && d.max == 5 && d.sum == 15 && d.mean == 3);
    assert_true(d.p50 == 3);
    assert_true(fabs(d.p75 - 4) < 1e-12);
    for (i = 0; i <= 100; i++)
        big[i] = 100 - i;
    op_node_dist_values(b, n, "run_ms", big, 101);
    model_freeze(m);
    assert_int_equal(n->ndists, 1);
    assert_true(n->dists[0].d.p90 == 90 && n->dists[0].d.p99 == 99);
    assert_true(big[0] == 100); /* the caller's array is not touched */
    model_dist_from_values(v, 0, &d);
    assert_true(d.count == 0);
    model_builder_free(b);
    model_free(m);
}

static void test_series(void **state)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "x");
    op_run *r = op_run_get(b, "flink", "j");
    op_record *rec;
    const mseries *s;
    int i;

    (void)state;
    for (i = 0; i < 100; i++) {
        rec = op_series_append(b, r, "checkpoints");
        op_record_int(b, rec, "id", i);
        op_record_num(b, rec, "duration_ms", i * 1.5);
        op_record_str(b, rec, "status", "COMPLETED");
        op_record_bool(b, rec, "savepoint", i == 3);
    }
    op_series_append(b, r, "another");
    model_freeze(m);
    s = model_find_series(r, "checkpoints");
    assert_non_null(s);
    assert_int_equal(s->n, 100);
    assert_string_equal(mentry_key(&s->recs[99]->fields.items[0]), "duration_ms");
    assert_int_equal(mmap_get(&s->recs[7]->fields, "id")->u.i, 7);
    assert_true(mmap_get(&s->recs[3]->fields, "savepoint")->u.b);
    assert_string_equal(r->series[0].name, "another"); /* sorted */
    assert_null(model_find_series(r, "nope"));
    model_builder_free(b);
    model_free(m);
}

static void test_json_view(void **state)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "in<put>.json");
    op_run *r = op_run_get(b, "flink", "j\"1");
    op_node *a = op_node_get(b, r, "a"), *c = op_node_get(b, r, "c");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    jw w;

    (void)state;
    op_node_parent(b, c, "a");
    op_node_metric(b, a, "x_ratio", NAN);
    op_node_metric_int(b, a, "big", INT64_MAX);
    model_freeze(m);
    jw_init(&w, f, 0);
    model_json_run(&w, r);
    fclose(f);
    assert_non_null(strstr(buf, "\"id\":\"j\\\"1\""));
    assert_non_null(strstr(buf, "\"x_ratio\":null"));
    assert_non_null(strstr(buf, "\"big\":9223372036854775807"));
    assert_non_null(strstr(buf, "\"children\":[\"c\"]"));
    assert_non_null(strstr(buf, "in\\u003cput\\u003e.json"));
    assert_non_null(strstr(buf, "\"status\":\"unknown\""));
    free(buf);
    model_builder_free(b);
    model_free(m);
}

/* Broken UTF-8 from an input leaves normalize as U+FFFD, one per byte,
 * and control characters as escapes: the output is always valid JSON. */
static void test_json_view_utf8(void **state)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "in.json");
    op_run *r = op_run_get(b, "spark", "app-\xff");
    op_node *n = op_node_get(b, r, "s");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    jw w;

    (void)state;
    op_node_str(b, n, OP_F_NAME, "na\xc3(me\xe2\x82 \xed\xa0\x80 \xc2\x85 ok \xc3\xa9");
    op_node_attr(b, n, "k\xfe", "\x7f\x01");
    model_freeze(m);
    jw_init(&w, f, 0);
    model_json_run(&w, r);
    fclose(f);
    /* a bad lead, a truncated sequence, a surrogate (3 bytes), a C1 */
    assert_non_null(strstr(buf, "\"name\":\"na\xef\xbf\xbd(me\xef\xbf\xbd\xef\xbf\xbd "
                                "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \\u0085 ok \xc3\xa9\""));
    assert_non_null(strstr(buf, "\"id\":\"app-\xef\xbf\xbd\""));
    assert_non_null(strstr(buf, "\"k\xef\xbf\xbd\":\"\\u007f\\u0001\""));
    free(buf);
    model_builder_free(b);
    model_free(m);
}

/* An id with a control character is refused: nothing is created, the run
 * (for a node or parent) and the input's refusals say so, quoting the id
 * with escapes; other ids of the input are kept. */
static void test_refused_ids(void **state)
{
    static const char evil[] = "x:1\nenv.java.opts.all: -javaagent:/tmp/evil.jar\n#";
    model *m = model_new();
    op_builder *b = model_builder_new(m, "in.json");
    op_run *r = op_run_get(b, "flink", "job-1");
    op_node *ok = op_node_get(b, r, "ok");
    const char *const *msg;
    size_t n, more;
    char id[32];
    int i;

    (void)state;
    assert_null(op_node_get(b, r, evil));
    assert_null(op_node_get(b, r, evil)); /* asked again: noted once */
    assert_null(op_node_get(b, r, "c1\xc2\x9b"));
    assert_null(op_node_get(b, r, "del\x7f"));
    assert_non_null(op_node_get(b, r, "bad-utf8-\xff")); /* not a control */
    op_node_parent(b, ok, "p\tq");
    assert_null(op_run_get(b, "flink", "job\r2"));
    assert_null(op_run_get(b, "fl\033ink", "job-3"));
    assert_null(op_run_find(b, "flink", "job\r2"));
    msg = model_builder_refusals(b, &n, &more);
    assert_int_equal(n, 6);
    assert_int_equal(more, 0);
    assert_string_equal(msg[0], "run flink/job-1: node \"x:1\\nenv.java.opts.all: "
                                "-javaagent:/tmp/evil.jar\\n#\": refused: the id has "
                                "a control character (U+000A at byte 3)");
    assert_string_equal(msg[1], "run flink/job-1: node \"c1\\u009b\": refused: the id "
                                "has a control character (U+009B at byte 2)");
    assert_non_null(strstr(msg[2], "node \"del\\x7f\": refused"));
    assert_string_equal(msg[3], "run flink/job-1: node ok: parent \"p\\tq\": refused: "
                                "the id has a control character (U+0009 at byte 1)");
    assert_string_equal(msg[4], "run \"job\\r2\": refused: the id has a control "
                                "character (U+000D at byte 3)");
    assert_string_equal(msg[5], "run source \"fl\\x1bink\": refused: the id has a "
                                "control character (U+001B at byte 2)");
    for (i = 0; i < 20; i++) {
        snprintf(id, sizeof id, "n\001%d", i);
        assert_null(op_node_get(b, r, id));
    }
    msg = model_builder_refusals(b, &n, &more);
    assert_int_equal(n, 16); /* described; the rest counted */
    assert_int_equal(more, 10);
    model_freeze(m);
    assert_int_equal(r->nnodes, 2);
    assert_int_equal(ok->nparents, 0);
    assert_int_equal(r->nwarnings, 16 - 2); /* the run refusals have no run */
    assert_string_equal(r->warnings[0], "node \"x:1\\nenv.java.opts.all: "
                                        "-javaagent:/tmp/evil.jar\\n#\": refused: the id "
                                        "has a control character (U+000A at byte 3)");
    assert_int_equal(m->nruns, 1);
    assert_int_equal(op_builder_failed(b, NULL), 0);
    model_builder_free(b);
    model_free(m);
}

static void test_history(void **state)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "x");
    op_run *r1 = op_run_get(b, "dbt", "inv-b");
    op_run *r2 = op_run_get(b, "dbt", "inv-a");
    op_run *r3 = op_run_get(b, "dbt", "inv-c");
    op_run *other = op_run_get(b, "dbt", "inv-other");
    op_run *alone = op_run_get(b, "dbt", "inv-alone");
    void **slot;

    (void)state;
    op_run_history(b, r1, "jaffle", 200);
    op_run_history(b, r2, "jaffle", 100);
    op_run_history(b, r3, "jaffle", 300);
    op_run_history(b, other, "other", 1);
    model_builder_set_plugin(b, "dbt");
    slot = op_plugin_slot(b);
    assert_non_null(slot);
    assert_null(*slot);
    *slot = r1;
    assert_ptr_equal(model_plugin_state(m, "dbt"), r1);
    assert_ptr_equal(op_run_find(b, "dbt", "inv-c"), r3);
    assert_null(op_run_find(b, "dbt", "nope"));
    model_freeze(m);
    assert_int_equal(r3->nhistory, 2);
    assert_ptr_equal(r3->history[0], r2); /* oldest first */
    assert_ptr_equal(r3->history[1], r1);
    assert_true(r1->superseded && r2->superseded);
    assert_false(r3->superseded);
    assert_int_equal(other->nhistory, 0);
    assert_false(other->superseded);
    assert_null(alone->history_key);
    model_builder_free(b);
    model_free(m);
}

/* jw_num's printf-free paths (integral values, milli/micro decimals) write
 * exactly what the printf forms did: %.0f, else the shortest of %.15g and
 * %.17g that reads back (the store's JSON text and its hash depend on it). */
static void test_jw_num_as_printf(void **state)
{
    static const double fixed[] = {0.0, -0.0, 1.0, -42.0, 6306.122, 3254.346,
        13228.95, 0.001, -0.000335, 0.0001, 0.00001, 999999999.999999,
        1e9 + 0.5, 0.1, 1.0 / 3, 123456.789012, -7.5, 2e15 + 2, 1e-7};
    unsigned seed = 1;
    size_t i;

    (void)state;
    for (i = 0; i < 20000 + sizeof fixed / sizeof fixed[0]; i++) {
        double v, back;
        char want[40], *got = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&got, &len);
        jw w;
        seed = seed * 1103515245u + 12345u;
        if (i < sizeof fixed / sizeof fixed[0])
            v = fixed[i];
        else
            v = (double)(seed % 2000000000u) / (i % 2 ? 1e3 : 1e6) -
                (i % 3 ? 0 : 1e3);
        assert_non_null(f);
        jw_init(&w, f, 0);
        jw_num(&w, v);
        fclose(f);
        if (v == floor(v) && fabs(v) < 9007199254740992.0)
            snprintf(want, sizeof want, "%.0f", v);
        else {
            snprintf(want, sizeof want, "%.15g", v);
            if (sscanf(want, "%lg", &back) != 1 || back != v)
                snprintf(want, sizeof want, "%.17g", v);
        }
        assert_string_equal(got, want);
        free(got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arena),
        cmocka_unit_test(test_runs_and_nodes),
        cmocka_unit_test(test_frozen_is_read_only),
        cmocka_unit_test(test_dist),
        cmocka_unit_test(test_series),
        cmocka_unit_test(test_json_view),
        cmocka_unit_test(test_json_view_utf8),
        cmocka_unit_test(test_refused_ids),
        cmocka_unit_test(test_history),
        cmocka_unit_test(test_jw_num_as_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
