/*
 * session.c - the analysis pipeline of session.h as a table of small
 * stages, so that every command runs the same steps in the same order and
 * a new step (a history store after the findings) is one more row.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "diag.h"
#include "home.h"
#include "session.h"
#include "costs.h"
#include "map_packs.h"
#include "store.h"
#include "util.h"


void op_session_opts_default(op_session_opts *o)
{
    memset(o, 0, sizeof *o);
    input_limits_default(&o->limits);
    rule_limits_default(&o->rlimits);
}

static const char *home_of(const op_session *s)
{
    return s->o.home ? s->o.home : op_home();
}

/* ---- config ---------------------------------------------------------------- */

/* Where a new decisions file goes: next to the config found, else here. */
static const char *new_baseline_path(op_session *s)
{
    const config *c = &s->cfg;

    if (!c->path || !c->dir || strcmp(c->dir, ".") == 0)
        return s->o.baseline_default;
    snprintf(s->new_baseline, sizeof s->new_baseline, "%s/%s", c->dir,
             s->o.baseline_default);
    return s->new_baseline;
}

/* The decisions file: the option, the config's `baseline`, the nearest
 * .optipipe-baseline.json, else (baseline_default) where a new one goes. */
static int pick_baseline(op_session *s, op_error *err)
{
    const op_session_opts *o = &s->o;

    if (o->no_baseline && o->baseline)
        return op_error_set(err, OP_EUSAGE, "--baseline and --no-baseline "
                            "contradict each other");
    if (o->decisions_from_store && o->baseline)
        return op_error_set(err, OP_EUSAGE, "decisions come from the run store"
                            " here: no --baseline");
    if (o->no_baseline || o->decisions_from_store)
        s->baseline_path = NULL; /* the store's: stage_decisions */
    else if (o->baseline || s->cfg.baseline)
        s->baseline_path = o->baseline ? o->baseline : s->cfg.baseline;
    else if (config_locate(BASELINE_DEFAULT_FILE, s->found_baseline,
                           sizeof s->found_baseline) == 0)
        s->baseline_path = s->found_baseline;
    else
        s->baseline_path = o->baseline_default ? new_baseline_path(s) : NULL;
    return 0;
}

/* The rule folders: the request's, then the config's. */
static int fold_dirs(op_session *s, op_error *err)
{
    const config *c = &s->cfg;
    size_t n = s->o.nrules_dirs, i;

    if (!c->nrules_dirs)
        return 0;
    s->dirs_buf = malloc((n + c->nrules_dirs) * sizeof *s->dirs_buf);
    if (!s->dirs_buf)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    for (i = 0; i < n; i++)
        s->dirs_buf[i] = s->o.rules_dirs[i];
    for (i = 0; i < c->nrules_dirs; i++)
        s->dirs_buf[n + i] = c->rules_dirs[i];
    s->o.rules_dirs = s->dirs_buf;
    s->o.nrules_dirs = n + c->nrules_dirs;
    return 0;
}

/* The mapping pack folders: the request's, then the config's. */
static int fold_map_dirs(op_session *s, op_error *err)
{
    const config *c = &s->cfg;
    size_t n = s->o.nmapping_dirs, i;

    if (!c->nmapping_dirs)
        return 0;
    s->map_dirs_buf = malloc((n + c->nmapping_dirs) * sizeof *s->map_dirs_buf);
    if (!s->map_dirs_buf)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    for (i = 0; i < n; i++)
        s->map_dirs_buf[i] = s->o.mapping_dirs[i];
    for (i = 0; i < c->nmapping_dirs; i++)
        s->map_dirs_buf[n + i] = c->mapping_dirs[i];
    s->o.mapping_dirs = s->map_dirs_buf;
    s->o.nmapping_dirs = n + c->nmapping_dirs;
    return 0;
}

/* The plugin path: the request's, then the config's. */
static int fold_plugin_path(op_session *s, op_error *err)
{
    const char *mine = s->o.plugin_path && *s->o.plugin_path ? s->o.plugin_path : "";
    const char *theirs = s->cfg.plugin_path;
    size_t n;

    if (!theirs)
        return 0;
    n = strlen(mine) + 1 + strlen(theirs) + 1;
    if (!(s->plugin_path_buf = malloc(n)))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    snprintf(s->plugin_path_buf, n, "%s%s%s", mine, *mine ? ":" : "", theirs);
    s->o.plugin_path = s->plugin_path_buf;
    return 0;
}

/* Finds the config and folds its settings into s->o: the request's values
 * win, the config's folders and plugin paths come after the request's. */
static int stage_config(op_session *s, op_error *err)
{
    op_session_opts *o = &s->o;
    const config *c = &s->cfg;
    int rc;

    if (o->mode == OP_SESSION_READ || o->rules)
        return 0;
    if (!o->no_config && (rc = config_find(o->config_path, &s->cfg, err)))
        return err->code = rc == OP_ENOMEM ? OP_ENOMEM : OP_EUSAGE;
    if ((rc = fold_dirs(s, err)) || (rc = fold_map_dirs(s, err)) ||
        (rc = fold_plugin_path(s, err)))
        return rc;
    if (!o->fail_on && c->fail_on)
        o->fail_on = c->fail_on;
    o->allow_rule_errors |= c->allow_rule_errors;
    if (!o->pack_timeout_set && c->rule_pack_timeout_ms >= 0)
        o->rlimits.pack_timeout_ms = (unsigned)c->rule_pack_timeout_ms;
    return o->mode == OP_SESSION_RULES ? 0 : pick_baseline(s, err);
}

/* ---- rules ----------------------------------------------------------------- */

static int pack_selected(const op_session_opts *o, const char *name)
{
    size_t i;

    if (!o->npacks)
        return 1;
    for (i = 0; i < o->npacks; i++)
        if (strcmp(o->packs[i], name) == 0)
            return 1;
    return 0;
}

/* Loads every bundled pack folder under <home>/rules in name order. */
static int load_bundled(op_session *s, const char *lua_dir, op_error *err)
{
    const op_session_opts *o = &s->o;
    char root[PATH_MAX], dir[PATH_MAX * 2];
    char *names[RULES_MAX_PACKS];
    size_t n = 0, i;
    int rc;

    snprintf(root, sizeof root, "%s/rules", home_of(s));
    rc = rules_pack_names(root, names, &n, err);
    for (i = 0; i < o->npacks; i++) {
        size_t j;
        for (j = 0; j < n && strcmp(names[j], o->packs[i]) != 0; j++)
            ;
        if (j == n && !rc)
            rc = op_error_set(err, OP_EUSAGE, "--pack %s: no such bundled pack",
                              o->packs[i]);
    }
    for (i = 0; i < n && !rc; i++) {
        if (!pack_selected(o, names[i]))
            continue;
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        rc = ruleset_load_dir(s->rs, dir, names[i], lua_dir, 1, &s->res, err);
    }
    for (i = 0; i < n; i++)
        free(names[i]);
    return rc;
}

static int load_user_dirs(op_session *s, const char *lua_dir, op_error *err)
{
    const op_session_opts *o = &s->o;
    size_t i;
    int rc = 0;

    for (i = 0; i < o->nrules_dirs && !rc; i++) {
        size_t before = ruleset_count(s->rs), ne = s->res.ne;
        rc = ruleset_load_dir(s->rs, o->rules_dirs[i], o->rules_dirs[i],
                              lua_dir, 0, &s->res, err);
        if (!rc && ruleset_count(s->rs) == before && s->res.ne == ne)
            diag_msg(DIAG_WARNING, "%s: no rules (*.lua) in this folder",
                     o->rules_dirs[i]);
    }
    return rc;
}

/* Loads the bundled packs (only o.packs when given) and every rule folder
 * into a new ruleset, then applies the config. Load errors go into s->res
 * and to stderr. */
static int stage_rules(op_session *s, op_error *err)
{
    const op_session_opts *o = &s->o;
    char lua_dir[PATH_MAX];
    size_t i;
    unsigned long t = (unsigned long)util_now_ms();
    int rc;

    if (o->mode == OP_SESSION_READ)
        return 0;
    if (o->rules) {
        s->rs = o->rules;
        return 0;
    }
    if (!(s->rs = ruleset_new(&o->rlimits)))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    snprintf(lua_dir, sizeof lua_dir, "%s/lua", home_of(s));
    rc = o->no_bundled ? 0 : load_bundled(s, lua_dir, err);
    if (!rc)
        rc = load_user_dirs(s, lua_dir, err);
    if (!rc && !ruleset_count(s->rs) && !s->res.ne)
        rc = op_error_set(err, OP_EIO, "no rules to run (the rule folders "
                          "hold none%s)", o->no_bundled ? " and --no-bundled "
                          "drops the bundled packs" : "");
    if (!rc)
        for (i = 0; i < s->res.ne; i++)
            diag_msg(DIAG_ERROR, "rule %s: %s", s->res.e[i].rule,
                     s->res.e[i].error);
    if (!rc)
        rc = config_apply(&s->cfg, s->rs, o->npacks > 0 || o->no_bundled, err);
    s->t_rules = (unsigned long)util_now_ms() - t;
    return rc;
}

/* ---- inputs ---------------------------------------------------------------- */

/* The first problem of the input just added, for strict_inputs. */
static int input_failed(const analysis *an, op_error *err)
{
    const input_rec *in = an->ninputs ? &an->inputs[an->ninputs - 1] : NULL;

    return op_error_set(err, OP_EIO, "%s", in && in->nwarnings
                                               ? in->warnings[0]
                                               : "input could not be read");
}

/* The mapping packs parsers ask (map_packs.h): the user's folders, then
 * <home>/rules/mappings. */
static int load_mappings(op_session *s, op_error *err)
{
    char dir[PATH_MAX];
    int rc;

    snprintf(dir, sizeof dir, "%s/rules/%s", home_of(s), MAPPING_DIR);
    rc = mapping_set_load(s->o.mapping_dirs, s->o.nmapping_dirs, dir,
                          &s->o.rlimits, s->o.diag, &s->an.maps, err);
    s->an.m->mappings = s->an.maps;
    return rc == OP_ENOTFOUND ? (err->code = OP_EUSAGE) : rc;
}

static int stage_inputs(op_session *s, op_error *err)
{
    const op_session_opts *o = &s->o;
    unsigned long t = (unsigned long)util_now_ms();
    size_t i;
    int rc;

    if (o->mode == OP_SESSION_RULES)
        return 0;
    rc = analysis_init(&s->an, o->plugin_path, &o->limits, o->diag, err);
    if (rc)
        return err->code = rc == OP_EUSAGE ? OP_EIO : rc;
    s->an.quiet = o->quiet;
    s->an.verbose = o->verbose;
    s->an.fetch = o->fetch;
    s->an.watch = o->watch;
    if ((rc = load_mappings(s, err)))
        return rc;
    if (o->plan)
        analysis_plan(&s->an, o->inputs, o->ninputs);
    for (i = 0; i < o->ninputs; i++)
        if (!analysis_add(&s->an, o->inputs[i]) && o->strict_inputs)
            return input_failed(&s->an, err);
    analysis_freeze(&s->an);
    /* what each run cost, kept with it in the run store (core/costs.h) */
    if (o->mode == OP_SESSION_ALL && costs_price_model(s->an.m, s->cfg.costs))
        return op_error_set(err, OP_ENOMEM, "out of memory pricing runs");
    s->t_read = (unsigned long)util_now_ms() - t;
    if (s->an.nok == 0)
        return op_error_set(err, OP_EIO, "no input could be read");
    return 0;
}

/* ---- run store --------------------------------------------------------------- */

/* Opened for writing up front: created or migrated before any rule reads
 * it, and a bad file is said once, before the report. A store that cannot
 * be written (read-only media) still gives the rules their history. */
static int stage_history(op_session *s, op_error *err)
{
    const char *path = s->o.history ? s->o.history : s->cfg.history;
    op_error e, ro;
    store *st = NULL;

    (void)err;
    if (s->o.mode != OP_SESSION_ALL || !path || !*path)
        return 0;
    op_error_clear(&e);
    if (store_open(path, 1, &st, &e)) {
        op_error_clear(&ro);
        if (store_read_only_media(path) && store_open(path, 0, &st, &ro) == 0) {
            diag_msg(DIAG_WARNING, "%s (rules see its history)", e.msg);
            s->st = st; /* for the decisions stage; stage_record skips it */
            s->history_path = path;
            s->an.m->store_path = path;
        } else
            diag_msg(DIAG_ERROR, "%s (the analysis goes on without history)",
                     e.msg);
        if (s->o.record)
            s->record_err = e;
        return 0;
    }
    s->st = st;
    s->history_path = path;
    s->an.m->store_path = path;
    return 0;
}

/* The file's decisions the store's newer ones overrode, into its audit
 * trail (once each); a failure there is said and loses nothing else. */
static void note_conflicts(op_session *s)
{
    op_error e;
    size_t i;

    for (i = 0; i < s->conflicts.n; i++) {
        if (!s->conflicts.c[i].store_won)
            continue;
        op_error_clear(&e);
        if (store_note_conflict(s->st, &s->conflicts.c[i].file,
                                s->baseline_path, &e))
            diag_msg(DIAG_WARNING, "%s (a decision conflict is not in the "
                     "audit trail)", e.msg);
    }
}

/* A store that fails here loses this recording only: said, and kept in
 * record_err for the caller's exit code; the report is still made. */
static int stage_record(op_session *s, op_error *err)
{
    op_error e;
    store *st = s->st;

    (void)err;
    if (s->o.mode != OP_SESSION_ALL || !s->o.record || !st || s->record_err.code)
        return 0;
    note_conflicts(s);
    op_error_clear(&e);
    if (s->o.decisions_from_store
            ? store_record_own(st, s->an.m, &s->res, &s->nrecorded, &e)
            : store_record(st, s->an.m, &s->res, &s->bl, &s->nrecorded, &e)) {
        diag_msg(DIAG_ERROR, "%s (nothing of this analysis was recorded)", e.msg);
        s->record_err = e;
    } else if (!s->o.quiet)
        diag_msg(DIAG_NOTE, "%s: recorded %zu run%s", s->history_path,
                 s->nrecorded, s->nrecorded == 1 ? "" : "s");
    return 0;
}

/* ---- findings -------------------------------------------------------------- */

static int stage_run(op_session *s, op_error *err)
{
    unsigned long t = (unsigned long)util_now_ms();
    int rc;

    if (s->o.mode != OP_SESSION_ALL)
        return 0;
    rc = ruleset_run(s->rs, s->an.m, &s->res, err);
    if (!rc && s->o.add_findings)
        rc = s->o.add_findings(s->o.add_findings_ud, s->an.m, &s->res, err);
    s->t_rules += (unsigned long)util_now_ms() - t;
    return rc == OP_EUSAGE ? (err->code = OP_EIO) : rc;
}

static int stage_finish(op_session *s, op_error *err)
{
    if (s->o.mode == OP_SESSION_ALL && results_finish(&s->res, s->an.m))
        return op_error_set(err, OP_ENOMEM, "out of memory reconciling changes");
    /* money, when the team gave its rates (core/costs.h) */
    if (s->o.mode == OP_SESSION_ALL &&
        costs_apply(&s->res, s->an.m, s->cfg.costs))
        return op_error_set(err, OP_ENOMEM, "out of memory pricing findings");
    return 0;
}

static int stage_ignore(op_session *s, op_error *err)
{
    if (s->o.mode == OP_SESSION_ALL)
        s->nignored = config_ignore_findings(&s->cfg, s->an.m, &s->res);
    return 0;
}

/* decisions_from_store: the decisions of the store in use (none without
 * one: stage_history said why). A store that cannot be read fails the
 * session: its findings would show as undecided. */
static int store_decisions(op_session *s, op_error *err)
{
    int rc;

    if (!s->st)
        return 0;
    if ((rc = store_load_decisions(s->st, &s->bl, err)))
        return rc;
    s->baseline_path = s->history_path;
    s->baseline_read = 1;
    s->an.m->decisions = &s->bl;
    return 0;
}

/* With a run store in use, its decisions are laid over the file's, the
 * newest of each winning; each conflict is said (and noted in the
 * store's audit trail by stage_record). A store that cannot be read here
 * leaves the file's decisions alone, said. */
static void merge_store_decisions(op_session *s)
{
    char line[1024];
    op_error e;
    size_t i;

    if (!s->st)
        return;
    op_error_clear(&e);
    if (decision_merge_store(&s->bl, s->st, &s->conflicts, &e)) {
        diag_msg(DIAG_WARNING, "%s (the run store's decisions are not "
                 "applied)", e.msg);
        return;
    }
    for (i = 0; i < s->conflicts.n; i++) {
        decision_conflict_text(&s->conflicts.c[i], s->baseline_path, line,
                               sizeof line);
        diag_msg(DIAG_WARNING, "%s", line);
    }
}

/* A missing decisions file is an empty one (said unless quiet). Read
 * before the rules run, so that ctx.history shows the file's decisions on
 * earlier runs too (model.decisions). */
static int stage_decisions(op_session *s, op_error *err)
{
    struct stat st;

    if (s->o.mode == OP_SESSION_ALL && s->o.decisions_from_store)
        return store_decisions(s, err);
    /* no decisions file, but a run store: its decisions are the newest */
    if (s->o.mode == OP_SESSION_ALL && !s->baseline_path && s->st &&
        !s->o.no_baseline)
        return store_decisions(s, err);
    if (s->o.mode != OP_SESSION_ALL || !s->baseline_path)
        return 0;
    s->baseline_read = stat(s->baseline_path, &st) == 0;
    if (!s->baseline_read && !s->o.quiet)
        diag_msg(DIAG_NOTE, "%s: no decisions yet (the file does not "
                 "exist)", s->baseline_path);
    if (baseline_load(s->baseline_path, &s->bl, 1, err))
        return err->code = OP_EUSAGE; /* the file is the user's to fix */
    merge_store_decisions(s);
    if (s->baseline_read || s->bl.n)
        s->an.m->decisions = &s->bl;
    return 0;
}

static int stage_baseline(op_session *s, op_error *err)
{
    (void)err;
    if (s->o.mode == OP_SESSION_ALL && s->baseline_path)
        s->nbaselined = baseline_apply(&s->bl, &s->res);
    return 0;
}

/* ---- the pipeline ---------------------------------------------------------- */

typedef int (*stage_fn)(op_session *s, op_error *err);

/* In order; each stage decides from s->o whether it applies. A step on the
 * finished findings (e.g. recording the run for --history) goes after
 * baseline, so that it sees what the user sees. */
static const struct {
    op_session_stage id;
    stage_fn run;
} stages[] = {
    {OP_STAGE_CONFIG, stage_config},
    {OP_STAGE_RULES, stage_rules},
    {OP_STAGE_INPUTS, stage_inputs},
    {OP_STAGE_HISTORY, stage_history},
    {OP_STAGE_BASELINE, stage_decisions},
    {OP_STAGE_RUN, stage_run},
    {OP_STAGE_FINISH, stage_finish},
    {OP_STAGE_IGNORE, stage_ignore},
    {OP_STAGE_BASELINE, stage_baseline},
    {OP_STAGE_RECORD, stage_record},
};

int op_session_run(op_session *s, const op_session_opts *o, op_error *err)
{
    size_t i;
    int rc;

    memset(s, 0, sizeof *s);
    s->o = *o;
    config_init(&s->cfg);
    results_init(&s->res);
    baseline_init(&s->bl);
    op_error_clear(err);
    for (i = 0; i < sizeof stages / sizeof stages[0]; i++)
        if ((rc = stages[i].run(s, err))) {
            s->failed = stages[i].id;
            return rc;
        }
    return 0;
}

void op_session_free(op_session *s)
{
    store_close(s->st);
    if (s->rs != s->o.rules)
        ruleset_free(s->rs);
    results_free(&s->res);
    analysis_free(&s->an);
    baseline_free(&s->bl);
    decision_conflicts_free(&s->conflicts);
    config_free(&s->cfg);
    free(s->dirs_buf);
    free(s->map_dirs_buf);
    free(s->plugin_path_buf);
    memset(s, 0, sizeof *s);
}

void op_session_applied(const op_session *s, report_applied *a)
{
    memset(a, 0, sizeof *a);
    a->config = s->cfg.path;
    a->ignored = s->nignored;
    a->baseline = s->baseline_path && s->baseline_read ? s->baseline_path : NULL;
    a->suppressed = s->nbaselined;
    a->currency = s->cfg.costs ? costs_currency(s->cfg.costs) : NULL;
    a->conflicts = &s->conflicts;
}

int op_session_exit_failed(int status)
{
    return status == OP_EUSAGE ? OP_EXIT_USAGE : OP_EXIT_NOINPUT;
}
