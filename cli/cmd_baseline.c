/*
 * cmd_baseline.c - `optipipe baseline create|update INPUT...`
 * (docs/baselines.md): the decisions `review` asks for, recorded without
 * asking, for every current finding (or those --select / --fingerprint
 * choose). Also what review shares with it: choosing findings by
 * fingerprint or rule glob, and saving the decisions file; and `baseline
 * export`, the run store's decisions into a file.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "store.h"
#include "util.h"

/* ---- choosing findings by fingerprint -------------------------------------------- */

#define FP_MIN_PREFIX 4 /* hex digits a --fingerprint prefix needs */

static int hex_prefix(const char *p)
{
    size_t i;

    for (i = 0; p[i]; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f') ||
              (p[i] >= 'A' && p[i] <= 'F')))
            return 0;
    return i >= FP_MIN_PREFIX && i <= 16;
}

/* Replaces each --fingerprint (a prefix, as the text report's [9f1c0d3e])
 * by the one fingerprint of the session's findings it starts; full holds
 * them. A prefix matching none or several is a usage error. */
int cli_resolve_fingerprints(cli_opts *o, const op_session *s, char full[][17])
{
    size_t i, j;

    for (i = 0; i < o->nfingerprints; i++) {
        const char *p = o->fingerprints[i], *hit = NULL;
        size_t n = strlen(p);
        if (!hex_prefix(p))
            return cli_usage_error("--fingerprint '%s': 4 to 16 hex digits (the "
                                   "text report shows the first 8)", p);
        for (j = 0; j < s->res.n; j++) {
            const char *fp = s->res.f[j].fingerprint;
            if (strncasecmp(fp, p, n) != 0 || (hit && strcmp(hit, fp) == 0))
                continue;
            if (hit)
                return cli_usage_error("--fingerprint %s is ambiguous: more than "
                                       "one finding starts so; give more digits", p);
            hit = fp;
        }
        if (!hit)
            return cli_usage_error("--fingerprint %s: no finding of these inputs "
                                   "has it", p);
        memcpy(full[i], hit, 17);
        o->fingerprints[i] = full[i];
    }
    return 0;
}

/* ---- saving ------------------------------------------------------------------ */

int cli_save_baseline(baseline *b, const char *path)
{
    op_error err;

    op_error_clear(&err);
    if (baseline_save(b, path, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return err.code;
    }
    return 0;
}

/* ---- baseline create | update ---------------------------------------------------- */

int cli_chosen(const cli_opts *o, const finding *f)
{
    size_t i;
    int ok = !o->nfingerprints;

    for (i = 0; i < o->nfingerprints && !ok; i++)
        ok = strcmp(o->fingerprints[i], f->fingerprint) == 0;
    if (!ok)
        return 0;
    if (!o->nselect)
        return 1;
    for (i = 0; i < o->nselect; i++)
        if (fnmatch(o->select[i], f->rule, 0) == 0)
            return 1;
    return 0;
}

static int record_all(const cli_opts *o, op_session *s, int create,
                      size_t *added, size_t *replaced)
{
    decision_status st = o->status && decision_status_parse(o->status) == DECISION_APPROVED
                             ? DECISION_APPROVED : DECISION_DISMISSED;
    const char *reason = o->reason;
    size_t i;

    if (!reason && st == DECISION_DISMISSED)
        reason = create ? "accepted as is when the baseline was created"
                        : "accepted as is when the baseline was updated";
    *added = *replaced = 0;
    for (i = 0; i < s->res.n; i++) {
        const finding *f = &s->res.f[i];
        int decided = baseline_decision_of(&s->bl, f) != NULL;
        if (f->suppressed == FINDING_IGNORED || !cli_chosen(o, f))
            continue;
        if (decided && !o->nfingerprints)
            continue; /* update keeps decisions unless a finding is named */
        if (baseline_set(&s->bl, f, st, reason, NULL))
            return -1;
        (*added)++;
        *replaced += decided;
    }
    return 0;
}

/* baseline create (create 1) or update */
static int baseline_run(cli_opts *o, int create)
{
    op_session s;
    size_t added = 0, pruned = 0, replaced = 0, kept;
    char full[CLI_MAX_LIST][17];
    const char *path;
    int code;

    if (!o->session.ninputs)
        return cli_usage_error("baseline %s needs at least one INPUT",
                               create ? "create" : "update");
    if (o->prune && create)
        return cli_usage_error("%s", "--prune goes with baseline update");
    o->session.baseline = o->output;
    o->output = NULL;
    o->session.quiet = 1;
    o->session.baseline_default = BASELINE_DEFAULT_FILE;
    if ((code = cli_session_run(&s, o, OP_SESSION_ALL)) ||
        (code = cli_resolve_fingerprints(o, &s, full)))
        goto out;
    path = s.baseline_path ? s.baseline_path : BASELINE_DEFAULT_FILE;
    if (create)
        baseline_free(&s.bl);
    kept = s.bl.n;
    if (o->prune)
        pruned = baseline_prune(&s.bl, &s.res);
    if (record_all(o, &s, create, &added, &replaced)) {
        code = EXIT_NOINPUT;
        goto out;
    }
    if ((code = cli_save_baseline(&s.bl, path))) { /* a link there: usage */
        code = code == OP_EUSAGE ? EXIT_USAGE : EXIT_NOINPUT;
        goto out;
    }
    diag_msg(DIAG_NOTE, "%s: %zu decision(s) recorded, %zu kept, %zu pruned",
            path, added, kept - pruned - replaced, pruned);
out:
    op_session_free(&s);
    return code;
}

static int baseline_create(cli_opts *o, const opt_cmd *cmd)
{
    (void)cmd;
    return baseline_run(o, 1);
}

static int baseline_update(cli_opts *o, const opt_cmd *cmd)
{
    (void)cmd;
    return baseline_run(o, 0);
}

int cli_run_baseline(const opt_cmd *cmd, int argc, char **argv)
{
    if (argc < 1 || (strcmp(argv[0], "create") != 0 && strcmp(argv[0], "update") != 0)) {
        static const char *const forms[] = {"create", "update"};
        if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
            opts_help(cmd, "optipipe", stdout);
            return EXIT_DONE;
        }
        if (argc < 1 || argv[0][0] == '-')
            return cli_usage_error("%s", "usage: optipipe baseline create|update INPUT... [-o FILE]");
        return cli_unknown("baseline command", argv[0],
                           util_suggest(argv[0], forms, 2, 3), "baseline");
    }
    return cli_run_with_opts(cmd, argc - 1, argv + 1, NULL,
                             strcmp(argv[0], "create") == 0 ? baseline_create
                                                            : baseline_update);
}

/* ---- baseline export ------------------------------------------------------------ */

/* `optipipe baseline export --history FILE -o FILE`: the run store's
 * decisions (the server's and every recorded file's, the newest of each)
 * as a decisions file, so a repository can keep them under review. */
static int baseline_export(cli_opts *o, const opt_cmd *cmd)
{
    config cfg;
    baseline b;
    store *st = NULL;
    const char *path;
    op_error err;
    int code = 0;

    (void)cmd;
    config_init(&cfg);
    baseline_init(&b);
    op_error_clear(&err);
    if (o->session.ninputs) {
        code = cli_usage_error("baseline export takes no INPUT ('%s'): it "
                               "reads the run store", o->session.inputs[0]);
        goto out;
    }
    if (!o->output) {
        code = cli_usage_error("%s", "baseline export needs -o FILE (the "
                               "decisions file to write)");
        goto out;
    }
    if (!o->session.no_config && !o->session.history &&
        config_find(o->session.config_path, &cfg, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        code = EXIT_USAGE;
        goto out;
    }
    if (!(path = cli_history_path(o->session.history, &cfg))) {
        code = cli_usage_error("%s", "no run store: give --history FILE, set "
                               "OPTIPIPE_HISTORY or `history` in optipipe.lua");
        goto out;
    }
    if (store_open(path, 0, &st, &err) || store_load_decisions(st, &b, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        code = err.code == OP_EUSAGE ? EXIT_USAGE : EXIT_NOINPUT;
        goto out;
    }
    if ((code = cli_save_baseline(&b, o->output))) {
        code = code == OP_EUSAGE ? EXIT_USAGE : EXIT_NOINPUT;
        goto out;
    }
    if (!o->session.quiet)
        diag_msg(DIAG_NOTE, "%s: %zu decision%s of %s", o->output, b.n,
                 b.n == 1 ? "" : "s", path);
out:
    store_close(st);
    baseline_free(&b);
    config_free(&cfg);
    return code;
}

int cli_run_baseline_export(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, baseline_export);
}
