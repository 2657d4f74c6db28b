/*
 * test_config.c - optipipe.lua: reading every setting, every mistake being
 * an error that names the file and key, option type checks, applying the
 * config to the bundled flink pack (switches, patterns, severities,
 * options, partial loads), ignoring findings by pattern, and the sandboxed
 * Lua data loader the config and rule tests share.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "opts.h"
#include "luadata.h"
#include "rules.h"
#include "support.h"

static char cfg_path[300];

static int write_cfg(const char *text)
{
    FILE *f;

    snprintf(cfg_path, sizeof cfg_path, "%s/optipipe.lua", tm_tmpdir);
    f = fopen(cfg_path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    fclose(f);
    return 0;
}

static int load(const char *text, config *c, op_error *err)
{
    assert_int_equal(write_cfg(text), 0);
    op_error_clear(err);
    return config_load(cfg_path, c, err);
}

static void test_every_setting(void **state)
{
    config c;
    op_error err;
    char want[400];
    size_t i;
    int globs = 0;

    (void)state;
    assert_int_equal(load(
        "local sev = 'error' -- a comment\n"
        "return {\n"
        "  rules = { ['flink.bottleneck'] = { severity = sev, options = { busy_high = 0.9 } },\n"
        "            ['spark.*'] = 'off', ['dbt.cost'] = 'info', ['x.y'] = true },\n"
        "  packs = { mixed = false },\n"
        "  ignore = { 'Source: *', { rule = 'dbt.*', node = 'model.legacy.*', reason = 'old' } },\n"
        "  rules_dirs = { 'team', '/abs/rules' },\n"
        "  plugin_paths = 'plugins',\n"
        "  baseline = '.b.json',\n"
        "  fail_on = 'warning',\n"
        "}\n", &c, &err), 0);
    assert_int_equal(c.nrules, 4);
    for (i = 0; i < c.nrules; i++) {
        config_rule *r = &c.rules[i];
        globs += r->is_glob;
        if (strcmp(r->pattern, "flink.bottleneck") == 0) {
            assert_int_equal(r->sev, SEV_ERROR);
            assert_int_equal(r->enabled, -1);
            assert_non_null(r->options);
        } else if (strcmp(r->pattern, "spark.*") == 0) {
            assert_int_equal(r->enabled, 0);
        } else if (strcmp(r->pattern, "dbt.cost") == 0) {
            assert_int_equal(r->sev, SEV_INFO);
            assert_int_equal(r->enabled, 1);
        }
    }
    assert_int_equal(globs, 1);
    assert_int_equal(c.npacks, 1);
    assert_int_equal(c.packs_only, 0);
    assert_int_equal(c.nignore, 2);
    assert_string_equal(c.ignore[0].node, "Source: *");
    assert_string_equal(c.ignore[1].reason, "old");
    assert_int_equal(c.nrules_dirs, 2);
    snprintf(want, sizeof want, "%s/team", tm_tmpdir);
    assert_string_equal(c.rules_dirs[0], want);
    assert_string_equal(c.rules_dirs[1], "/abs/rules");
    snprintf(want, sizeof want, "%s/plugins", tm_tmpdir);
    assert_string_equal(c.plugin_path, want);
    snprintf(want, sizeof want, "%s/.b.json", tm_tmpdir);
    assert_string_equal(c.baseline, want);
    assert_string_equal(c.fail_on, "warning");
    config_free(&c);

    assert_int_equal(load("return { packs = { 'flink', 'dbt' }, rules = {}, ignore = {} }",
                          &c, &err), 0);
    assert_int_equal(c.packs_only, 1);
    assert_int_equal(c.npacks, 2);
    config_free(&c);
}

/* The keys are rows (config_keys): the unknown-key message names each
 * one, and what a typed row reads lands in its field. */
static void test_key_rows(void **state)
{
    const opt_spec *k;
    config c;
    op_error err;

    (void)state;
    assert_int_equal(load("return { rulez = {} }", &c, &err), OP_EUSAGE);
    for (k = config_keys(); k->name; k++) {
        assert_non_null(k->help);
        assert_non_null(k->metavar);
        if (!strstr(err.msg, k->name))
            fail_msg("'%s' does not name %s", err.msg, k->name);
    }
    config_free(&c);
    assert_int_equal(load("return { fail_on = 'warning', allow_rule_errors = true,"
                          " rule_pack_timeout_ms = 0, history = 'h.db' }",
                          &c, &err), 0);
    assert_string_equal(c.fail_on, "warning");
    assert_int_equal(c.allow_rule_errors, 1);
    assert_int_equal(c.rule_pack_timeout_ms, 0);
    assert_non_null(strstr(c.history, "h.db"));
    config_free(&c);
}

static void bad(const char *text, const char *want)
{
    config c;
    op_error err;
    int rc = load(text, &c, &err);

    if (rc != OP_EUSAGE)
        fail_msg("rc %d for %s", rc, text);
    if (!strstr(err.msg, want) || !strstr(err.msg, "optipipe.lua"))
        fail_msg("'%s' lacks '%s'", err.msg, want);
    config_free(&c);
}

static void test_mistakes(void **state)
{
    (void)state;
    bad("return { rulez = {} }", "rulez: unknown setting");
    bad("return { rules = { ['a'] = 3 } }", "rules[\"a\"]: expected a boolean");
    bad("return { rules = { ['a'] = 'fatal' } }", "expected true, false");
    bad("return { rules = { ['a'] = { sev = 'x' } } }", "rules[\"a\"].sev: unknown key");
    bad("return { rules = { ['a'] = { enabled = 1 } } }", "enabled: expected true or false");
    bad("return { rules = { ['a'] = { severity = 'x' } } }", "severity: expected");
    bad("return { rules = { ['a'] = { options = 3 } } }", "options: expected a table");
    bad("return { rules = { ['a.*'] = { options = { x = 1 } } } }", "need an exact rule id");
    bad("return { packs = 'flink' }", "packs: expected");
    bad("return { packs = { flink = 'no' } }", "packs.flink: expected true or false");
    bad("return { packs = { 1 } }", "a list of pack names is strings");
    bad("return { ignore = { 3 } }", "ignore[1]: expected a node pattern or a table");
    bad("return { ignore = { { reason = 'x' } } }", "ignore[1]: needs at least one of");
    bad("return { ignore = { { nod = 'x' } } }", "ignore[1].nod: unknown key");
    bad("return { ignore = { { node = '' } } }", "ignore[1].node: expected a non-empty string");
    bad("return { rules_dirs = 3 }", "rules_dirs: expected a path");
    bad("return { rules_dirs = { 3 } }", "paths are non-empty strings");
    bad("return { baseline = 1 }", "baseline: expected a non-empty string");
    bad("return { fail_on = 'fatal' }", "fail_on: expected");
    bad("return { fail_on = 'fatal' }", "expected \"info\", \"warning\" or \"error\"");
    bad("return { rule_pack_timeout_ms = -1 }",
        "rule_pack_timeout_ms: expected a whole number from 0 to 4294967295");
    bad("return { rule_pack_timeout_ms = 1.5 }", "expected a whole number");
    bad("return { allow_rule_errors = 1 }", "allow_rule_errors: expected true or false");
    bad("return 42", "must return a table");
    bad("return {", "optipipe.lua:1:");
    bad("error('boom')", "boom");
    bad("return { rules = { ['a'] = function() end } }", "optipipe.lua");
    bad("return { baseline = io.open('x') }", "global 'io'");
    bad("return { x = require('os') }", "optipipe.lua");
    bad("while true do end", "instruction budget exceeded");
    bad("local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(1e3) .. i end return t",
        "optipipe.lua");
}

static void test_find(void **state)
{
    config c;
    op_error err;
    char cwd[512];

    (void)state;
    assert_non_null(getcwd(cwd, sizeof cwd));
    assert_int_equal(write_cfg("return { fail_on = 'error' }"), 0);
    assert_int_equal(chdir(tm_tmpdir), 0);
    assert_int_equal(config_find(NULL, &c, &err), 0);
    assert_non_null(c.path);
    assert_string_equal(c.fail_on, "error");
    config_free(&c);
    assert_int_equal(config_find("other.lua", &c, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "other.lua"));
    config_free(&c);
    assert_int_equal(chdir("/"), 0);
    assert_int_equal(config_find(NULL, &c, &err), 0);
    assert_null(c.path);
    config_free(&c);
    assert_int_equal(chdir(cwd), 0);
}

static void check_opts(const char *want_json, const char *got_json, int ok,
                       const char *msg_part)
{
    cJSON *w = cJSON_Parse(want_json), *g = cJSON_Parse(got_json);
    char msg[512] = "";
    int rc = config_check_options(w, g, "opts", msg, sizeof msg);

    assert_int_equal(rc == 0, ok);
    if (msg_part && !strstr(msg, msg_part))
        fail_msg("'%s' lacks '%s'", msg, msg_part);
    cJSON_Delete(w);
    cJSON_Delete(g);
}

static void test_option_types(void **state)
{
    (void)state;
    check_opts("{\"a\": 1, \"s\": \"x\", \"b\": true}", "{\"a\": 2.5, \"s\": \"y\", \"b\": false}", 1, NULL);
    check_opts("{\"a\": 1}", "{\"a\": \"1\"}", 0, "opts.a: expected a number (default 1), got a string");
    check_opts("{\"b\": true}", "{\"b\": 1}", 0, "expected a boolean");
    check_opts("{\"a\": 1, \"b\": 2}", "{\"c\": 1}", 0, "opts.c: no such option (options: a, b)");
    check_opts("{\"t\": {\"x\": 1}}", "{\"t\": {\"x\": 2}}", 1, NULL);
    check_opts("{\"t\": {\"x\": 1}}", "{\"t\": {\"y\": 2}}", 0, "opts.t.y: no such option");
    check_opts("{\"t\": {\"x\": 1}}", "{\"t\": {\"x\": \"2\"}}", 0, "opts.t.x: expected a number");
    check_opts("{\"l\": [1, 2]}", "{\"l\": [\"a\"]}", 1, NULL);
    check_opts("{\"l\": [1, 2]}", "{\"l\": {}}", 1, NULL);
    check_opts("{\"l\": [1, 2]}", "{\"l\": 3}", 0, "expected a list");
    check_opts("{}", "{}", 1, NULL);
}

static ruleset *flink_pack(void)
{
    rule_limits l;
    ruleset *rs;
    results errs;
    op_error err;

    rule_limits_default(&l);
    l.isolate = 0;
    rs = ruleset_new(&l);
    results_init(&errs);
    assert_int_equal(ruleset_load_dir(rs, OP_SOURCE_DIR "/rules/flink", "flink",
                                      OP_SOURCE_DIR "/sdk/lua", 1, &errs, &err), 0);
    assert_int_equal(errs.ne, 0);
    results_free(&errs);
    return rs;
}

static int apply(const char *text, ruleset *rs, int partial, op_error *err)
{
    config c;
    int rc;

    assert_int_equal(load(text, &c, err), 0);
    rc = config_apply(&c, rs, partial, err);
    config_free(&c);
    return rc;
}

static void test_apply(void **state)
{
    ruleset *rs = flink_pack();
    op_error err;
    rule_meta *b = ruleset_find(rs, "flink.bottleneck");
    rule_meta *r = ruleset_find(rs, "flink.restarts");
    rule_meta *cs = ruleset_find(rs, "flink.checkpoint-storage");

    (void)state;
    assert_non_null(b);
    assert_int_equal(apply(
        "return { rules = { ['flink.*'] = 'info', ['flink.checkpoint*'] = false,\n"
        "  ['flink.bottleneck'] = { severity = 'error', options = { busy_high = 0.95 } } } }",
        rs, 0, &err), 0);
    assert_int_equal(b->sev, SEV_ERROR);
    assert_int_equal(b->default_sev, SEV_WARNING);
    assert_true(cJSON_GetObjectItem(b->overrides, "busy_high")->valuedouble == 0.95);
    assert_int_equal(r->sev, SEV_INFO);
    assert_int_equal(r->enabled, 1);
    assert_int_equal(cs->enabled, 0); /* the longer pattern wins */
    assert_int_equal(cs->sev, SEV_INFO);

    assert_int_equal(apply("return { packs = { flink = false }, rules = { ['flink.restarts'] = true } }",
                           rs, 0, &err), 0);
    assert_int_equal(b->enabled, 0);
    assert_int_equal(r->enabled, 1);
    assert_int_equal(apply("return { packs = { 'dbt' } }", rs, 1, &err), 0);
    assert_int_equal(r->enabled, 0); /* only listed bundled packs */

    assert_int_equal(apply("return { rules = { ['flink.bottlenek'] = false } }", rs, 0, &err),
                     OP_EUSAGE);
    assert_non_null(strstr(err.msg, "did you mean 'flink.bottleneck'"));
    assert_int_equal(apply("return { rules = { ['spark.gc'] = false } }", rs, 1, &err), 0);
    assert_int_equal(apply("return { rules = { ['spark.*'] = false } }", rs, 0, &err), OP_EUSAGE);
    assert_int_equal(apply("return { rules = { ['spark.*'] = false } }", rs, 1, &err), 0);
    assert_int_equal(apply("return { packs = { spark = false } }", rs, 0, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "no pack named 'spark'"));
    assert_int_equal(apply("return { rules = { ['flink.bottleneck'] = { options = { busy_high = 'x' } } } }",
                           rs, 0, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "rules[\"flink.bottleneck\"].options.busy_high: expected a number"));
    ruleset_free(rs);
}

static void test_ignore(void **state)
{
    model *m = model_new();
    op_builder *bld = model_builder_new(m, "in");
    op_run *run = op_run_get(bld, "flink", "job-1");
    op_node *n = op_node_get(bld, run, "v1");
    results res;
    config c;
    op_error err;
    const char *rules[] = {"a.x", "b.y", "a.x"};
    const char *nodes[] = {"v1", "v1", NULL};
    size_t i;

    (void)state;
    op_node_str(bld, n, OP_F_NAME, "Source: Kafka");
    op_run_str(bld, run, OP_F_NAME, "orders");
    model_builder_free(bld);
    model_freeze(m);
    results_init(&res);
    for (i = 0; i < 3; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "rule", rules[i]);
        cJSON_AddStringToObject(o, "severity", "info");
        cJSON_AddStringToObject(o, "message", "m");
        cJSON_AddNumberToObject(o, "run", 0);
        if (nodes[i])
            cJSON_AddStringToObject(o, "node", nodes[i]);
        assert_int_equal(results_add_finding(&res, m, o, &err), 0);
        cJSON_Delete(o);
    }
    results_finish(&res, m);
    assert_int_equal(load("return { ignore = { 'Source: *' } }", &c, &err), 0);
    assert_int_equal(config_ignore_findings(&c, m, &res), 2); /* by node name */
    config_free(&c);
    for (i = 0; i < 3; i++)
        res.f[i].suppressed = 0;
    assert_int_equal(load("return { ignore = { { rule = 'a.*', run = 'ord*' } } }", &c, &err), 0);
    assert_int_equal(config_ignore_findings(&c, m, &res), 2);
    config_free(&c);
    for (i = 0; i < 3; i++)
        res.f[i].suppressed = 0;
    assert_int_equal(load("return { ignore = { { source = 'spark' }, { node = 'v*', rule = 'b.y' } } }",
                          &c, &err), 0);
    assert_int_equal(config_ignore_findings(&c, m, &res), 1);
    for (i = 0; i < 3; i++)
        assert_int_equal(res.f[i].suppressed,
                         strcmp(res.f[i].rule, "b.y") == 0 ? FINDING_IGNORED : 0);
    config_free(&c);
    results_free(&res);
    model_free(m);
}

static void test_luadata(void **state)
{
    cJSON *v = NULL;
    op_error err;

    (void)state;
    assert_int_equal(write_cfg("local function f(x) return x * 2 end\n"
                               "return { a = f(21), list = { 1, 'two', true }, empty = {},"
                               " t = os.time() > 0 }"), 0);
    assert_int_equal(luadata_eval_file(cfg_path, &v, &err), 0);
    assert_int_equal(cJSON_GetObjectItem(v, "a")->valueint, 42);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(v, "list")), 3);
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(v, "empty")));
    assert_true(cJSON_IsTrue(cJSON_GetObjectItem(v, "t")));
    cJSON_Delete(v);
    assert_int_equal(luadata_eval_file("/nonexistent/x.lua", &v, &err), OP_ENOTFOUND);
    assert_null(v);
    assert_int_equal(write_cfg("\x1bLua"), 0); /* bytecode is refused */
    assert_int_not_equal(luadata_eval_file(cfg_path, &v, &err), 0);
    assert_null(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_setting),
        cmocka_unit_test(test_mistakes),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_key_rows),
        cmocka_unit_test(test_option_types),
        cmocka_unit_test(test_apply),
        cmocka_unit_test(test_ignore),
        cmocka_unit_test(test_luadata),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
