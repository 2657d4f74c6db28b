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
    READS = CMD_ANALYZE | CMD_NORMALIZE | CMD_REVIEW | CMD_BASELINE,
    RUNS = CMD_ANALYZE | CMD_REVIEW | CMD_BASELINE,
    LOADS = RUNS | CMD_RULES,
    LIMITS = RUNS | CMD_RULES_TEST | CMD_RULES_LINT
};

typedef enum opt_id {
    O_QUIET, O_VERBOSE, O_NO_BASELINE, O_DETERMINISTIC, O_NO_BUNDLED, O_NO_CONFIG, O_SHOW_SUPPRESSED,
    O_ALL, O_PRUNE, O_FORCE, O_FORMAT, O_OUTPUT, O_RULES, O_PACK,
    O_PLUGIN_PATH, O_FAIL_ON, O_MAX_LINE, O_MAX_BYTES, O_TIMEOUT, O_MEMORY,
    O_INSTRUCTIONS, O_PACK_TIMEOUT, O_ISOLATE, O_CONFIG, O_BASELINE, O_EMIT, O_JUNIT,
    O_STATUS, O_REASON, O_SELECT, O_FINGERPRINT, O_ALLOW_RULE_ERRORS
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
    {"--no-config", NULL, O_NO_CONFIG, 0, LOADS},
    {"--show-suppressed", NULL, O_SHOW_SUPPRESSED, 0, CMD_ANALYZE},
    {"--all", NULL, O_ALL, 0, CMD_ANALYZE},
    {"--prune", NULL, O_PRUNE, 0, CMD_BASELINE},
    {"--force", NULL, O_FORCE, 0, CMD_RULES_NEW},
    {"--format", NULL, O_FORMAT, 1, CMD_ANALYZE | CMD_NORMALIZE},
    {"--output", "-o", O_OUTPUT, 1, CMD_ANALYZE | CMD_NORMALIZE | CMD_BASELINE},
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
    {"--config", NULL, O_CONFIG, 1, LOADS},
    {"--baseline", NULL, O_BASELINE, 1, CMD_ANALYZE | CMD_REVIEW},
    {"--emit-changes", NULL, O_EMIT, 1, CMD_ANALYZE},
    {"--junit", NULL, O_JUNIT, 1, CMD_RULES_TEST},
    {"--status", NULL, O_STATUS, 1, CMD_BASELINE},
    {"--reason", NULL, O_REASON, 1, CMD_BASELINE},
    {"--select", NULL, O_SELECT, 1, CMD_BASELINE},
    {"--fingerprint", NULL, O_FINGERPRINT, 1, CMD_BASELINE | CMD_REVIEW},
    {"--allow-rule-errors", NULL, O_ALLOW_RULE_ERRORS, 0, CMD_ANALYZE},
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
    case O_FINGERPRINT:
        return add_list(o->fingerprints, &o->nfingerprints, val, a);
    case O_PLUGIN_PATH: o->plugin_path = val; return 0;
    case O_CONFIG: o->config_path = val; return 0;
    case O_BASELINE: o->baseline = val; return 0;
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

/* The bar of the one session a command runs (the CLI runs one at a time). */
static progress_watcher session_bar;

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
