/*
 * cli.h - what the command-line front end shares between its files: the
 * options of every command (one table-driven parser), the bundled rule
 * packs next to the binary, and one "session" (config, rules, inputs,
 * findings, baseline) that analyze, review and baseline all run.
 *
 * Commands live in main.c (analyze, normalize, plugins), cmd_rules.c
 * (rules list|show|new|lint), rules_test.c (rules test) and review.c
 * (review, baseline). A new command exports `int x_main(int, char **)`
 * and gets one line in main.c's command table.
 */
#ifndef OP_CORE_CLI_H
#define OP_CORE_CLI_H

#include "analyze.h"
#include "fetch.h"
#include "baseline.h"
#include "config.h"
#include "diag.h"
#include "findings.h"
#include "report.h"
#include "rules.h"

#define CLI_MAX_LIST 64

/* 4 is fetch's FETCH_INCOMPLETE (fetch.h). EXIT_RULE_ERROR beats
 * EXIT_FINDINGS: the findings of a run where a rule failed are incomplete. */
enum { EXIT_DONE = 0, EXIT_FINDINGS = 1, EXIT_USAGE = 2, EXIT_NOINPUT = 3,
       EXIT_RULE_ERROR = 5 };

/* Which commands accept an option (cli_parse_opts). */
enum {
    CMD_ANALYZE = 1 << 0,
    CMD_NORMALIZE = 1 << 1,
    CMD_RULES = 1 << 2, /* rules list / show */
    CMD_PLUGINS = 1 << 3,
    CMD_REVIEW = 1 << 4,
    CMD_BASELINE = 1 << 5,
    CMD_RULES_TEST = 1 << 6,
    CMD_RULES_NEW = 1 << 7,
    CMD_RULES_LINT = 1 << 8,
    CMD_HISTORY = 1 << 9,
    CMD_DIFF = 1 << 10
};

typedef struct cli_opts {
    const char *format;
    const char *output;
    const char *rules_dirs[CLI_MAX_LIST];
    size_t nrules_dirs;
    const char *packs[CLI_MAX_LIST];
    size_t npacks;
    const char *plugin_path;
    const char *fail_on;
    int quiet;
    int verbose; /* -v: name every skipped file; the text report shows evidence */
    int deterministic;
    int no_bundled; /* --no-bundled: only --rules folders */
    int allow_rule_errors; /* --allow-rule-errors or the config: no exit 5 */
    input_limits limits;
    fetch_opts fetch; /* for http(s):// inputs (fetch.h) */
    rule_limits rlimits;
    int pack_timeout_set; /* --rule-pack-timeout-ms given (beats the config) */
    const char *inputs[4096];
    size_t ninputs;
    /* config and approvals */
    const char *config_path; /* --config FILE */
    int no_config;           /* --no-config */
    const config *cfg;       /* applied by cli_load_rules when set */
    const char *baseline;    /* --baseline FILE */
    const char *history;     /* --history FILE (analyze) */
    int record;              /* this command records into the run store */
    int no_baseline;         /* --no-baseline */
    const char *baseline_default; /* review, baseline: where a new decisions
                                   * file goes when none is found */
    int show_suppressed;     /* --show-suppressed */
    const char *emit_dir;    /* --emit-changes DIR */
    int emit_all;            /* --all */
    const char *junit;       /* rules test --junit FILE */
    const char *status;      /* baseline --status approved|dismissed */
    const char *reason;      /* baseline --reason TEXT */
    int prune;               /* baseline update --prune */
    const char *select[CLI_MAX_LIST]; /* baseline --select RULE_GLOB */
    size_t nselect;
    const char *fingerprints[CLI_MAX_LIST]; /* baseline --fingerprint FP */
    size_t nfingerprints;
    int force; /* rules new --force */
    size_t top; /* diff --top N: nodes listed (0: DIFF_TOP_DEFAULT) */
    const char *ignore_keys[CLI_MAX_LIST]; /* diff --ignore-key GLOB */
    size_t nignore_keys;
} cli_opts;

/* Opens the plugin registry alone (built-in and o->plugin_path) into an,
 * for commands that only list or check plugins. Returns 0, or EXIT_NOINPUT
 * after printing why (an is then freed). The caller frees an with
 * analysis_free on success. */
int cli_open_plugins(const cli_opts *o, analysis *an);

/* Prints "optipipe: <fmt with arg>" and a hint to stderr; returns
 * EXIT_USAGE. */
int cli_usage_error(const char *fmt, const char *arg);

/* Defaults for every command (format text, limits, OPTIPIPE_PLUGIN_PATH). */
void cli_opts_default(cli_opts *o);

/* Parses argv (the words after the command) into o: options the command
 * `cmd` (CMD_* bit) accepts, positional arguments into o->inputs. --help
 * prints help and exits 0. Returns 0, or EXIT_USAGE after saying why. */
int cli_parse_opts(cli_opts *o, int argc, char **argv, const char *help,
                   unsigned cmd);

/* The directory holding rules/ and lua/ (OPTIPIPE_HOME, or next to the
 * binary). Returns a static buffer. */
const char *cli_home(void);

/* Loads the bundled packs (only opts->packs when given) and every
 * opts->rules_dirs folder into a new ruleset, then applies opts->cfg when
 * set. Load errors go into errs and to stderr. Returns 0 or an op_status
 * with err (OP_EUSAGE for config mistakes). */
int cli_load_rules(const cli_opts *opts, ruleset **out, results *errs,
                   op_error *err);

/* Opens o->output (or stdout); NULL after a message. */
FILE *cli_open_output(const cli_opts *o);
/* Closes what cli_open_output returned; nonzero (after a message) when
 * writing failed. */
int cli_close_output(const cli_opts *o, FILE *f);

/*
 * One analysis as analyze, review and baseline run it: find the config
 * (unless --no-config), fold its rules_dirs / plugin_paths / baseline /
 * fail_on into the options, load and configure the rules, read the
 * inputs, run the rules, finish the results, mark ignored findings and,
 * when a baseline is named or found (--baseline, the config's, else the
 * nearest .optipipe-baseline.json: config_locate; not with --no-baseline),
 * load it (a missing file is empty) and mark decided findings suppressed.
 */
typedef struct cli_session {
    cli_opts *o;
    config cfg;
    analysis an;
    results res;
    ruleset *rs;
    baseline bl;
    const char *baseline_path; /* --baseline, else the config's, else the
                                * one found; may be NULL */
    int baseline_read;         /* baseline_path existed and was read */
    size_t nignored, nbaselined; /* findings hidden by config and baseline */
    char found_baseline[4096];
    char new_baseline[4096];
    char plugin_path[8192];
    unsigned long t_read, t_rules; /* milliseconds */
    const char *history_path; /* --history, OPTIPIPE_HISTORY, the config's;
                               * NULL when none or unusable */
    size_t nrecorded;         /* runs written into it */
} cli_session;

/* The run store of an analysis (cli_history.c, docs/history.md).
 * cli_history_open picks it (--history, OPTIPIPE_HISTORY, the config's
 * `history`), creates or migrates it and hands it to the rules
 * (model.store_path); a store that cannot be used is an error on stderr
 * naming it and the analysis goes on without history. cli_history_record
 * records the finished analysis (findings, baseline decisions) in it. */
void cli_history_open(cli_session *s);
/* The store a command uses: --history, else OPTIPIPE_HISTORY, else the
 * config's `history` (c may be NULL); NULL when none. */
const char *cli_history_path(const cli_opts *o, const config *c);
void cli_history_record(cli_session *s);

/* `optipipe diff A B` (cmd_diff.c). */
int diff_main(int argc, char **argv);

/* `optipipe history ...` (cli_history.c). */
int history_main(int argc, char **argv);

/* Runs the session (s is initialised here; free it with
 * cli_session_free() whatever the result). Returns an EXIT_* code. */
int cli_session_run(cli_session *s, cli_opts *o);
void cli_session_free(cli_session *s);

/* What the session applied, for a report's header (borrowed from s). */
void cli_session_applied(const cli_session *s, report_applied *a);

/* Milliseconds from a monotonic clock. */
unsigned long cli_now_ms(void);

/* `optipipe rules ...` (cmd_rules.c). Returns the process exit code. */
int rules_main(int argc, char **argv);

/* `optipipe rules test [DIR|FILE...]` (rules_test.c). */
int rules_test_main(const cli_opts *opts, int argc, char **argv);

/* `optipipe review` and `optipipe baseline` (review.c). */
int review_main(int argc, char **argv);
int baseline_main(int argc, char **argv);

#endif
