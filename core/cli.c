/*
 * cli.c - what the commands share (cli.h): option parsing, locating the
 * bundled rule packs next to the binary and loading them together with
 * user rule folders and the config, and the analysis session that
 * analyze, review and baseline run.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "progress.h"
#include "util.h"

const char *cli_home(void)
{
    static char home[PATH_MAX + 64];
    char exe[PATH_MAX], try[PATH_MAX + 64];
    const char *env = getenv("OPTIPIPE_HOME");
    struct stat st;
    ssize_t n;
    char *slash;

    if (env && *env)
        return env;
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return "share/optipipe";
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    snprintf(try, sizeof try, "%s/share/optipipe/rules", exe);
    if (stat(try, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(home, sizeof home, "%s/share/optipipe", exe);
        return home;
    }
    snprintf(try, sizeof try, "%s/../share/optipipe", exe);
    /* an installed prefix/bin/optipipe: name prefix/share/optipipe plainly */
    if (!realpath(try, home))
        snprintf(home, sizeof home, "%s", try);
    return home;
}

static int pack_selected(const cli_opts *o, const char *name)
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
static int load_bundled(const cli_opts *o, ruleset *rs, results *errs,
                        const char *lua_dir, op_error *err)
{
    char root[PATH_MAX], dir[PATH_MAX * 2];
    char *names[256];
    size_t n = 0, i;
    struct dirent *de;
    DIR *d;
    int rc = 0;

    snprintf(root, sizeof root, "%s/rules", cli_home());
    d = opendir(root);
    if (!d)
        return op_error_set(err, OP_ENOTFOUND,
                            "%s: cannot open the bundled rule packs: %s "
                            "(set OPTIPIPE_HOME)", root, strerror(errno));
    while ((de = readdir(d)) && n < 256) {
        if (de->d_name[0] == '.')
            continue;
        /* A pack left out would pass for a clean run with fewer rules. */
        if (!(names[n] = strdup(de->d_name))) {
            rc = op_error_set(err, OP_ENOMEM, "out of memory");
            break;
        }
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, util_strp_cmp);
    for (i = 0; i < o->npacks; i++) {
        size_t j;
        for (j = 0; j < n && strcmp(names[j], o->packs[i]) != 0; j++)
            ;
        if (j == n && !rc)
            rc = op_error_set(err, OP_EUSAGE, "--pack %s: no such bundled pack",
                              o->packs[i]);
    }
    for (i = 0; i < n && !rc; i++) {
        struct stat st;
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        if (stat(dir, &st) || !S_ISDIR(st.st_mode) ||
            !pack_selected(o, names[i]))
            continue;
        rc = ruleset_load_dir(rs, dir, names[i], lua_dir, 1, errs, err);
    }
    for (i = 0; i < n; i++)
        free(names[i]);
    return rc;
}

int cli_load_rules(const cli_opts *o, ruleset **out, results *errs,
                   op_error *err)
{
    char lua_dir[PATH_MAX];
    ruleset *rs;
    size_t i;
    int rc;

    *out = NULL;
    rs = ruleset_new(&o->rlimits);
    if (!rs)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    snprintf(lua_dir, sizeof lua_dir, "%s/lua", cli_home());
    rc = o->no_bundled ? 0 : load_bundled(o, rs, errs, lua_dir, err);
    for (i = 0; i < o->nrules_dirs && !rc; i++) {
        size_t before = ruleset_count(rs), ne = errs->ne;
        rc = ruleset_load_dir(rs, o->rules_dirs[i], o->rules_dirs[i], lua_dir,
                              0, errs, err);
        if (!rc && ruleset_count(rs) == before && errs->ne == ne)
            diag_msg(DIAG_WARNING, "%s: no rules (*.lua) in this folder",
                     o->rules_dirs[i]);
    }
    if (!rc && !ruleset_count(rs) && !errs->ne)
        rc = op_error_set(err, OP_EIO, "no rules to run (the rule folders "
                          "hold none%s)", o->no_bundled ? " and --no-bundled "
                          "drops the bundled packs" : "");
    if (!rc)
        for (i = 0; i < errs->ne; i++)
            diag_msg(DIAG_ERROR, "rule %s: %s", errs->e[i].rule,
                    errs->e[i].error);
    if (!rc && o->cfg)
        rc = config_apply(o->cfg, rs, o->npacks > 0 || o->no_bundled, err);
    if (rc) {
        ruleset_free(rs);
        return rc;
    }
    *out = rs;
    return 0;
}

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

static int add_list(const char **list, size_t *n, const char *v,
                    const char *opt)
{
    if (*n >= CLI_MAX_LIST)
        return cli_usage_error("too many %s options", opt);
    list[(*n)++] = v;
    return 0;
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

/* Where a new decisions file goes: next to the config found, else here. */
static const char *new_baseline_path(cli_session *s)
{
    const config *c = &s->cfg;

    if (!c->path || !c->dir || strcmp(c->dir, ".") == 0)
        return s->o->baseline_default;
    snprintf(s->new_baseline, sizeof s->new_baseline, "%s/%s", c->dir,
             s->o->baseline_default);
    return s->new_baseline;
}

/* The decisions file: --baseline, the config's `baseline`, the nearest
 * .optipipe-baseline.json, else (review, baseline) where a new one goes. */
static int pick_baseline(cli_session *s)
{
    const cli_opts *o = s->o;

    if (o->no_baseline && o->baseline)
        return cli_usage_error("%s", "--baseline and --no-baseline contradict each other");
    if (o->no_baseline)
        s->baseline_path = NULL;
    else if (o->baseline || s->cfg.baseline)
        s->baseline_path = o->baseline ? o->baseline : s->cfg.baseline;
    else if (config_locate(BASELINE_DEFAULT_FILE, s->found_baseline,
                           sizeof s->found_baseline) == 0)
        s->baseline_path = s->found_baseline;
    else
        s->baseline_path = o->baseline_default ? new_baseline_path(s) : NULL;
    return 0;
}

/* Folds the config's settings into the options: command-line values win,
 * config folders and plugin paths come after the command line's. */
static int fold_config(cli_session *s)
{
    cli_opts *o = s->o;
    const config *c = &s->cfg;
    size_t i;

    for (i = 0; i < c->nrules_dirs; i++)
        if (add_list(o->rules_dirs, &o->nrules_dirs, c->rules_dirs[i],
                     "rules_dirs"))
            return EXIT_USAGE;
    if (c->plugin_path) {
        int n = snprintf(s->plugin_path, sizeof s->plugin_path, "%s%s%s",
                         o->plugin_path && *o->plugin_path ? o->plugin_path : "",
                         o->plugin_path && *o->plugin_path ? ":" : "",
                         c->plugin_path);
        if (n < 0 || (size_t)n >= sizeof s->plugin_path)
            return cli_usage_error("%s: plugin_paths too long", c->path);
        o->plugin_path = s->plugin_path;
    }
    if (!o->fail_on && c->fail_on)
        o->fail_on = c->fail_on;
    o->allow_rule_errors |= c->allow_rule_errors;
    if (!o->pack_timeout_set && c->rule_pack_timeout_ms >= 0)
        o->rlimits.pack_timeout_ms = (unsigned)c->rule_pack_timeout_ms;
    o->cfg = c;
    return pick_baseline(s);
}

static int read_inputs(cli_session *s)
{
    cli_opts *o = s->o;
    op_error err;
    size_t i;

    op_error_clear(&err);
    if (analysis_init(&s->an, o->plugin_path, &o->limits, stderr, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return EXIT_NOINPUT;
    }
    s->an.quiet = o->quiet;
    s->an.verbose = o->verbose;
    if (progress_wanted(stderr, o->quiet))
        analysis_plan(&s->an, o->inputs, o->ninputs);
    o->fetch.progress = !o->quiet && isatty(STDERR_FILENO);
    s->an.fetch = &o->fetch;
    for (i = 0; i < o->ninputs; i++)
        analysis_add(&s->an, o->inputs[i]);
    analysis_freeze(&s->an);
    if (s->an.nok == 0) {
        diag_msg(DIAG_ERROR, "no input could be read");
        return EXIT_NOINPUT;
    }
    return EXIT_DONE;
}

static int load_baseline(cli_session *s)
{
    op_error err;
    struct stat st;

    if (!s->baseline_path)
        return 0;
    op_error_clear(&err);
    s->baseline_read = stat(s->baseline_path, &st) == 0;
    if (!s->baseline_read && !s->o->quiet)
        diag_msg(DIAG_NOTE, "%s: no decisions yet (the file does not "
                        "exist)", s->baseline_path);
    if (baseline_load(s->baseline_path, &s->bl, 1, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return EXIT_USAGE;
    }
    s->nbaselined = baseline_apply(&s->bl, &s->res);
    return 0;
}

void cli_session_applied(const cli_session *s, report_applied *a)
{
    memset(a, 0, sizeof *a);
    a->config = s->cfg.path;
    a->ignored = s->nignored;
    a->baseline = s->baseline_path && s->baseline_read ? s->baseline_path : NULL;
    a->suppressed = s->nbaselined;
}

int cli_session_run(cli_session *s, cli_opts *o)
{
    op_error err;
    unsigned long t;
    int code;

    memset(s, 0, sizeof *s);
    s->o = o;
    config_init(&s->cfg);
    results_init(&s->res);
    baseline_init(&s->bl);
    op_error_clear(&err);
    if (!o->no_config && config_find(o->config_path, &s->cfg, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return err.code == OP_ENOMEM ? EXIT_NOINPUT : EXIT_USAGE;
    }
    if ((code = fold_config(s)))
        return code;
    t = cli_now_ms();
    if (cli_load_rules(o, &s->rs, &s->res, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return err.code == OP_EUSAGE ? EXIT_USAGE : EXIT_NOINPUT;
    }
    s->t_rules = cli_now_ms() - t;
    t = cli_now_ms();
    if ((code = read_inputs(s)))
        return code;
    s->t_read = cli_now_ms() - t;
    t = cli_now_ms();
    if (ruleset_run(s->rs, s->an.m, &s->res, &err)) {
        diag_msg(DIAG_ERROR, "rule engine: %s", err.msg);
        return EXIT_NOINPUT;
    }
    results_finish(&s->res, s->an.m);
    s->t_rules += cli_now_ms() - t;
    s->nignored = config_ignore_findings(&s->cfg, s->an.m, &s->res);
    return load_baseline(s);
}

void cli_session_free(cli_session *s)
{
    ruleset_free(s->rs);
    results_free(&s->res);
    analysis_free(&s->an);
    baseline_free(&s->bl);
    config_free(&s->cfg);
    memset(s, 0, sizeof *s);
}
