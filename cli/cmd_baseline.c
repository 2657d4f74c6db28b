/*
 * cmd_baseline.c - `optipipe baseline create|update INPUT...`
 * (docs/baselines.md): the decisions `review` asks for, recorded without
 * asking, for every current finding (or those --select / --fingerprint
 * choose). Also what review shares with it: choosing findings by
 * fingerprint or rule glob, and saving the decisions file.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
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
        return -1;
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

int baseline_main(int argc, char **argv)
{
    cli_opts o;
    op_session s;
    size_t added = 0, pruned = 0, replaced = 0, kept;
    char full[CLI_MAX_LIST][17];
    const char *path;
    int create, code;

    if (argc < 1 || (strcmp(argv[0], "create") != 0 && strcmp(argv[0], "update") != 0)) {
        static const char *const forms[] = {"create", "update"};
        if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
            opts_help(&cli_cmd_baseline, "optipipe", stdout);
            return EXIT_DONE;
        }
        if (argc < 1 || argv[0][0] == '-')
            return cli_usage_error("%s", "usage: optipipe baseline create|update INPUT... [-o FILE]");
        return cli_unknown("baseline command", argv[0],
                           util_suggest(argv[0], forms, 2, 3), "baseline");
    }
    create = strcmp(argv[0], "create") == 0;
    cli_opts_default(&o);
    if ((code = cli_parse_opts(&o, argc - 1, argv + 1, &cli_cmd_baseline)))
        return code;
    if (!o.ninputs)
        return cli_usage_error("baseline %s needs at least one INPUT", argv[0]);
    if (o.prune && create)
        return cli_usage_error("%s", "--prune goes with baseline update");
    o.baseline = o.output;
    o.output = NULL;
    o.quiet = 1;
    o.baseline_default = BASELINE_DEFAULT_FILE;
    if ((code = cli_session_run(&s, &o, OP_SESSION_ALL)) ||
        (code = cli_resolve_fingerprints(&o, &s, full)))
        goto out;
    path = s.baseline_path ? s.baseline_path : BASELINE_DEFAULT_FILE;
    if (create)
        baseline_free(&s.bl);
    kept = s.bl.n;
    if (o.prune)
        pruned = baseline_prune(&s.bl, &s.res);
    if (record_all(&o, &s, create, &added, &replaced) ||
        cli_save_baseline(&s.bl, path)) {
        code = EXIT_NOINPUT;
        goto out;
    }
    diag_msg(DIAG_NOTE, "%s: %zu decision(s) recorded, %zu kept, %zu pruned",
            path, added, kept - pruned - replaced, pruned);
out:
    op_session_free(&s);
    return code;
}
