/*
 * main.c - the optipipe command line (docs/cli.md): the command table, the
 * analyze / normalize / plugins commands, and the exit codes:
 *   0 done, 1 findings at/above --fail-on, 2 usage error,
 *   3 no input could be read, 5 a rule failed (beats 1).
 * Results go to stdout (or -o FILE), diagnostics to stderr. The options
 * are described in cli_table.c (parsed by opts.c); every command runs the
 * one pipeline, op_session_run (core/session.h), through cli_session_run.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lua.h>

#include "cli.h"
#include "fetch.h"
#include "emit_changes.h"
#include "jsonw.h"
#include "model_json.h"
#include "report.h"
#include "util.h"

/* What `optipipe --help` says around the command list (main_help). */
static const char help_intro[] =
    "Usage: optipipe COMMAND [options] ...\n"
    "\n"
    "Reads Spark event logs, dbt artifacts and Flink REST exports, runs rules\n"
    "written in Lua over one metrics model and prints recommendations.\n"
    "\n"
    "Commands:\n";

static const char help_outro[] =
    "\n"
    "  optipipe --version | --help | COMMAND --help\n"
    "\n"
    "A config file optipipe.lua in the working directory or a parent up to\n"
    "the repository root (or --config FILE) enables, disables and tunes\n"
    "rules (docs/config.md); .optipipe-baseline.json, found the same way,\n"
    "holds the approved and dismissed findings (docs/baselines.md).\n"
    "\n"
    "Exit codes: 0 done, 1 findings at/above --fail-on, 2 usage error,\n"
    "3 no input could be read, 4 fetch incomplete, 5 a rule failed\n"
    "(--allow-rule-errors accepts it; 5 wins over 1).\n";

/* ---- analyze -------------------------------------------------------------- */

static int emit(const cli_opts *o, const op_session *s)
{
    op_error err;
    emit_stats st;

    if (!o->emit_dir)
        return 0;
    if (!o->emit_all && !s->baseline_path)
        return cli_usage_error("%s", "--emit-changes writes approved changes, and "
                               "no decisions file was found (.optipipe-baseline.json "
                               "here or in a parent folder): give --baseline FILE, "
                               "or --all");
    op_error_clear(&err);
    if (emit_changes(o->emit_dir, s->an.m, &s->res, &s->bl, o->emit_all,
                     stderr, &st, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return err.code == OP_EUSAGE ? EXIT_USAGE : EXIT_NOINPUT;
    }
    if (!o->quiet)
        diag_msg(DIAG_NOTE, "wrote %zu file(s) of changes to %s", st.nfiles,
                 o->emit_dir);
    if (st.nrefused) /* told even with -q: a change the rule asked for is missing */
        diag_msg(DIAG_ERROR, "%zu change(s) refused (above); the patches "
                 "say so where they would be", st.nrefused);
    return 0;
}

/* A rule that failed leaves its findings out: fail the run, say how to
 * accept it (told even with -q, like every error). */
static int rule_error_exit(size_t ne)
{
    diag_msg(DIAG_ERROR, "%zu rule error%s (listed in the report); exit %d "
             "(--allow-rule-errors to accept)", ne, ne == 1 ? "" : "s",
             EXIT_RULE_ERROR);
    return EXIT_RULE_ERROR;
}

static int cmd_analyze(int argc, char **argv)
{
    cli_opts o;
    op_session s;
    report_fn report;
    report_ctx rc;
    FILE *out = NULL;
    unsigned long t0 = cli_now_ms();
    int code;

    cli_opts_default(&o);
    if ((code = cli_parse_opts(&o, argc, argv, &cli_cmd_analyze)))
        return code;
    o.record = 1;
    report = report_find(o.format); /* the table's name: --format checked it */
    if (!o.ninputs)
        return cli_usage_error("%s", "analyze needs at least one INPUT");
    if (o.emit_all && !o.emit_dir)
        return cli_usage_error("%s", "--all goes with --emit-changes DIR");
    if ((code = cli_session_run(&s, &o, OP_SESSION_ALL)) || (code = emit(&o, &s)))
        goto out;
    out = cli_open_output(&o);
    if (!out) {
        code = EXIT_USAGE;
        goto out;
    }
    memset(&rc, 0, sizeof rc);
    rc.an = &s.an;
    rc.res = &s.res;
    rc.rs = s.rs;
    rc.out = out;
    rc.color = out == stdout && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    rc.show_suppressed = o.show_suppressed;
    rc.verbose = o.verbose;
    rc.elapsed_ms = cli_now_ms() - t0;
    rc.read_ms = s.t_read;
    rc.rules_ms = s.t_rules;
    rc.deterministic = o.deterministic;
    rc.fail_on = s.o.fail_on;
    op_session_applied(&s, &rc.applied);
    report(&rc);
    if (cli_close_output(&o, out))
        code = EXIT_NOINPUT;
    else if (s.res.ne && !s.o.allow_rule_errors)
        code = rule_error_exit(s.res.ne);
    else if (s.o.fail_on &&
             results_count_shown_at_least(&s.res, (severity)severity_parse(s.o.fail_on)))
        code = EXIT_FINDINGS;
out:
    op_session_free(&s);
    return code;
}

/* ---- normalize, plugins ------------------------------------------------------ */

static int cmd_normalize(int argc, char **argv)
{
    cli_opts o;
    op_session s;
    FILE *out;
    jw w;
    size_t i;
    int code = EXIT_DONE;

    cli_opts_default(&o);
    o.format = "json";
    if ((code = cli_parse_opts(&o, argc, argv, &cli_cmd_normalize)))
        return code;
    if (!o.ninputs)
        return cli_usage_error("%s", "normalize needs at least one INPUT");
    if ((code = cli_session_run(&s, &o, OP_SESSION_READ)))
        goto out;
    out = cli_open_output(&o);
    if (!out) {
        code = EXIT_USAGE;
        goto out;
    }
    jw_init(&w, out, 1);
    jw_obj(&w);
    jw_key(&w, "schema");
    jw_int(&w, 1);
    jw_key(&w, "runs");
    jw_arr(&w);
    for (i = 0; i < s.an.m->nruns; i++)
        model_json_run(&w, s.an.m->runs[i]);
    jw_arr_end(&w);
    jw_obj_end(&w);
    fputc('\n', out);
    if (cli_close_output(&o, out))
        code = EXIT_NOINPUT;
out:
    op_session_free(&s);
    return code;
}

static int cmd_plugins(int argc, char **argv)
{
    cli_opts o;
    analysis an;
    size_t i;
    int code;

    if (argc < 1 || strcmp(argv[0], "list") != 0)
        return cli_subcommand_help("plugins", argc, argv);
    cli_opts_default(&o);
    if ((code = cli_parse_opts(&o, argc - 1, argv + 1, &cli_cmd_plugins_list)))
        return code;
    if (o.ninputs)
        return cli_usage_error("plugins list takes no arguments ('%s')",
                               o.inputs[0]);
    if ((code = cli_open_plugins(&o, &an)))
        return code;
    for (i = 0; i < plugins_count(an.reg); i++) {
        const char *path = NULL;
        const op_plugin *p = plugins_get(an.reg, i, &path);
        printf("%-10s %-8s ABI %u.%u  %-10s %s\n", p->name, p->version,
               p->abi_major, p->abi_minor, path ? "external" : "built-in",
               p->description ? p->description : "");
        if (path)
            printf("           %s\n", path);
    }
    analysis_free(&an);
    return EXIT_DONE;
}

/* ---- dispatch ------------------------------------------------------------------ */

typedef struct command {
    const char *name;
    int (*main)(int argc, char **argv); /* argv: the words after the name */
} command;

/* One line per command; other files export `int x_main(int, char **)`. */
static const command commands[] = {
    {"analyze", cmd_analyze},
    {"normalize", cmd_normalize},
    {"review", review_main},
    {"baseline", baseline_main},
    {"rules", rules_main},
    {"plugins", cmd_plugins},
    {"fetch", fetch_main},
    {"history", history_main},
    {"diff", diff_main},
    {"serve", serve_cli_main},
};

/* `optipipe --help`: every command of the table above, each form of it
 * from cli_table.c (a command without one is still named). */
static void main_help(FILE *f)
{
    size_t i;

    fputs(help_intro, f);
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!cli_help_commands(f, commands[i].name))
            opts_help_row(f, commands[i].name, NULL);
    fputs(help_outro, f);
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    const char *names[sizeof commands / sizeof commands[0]];
    size_t i;

    if (!cmd) {
        main_help(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("optipipe %s (plugin ABI %d.%d, %s)\n", OP_VERSION,
               OP_ABI_MAJOR, OP_ABI_MINOR, LUA_RELEASE);
        return EXIT_DONE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        main_help(stdout);
        return EXIT_DONE;
    }
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].main(argc - 2, argv + 2);
        names[i] = commands[i].name;
    }
    return cli_unknown(cmd[0] == '-' ? "option" : "command", cmd,
                       util_suggest(cmd, names, i, 3), NULL);
}
