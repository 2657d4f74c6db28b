/*
 * test_mapping.c - mapping packs (core/mapping.c): templates and their
 * filters, alternatives, name groups with a '*', label conditions, the
 * node chain, version attrs, and the errors a malformed pack gets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "map_packs.h"

static const char pack_json[] =
    "{\"mapping\":1,\"name\":\"t\",\"engine\":\"eng\","
    "\"run\":{\"job\":[\"{application_id}\",\"{thread_id:before=-StreamThread-:drop_uuid}\"],"
    "\"version\":\"{v}\",\"version_attrs\":[{\"attr\":\"counts\",\"below\":\"4.3\","
    "\"value\":\"batches\",\"otherwise\":\"unknown\"}]},"
    "\"nodes\":{\"thread\":{\"id\":\"{thread_id}\"},"
    "\"task\":{\"parent\":\"thread\",\"id\":\"{thread_id}/{task_id}\","
    "\"attrs\":{\"part\":\"{task_id:after=_}\",\"kind\":[\"win{w_id:drop}\",\"kv{kv_id:drop}\"]}}},"
    "\"groups\":[{\"prefix\":\"a_*_b_\",\"node\":\"task\",\"when\":{\"env\":\"prod*\"},"
    "\"metrics\":{\"hits\":\"hit_ratio\",\"stall_total\":{\"name\":\"stall_ms\",\"scale\":1000,"
    "\"counter\":true,\"rate\":\"stall_ms_per_s\"}}}]}";

static mapping_set *load(const char *json)
{
    mapping_set *ms = mapping_set_new();
    op_error err;

    assert_non_null(ms);
    op_error_clear(&err);
    assert_int_equal(mapping_set_add(ms, cJSON_Parse(json), "t.lua", &err), 0);
    return ms;
}

static int resolve(mapping_set *ms, const char *name, const op_label *l,
                   size_t n, op_map *out)
{
    op_series_ref s = {name, NULL, l, n, "dir"};
    op_error err;

    op_error_clear(&err);
    return mapping_resolve(ms, &s, out, &err);
}

static void test_templates(void **state)
{
    mapping_set *ms = load(pack_json);
    op_label l[] = {{"thread_id", "app-4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f-StreamThread-2"},
                    {"task_id", "1_7"}, {"env", "prod-eu"}, {"v", "4.1.0"},
                    {"kv_id", "s"}};
    static op_map m;

    (void)state;
    assert_int_equal(resolve(ms, "a_cf1_b_hits", l, 5, &m), 1);
    assert_string_equal(m.job, "app");             /* before= then drop_uuid */
    assert_string_equal(m.source, "eng");
    assert_int_equal(m.nnodes, 2);                 /* thread > task */
    assert_string_equal(m.nodes[1].id,
                        "app-4f1c2d3e-5a6b-4c7d-8e9f-0a1b2c3d4e5f-StreamThread-2/1_7");
    assert_string_equal(m.nodes[1].attrs[0].value, "7"); /* after= */
    assert_string_equal(m.nodes[1].attrs[1].value, "kv"); /* second alternative */
    assert_string_equal(m.metric, "hit_ratio");
    assert_string_equal(m.run_attrs[0].value, "batches"); /* 4.1.0 < 4.3 */
    assert_int_equal(resolve(ms, "a_cf2_b_stall_total", l, 5, &m), 1);
    assert_int_equal(m.kind, OP_MAP_COUNTER);
    assert_true(m.scale == 1000);
    assert_string_equal(m.rate, "stall_ms_per_s");
    mapping_set_free(ms);
}

static void test_no_match(void **state)
{
    mapping_set *ms = load(pack_json);
    op_label l[] = {{"thread_id", "t"}, {"task_id", "0_0"}, {"env", "dev"}};
    op_label nojob[] = {{"task_id", "0_0"}, {"env", "prod"}};
    static op_map m;

    (void)state;
    assert_int_equal(resolve(ms, "a_x_b_hits", l, 3, &m), 0);      /* when */
    assert_int_equal(resolve(ms, "a_x_b_other", l, 3, &m), 0);     /* key */
    assert_int_equal(resolve(ms, "a_x_b_hits", nojob, 2, &m), 0);  /* no job */
    mapping_set_free(ms);
}

static void test_too_long(void **state)
{
    mapping_set *ms = load(pack_json);
    char big[400];
    op_label l[] = {{"application_id", big}, {"thread_id", "t"},
                    {"task_id", "0_0"}, {"env", "prod"}};
    op_series_ref s = {"a_x_b_hits", NULL, l, 4, "dir"};
    static op_map m;
    op_error err;

    (void)state;
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    op_error_clear(&err);
    assert_int_equal(mapping_resolve(ms, &s, &m, &err), -OP_ELIMIT);
    assert_non_null(strstr(err.msg, "longer than"));
    mapping_set_free(ms);
}

static void test_bad_packs(void **state)
{
    static const char *const bad[] = {
        "{\"mapping\":2,\"name\":\"t\",\"engine\":\"e\"}",
        "{\"mapping\":1,\"name\":\"t\",\"engine\":\"e\",\"run\":{}}",
        "{\"mapping\":1,\"name\":\"t\",\"engine\":\"e\",\"run\":{\"job\":\"{a:nope}\"},"
        "\"groups\":[{\"prefix\":\"x\",\"metrics\":{\"y\":\"y\"}}]}",
        "{\"mapping\":1,\"name\":\"t\",\"engine\":\"e\",\"run\":{\"job\":\"{a}\"},"
        "\"groups\":[{\"prefix\":\"x\",\"node\":\"nosuch\",\"metrics\":{\"y\":\"y\"}}]}",
        "{\"mapping\":1,\"name\":\"t\",\"engine\":\"e\",\"run\":{\"job\":\"{a}\"},"
        "\"nodes\":{\"a\":{\"id\":\"{x}\",\"parent\":\"b\"},\"b\":{\"id\":\"{y}\",\"parent\":\"a\"}},"
        "\"groups\":[{\"prefix\":\"x\",\"metrics\":{\"y\":\"y\"}}]}",
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof bad / sizeof *bad; i++) {
        mapping_set *ms = mapping_set_new();
        op_error err;
        op_error_clear(&err);
        assert_int_equal(mapping_set_add(ms, cJSON_Parse(bad[i]), "bad.lua", &err),
                         OP_EPARSE);
        assert_non_null(strstr(err.msg, "bad.lua"));
        assert_int_equal(mapping_set_count(ms), 0);
        mapping_set_free(ms);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_templates),
        cmocka_unit_test(test_no_match),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_bad_packs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
