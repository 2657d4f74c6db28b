/*
 * cmd_analyze.c - `optipipe analyze` (docs/cli.md#analyze): the one
 * pipeline (cli_session_run), then --emit-changes, the report in the
 * chosen format, the webhook notifications (after the report and the
 * recording: they never delay nor change either), and the exit code (1
 * findings at/above --fail-on, 5 a rule failed).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "emit_changes.h"
#include "notify.h"
#include "report.h"

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
    if (!o->session.quiet)
        diag_msg(DIAG_NOTE, "wrote %zu file(s) of changes to %s", st.nfiles,
                 o->emit_dir);
    if (st.nrefused) /* told even with -q: a change the rule asked for is missing */
        diag_msg(DIAG_ERROR, "%zu change(s) refused (above); the patches "
                 "say so where they would be", st.nrefused);
    return 0;
}

/* A path that does not exist is a typo more often than an optional file:
 * after the report, fail the run (told even with -q, like every error). */
static int missing_exit(size_t n)
{
    diag_msg(DIAG_ERROR, "%zu input%s do%s not exist (named above); exit %d "
             "(--allow-missing to accept)", n, n == 1 ? "" : "s",
             n == 1 ? "es" : "", EXIT_USAGE);
    return EXIT_USAGE;
}

/* --history asked for a recording that did not happen (said above, by
 * the session): a nightly job must notice a run missing from its trends. */
static int not_recorded_exit(const op_session *s)
{
    diag_msg(DIAG_ERROR, "the analysis was not recorded into %s; exit %d "
             "(the report is complete)", s->o.history ? s->o.history
             : s->cfg.history ? s->cfg.history : "the run store",
             EXIT_NOT_RECORDED);
    return EXIT_NOT_RECORDED;
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

/* The config's webhooks, last: a failed delivery is said on stderr (by
 * notify.c, naming the endpoint) and logged in the run store, and the
 * exit code stays the analysis's. */
static void notify(const cli_opts *o, const op_session *s, int code)
{
    notify_result nr;

    if (o->no_notify || (code && !o->session_err.code))
        return; /* no webhook asked; or a usage error after the session */
    notify_session(s, o->session_err.code ? o->session_err.msg : NULL,
                   stderr, &nr);
    if (nr.sent && !o->session.quiet)
        diag_msg(DIAG_NOTE, "notified %zu event%s", nr.sent,
                 nr.sent == 1 ? "" : "s");
}

static int analyze(cli_opts *o, const opt_cmd *cmd)
{
    op_session s;
    report_fn report;
    report_ctx rc;
    FILE *out = NULL;
    unsigned long t0 = cli_now_ms();
    int code;

    (void)cmd;
    o->session.record = 1;
    report = report_find(o->format); /* the table's name: --format checked it */
    if (!o->session.ninputs)
        return cli_usage_error("%s", "analyze needs at least one INPUT");
    if (o->emit_all && !o->emit_dir)
        return cli_usage_error("%s", "--all goes with --emit-changes DIR");
    if ((code = cli_session_run(&s, o, OP_SESSION_ALL))) {
        notify(o, &s, code); /* a failed analysis */
        goto out;
    }
    if ((code = emit(o, &s)))
        goto out;
    out = cli_open_output(o);
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
    rc.show_suppressed = o->show_suppressed;
    rc.verbose = o->session.verbose;
    rc.elapsed_ms = cli_now_ms() - t0;
    rc.read_ms = s.t_read;
    rc.rules_ms = s.t_rules;
    rc.deterministic = o->deterministic;
    rc.fail_on = s.o.fail_on;
    op_session_applied(&s, &rc.applied);
    report(&rc);
    if (cli_close_output(o, out))
        code = EXIT_NOINPUT;
    else if (s.an.nmissing && !o->allow_missing)
        code = missing_exit(s.an.nmissing);
    else if (s.res.ne && !s.o.allow_rule_errors)
        code = rule_error_exit(s.res.ne);
    else if (s.record_err.code)
        code = not_recorded_exit(&s);
    else if (s.o.fail_on &&
             results_count_shown_at_least(&s.res, (severity)severity_parse(s.o.fail_on)))
        code = EXIT_FINDINGS;
    notify(o, &s, 0);
out:
    op_session_free(&s);
    return code;
}

int cli_run_analyze(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, analyze);
}
