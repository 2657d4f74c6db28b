/*
 * cmd_rules.c - `optipipe rules list|show|test|new|lint`: the rule
 * author's commands (docs/writing-rules.md). `test` is in rules_test.c.
 *
 * `new` writes a scaffold that follows the bundled packs' layout: the rule
 * next to its test, its docs page under docs/. `lint` reads metadata and
 * the rule's text, never runs a check function.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "input.h"
#include "engine.h"
#include "lua_rule.h"

/* ---- list / show -------------------------------------------------------- */

typedef struct tok tok;
static size_t tokenize(const char *src, tok *out, size_t max);
static void emitted_severities(const rule_meta *r, int emits[3]);
static char *read_text(const char *path);

/* "warning" or "info|warning": the effective severity and those the
 * check may give a finding itself (ctx.report{severity = ...}). */
static const char *severities(const rule_meta *r, char *buf, size_t n)
{
    int emits[3] = {0, 0, 0}, s;
    size_t used = 0;

    if (!r->enabled)
        return "off";
    emitted_severities(r, emits);
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

static int rules_list_show(int argc, char **argv, int show)
{
    cli_opts o;
    op_session s;
    size_t i;
    int code;

    cli_opts_default(&o);
    if ((code = cli_parse_opts(&o, argc, argv,
                               show ? &cli_cmd_rules_show : &cli_cmd_rules_list)))
        return code;
    if (show && o.ninputs != 1)
        return cli_usage_error("%s", "rules show needs exactly one rule ID");
    if (!show && o.ninputs)
        return cli_usage_error("rules list takes no arguments ('%s')", o.inputs[0]);
    if ((code = cli_session_run(&s, &o, OP_SESSION_RULES)))
        goto out;
    if (show) {
        code = rules_show(s.rs, o.inputs[0], &s.cfg);
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
    FILE *f = fopen(path, "w");
    int bad;

    if (!f) {
        diag_msg(DIAG_ERROR, "%s: cannot write: %s", path, strerror(errno));
        return -1;
    }
    expand(f, tpl, kv);
    bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad)
        diag_msg(DIAG_ERROR, "%s: write failed", path);
    else
        printf("wrote %s\n", path);
    return bad ? -1 : 0;
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

/* A run's source is the name of the plugin that read it: --source must
 * name one (built-in, or on OPTIPIPE_PLUGIN_PATH), else the rule never
 * runs. "model" reads back any source, so it is not one itself. */
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
    for (i = 0; i < plugins_count(an.reg); i++) {
        const op_plugin *p = plugins_get(an.reg, i, NULL);
        if (strcmp(p->name, "model") == 0)
            continue;
        found |= strcmp(p->name, source) == 0;
        if (len < sizeof known)
            len += (size_t)snprintf(known + len, sizeof known - len, "%s%s",
                                    len ? ", " : "", p->name);
    }
    analysis_free(&an);
    if (found)
        return 0;
    diag_msg(DIAG_ERROR, "--source '%s': no plugin reads that source "
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

static int rules_new(int argc, char **argv)
{
    const char *source = engine_default_source(), *arg = NULL;
    char packdir[PATH_MAX], pack[PATH_MAX], name[128], id[128];
    char rule_path[PATH_MAX + 200], test_path[PATH_MAX + 200];
    char doc_dir[PATH_MAX + 10], doc_path[PATH_MAX + 600];
    const char *slash, *pb;
    struct stat st;
    cli_opts o;
    int i, force;

    cli_opts_default(&o);
    if ((i = cli_parse_opts(&o, argc, argv, &cli_cmd_rules_new)))
        return i;
    if (o.ninputs > 1)
        return cli_usage_error("rules new takes one PACK/NAME ('%s')", o.inputs[1]);
    arg = o.ninputs ? o.inputs[0] : NULL;
    source = o.source ? o.source : source;
    force = o.force;
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

/* ---- lint: reading a rule's text ------------------------------------------ */

#define LINT_MAX_NAMES 256

typedef struct names {
    char *v[LINT_MAX_NAMES];
    size_t n;
} names;

static void names_add(names *s, const char *p, size_t len)
{
    size_t i;

    if (s->n >= LINT_MAX_NAMES || len == 0 || len > 100)
        return;
    for (i = 0; i < s->n; i++)
        if (strlen(s->v[i]) == len && strncmp(s->v[i], p, len) == 0)
            return;
    if ((s->v[s->n] = strndup(p, len)))
        s->n++;
}

static int names_has(const names *s, const char *k)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        if (strcmp(s->v[i], k) == 0)
            return 1;
    return 0;
}

static void names_free(names *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

/* Lua source tokens: identifiers, strings (kind 's', text without the
 * quotes) and single punctuation characters. Comments are dropped. */
struct tok {
    char kind; /* 'n' name, 's' string, or the punctuation character */
    const char *p;
    size_t len;
};

/* Length of a long bracket opener "[==[" at p, or 0; *level = its '='s. */
static size_t long_open(const char *p, int *level)
{
    size_t i = 1;

    if (*p != '[')
        return 0;
    while (p[i] == '=')
        i++;
    if (p[i] != '[')
        return 0;
    *level = (int)(i - 1);
    return i + 1;
}

/* The closing "]==]" of a long bracket at p.., or the end of the text;
 * *body gets the length of what the brackets enclose. */
static const char *long_close(const char *p, int level, size_t *body)
{
    const char *start = p;

    for (; *p; p++)
        if (*p == ']') {
            int i = 1;
            while (p[i] == '=')
                i++;
            if (p[i] == ']' && i - 1 == level) {
                *body = (size_t)(p - start);
                return p + i + 1;
            }
        }
    *body = (size_t)(p - start);
    return p;
}

static size_t tokenize(const char *src, tok *out, size_t max)
{
    const char *p = src;
    size_t n = 0;
    int level;

    while (*p && n < max) {
        size_t open, body;
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (p[0] == '-' && p[1] == '-') {
            if ((open = long_open(p + 2, &level)))
                p = long_close(p + 2 + open, level, &body);
            else
                while (*p && *p != '\n')
                    p++;
        } else if ((open = long_open(p, &level))) {
            const char *start = p + open;
            p = long_close(start, level, &body);
            out[n++] = (tok){'s', start, body};
        } else if (*p == '"' || *p == '\'') {
            char q = *p++;
            const char *start = p;
            while (*p && *p != q && *p != '\n')
                p += (*p == '\\' && p[1]) ? 2 : 1;
            out[n++] = (tok){'s', start, (size_t)(p - start)};
            if (*p == q)
                p++;
        } else if (isalpha((unsigned char)*p) || *p == '_') {
            const char *start = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            out[n++] = (tok){'n', start, (size_t)(p - start)};
        } else if (isdigit((unsigned char)*p)) {
            while (isalnum((unsigned char)*p) || *p == '.')
                p++;
        } else {
            out[n++] = (tok){*p, p, 1};
            p++;
        }
    }
    return n;
}

static int is_name(const tok *t, const char *s)
{
    return t->kind == 'n' && strlen(s) == t->len && strncmp(t->p, s, t->len) == 0;
}

/* Whether tokens i.. are `ctx . options` followed by a separator. */
static int is_ctx_options(const tok *t, size_t n, size_t i)
{
    return i + 2 < n && is_name(&t[i], "ctx") && t[i + 1].kind == '.' &&
           is_name(&t[i + 2], "options") &&
           (i + 3 >= n || t[i + 3].kind == ',' || t[i + 3].kind == 'n' ||
            t[i + 3].kind == ')' || t[i + 3].kind == ';');
}

/* Block depth before each token: function/do/then/repeat open a block,
 * end/until close it; elseif continues the block its `if` opened. */
static void block_depths(const tok *t, size_t n, int *depth)
{
    size_t i;
    int d = 0;

    for (i = 0; i < n; i++) {
        depth[i] = d;
        if (is_name(&t[i], "function") || is_name(&t[i], "do") ||
            is_name(&t[i], "then") || is_name(&t[i], "repeat"))
            d++;
        else if (is_name(&t[i], "end") || is_name(&t[i], "until") ||
                 is_name(&t[i], "elseif"))
            d--;
    }
}

/* The severities named in `severity = <expression>` inside a function
 * (the metadata's own `severity` is outside any): "info", "warning",
 * "error" string literals up to the end of the expression (a ',' or '}'
 * outside brackets). A severity computed elsewhere (a variable) is not
 * seen. */
static void emitted_severities(const rule_meta *r, int emits[3])
{
    char *src = read_text(r->file);
    size_t cap, n = 0, i, j;
    tok *t = NULL;
    int *depth = NULL;

    if (!src)
        return;
    cap = strlen(src) + 1;
    t = malloc(cap * sizeof *t);
    depth = malloc(cap * sizeof *depth);
    if (t && depth) {
        n = tokenize(src, t, cap);
        block_depths(t, n, depth);
    }
    for (i = 0; i + 2 < n; i++) {
        int nest = 0;
        if (!depth[i] || !is_name(&t[i], "severity") || t[i + 1].kind != '=' ||
            t[i + 2].kind == '=')
            continue;
        for (j = i + 2; j < n && !(nest == 0 && (t[j].kind == ',' || t[j].kind == '}'));
             j++) {
            int s;
            nest += t[j].kind == '(' || t[j].kind == '{';
            nest -= t[j].kind == ')' || t[j].kind == '}';
            if (t[j].kind == 's' && t[j].len < 16) {
                char word[16];
                memcpy(word, t[j].p, t[j].len);
                word[t[j].len] = '\0';
                if ((s = severity_parse(word)) >= 0)
                    emits[s] = 1;
            }
        }
    }
    free(depth);
    free(t);
    free(src);
}

typedef struct alias {
    const tok *name;
    size_t from, to; /* token range where the name means ctx.options */
} alias;

/* The end of the scope of a local declared at token i: the end of its
 * block, or where a local of the same name shadows it. */
static size_t scope_end(const tok *t, size_t n, const int *depth, size_t i,
                        const tok *name)
{
    size_t j;

    for (j = i + 1; j < n; j++) {
        if (depth[j] < depth[i])
            return j;
        if (j + 1 < n && is_name(&t[j], "local") && t[j + 1].kind == 'n' &&
            t[j + 1].len == name->len && strncmp(t[j + 1].p, name->p, name->len) == 0)
            return j;
    }
    return n;
}

/* `local a, b = x, ctx.options` makes b an alias of ctx.options. */
static size_t find_aliases(const tok *t, size_t n, const int *depth,
                           alias *out, size_t max)
{
    size_t i, j, na = 0;

    for (i = 0; i < n && na < max; i++) {
        size_t lhs[16], nl = 0, k = 0;
        if (!is_name(&t[i], "local"))
            continue;
        for (j = i + 1; j < n && t[j].kind == 'n' && nl < 16; j++) {
            lhs[nl++] = j;
            if (j + 1 < n && t[j + 1].kind == ',')
                j++;
            else {
                j++;
                break;
            }
        }
        if (j >= n || t[j].kind != '=')
            continue;
        for (j++; j < n && k < nl && na < max; k++) {
            size_t start = j;
            while (j < n && (t[j].kind == 'n' || t[j].kind == '.') &&
                   !is_name(&t[j], "local") && !is_name(&t[j], "if") &&
                   !is_name(&t[j], "for") && !is_name(&t[j], "return"))
                j++;
            if (is_ctx_options(t, n, start) && j - start == 3) {
                out[na].name = &t[lhs[k]];
                out[na].from = lhs[k];
                out[na].to = scope_end(t, n, depth, i, &t[lhs[k]]);
                na++;
            }
            if (j >= n || t[j].kind != ',')
                break;
            j++;
        }
    }
    return na;
}

static int via_alias(const alias *a, size_t na, const tok *name, size_t at)
{
    size_t i;

    for (i = 0; i < na; i++)
        if (at > a[i].from && at < a[i].to && a[i].name->len == name->len &&
            strncmp(a[i].name->p, name->p, name->len) == 0)
            return 1;
    return 0;
}

/* Field names read through ctx.options (or an alias of it in scope), and
 * every field name accessed anywhere (".x", "[\"x\"]"). */
static void scan_source(const char *src, names *used, names *fields)
{
    size_t cap = strlen(src) + 1, n, i, na;
    tok *t = malloc(cap * sizeof *t);
    int *depth = malloc(cap * sizeof *depth);
    alias aliases[64];

    if (!t || !depth)
        goto out;
    n = tokenize(src, t, cap);
    block_depths(t, n, depth);
    na = find_aliases(t, n, depth, aliases, 64);
    for (i = 0; i + 1 < n; i++) {
        const tok *key = NULL;
        int via = 0;
        if (t[i].kind == '.' && t[i + 1].kind == 'n')
            key = &t[i + 1];
        else if (t[i].kind == '[' && t[i + 1].kind == 's' && i + 2 < n &&
                 t[i + 2].kind == ']')
            key = &t[i + 1];
        if (!key)
            continue;
        names_add(fields, key->p, key->len);
        if (i < 1 || t[i - 1].kind != 'n')
            continue;
        if (is_name(&t[i - 1], "options") && i >= 3 && t[i - 2].kind == '.' &&
            is_name(&t[i - 3], "ctx"))
            via = 1;
        else if ((i < 2 || t[i - 2].kind != '.') &&
                 via_alias(aliases, na, &t[i - 1], i - 1))
            via = 1;
        if (via)
            names_add(used, key->p, key->len);
    }
out:
    free(depth);
    free(t);
}

/* A rule or module file's text, or NULL when it cannot be read (lrule_load
 * refuses rule files over the same cap). */
static char *read_text(const char *path)
{
    op_error e;
    size_t n;

    return input_read_file(path, LRULE_FILE_MAX, &n, &e);
}

/* Every field name accessed in the pack's lib/ modules: options handed
 * to a library may be read there. */
static void scan_libs(const char *dir, names *fields)
{
    char lib[PATH_MAX + 8], path[PATH_MAX * 2];
    struct dirent *de;
    names ignore = {{0}, 0};
    DIR *d;

    snprintf(lib, sizeof lib, "%s/lib", dir);
    if (!(d = opendir(lib)))
        return;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        char *src;
        if (l < 5 || strcmp(de->d_name + l - 4, ".lua") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", lib, de->d_name);
        if ((src = read_text(path))) {
            scan_source(src, &ignore, fields);
            free(src);
        }
    }
    closedir(d);
    names_free(&ignore);
}

/* ---- lint: checks ------------------------------------------------------------ */

typedef struct lint {
    unsigned problems, rules;
} lint;

static void problem(lint *l, const char *file, const char *id, const char *fmt,
                    const char *arg)
{
    if (id)
        printf("%s: %s: ", file, id);
    else
        printf("%s: ", file);
    printf(fmt, arg);
    putchar('\n');
    l->problems++;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A page `rules new` wrote and nobody finished still says TODO. */
static void check_todo(lint *l, const char *page, const rule_meta *r)
{
    char *text = read_text(page), *p, where[PATH_MAX + 300];
    unsigned line = 1;

    if (!text)
        return;
    if ((p = strstr(text, "TODO"))) {
        for (char *q = text; q < p; q++)
            line += *q == '\n';
        snprintf(where, sizeof where, "%s:%u", page, line);
        problem(l, r->file, r->id, "docs page %s still says TODO", where);
    }
    free(text);
}

/* The docs page: <pack>/docs/<id>.md, or for the bundled packs
 * <pack>/../../docs/rules/<id>.md (the source tree) or
 * <home>/docs/rules/<id>.md (an installation). */
static void check_docs(lint *l, const char *dir, const rule_meta *r)
{
    char a[PATH_MAX + 256], b[PATH_MAX + 256];

    char c[PATH_MAX + 256];

    snprintf(a, sizeof a, "%s/docs/%s.md", dir, r->id);
    snprintf(b, sizeof b, "%s/../../docs/rules/%s.md", dir, r->id);
    snprintf(c, sizeof c, "%s/docs/rules/%s.md", op_home(), r->id);
    if (!exists(a) && !exists(b) && !exists(c))
        problem(l, r->file, r->id, "no docs page (write %s)", a);
    else
        check_todo(l, exists(a) ? a : exists(b) ? b : c, r);
}

static void check_test(lint *l, const rule_meta *r)
{
    char t[PATH_MAX + 16];
    size_t n = strlen(r->file);

    if (n < 4)
        return;
    snprintf(t, sizeof t, "%.*s_test.lua", (int)(n - 4), r->file);
    if (!exists(t))
        problem(l, r->file, r->id, "no test file (write %s)", t);
}

static void check_options(lint *l, const rule_meta *r, const names *lib_fields)
{
    names used = {{0}, 0}, fields = {{0}, 0};
    const cJSON *o;
    char *src = read_text(r->file);
    size_t i;

    if (!src)
        return;
    scan_source(src, &used, &fields);
    for (i = 0; i < used.n; i++)
        if (!cJSON_GetObjectItemCaseSensitive(r->options, used.v[i]))
            problem(l, r->file, r->id,
                    "option '%s' is read but has no default in options", used.v[i]);
    cJSON_ArrayForEach(o, r->options)
        if (!names_has(&fields, o->string) && !names_has(lib_fields, o->string))
            problem(l, r->file, r->id, "option '%s' is declared but never read",
                    o->string);
    names_free(&used);
    names_free(&fields);
    free(src);
}

/* Packs are loaded as analyze loads them: untrusted, isolated under
 * --isolate auto, with the rule limits (a stalling pack ends in an error). */
static void lint_dir(lint *l, const rule_limits *lim, const char *dir)
{
    char lua_dir[PATH_MAX];
    ruleset *rs;
    results errs;
    op_error err;
    names lib_fields = {{0}, 0};
    size_t i;

    snprintf(lua_dir, sizeof lua_dir, "%s/lua", op_home());
    results_init(&errs);
    op_error_clear(&err);
    rs = ruleset_new(lim);
    if (!rs || ruleset_load_dir(rs, dir, dir, lua_dir, 0, &errs, &err)) {
        problem(l, dir, NULL, "%s", rs ? err.msg : "out of memory");
        goto out;
    }
    for (i = 0; i < errs.ne; i++)
        problem(l, dir, errs.e[i].rule, "does not load: %s", errs.e[i].error);
    scan_libs(dir, &lib_fields);
    for (i = 0; i < ruleset_count(rs); i++) {
        rule_meta *r = ruleset_rule(rs, i);
        l->rules++;
        check_docs(l, dir, r);
        check_test(l, r);
        check_options(l, r, &lib_fields);
    }
out:
    names_free(&lib_fields);
    ruleset_free(rs);
    results_free(&errs);
}

static int rules_lint(int argc, char **argv)
{
    lint l = {0, 0};
    cli_opts o;
    size_t i;
    int code;

    cli_opts_default(&o);
    if ((code = cli_parse_opts(&o, argc, argv, &cli_cmd_rules_lint)))
        return code;
    for (i = 0; i < o.ninputs; i++)
        lint_dir(&l, &o.rlimits, o.inputs[i]);
    if (!o.ninputs) {
        char root[PATH_MAX], dir[PATH_MAX * 2];
        struct dirent *de;
        DIR *d;
        snprintf(root, sizeof root, "%s/rules", op_home());
        if ((d = opendir(root))) {
            while ((de = readdir(d))) {
                struct stat st;
                snprintf(dir, sizeof dir, "%s/%s", root, de->d_name);
                if (de->d_name[0] != '.' && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
                    lint_dir(&l, &o.rlimits, dir);
            }
            closedir(d);
        }
    }
    printf("%u problem(s) in %u rule(s)\n", l.problems, l.rules);
    return l.problems ? EXIT_FINDINGS : EXIT_DONE;
}

/* ---- dispatch -------------------------------------------------------------------- */

int rules_main(int argc, char **argv)
{
    cli_opts o;

    if (argc < 1)
        return cli_subcommand_help("rules", argc, argv);
    if (strcmp(argv[0], "list") == 0)
        return rules_list_show(argc - 1, argv + 1, 0);
    if (strcmp(argv[0], "show") == 0)
        return rules_list_show(argc - 1, argv + 1, 1);
    if (strcmp(argv[0], "new") == 0)
        return rules_new(argc - 1, argv + 1);
    if (strcmp(argv[0], "lint") == 0)
        return rules_lint(argc - 1, argv + 1);
    if (strcmp(argv[0], "test") == 0) {
        cli_opts_default(&o);
        return rules_test_main(&o, argc - 1, argv + 1);
    }
    return cli_subcommand_help("rules", argc, argv);
}
