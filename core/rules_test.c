/*
 * rules_test.c - `optipipe rules test [DIR...]`: the rule test harness
 * that the bundled packs and users' own packs share.
 *
 * A test file <rule>_test.lua returns {rule = ID, cases = {...}}; each case
 * names input files (relative to the test file), optional option
 * overrides, and the findings expected (docs/writing-rules.md). A case runs
 * the whole pipeline (detection, plugins, model, that one rule) and passes
 * when the rule's findings match the expected ones one to one.
 */
#include <dirent.h>
#include <errno.h>
#include <lauxlib.h>
#include <limits.h>
#include <lualib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "lua_json.h"

#define TEST_FILE_MAX (4 * 1024 * 1024)
#define TEST_INSTRUCTIONS 10000000

typedef struct tally {
    unsigned passed, failed;
} tally;

/* ---- reading a test file (data, evaluated in a minimal state) ---------- */

static void budget_hook(lua_State *L, lua_Debug *ar)
{
    (void)ar;
    luaL_error(L, "test file ran too long");
}

static char *slurp(const char *path, size_t *len, op_error *err)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n;

    if (!f) {
        op_error_set(err, OP_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    buf = malloc(TEST_FILE_MAX + 1);
    if (!buf) {
        op_error_set(err, OP_ENOMEM, "out of memory");
        goto out;
    }
    n = fread(buf, 1, TEST_FILE_MAX + 1, f);
    if (n > TEST_FILE_MAX) {
        op_error_set(err, OP_ELIMIT, "%s: larger than %d bytes", path,
                     TEST_FILE_MAX);
        free(buf);
        buf = NULL;
        goto out;
    }
    buf[n] = '\0';
    *len = n;
out:
    fclose(f);
    return buf;
}

/* Evaluates a test file to cJSON. Only base/string/table/math exist, with
 * no file access and an instruction budget: a test file is data. */
static cJSON *load_test_file(const char *path, op_error *err)
{
    static const char *const banned[] = {"dofile", "loadfile", "load",
                                         "require", "collectgarbage", NULL};
    lua_State *L = luaL_newstate();
    cJSON *out = NULL;
    char chunk[PATH_MAX * 2 + 2];
    size_t len = 0, i;
    char *src;

    if (!L) {
        op_error_set(err, OP_ENOMEM, "out of memory");
        return NULL;
    }
    src = slurp(path, &len, err);
    if (!src)
        goto out;
    luaL_requiref(L, "_G", luaopen_base, 1);
    luaL_requiref(L, "string", luaopen_string, 1);
    luaL_requiref(L, "table", luaopen_table, 1);
    luaL_requiref(L, "math", luaopen_math, 1);
    lua_settop(L, 0);
    for (i = 0; banned[i]; i++) {
        lua_pushnil(L);
        lua_setglobal(L, banned[i]);
    }
    lua_sethook(L, budget_hook, LUA_MASKCOUNT, TEST_INSTRUCTIONS);
    snprintf(chunk, sizeof chunk, "@%s", path);
    if (luaL_loadbufferx(L, src, len, chunk, "t") ||
        lua_pcall(L, 0, 1, 0)) {
        op_error_set(err, OP_EPARSE, "%s", lua_tostring(L, -1));
        goto out;
    }
    if (!lua_istable(L, -1)) {
        op_error_set(err, OP_EPARSE, "%s: must return a table", path);
        goto out;
    }
    {
        size_t budget = TEST_FILE_MAX * 4;
        char msg[OP_ERROR_MAX];
        if (ljson_from_lua(L, -1, path, &budget, &out, msg, sizeof msg))
            op_error_set(err, OP_EPARSE, "%s", msg);
    }
out:
    free(src);
    lua_close(L);
    return out;
}

/* ---- matching ------------------------------------------------------------ */

static int match_value(const cJSON *want, const cJSON *got);

static int num_eq(double a, double b)
{
    double scale = fmax(fabs(a), fabs(b));
    return fabs(a - b) <= fmax(1e-9, 1e-6 * scale);
}

/* Tables match as recursive subsets; arrays element by element. */
static int match_value(const cJSON *want, const cJSON *got)
{
    const cJSON *w;
    int i = 0;

    if (!got)
        return 0;
    if (cJSON_IsNumber(want))
        return cJSON_IsNumber(got) && num_eq(want->valuedouble, got->valuedouble);
    if (cJSON_IsString(want))
        return cJSON_IsString(got) && strcmp(want->valuestring, got->valuestring) == 0;
    if (cJSON_IsBool(want))
        return cJSON_IsBool(got) && cJSON_IsTrue(want) == cJSON_IsTrue(got);
    if (cJSON_IsArray(want) && cJSON_IsObject(got))
        return cJSON_GetArraySize(want) == 0; /* {} reads as an empty array */
    if (cJSON_IsArray(want)) {
        if (!cJSON_IsArray(got))
            return 0;
        cJSON_ArrayForEach(w, want)
            if (!match_value(w, cJSON_GetArrayItem(got, i++)))
                return 0;
        return 1;
    }
    if (cJSON_IsObject(want)) {
        cJSON_ArrayForEach(w, want)
            if (!match_value(w, cJSON_GetObjectItemCaseSensitive(got, w->string)))
                return 0;
        return 1;
    }
    return cJSON_IsNull(got) || !got;
}

static int contains(const char *hay, const cJSON *needle)
{
    return cJSON_IsString(needle) && hay && strstr(hay, needle->valuestring);
}

/* Whether finding f satisfies every field the expectation gives. */
static int match_finding(const cJSON *want, const finding *f)
{
    const cJSON *w;

    cJSON_ArrayForEach(w, want) {
        const char *k = w->string;
        int ok;
        if (strcmp(k, "message") == 0)
            ok = contains(f->message, w);
        else if (strcmp(k, "recommendation") == 0)
            ok = contains(f->recommendation, w);
        else if (strcmp(k, "title") == 0)
            ok = contains(f->title, w);
        else if (strcmp(k, "node") == 0)
            ok = cJSON_IsString(w) && f->node_id && strcmp(f->node_id, w->valuestring) == 0;
        else if (strcmp(k, "run") == 0)
            ok = cJSON_IsString(w) && f->run_id && strcmp(f->run_id, w->valuestring) == 0;
        else if (strcmp(k, "severity") == 0)
            ok = cJSON_IsString(w) && strcmp(severity_name(f->sev), w->valuestring) == 0;
        else if (strcmp(k, "evidence") == 0)
            ok = match_value(w, f->evidence);
        else if (strcmp(k, "changes") == 0)
            ok = match_value(w, f->changes);
        else
            ok = 0; /* an unknown key never matches: typos must not pass */
        if (!ok)
            return 0;
    }
    return 1;
}

/* One-to-one matching of expectations to findings (greedy, in order). */
static int match_all(const cJSON *expect, const results *res, const char *rule,
                     char *why, size_t whylen)
{
    size_t n = 0, i;
    int used[256] = {0};
    const cJSON *w;
    int k = 0;

    for (i = 0; i < res->n; i++)
        if (strcmp(res->f[i].rule, rule) == 0)
            n++;
    if (n != (size_t)cJSON_GetArraySize(expect) || n > 256) {
        snprintf(why, whylen, "expected %d finding(s), got %zu",
                 cJSON_GetArraySize(expect), n);
        return 0;
    }
    cJSON_ArrayForEach(w, expect) {
        k++;
        for (i = 0; i < res->n; i++)
            if (!used[i] && strcmp(res->f[i].rule, rule) == 0 &&
                match_finding(w, &res->f[i]))
                break;
        if (i == res->n) {
            snprintf(why, whylen, "expected finding %d matches none", k);
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

static void print_findings(const results *res, const char *rule)
{
    size_t i;

    for (i = 0; i < res->n; i++)
        if (strcmp(res->f[i].rule, rule) == 0)
            fprintf(stdout, "      got: %s node=%s: %s\n",
                    severity_name(res->f[i].sev),
                    res->f[i].node_id ? res->f[i].node_id : "-",
                    res->f[i].message);
    for (i = 0; i < res->ne; i++)
        fprintf(stdout, "      rule error: %s: %s\n", res->e[i].rule,
                res->e[i].error);
}

/* Enables only `rule` and applies the case's option overrides. */
static int select_rule(ruleset *rs, const char *rule, const cJSON *options)
{
    size_t i;
    int found = 0;

    for (i = 0; i < ruleset_count(rs); i++) {
        rule_meta *r = ruleset_rule(rs, i);
        r->enabled = strcmp(r->id, rule) == 0;
        if (r->enabled) {
            found = 1;
            cJSON_Delete(r->overrides);
            r->overrides = cJSON_IsObject(options) ? cJSON_Duplicate(options, 1) : NULL;
        }
    }
    return found;
}

static int run_case(const cli_opts *base, const char *dir, const char *test_dir,
                    const char *rule, const cJSON *c, char *why, size_t whylen)
{
    cli_opts o = *base;
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(c, "inputs");
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
    const cJSON *in;
    char paths[64][PATH_MAX];
    char lua_dir[PATH_MAX];
    analysis an;
    results res;
    ruleset *rs = NULL;
    op_error err;
    int ok = 0;

    memset(&an, 0, sizeof an);
    results_init(&res);
    op_error_clear(&err);
    /* an empty Lua table converts to an empty object: {} means none */
    if (!cJSON_IsArray(inputs) ||
        !(cJSON_IsArray(expect) || (cJSON_IsObject(expect) && !expect->child))) {
        snprintf(why, whylen, "a case needs 'inputs' and 'expect' lists");
        goto out;
    }
    o.nrules_dirs = 1;
    o.rules_dirs[0] = dir;
    o.npacks = 0;
    o.ninputs = 0;
    cJSON_ArrayForEach(in, inputs) {
        if (!cJSON_IsString(in) || o.ninputs >= 64) {
            snprintf(why, whylen, "inputs must be at most 64 file names");
            goto out;
        }
        snprintf(paths[o.ninputs], PATH_MAX, "%s/%s", test_dir, in->valuestring);
        o.inputs[o.ninputs] = paths[o.ninputs];
        o.ninputs++;
    }
    snprintf(lua_dir, sizeof lua_dir, "%s/lua", cli_home());
    rs = ruleset_new(&o.rlimits);
    if (!rs || ruleset_load_dir(rs, dir, dir, lua_dir, 0, &res, &err)) {
        snprintf(why, whylen, "%s", rs ? err.msg : "out of memory");
        goto out;
    }
    if (!select_rule(rs, rule, cJSON_GetObjectItemCaseSensitive(c, "options"))) {
        snprintf(why, whylen, "no rule '%s' in %s", rule, dir);
        goto out;
    }
    results_free(&res); /* load errors of other rules do not fail this case */
    if (analysis_init(&an, o.plugin_path, &o.limits, NULL, &err)) {
        snprintf(why, whylen, "%s", err.msg);
        goto out;
    }
    for (size_t i = 0; i < o.ninputs; i++)
        if (!analysis_add(&an, o.inputs[i])) {
            snprintf(why, whylen, "%s",
                     an.ninputs && an.inputs[an.ninputs - 1].nwarnings
                         ? an.inputs[an.ninputs - 1].warnings[0]
                         : "input could not be read");
            goto out;
        }
    analysis_freeze(&an);
    if (ruleset_run(rs, an.m, &res, &err)) {
        snprintf(why, whylen, "%s", err.msg);
        goto out;
    }
    results_finish(&res, an.m);
    ok = res.ne == 0 && match_all(expect, &res, rule, why, whylen);
    if (res.ne && !why[0])
        snprintf(why, whylen, "rule error");
    if (!ok)
        print_findings(&res, rule);
out:
    ruleset_free(rs);
    results_free(&res);
    analysis_free(&an);
    return ok;
}

/* ---- files and folders ------------------------------------------------------ */

static void run_test_file(const cli_opts *o, const char *dir, const char *file,
                          tally *t)
{
    op_error err;
    cJSON *doc, *cases, *c;
    const cJSON *rule;
    char test_dir[PATH_MAX];

    op_error_clear(&err);
    doc = load_test_file(file, &err);
    rule = cJSON_GetObjectItemCaseSensitive(doc, "rule");
    cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    if (!doc || !cJSON_IsString(rule) || !cJSON_IsArray(cases)) {
        printf("FAIL %s: %s\n", file,
               doc ? "needs rule = ID and cases = {...}" : err.msg);
        t->failed++;
        cJSON_Delete(doc);
        return;
    }
    dir_of(file, test_dir, sizeof test_dir);
    cJSON_ArrayForEach(c, cases) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name");
        char why[OP_ERROR_MAX] = "";
        int ok = run_case(o, dir, test_dir, rule->valuestring, c, why, sizeof why);
        printf("%s %s: %s%s%s\n", ok ? "ok  " : "FAIL", rule->valuestring,
               cJSON_IsString(name) ? name->valuestring : "(unnamed case)",
               ok ? "" : " - ", ok ? "" : why);
        if (ok)
            t->passed++;
        else
            t->failed++;
    }
    cJSON_Delete(doc);
}

static int is_test_file(const char *name)
{
    size_t n = strlen(name);
    return n > 9 && strcmp(name + n - 9, "_test.lua") == 0 && name[0] != '.';
}

static int str_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_dir(const cli_opts *o, const char *dir, tally *t)
{
    char *names[1024], file[PATH_MAX * 2];
    size_t n = 0, i;
    struct dirent *de;
    DIR *d = opendir(dir);

    if (!d) {
        printf("FAIL %s: cannot open: %s\n", dir, strerror(errno));
        t->failed++;
        return;
    }
    while ((de = readdir(d)) && n < 1024)
        if (is_test_file(de->d_name) && (names[n] = strdup(de->d_name)))
            n++;
    closedir(d);
    qsort(names, n, sizeof *names, str_cmp);
    for (i = 0; i < n; i++) {
        snprintf(file, sizeof file, "%s/%s", dir, names[i]);
        run_test_file(o, dir, file, t);
        free(names[i]);
    }
}

int rules_test_main(const cli_opts *base, int argc, char **argv)
{
    cli_opts o = *base;
    tally t = {0, 0};
    char root[PATH_MAX], dir[PATH_MAX * 2];
    int i, dirs = 0;

    for (i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            puts("Usage: optipipe rules test [DIR...]");
            return 0;
        }
        if (argv[i][0] == '-') {
            fprintf(stderr, "optipipe: unknown option '%s'\n", argv[i]);
            return 2;
        }
        run_dir(&o, argv[i], &t);
        dirs++;
    }
    if (!dirs) {
        struct dirent *de;
        DIR *d;
        snprintf(root, sizeof root, "%s/rules", cli_home());
        d = opendir(root);
        while (d && (de = readdir(d))) {
            struct stat st;
            if (de->d_name[0] == '.')
                continue;
            snprintf(dir, sizeof dir, "%s/%s", root, de->d_name);
            if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
                run_dir(&o, dir, &t);
        }
        if (d)
            closedir(d);
    }
    printf("%u passed, %u failed\n", t.passed, t.failed);
    return t.failed ? 1 : 0;
}
