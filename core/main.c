/*
 * main.c - the optipipe command line (DESIGN §7): the command table, the
 * analyze / normalize / plugins commands, and the exit codes:
 *   0 done, 1 findings at/above --fail-on, 2 usage error,
 *   3 no input could be read, 5 a rule failed (beats 1).
 * Results go to stdout (or -o FILE), diagnostics to stderr. Option parsing
 * and the analysis session shared with review and baseline are in cli.c.
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

static const char usage_main[] =
    "Usage: optipipe COMMAND [options] ...\n"
    "\n"
    "Reads Spark event logs, dbt artifacts and Flink REST exports, runs rules\n"
    "written in Lua over one metrics model and prints recommendations.\n"
    "\n"
    "Commands:\n"
    "  analyze [options] INPUT...   analyze files, directories or '-'\n"
    "  normalize [--format json] INPUT...\n"
    "                               print the model exactly as rules see it\n"
    "  review INPUT...              approve or dismiss findings one by one\n"
    "  baseline create|update INPUT... [-o FILE]\n"
    "                               record decisions without asking\n"
    "  rules list                   list the rules that would run\n"
    "  rules show ID                show a rule's metadata and options\n"
    "  rules test [DIR|FILE...]     run rule tests (*_test.lua)\n"
    "  rules new PACK/NAME          write a new rule, its test and docs page\n"
    "  rules lint [DIR...]          check rule metadata without running rules\n"
    "  plugins list                 list input plugins\n"
    "  history jobs|runs JOB|show RUN|prune\n"
    "                               what the run store holds (docs/history.md)\n"
    "  diff A B                     what changed between two runs (inputs or\n"
    "                               stored runs such as JOB@previous)\n"
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

static const char usage_analyze[] =
    "Usage: optipipe analyze [options] INPUT...\n"
    "\n"
    "INPUT is a file, a directory (walked recursively, hidden files skipped,\n"
    "engines may be mixed) or '-' for standard input.\n"
    "\n"
    "Options:\n"
    "  --format FMT         text (default), json, markdown, sarif, junit, html\n"
    "  -o, --output FILE    write the report to FILE instead of stdout\n"
    "  --rules DIR          add a folder of user rules (repeatable)\n"
    "  --pack NAME          only this bundled pack (repeatable)\n"
    "  --no-bundled         no bundled pack: only the --rules folders\n"
    "  --config FILE        the config file (default: the nearest optipipe.lua,\n"
    "                       here or in a parent up to the repository root)\n"
    "  --no-config          no config file\n"
    "  --fail-on LEVEL      exit 1 when a finding at or above LEVEL exists\n"
    "                       (info, warning, error)\n"
    "  --allow-rule-errors  a rule that failed does not fail the run\n"
    "                       (otherwise exit 5)\n"
    "  --baseline FILE      hide findings approved or dismissed in FILE\n"
    "                       (default: the config's, else the nearest\n"
    "                       .optipipe-baseline.json, found like the config)\n"
    "  --no-baseline        read no decisions file\n"
    "  --history FILE       record this analysis in the SQLite run store FILE\n"
    "                       and give rules the earlier runs of each job\n"
    "                       (default: OPTIPIPE_HISTORY, else the config's\n"
    "                       history; docs/history.md)\n"
    "  --show-suppressed    show them anyway, marked\n"
    "  --emit-changes DIR   write the approved findings' changes as config\n"
    "                       patches into DIR (needs a decisions file, or --all)\n"
    "  --all                with --emit-changes: every finding's changes\n"
    "  --plugin-path DIRS   ':'-separated folders of .so plugins\n"
    "                       (also OPTIPIPE_PLUGIN_PATH)\n"
    "  --max-line BYTES     longest input line accepted (default 256 MiB)\n"
    "  --max-bytes BYTES    decompressed bytes per input (default 64 GiB)\n"
    "  --rule-timeout-ms N  wall clock per rule call (default 2000)\n"
    "  --rule-memory-mb N   memory per rule pack (default 64)\n"
    "  --rule-instructions N  VM instructions per rule call (default 1e8)\n"
    "  --isolate MODE       auto (user packs in a worker), always, never\n"
    "  --deterministic      zero volatile fields (elapsed time) in reports\n"
    "  -q, --quiet          no progress, notices or warnings on stderr\n"
    "                       (errors are always printed)\n"
    "  -v, --verbose        name every file skipped (not just how many);\n"
    "                       text: show each finding's evidence\n";

static const char usage_normalize[] =
    "Usage: optipipe normalize [--format json] [-o FILE] INPUT...\n"
    "\n"
    "Prints {\"schema\": 1, \"runs\": [...]} with every run and node exactly\n"
    "as rules see them (docs/model.md). optipipe reads that output back\n"
    "as an input, so a saved or hand-edited model can be analyzed again.\n";

static const char usage_plugins[] =
    "Usage: optipipe plugins list [--plugin-path DIRS]\n";

/* ---- analyze -------------------------------------------------------------- */

static int emit(const cli_session *s)
{
    const cli_opts *o = s->o;
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
    cli_session s;
    report_fn report;
    report_ctx rc;
    FILE *out = NULL;
    unsigned long t0 = cli_now_ms();
    int code;

    cli_opts_default(&o);
    if ((code = cli_parse_opts(&o, argc, argv, usage_analyze, CMD_ANALYZE)))
        return code;
    o.record = 1;
    report = report_find(o.format);
    if (!report)
        return cli_usage_error("unknown --format '%s' (see optipipe analyze --help)",
                               o.format);
    if (!o.ninputs)
        return cli_usage_error("%s", "analyze needs at least one INPUT");
    if (o.emit_all && !o.emit_dir)
        return cli_usage_error("%s", "--all goes with --emit-changes DIR");
    if ((code = cli_session_run(&s, &o)) || (code = emit(&s)))
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
    rc.fail_on = o.fail_on;
    cli_session_applied(&s, &rc.applied);
    report(&rc);
    if (cli_close_output(&o, out))
        code = EXIT_NOINPUT;
    else if (s.res.ne && !o.allow_rule_errors)
        code = rule_error_exit(s.res.ne);
    else if (o.fail_on &&
             results_count_at_least(&s.res, (severity)severity_parse(o.fail_on)))
        code = EXIT_FINDINGS;
out:
    cli_session_free(&s);
    return code;
}

/* ---- normalize, plugins ------------------------------------------------------ */

static int cmd_normalize(int argc, char **argv)
{
    cli_opts o;
    analysis an;
    op_error err;
    FILE *out;
    jw w;
    size_t i;
    int code = EXIT_DONE;

    cli_opts_default(&o);
    o.format = "json";
    if ((code = cli_parse_opts(&o, argc, argv, usage_normalize, CMD_NORMALIZE)))
        return code;
    if (strcmp(o.format, "json") != 0)
        return cli_usage_error("normalize writes json only, not '%s'", o.format);
    if (!o.ninputs)
        return cli_usage_error("%s", "normalize needs at least one INPUT");
    op_error_clear(&err);
    if (analysis_init(&an, o.plugin_path, &o.limits, stderr, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        code = EXIT_NOINPUT;
        goto out;
    }
    an.quiet = o.quiet;
    an.verbose = o.verbose;
    for (i = 0; i < o.ninputs; i++)
        analysis_add(&an, o.inputs[i]);
    analysis_freeze(&an);
    if (an.nok == 0) {
        diag_msg(DIAG_ERROR, "no input could be read");
        code = EXIT_NOINPUT;
        goto out;
    }
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
    for (i = 0; i < an.m->nruns; i++)
        model_json_run(&w, an.m->runs[i]);
    jw_arr_end(&w);
    jw_obj_end(&w);
    fputc('\n', out);
    if (cli_close_output(&o, out))
        code = EXIT_NOINPUT;
out:
    analysis_free(&an);
    return code;
}

static int cmd_plugins(int argc, char **argv)
{
    cli_opts o;
    analysis an;
    size_t i;
    int code;

    if (argc < 1 || strcmp(argv[0], "list") != 0) {
        if (argc >= 1 && strcmp(argv[0], "--help") == 0) {
            fputs(usage_plugins, stdout);
            return EXIT_DONE;
        }
        return cli_usage_error("%s", "usage: optipipe plugins list");
    }
    cli_opts_default(&o);
    if ((code = cli_parse_opts(&o, argc - 1, argv + 1, usage_plugins,
                               CMD_PLUGINS)))
        return code;
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
};

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    size_t i;

    if (!cmd) {
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("optipipe %s (plugin ABI %d.%d, %s)\n", OP_VERSION,
               OP_ABI_MAJOR, OP_ABI_MINOR, LUA_RELEASE);
        return EXIT_DONE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        fputs(usage_main, stdout);
        return EXIT_DONE;
    }
    for (i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].main(argc - 2, argv + 2);
    return cli_usage_error("unknown command '%s'", cmd);
}
