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
#include "diff.h"
#include "progress.h"

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

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
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
    qsort(names, n, sizeof *names, name_cmp);
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

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    uint64_t mult = 1;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    switch (*end) {
    case 'k': case 'K': mult = 1024ull; end++; break;
    case 'm': case 'M': mult = 1024ull * 1024; end++; break;
    case 'g': case 'G': mult = 1024ull * 1024 * 1024; end++; break;
    case 't': case 'T': mult = 1024ull * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end || v > UINT64_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

enum {
    ALL = 0xffff,
    READS = CMD_ANALYZE | CMD_NORMALIZE | CMD_REVIEW | CMD_BASELINE | CMD_DIFF,
    RUNS = CMD_ANALYZE | CMD_REVIEW | CMD_BASELINE,
    LOADS = RUNS | CMD_RULES,
    LIMITS = RUNS | CMD_RULES_TEST | CMD_RULES_LINT
};

typedef enum opt_id {
    O_QUIET, O_VERBOSE, O_NO_BASELINE, O_DETERMINISTIC, O_NO_BUNDLED, O_NO_CONFIG, O_SHOW_SUPPRESSED,
    O_ALL, O_PRUNE, O_FORCE, O_FORMAT, O_OUTPUT, O_RULES, O_PACK,
    O_PLUGIN_PATH, O_FAIL_ON, O_MAX_LINE, O_MAX_BYTES, O_TIMEOUT, O_MEMORY,
    O_INSTRUCTIONS, O_PACK_TIMEOUT, O_ISOLATE, O_CONFIG, O_BASELINE, O_EMIT, O_JUNIT,
    O_STATUS, O_REASON, O_SELECT, O_FINGERPRINT, O_ALLOW_RULE_ERRORS, O_HISTORY, O_TOP,
    O_IGNORE_KEY
} opt_id;

typedef struct opt_def {
    const char *name, *alias;
    opt_id id;
    int takes_value;
    unsigned cmds;
} opt_def;

/* Which options exist and which commands take them. */
static const opt_def opt_table[] = {
    {"--quiet", "-q", O_QUIET, 0, ALL},
    {"--verbose", "-v", O_VERBOSE, 0, READS},
    {"--no-baseline", NULL, O_NO_BASELINE, 0, CMD_ANALYZE},
    {"--deterministic", NULL, O_DETERMINISTIC, 0, CMD_ANALYZE},
    {"--no-bundled", NULL, O_NO_BUNDLED, 0, LOADS},
    {"--no-config", NULL, O_NO_CONFIG, 0, LOADS | CMD_DIFF},
    {"--show-suppressed", NULL, O_SHOW_SUPPRESSED, 0, CMD_ANALYZE},
    {"--all", NULL, O_ALL, 0, CMD_ANALYZE},
    {"--prune", NULL, O_PRUNE, 0, CMD_BASELINE},
    {"--force", NULL, O_FORCE, 0, CMD_RULES_NEW},
    {"--format", NULL, O_FORMAT, 1, CMD_ANALYZE | CMD_NORMALIZE | CMD_DIFF},
    {"--output", "-o", O_OUTPUT, 1, CMD_ANALYZE | CMD_NORMALIZE | CMD_BASELINE | CMD_DIFF},
    {"--rules", NULL, O_RULES, 1, LOADS},
    {"--pack", NULL, O_PACK, 1, LOADS},
    {"--plugin-path", NULL, O_PLUGIN_PATH, 1, READS | CMD_PLUGINS | CMD_RULES_TEST},
    {"--fail-on", NULL, O_FAIL_ON, 1, CMD_ANALYZE},
    {"--max-line", NULL, O_MAX_LINE, 1, READS | CMD_RULES_TEST},
    {"--max-bytes", NULL, O_MAX_BYTES, 1, READS | CMD_RULES_TEST},
    {"--rule-timeout-ms", NULL, O_TIMEOUT, 1, LIMITS},
    {"--rule-memory-mb", NULL, O_MEMORY, 1, LIMITS},
    {"--rule-instructions", NULL, O_INSTRUCTIONS, 1, LIMITS},
    {"--rule-pack-timeout-ms", NULL, O_PACK_TIMEOUT, 1, LIMITS},
    {"--isolate", NULL, O_ISOLATE, 1, LIMITS},
    {"--config", NULL, O_CONFIG, 1, LOADS | CMD_DIFF},
    {"--baseline", NULL, O_BASELINE, 1, CMD_ANALYZE | CMD_REVIEW},
    {"--emit-changes", NULL, O_EMIT, 1, CMD_ANALYZE},
    {"--junit", NULL, O_JUNIT, 1, CMD_RULES_TEST},
    {"--status", NULL, O_STATUS, 1, CMD_BASELINE},
    {"--reason", NULL, O_REASON, 1, CMD_BASELINE},
    {"--select", NULL, O_SELECT, 1, CMD_BASELINE},
    {"--fingerprint", NULL, O_FINGERPRINT, 1, CMD_BASELINE | CMD_REVIEW},
    {"--allow-rule-errors", NULL, O_ALLOW_RULE_ERRORS, 0, CMD_ANALYZE},
    {"--history", NULL, O_HISTORY, 1, CMD_ANALYZE | CMD_HISTORY | CMD_DIFF},
    {"--top", NULL, O_TOP, 1, CMD_DIFF},
    {"--ignore-key", NULL, O_IGNORE_KEY, 1, CMD_DIFF},
};

static const opt_def *find_opt(const char *a, unsigned cmd)
{
    size_t i;

    for (i = 0; i < sizeof opt_table / sizeof opt_table[0]; i++) {
        const opt_def *d = &opt_table[i];
        if ((d->cmds & cmd) &&
            (strcmp(a, d->name) == 0 || (d->alias && strcmp(a, d->alias) == 0)))
            return d;
    }
    return NULL;
}

static int add_list(const char **list, size_t *n, const char *v,
                    const char *opt)
{
    if (*n >= CLI_MAX_LIST)
        return cli_usage_error("too many %s options", opt);
    list[(*n)++] = v;
    return 0;
}

static int num_opt(const char *opt, const char *v, uint64_t *out)
{
    if (parse_size(v, out))
        return cli_usage_error("%s needs a number", opt);
    return 0;
}

static int set_flag(cli_opts *o, opt_id id)
{
    switch (id) {
    case O_QUIET: o->quiet = 1; diag_set_quiet(1); break;
    case O_VERBOSE: o->verbose = 1; break;
    case O_NO_BASELINE: o->no_baseline = 1; break;
    case O_DETERMINISTIC: o->deterministic = 1; break;
    case O_NO_BUNDLED: o->no_bundled = 1; break;
    case O_NO_CONFIG: o->no_config = 1; break;
    case O_SHOW_SUPPRESSED: o->show_suppressed = 1; break;
    case O_ALL: o->emit_all = 1; break;
    case O_PRUNE: o->prune = 1; break;
    case O_FORCE: o->force = 1; break;
    case O_ALLOW_RULE_ERRORS: o->allow_rule_errors = 1; break;
    default: break;
    }
    return 0;
}

static int set_limit(cli_opts *o, const char *a, opt_id id, const char *val)
{
    uint64_t v = 0;
    int rc = num_opt(a, val, &v);

    if (rc)
        return rc;
    switch (id) {
    case O_MAX_LINE: o->limits.max_line = (size_t)v; break;
    case O_MAX_BYTES: o->limits.max_bytes = v; break;
    case O_TIMEOUT: o->rlimits.timeout_ms = (unsigned)v; break;
    case O_MEMORY: o->rlimits.mem_bytes = (size_t)v * 1024 * 1024; break;
    case O_INSTRUCTIONS: o->rlimits.instructions = v; break;
    case O_PACK_TIMEOUT:
        o->rlimits.pack_timeout_ms = (unsigned)v;
        o->pack_timeout_set = 1;
        break;
    default: break;
    }
    return 0;
}

static int set_value(cli_opts *o, const char *a, opt_id id, const char *val)
{
    switch (id) {
    case O_FORMAT: o->format = val; return 0;
    case O_OUTPUT: o->output = val; return 0;
    case O_RULES: return add_list(o->rules_dirs, &o->nrules_dirs, val, a);
    case O_PACK: return add_list(o->packs, &o->npacks, val, a);
    case O_SELECT: return add_list(o->select, &o->nselect, val, a);
    case O_IGNORE_KEY: return add_list(o->ignore_keys, &o->nignore_keys, val, a);
    case O_FINGERPRINT:
        return add_list(o->fingerprints, &o->nfingerprints, val, a);
    case O_PLUGIN_PATH: o->plugin_path = val; return 0;
    case O_CONFIG: o->config_path = val; return 0;
    case O_BASELINE: o->baseline = val; return 0;
    case O_HISTORY: o->history = val; return 0;
    case O_EMIT: o->emit_dir = val; return 0;
    case O_JUNIT: o->junit = val; return 0;
    case O_REASON: o->reason = val; return 0;
    case O_FAIL_ON:
        if (severity_parse(val) < 0)
            return cli_usage_error("--fail-on takes info, warning or error, not '%s'", val);
        o->fail_on = val;
        return 0;
    case O_STATUS:
        if (decision_status_parse(val) < 0)
            return cli_usage_error("--status takes approved or dismissed, not '%s'", val);
        o->status = val;
        return 0;
    case O_TOP: {
        char *end;
        unsigned long n = strtoul(val, &end, 10);
        char msg[128];
        if (end == val || *end || val[0] == '-' || n < 1 || n > DIFF_TOP_MAX) {
            snprintf(msg, sizeof msg, "--top takes a whole number from 1 to %d, "
                     "not '%.40s'", DIFF_TOP_MAX, val);
            return cli_usage_error("%s", msg);
        }
        o->top = n;
        return 0;
    }
    case O_ISOLATE:
        if (strcmp(val, "auto") == 0)
            o->rlimits.isolate = -1;
        else if (strcmp(val, "always") == 0)
            o->rlimits.isolate = 1;
        else if (strcmp(val, "never") == 0)
            o->rlimits.isolate = 0;
        else
            return cli_usage_error("--isolate takes auto, always or never, not '%s'", val);
        return 0;
    default:
        return set_limit(o, a, id, val);
    }
}

static int add_input(cli_opts *o, const char *a)
{
    if (o->ninputs >= sizeof o->inputs / sizeof o->inputs[0])
        return cli_usage_error("too many inputs (at most %s)", "4096");
    o->inputs[o->ninputs++] = a;
    return 0;
}

int cli_parse_opts(cli_opts *o, int argc, char **argv, const char *help,
                   unsigned cmd)
{
    int i, rc;

    for (i = 0; i < argc; i++) {
        const char *a = argv[i];
        const opt_def *d;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help, stdout);
            exit(EXIT_DONE);
        }
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++)
                if ((rc = add_input(o, argv[i])))
                    return rc;
            break;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            if ((rc = add_input(o, a)))
                return rc;
            continue;
        }
        if (cmd & READS) { /* connection options of URL inputs */
            op_error ferr;
            rc = fetch_opt_parse(&o->fetch, argc, argv, &i, &ferr);
            if (rc < 0)
                return cli_usage_error("%s", ferr.msg);
            if (rc > 0)
                continue;
        }
        d = find_opt(a, cmd);
        if (!d)
            return cli_usage_error("unknown option '%s'", a);
        if (!d->takes_value) {
            set_flag(o, d->id);
            continue;
        }
        if (i + 1 >= argc || !argv[i + 1])
            return cli_usage_error("option %s needs a value", a);
        if ((rc = set_value(o, a, d->id, argv[++i])))
            return rc;
    }
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
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long)ts.tv_sec * 1000ul +
           (unsigned long)ts.tv_nsec / 1000000ul;
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
    cli_history_open(s);
    t = cli_now_ms();
    if (ruleset_run(s->rs, s->an.m, &s->res, &err)) {
        diag_msg(DIAG_ERROR, "rule engine: %s", err.msg);
        return EXIT_NOINPUT;
    }
    results_finish(&s->res, s->an.m);
    s->t_rules += cli_now_ms() - t;
    s->nignored = config_ignore_findings(&s->cfg, s->an.m, &s->res);
    if ((code = load_baseline(s)))
        return code;
    cli_history_record(s);
    return EXIT_DONE;
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
