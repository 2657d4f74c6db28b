/*
 * test_engine.c - the engine table (core/engine.h) as core asks it: each
 * built-in engine's hooks are found by source, fetch name, URL and folder
 * layout; `rules new`'s default source; and host streams dispatched through
 * their input_ops, so a stream type input.c has never heard of is peeked,
 * warned about and closed like its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "input.h"

static void test_lookups(void **state)
{
    const op_engine *e;
    char names[128];

    (void)state;
    e = engine_find("flink");
    assert_non_null(e);
    assert_non_null(e->html_charts);
    assert_string_equal(e->patch->ext, "yaml");
    assert_non_null(e->fetch->to_memory);
    assert_string_equal(engine_find("spark")->patch->ext, "conf");
    assert_string_equal(engine_find("dbt")->patch->ext, "yml");
    assert_null(engine_find("dbt")->fetch);
    assert_null(engine_find("no-such-engine"));
    assert_null(engine_find(NULL));

    e = engine_find_fetch("spark-history");
    assert_non_null(e);
    assert_string_equal(e->source, "spark");
    assert_null(e->fetch->to_memory);
    assert_non_null(e->fetch->to_dir);
    assert_null(engine_find_fetch("spark"));

    /* a URL: the highest-scoring document fetch; Flink takes any URL */
    assert_ptr_equal(engine_for_url("https://jm:8081"), engine_find("flink"));
    assert_ptr_equal(engine_for_url("HTTP://jm:8081/"), engine_find("flink"));
    assert_null(engine_for_url("/tmp/export.json"));

    assert_non_null(engine_layout_of("logs/eventlog_v2_app-1"));
    assert_non_null(engine_layout_of("logs/eventlog_v2_app-1/"));
    assert_null(engine_layout_of("logs/app-1"));

    assert_string_equal(engine_default_source(), "spark");
    engine_fetch_names(names, sizeof names);
    assert_string_equal(names, "flink, spark-history or csv");
    engine_fetch_names(names, 8); /* cut, never overrun */
    assert_true(strlen(names) < 8);
}

/* A host stream of a kind input.c does not know. */
typedef struct fake {
    input_stream base;
    int peeked;
} fake;

static int fake_closed;

static int fake_peek(op_stream *s, size_t max, const unsigned char **head,
                     size_t *len, op_error *err)
{
    (void)max;
    (void)err;
    ((fake *)s)->peeked++;
    *head = (const unsigned char *)"{}";
    *len = 2;
    return 0;
}

static const char *fake_warning(const op_stream *s)
{
    (void)s;
    return "fake: a warning";
}

static void fake_close(op_stream *s)
{
    fake_closed++;
    free(s);
}

static const input_ops fake_ops = {
    .peek = fake_peek, .warning = fake_warning, .close = fake_close};

static void test_stream_ops(void **state)
{
    fake *f = calloc(1, sizeof *f);
    const unsigned char *head;
    size_t len;
    op_error err = {0, ""};

    (void)state;
    assert_non_null(f);
    f->base.ops = &fake_ops;
    assert_int_equal(input_peek(&f->base.base, 16, &head, &len, &err), 0);
    assert_int_equal(len, 2);
    assert_int_equal(f->peeked, 1);
    assert_string_equal(input_warning(&f->base.base), "fake: a warning");
    assert_int_equal(input_source_offset(&f->base.base), 0); /* no hook: 0 */
    input_close(&f->base.base);
    assert_int_equal(fake_closed, 1);
    input_close(NULL);
    assert_null(input_warning(NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookups),
        cmocka_unit_test(test_stream_ops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
