/*
 * cmd_diff.c - `optipipe diff A B` (docs/cli.md#diff): resolves each side
 * to one run - an input read through the analysis session, or a run of
 * the run store (JOB@latest, JOB@previous, JOB@best, a run id) - with
 * its findings, and writes what diff_runs() found in the chosen format. Its options are in
 * cli_table.c.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "diff.h"
#include "store.h"

/* ---- an input ------------------------------------------------------------------ */

/* "-" is standard input, as for analyze; never a stored run's name. */
static int is_input(const char *ref)
{
    struct stat st;

    return !strcmp(ref, "-") || stat(ref, &st) == 0 || !strncmp(ref, "http://", 7) ||
           !strncmp(ref, "https://", 8);
}

/* Names the runs of an input that gave several, for the usage error. */
static int several_runs(const char *ref, const model *m, size_t n)
{
    char msg[OP_ERROR_MAX];
    size_t i, k = 0, len;

    len = (size_t)snprintf(msg, sizeof msg, "%s holds %zu runs, diff needs one "
                           "per side:", ref, n);
    for (i = 0; i < m->nruns && len < sizeof msg; i++) {
        const struct op_run *r = m->runs[i];
        if (r->superseded)
            continue;
        if (++k > 8) {
            snprintf(msg + len, sizeof msg - len, " ...");
            break;
        }
        len += (size_t)snprintf(msg + len, sizeof msg - len, " %s %s (%s)%s",
                                r->source, model_run_job(r), r->id,
                                k < n ? "," : "");
    }
    return cli_usage_error("%s", msg);
}

/* Reads ref with the analysis session (config, plugins, limits, rules;
 * no decisions file, records nothing) into *out, with the run's
 * findings; a rule that failed is said on stderr, listed in *out and
 * sets *rule_failed. */
static int load_input(const cli_opts *base, const char *ref, cJSON **out,
                      int *rule_failed)
{
    static cli_opts o; /* large (fetch's engine area); one side at a time */
    op_session s;
    op_error err;
    const struct op_run *one = NULL;
    size_t i, n = 0, at = 0;
    int code;

    o = *base; /* its lists stay base's */
    o.session.inputs = &ref;
    o.session.ninputs = 1;
    o.session.record = 0;
    o.session.no_baseline = 1;
    code = cli_session_run(&s, &o, OP_SESSION_ALL);
    for (i = 0; !code && i < s.an.m->nruns; i++)
        if (!s.an.m->runs[i]->superseded && ++n == 1) {
            one = s.an.m->runs[i];
            at = i;
        }
    if (!code && n != 1)
        code = n ? several_runs(ref, s.an.m, n)
                 : cli_usage_error("%s yields no run", ref);
    op_error_clear(&err);
    if (!code && (diff_run_json(one, out, &err) ||
                  diff_run_findings(*out, &s.res, at, &err))) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        code = EXIT_NOINPUT;
    }
    for (i = 0; !code && i < s.res.ne; i++) /* the diff lists them too */
        diag_msg(DIAG_ERROR, "%s: rule %s failed (%.*s): its findings are "
                 "missing from the diff", ref, s.res.e[i].rule,
                 (int)strcspn(s.res.e[i].error ? s.res.e[i].error : "", "\n"),
                 s.res.e[i].error ? s.res.e[i].error : "");
    if (!code && s.res.ne)
        *rule_failed = 1;
    op_session_free(&s);
    return code;
}

/* ---- a stored run (diff_stored_run, core/diff.c) ---------------------------- */

/* Resolves ref in st into *out, saying what failed. */
static int load_stored(store *st, const char *ref, cJSON **out)
{
    op_error err;
    int rc;

    op_error_clear(&err);
    if (!(rc = diff_stored_run(st, ref, out, &err)))
        return 0;
    diag_msg(DIAG_ERROR, "%s", err.msg);
    return rc == OP_ENOTFOUND ? EXIT_USAGE : EXIT_NOINPUT;
}

/* Opens the run store for stored sides once (read-only). */
static int open_store(const cli_opts *o, const char *ref, store **st)
{
    config cfg;
    op_error err;
    const char *path;
    int code = 0;

    if (*st)
        return 0;
    config_init(&cfg);
    op_error_clear(&err);
    if (!o->session.no_config && !o->session.history &&
        config_find(o->session.config_path, &cfg, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        code = EXIT_USAGE;
    } else if (!(path = cli_history_path(o->session.history, &cfg))) {
        diag_msg(DIAG_ERROR, "'%s' is no file or folder, and there is no run "
                 "store to look it up in: give --history FILE, set "
                 "OPTIPIPE_HISTORY or `history` in optipipe.lua", ref);
        code = EXIT_USAGE;
    } else if (store_open(path, 0, st, &err)) {
        diag_msg(DIAG_ERROR, "%s (needed for '%s')", err.msg, ref);
        code = EXIT_USAGE;
    }
    config_free(&cfg);
    return code;
}

/* ---- the command --------------------------------------------------------------- */

static int write_diff(const cli_opts *o, cJSON *const run[2])
{
    diff_opts dopt = {o->top, o->ignore_keys, o->nignore_keys};
    cJSON *d = NULL;
    op_error err;
    FILE *f;
    int code = EXIT_DONE;

    op_error_clear(&err);
    if (diff_runs(run[0], o->session.inputs[0], run[1], o->session.inputs[1],
                  &dopt, &d, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return EXIT_NOINPUT;
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "same_job")))
        diag_msg(DIAG_WARNING, "%s and %s are runs of different jobs (or "
                 "engines): the diff compares unrelated work",
                 o->session.inputs[0],
                 o->session.inputs[1]);
    if (!(f = cli_open_output(o))) {
        code = EXIT_USAGE;
    } else {
        if (report_diff(f, o->format, d))
            diag_msg(DIAG_ERROR, "diff: writing the output failed");
        if (cli_close_output(o, f))
            code = EXIT_NOINPUT;
    }
    cJSON_Delete(d);
    return code;
}

static int diff(cli_opts *o, const opt_cmd *cmd)
{
    cJSON *run[2] = {NULL, NULL};
    store *st = NULL;
    int code = 0, i, rule_failed = 0;

    (void)cmd;
    if (o->session.ninputs != 2)
        return cli_usage_error("%s", "diff needs two runs: optipipe diff A B");
    if (!strcmp(o->session.inputs[0], "-") &&
        !strcmp(o->session.inputs[1], "-"))
        return cli_usage_error("%s", "diff - -: standard input can be one side "
                               "only");
    for (i = 0; i < 2 && !code; i++) {
        if (is_input(o->session.inputs[i]))
            code = load_input(o, o->session.inputs[i], &run[i], &rule_failed);
        else if (!(code = open_store(o, o->session.inputs[i], &st)))
            code = load_stored(st, o->session.inputs[i], &run[i]);
    }
    if (!code)
        code = write_diff(o, run);
    if (code == EXIT_DONE && rule_failed) /* as analyze: the output lists it */
        code = EXIT_RULE_ERROR;
    cJSON_Delete(run[0]);
    cJSON_Delete(run[1]);
    store_close(st);
    return code;
}

int cli_run_diff(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, diff);
}
