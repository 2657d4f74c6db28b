/*
 * cmd_rules.c - `optipipe rules list|show|test|new|lint`: the rule
 * author's commands (docs/writing-rules.md). The harness of `test` is
 * core's rule_test.c, the checks of `lint` core's rule_lint.c.
 *
 * `new` writes a scaffold that follows the bundled packs' layout: the rule
 * next to its test, its docs page under docs/. `lint` reads metadata and
 * the rule's text, never runs a check function.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "input.h"
#include "engine.h"
#include "rule_lint.h"
#include "rule_test.h"
#include "wfile.h"

/* ---- list / show -------------------------------------------------------- */

/* "warning" or "info|warning": the effective severity and those the
 * check may give a finding itself (ctx.report{severity = ...}). */
static const char *severities(const rule_meta *r, char *buf, size_t n)
{
    int emits[3] = {0, 0, 0}, s;
    size_t used = 0;

    if (!r->enabled)
        return "off";
    rule_lint_severities(r, emits);
    emits[r->sev] = 1;
    buf[0] = '\0';
    for (s = SEV_INFO; s <= SEV_ERROR; s++)
        if (emits[s] && used < n) {
            int w = snprintf(buf + used, n - used, "%s%s", used ? "|" : "",
                             severity_name((severity)s));
            used += w > 0 ? (size_t)w : 0;
        }
    return buf;
}

static void print_list(const char *label, char **v, size_t n)
{
    size_t i;

    printf("%s", label);
    for (i = 0; i < n; i++)
        printf("%s%s", i ? ", " : "", v[i]);
    putchar('\n');
}

static void print_value(const cJSON *v)
{
    char *s = cJSON_PrintUnformatted(v);

    fputs(s ? s : "?", stdout);
    cJSON_free(s);
}

/* One line per option: the effective value, and where it came from. */
static void print_options(const rule_meta *r, const cJSON *eff)
{
    const cJSON *it;

    if (!eff || !eff->child) {
        puts("options:     (none)");
        return;
    }
    puts("options:");
    cJSON_ArrayForEach(it, eff) {
        const cJSON *def = cJSON_GetObjectItemCaseSensitive(r->options, it->string);
        const cJSON *ov = cJSON_GetObjectItemCaseSensitive(r->overrides, it->string);
        printf("  %-24s = ", it->string);
        print_value(it);
        if (ov) {
            fputs("   (config; default ", stdout);
            print_value(def);
            fputs(")", stdout);
        }
        putchar('\n');
    }
}

/* The rule's docs page: <pack>/docs/<id>.md, else the bundled one under
 * <home>/docs/rules/. 1 when one exists. */
static int rule_docs(const rule_meta *r, char *buf, size_t n)
{
    const char *slash = strrchr(r->file, '/');
    struct stat st;

    snprintf(buf, n, "%.*s/docs/%s.md", slash ? (int)(slash - r->file) : 1,
             slash ? r->file : ".", r->id);
    if (stat(buf, &st) == 0)
        return 1;
    snprintf(buf, n, "%s/docs/rules/%s.md", op_home(), r->id);
    return stat(buf, &st) == 0;
}

static int rules_show(ruleset *rs, const char *id, const config *cfg)
{
    rule_meta *r = ruleset_find(rs, id);
    char sevs[32], docs[PATH_MAX + 300];
    cJSON *eff;

    if (!r) {
        diag_msg(DIAG_ERROR, "no rule with id '%s'", id);
        return EXIT_USAGE;
    }
    eff = rule_meta_merged_options(r);
    printf("id:          %s\n", r->id);
    printf("title:       %s\n", r->title ? r->title : "");
    printf("severity:    %s", severity_name(r->sev));
    if (r->sev != r->default_sev)
        printf(" (config; the rule says %s)", severity_name(r->default_sev));
    putchar('\n');
    printf("can emit:    %s\n", severities(r, sevs, sizeof sevs));
    printf("enabled:     %s\n", r->enabled ? "yes" : "no (config)");
    print_list("sources:     ", r->sources, r->nsources);
    print_list("tags:        ", r->tags, r->ntags);
    printf("pack:        %s\n", r->pack);
    printf("file:        %s\n", r->file);
    if (rule_docs(r, docs, sizeof docs))
        printf("docs:        %s\n", docs);
    if (cfg && cfg->path)
        printf("config:      %s\n", cfg->path);
    print_options(r, eff);
    cJSON_Delete(eff);
    if (r->description)
        printf("\n%s\n", r->description);
    return EXIT_DONE;
}

/* rules list, rules show (the command says which) */
static int rules_list_show(cli_opts *o, const opt_cmd *cmd)
{
    op_session s;
    size_t i;
    int code, show = cmd == &cli_cmd_rules_show;

    if (show && o->session.ninputs != 1)
        return cli_usage_error("%s", "rules show needs exactly one rule ID");
    if (!show && o->session.ninputs)
        return cli_usage_error("rules list takes no arguments ('%s')",
                               o->session.inputs[0]);
    if ((code = cli_session_run(&s, o, OP_SESSION_RULES)))
        goto out;
    if (show) {
        code = rules_show(s.rs, o->session.inputs[0], &s.cfg);
    } else {
        for (i = 0; i < ruleset_count(s.rs); i++) {
            rule_meta *r = ruleset_rule(s.rs, i);
            char sevs[32];
            printf("%-32s %-18s %-8s %s\n", r->id, severities(r, sevs, sizeof sevs),
                   r->pack, r->title ? r->title : "");
        }
        code = EXIT_DONE;
    }
out:
    op_session_free(&s);
    return code;
}

/* ---- new ------------------------------------------------------------------ */

static const char tpl_rule[] =
    "-- @ID@: TODO one line saying what this rule detects.\n"
    "-- Docs: docs/@ID@.md. Tests: @NAME@_test.lua (optipipe rules test).\n"
    "-- The rule API: @DOCS@/writing-rules.md\n"
    "-- The model: @DOCS@/model.md\n"
    "-- The SDK helpers (require \"optipipe.stats\"): @LUA@/optipipe/\n"
    "return {\n"
    "  id = \"@ID@\",\n"
    "  title = \"TODO: what is wrong, in a few words\",\n"
    "  severity = \"warning\",          -- info | warning | error\n"
    "  sources = { \"@SOURCE@\" },\n"
    "  tags = { \"custom\" },\n"
    "  options = { max_duration_ms = 600000 },   -- defaults; optipipe.lua can override\n"
    "  description = \"TODO: what this rule detects, why it matters, what to do.\",\n"
    "@CHECK@"
    "}\n";

static const char tpl_check_run[] =
    "  check = function(run, ctx)\n"
    "    -- TODO: report what is wrong. For example, every node slower than\n"
    "    -- the option (uncomment to make the scaffold's test pass):\n"
    "    --\n"
    "    -- for _, node in ipairs(run.nodes) do\n"
    "    --   if (node.duration_ms or 0) > ctx.options.max_duration_ms then\n"
    "    --     ctx.report {\n"
    "    --       node = node.id,\n"
    "    --       message = (\"%s took %d s\"):format(node.name or node.id, node.duration_ms // 1000),\n"
    "    --       recommendation = \"TODO: what to do about it\",\n"
    "    --       evidence = { duration_ms = node.duration_ms },\n"
    "    --     }\n"
    "    --   end\n"
    "    -- end\n"
    "  end,\n";

static const char tpl_check_bundle[] =
    "  check = function(bundle, ctx)   -- sources = { \"*\" }: every run at once\n"
    "    -- TODO: report what is wrong. For example, every node slower than\n"
    "    -- the option, in any run (uncomment to make the scaffold's test pass):\n"
    "    --\n"
    "    -- for _, run in ipairs(bundle.runs) do\n"
    "    --   for _, node in ipairs(run.nodes) do\n"
    "    --     if (node.duration_ms or 0) > ctx.options.max_duration_ms then\n"
    "    --       ctx.report {\n"
    "    --         run = run, node = node.id,\n"
    "    --         message = (\"%s took %d s\"):format(node.name or node.id, node.duration_ms // 1000),\n"
    "    --         recommendation = \"TODO: what to do about it\",\n"
    "    --         evidence = { duration_ms = node.duration_ms },\n"
    "    --       }\n"
    "    --     end\n"
    "    --   end\n"
    "    -- end\n"
    "  end,\n";

static const char tpl_test[] =
    "-- Tests of @ID@: optipipe rules test @PACKDIR@\n"
    "-- An input is a file (relative to this file) or an inline run: a table\n"
    "-- shaped like one run of `optipipe normalize --format json`.\n"
    "local function run_with(duration_ms)\n"
    "  return { source = \"@RUNSOURCE@\", id = \"run-1\", name = \"example\",\n"
    "           nodes = { { id = \"n1\", name = \"example node\", duration_ms = duration_ms } } }\n"
    "end\n"
    "\n"
    "return { rule = \"@ID@\", cases = {\n"
    "  { name = \"fires on a node slower than max_duration_ms\",\n"
    "    inputs = { run_with(900000) },\n"
    "    expect = { { node = \"n1\", severity = \"warning\", message = \"example node took 900 s\",\n"
    "                 evidence = { duration_ms = 900000 } } } },\n"
    "  { name = \"stays quiet on a fast node\",\n"
    "    inputs = { run_with(1000) },\n"
    "    expect = {} },\n"
    "} }\n";

static const char tpl_doc[] =
    "# @ID@ — TODO title\n"
    "\n"
    "**Severity:** warning · **Source:** @SOURCE@ · **Rule:** `@NAME@.lua` ·\n"
    "**Tests:** `@NAME@_test.lua`\n"
    "\n"
    "## What it detects\n"
    "\n"
    "TODO: the situation, with the numbers that define it.\n"
    "\n"
    "## Recommends\n"
    "\n"
    "TODO: what to change, and why that helps.\n"
    "\n"
    "## Evidence\n"
    "\n"
    "`duration_ms`.\n"
    "\n"
    "## Options\n"
    "\n"
    "| option | default | meaning |\n"
    "|---|---|---|\n"
    "| `max_duration_ms` | 600000 | TODO |\n";

/* Copies tpl to f, replacing @KEY@ by the value of that key. */
static void expand(FILE *f, const char *tpl, const char *const kv[][2])
{
    const char *p = tpl;

    while (*p) {
        const char *end;
        size_t i;
        if (*p != '@' || !(end = strchr(p + 1, '@'))) {
            fputc(*p++, f);
            continue;
        }
        for (i = 0; kv[i][0]; i++)
            if (strlen(kv[i][0]) == (size_t)(end - p - 1) &&
                strncmp(kv[i][0], p + 1, (size_t)(end - p - 1)) == 0)
                break;
        if (!kv[i][0]) {
            fputc(*p++, f);
            continue;
        }
        fputs(kv[i][1], f);
        p = end + 1;
    }
}

static int mkdirs(const char *dir)
{
    char p[PATH_MAX];
    size_t i;

    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return -1;
    for (i = 1; p[i]; i++)
        if (p[i] == '/') {
            p[i] = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return -1;
            p[i] = '/';
        }
    return mkdir(p, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static int write_file(const char *path, const char *tpl,
                      const char *const kv[][2])
{
    wfile out;
    op_error err;

    op_error_clear(&err);
    if (wfile_open(&out, path, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return -1;
    }
    expand(out.f, tpl, kv);
    if (wfile_commit(&out, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return -1;
    }
    printf("wrote %s\n", path);
    return 0;
}

static int valid_name(const char *s)
{
    size_t i;

    if (!*s || strlen(s) > 60 || s[0] == '-' || s[0] == '.')
        return 0;
    for (i = 0; s[i]; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) &&
            s[i] != '-' && s[i] != '_')
            return 0;
    return strlen(s) < 5 || strcmp(s + strlen(s) - 5, "_test") != 0;
}

/* --source must name a source some run can have, else the rule never
 * runs: an engine of the table (core/engine.h: spark, flink, dbt, and the
 * engines a plugin maps onto, kafka-streams, samza), or an external
 * plugin's name (a plugin without an engine entry names its runs after
 * itself). "model" reads back any source, so it is not one itself. */
static int check_source(const char *source)
{
    cli_opts o;
    analysis an;
    char known[512] = "";
    size_t i, len = 0;
    int found = 0, code;

    cli_opts_default(&o);
    if ((code = cli_open_plugins(&o, &an)))
        return code;
    for (i = 0; op_builtin_engines[i]; i++) {
        const char *e = op_builtin_engines[i]->source;
        found |= strcmp(e, source) == 0;
        if (len < sizeof known)
            len += (size_t)snprintf(known + len, sizeof known - len, "%s%s",
                                    len ? ", " : "", e);
    }
    for (i = 0; i < plugins_count(an.reg); i++) {
        const char *so = NULL;
        const op_plugin *p = plugins_get(an.reg, i, &so);
        if (!so || strcmp(p->name, "model") == 0) /* built-ins: engines */
            continue;
        found |= strcmp(p->name, source) == 0;
        if (len < sizeof known)
            len += (size_t)snprintf(known + len, sizeof known - len, "%s%s",
                                    len ? ", " : "", p->name);
    }
    analysis_free(&an);
    if (found)
        return 0;
    diag_msg(DIAG_ERROR, "--source '%s': no run has that source "
             "(known: %s, or '*' for every run at once)", source, known);
    diag_line(DIAG_ERROR, "Try 'optipipe plugins list'.");
    return EXIT_USAGE;
}

/* <home>/sub, where the bundled packs' docs and SDK helpers are (the
 * build tree's share/optipipe, or the installed one); "docs" or "lua"
 * relative to the source tree when it does not exist. */
static const char *home_dir(char *buf, size_t n, const char *sub)
{
    struct stat st;

    snprintf(buf, n, "%s/%s", op_home(), sub);
    if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
        snprintf(buf, n, "%s", strcmp(sub, "lua") == 0 ? "sdk/lua" : sub);
    return buf;
}

static int rules_new(cli_opts *o, const opt_cmd *cmd)
{
    const char *source = engine_default_source(), *arg = NULL;
    char packdir[PATH_MAX], pack[PATH_MAX], name[128], id[128];
    char rule_path[PATH_MAX + 200], test_path[PATH_MAX + 200];
    char doc_dir[PATH_MAX + 10], doc_path[PATH_MAX + 600];
    const char *slash, *pb;
    struct stat st;
    int i, force;

    (void)cmd;
    if (o->session.ninputs > 1)
        return cli_usage_error("rules new takes one PACK/NAME ('%s')",
                               o->session.inputs[1]);
    arg = o->session.ninputs ? o->session.inputs[0] : NULL;
    source = o->source ? o->source : source;
    force = o->force;
    if (!arg || !(slash = strrchr(arg, '/')) || slash == arg)
        return cli_usage_error("rules new needs PACK/NAME, e.g. myrules/slow-models%s", "");
    snprintf(name, sizeof name, "%s", slash + 1);
    snprintf(packdir, sizeof packdir, "%.*s", (int)(slash - arg), arg);
    if (!valid_name(name))
        return cli_usage_error("rule name '%s': use a-z, 0-9, '-' and '_' "
                               "(not ending in _test)", name);
    for (pb = packdir + strlen(packdir); pb > packdir && pb[-1] != '/'; pb--)
        ;
    snprintf(pack, sizeof pack, "%s", pb);
    if (!valid_name(pack) && strcmp(pack, "..") != 0)
        return cli_usage_error("pack folder '%s': use a-z, 0-9, '-' and '_'", pack);
    if (strcmp(source, "*") != 0 && !valid_name(source))
        return cli_usage_error("--source '%s': a plugin name or '*'", source);
    if (strcmp(source, "*") != 0 && (i = check_source(source)))
        return i;
    snprintf(id, sizeof id, "%.60s.%.60s", pack, name);
    snprintf(rule_path, sizeof rule_path, "%s/%s.lua", packdir, name);
    snprintf(test_path, sizeof test_path, "%s/%s_test.lua", packdir, name);
    snprintf(doc_dir, sizeof doc_dir, "%s/docs", packdir);
    snprintf(doc_path, sizeof doc_path, "%s/%s.md", doc_dir, id);
    if (!force && (stat(rule_path, &st) == 0 || stat(test_path, &st) == 0 ||
                   stat(doc_path, &st) == 0)) {
        diag_msg(DIAG_ERROR, "%s, its test or its docs page exists "
                        "already (--force overwrites)", rule_path);
        return EXIT_USAGE;
    }
    if (mkdirs(doc_dir)) {
        diag_msg(DIAG_ERROR, "%s: cannot create: %s", doc_dir, strerror(errno));
        return EXIT_NOINPUT;
    }
    {
        char docs[PATH_MAX], lua[PATH_MAX];
        const char *const kv[][2] = {
            {"ID", id}, {"NAME", name}, {"PACKDIR", packdir}, {"SOURCE", source},
            {"DOCS", home_dir(docs, sizeof docs, "docs")},
            {"LUA", home_dir(lua, sizeof lua, "lua")},
            {"RUNSOURCE", strcmp(source, "*") == 0 ? engine_default_source() : source},
            {"CHECK", strcmp(source, "*") == 0 ? tpl_check_bundle : tpl_check_run},
            {NULL, NULL}};
        if (write_file(rule_path, tpl_rule, kv) || write_file(test_path, tpl_test, kv) ||
            write_file(doc_path, tpl_doc, kv))
            return EXIT_NOINPUT;
    }
    printf("\nNext: fill in check in %s, then run\n  optipipe rules test %s\n",
           rule_path, packdir);
    return EXIT_DONE;
}

static int rules_lint(cli_opts *o, const opt_cmd *cmd)
{
    rule_lint l = {NULL, 0, 0, NULL, NULL};
    size_t i;

    (void)cmd;
    for (i = 0; i < o->session.ninputs; i++)
        rule_lint_dir(&l, &o->session.rlimits, o->session.inputs[i]);
    if (!o->session.ninputs) {
        char root[PATH_MAX];
        snprintf(root, sizeof root, "%s/rules", op_home());
        rule_lint_packs(&l, &o->session.rlimits, root);
    }
    printf("%u problem(s) in %u rule(s)\n", l.problems, l.rules);
    return l.problems ? EXIT_FINDINGS : EXIT_DONE;
}

/* ---- test ------------------------------------------------------------------ */

static int rules_test(cli_opts *o, const opt_cmd *cmd)
{
    rule_test_opts to;
    rule_test t;
    op_error err;
    char root[PATH_MAX] = "the rule folders";
    size_t i;
    int code;

    (void)cmd;
    memset(&to, 0, sizeof to);
    to.plugin_path = o->session.plugin_path;
    to.limits = o->session.limits;
    to.rlimits = o->session.rlimits;
    to.out = stdout;
    to.keep = o->junit != NULL;
    rule_test_init(&t, &to);
    for (i = 0; i < o->session.ninputs; i++)
        rule_test_path(&t, o->session.inputs[i]);
    if (!o->session.ninputs) {
        snprintf(root, sizeof root, "%s/rules", op_home());
        rule_test_packs(&t, root);
    }
    printf("%u passed, %u failed\n", t.passed, t.failed);
    code = t.failed ? 1 : 0;
    if (!t.passed && !t.failed) { /* no pack at all: nothing was tested */
        diag_msg(DIAG_ERROR, "no rule tests found under %s", root);
        code = EXIT_NOINPUT;
    }
    op_error_clear(&err);
    if (o->junit && rule_test_junit(&t, o->junit, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        code = EXIT_NOINPUT;
    }
    rule_test_free(&t);
    return code;
}

/* ---- the run functions of the command table (cli_table.c) ---------------------- */

int cli_run_rules_list(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, rules_list_show);
}

int cli_run_rules_show(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, rules_list_show);
}

int cli_run_rules_new(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, rules_new);
}

int cli_run_rules_lint(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, rules_lint);
}

int cli_run_rules_test(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, rules_test);
}
