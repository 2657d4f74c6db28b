/*
 * cli.h - what the command-line front end shares between its files: the
#include "cli_table.h"
#include "session.h"
 */
#ifndef OP_CORE_CLI_H
#define OP_CORE_CLI_H

#include "analyze.h"
#include "fetch.h"
#include "baseline.h"
#include "config.h"
#include "diag.h"
#include "findings.h"
#include "home.h"
#include "report.h"
#include "rules.h"
#include "cli_table.h"
#include "session.h"
#include "serve.h"

#define CLI_MAX_LIST 64

/* 4 is fetch's FETCH_INCOMPLETE (fetch.h). EXIT_RULE_ERROR beats
 * EXIT_FINDINGS: the findings of a run where a rule failed are incomplete. */
enum { EXIT_DONE = 0, EXIT_FINDINGS = 1, EXIT_USAGE = 2, EXIT_NOINPUT = 3,
       EXIT_RULE_ERROR = 5 };

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
    const char *source; /* rules new --source */
    const char *metric;      /* history runs --metric NAME */
    unsigned limit;          /* history runs --limit N */
    unsigned keep;           /* history prune --keep N; 0: not given */
    const char *older_than;  /* history prune --older-than AGE, as given */
    int64_t older_than_ms;   /* ... in milliseconds */
    size_t top; /* diff --top N: nodes listed (0: DIFF_TOP_DEFAULT) */
    const char *ignore_keys[CLI_MAX_LIST]; /* diff --ignore-key GLOB */
    size_t nignore_keys;
    serve_opts serve;        /* serve (cli/serve.h) */
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

/* Parses argv (the words after the command) into o with the command's
 * table (cli_table.c): its options, other words into o->inputs. --help
 * prints the command's help and exits 0. Returns 0, or EXIT_USAGE after
 * saying why (and what was meant, when close). */
int cli_parse_opts(cli_opts *o, int argc, char **argv, const opt_cmd *cmd);

/* Opens o->output (or stdout); NULL after a message. */
FILE *cli_open_output(const cli_opts *o);
/* Closes what cli_open_output returned; nonzero (after a message) when
 * writing failed. */
int cli_close_output(const cli_opts *o, FILE *f);

/*
 * The analysis as every command runs it: op_session_run (core/session.h)
 * with o's options, the progress bar on stderr for the inputs and
 * o->fetch for URL inputs. s is the caller's to op_session_free()
 * whatever the result; the folded options (fail_on, allow_rule_errors)
 * are s->o's. Returns an EXIT_* code after printing what failed.
 */
int cli_session_run(op_session *s, cli_opts *o, op_session_mode mode);

/* The request of cli_session_run alone (o must outlive the session). */
void cli_session_opts(cli_opts *o, op_session_opts *so);

/* The run store: given (--history), else OPTIPIPE_HISTORY, else c's
 * `history` (c may be NULL); NULL when none. Borrowed. */
const char *cli_history_path(const char *given, const config *c);

/* `optipipe diff A B` (cmd_diff.c). */
int diff_main(int argc, char **argv);
/* A stored run named by ref (JOB@latest, JOB@previous, JOB@best, a run
 * id) of st as the object diff_runs reads, into *out (free with
 * cJSON_Delete). Returns 0, OP_ENOTFOUND (no such run, err says so) or
 * another op_status with err. The server's /diff shares it. */
struct store;
int diff_stored_run(struct store *st, const char *ref, cJSON **out,
                    op_error *err);

/* `optipipe serve` (serve.c): parses the options, then serve_main. */
int serve_cli_main(int argc, char **argv);

/* `optipipe history ...` (cmd_history.c). */
int history_main(int argc, char **argv);

/* Prints the error of a failed session; returns its EXIT_* code. */
int cli_session_error(const op_session *s, int status, const op_error *err);

/* Milliseconds from a monotonic clock. */
unsigned long cli_now_ms(void);

/* ---- cmd_fetch.c ---- */

/* Parses one connection or Flink option at argv[*i] (--job, --all-running,
 * --samples, --interval, --backpressure-wait, --max-metric-names,
 * --timeout, --connect-timeout, --retries, --max-size, --max-time,
 * --min-rate, --min-rate-time, --max-requests, --header, --token-env,
 * --cacert, --insecure). Values are borrowed from argv. Returns 1 and
 * advances *i past a consumed value, 0 when argv[*i] is not one of them,
 * -1 with err set when its value is missing or invalid. `analyze` calls
 * it to accept the same options for URL inputs. */
int fetch_opt_parse(fetch_opts *o, int argc, char **argv, int *i,
                    op_error *err);

/* The option lines of fetch_opt_parse, for --help texts. */
extern const char fetch_opts_help[];

/* `optipipe fetch flink|spark-history ...`; argv[0] is the subcommand.
 * Returns the process exit code (a fetch_result). */
int fetch_main(int argc, char **argv);

/* `optipipe rules ...` (cmd_rules.c). Returns the process exit code. */
int rules_main(int argc, char **argv);

/* `optipipe rules test [DIR|FILE...]` (cmd_rules_test.c). */
int rules_test_main(const cli_opts *opts, int argc, char **argv);

/* `optipipe review` (cmd_review.c). */
int review_main(int argc, char **argv);

/* `optipipe baseline create|update` (cmd_baseline.c), and what review
 * shares with it: whether o's --fingerprint / --select choose f; each
 * --fingerprint prefix replaced by the one full fingerprint of s's
 * findings it starts (full holds them; EXIT_USAGE after a message when
 * none or several match); writing the decisions file (-1 after a
 * message). */
int baseline_main(int argc, char **argv);
int cli_chosen(const cli_opts *o, const finding *f);
int cli_resolve_fingerprints(cli_opts *o, const op_session *s,
                             char full[][17]);
int cli_save_baseline(baseline *b, const char *path);

#endif
