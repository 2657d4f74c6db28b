/*
 * test_opts.c - the option parser and help writer (core/opts.c) on a table
 * of its own, optipipe's own tables (core/cli_table.c: every --format is a
 * reporter, every command parses its --help), and the helpers of
 * core/util.c they use (edit distance, suggestions, array growth).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_table.h"
#include "engine.h"
#include "opts.h"
#include "report.h"
#include "util.h"

typedef struct demo {
    int flag;
    const char *name, *mode;
    unsigned small;
    uint64_t big;
    double ratio;
    const char **tags; /* grown by opts_parse, freed by opts_free */
    size_t ntags;
    const char **words;
    size_t nwords;
    int scaled;
} demo;

static const char *mode_at(size_t i)
{
    static const char *const v[] = {"fast", "safe", "slow"};
    return i < 3 ? v[i] : NULL;
}

static int set_scaled(void *base, const opt_spec *o, const opt_value *v,
                      op_error *err)
{
    ((demo *)base)->scaled = (int)v->u * 10;
    return 0;
}

#define F(f) .off = offsetof(demo, f), .width = sizeof(((demo *)0)->f)
static const opt_spec demo_specs[] = {
    {"--flag", "-f", .type = OPT_FLAG, F(flag), .help = "a flag"},
    {"--name", "-n", .type = OPT_STRING, F(name), .metavar = "NAME",
     .help = "a name"},
    {"--mode", NULL, .type = OPT_ENUM, F(mode), .choice = mode_at,
     .metavar = "MODE", .def = "safe", .help = "how"},
    {"--small", NULL, .type = OPT_INT, F(small), .lo = 1, .hi = 100,
     .metavar = "N", .def = "5", .help = "a count"},
    {"--big", NULL, .type = OPT_SIZE, F(big), .metavar = "BYTES",
     .help = "a size"},
    {"--ratio", NULL, .type = OPT_DOUBLE, F(ratio), .lo = 0, .hi = 1,
     .metavar = "R", .help = "a ratio"},
    {"--tag", NULL, .type = OPT_LIST, F(tags), .count_off = offsetof(demo, ntags),
     .max = 2, .metavar = "T", .help = "a tag"},
    {"--scaled", NULL, .type = OPT_INT, .set = set_scaled, .hi = 9,
     .metavar = "N", .help = "times ten"},
    {.name = NULL}};
static const opt_group demo_group = {"Options", demo_specs, NULL, NULL};
static const opt_cmd demo_cmd = {
    "demo", "[options] WORD...", "a demo", "About the demo.",
    {&demo_group, NULL}, NULL,
    {.name = "operand", .metavar = "WORD", .type = OPT_LIST,
     .off = offsetof(demo, words), .count_off = offsetof(demo, nwords),
     .max = 3}, NULL, NULL};

/* Parses the words of line (space-separated, at most 32) into d. */
static int parse(demo *d, const char *line, op_error *err)
{
    static char buf[512];
    char *argv[32], *save = NULL, *w;
    int argc = 0;

    memset(d, 0, sizeof *d);
    op_error_clear(err);
    snprintf(buf, sizeof buf, "%s", line);
    for (w = strtok_r(buf, " ", &save); w && argc < 32; w = strtok_r(NULL, " ", &save))
        argv[argc++] = w;
    return opts_parse(&demo_cmd, d, argc, argv, err);
}

static void bad(const char *line, const char *msg)
{
    demo d;
    op_error err;

    assert_int_equal(parse(&d, line, &err), OP_EUSAGE);
    opts_free(&demo_cmd, &d);
    if (!strstr(err.msg, msg))
        fail_msg("'%s': expected '%s' in '%s'", line, msg, err.msg);
}

static void test_values(void **state)
{
    demo d;
    op_error err;

    (void)state;
    assert_int_equal(parse(&d, "-f --name x --mode slow --small 7 --big 2k "
                               "--ratio 0.5 --tag a --tag b w1 - w2", &err), 0);
    assert_int_equal(d.flag, 1);
    assert_string_equal(d.name, "x");
    assert_string_equal(d.mode, "slow");
    assert_int_equal(d.small, 7);
    assert_int_equal(d.big, 2048);
    assert_true(d.ratio == 0.5);
    assert_int_equal(d.ntags, 2);
    assert_string_equal(d.tags[1], "b");
    assert_int_equal(d.nwords, 3);
    assert_string_equal(d.words[1], "-");
    /* the enum stores the table's own string, not argv's */
    assert_ptr_equal(d.mode, mode_at(2));
    opts_free(&demo_cmd, &d);
    assert_null(d.tags);
    assert_int_equal(d.ntags, 0);
    assert_null(d.words);
}

static void test_equals_form(void **state)
{
    demo d;
    op_error err;

    (void)state;
    assert_int_equal(parse(&d, "--name=a=b --mode=fast --big=1MiB --small=100 "
                               "--tag= --scaled=3", &err), 0);
    assert_string_equal(d.name, "a=b"); /* only the first '=' splits */
    assert_string_equal(d.mode, "fast");
    assert_int_equal(d.big, 1048576);
    assert_int_equal(d.small, 100);
    assert_int_equal(d.ntags, 1);
    assert_string_equal(d.tags[0], "");
    assert_int_equal(d.scaled, 30);
    opts_free(&demo_cmd, &d);
    bad("--flag=1", "--flag takes no value");
}

static void test_end_of_options(void **state)
{
    demo d;
    op_error err;

    (void)state;
    assert_int_equal(parse(&d, "-- --flag -x", &err), 0);
    assert_int_equal(d.flag, 0);
    assert_int_equal(d.nwords, 2);
    assert_string_equal(d.words[0], "--flag");
    opts_free(&demo_cmd, &d);
    assert_int_equal(parse(&d, "w --help --bogus", &err), OPTS_HELP);
    opts_free(&demo_cmd, &d);
    assert_int_equal(parse(&d, "-h", &err), OPTS_HELP);
}

static void test_mistakes(void **state)
{
    (void)state;
    bad("--nme x", "unknown option '--nme' (did you mean '--name'?)");
    bad("--nmae=x", "unknown option '--nmae' (did you mean '--name'?)");
    bad("--zzzzzz", "unknown option '--zzzzzz'");
    bad("-x", "unknown option '-x'");
    bad("--name", "option --name needs a value");
    bad("--mode slwo", "--mode takes fast, safe or slow, not 'slwo' (did you mean 'slow'?)");
    bad("--mode yaml", "--mode takes fast, safe or slow, not 'yaml'");
    bad("--small 0", "--small: expected a whole number from 1 to 100, not '0'");
    bad("--small 101", "from 1 to 100");
    bad("--small 5x", "not '5x'");
    bad("--small -1", "not '-1'");
    bad("--big 5q", "--big: expected a size such as 1048576 or 64m");
    bad("--big 99999999999999999999", "expected a size");
    bad("--ratio 2", "--ratio: expected a number from 0 to 1, not '2'");
    bad("--tag a --tag b --tag c", "at most 2 --tag options");
    bad("a b c d", "at most 3 WORDs");
    bad("--scaled 10", "from 0 to 9");
}

/* A field of 4 bytes takes no more than 4 bytes can hold. */
static void test_width(void **state)
{
    static const opt_spec s[] = {
        {"--u", NULL, .type = OPT_SIZE, F(small), .metavar = "N"},
        {.name = NULL}};
    static const opt_group g = {"Options", s, NULL, NULL};
    static const opt_cmd c = {"w", NULL, NULL, NULL, {&g, NULL}, NULL,
                              {.name = "operand", .metavar = "W", .type = OPT_LIST,
                               .off = offsetof(demo, words),
                               .count_off = offsetof(demo, nwords), .max = 3},
                              NULL, NULL};
    char a0[] = "--u", a1[] = "4g", a2[] = "4294967295";
    char *argv[] = {a0, a1};
    demo d;
    op_error err;

    (void)state;
    memset(&d, 0, sizeof d);
    assert_int_equal(opts_parse(&c, &d, 2, argv, &err), OP_EUSAGE);
    argv[1] = a2;
    assert_int_equal(opts_parse(&c, &d, 2, argv, &err), 0);
    assert_int_equal(d.small, 4294967295u);
}

static void test_help(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    (void)state;
    assert_non_null(f);
    opts_help(&demo_cmd, "prog", f);
    fclose(f);
    assert_non_null(strstr(buf, "Usage: prog demo [options] WORD...\n"));
    assert_non_null(strstr(buf, "\nAbout the demo.\n"));
    assert_non_null(strstr(buf, "  -f, --flag            a flag\n"));
    assert_non_null(strstr(buf, "  --mode MODE           how: fast, safe (default), slow\n"));
    assert_non_null(strstr(buf, "  --small N             a count (default 5)\n"));
    assert_non_null(strstr(buf, "  --tag T               a tag (repeatable)\n"));
    assert_non_null(strstr(buf, "  -h, --help"));
    free(buf);
}

/* optipipe's own tables: --format lists exactly the reporters, every
 * command knows --help, and no option is given twice in one command. */
static void test_cli_tables(void **state)
{
    const opt_spec *fmt = opts_find(&cli_cmd_analyze, "--format");
    size_t i, j, k, g, n;

    (void)state;
    assert_non_null(fmt);
    for (i = 0; report_format_name(i); i++)
        assert_string_equal(fmt->choice(i), report_format_name(i));
    assert_null(fmt->choice(i));
    assert_string_equal(fmt->def, report_format_name(0));
    for (i = 0; cli_commands()[i]; i++) {
        const opt_cmd *c = cli_commands()[i];
        const opt_group *gr;
        const char *names[256];
        cli_opts o;
        op_error err;
        char h[] = "--help";
        char *argv[] = {h};

        cli_opts_default(&o);
        assert_non_null(c->run);
        assert_int_equal(opts_parse(c, &o, 1, argv, &err), OPTS_HELP);
        opts_free(c, &o);
        for (n = 0, g = 0; (gr = opts_group_at(c, g)) != NULL; g++)
            for (k = 0; gr->specs[k].name; k++) {
                const opt_spec *s = &gr->specs[k];
                assert_non_null(s->help);
                assert_true(n < 256);
                names[n++] = s->name;
            }
        for (j = 0; j < n; j++)
            for (k = j + 1; k < n; k++)
                if (strcmp(names[j], names[k]) == 0)
                    fail_msg("%s: %s twice", c->name, names[j]);
    }
}

/* The pipeline's options land in the op_session_opts their rows bind
 * to (cli_opts.session), with nothing copied in between. */
static void test_cli_session_binding(void **state)
{
    char w[][40] = {"--rules", "r1", "--rules", "r2", "--pack", "spark",
                    "--no-bundled", "--config", "c.lua", "--fail-on",
                    "warning", "--allow-rule-errors", "--baseline", "b.json",
                    "--history", "h.db", "--plugin-path", "p", "--max-line",
                    "1k", "-v", "--rule-timeout-ms", "9", "a", "b"};
    char *argv[25];
    cli_opts o;
    op_error err;
    size_t i;

    (void)state;
    for (i = 0; i < 25; i++)
        argv[i] = w[i];
    cli_opts_default(&o);
    assert_int_equal(opts_parse(&cli_cmd_analyze, &o, 25, argv, &err), 0);
    assert_int_equal(o.session.nrules_dirs, 2);
    assert_string_equal(o.session.rules_dirs[1], "r2");
    assert_int_equal(o.session.npacks, 1);
    assert_string_equal(o.session.packs[0], "spark");
    assert_int_equal(o.session.no_bundled, 1);
    assert_string_equal(o.session.config_path, "c.lua");
    assert_string_equal(o.session.fail_on, "warning");
    assert_int_equal(o.session.allow_rule_errors, 1);
    assert_string_equal(o.session.baseline, "b.json");
    assert_string_equal(o.session.history, "h.db");
    assert_string_equal(o.session.plugin_path, "p");
    assert_int_equal(o.session.limits.max_line, 1024);
    assert_int_equal(o.session.verbose, 1);
    assert_int_equal(o.session.rlimits.timeout_ms, 9);
    assert_int_equal(o.session.ninputs, 2);
    assert_string_equal(o.session.inputs[1], "b");
    opts_free(&cli_cmd_analyze, &o);
}

/* The values cli_opts gets are the ones the old parser gave. */
static void test_cli_values(void **state)
{
    char w[][40] = {"--rule-memory-mb", "2", "--isolate", "never",
                    "--rule-pack-timeout-ms=5", "--timeout", "1.5",
                    "--header", "X: 1", "-q", "in.json"};
    char *argv[11];
    cli_opts o;
    op_error err;
    size_t i;

    (void)state;
    for (i = 0; i < 11; i++)
        argv[i] = w[i];
    cli_opts_default(&o);
    assert_int_equal(opts_parse(&cli_cmd_analyze, &o, 11, argv, &err), 0);
    assert_int_equal(o.session.rlimits.mem_bytes, 2u << 20);
    assert_int_equal(o.session.rlimits.isolate, 0);
    assert_int_equal(o.session.rlimits.pack_timeout_ms, 5);
    assert_int_equal(o.session.pack_timeout_set, 1);
    assert_true(o.fetch.timeout_s == 1.5);
    assert_int_equal(o.fetch.nheaders, 1);
    assert_string_equal(o.fetch.headers[0], "X: 1");
    assert_int_equal(o.session.quiet, 1);
    assert_int_equal(o.session.ninputs, 1);
    assert_string_equal(o.format, "text");
    opts_free(&cli_cmd_analyze, &o);
}

/* A command's words and a repeatable option are lists that grow (no
 * array of the limit's size in every cli_opts): every word up to the
 * limit is kept in order, one more is a usage error naming the limit,
 * never a silent drop; opts_free empties them. */
static void test_list_growth(void **state)
{
    static char words[CLI_MAX_INPUTS + 1][12];
    static char *argv[CLI_MAX_INPUTS + 3];
    cli_opts o;
    op_error err;
    size_t i;
    char hdr[] = "--header", h1[] = "A: 1";

    (void)state;
    for (i = 0; i <= CLI_MAX_INPUTS; i++) {
        snprintf(words[i], sizeof words[i], "in%zu", i);
        argv[i + 2] = words[i];
    }
    argv[0] = hdr;
    argv[1] = h1;
    cli_opts_default(&o);
    assert_int_equal(opts_parse(&cli_cmd_analyze, &o, CLI_MAX_INPUTS + 2,
                                argv, &err), 0);
    assert_int_equal(o.session.ninputs, CLI_MAX_INPUTS);
    for (i = 0; i < CLI_MAX_INPUTS; i++)
        assert_string_equal(o.session.inputs[i], words[i]);
    assert_int_equal(o.fetch.nheaders, 1);
    assert_string_equal(o.fetch.headers[0], "A: 1");
    opts_free(&cli_cmd_analyze, &o);
    assert_null(o.session.inputs);
    assert_int_equal(o.session.ninputs, 0);
    assert_null(o.fetch.headers);
    assert_int_equal(o.fetch.nheaders, 0);

    cli_opts_default(&o);
    op_error_clear(&err);
    assert_int_equal(opts_parse(&cli_cmd_analyze, &o, CLI_MAX_INPUTS + 3,
                                argv, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "at most 65536 INPUTs"));
    opts_free(&cli_cmd_analyze, &o);
}

/* A group with bind stores into the struct bind gives (an engine's own
 * options inside the command's), and opts_defaults fills what a row's
 * default says. */
typedef struct outer {
    int quiet;
    demo inner;
} outer;

static void *bind_inner(void *base, const void *ctx)
{
    (void)ctx;
    return &((outer *)base)->inner;
}

static void test_bind_and_defaults(void **state)
{
    static const opt_spec q[] = {
        {"--quiet", NULL, .type = OPT_FLAG, .off = offsetof(outer, quiet),
         .width = sizeof(int), .help = "q"},
        {.name = NULL}};
    static const opt_group gq = {"Messages", q, NULL, NULL};
    static const opt_group gi = {"Inner", demo_specs, bind_inner, NULL};
    static const opt_cmd c = {"o", NULL, NULL, NULL, {&gq, &gi, NULL}, NULL,
                              {.name = "operand", .metavar = "W",
                               .type = OPT_LIST,
                               .off = offsetof(outer, inner.words),
                               .count_off = offsetof(outer, inner.nwords),
                               .max = 3}, NULL, NULL};
    char a0[] = "--quiet", a1[] = "--small", a2[] = "7";
    char *argv[] = {a0, a1, a2};
    outer x;
    op_error err;

    (void)state;
    memset(&x, 0, sizeof x);
    opts_defaults(demo_specs, &x.inner);
    assert_int_equal(x.inner.small, 5); /* the row's .def */
    assert_string_equal(x.inner.mode, "safe");
    assert_int_equal(opts_parse(&c, &x, 3, argv, &err), 0);
    assert_int_equal(x.quiet, 1);
    assert_int_equal(x.inner.small, 7);
}

/* Every engine option reaches the engine's struct through analyze (URL
 * inputs) when its fetch reads into memory, and through its own fetch
 * command; the fetch commands come from the engine table. */
static void test_engine_options(void **state)
{
    const op_engine *e;
    size_t i, nfetch = 0, k;

    (void)state;
    for (i = 0; (e = op_builtin_engines[i]) != NULL; i++) {
        const op_engine_options *eo = ENGINE_HAS(e, options) ? e->options : NULL;
        char name[80];
        const opt_cmd *fc = NULL;
        if (!e->fetch)
            continue;
        nfetch++;
        snprintf(name, sizeof name, "fetch %s", e->fetch->name);
        for (k = 0; cli_commands()[k]; k++)
            if (strcmp(cli_commands()[k]->name, name) == 0)
                fc = cli_commands()[k];
        assert_non_null(fc);
        for (k = 0; eo && eo->specs[k].name; k++) {
            assert_non_null(opts_find(fc, eo->specs[k].name));
            if (e->fetch->to_memory)
                assert_non_null(opts_find(&cli_cmd_analyze, eo->specs[k].name));
        }
    }
    assert_true(nfetch >= 2);
}

static void test_suggest(void **state)
{
    const char *c[] = {"analyze", "normalize", "review", NULL, "fetch"};

    (void)state;
    assert_int_equal(util_edit_distance("abc", "abc"), 0);
    assert_int_equal(util_edit_distance("lsit", "list"), 1); /* a swap */
    assert_int_equal(util_edit_distance("", "abc"), 3);
    assert_string_equal(util_suggest("analyse", c, 5, 3), "analyze");
    assert_string_equal(util_suggest("fecth", c, 5, 3), "fetch");
    assert_null(util_suggest("frobnicate", c, 5, 3));
    assert_null(util_suggest("analyze", c, 5, 3)); /* the same word: no hint */
    assert_null(util_suggest("xy", c, 5, 3));
}

static void test_grow(void **state)
{
    int *v = NULL;
    size_t cap = 0, i;

    (void)state;
    for (i = 0; i < 100; i++) {
        assert_int_equal(OP_GROW(v, cap, i + 1, 4), 0);
        v[i] = (int)i;
    }
    assert_int_equal(cap, 128);
    assert_int_equal(v[99], 99);
    /* an element count whose bytes overflow size_t fails, nothing lost */
    assert_int_equal(OP_GROW(v, cap, SIZE_MAX / 2, 4), OP_ENOMEM);
    assert_int_equal(cap, 128);
    assert_int_equal(v[99], 99);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_list_growth),
        cmocka_unit_test(test_cli_session_binding),
        cmocka_unit_test(test_equals_form),
        cmocka_unit_test(test_end_of_options),
        cmocka_unit_test(test_mistakes),
        cmocka_unit_test(test_width),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_cli_tables),
        cmocka_unit_test(test_cli_values),
        cmocka_unit_test(test_suggest),
        cmocka_unit_test(test_bind_and_defaults),
        cmocka_unit_test(test_engine_options),
        cmocka_unit_test(test_grow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
