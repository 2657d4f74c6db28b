/*
 * rule_test.c - the rule test harness (rule_test.h) that the bundled
 * packs and users' own packs share: `optipipe rules test [DIR|FILE...]`
 * (cli/cmd_rules.c) prints what it finds.
 *
 * A test file <rule>_test.lua returns {rule = ID, cases = {...}}; each case
 * names its inputs (files relative to the test file, or inline runs written
 * as Lua tables in the shape `optipipe normalize` prints), optional option
 * overrides, and the findings expected (docs/writing-rules.md). A case runs
 * the whole pipeline (detection, plugins, model, that one rule) and passes
 * when the rule's findings match the expected ones one to one. Inline runs
 * go through a temporary file read by the built-in "model" plugin, so they
 * take exactly the path a real input takes.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <optipipe/grow.h>

#include "diag.h"
#include "home.h"
#include "jsonw.h"
#include "rule_test.h"
#include "sbx.h"
#include "session.h"
#include "store.h"
#include "util.h"
#include "wfile.h"

#define MAX_CASE_INPUTS 64
#define MAX_RESULTS 100000

/* One case's outcome, kept for --junit. */
struct rule_case_result {
    char *suite, *file, *name, *why, *details;
    int ok;
};
typedef rule_case_result case_result;

/* The pack under test, loaded once for all the test files of its folder
 * (each rule file is loaded once per process). */
typedef struct pack_load {
    const char *dir; /* the pack folder (borrowed) */
    ruleset *rs;     /* NULL when the folder could not be loaded */
    results errs;    /* load errors */
    char why[OP_ERROR_MAX];
} pack_load;

typedef rule_test tally;

/* ---- matching ------------------------------------------------------------ */

/* Why an expectation did not match a finding: the first field that
 * differs, with what was expected and what the finding holds. */
typedef struct mismatch {
    char path[256];
    char what[512];
} mismatch;

static const char *const expect_keys[] = {
    "message", "recommendation", "title", "node", "run", "severity",
    "evidence", "changes"};
#define N_EXPECT_KEYS (sizeof expect_keys / sizeof expect_keys[0])

static int num_eq(double a, double b)
{
    double scale = fmax(fabs(a), fabs(b));
    return fabs(a - b) <= fmax(1e-9, 1e-6 * scale);
}

/* A value in a few words: `"text"`, `3.5`, `true`, `a table`. */
static void describe(const cJSON *v, char *out, size_t len)
{
    if (!v || cJSON_IsNull(v))
        snprintf(out, len, "nothing");
    else if (cJSON_IsNumber(v))
        snprintf(out, len, "%.10g (a number)", v->valuedouble);
    else if (cJSON_IsString(v))
        snprintf(out, len, "\"%.80s%s\" (a string)", v->valuestring,
                 strlen(v->valuestring) > 80 ? "..." : "");
    else if (cJSON_IsBool(v))
        snprintf(out, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
    else
        snprintf(out, len, "a table");
}

static int differs(mismatch *mm, const char *path, const cJSON *want,
                   const cJSON *got)
{
    char w[128], g[128];

    describe(want, w, sizeof w);
    describe(got, g, sizeof g);
    snprintf(mm->path, sizeof mm->path, "%s", path);
    snprintf(mm->what, sizeof mm->what, "expected %s, got %s", w, g);
    return 0;
}

/* Tables match as recursive subsets; arrays element by element. On a
 * mismatch mm names the first path that differs. */
static int match_value(const cJSON *want, const cJSON *got, const char *path,
                       mismatch *mm)
{
    const cJSON *w;
    char sub[256];
    int i = 0;

    if (!got)
        return differs(mm, path, want, got);
    if (cJSON_IsNumber(want))
        return (cJSON_IsNumber(got) && num_eq(want->valuedouble, got->valuedouble)) ||
               differs(mm, path, want, got);
    if (cJSON_IsString(want))
        return (cJSON_IsString(got) && strcmp(want->valuestring, got->valuestring) == 0) ||
               differs(mm, path, want, got);
    if (cJSON_IsBool(want))
        return (cJSON_IsBool(got) && cJSON_IsTrue(want) == cJSON_IsTrue(got)) ||
               differs(mm, path, want, got);
    if (cJSON_IsArray(want) && cJSON_IsObject(got))
        return cJSON_GetArraySize(want) == 0 || /* {} reads as an empty array */
               differs(mm, path, want, got);
    if (cJSON_IsArray(want)) {
        if (!cJSON_IsArray(got))
            return differs(mm, path, want, got);
        cJSON_ArrayForEach(w, want) {
            snprintf(sub, sizeof sub, "%s[%d]", path, i + 1);
            if (!match_value(w, cJSON_GetArrayItem(got, i++), sub, mm))
                return 0;
        }
        return 1;
    }
    if (cJSON_IsObject(want)) {
        cJSON_ArrayForEach(w, want) {
            snprintf(sub, sizeof sub, "%s.%s", path, w->string);
            if (!match_value(w, cJSON_GetObjectItemCaseSensitive(got, w->string),
                             sub, mm))
                return 0;
        }
        return 1;
    }
    return cJSON_IsNull(got) || differs(mm, path, want, got);
}

/* message, recommendation, title: the expectation is a substring. */
static int contains(const char *key, const char *hay, const cJSON *needle,
                    mismatch *mm)
{
    cJSON got = {0};

    if (cJSON_IsString(needle) && hay && strstr(hay, needle->valuestring))
        return 1;
    got.type = hay ? cJSON_String : cJSON_NULL;
    got.valuestring = (char *)hay;
    if (!cJSON_IsString(needle))
        return differs(mm, key, needle, &got);
    {
        char g[128];
        describe(&got, g, sizeof g);
        snprintf(mm->path, sizeof mm->path, "%s", key);
        snprintf(mm->what, sizeof mm->what, "\"%.120s\" is not part of %s",
                 needle->valuestring, g);
    }
    return 0;
}

/* node, run, severity: the expectation is the exact string. */
static int same(const char *key, const char *have, const cJSON *w, mismatch *mm)
{
    cJSON got = {0};

    if (cJSON_IsString(w) && have && strcmp(have, w->valuestring) == 0)
        return 1;
    got.type = have ? cJSON_String : cJSON_NULL;
    got.valuestring = (char *)have;
    return differs(mm, key, w, &got);
}

/* Whether finding f satisfies every field the expectation gives; returns
 * how many top-level fields differ (0: a match), the first one in mm. */
static int match_finding(const cJSON *want, const finding *f, mismatch *mm)
{
    const cJSON *w;
    int bad = 0;

    cJSON_ArrayForEach(w, want) {
        const char *k = w->string;
        mismatch m1;
        int ok;
        if (strcmp(k, "message") == 0)
            ok = contains(k, f->message, w, &m1);
        else if (strcmp(k, "recommendation") == 0)
            ok = contains(k, f->recommendation, w, &m1);
        else if (strcmp(k, "title") == 0)
            ok = contains(k, f->title, w, &m1);
        else if (strcmp(k, "node") == 0)
            ok = same(k, f->node_id, w, &m1);
        else if (strcmp(k, "run") == 0)
            ok = same(k, f->run_id, w, &m1);
        else if (strcmp(k, "severity") == 0)
            ok = same(k, severity_name(f->sev), w, &m1);
        else if (strcmp(k, "evidence") == 0)
            ok = match_value(w, f->evidence, k, &m1);
        else
            ok = match_value(w, f->changes, k, &m1);
        if (!ok && !bad++)
            *mm = m1;
    }
    return bad;
}

/* An expectation key that is not a finding field is a typo: say so
 * before matching, since it could never match. */
static int check_keys(const cJSON *expect, char *why, size_t whylen)
{
    const cJSON *w, *k;
    int n = 0;
    size_t i;

    cJSON_ArrayForEach(w, expect) {
        n++;
        cJSON_ArrayForEach(k, w) {
            for (i = 0; i < N_EXPECT_KEYS; i++)
                if (k->string && strcmp(k->string, expect_keys[i]) == 0)
                    break;
            if (i == N_EXPECT_KEYS) {
                snprintf(why, whylen, "expected finding %d: unknown key '%s' "
                         "(keys: message, recommendation, title, node, run, "
                         "severity, evidence, changes)", n,
                         k->string ? k->string : "?");
                return -1;
            }
        }
    }
    return 0;
}

/* One-to-one matching of expectations to findings (greedy, in order). */
static int match_all(const cJSON *expect, const results *res, const char *rule,
                     char *why, size_t whylen)
{
    size_t n = 0, i;
    int used[256] = {0};
    const cJSON *w;
    int k = 0;

    if (check_keys(expect, why, whylen))
        return 0;
    for (i = 0; i < res->n; i++)
        if (strcmp(res->f[i].rule, rule) == 0)
            n++;
    if (n != (size_t)cJSON_GetArraySize(expect) || n > 256) {
        snprintf(why, whylen, "expected %d finding(s), got %zu",
                 cJSON_GetArraySize(expect), n);
        return 0;
    }
    cJSON_ArrayForEach(w, expect) {
        mismatch best, mm;
        int fewest = INT_MAX;
        k++;
        for (i = 0; i < res->n; i++) {
            int bad;
            if (used[i] || strcmp(res->f[i].rule, rule) != 0)
                continue;
            if (!(bad = match_finding(w, &res->f[i], &mm)))
                break;
            if (bad < fewest) { /* explain against the closest finding */
                fewest = bad;
                best = mm;
            }
        }
        if (i == res->n) {
            if (fewest == INT_MAX)
                snprintf(why, whylen, "expected finding %d matches none", k);
            else
                snprintf(why, whylen, "expected finding %d matches none: "
                         "%.100s: %.300s", k, best.path, best.what);
            return 0;
        }
        used[i] = 1;
    }
    return 1;
}

/* ---- running one case ------------------------------------------------------ */

static void dir_of(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        snprintf(out, len, ".");
    else
        snprintf(out, len, "%.*s", (int)(slash - path), path);
}

/* Text from rules and inputs, on one line, without control characters
 * (C0, DEL, and C1 as UTF-8) that could drive a terminal. */
static void put_clean(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "-");

    for (; *p; p++) {
        if (*p == '\n' && p[1]) {
            fputs("\n        ", f); /* a traceback stays readable */
            if (p[1] == '\t')
                p++; /* its lines start with a tab: the indent replaces it */
        } else if (*p == '\t') {
            fputc(' ', f);
        } else if (*p < 0x20 || *p == 0x7f) {
            fputc('?', f);
        } else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
            fputc('?', f);
            p++;
        } else {
            fputc(*p, f);
        }
    }
}

static void print_findings(FILE *f, const results *res, const char *rule)
{
    size_t i;

    for (i = 0; i < res->n; i++)
        if (strcmp(res->f[i].rule, rule) == 0) {
            fprintf(f, "      got: %s node=", severity_name(res->f[i].sev));
            put_clean(f, res->f[i].node_id);
            fputs(": ", f);
            put_clean(f, res->f[i].message);
            fputc('\n', f);
        }
    for (i = 0; i < res->ne; i++) {
        fputs("      rule error: ", f);
        put_clean(f, res->e[i].rule);
        fputs(": ", f);
        put_clean(f, res->e[i].error);
        fputc('\n', f);
    }
}

/* Enables only `rule` and applies the case's option overrides. */
static int select_rule(ruleset *rs, const char *rule, const cJSON *options,
                       char *why, size_t whylen)
{
    size_t i;
    int found = 0;

    for (i = 0; i < ruleset_count(rs); i++) {
        rule_meta *r = ruleset_rule(rs, i);
        r->enabled = strcmp(r->id, rule) == 0;
        if (!r->enabled)
            continue;
        found = 1;
        cJSON_Delete(r->overrides);
        r->overrides = NULL;
        if (cJSON_IsObject(options) &&
            config_check_options(r->options, options, "options", why, whylen))
            return -1;
        r->overrides = cJSON_IsObject(options) ? cJSON_Duplicate(options, 1) : NULL;
    }
    if (!found)
        snprintf(why, whylen, "no rule '%s' in this folder", rule);
    return found ? 0 : -1;
}

/* When the rule under test did not load, says why instead of "no rule":
 * the load error names the rule id, or its file when the id is unknown. */
static void load_error(FILE *out, const results *res, const char *rule,
                       char *why, size_t whylen)
{
    size_t i;

    for (i = 0; i < res->ne; i++)
        if (strcmp(res->e[i].rule, rule) == 0 || res->ne == 1) {
            snprintf(why, whylen, "the rule does not load: %s", res->e[i].error);
            return;
        }
    for (i = 0; i < res->ne; i++)
        fprintf(out, "      load error: %s: %s\n", res->e[i].rule,
                res->e[i].error);
}

/* Writes the case's inline runs into one temporary model file (the shape
 * `optipipe normalize` prints); *path is left empty when there are none. */
static int write_inline(const cJSON *inputs, char *path, size_t len,
                        char *why, size_t whylen)
{
    const char *tmp = getenv("TMPDIR");
    const cJSON *in;
    FILE *f;
    jw w;
    int fd, any = 0;

    path[0] = '\0';
    cJSON_ArrayForEach(in, inputs)
        any |= cJSON_IsObject(in);
    if (!any)
        return 0;
    snprintf(path, len, "%s/optipipe-inline-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    fd = mkstemp(path);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        snprintf(why, whylen, "cannot write a temporary file: %s", strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        path[0] = '\0';
        return -1;
    }
    jw_init(&w, f, 0);
    jw_obj(&w);
    jw_key(&w, "schema");
    jw_int(&w, 1);
    jw_key(&w, "runs");
    jw_arr(&w);
    cJSON_ArrayForEach(in, inputs)
        if (cJSON_IsObject(in))
            jw_cjson(&w, in);
    jw_arr_end(&w);
    jw_obj_end(&w);
    if (fclose(f) != 0) {
        snprintf(why, whylen, "cannot write %.400s", path);
        unlink(path);
        path[0] = '\0';
        return -1;
    }
    return 0;
}

/* Collects the case's input paths: files relative to the test file, then
 * the inline model (if any). confine: a file outside test_dir fails the
 * case. */
static int case_inputs(const cJSON *inputs, const char *test_dir, int confine,
                       const char *inline_path, char paths[][PATH_MAX],
                       size_t *n, char *why, size_t whylen)
{
    const cJSON *in;

    *n = 0;
    cJSON_ArrayForEach(in, inputs) {
        if (cJSON_IsObject(in))
            continue;
        if (!cJSON_IsString(in) || *n >= MAX_CASE_INPUTS - 1) {
            snprintf(why, whylen, "inputs are file names or inline runs "
                                  "(tables), at most %d", MAX_CASE_INPUTS - 1);
            return -1;
        }
        if (in->valuestring[0] == '/')
            snprintf(paths[*n], PATH_MAX, "%s", in->valuestring);
        else
            snprintf(paths[*n], PATH_MAX, "%s/%s", test_dir, in->valuestring);
        if (confine && sbx_path_inside(test_dir, paths[*n], why, whylen))
            return -1;
        (*n)++;
    }
    if (inline_path[0])
        snprintf(paths[(*n)++], PATH_MAX, "%s", inline_path);
    if (!*n) {
        snprintf(why, whylen, "a case needs at least one input");
        return -1;
    }
    return 0;
}

static int add_given_findings(void *ud, const model *m, results *res,
                              op_error *err);

/* Reads the case's inputs and runs the selected rule through the pipeline
 * every command runs: no config, no decisions file, nothing printed; the
 * first problem of an input fails the case. */
static int run_inputs(op_session *s, const rule_test_opts *o, ruleset *rs,
                      char paths[][PATH_MAX], size_t n, const char *store_path,
                      const cJSON *given, char *why, size_t whylen)
{
    const char *inputs[MAX_CASE_INPUTS];
    op_session_opts so;
    op_error err;
    size_t i;

    for (i = 0; i < n; i++)
        inputs[i] = paths[i];
    op_session_opts_default(&so);
    so.inputs = inputs;
    so.ninputs = n;
    so.plugin_path = o->plugin_path;
    so.limits = o->limits;
    so.strict_inputs = 1;
    so.rules = rs;
    so.no_config = 1;
    so.no_baseline = 1;
    so.history = store_path;
    so.quiet = 1;
    if (given) {
        so.add_findings = add_given_findings;
        so.add_findings_ud = (void *)given;
    }
    if (op_session_run(s, &so, &err)) {
        snprintf(why, whylen, "%s", err.msg);
        return -1;
    }
    return 0;
}

/* ---- history = { ... }: earlier runs in a private run store --------------- */

/* A private temporary run store: dir/history.db. */
typedef struct case_store {
    char dir[PATH_MAX];
    char path[PATH_MAX + 16];
} case_store;

static int case_store_make(case_store *cs, char *why, size_t whylen)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(cs->dir, sizeof cs->dir, "%s/optipipe-history-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(cs->dir)) {
        snprintf(why, whylen, "cannot make a temporary folder: %s",
                 strerror(errno));
        cs->dir[0] = '\0';
        return -1;
    }
    snprintf(cs->path, sizeof cs->path, "%s/history.db", cs->dir);
    return 0;
}

static void case_store_remove(case_store *cs)
{
    static const char *const tails[] = {"", "-wal", "-shm", "-journal"};
    char p[PATH_MAX + 32];
    size_t i;

    if (!cs->dir[0])
        return;
    for (i = 0; i < sizeof tails / sizeof tails[0]; i++) {
        snprintf(p, sizeof p, "%s%s", cs->path, tails[i]);
        unlink(p);
    }
    rmdir(cs->dir);
}

/* The decisions of one history input: { rule =, node =?, status =,
 * comment =? } each applied to the findings of that rule (on that node). */
static int history_decisions(const cJSON *list, const results *res,
                             baseline *bl, char *why, size_t whylen)
{
    const cJSON *d;
    size_t i;

    cJSON_ArrayForEach(d, list) {
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(d, "rule");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "node");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(d, "status");
        const cJSON *cm = cJSON_GetObjectItemCaseSensitive(d, "comment");
        int status = cJSON_IsString(st) ? decision_status_parse(st->valuestring)
                                        : -1;
        if (!cJSON_IsString(r) || status < 0) {
            snprintf(why, whylen, "history decisions need rule and status "
                                  "(approved or dismissed)");
            return -1;
        }
        for (i = 0; i < res->n; i++) {
            const finding *f = &res->f[i];
            if (strcmp(f->rule, r->valuestring) ||
                (cJSON_IsString(n) &&
                 strcmp(f->node_id ? f->node_id : "", n->valuestring)))
                continue;
            if (baseline_set(bl, f, (decision_status)status,
                             cJSON_IsString(cm) ? cm->valuestring : NULL,
                             "2024-01-01T00:00:00Z")) {
                snprintf(why, whylen, "out of memory");
                return -1;
            }
        }
    }
    return 0;
}

/* Findings of other rules on one history input, given by the case (the
 * harness runs only the rule under test): { rule =, node =?, message =?,
 * changes =?, impact =? } each, recorded with the input's first run so
 * that a rule reading stored findings (mixed.change-outcome) is testable.
 * Added before the decisions, which may then name them. */
static int history_findings(const cJSON *list, const model *m, results *res,
                            char *why, size_t whylen)
{
    static const char *const dflt[][2] = {{"title", "(given by the test)"},
                                          {"severity", "warning"},
                                          {"message", "(given by the test)"}};
    const cJSON *f;
    op_error err;

    cJSON_ArrayForEach(f, list) {
        int named = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(f, "rule"));
        cJSON *o = named ? cJSON_Duplicate(f, 1) : NULL;
        int rc = o ? 0 : -1;
        size_t i;

        for (i = 0; o && !rc && i < sizeof dflt / sizeof dflt[0]; i++)
            if (!cJSON_HasObjectItem(o, dflt[i][0]) &&
                !cJSON_AddStringToObject(o, dflt[i][0], dflt[i][1]))
                rc = -1;
        if (o && !rc) {
            cJSON_DeleteItemFromObjectCaseSensitive(o, "run");
            rc = cJSON_AddNumberToObject(o, "run", 0) ? 0 : -1;
        }
        op_error_clear(&err);
        if (!rc && (rc = results_add_finding(res, m, o, &err)))
            snprintf(why, whylen, "history findings: %.400s", err.msg);
        else if (rc)
            snprintf(why, whylen, "%s",
                     named ? "out of memory" : "history findings need a rule");
        cJSON_Delete(o);
        if (rc)
            return -1;
    }
    return 0;
}

/* op_session_opts.add_findings: ud is the history entry's findings list. */
static int add_given_findings(void *ud, const model *m, results *res,
                              op_error *err)
{
    char why[512] = "";

    if (history_findings((const cJSON *)ud, m, res, why, sizeof why))
        return op_error_set(err, OP_EUSAGE, "%s", why);
    return 0;
}

/* Analyzes one history input with the rule under test and records it
 * (findings, decisions) into the store at cs. */
static int history_step(const rule_test_opts *o, ruleset *rs, const char *test_dir,
                        const cJSON *item, const case_store *cs, char *why,
                        size_t whylen)
{
    const cJSON *in = cJSON_IsObject(item)
                          ? cJSON_GetObjectItemCaseSensitive(item, "input")
                          : item;
    char path[1][PATH_MAX];
    op_session s;
    store *st = NULL;
    op_error err;
    int rc = -1;

    memset(&s, 0, sizeof s);
    op_error_clear(&err);
    if (!cJSON_IsString(in)) {
        snprintf(why, whylen, "history = { \"path\", ... } or { { input = "
                              "\"path\", decisions = { ... } }, ... }");
        goto out;
    }
    if (in->valuestring[0] == '/')
        snprintf(path[0], PATH_MAX, "%s", in->valuestring);
    else
        snprintf(path[0], PATH_MAX, "%s/%s", test_dir, in->valuestring);
    if (run_inputs(&s, o, rs, path, 1, cs->path,
                   cJSON_IsObject(item)
                       ? cJSON_GetObjectItemCaseSensitive(item, "findings")
                       : NULL,
                   why, whylen))
        goto out;
    if (cJSON_IsObject(item) &&
        history_decisions(cJSON_GetObjectItemCaseSensitive(item, "decisions"),
                          &s.res, &s.bl, why, whylen))
        goto out;
    if (store_open(cs->path, 1, &st, &err) ||
        store_record(st, s.an.m, &s.res, &s.bl, NULL, &err)) {
        snprintf(why, whylen, "%s", err.msg);
        goto out;
    }
    rc = 0;
out:
    store_close(st);
    op_session_free(&s);
    return rc;
}

/* Fills a private store with the case's history inputs, oldest first. */
static int case_history(const rule_test_opts *o, ruleset *rs, const char *test_dir,
                        const cJSON *hist, case_store *cs, char *why,
                        size_t whylen)
{
    const cJSON *item;

    if (!cJSON_IsArray(hist) && !(cJSON_IsObject(hist) && !hist->child)) {
        snprintf(why, whylen, "'history' is a list of inputs, oldest first");
        return -1;
    }
    if (case_store_make(cs, why, whylen))
        return -1;
    cJSON_ArrayForEach(item, hist)
        if (history_step(o, rs, test_dir, item, cs, why, whylen))
            return -1;
    return 0;
}

static void pack_open(const rule_test_opts *o, const char *dir, pack_load *pl)
{
    char lua_dir[PATH_MAX];
    op_error err;

    memset(pl, 0, sizeof *pl);
    pl->dir = dir;
    results_init(&pl->errs);
    op_error_clear(&err);
    snprintf(lua_dir, sizeof lua_dir, "%s/lua", op_home());
    pl->rs = ruleset_new(&o->rlimits);
    if (!pl->rs) {
        snprintf(pl->why, sizeof pl->why, "out of memory");
    } else if (ruleset_load_dir(pl->rs, dir, dir, lua_dir, 0, &pl->errs,
                                &err)) {
        snprintf(pl->why, sizeof pl->why, "%s", err.msg);
        ruleset_free(pl->rs);
        pl->rs = NULL;
    }
}

static void pack_close(pack_load *pl)
{
    ruleset_free(pl->rs);
    results_free(&pl->errs);
}

static int run_case(const rule_test_opts *o, pack_load *pl, const char *test_dir,
                    const char *rule, const cJSON *c, char *why, size_t whylen,
                    FILE *details)
{
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(c, "inputs");
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
    char paths[MAX_CASE_INPUTS][PATH_MAX];
    const cJSON *hist = cJSON_GetObjectItemCaseSensitive(c, "history");
    char inline_path[PATH_MAX] = "";
    case_store cs;
    size_t npaths = 0;
    op_session s;
    ruleset *rs = pl->rs;
    int ok = 0;

    memset(&s, 0, sizeof s);
    memset(&cs, 0, sizeof cs);
    /* an empty Lua table converts to an empty object: {} means none */
    if (!(cJSON_IsArray(inputs) || cJSON_IsObject(inputs)) ||
        !(cJSON_IsArray(expect) || (cJSON_IsObject(expect) && !expect->child))) {
        snprintf(why, whylen, "a case needs 'inputs' and 'expect' lists");
        goto out;
    }
    if (cJSON_IsObject(inputs) && inputs->child) {
        snprintf(why, whylen, "'inputs' is a list: inputs = { run_or_file, ... }");
        goto out;
    }
    if (write_inline(inputs, inline_path, sizeof inline_path, why, whylen) ||
        case_inputs(inputs, test_dir, o->confine_inputs, inline_path, paths,
                    &npaths, why, whylen))
        goto out;
    if (!rs) {
        snprintf(why, whylen, "%s", pl->why);
        goto out;
    }
    /* load errors of other rules do not fail this case */
    if (select_rule(rs, rule, cJSON_GetObjectItemCaseSensitive(c, "options"),
                    why, whylen)) {
        load_error(o->out, &pl->errs, rule, why, whylen);
        goto out;
    }
    if (hist && case_history(o, rs, test_dir, hist, &cs, why, whylen))
        goto out;
    if (run_inputs(&s, o, rs, paths, npaths, hist ? cs.path : NULL, NULL, why,
                   whylen))
        goto out;
    ok = s.res.ne == 0 && match_all(expect, &s.res, rule, why, whylen);
    if (s.res.ne && !why[0])
        snprintf(why, whylen, "rule error");
    if (!ok)
        print_findings(details, &s.res, rule);
out:
    if (inline_path[0])
        unlink(inline_path);
    case_store_remove(&cs);
    op_session_free(&s);
    return ok;
}

/* ---- outcomes ------------------------------------------------------------------- */

static void record(tally *t, const char *suite, const char *file,
                   const char *name, int ok, const char *why,
                   const char *details)
{
    case_result *r;

    if (ok)
        t->passed++;
    else
        t->failed++;
    if (!t->o.keep || t->n >= MAX_RESULTS)
        return;
    if (OP_GROW(t->r, t->cap, t->n + 1, 64))
        return;
    r = &t->r[t->n++];
    r->suite = strdup(suite);
    r->file = strdup(file);
    r->name = strdup(name);
    r->why = strdup(why ? why : "");
    r->details = strdup(details ? details : "");
    r->ok = ok;
}

void rule_test_free(rule_test *t)
{
    size_t i;

    for (i = 0; i < t->n; i++) {
        free(t->r[i].suite);
        free(t->r[i].file);
        free(t->r[i].name);
        free(t->r[i].why);
        free(t->r[i].details);
    }
    free(t->r);
}

static void xml_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '<')
            fputs("&lt;", f);
        else if (c == '>')
            fputs("&gt;", f);
        else if (c == '&')
            fputs("&amp;", f);
        else if (c == '"')
            fputs("&quot;", f);
        else if (c < 0x20 && c != '\n' && c != '\t')
            fputc(' ', f); /* not allowed in XML 1.0 */
        else
            fputc(c, f);
    }
}

static int suite_end(const tally *t, size_t i)
{
    size_t j = i;

    while (j < t->n && strcmp(t->r[j].file, t->r[i].file) == 0)
        j++;
    return (int)j;
}

/* JUnit XML as Jenkins and GitLab read it: one testsuite per test file. */
int rule_test_junit(const rule_test *t, const char *path, op_error *err)
{
    wfile out;
    FILE *f;
    size_t i, j, end;
    int rc;

    if ((rc = wfile_open(&out, path, err)))
        return rc;
    f = out.f;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
               "<testsuites name=\"optipipe rules test\" tests=\"%u\" failures=\"%u\">\n",
            t->passed + t->failed, t->failed);
    for (i = 0; i < t->n; i = end) {
        unsigned fails = 0;
        end = (size_t)suite_end(t, i);
        for (j = i; j < end; j++)
            fails += !t->r[j].ok;
        fputs("  <testsuite name=\"", f);
        xml_text(f, t->r[i].suite);
        fputs("\" file=\"", f);
        xml_text(f, t->r[i].file);
        fprintf(f, "\" tests=\"%zu\" failures=\"%u\">\n", end - i, fails);
        for (j = i; j < end; j++) {
            fputs("    <testcase classname=\"", f);
            xml_text(f, t->r[j].suite);
            fputs("\" name=\"", f);
            xml_text(f, t->r[j].name);
            if (t->r[j].ok) {
                fputs("\"/>\n", f);
                continue;
            }
            fputs("\">\n      <failure message=\"", f);
            xml_text(f, t->r[j].why);
            fputs("\">", f);
            xml_text(f, t->r[j].details);
            fputs("</failure>\n    </testcase>\n", f);
        }
        fputs("  </testsuite>\n", f);
    }
    fputs("</testsuites>\n", f);
    return wfile_commit(&out, err);
}

/* ---- files and folders ------------------------------------------------------ */

static void run_one(const rule_test_opts *o, pack_load *pl, const char *file,
                    const char *test_dir, const char *rule, const cJSON *c,
                    tally *t)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
    const char *nm = cJSON_IsString(name) ? name->valuestring : "(unnamed case)";
    char why[OP_ERROR_MAX] = "";
    char *details = NULL;
    size_t dlen = 0;
    FILE *mem = open_memstream(&details, &dlen);
    int ok = run_case(o, pl, test_dir, rule, c, why, sizeof why,
                      mem ? mem : o->out);

    if (mem)
        fclose(mem);
    fprintf(o->out, "%s %s: %s%s", ok ? "ok  " : "FAIL", rule, nm, ok ? "" : " - ");
    put_clean(o->out, ok ? "" : why); /* it quotes the finding's text */
    fputc('\n', o->out);
    if (details)
        fputs(details, o->out);
    record(t, rule, file, nm, ok, why, details);
    free(details);
}

/* The test file is data from the pack: evaluated under the rule limits,
 * in a worker unless --isolate never. */
static void run_test_file(const rule_test_opts *o, pack_load *pl, const char *file,
                          tally *t)
{
    op_error err;
    cJSON *doc = NULL, *cases, *c;
    const cJSON *rule;
    char test_dir[PATH_MAX];

    op_error_clear(&err);
    if (sbx_path_inside(pl->dir, file, err.msg, sizeof err.msg) == 0)
        ruleset_eval_data(&o->rlimits, file, &doc, &err);
    rule = cJSON_GetObjectItemCaseSensitive(doc, "rule");
    cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    if (!doc || !cJSON_IsString(rule) || !cJSON_IsArray(cases) ||
        !cJSON_GetArraySize(cases)) {
        const char *why = !doc ? err.msg
                          : cJSON_IsArray(cases) && cJSON_IsString(rule)
                              ? "cases = {} holds no case"
                              : "needs rule = ID and cases = {...}";
        fprintf(o->out, "FAIL %s: %s\n", file, why);
        record(t, file, file, "(test file)", 0, why, NULL);
        cJSON_Delete(doc);
        return;
    }
    dir_of(file, test_dir, sizeof test_dir);
    cJSON_ArrayForEach(c, cases)
        run_one(o, pl, file, test_dir, rule->valuestring, c, t);
    cJSON_Delete(doc);
}

static int is_test_file(const char *name)
{
    const char *b = strrchr(name, '/');
    size_t n = strlen(name);

    b = b ? b + 1 : name;
    return n > 9 && strcmp(name + n - 9, "_test.lua") == 0 && b[0] != '.';
}

/* explicit: the folder was named on the command line, so finding no
 * test in it is a mistake, not an empty pack. */
static void run_dir(const rule_test_opts *o, const char *dir, int explicit, tally *t)
{
    char *names[1024], file[PATH_MAX * 2];
    size_t n = 0, i;
    struct dirent *de;
    DIR *d = opendir(dir);
    pack_load pl;

    if (!d) {
        fprintf(o->out, "FAIL %s: cannot open: %s\n", dir, strerror(errno));
        record(t, dir, dir, "(folder)", 0, strerror(errno), NULL);
        return;
    }
    while ((de = readdir(d)) && n < 1024)
        if (is_test_file(de->d_name) && (names[n] = strdup(de->d_name)))
            n++;
    closedir(d);
    qsort(names, n, sizeof *names, util_strp_cmp);
    if (!n && explicit) {
        fprintf(o->out, "FAIL %s: no rule tests (*_test.lua) in this folder\n", dir);
        record(t, dir, dir, "(folder)", 0, "no rule tests (*_test.lua)", NULL);
    }
    if (n)
        pack_open(o, dir, &pl);
    for (i = 0; i < n; i++) {
        snprintf(file, sizeof file, "%s/%s", dir, names[i]);
        run_test_file(o, &pl, file, t);
        free(names[i]);
    }
    if (n)
        pack_close(&pl);
}

void rule_test_init(rule_test *t, const rule_test_opts *o)
{
    memset(t, 0, sizeof *t);
    t->o = *o;
    if (!t->o.out)
        t->o.out = stdout;
}

void rule_test_path(rule_test *t, const char *arg)
{
    const rule_test_opts *o = &t->o;
    struct stat st;
    char dir[PATH_MAX];

    if (stat(arg, &st) == 0 && S_ISREG(st.st_mode) && is_test_file(arg)) {
        pack_load pl;
        dir_of(arg, dir, sizeof dir);
        pack_open(o, dir, &pl);
        run_test_file(o, &pl, arg, t);
        pack_close(&pl);
        return;
    }
    run_dir(o, arg, 1, t);
}

void rule_test_packs(rule_test *t, const char *root)
{
    char *names[RULES_MAX_PACKS], dir[PATH_MAX * 2];
    size_t n = 0, i;
    op_error err;

    /* a root that cannot be read has no packs: no failure (as before) */
    op_error_clear(&err);
    rules_pack_names(root, names, &n, &err);
    for (i = 0; i < n; i++) {
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        run_dir(&t->o, dir, 0, t);
        free(names[i]);
    }
}
