/*
 * cli.c - what the commands share (cli.h): option parsing, output files,
 * and the options of the command line turned into one op_session request
 * (core/session.h), the pipeline every command runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "session.h"
#include "util.h"

/* ---- option parsing ------------------------------------------------------ */

int cli_open_plugins(const cli_opts *o, analysis *an)
{
    op_error err;

    op_error_clear(&err);
    if (analysis_init(an, o->plugin_path, NULL, stderr, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        analysis_free(an);
        return EXIT_NOINPUT;
    }
    return 0;
}

int cli_usage_error(const char *fmt, const char *arg)
{
    char msg[1024];

    snprintf(msg, sizeof msg, fmt, arg);
    diag_msg(DIAG_ERROR, "%s", msg);
    diag_line(DIAG_ERROR, "Try 'optipipe --help'.");
    return EXIT_USAGE;
}

void cli_opts_default(cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = "text";
    o->plugin_path = getenv("OPTIPIPE_PLUGIN_PATH");
    input_limits_default(&o->limits);
    rule_limits_default(&o->rlimits);
    fetch_opts_init(&o->fetch);
}

FILE *cli_open_output(const cli_opts *o)
{
    FILE *f;

    if (!o->output || strcmp(o->output, "-") == 0)
        return stdout;
    f = fopen(o->output, "w");
    if (!f)
        diag_msg(DIAG_ERROR, "%s: cannot write: %s", o->output,
                strerror(errno));
    return f;
}

int cli_close_output(const cli_opts *o, FILE *f)
{
    int bad = ferror(f);

    if (f != stdout)
        bad |= fclose(f) != 0;
    else
        bad |= fflush(f) != 0;
    if (bad)
        diag_msg(DIAG_ERROR, "%s: write failed",
                o->output ? o->output : "stdout");
    return bad;
}

unsigned long cli_now_ms(void)
{
    return (unsigned long)util_now_ms();
}

/* ---- the analysis session ------------------------------------------------ */

/* The bar of the one session a command runs (the CLI runs one at a time). */
static progress_watcher session_bar;

const char *cli_history_path(const char *given, const config *c)
{
    const char *env = getenv("OPTIPIPE_HISTORY");

    if (given)
        return given;
    if (env && *env)
        return env;
    return c ? c->history : NULL;
}

void cli_session_opts(cli_opts *o, op_session_opts *so)
{
    op_session_opts_default(so);
    so->inputs = o->inputs;
    so->ninputs = o->ninputs;
    so->plugin_path = o->plugin_path;
    so->limits = o->limits;
    o->fetch.progress = !o->quiet && isatty(STDERR_FILENO);
    so->fetch = &o->fetch;
    progress_watcher_init(&session_bar, stderr, o->quiet);
    so->watch = &session_bar.watch;
    so->plan = progress_wanted(stderr, o->quiet);
    so->diag = stderr;
    so->quiet = o->quiet;
    so->verbose = o->verbose;
    so->rules_dirs = o->rules_dirs;
    so->nrules_dirs = o->nrules_dirs;
    so->packs = o->packs;
    so->npacks = o->npacks;
    so->no_bundled = o->no_bundled;
    so->rlimits = o->rlimits;
    so->pack_timeout_set = o->pack_timeout_set;
    so->config_path = o->config_path;
    so->no_config = o->no_config;
    so->baseline = o->baseline;
    so->no_baseline = o->no_baseline;
    so->baseline_default = o->baseline_default;
    so->fail_on = o->fail_on;
    so->allow_rule_errors = o->allow_rule_errors;
    so->history = cli_history_path(o->history, NULL); /* the config's: core */
    so->record = o->record;
}

int cli_session_error(const op_session *s, int status, const op_error *err)
{
    diag_msg(DIAG_ERROR, "%s%s", s->failed == OP_STAGE_RUN ? "rule engine: " : "",
             err->msg);
    return status == OP_EUSAGE ? EXIT_USAGE : EXIT_NOINPUT;
}

int cli_session_run(op_session *s, cli_opts *o, op_session_mode mode)
{
    op_session_opts so;
    op_error err;
    int rc;

    cli_session_opts(o, &so);
    so.mode = mode;
    rc = op_session_run(s, &so, &err);
    return rc ? cli_session_error(s, rc, &err) : EXIT_DONE;
}
