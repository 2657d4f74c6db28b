/*
 * cli_table.c - optipipe's commands and options, each said once: name,
 * type, field of cli_opts, default, values and help, and each command's
 * run function. The parser, every --help, the "did you mean" hints and
 * --dump-options=json come from here (core/opts.c); the man page, the
 * completion and docs/cli.md's tables are generated from that dump
 * (scripts/gen-docs), and tests/e2e/cli_docs.sh checks they are current.
 *
 * Options shared by several commands are groups (Rules, Inputs, Rule
 * limits, ...); a command lists its own options and the groups it takes.
 * An engine's options are its own (core/engine.h): the commands reading
 * URL inputs take them through url_groups, and each engine's fetch is a
 * `fetch NAME` command built here from its table entry.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_table.h"
#include "diff.h"
#include "engine.h"
#include "store.h"
#include "util.h"

#define FIELD(f) .off = offsetof(cli_opts, f), .width = sizeof(((cli_opts *)0)->f)
#define FLAG(f) .type = OPT_FLAG, FIELD(f)
#define STR(f) .type = OPT_STRING, FIELD(f)
/* A repeatable option: at most lim words (opts.h's OPT_LIST). */
#define LIST(f, n, lim)                                                       \
    .type = OPT_LIST, FIELD(f), .count_off = offsetof(cli_opts, n), .max = lim
#define END {.name = NULL}
/* A number macro as the text of a default ("30"). */
#define DEF_OF(n) DEF_TEXT(n)
#define DEF_TEXT(n) #n

/* ---- values that come from the tables owning them ------------------------ */

static const char *severity_at(size_t i)
{
    return i <= SEV_ERROR ? severity_name((severity)i) : NULL;
}

static const char *status_at(size_t i)
{
    return i == 0 ? decision_status_name(DECISION_APPROVED)
         : i == 1 ? decision_status_name(DECISION_DISMISSED) : NULL;
}

static const char *json_only(size_t i)
{
    return i == 0 ? "json" : NULL;
}

static const char *text_or_json(size_t i)
{
    return i == 0 ? "text" : i == 1 ? "json" : NULL;
}

/* history runs: also html, a page with the trend chart */
static const char *text_json_html(size_t i)
{
    return i < 2 ? text_or_json(i) : i == 2 ? "html" : NULL;
}

/* rule_limits.isolate: -1 auto, 1 always, 0 never */
static const char *const isolate_names[] = {"auto", "always", "never"};
static const int isolate_values[] = {-1, 1, 0};

static const char *isolate_at(size_t i)
{
    return i < 3 ? isolate_names[i] : NULL;
}

/* ---- setters: what a plain store cannot say --------------------------------- */

static int set_isolate(void *base, const opt_spec *o, const opt_value *v,
                       op_error *err)
{
    cli_opts *c = base;
    size_t i;

    for (i = 0; i < 3; i++)
        if (strcmp(v->s, isolate_names[i]) == 0)
            c->session.rlimits.isolate = isolate_values[i];
    return 0;
}

static int set_memory(void *base, const opt_spec *o, const opt_value *v,
                      op_error *err)
{
    cli_opts *c = base;

    c->session.rlimits.mem_bytes = (size_t)v->u << 20; /* hi: in range */
    return 0;
}

static int set_pack_timeout(void *base, const opt_spec *o, const opt_value *v,
                            op_error *err)
{
    cli_opts *c = base;

    c->session.rlimits.pack_timeout_ms = (unsigned)v->u;
    c->session.pack_timeout_set = 1; /* beats rule_pack_timeout_ms */
    return 0;
}

static int set_token_env(void *base, const opt_spec *o, const opt_value *v,
                         op_error *err)
{
    cli_opts *c = base;
    const char *s = v->s;
    size_t i;
    int ok = s[0] && !(s[0] >= '0' && s[0] <= '9');

    for (i = 0; ok && s[i]; i++)
        ok = (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
             (s[i] >= '0' && s[i] <= '9') || s[i] == '_';
    if (!ok)
        return op_error_set(err, OP_EUSAGE, "--token-env takes the NAME of "
                            "an environment variable (the token itself must "
                            "not be on the command line)");
    c->fetch.token_env = s;
    return 0;
}

static int set_cacert(void *base, const opt_spec *o, const opt_value *v,
                      op_error *err)
{
    cli_opts *c = base;

    if (access(v->s, R_OK) != 0)
        return op_error_set(err, OP_EUSAGE, "--cacert %.200s: %s", v->s,
                            strerror(errno));
    c->fetch.cacert = v->s;
    return 0;
}

/* "30d" / "12h" / "90m" / "45s" / "2w": a whole number and its unit, in
 * milliseconds (history prune --older-than). */
static int set_age(void *base, const opt_spec *o, const opt_value *v,
                   op_error *err)
{
    static const char units[] = "smhdw";
    static const int64_t ms[] = {1000, 60000, 3600000, 86400000,
                                 7 * 86400000ll};
    cli_opts *c = base;
    const char *u;
    char *end;
    long long n;

    errno = 0;
    n = strtoll(v->s, &end, 10);
    u = end[0] ? strchr(units, end[0]) : NULL;
    if (errno || end == v->s || n < 0 || !u || end[1] != 0 ||
        n > INT64_MAX / ms[u - units])
        return op_error_set(err, OP_EUSAGE, "%s takes an age like 30d, 12h, "
                            "90m or 2w, not '%.100s'", o->name, v->s);
    c->older_than = v->s;
    c->older_than_ms = (int64_t)n * ms[u - units];
    return 0;
}

/* ---- shared groups ------------------------------------------------------------ */

static const opt_spec rules_specs[] = {
    {"--rules", NULL,
     LIST(session.rules_dirs, session.nrules_dirs, CLI_MAX_LIST),
     .metavar = "DIR",
     .help = "add a folder of user rules; each folder is its own pack and "
             "trust domain"},
    {"--pack", NULL, LIST(session.packs, session.npacks, CLI_MAX_LIST),
     .metavar = "NAME",
     .help = "run only this bundled pack (flink, spark, dbt, mixed)"},
    {"--no-bundled", NULL, FLAG(session.no_bundled),
     .help = "run no bundled pack, only the --rules folders"},
    {"--config", NULL, STR(session.config_path), .metavar = "FILE",
     .help = "the config file (default: the nearest optipipe.lua, here or in "
             "a parent up to the repository root)"},
    {"--no-config", NULL, FLAG(session.no_config),
     .help = "read no config file"},
    END};
static const opt_group g_rules = {"Rules", rules_specs, NULL, NULL};

static const opt_spec plugin_specs[] = {
    {"--plugin-path", NULL, STR(session.plugin_path), .metavar = "DIRS",
     .help = "':'-separated folders of external .so plugins (also "
             "OPTIPIPE_PLUGIN_PATH)"},
    {"--mappings", NULL, LIST(session.mapping_dirs, session.nmapping_dirs, CLI_MAX_LIST), .metavar = "DIR",
     .help = "add a folder of mapping packs (exporter metric names to model "
             "metrics, docs/mapping-packs.md); its packs win over the "
             "bundled ones"},
    END};
static const opt_group g_plugins = {"Inputs", plugin_specs, NULL, NULL};

static const opt_spec input_specs[] = {
    {"--max-line", NULL, .type = OPT_SIZE, FIELD(session.limits.max_line),
     .metavar = "BYTES", .def = "256m",
     .help = "longest input line accepted"},
    {"--max-bytes", NULL, .type = OPT_SIZE, FIELD(session.limits.max_bytes),
     .metavar = "BYTES", .def = "64g",
     .help = "decompressed bytes read per input"},
    END};
static const opt_group g_inputs = {"Inputs", input_specs, NULL, NULL};

static const opt_spec limit_specs[] = {
    {"--rule-timeout-ms", NULL, .type = OPT_SIZE,
     FIELD(session.rlimits.timeout_ms),
     .metavar = "N", .def = "2000", .help = "wall clock per rule call"},
    {"--rule-memory-mb", NULL, .type = OPT_SIZE, .hi = 1 << 20,
     .set = set_memory, .metavar = "N", .def = "64",
     .help = "memory cap per rule pack's Lua state"},
    {"--rule-instructions", NULL, .type = OPT_SIZE,
     FIELD(session.rlimits.instructions), .metavar = "N", .def = "100000000",
     .help = "VM instruction budget per rule call"},
    {"--rule-pack-timeout-ms", NULL, .type = OPT_SIZE, .hi = 4294967295.0,
     .set = set_pack_timeout, .metavar = "N", .def = "30000",
     .help = "wall clock per rule pack per analysis, its files' loading and "
             "all its rule calls together (beats the config's "
             "rule_pack_timeout_ms)"},
    {"--isolate", NULL, .type = OPT_ENUM, .choice = isolate_at,
     .set = set_isolate, .metavar = "MODE", .def = "auto",
     .help = "run rule packs in a forked worker (auto: the --rules packs)"},
    END};
static const opt_group g_limits = {"Rule limits (docs/sandbox.md)",
                                   limit_specs, NULL, NULL};

static const opt_spec quiet_specs[] = {
    {"--quiet", "-q", FLAG(session.quiet),
     .help = "no progress, notices or warnings on stderr (errors are always "
             "printed)"},
    END};
static const opt_group g_quiet = {"Messages", quiet_specs, NULL, NULL};

static const opt_spec verbose_specs[] = {
    {"--verbose", "-v", FLAG(session.verbose),
     .help = "name every skipped file, not just how many; text report: show "
             "each finding's evidence"},
    END};
static const opt_group g_verbose = {"Messages", verbose_specs, NULL, NULL};

/* Every request of `fetch` and of `analyze URL` (fetch_http.c). */
static const opt_spec conn_specs[] = {
    {"--timeout", NULL, .type = OPT_DOUBLE, FIELD(fetch.timeout_s),
     .lo = 0.001, .hi = 86400, .metavar = "SECONDS", .def = "30",
     .help = "one request, whole (Spark zip: the longest stall)"},
    {"--connect-timeout", NULL, .type = OPT_DOUBLE,
     FIELD(fetch.connect_timeout_s), .lo = 0.001, .hi = 86400,
     .metavar = "SECONDS", .def = "10", .help = "connecting"},
    {"--retries", NULL, .type = OPT_INT, FIELD(fetch.retries), .lo = 0,
     .hi = 10, .metavar = "N", .def = "2",
     .help = "after connection errors, timeouts and 5xx answers, with "
             "backoff"},
    {"--max-size", NULL, .type = OPT_SIZE, FIELD(fetch.max_response),
     .lo = 1, .metavar = "BYTES", .def = "64m; Spark zip 8g",
     .help = "cap per response"},
    {"--max-time", NULL, .type = OPT_DOUBLE, FIELD(fetch.max_time_s),
     .lo = 0.001, .hi = 86400.0 * 30, .metavar = "SECONDS",
     .def = "600 plus --samples x --interval",
     .help = "the whole fetch; what was fetched is still written"},
    {"--max-requests", NULL, .type = OPT_INT, FIELD(fetch.max_requests),
     .lo = 1, .hi = 1e9, .metavar = "N", .def = "5000 x (1 + --samples)",
     .help = "requests of the whole fetch"},
    {"--min-rate", NULL, .type = OPT_SIZE, FIELD(fetch.min_rate), .lo = 1,
     .metavar = "BYTES", .def = "1k",
     .help = "a download slower than this per second ..."},
    {"--min-rate-time", NULL, .type = OPT_DOUBLE, FIELD(fetch.min_rate_time_s),
     .lo = 1, .hi = 86400, .metavar = "SECONDS", .def = "30",
     .help = "... over this window fails"},
    {"--header", NULL, LIST(fetch.headers, fetch.nheaders, FETCH_MAX_HEADERS),
     .metavar = "'Name: value'",
     .help = "extra request header (not for secrets: use --token-env)"},
    {"--token-env", NULL, .type = OPT_STRING, .set = set_token_env,
     .metavar = "VAR",
     .help = "send the token in environment variable VAR as 'Authorization: "
             "Bearer <token>' (a value with a space, e.g. 'Basic dXNlcjpw', "
             "is sent as is)"},
    {"--cacert", NULL, .type = OPT_STRING, .set = set_cacert,
     .metavar = "FILE", .help = "trust the CA certificates in FILE (PEM)"},
    {"--insecure", NULL, FLAG(fetch.insecure),
     .help = "do not verify TLS certificates"},
    END};
static const opt_group g_conn = {"Fetching over HTTP(S) (docs/fetch.md)",
                                 conn_specs, NULL, NULL};

/* ---- the engines' options (core/engine.h) ---------------------------------- */

#define CLI_ENGINES_MAX 32

/* An engine's group binds to its struct inside cli_opts.fetch. */
static void *bind_engine(void *base, const void *engine)
{
    return engine_opts(&((cli_opts *)base)->fetch, engine);
}

static const op_engine_options *options_of(const op_engine *e)
{
    return ENGINE_HAS(e, options) ? e->options : NULL;
}

static const op_engine_fetch *fetch_of(const op_engine *e)
{
    return ENGINE_HAS(e, fetch) ? e->fetch : NULL;
}

/* Each engine's group (NULL specs when it has no options), by its place
 * in the table. Built once by engine_groups(). */
static opt_group engine_group_at[CLI_ENGINES_MAX];

static void engine_groups(void)
{
    static int built;
    const op_engine *e;
    size_t i;

    if (built)
        return;
    built = 1;
    for (i = 0; i < CLI_ENGINES_MAX && (e = op_builtin_engines[i]); i++) {
        const op_engine_options *eo = options_of(e);
        if (eo && eo->specs)
            engine_group_at[i] = (opt_group){eo->title, eo->specs,
                                             bind_engine, e};
    }
}

/* The i-th group of the engines whose fetch reads a URL input into
 * memory (analyze URL): what every command taking inputs accepts. */
static const opt_group *url_groups(size_t i)
{
    const op_engine *e;
    size_t k, n = 0;

    engine_groups();
    for (k = 0; k < CLI_ENGINES_MAX && (e = op_builtin_engines[k]); k++)
        if (engine_group_at[k].specs && fetch_of(e) && fetch_of(e)->to_memory &&
            n++ == i)
            return &engine_group_at[k];
    return NULL;
}

/* The words that are not options: o->session.inputs, at most n of them. */
#define OPERANDS(what, n)                                                     \
    {.name = "operand", .metavar = what, .type = OPT_LIST,                    \
     FIELD(session.inputs),                                                   \
     .count_off = offsetof(cli_opts, session.ninputs), .max = n}

/* What analyze, review and baseline take besides their own options. */
#define RUN_GROUPS                                                            \
    &g_rules, &g_plugins, &g_inputs, &g_limits, &g_quiet, &g_verbose,         \
        &g_conn

/* The help of review's --baseline and baseline's -o. */
#define DECISIONS_FILE                                                        \
    "the decisions file (default: the config's baseline, else the nearest "   \
    ".optipipe-baseline.json here or in a parent up to the repository root, " \
    "else a new one next to optipipe.lua or here)"

/* ---- analyze, normalize ------------------------------------------------------ */

static const opt_spec analyze_specs[] = {
    {"--format", NULL, .type = OPT_ENUM, FIELD(format),
     .choice = report_format_name, .metavar = "FMT", .def = "text",
     .help = "report format (docs/output-formats.md)"},
    {"--output", "-o", STR(output), .metavar = "FILE",
     .help = "write the report to FILE instead of stdout"},
    {"--fail-on", NULL, .type = OPT_ENUM, FIELD(session.fail_on),
     .choice = severity_at, .metavar = "LEVEL",
     .help = "exit 1 when a finding at or above LEVEL exists"},
    {"--allow-rule-errors", NULL, FLAG(session.allow_rule_errors),
     .help = "a rule that failed does not fail the run (otherwise exit 5)"},
    {"--allow-missing", NULL, FLAG(allow_missing),
     .help = "an input path that does not exist does not fail the run "
             "(otherwise exit 2; the other inputs are analyzed either way)"},
    {"--baseline", NULL, STR(session.baseline), .metavar = "FILE",
     .help = "hide findings approved or dismissed in FILE (default: the "
             "config's, else the nearest .optipipe-baseline.json, found like "
             "the config)"},
    {"--no-baseline", NULL, FLAG(session.no_baseline),
     .help = "read no decisions file"},
    {"--history", NULL, STR(session.history), .metavar = "STORE",
     .help = "record the analysis in the run store STORE (a file, or a "
             "postgresql:// URI) and give rules the earlier runs of each job "
             "(default: OPTIPIPE_HISTORY, else the config's history); not "
             "recorded: exit 6"},
    {"--show-suppressed", NULL, FLAG(show_suppressed),
     .help = "show the findings the baseline or the config's ignore hid, "
             "marked"},
    {"--emit-changes", NULL, STR(emit_dir), .metavar = "DIR",
     .help = "write the approved findings' changes as config patches into DIR "
             "(needs a decisions file, or --all)"},
    {"--all", NULL, FLAG(emit_all),
     .help = "with --emit-changes: every finding's changes"},
    {"--deterministic", NULL, FLAG(deterministic),
     .help = "zero volatile fields (elapsed time) in reports"},
    {"--no-notify", NULL, FLAG(no_notify),
     .help = "send none of the config's webhook notifications "
             "(docs/notify.md)"},
    END};
static const opt_group g_analyze = {"Options", analyze_specs, NULL, NULL};

const opt_cmd cli_cmd_analyze = {
    "analyze", "[options] INPUT...", "analyze files, directories, URLs or '-'",
    "INPUT is a file, a directory (walked recursively, hidden files skipped, "
    "engines may be mixed), a Flink JobManager URL or '-' for standard input.",
    {&g_analyze, RUN_GROUPS, NULL},
    NULL, OPERANDS("INPUT", CLI_MAX_INPUTS), cli_run_analyze, url_groups};

static const opt_spec normalize_specs[] = {
    {"--format", NULL, .type = OPT_ENUM, FIELD(format), .choice = json_only,
     .metavar = "FMT", .def = "json", .help = "output format"},
    {"--output", "-o", STR(output), .metavar = "FILE",
     .help = "write the model to FILE instead of stdout"},
    END};
static const opt_group g_normalize = {"Options", normalize_specs, NULL, NULL};

const opt_cmd cli_cmd_normalize = {
    "normalize", "[options] INPUT...",
    "print the model exactly as rules see it",
    "Prints {\"schema\": 1, \"runs\": [...]} with every run and node exactly "
    "as rules see them (docs/model.md). optipipe reads that output back as an "
    "input, so a saved or hand-edited model can be analyzed again.",
    {&g_normalize, &g_plugins, &g_inputs, &g_quiet, &g_verbose, &g_conn,
     NULL},
    NULL, OPERANDS("INPUT", CLI_MAX_INPUTS), cli_run_normalize, url_groups};

/* ---- review, baseline ---------------------------------------------------------- */

static const opt_spec review_specs[] = {
    {"--baseline", NULL, STR(session.baseline), .metavar = "FILE",
     .help = DECISIONS_FILE},
    {"--fingerprint", NULL, LIST(fingerprints, nfingerprints, CLI_MAX_LIST), .metavar = "FP",
     .help = "only this finding; FP may be the first digits the text report "
             "shows, e.g. 9f1c0d3e"},
    END};
static const opt_group g_review = {"Options", review_specs, NULL, NULL};

const opt_cmd cli_cmd_review = {
    "review", "[options] INPUT...", "approve or dismiss findings one by one",
    "Analyzes INPUT like `analyze`, then shows each finding that has no "
    "decision yet and asks: (a)pprove, (d)ismiss with a reason, (s)kip or "
    "(q)uit. Decisions are saved by fingerprint after each answer to the "
    "decisions file; `analyze` then hides them.\n\n"
    "On a terminal, answers are single keys (read from /dev/tty). Otherwise "
    "standard input gives one answer per line: 'a', 'd REASON', 's' or 'q' "
    "(also 'approve', 'dismiss REASON', 'skip', 'quit'); end of input quits.",
    {&g_review, RUN_GROUPS, NULL},
    NULL, OPERANDS("INPUT", CLI_MAX_INPUTS), cli_run_review, url_groups};

static const opt_spec baseline_specs[] = {
    {"--output", "-o", STR(output), .metavar = "FILE",
     .help = DECISIONS_FILE},
    {"--status", NULL, .type = OPT_ENUM, FIELD(status), .choice = status_at,
     .metavar = "S", .def = "dismissed", .help = "the decision recorded"},
    {"--reason", NULL, STR(reason), .metavar = "TEXT",
     .def = "'accepted as is when the baseline was created'",
     .help = "the reason recorded"},
    {"--select", NULL, LIST(select, nselect, CLI_MAX_LIST), .metavar = "GLOB",
     .help = "only findings of rules matching GLOB"},
    {"--fingerprint", NULL, LIST(fingerprints, nfingerprints, CLI_MAX_LIST), .metavar = "FP",
     .help = "only this finding; replaces an existing decision for it. FP may "
             "be a unique prefix (4+ hex digits), e.g. the 8 the text report "
             "shows"},
    {"--prune", NULL, FLAG(prune),
     .help = "update: drop decisions whose finding is gone"},
    END};
static const opt_group g_baseline = {"Options", baseline_specs, NULL, NULL};

const opt_cmd cli_cmd_baseline = {
    "baseline", "create|update [options] INPUT...",
    "record decisions without asking",
    "Records decisions for the current findings without asking.\n\n"
    "  create   a new decisions file with every finding of INPUT\n"
    "  update   keeps the file's decisions and adds the new findings",
    {&g_baseline, RUN_GROUPS, NULL},
    NULL, OPERANDS("INPUT", CLI_MAX_INPUTS), cli_run_baseline, url_groups};

/* ---- rules ------------------------------------------------------------------------ */

static const opt_spec none_specs[] = {END};
static const opt_group g_none = {"Options", none_specs, NULL, NULL};

const opt_cmd cli_cmd_rules_list = {
    "rules list", "[options]", "list the rules that would run",
    "Every rule that would run (after optipipe.lua): id, the severities it "
    "can emit ('off' when disabled), pack and title.",
    {&g_none, &g_rules, &g_quiet, NULL}, NULL,
    OPERANDS("ARGUMENT", CLI_MAX_INPUTS), cli_run_rules_list, NULL};

const opt_cmd cli_cmd_rules_show = {
    "rules show", "ID [options]", "show a rule's metadata and options",
    "One rule's metadata, its effective severity and the ones it can emit, "
    "its options (and which come from the config), its file and docs page.",
    {&g_none, &g_rules, &g_quiet, NULL}, NULL,
    OPERANDS("ID", CLI_MAX_INPUTS), cli_run_rules_show, NULL};

static const opt_spec test_specs[] = {
    {"--junit", NULL, STR(junit), .metavar = "FILE",
     .help = "also write the results as JUnit XML"},
    END};
static const opt_group g_test = {"Options", test_specs, NULL, NULL};

const opt_cmd cli_cmd_rules_test = {
    "rules test", "[options] [DIR|FILE...]", "run rule tests (*_test.lua)",
    "Runs every <rule>_test.lua in each DIR (or the given test FILEs; "
    "default: every bundled pack), prints one line per case and 'N passed, "
    "M failed', and exits 1 when a case failed (a named folder without tests "
    "fails too), 3 when no test was found. Packs load as for analyze: in a "
    "worker (--isolate auto), under the rule limits. The test format is in "
    "docs/writing-rules.md.",
    {&g_test, &g_plugins, &g_inputs, &g_limits, &g_quiet, NULL}, NULL,
    OPERANDS("DIR", CLI_MAX_INPUTS), cli_run_rules_test, NULL};

static const opt_spec new_specs[] = {
    {"--source", NULL, STR(source), .metavar = "NAME", .def = "spark",
     .help = "the engine the rule reads: a plugin's name (spark, dbt, flink) "
             "or '*' for every run at once"},
    {"--force", NULL, FLAG(force), .help = "overwrite existing files"},
    END};
static const opt_group g_new = {"Options", new_specs, NULL, NULL};

const opt_cmd cli_cmd_rules_new = {
    "rules new", "[options] PACK/NAME",
    "write a new rule, its test and docs page",
    "Writes PACK/NAME.lua, PACK/NAME_test.lua (one case that fires, one that "
    "stays quiet) and PACK/docs/<pack>.NAME.md.",
    {&g_new, NULL}, NULL, OPERANDS("PACK/NAME", CLI_MAX_INPUTS), cli_run_rules_new, NULL};

const opt_cmd cli_cmd_rules_lint = {
    "rules lint", "[options] [DIR...]",
    "check rule metadata without running rules",
    "Checks each rule's metadata without running it: load errors, docs page, "
    "test file, options used without a default, options declared but never "
    "read. Exits 1 when it finds a problem. Packs load as for analyze.",
    {&g_none, &g_limits, &g_quiet, NULL}, NULL,
    OPERANDS("DIR", CLI_MAX_INPUTS), cli_run_rules_lint, NULL};

/* ---- plugins, fetch ----------------------------------------------------------------- */

const opt_cmd cli_cmd_plugins_list = {
    "plugins list", "[options]", "list input plugins", NULL,
    {&g_none, &g_plugins, &g_quiet, NULL}, NULL,
    OPERANDS("ARGUMENT", CLI_MAX_INPUTS), cli_run_plugins_list, NULL};

static const char fetch_exit[] =
    "Exit codes:\n\n"
    "  0 complete\n"
    "  2 usage error\n"
    "  3 nothing could be fetched\n"
    "  4 written but incomplete (the failed paths are named on stderr and\n"
    "    listed in the export under \"errors\")";

/* ---- history ---------------------------------------------------------------------- */

static const opt_spec store_specs[] = {
    {"--history", NULL, STR(session.history), .metavar = "STORE",
     .help = "the run store: a file or a postgresql:// URI (default: "
             "OPTIPIPE_HISTORY, else the config's history)"},
    {"--config", NULL, STR(session.config_path), .metavar = "FILE",
     .help = "the config file, which may name the store (default: the "
             "nearest optipipe.lua, here or in a parent up to the repository "
             "root)"},
    {"--no-config", NULL, FLAG(session.no_config),
     .help = "read no config file"},
    END};
static const opt_group g_store = {"Run store (docs/history.md)", store_specs, NULL, NULL};

static const opt_spec hist_format_specs[] = {
    {"--format", NULL, .type = OPT_ENUM, FIELD(format), .choice = text_or_json,
     .metavar = "FMT", .def = "text", .help = "output format"},
    {"--output", "-o", STR(output), .metavar = "FILE",
     .help = "write to FILE instead of stdout"},
    END};
static const opt_group g_hist_format = {"Options", hist_format_specs, NULL, NULL};

static const opt_spec hist_runs_specs[] = {
    {"--format", NULL, .type = OPT_ENUM, FIELD(format),
     .choice = text_json_html, .metavar = "FMT", .def = "text",
     .help = "output format (html: one page with a chart of the trend)"},
    {"--output", "-o", STR(output), .metavar = "FILE",
     .help = "write to FILE instead of stdout"},
    {"--metric", NULL, STR(metric), .metavar = "NAME", .def = "duration_ms",
     .help = "the metric of the trend: duration_ms or a run metric such as "
             "jobs_wall_ms"},
    {"--node", NULL, STR(node), .metavar = "ID",
     .help = "the trend of one node instead of the run: --metric is then "
             "duration_ms or a node metric such as execution_time_ms or "
             "rows_affected"},
    {"--limit", NULL, .type = OPT_INT, FIELD(limit), .lo = 1,
     .hi = STORE_HISTORY_MAX, .metavar = "N",
     .def = DEF_OF(STORE_HISTORY_DEFAULT),
     .help = "the newest N runs, at most " DEF_OF(STORE_HISTORY_MAX)},
    END};
static const opt_group g_hist_runs = {"Options", hist_runs_specs, NULL, NULL};

static const opt_spec hist_prune_specs[] = {
    {"--keep", NULL, .type = OPT_INT, FIELD(keep), .lo = 1, .hi = INT32_MAX,
     .metavar = "N", .help = "keep the newest N runs of each job"},
    {"--older-than", NULL, .type = OPT_STRING, .set = set_age,
     .metavar = "AGE",
     .help = "remove the runs started more than AGE ago: a whole number and "
             "s, m, h, d or w (30d, 12h, 90m, 2w)"},
    END};
static const opt_group g_hist_prune = {"Options", hist_prune_specs, NULL, NULL};

const opt_cmd cli_cmd_history_jobs = {
    "history jobs", "[options]", "list the jobs of the run store",
    "Each job of the run store with its source, run count and newest start.",
    {&g_hist_format, &g_store, &g_quiet, NULL}, NULL,
    OPERANDS("ARGUMENT", CLI_MAX_INPUTS), cli_run_history, NULL};

const opt_cmd cli_cmd_history_runs = {
    "history runs", "JOB [options]", "a job's runs, newest first, and a trend",
    "The job's stored runs, newest first, with the value of --metric and, in "
    "text, a sparkline of it from oldest to newest.",
    {&g_hist_runs, &g_store, &g_quiet, NULL}, NULL,
    OPERANDS("JOB", 1), cli_run_history, NULL};

const opt_cmd cli_cmd_history_show = {
    "history show", "RUN [options]", "one stored run and its findings",
    "One stored run with its findings and their decisions. RUN is a stored "
    "run id, or JOB@latest / JOB@previous.",
    {&g_hist_format, &g_store, &g_quiet, NULL}, NULL,
    OPERANDS("RUN", 1), cli_run_history, NULL};

static const opt_spec hist_notify_specs[] = {
    {"--format", NULL, .type = OPT_ENUM, FIELD(format), .choice = text_or_json,
     .metavar = "FMT", .def = "text", .help = "output format"},
    {"--output", "-o", STR(output), .metavar = "FILE",
     .help = "write to FILE instead of stdout"},
    {"--limit", NULL, .type = OPT_INT, FIELD(limit), .lo = 1,
     .hi = STORE_HISTORY_MAX, .metavar = "N",
     .def = DEF_OF(STORE_HISTORY_DEFAULT),
     .help = "the newest N deliveries, at most " DEF_OF(STORE_HISTORY_MAX)},
    END};
static const opt_group g_hist_notify = {"Options", hist_notify_specs, NULL,
                                        NULL};

const opt_cmd cli_cmd_history_notifications = {
    "history notifications", "[options]",
    "the webhook deliveries, newest first",
    "The delivery log of the webhook notifications (docs/notify.md): one "
    "line per event and delivery, with its endpoint, status, attempts and "
    "error.",
    {&g_hist_notify, &g_store, &g_quiet, NULL}, NULL,
    OPERANDS("ARGUMENT", CLI_MAX_INPUTS), cli_run_history, NULL};

const opt_cmd cli_cmd_history_prune = {
    "history prune", "--keep N|--older-than AGE [options]",
    "remove old runs from the run store",
    "Keeps the newest --keep N runs of each job and/or removes the runs "
    "started more than --older-than AGE ago; one of them is needed.",
    {&g_hist_prune, &g_store, &g_quiet, NULL}, NULL,
    OPERANDS("ARGUMENT", CLI_MAX_INPUTS), cli_run_history, NULL};

/* ---- baseline export (over the run store) ----------------------------------------- */

static const opt_spec export_specs[] = {
    {"--output", "-o", STR(output), .metavar = "FILE",
     .help = "the decisions file to write (required)"},
    END};
static const opt_group g_export = {"Options", export_specs, NULL, NULL};

const opt_cmd cli_cmd_baseline_export = {
    "baseline export", "-o FILE [options]",
    "write the run store's decisions to a decisions file",
    "Writes every decision of the run store (the server's, and each one a "
    "recorded analysis' decisions file brought, the newest of each) to FILE "
    "as a decisions file, so that a repository can keep them under review. "
    "The store is only read.",
    {&g_export, &g_store, &g_quiet, NULL}, NULL,
    OPERANDS("ARGUMENT", 4096), cli_run_baseline_export, NULL};

const opt_cmd cli_cmd_history_copy = {
    "history copy", "SRC DST [options]",
    "copy a run store, SQLite and PostgreSQL either way",
    "Copies every run, node, finding and decision of the store SRC, the "
    "decisions' audit trail and the webhook notifications' tables into the "
    "store DST (a file or a postgresql:// URI each), in one transaction of "
    "DST: committed only when DST's row counts equal SRC's, else nothing is "
    "copied. DST must hold no runs, no decisions and no notification rows. "
    "Exit codes: 0 copied, "
    "2 usage, 3 a store cannot be opened or the copy failed (named on "
    "stderr).",
    {&g_quiet, NULL}, NULL, OPERANDS("STORE", 2), cli_run_history_copy, NULL};

/* ---- diff ------------------------------------------------------------------------ */

static const opt_spec diff_specs[] = {
    {"--format", NULL, .type = OPT_ENUM, FIELD(format),
     .choice = diff_format_name, .metavar = "FMT", .def = "text",
     .help = "output format (no sarif or junit: they report one analysis's "
             "findings, not a comparison)"},
    {"--output", "-o", STR(output), .metavar = "FILE",
     .help = "write the diff to FILE instead of stdout"},
    {"--top", NULL, .type = OPT_INT, FIELD(top), .lo = 1, .hi = DIFF_TOP_MAX,
     .metavar = "N", .def = DEF_OF(DIFF_TOP_DEFAULT),
     .help = "nodes listed, at most " DEF_OF(DIFF_TOP_MAX)},
    {"--ignore-key", NULL, LIST(ignore_keys, nignore_keys, CLI_MAX_LIST), .metavar = "GLOB",
     .help = "leave config keys matching GLOB out of the comparison, e.g. "
             "'spark.app.*'"},
    END};
static const opt_group g_diff = {"Options", diff_specs, NULL, NULL};

const opt_cmd cli_cmd_diff = {
    "diff", "A B [options]", "what changed between two runs",
    "What changed from run A to run B: config keys, engine version, "
    "resources, run metrics, the nodes whose duration changed most, and the "
    "findings that are new, resolved or changed. A and "
    "B are each an input (file, folder or URL, as analyze takes them) that "
    "yields one run, or a stored run: JOB@latest, JOB@previous (the run "
    "before the latest), JOB@best (the fastest that succeeded) or a run id "
    "(docs/history.md#diff).",
    {&g_diff, &g_store, &g_plugins, &g_inputs, &g_quiet, &g_verbose, NULL},
    NULL, OPERANDS("RUN", CLI_MAX_INPUTS), cli_run_diff, NULL};

/* ---- serve ----------------------------------------------------------------------- */

static const opt_spec serve_specs[] = {
    {"--listen", NULL, STR(serve.listen), .metavar = "ADDR:PORT",
     .def = SRV_LISTEN_DEFAULT,
     .help = "the address to serve on: a numeric IPv4 address or [IPv6]; "
             "port 0 takes any free one (printed). Not loopback: needs "
             "--token-file"},
    {"--data", NULL, STR(serve.data_dir), .metavar = "DIR",
     .help = "the server's folder (required; made 0700): the run store "
             "history.db, the uploads and the analyses"},
    {"--store", NULL, STR(serve.store), .metavar = "URI",
     .help = "the run store: a file (default DATA/history.db) or a "
             "postgresql://user@host:port/db URI (the password from "
             "~/.pgpass, PGPASSFILE or PGPASSWORD; docs/history.md)"},
    {"--token-file", NULL, STR(serve.token_file), .metavar = "FILE",
     .help = "Bearer tokens, one a line ('#' comments; each at least 16 "
             "bytes; the file readable by its owner only): every request but "
             "/healthz, /login and /static must present one"},
    {"--rules", NULL, LIST(serve.rules_dirs, serve.nrules_dirs, SRV_MAX_LIST),
     .metavar = "DIR", .help = "a rule folder every analysis runs besides "
                               "the bundled packs"},
    {"--config", NULL, STR(serve.config_path), .metavar = "FILE",
     .help = "an optipipe.lua for every analysis, and the server's "
             "webhooks (its notify, read at start; default: none; uploads "
             "never bring one)"},
    {"--allow-rule-upload", NULL, FLAG(serve.allow_rule_upload),
     .help = "accept .lua rules with an upload (field 'rules'); they run "
             "isolated"},
    {"--fetch-allow", NULL, LIST(serve.fetch_allow, serve.nfetch_allow, SRV_MAX_LIST),
     .metavar = "HOST", .help = "a host URL inputs may name (none: URL "
                                "inputs are refused)"},
    {"--public-origin", NULL, STR(serve.public_origin), .metavar = "URL",
     .help = "behind a proxy: the scheme://host[:port] browsers use "
             "(https://optipipe.example.com); its Host and Origin count as "
             "this server's"},
    {"--users", NULL, STR(serve.users_file), .metavar = "FILE",
     .help = "named users, 'NAME ROLE sha256:HEX' a line (`serve user add` "
             "writes them): each signs in with its own token and has a role, "
             "read, upload, decide or admin"},
    {"--auth-header", NULL, STR(serve.auth_header), .metavar = "NAME",
     .help = "behind an authenticating proxy: the header naming the user "
             "(X-Forwarded-User), believed only from --trusted-proxy "
             "addresses"},
    {"--trusted-proxy", NULL,
     LIST(serve.trusted_proxies, serve.ntrusted_proxies, SRV_MAX_LIST), .metavar = "CIDR",
     .help = "an address (or ADDR/BITS) whose --auth-header is believed"},
    {"--proxy-role", NULL, STR(serve.proxy_role), .metavar = "ROLE",
     .def = "read",
     .help = "the role of a proxy's user --users does not name (read, "
             "upload, decide, admin, or none: refused)"},
    END};
static const opt_group g_serve = {"Options", serve_specs, NULL, NULL};

static const opt_spec serve_limit_specs[] = {
    {"--max-upload-bytes", NULL, .type = OPT_SIZE,
     FIELD(serve.max_upload_bytes), .lo = 1, .metavar = "BYTES", .def = "1g",
     .help = "one upload, all its files (413 beyond)"},
    {"--max-files", NULL, .type = OPT_INT, FIELD(serve.max_files), .lo = 1,
     .hi = 100000, .metavar = "N", .def = DEF_OF(SRV_FILES_DEFAULT),
     .help = "files in one upload"},
    {"--threads", NULL, .type = OPT_INT, FIELD(serve.threads), .lo = 1,
     .hi = 256, .metavar = "N", .def = DEF_OF(SRV_THREADS_DEFAULT),
     .help = "HTTP threads"},
    {"--max-connections", NULL, .type = OPT_INT, FIELD(serve.max_connections),
     .lo = 1, .hi = 100000, .metavar = "N", .def = DEF_OF(SRV_CONNECTIONS_DEFAULT),
     .help = "connections at once; more wait in the listen backlog"},
    {"--conn-timeout", NULL, .type = OPT_INT, FIELD(serve.conn_timeout_s),
     .lo = 1, .hi = 86400, .metavar = "SECONDS",
     .def = DEF_OF(SRV_CONN_TIMEOUT_DEFAULT),
     .help = "a connection idle this long (a stalled client) is closed"},
    {"--workers", NULL, .type = OPT_INT, FIELD(serve.workers), .lo = 0,
     .hi = 1024, .metavar = "N", .def = "0: the number of CPUs",
     .help = "analyses running at once, each in its own process"},
    {"--queue", NULL, .type = OPT_INT, FIELD(serve.queue), .lo = 1,
     .hi = 100000, .metavar = "N", .def = DEF_OF(SRV_QUEUE_DEFAULT),
     .help = "analyses waiting; more get 429 with Retry-After"},
    {"--analysis-timeout", NULL, .type = OPT_INT,
     FIELD(serve.analysis_timeout_s), .lo = 1, .hi = 86400 * 7,
     .metavar = "SECONDS", .def = DEF_OF(SRV_ANALYSIS_TIMEOUT_DEFAULT),
     .help = "wall clock per analysis, then its worker is killed"},
    {"--heartbeat-stale", NULL, .type = OPT_INT,
     FIELD(serve.heartbeat_stale_s), .lo = 1, .hi = 86400,
     .metavar = "SECONDS", .def = DEF_OF(SRV_HEARTBEAT_STALE_DEFAULT),
     .help = "with a PostgreSQL --store: a running analysis whose instance "
             "gave no heartbeat this long is queued again"},
    {"--analysis-memory", NULL, .type = OPT_SIZE, FIELD(serve.analysis_memory),
     .lo = 1 << 20, .metavar = "BYTES", .def = "4g",
     .help = "address space per analysis worker (RLIMIT_AS)"},
    {"--server-memory", NULL, .type = OPT_SIZE, FIELD(serve.server_memory),
     .lo = 64 << 10, .metavar = "BYTES", .def = "512m",
     .help = "memory the server's own pages may hold at once; a request "
             "over it gets 503"},
    {"--worker", NULL, STR(serve.worker), .metavar = "ID",
     .help = "internal: run analysis ID of --data in this process (the "
             "server starts its workers so)"},
    END};
static const opt_group g_serve_limits = {"Limits (docs/serve.md)",
                                         serve_limit_specs, NULL, NULL};

const opt_cmd cli_cmd_serve = {
    "serve", "--data DIR [options]",
    "the upload service: web pages and a REST API",
    "Serves the web pages and the REST API (docs/serve.md, docs/api.md) until "
    "SIGINT or SIGTERM. Prints 'optipipe serve: listening on "
    "http://HOST:PORT' to stderr when ready and writes the port into "
    "DIR/serve.port. Exit codes: 0 stopped, 2 could not start (options, "
    "DIR in use by another server, address refused), 3 DIR not usable.",
    {&g_serve, &g_serve_limits, &g_quiet, NULL}, NULL,
    OPERANDS("ARGUMENT", CLI_MAX_INPUTS), cli_run_serve, NULL};

static const opt_spec serve_user_specs[] = {
    {"--users", NULL, STR(serve.users_file), .metavar = "FILE",
     .help = "the users file (required; made 0600 when missing)"},
    {"--role", NULL, STR(user_role), .metavar = "ROLE",
     .help = "read, upload, decide or admin (required)"},
    END};
static const opt_group g_serve_user = {"Options", serve_user_specs, NULL, NULL};

const opt_cmd cli_cmd_serve_user = {
    "serve user", "add NAME --role ROLE --users FILE [options]",
    "add a user of the server and print its token",
    "Adds NAME with ROLE to the users file of `serve --users` and prints a "
    "new token for it on stdout, this once: the file keeps only its "
    "SHA-256. NAME is what the pages show and decisions record as "
    "decided_by. A server reads the file when it starts.",
    {&g_serve_user, &g_quiet, NULL}, NULL,
    OPERANDS("ARGUMENT", 4096), cli_run_serve_user, NULL};

/* ---- fetch: one command per engine fetch (core/engine.h) -------------------------- */

static opt_cmd fetch_cmd_at[CLI_ENGINES_MAX];
static char fetch_name_at[CLI_ENGINES_MAX][72];
static opt_spec fetch_out_at[CLI_ENGINES_MAX][2];
static opt_group fetch_out_group_at[CLI_ENGINES_MAX];

/* `fetch NAME` of engine e (the i-th of the table): -o, -q, the engine's
 * options, the connection options. */
static const opt_cmd *fetch_cmd(size_t i, const op_engine *e)
{
    const op_engine_fetch *f = fetch_of(e);
    opt_cmd *c = &fetch_cmd_at[i];
    size_t g = 0;

    snprintf(fetch_name_at[i], sizeof fetch_name_at[i], "fetch %s", f->name);
    fetch_out_at[i][0] = (opt_spec){
        "--output", "-o", STR(output),
        .metavar = f->to_memory ? "FILE" : "DIR",
        .def = f->output_def ? f->output_def : f->to_memory ? "stdout" : NULL,
        .help = f->output_help ? f->output_help : "where to write the export"};
    fetch_out_group_at[i] = (opt_group){"Options", fetch_out_at[i], NULL, NULL};
    c->name = fetch_name_at[i];
    c->args = f->args ? f->args : "URL [options]";
    c->summary = f->summary ? f->summary : "fetch from a live server";
    c->about = f->about;
    c->groups[g++] = &fetch_out_group_at[i];
    c->groups[g++] = &g_quiet;
    if (engine_group_at[i].specs)
        c->groups[g++] = &engine_group_at[i];
    c->groups[g++] = &g_conn;
    c->groups[g] = NULL;
    c->after = fetch_exit;
    c->operands = (opt_spec)OPERANDS("URL", 1);
    c->run = cli_run_fetch;
    return c;
}

/* ---- the command table --------------------------------------------------------------- */

#define CLI_CMDS_MAX 96

const opt_cmd *const *cli_commands(void)
{
    static const opt_cmd *const before_fetch[] = {
        &cli_cmd_analyze, &cli_cmd_normalize, &cli_cmd_review,
        &cli_cmd_baseline, &cli_cmd_baseline_export, &cli_cmd_rules_list, &cli_cmd_rules_show,
        &cli_cmd_rules_test, &cli_cmd_rules_new, &cli_cmd_rules_lint,
        &cli_cmd_plugins_list, NULL};
    static const opt_cmd *const after_fetch[] = {
        &cli_cmd_history_jobs, &cli_cmd_history_runs, &cli_cmd_history_show,
        &cli_cmd_history_prune, &cli_cmd_history_notifications,
        &cli_cmd_history_copy, &cli_cmd_diff, &cli_cmd_serve,
        &cli_cmd_serve_user, NULL};
    static const opt_cmd *all[CLI_CMDS_MAX + 1];
    static int built;
    const op_engine *e;
    size_t i, n = 0;

    if (built)
        return all;
    built = 1;
    engine_groups();
    for (i = 0; before_fetch[i]; i++)
        all[n++] = before_fetch[i];
    for (i = 0; i < CLI_ENGINES_MAX && (e = op_builtin_engines[i]); i++)
        if (fetch_of(e) && n < CLI_CMDS_MAX - 8)
            all[n++] = fetch_cmd(i, e);
    for (i = 0; after_fetch[i]; i++)
        all[n++] = after_fetch[i];
    all[n] = NULL;
    return all;
}

/* ---- what the commands share ------------------------------------------------------- */

/* Whether cmd's first word is word (word NULL: every command). */
static int first_word_is(const opt_cmd *cmd, const char *word)
{
    size_t n = word ? strlen(word) : 0;

    return !word || (strncmp(cmd->name, word, n) == 0 &&
                     (cmd->name[n] == ' ' || cmd->name[n] == '\0'));
}

size_t cli_help_commands(FILE *f, const char *word)
{
    size_t i, n = 0;

    for (i = 0; cli_commands()[i]; i++) {
        char left[160];
        if (!first_word_is(cli_commands()[i], word))
            continue;
        snprintf(left, sizeof left, "%s %s", cli_commands()[i]->name,
                 cli_commands()[i]->args ? cli_commands()[i]->args : "");
        opts_help_row(f, left, cli_commands()[i]->summary);
        n++;
    }
    return n;
}

const char *cli_suggest_sub(const char *word, const char *sub)
{
    const char *subs[64];
    size_t i, n = 0;

    for (i = 0; cli_commands()[i] && n < 64; i++)
        if (word && first_word_is(cli_commands()[i], word) &&
            strchr(cli_commands()[i]->name, ' '))
            subs[n++] = strchr(cli_commands()[i]->name, ' ') + 1;
    return util_suggest(sub, subs, n, 3);
}

const opt_cmd *cli_find_sub(const char *word, const char *sub)
{
    size_t i, n = strlen(word);

    for (i = 0; cli_commands()[i]; i++)
        if (first_word_is(cli_commands()[i], word) && cli_commands()[i]->name[n] == ' ' &&
            strcmp(cli_commands()[i]->name + n + 1, sub) == 0)
            return cli_commands()[i];
    return NULL;
}

/* Whether word has commands of two words ("rules list"). */
static int cli_find_any_sub(const char *word)
{
    const opt_cmd *const *all = cli_commands();
    size_t i;

    for (i = 0; all[i]; i++)
        if (first_word_is(all[i], word) && strchr(all[i]->name, ' '))
            return 1;
    return 0;
}

/* Whether a is an option of one of word's commands that takes a value in
 * the next word. */
static int takes_next(const char *word, const char *a)
{
    const opt_spec *o;
    size_t i;

    if (a[1] == '-' && strchr(a, '='))
        return 0;
    for (i = 0; cli_commands()[i]; i++)
        if (first_word_is(cli_commands()[i], word) &&
            (o = opts_find(cli_commands()[i], a)) != NULL)
            return o->type != OPT_FLAG;
    return 0;
}

int cli_sub_index(const char *word, int argc, char **argv)
{
    int i;

    for (i = 0; i < argc; i++) {
        if (argv[i][0] != '-' || argv[i][1] == '\0')
            return i;
        if (strcmp(argv[i], "--") == 0)
            return i + 1 < argc ? i + 1 : argc;
        i += takes_next(word, argv[i]);
    }
    return argc;
}

int cli_unknown(const char *what, const char *word, const char *suggestion,
                const char *help_cmd)
{
    diag_msg(DIAG_ERROR, "unknown %s '%s'%s%s%s", what, word,
             suggestion ? " (did you mean '" : "", suggestion ? suggestion : "",
             suggestion ? "'?)" : "");
    diag_line(DIAG_ERROR, "Try 'optipipe %s%s--help'.", help_cmd ? help_cmd : "",
              help_cmd ? " " : "");
    return EXIT_USAGE;
}

/* "a, b or c": the second words of word's commands; 0 when none. */
static size_t sub_names(const char *word, char *buf, size_t len)
{
    const opt_cmd *const *all = cli_commands();
    size_t i, n = 0, total = 0, used = 0;

    for (i = 0; all[i]; i++)
        total += first_word_is(all[i], word) && strchr(all[i]->name, ' ');
    buf[0] = '\0';
    for (i = 0; all[i] && used < len; i++) {
        if (!first_word_is(all[i], word) || !strchr(all[i]->name, ' '))
            continue;
        n++;
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 n == 1 ? "" : n == total ? " or " : ", ",
                                 strchr(all[i]->name, ' ') + 1);
    }
    return n;
}

int cli_subcommand_help(const char *word, int argc, char **argv)
{
    char what[64];
    int help = argc >= 1 && (strcmp(argv[0], "--help") == 0 ||
                             strcmp(argv[0], "-h") == 0 ||
                             strcmp(argv[0], "help") == 0);
    FILE *f = help ? stdout : stderr;

    if (argc >= 1 && !help) {
        const char *hint = cli_suggest_sub(word, argv[0]);
        char subs[512];
        if (hint || !sub_names(word, subs, sizeof subs)) {
            snprintf(what, sizeof what, "%s command", word);
            return cli_unknown(what, argv[0], hint, word);
        }
        diag_msg(DIAG_ERROR, "unknown %s command '%s' (%s)", word, argv[0],
                 subs);
        diag_line(DIAG_ERROR, "Try 'optipipe %s --help'.", word);
        return EXIT_USAGE;
    }
    fputs("Usage:\n", f);
    cli_help_commands(f, word);
    fprintf(f, "\nEach takes --help for its options ('optipipe %s ... --help').\n",
            word);
    return help ? EXIT_DONE : EXIT_USAGE;
}

int cli_parse_opts(cli_opts *o, int argc, char **argv, const opt_cmd *cmd)
{
    op_error err;
    int rc;

    op_error_clear(&err);
    rc = opts_parse(cmd, o, argc, argv, &err);
    if (rc == OPTS_HELP) {
        opts_help(cmd, "optipipe", stdout);
        exit(EXIT_DONE);
    }
    if (rc) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        diag_line(DIAG_ERROR, "Try 'optipipe %s --help'.", cmd->name);
        return EXIT_USAGE;
    }
    if (o->session.quiet)
        diag_set_quiet(1);
    return 0;
}

/* ---- dispatch ----------------------------------------------------------------------- */

/* The row named exactly name, or NULL. */
static const opt_cmd *find_exact(const char *name)
{
    const opt_cmd *const *all = cli_commands();
    size_t i;

    for (i = 0; all[i]; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

/* The distinct first words of the table, for "did you mean". */
static size_t first_words(const char **out, size_t cap)
{
    const opt_cmd *const *all = cli_commands();
    size_t i, k, n = 0;

    for (i = 0; all[i] && n < cap; i++) {
        size_t len = strcspn(all[i]->name, " ");
        for (k = 0; k < n; k++)
            if (strlen(out[k]) == len && !strncmp(out[k], all[i]->name, len))
                break;
        if (k == n && len < 64) {
            static char words[CLI_CMDS_MAX][64];
            snprintf(words[n], sizeof words[n], "%.*s", (int)len,
                     all[i]->name);
            out[n] = words[n];
            n++;
        }
    }
    return n;
}

/* word has several commands: the one argv names (anywhere among the
 * options), run on argv without it. */
static int dispatch_sub(const char *word, int argc, char **argv)
{
    int at = cli_sub_index(word, argc, argv), i;
    const opt_cmd *cmd;
    char subs[512];

    if (at == argc) {
        for (i = 0; i < argc; i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
                return cli_subcommand_help(word, 1, argv + i);
        if (!argc || !sub_names(word, subs, sizeof subs))
            return cli_subcommand_help(word, 0, argv);
        diag_msg(DIAG_ERROR, "%s needs a command: %s", word, subs);
        diag_line(DIAG_ERROR, "Try 'optipipe %s --help'.", word);
        return EXIT_USAGE;
    }
    if (!(cmd = cli_find_sub(word, argv[at])))
        return cli_subcommand_help(word, 1, argv + at);
    memmove(argv + at, argv + at + 1, (size_t)(argc - at - 1) * sizeof *argv);
    return cmd->run(cmd, argc - 1, argv);
}

int cli_dispatch(int argc, char **argv)
{
    const char *word = argc > 0 ? argv[0] : "", *names[CLI_CMDS_MAX];
    const opt_cmd *cmd = find_exact(word);
    size_t n;

    /* a word that is a command and has subcommands too ("baseline" and
     * "baseline export"): the subcommand only when named right after it */
    if (cmd && (!cli_find_any_sub(word) || argc < 2 ||
                !cli_find_sub(word, argv[1])))
        return cmd->run(cmd, argc - 1, argv + 1);
    if (cli_find_any_sub(word))
        return dispatch_sub(word, argc - 1, argv + 1);
    n = first_words(names, CLI_CMDS_MAX);
    return cli_unknown(word[0] == '-' ? "option" : "command", word,
                       util_suggest(word, names, n, 3), NULL);
}
