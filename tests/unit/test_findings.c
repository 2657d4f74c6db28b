/*
 * test_findings.c - finding validation, fingerprints (stable across runs,
 * independent of order and addresses), ordering, and both reporters
 * (text neutralizes control characters; json follows schema 1), and the
 * reconciliation of contradicting changes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze.h"
#include "baseline.h"
#include "emit_changes.h"
#include "findings.h"
#include "input.h"
#include "report.h"
#include "support.h"

static model *small_model(void)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "in.json");
    op_run *r = op_run_get(b, "flink", "job-1");
    op_node *n = op_node_get(b, r, "v1");

    op_node_str(b, n, OP_F_NAME, "Window\033]0;pwned\007<script>");
    op_run_str(b, r, OP_F_NAME, "job\033[2J");
    op_node_get(b, r, "v2");
    model_builder_free(b);
    model_freeze(m);
    return m;
}

static cJSON *finding_json(const char *rule, const char *sev, const char *node,
                           const char *msg)
{
    cJSON *o = cJSON_CreateObject();

    cJSON_AddStringToObject(o, "rule", rule);
    cJSON_AddStringToObject(o, "title", "A title");
    cJSON_AddStringToObject(o, "severity", sev);
    cJSON_AddNumberToObject(o, "run", 0);
    if (node)
        cJSON_AddStringToObject(o, "node", node);
    if (msg)
        cJSON_AddStringToObject(o, "message", msg);
    return o;
}

static void test_validation(void **state)
{
    model *m = small_model();
    results r;
    op_error err;
    cJSON *o, *ch, *c;

    (void)state;
    results_init(&r);
    o = finding_json("x.rule", "warning", "v1", NULL);
    assert_int_equal(results_add_finding(&r, m, o, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "message"));
    cJSON_Delete(o);

    o = finding_json("x.rule", "warning", "nope", "m");
    assert_int_equal(results_add_finding(&r, m, o, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "nope"));
    cJSON_Delete(o);

    o = finding_json("x.rule", "fatal", "v1", "m");
    assert_int_equal(results_add_finding(&r, m, o, &err), OP_EPARSE);
    cJSON_Delete(o);

    o = finding_json("x.rule", "info", "v1", "m");
    cJSON_ReplaceItemInObject(o, "run", cJSON_CreateNumber(7));
    assert_int_equal(results_add_finding(&r, m, o, &err), OP_EPARSE);
    cJSON_Delete(o);

    o = finding_json("x.rule", "info", "v1", "m");
    ch = cJSON_AddArrayToObject(o, "changes");
    c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "key", "parallelism");
    cJSON_AddItemToArray(ch, c);
    assert_int_equal(results_add_finding(&r, m, o, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "'to'"));
    cJSON_AddNumberToObject(c, "to", 8);
    assert_int_equal(results_add_finding(&r, m, o, &err), 0);
    cJSON_Delete(o);
    assert_int_equal(r.n, 1);
    assert_string_equal(r.f[0].node_name, "Window\033]0;pwned\007<script>");
    results_free(&r);
    model_free(m);
}

/* A change whose from is its to changes nothing: it is dropped, and a
 * finding left without changes is never made (`30s -> 30s`, `2 -> "2"`). */
static void add_noop_case(cJSON *ch, const char *key, cJSON *from, cJSON *to)
{
    cJSON *c = cJSON_CreateObject();

    cJSON_AddStringToObject(c, "key", key);
    cJSON_AddItemToObject(c, "from", from);
    cJSON_AddItemToObject(c, "to", to);
    cJSON_AddItemToArray(ch, c);
}

static void test_noop_changes(void **state)
{
    model *m = small_model();
    results r;
    op_error err;
    cJSON *o, *ch;

    (void)state;
    results_init(&r);
    o = finding_json("x.rule", "warning", "v1", "m");
    ch = cJSON_AddArrayToObject(o, "changes");
    add_noop_case(ch, "spark.dynamicAllocation.executorIdleTimeout",
               cJSON_CreateString("30s"), cJSON_CreateString("30s"));
    add_noop_case(ch, "spark.dynamicAllocation.maxExecutors",
               cJSON_CreateString("2"), cJSON_CreateNumber(2));
    assert_int_equal(results_add_finding(&r, m, o, &err), 0);
    cJSON_Delete(o);
    assert_int_equal(r.n, 0);
    assert_int_equal(r.noop_dropped, 1);

    o = finding_json("x.rule", "warning", "v1", "m");
    ch = cJSON_AddArrayToObject(o, "changes");
    add_noop_case(ch, "a", cJSON_CreateNumber(4), cJSON_CreateNumber(4));
    add_noop_case(ch, "b", cJSON_CreateNumber(4), cJSON_CreateNumber(16));
    assert_int_equal(results_add_finding(&r, m, o, &err), 0);
    cJSON_Delete(o);
    assert_int_equal(r.n, 1);
    assert_int_equal(cJSON_GetArraySize(r.f[0].changes), 1);
    assert_string_equal(cJSON_GetArrayItem(r.f[0].changes, 0)->child->valuestring, "b");

    o = finding_json("x.rule", "info", "v1", "m"); /* no changes: kept */
    assert_int_equal(results_add_finding(&r, m, o, &err), 0);
    cJSON_Delete(o);
    assert_int_equal(r.n, 2);
    results_free(&r);
    model_free(m);
}

/* Adds the same three findings in the given order and returns them
 * fingerprinted and sorted. */
static void fill(results *r, const model *m, const int *order)
{
    cJSON *all[3];
    op_error err;
    int i;

    all[0] = finding_json("b.rule", "warning", "v1", "second");
    all[1] = finding_json("a.rule", "error", "v2", "first");
    all[2] = finding_json("b.rule", "warning", "v1", "third"); /* same identity */
    results_init(r);
    for (i = 0; i < 3; i++)
        assert_int_equal(results_add_finding(r, m, all[order[i]], &err), 0);
    for (i = 0; i < 3; i++)
        cJSON_Delete(all[i]);
    results_add_error(r, "z.rule", "timeout");
    results_add_error(r, "c.rule", "memory cap exceeded");
    results_finish(r, m);
}

static void test_fingerprints_and_order(void **state)
{
    model *m1 = small_model(), *m2 = small_model();
    const int o1[] = {0, 1, 2}, o2[] = {2, 1, 0};
    results a, b;
    size_t i;

    (void)state;
    fill(&a, m1, o1);
    fill(&b, m2, o2);
    assert_string_equal(a.f[0].rule, "a.rule"); /* errors first */
    assert_string_equal(a.f[1].message, "second");
    for (i = 0; i < 3; i++) {
        assert_string_equal(a.f[i].fingerprint, b.f[i].fingerprint);
        assert_int_equal(strlen(a.f[i].fingerprint), 16);
    }
    assert_string_not_equal(a.f[1].fingerprint, a.f[2].fingerprint);
    assert_string_equal(a.e[0].rule, "c.rule");
    assert_int_equal(results_count_shown_at_least(&a, SEV_ERROR), 1);
    assert_int_equal(results_count_shown_at_least(&a, SEV_INFO), 3);
    results_free(&a);
    results_free(&b);
    model_free(m1);
    model_free(m2);
}

/* A finding of run 0 proposing changes {key, to, target} (target NULL:
 * "app"), with an optional impact. */
static cJSON *change_finding(const char *rule, const char *sev, const char *node,
                             double impact_ms, const char *const *ch, int nch)
{
    cJSON *o = finding_json(rule, sev, node, "msg");
    cJSON *arr = cJSON_AddArrayToObject(o, "changes");
    int i;

    for (i = 0; i < nch; i++) {
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "target", ch[3 * i + 2] ? ch[3 * i + 2] : "app");
        cJSON_AddStringToObject(c, "key", ch[3 * i]);
        cJSON_AddStringToObject(c, "to", ch[3 * i + 1]);
        cJSON_AddItemToArray(arr, c);
    }
    if (impact_ms >= 0)
        cJSON_AddNumberToObject(cJSON_AddObjectToObject(o, "impact"),
                                "time_saved_ms", impact_ms);
    return o;
}

static void add(results *r, const model *m, cJSON *o)
{
    op_error err;

    assert_int_equal(results_add_finding(r, m, o, &err), 0);
    cJSON_Delete(o);
}

static const finding *by_rule(const results *r, const char *rule)
{
    size_t i;

    for (i = 0; i < r->n; i++)
        if (strcmp(r->f[i].rule, rule) == 0)
            return &r->f[i];
    fail_msg("no finding of %s", rule);
    return NULL;
}

static const char *change_to(const finding *f, const char *key)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, f->changes)
        if (strcmp(cJSON_GetObjectItemCaseSensitive(c, "key")->valuestring, key) == 0)
            return cJSON_GetObjectItemCaseSensitive(c, "to")->valuestring;
    return NULL;
}

/* Issue #17: two rules set spark.sql.shuffle.partitions to 400 and 140 for
 * one stage. One change is kept (severity, then impact, then rule id); the
 * other finding loses only that change and names the kept finding; equal
 * values and other targets are no conflict; fingerprints do not move. */
static void test_change_reconciliation(void **state)
{
    static const char *const big[] = {"k", "400", NULL, "k2", "1", NULL};
    static const char *const small[] = {"k", "140", NULL, "k3", "x", NULL};
    static const char *const same[] = {"k", "400", NULL};
    static const char *const other[] = {"k", "7", "other-app"};
    static const char *const lo[] = {"j", "1", NULL};
    static const char *const hi[] = {"j", "2", NULL};
    model *m = small_model();
    results r, alone;
    const finding *f;
    char fp[17];
    int i;

    (void)state;
    results_init(&alone);
    add(&alone, m, change_finding("x.small", "warning", "v1", 5000, small, 2));
    assert_int_equal(results_finish(&alone, m), 0);
    memcpy(fp, alone.f[0].fingerprint, sizeof fp);
    assert_string_equal(alone.f[0].message, "msg");

    results_init(&r);
    add(&r, m, change_finding("x.small", "warning", "v1", 5000, small, 2));
    add(&r, m, change_finding("x.big", "error", "v2", 10, big, 2));
    add(&r, m, change_finding("x.same", "info", NULL, -1, same, 1));
    add(&r, m, change_finding("x.other", "info", NULL, -1, other, 1));
    add(&r, m, change_finding("y.lo", "warning", NULL, 100, lo, 1));
    add(&r, m, change_finding("y.hi", "warning", NULL, 900, hi, 1));
    assert_int_equal(results_finish(&r, m), 0);

    f = by_rule(&r, "x.big");
    assert_string_equal(change_to(f, "k"), "400");
    assert_string_equal(f->message, "msg");
    f = by_rule(&r, "x.small");
    assert_null(change_to(f, "k"));
    assert_string_equal(change_to(f, "k3"), "x"); /* other changes stay */
    assert_string_equal(f->message,
                        "msg [Not proposed: k = 140, because x.big on v2 proposes 400 "
                        "for the same setting and is kept: it is more severe.]");
    assert_string_equal(f->fingerprint, fp);
    assert_string_equal(change_to(by_rule(&r, "x.same"), "k"), "400");
    assert_string_equal(change_to(by_rule(&r, "x.other"), "k"), "7");
    f = by_rule(&r, "y.lo");
    assert_null(change_to(f, "j"));
    assert_non_null(strstr(f->message, "y.hi proposes 2 for the same setting and is "
                                       "kept: it saves more time."));
    assert_string_equal(change_to(by_rule(&r, "y.hi"), "j"), "2");
    results_free(&r);

    /* many findings on one setting (a pack may report 10,000 per rule):
     * the first keeps it, every other one loses it */
    results_init(&r);
    for (i = 0; i < 3000; i++) {
        char v[16];
        const char *ch[] = {"k", v, NULL};
        snprintf(v, sizeof v, "%d", i);
        add(&r, m, change_finding("z.many", "warning", NULL, i, ch, 1));
    }
    assert_int_equal(results_finish(&r, m), 0);
    assert_string_equal(change_to(&r.f[0], "k"), "2999"); /* the largest impact */
    for (i = 1; i < 3000; i++)
        assert_null(change_to(&r.f[i], "k"));
    results_free(&r);
    results_free(&alone);
    model_free(m);
}

/* Issue #26: changes of one group are alternatives (a fixed cluster size
 * or autoscaling): the first finding with a change of the group owns it;
 * a later finding keeps a change of the group only when the owner proposes
 * the same, loses the others with a note naming the owner's change, and
 * keeps its ungrouped changes. One finding's own changes of a group stay
 * together. */
static cJSON *grouped(const char *rule, const char *sev, const char *const *ch, int nch)
{
    cJSON *o = change_finding(rule, sev, NULL, -1, ch, nch);
    cJSON *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "changes"))
        if (strcmp(cJSON_GetObjectItemCaseSensitive(c, "key")->valuestring, "free") != 0)
            cJSON_AddStringToObject(c, "group", "cluster shape");
    return o;
}

static cJSON *chosen(cJSON *o, const char *choice)
{
    cJSON *c;

    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(o, "changes"))
        cJSON_AddStringToObject(c, "choice", choice);
    return o;
}

static void test_change_groups(void **state)
{
    static const char *const amax[] = {"autoscale.max_workers", "4", "cluster"};
    int i, n;
    static const char *const fixed[] = {"num_workers", "3", "cluster", "n", "1", "cluster"};
    static const char *const autos[] = {"autoscale.min_workers", "1", "cluster",
                                        "free", "x", NULL};
    static const char *const dup[] = {"num_workers", "3", "cluster"};
    model *m = small_model();
    results r;
    const finding *f;
    op_error err;
    cJSON *bad;

    (void)state;
    results_init(&r);
    add(&r, m, grouped("a.fixed", "warning", fixed, 2));
    add(&r, m, grouped("b.auto", "warning", autos, 2));
    add(&r, m, grouped("c.dup", "info", dup, 1));
    assert_int_equal(results_finish(&r, m), 0);
    f = by_rule(&r, "a.fixed");
    assert_string_equal(change_to(f, "num_workers"), "3");
    assert_string_equal(change_to(f, "n"), "1"); /* its own group stays whole */
    f = by_rule(&r, "b.auto");
    assert_null(change_to(f, "autoscale.min_workers"));
    assert_string_equal(change_to(f, "free"), "x");
    assert_string_equal(f->message,
                        "msg [Not proposed: autoscale.min_workers = 1, because a.fixed "
                        "proposes num_workers = 3 instead (one cluster shape, not both) "
                        "and is kept: it ranks first (rule id).]");
    assert_string_equal(change_to(by_rule(&r, "c.dup"), "num_workers"), "3");
    results_free(&r);

    /* with a `choice`, findings that made the same choice combine: two
     * autoscaling changes stay; a fixed size loses to them */
    results_init(&r);
    add(&r, m, chosen(grouped("a.max", "warning", amax, 1), "autoscaling"));
    add(&r, m, chosen(grouped("b.min", "warning", autos, 1), "autoscaling"));
    add(&r, m, chosen(grouped("c.fixed", "info", dup, 1), "fixed"));
    assert_int_equal(results_finish(&r, m), 0);
    assert_string_equal(change_to(by_rule(&r, "a.max"), "autoscale.max_workers"), "4");
    assert_string_equal(change_to(by_rule(&r, "b.min"), "autoscale.min_workers"), "1");
    assert_null(change_to(by_rule(&r, "c.fixed"), "num_workers"));
    results_free(&r);

    /* many findings of one group, each on its own key: the first owns it,
     * every other loses its change (linear: one table slot per change) */
    results_init(&r);
    for (i = 0; i < 3000; i++) {
        char k[16];
        const char *ch[] = {k, "1", NULL};
        snprintf(k, sizeof k, "k%d", i);
        add(&r, m, grouped("z.many", "warning", ch, 1));
    }
    assert_int_equal(results_finish(&r, m), 0);
    for (i = 0, n = 0; i < 3000; i++)
        n += cJSON_GetArraySize(r.f[i].changes);
    assert_int_equal(n, 1);
    results_free(&r);

    results_init(&r);
    bad = grouped("x.bad", "warning", dup, 1);
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(bad, "changes"), 0),
                              "group", cJSON_CreateNumber(1));
    assert_int_equal(results_add_finding(&r, m, bad, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "'group' must be a string"));
    cJSON_Delete(bad);
    results_free(&r);
    model_free(m);
}

static char *render(report_fn fn, const model *m, const results *r)
{
    analysis an;
    report_ctx ctx;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    input_rec in = {.path = "in.json", .plugin = "flink", .ok = 1};

    memset(&an, 0, sizeof an);
    an.m = (model *)m;
    an.inputs = &in;
    an.ninputs = 1;
    memset(&ctx, 0, sizeof ctx);
    ctx.an = &an;
    ctx.res = r;
    ctx.out = f;
    ctx.deterministic = 1;
    assert_int_equal(fn(&ctx), 0);
    fclose(f);
    return buf;
}

static void test_reporters(void **state)
{
    model *m = small_model();
    const int order[] = {0, 1, 2};
    results r;
    char *text, *json;
    cJSON *doc;

    (void)state;
    fill(&r, m, order);
    text = render(report_text, m, &r);
    assert_null(strchr(text, '\033'));
    assert_null(strchr(text, '\007'));
    assert_non_null(strstr(text, "Window?]0;pwned?<script>"));
    assert_non_null(strstr(text, "3 findings (1 error, 2 warnings, 0 info)"));
    assert_non_null(strstr(text, "2 rule errors"));

    json = render(report_json, m, &r);
    doc = cJSON_Parse(json);
    assert_non_null(doc);
    assert_int_equal(cJSON_GetObjectItem(doc, "schema")->valueint, 1);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "findings")), 3);
    assert_string_equal(
        cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "findings"), 0),
                            "rule")->valuestring, "a.rule");
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "rule_errors")), 2);
    assert_null(strstr(json, "<script>")); /* escaped as \u003c */
    assert_int_equal(
        cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "stats"), "elapsed_ms")->valueint, 0);
    assert_non_null(report_find("json"));
    assert_null(report_find("yaml"));
    cJSON_Delete(doc);
    free(text);
    free(json);
    results_free(&r);
    model_free(m);
}

#define HEX_ID "a1b2c3d4e5f60718293a4b5c6d7e8f90"
#define EVIL_ID "x:1\nenv.java.opts.all: -javaagent:/tmp/evil.jar\n#"

/* One finding with one change {key, to} about node (NULL: the run). */
static void add_change(results *r, const model *m, int run, const char *node,
                       const char *msg, const char *key, cJSON *to)
{
    cJSON *o = finding_json("e.rule", "warning", node, msg), *ch, *c;

    cJSON_ReplaceItemInObject(o, "run", cJSON_CreateNumber(run));
    ch = cJSON_AddArrayToObject(o, "changes");
    c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "key", key);
    cJSON_AddItemToObject(c, "to", to);
    cJSON_AddItemToArray(ch, c);
    add(r, m, o);
}

static finding *by_message(results *r, const char *msg)
{
    size_t i;

    for (i = 0; i < r->n; i++)
        if (strcmp(r->f[i].message, msg) == 0)
            return &r->f[i];
    fail_msg("no finding %s", msg);
    return NULL;
}

static char *slurp(const char *path)
{
    op_error err;
    size_t n;
    char *s = input_read_file(path, 1 << 20, &n, &err);

    assert_non_null(s);
    return s;
}

/* Every change that would not read back as meant is refused, in the
 * patch and on diag; nothing a key, value, id or rule id holds becomes a
 * line of its own. The vertex id with newlines is set on the finding
 * directly: the builder would refuse it before (test_model.c), this is
 * the second wall. */
static void test_emit_refusals(void **state)
{
    model *m = model_new();
    op_builder *b = model_builder_new(m, "in.json");
    op_run *fr = op_run_get(b, "flink", "job-1"), *sr = op_run_get(b, "spark", "app-1");
    results r;
    baseline bl;
    emit_stats st;
    op_error err;
    char dir[128], path[256], *diag = NULL, *flink, *spark;
    size_t dlen = 0;
    FILE *df = open_memstream(&diag, &dlen);
    finding *f;

    (void)state;
    op_node_get(b, fr, HEX_ID);
    op_node_get(b, fr, "v1");
    op_node_get(b, fr, "v2"); /* the evil vertex's own node: no conflict */
    op_run_str(b, fr, OP_F_NAME, "j");
    op_run_str(b, sr, OP_F_NAME, "s");
    model_builder_free(b);
    model_freeze(m);
    results_init(&r);
    add_change(&r, m, 0, "v2", "evil vertex", "parallelism", cJSON_CreateNumber(16));
    add_change(&r, m, 0, HEX_ID, "good vertex", "parallelism", cJSON_CreateNumber(4));
    add_change(&r, m, 0, "v1", "short vertex", "parallelism", cJSON_CreateNumber(8));
    add_change(&r, m, 0, NULL, "tab value", "a.b", cJSON_CreateString("x\ty"));
    add_change(&r, m, 0, NULL, "nel value", "a.c", cJSON_CreateString("x\xc2\x85y"));
    add_change(&r, m, 0, NULL, "evil rule", "a.d", cJSON_CreateString("1"));
    add_change(&r, m, 1, NULL, "equals key", "spark.a=b", cJSON_CreateString("1"));
    add_change(&r, m, 1, NULL, "space key", "spark.a b", cJSON_CreateString("1"));
    add_change(&r, m, 1, NULL, "unicode key", "spark.\xc3\xa9", cJSON_CreateString("1"));
    add_change(&r, m, 1, NULL, "newline key", "spark.x\nspark.y", cJSON_CreateString("1"));
    add_change(&r, m, 1, NULL, "fine", "spark.ok", cJSON_CreateString("1"));
    assert_int_equal(results_finish(&r, m), 0);
    f = by_message(&r, "evil vertex");
    free(f->node_id);
    f->node_id = strdup(EVIL_ID);
    f = by_message(&r, "evil rule");
    free(f->rule);
    f->rule = strdup("e.rule\nenv.java.opts.all: x");
    baseline_init(&bl);
    snprintf(dir, sizeof dir, "%s/emit", tm_tmpdir);
    assert_int_equal(emit_changes(dir, m, &r, &bl, 1, df, &st, &err), 0);
    fclose(df);
    assert_int_equal(st.nfiles, 2);
    assert_int_equal(st.nrefused, 8);
    snprintf(path, sizeof path, "%s/flink-j.yaml", dir);
    flink = slurp(path);
    snprintf(path, sizeof path, "%s/spark-s.conf", dir);
    spark = slurp(path);
    assert_null(strstr(flink, "\nenv.java"));
    assert_null(strstr(spark, "\nspark.y"));
    assert_non_null(strstr(flink, "\npipeline.jobvertex-parallelism-overrides: " HEX_ID ":4\n"));
    assert_non_null(strstr(flink, "#   refused: vertex id \"x:1\\nenv.java.opts.all: "
                                  "-javaagent:/tmp/evil.jar\\n#\" is not 32 hex digits"));
    assert_non_null(strstr(flink, "#   refused: vertex id \"v1\" is not"));
    assert_non_null(strstr(flink, "#   refused: value \"x\\ty\" has a control character (U+0009 at byte 1)"));
    assert_non_null(strstr(flink, "#   refused: value \"x\\u0085y\" has a control character"));
    assert_non_null(strstr(flink, "# e.rule env.java.opts.all: x [")); /* flattened */
    assert_non_null(strstr(flink, "\na.d: 1\n"));
    assert_non_null(strstr(flink, "\n# 4 changes refused: see \"refused:\" above\n"));
    assert_non_null(strstr(spark, "#   refused: key \"spark.a=b\" has '=' at byte 7"));
    assert_non_null(strstr(spark, "#   refused: key \"spark.a b\" has a space at byte 7"));
    assert_non_null(strstr(spark, "#   refused: key \"spark.\xc3\xa9\" has U+00E9 at byte 6"));
    assert_non_null(strstr(spark, "#   refused: key \"spark.x\\nspark.y\" has a control"));
    assert_non_null(strstr(spark, "\nspark.ok 1\n"));
    assert_non_null(strstr(diag, "/flink-j.yaml: e.rule ["));
    assert_non_null(strstr(diag, "]: change refused: vertex id \"x:1\\nenv.java"));
    assert_non_null(strstr(diag, "/spark-s.conf: e.rule ["));
    assert_null(strstr(diag, "\nenv.java"));
    free(flink);
    free(spark);
    free(diag);
    baseline_free(&bl);
    results_free(&r);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_noop_changes),
        cmocka_unit_test(test_fingerprints_and_order),
        cmocka_unit_test(test_change_reconciliation),
        cmocka_unit_test(test_change_groups),
        cmocka_unit_test(test_reporters),
        cmocka_unit_test(test_emit_refusals),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
