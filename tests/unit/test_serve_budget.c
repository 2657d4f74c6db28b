/*
 * test_serve_budget.c - the server's per-request bounds (serve/serve_budget.c):
 * the memory budget (exact at its edge, given back), the budgeted answer
 * stream (open_memstream's behaviour: a rewind and a shorter write replace
 * the content; a growth over the budget fails the stream and marks it),
 * and the render slots (--threads - 1, at least 1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static void make(srv *s, serve_opts *o, uint64_t budget, unsigned threads)
{
    memset(s, 0, sizeof *s);
    memset(o, 0, sizeof *o);
    o->server_memory = budget;
    o->threads = threads;
    s->o = o;
}

static void test_budget_edge(void **state)
{
    serve_opts o;
    srv s;
    uint64_t base = srv_budget_used();

    (void)state;
    make(&s, &o, base + 1000, 2);
    assert_int_equal(srv_budget_take(&s, 1000), 0);
    assert_int_equal(srv_budget_take(&s, 1), -1);
    srv_budget_give(1000);
    assert_int_equal(srv_budget_used(), base);
    assert_int_equal(srv_budget_take(&s, 1001), -1);
    assert_int_equal(srv_budget_used(), base);
}

static void test_stream_rewind(void **state)
{
    serve_opts o;
    srv s;
    char *body;
    size_t len;
    int over;
    uint64_t base = srv_budget_used();
    FILE *f;

    (void)state;
    make(&s, &o, 0, 2);
    f = srv_budget_stream(&s, &body, &len, &over);
    assert_non_null(f);
    fputs("a long first answer", f);
    rewind(f);
    fputs("short", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(len, 5);
    assert_memory_equal(body, "short", 5);
    assert_true(srv_budget_used() > base);
    srv_budget_free(body);
    assert_int_equal(srv_budget_used(), base);
    /* nothing written: no buffer, no charge */
    f = srv_budget_stream(&s, &body, &len, &over);
    assert_int_equal(fclose(f), 0);
    assert_null(body);
    assert_int_equal(len, 0);
    srv_budget_free(NULL);
}

static void test_stream_over(void **state)
{
    serve_opts o;
    srv s;
    char *body, chunk[1000];
    size_t len, i;
    int over, failed = 0;
    uint64_t base = srv_budget_used();
    FILE *f;

    (void)state;
    memset(chunk, 'x', sizeof chunk);
    make(&s, &o, base + 64 * 1024, 2);
    f = srv_budget_stream(&s, &body, &len, &over);
    for (i = 0; i < 200; i++)
        failed |= fwrite(chunk, 1, sizeof chunk, f) != sizeof chunk;
    fflush(f);
    assert_true(failed || ferror(f));
    assert_true(over);
    assert_true(srv_budget_used() <= base + 64 * 1024);
    assert_int_not_equal(fclose(f), 0);
    srv_budget_free(body);
    assert_int_equal(srv_budget_used(), base);
}

static void test_render_slots(void **state)
{
    serve_opts o;
    srv s;

    (void)state;
    make(&s, &o, 0, 3); /* two slots: one thread stays free */
    assert_int_equal(srv_render_enter(&s), 0);
    assert_int_equal(srv_render_enter(&s), 0);
    assert_int_equal(srv_render_enter(&s), -1);
    srv_render_leave();
    assert_int_equal(srv_render_enter(&s), 0);
    srv_render_leave();
    srv_render_leave();
    make(&s, &o, 0, 1); /* one thread: one slot still */
    assert_int_equal(srv_render_enter(&s), 0);
    assert_int_equal(srv_render_enter(&s), -1);
    srv_render_leave();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_edge),
        cmocka_unit_test(test_stream_rewind),
        cmocka_unit_test(test_stream_over),
        cmocka_unit_test(test_render_slots),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
