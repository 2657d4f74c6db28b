/*
 * test_input_parts.c - logs split over files that say so in their first
 * line (core/input_parts.c): what makes a file a part, how the parts of one
 * key are ordered and named, and that the analysis reads them as one input
 * at analysis_freeze whatever the order of the paths given (analysis_add
 * counting them as read, so callers that check its result accept them).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "engine.h"
#include "input.h"
#include "support.h"

static void put(const char *name, const char *text)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", tm_tmpdir, name);
    f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

#define META(n, ctx)                                                        \
    "{\"Event\":\"DBCEventLoggingListenerMetadata\",\"Spark Version\":"   \
    "\"3.1.2\",\"Timestamp\":1,\"Rollover Number\":" #n                   \
    ",\"SparkContext Id\":" ctx "}\n"

static void test_part_of(void **state)
{
    char path[256];
    input_part p;

    (void)state;
    put("p0", META(0, "3987391921526261116"));
    put("not", "{\"Event\":\"SparkListenerLogStart\"}\n" META(1, "5"));
    put("long", META(1, "123456789012345678901234567890123456789012345678901234567890123456789"));
    snprintf(path, sizeof path, "%s/p0", tm_tmpdir);
    assert_int_equal(input_part_of(path, NULL, &p), 1);
    /* exact (no double), and kept apart from another engine's keys */
    assert_string_equal(p.key, "spark:3987391921526261116");
    assert_int_equal(p.order, 0);
    free(p.path);
    snprintf(path, sizeof path, "%s/not", tm_tmpdir); /* not the first line */
    assert_int_equal(input_part_of(path, NULL, &p), 0);
    snprintf(path, sizeof path, "%s/long", tm_tmpdir); /* no key fits */
    assert_int_equal(input_part_of(path, NULL, &p), 0);
    snprintf(path, sizeof path, "%s/missing", tm_tmpdir);
    assert_int_equal(input_part_of(path, NULL, &p), 0);
}

/* Issue #26: Databricks parts without their metadata line are parts by
 * name (op_engine.part_name): eventlog-<date>--<time> in time order, then
 * the current eventlog; the key holds the folder, so parts of two folders
 * never join; other names, or a first line that is no Spark event, are
 * no part. */
static void test_part_by_name(void **state)
{
    static const char ev[] = "{\"Event\":\"SparkListenerTaskEnd\"}\n";
    char path[256], key[sizeof ((input_part *)0)->key];
    input_part p;

    (void)state;
    put("eventlog-2024-01-01--09-00", ev);
    put("eventlog", ev);
    put("eventlog-2024-01-01--9-00", ev);
    put("eventlog-2024-01-01--10-00.txt", "not json\n");
    snprintf(path, sizeof path, "%s/eventlog-2024-01-01--09-00", tm_tmpdir);
    assert_int_equal(input_part_of(path, NULL, &p), 1);
    assert_int_equal(p.order, 202401010900);
    assert_non_null(strstr(p.key, "spark:databricks-eventlog@"));
    memcpy(key, p.key, sizeof key);
    free(p.path);
    snprintf(path, sizeof path, "%s/eventlog", tm_tmpdir);
    assert_int_equal(input_part_of(path, NULL, &p), 1);
    assert_int_equal(p.order, INT64_MAX); /* the current file last */
    assert_string_equal(p.key, key);      /* one folder, one log */
    free(p.path);
    snprintf(path, sizeof path, "%s/eventlog-2024-01-01--9-00", tm_tmpdir);
    assert_int_equal(input_part_of(path, NULL, &p), 0);
    snprintf(path, sizeof path, "%s/eventlog-2024-01-01--10-00.txt", tm_tmpdir);
    assert_int_equal(input_part_of(path, NULL, &p), 0);
    /* the same name in another folder: another key */
    snprintf(path, sizeof path, "%s/sub", tm_tmpdir);
    assert_int_equal(mkdir(path, 0700), 0);
    put("sub/eventlog", ev);
    snprintf(path, sizeof path, "%s/sub/eventlog", tm_tmpdir);
    assert_int_equal(input_part_of(path, NULL, &p), 1);
    assert_string_not_equal(p.key, key);
    free(p.path);
}

/* The engine table's probe sees the first line as bytes with a length:
 * nothing past it is read (the line here has no NUL and goes on). */
static void test_probe_bounded(void **state)
{
    static const char text[] = META(4, "77") "garbage";
    char key[96];
    int64_t order = -1;
    size_t first = strchr(text, '\n') - text;

    (void)state;
    assert_int_equal(engine_part_of(text, first, key, sizeof key, &order), 1);
    assert_string_equal(key, "spark:77");
    assert_int_equal(order, 4);
    /* cut before the SparkContext Id: no part */
    assert_int_equal(engine_part_of(text, first - 5, key, sizeof key, &order),
                     0);
    /* a key that does not fit the caller's buffer: no part */
    assert_int_equal(engine_part_of(text, first, key, 7, &order), 0);
    assert_int_equal(engine_part_of("{\"Event\":1}", 11, key, sizeof key,
                                    &order),
                     0);
}

static void test_sort_and_name(void **state)
{
    input_part v[4] = {{"d/eventlog", "7", 2}, {"d/eventlog-b", "7", 0},
                       {"e/x", "8", 0}, {"d/eventlog-a", "7", 1}};
    char *name;

    (void)state;
    input_parts_sort(v, 4);
    assert_string_equal(v[0].path, "d/eventlog-b");
    assert_string_equal(v[1].path, "d/eventlog-a");
    assert_string_equal(v[2].path, "d/eventlog");
    name = input_parts_name(v, 4, 0, 3); /* the folder holds them alone */
    assert_string_equal(name, "d");
    free(name);
    v[3].path = "d/other"; /* another key's part in the same folder */
    name = input_parts_name(v, 4, 0, 3);
    assert_string_equal(name, "d/eventlog-b");
    free(name);
    name = input_parts_name(v, 4, 3, 4); /* one part: its path */
    assert_string_equal(name, "d/other");
    free(name);
}

static void test_analysis_reads_groups(void **state)
{
    static const char *const app =
        "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"a\","
        "\"App ID\":\"app-1\",\"Timestamp\":1000}\n";
    static const char *const job0 =
        "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":0,\"Submission "
        "Time\":1100,\"Stage Infos\":[],\"Stage IDs\":[]}\n";
    static const char *const job1 =
        "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":1,\"Submission "
        "Time\":1200,\"Stage Infos\":[],\"Stage IDs\":[]}\n";
    char text[1024], p0[256], p1[256];
    analysis an;
    op_error err;

    (void)state;
    snprintf(text, sizeof text, "%s%s%s", META(0, "9"), app, job0);
    put("z-first", text);
    snprintf(text, sizeof text, "%s%s", META(1, "9"), job1);
    put("a-second", text);
    snprintf(p0, sizeof p0, "%s/z-first", tm_tmpdir);
    snprintf(p1, sizeof p1, "%s/a-second", tm_tmpdir);
    assert_int_equal(analysis_init(&an, NULL, NULL, NULL, &err), 0);
    assert_int_equal(analysis_add(&an, p1), 1); /* later part first */
    assert_int_equal(analysis_add(&an, p0), 1);
    assert_int_equal(an.m->nruns, 0); /* read at the freeze */
    analysis_freeze(&an);
    assert_int_equal(an.m->nruns, 1);
    assert_string_equal(an.m->runs[0]->id, "app-1");
    assert_int_equal(tm_inum(&an.m->runs[0]->metrics, "jobs"), 2);
    assert_string_equal(an.m->runs[0]->engine_version, "3.1.2");
    assert_string_equal(an.m->runs[0]->origins[0], tm_tmpdir);
    analysis_free(&an);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_part_of),
        cmocka_unit_test(test_part_by_name),
        cmocka_unit_test(test_probe_bounded),
        cmocka_unit_test(test_sort_and_name),
        cmocka_unit_test(test_analysis_reads_groups),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
