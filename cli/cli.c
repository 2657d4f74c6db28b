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
#include "wfile.h"

/* ---- option parsing ------------------------------------------------------ */

int cli_open_plugins(const cli_opts *o, analysis *an)
{
    op_error err;

    op_error_clear(&err);
    if (analysis_init(an, o->session.plugin_path, NULL, stderr, &err)) {
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
    op_session_opts_default(&o->session);
    o->format = "text";
    o->session.plugin_path = getenv("OPTIPIPE_PLUGIN_PATH");
    fetch_opts_init(&o->fetch);
}

void cli_opts_free(cli_opts *o, const opt_cmd *cmd)
{
    opts_free(cmd, o);
}

int cli_run_with_opts(const opt_cmd *cmd, int argc, char **argv,
                      void (*preset)(cli_opts *), cli_body_fn body)
{
    cli_opts *o = malloc(sizeof *o); /* large (fetch's engine area) */
    int code;

    if (!o) {
        diag_msg(DIAG_ERROR, "%s: out of memory", cmd->name);
        return EXIT_NOINPUT;
    }
    cli_opts_default(o);
    if (preset)
        preset(o);
    if (!(code = cli_parse_opts(o, argc, argv, cmd)))
        code = body(o, cmd);
    cli_opts_free(o, cmd);
    free(o);
    return code;
}

/* The one -o file open at a time (a command writes one report). */
static wfile output;

FILE *cli_open_output(const cli_opts *o)
{
    op_error err;

    if (!o->output || strcmp(o->output, "-") == 0)
        return stdout;
    op_error_clear(&err);
    if (wfile_open(&output, o->output, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return NULL;
    }
    return output.f;
}

int cli_close_output(const cli_opts *o, FILE *f)
{
    op_error err;
    int bad;

    if (f != stdout) {
        op_error_clear(&err);
        if (f != output.f) /* never: one output at a time */
            return fclose(f), 1;
        if ((bad = wfile_commit(&output, &err) != 0))
            diag_msg(DIAG_ERROR, "%s", err.msg);
        return bad;
    }
    bad = ferror(f) | (fflush(f) != 0);
    if (bad)
        diag_msg(DIAG_ERROR, "%s: write failed", o->output ? o->output : "stdout");
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

int cli_session_error(const op_session *s, int status, const op_error *err)
{
    diag_msg(DIAG_ERROR, "%s%s", s->failed == OP_STAGE_RUN ? "rule engine: " : "",
             err->msg);
    return op_session_exit_failed(status);
}

int cli_session_run(op_session *s, cli_opts *o, op_session_mode mode)
{
    op_session_opts *so = &o->session;
    op_error err;
    int rc;

    so->mode = mode;
    o->fetch.progress = !so->quiet && isatty(STDERR_FILENO);
    so->fetch = &o->fetch;
    progress_watcher_init(&session_bar, stderr, so->quiet);
    so->watch = &session_bar.watch;
    so->plan = progress_wanted(stderr, so->quiet);
    so->diag = stderr;
    so->history = cli_history_path(so->history, NULL); /* the config's: core */
    op_error_clear(&err);
    rc = op_session_run(s, so, &err);
    o->session_err = rc ? err : (op_error){0, ""};
    return rc ? cli_session_error(s, rc, &err) : EXIT_DONE;
}
