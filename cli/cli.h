/*
 * cli.h - what the command-line front end shares between its files: the
 * options every command parses into (cli_opts, bound by cli_table.c), the
 * exit codes, the one session request made from them, and each command's
 * entry point. It sees core/include and serve/include alone.
 */
#ifndef OP_CLI_CLI_H
#define OP_CLI_CLI_H

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
#include "op_serve.h"

#define CLI_MAX_LIST 64      /* words of one repeatable option */
#define CLI_MAX_INPUTS 65536 /* words after a command (docs/cli.md) */

/* The exit codes (session.h's op_exit, shared with the server's workers). */
enum { EXIT_DONE = OP_EXIT_DONE, EXIT_FINDINGS = OP_EXIT_FINDINGS,
       EXIT_USAGE = OP_EXIT_USAGE, EXIT_NOINPUT = OP_EXIT_NOINPUT,
       EXIT_RULE_ERROR = OP_EXIT_RULE_ERROR,
       EXIT_NOT_RECORDED = OP_EXIT_NOT_RECORDED };

typedef struct cli_opts {
    /* What the pipeline reads (core/session.h): the rows of its options
     * bind straight to these fields (cli_table.c), so a pipeline option is
     * one row and one op_session_opts field. session.inputs holds every
     * command's words: a pipeline command's inputs, another's arguments.
     * session.fetch points at fetch below when a session runs. */
    op_session_opts session;
    const char *format;
    const char *output;
    int deterministic;
    int allow_missing;     /* --allow-missing: an input that does not exist is no exit 2 */
    int no_notify;         /* --no-notify: no webhook (docs/notify.md) */
    op_error session_err;  /* why cli_session_run failed (code 0: it did not) */
    fetch_opts fetch; /* for http(s):// inputs (fetch.h) */
    int show_suppressed;     /* --show-suppressed */
    const char *emit_dir;    /* --emit-changes DIR */
    int emit_all;            /* --all */
    const char *junit;       /* rules test --junit FILE */
    const char *status;      /* baseline --status approved|dismissed */
    const char *reason;      /* baseline --reason TEXT */
    int prune;               /* baseline update --prune */
    const char **select; /* baseline --select RULE_GLOB */
    size_t nselect;
    const char **fingerprints; /* baseline --fingerprint FP */
    size_t nfingerprints;
    int force; /* rules new --force */
    const char *source; /* rules new --source */
    const char *metric;      /* history runs --metric NAME */
    const char *node;        /* history runs --node ID: a node's metric */
    unsigned limit;          /* history runs --limit N */
    unsigned keep;           /* history prune --keep N; 0: not given */
    const char *older_than;  /* history prune --older-than AGE, as given */
    int64_t older_than_ms;   /* ... in milliseconds */
    size_t top; /* diff --top N: nodes listed (0: DIFF_TOP_DEFAULT) */
    const char **ignore_keys; /* diff --ignore-key GLOB */
    size_t nignore_keys;
    serve_opts serve;        /* serve (serve/include/op_serve.h) */
    const char *user_role;   /* serve user add --role ROLE */
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
 * saying why (and what was meant, when close). The lists it grew are
 * o's, released by cli_opts_free(o, cmd) whatever the result. */
int cli_parse_opts(cli_opts *o, int argc, char **argv, const opt_cmd *cmd);

/* Frees the arrays parsing o with cmd grew (its repeatable options and
 * its words) and empties them; o's other fields stay. */
void cli_opts_free(cli_opts *o, const opt_cmd *cmd);

/* A command's work over its parsed options; returns the exit code. */
typedef int (*cli_body_fn)(cli_opts *o, const opt_cmd *cmd);

/* The one place a command's options live: cli_opts_default, then preset
 * (the command's own defaults; may be NULL), cli_parse_opts with cmd,
 * body, cli_opts_free. Returns body's exit code, or the parse's. */
int cli_run_with_opts(const opt_cmd *cmd, int argc, char **argv,
                      void (*preset)(cli_opts *), cli_body_fn body);

/* Opens o->output (or stdout) with wfile_open (core/wfile.h: a symbolic
 * link there is refused, the file is put in place whole at close); NULL
 * after a message. One output at a time. */
FILE *cli_open_output(const cli_opts *o);
/* Closes what cli_open_output returned; nonzero (after a message) when
 * writing failed (the file is then left as it was). */
int cli_close_output(const cli_opts *o, FILE *f);

/*
 * The analysis as every command runs it: op_session_run (core/session.h)
 * with o->session, what the parse left in it completed by what a command
 * line adds (mode, the progress bar on stderr for the inputs, o->fetch
 * for URL inputs, OPTIPIPE_HISTORY). s is the caller's to op_session_free()
 * whatever the result; the folded options (fail_on, allow_rule_errors)
 * are s->o's. Returns an EXIT_* code after printing what failed.
 */
int cli_session_run(op_session *s, cli_opts *o, op_session_mode mode);

/* The run store: given (--history), else OPTIPIPE_HISTORY, else c's
 * `history` (c may be NULL); NULL when none. Borrowed. */
const char *cli_history_path(const char *given, const config *c);

/* `optipipe diff A B` (cmd_diff.c). */
int cli_run_diff(const opt_cmd *cmd, int argc, char **argv);

/* `optipipe serve` (cmd_serve.c): parses the options, then serve_main
 * (serve/include/op_serve.h). */
int cli_run_serve(const opt_cmd *cmd, int argc, char **argv);
/* `optipipe serve user add NAME --role ROLE --users FILE` (cmd_serve.c). */
int cli_run_serve_user(const opt_cmd *cmd, int argc, char **argv);

/* Prints the error of a failed session; returns its EXIT_* code. */
int cli_session_error(const op_session *s, int status, const op_error *err);

/* Milliseconds from a monotonic clock. */
unsigned long cli_now_ms(void);

/* ---- the commands' run functions (opt_cmd.run, cli_table.c) ---- */

/* `optipipe analyze` (cmd_analyze.c), `normalize` (cmd_normalize.c),
 * `plugins list` (cmd_plugins.c). */
int cli_run_analyze(const opt_cmd *cmd, int argc, char **argv);
int cli_run_normalize(const opt_cmd *cmd, int argc, char **argv);
int cli_run_plugins_list(const opt_cmd *cmd, int argc, char **argv);

/* `optipipe fetch NAME` (cmd_fetch.c): the engine whose fetch cmd names;
 * the exit code is a fetch_result. */
int cli_run_fetch(const opt_cmd *cmd, int argc, char **argv);

/* `optipipe rules list|show|new|lint|test` (cmd_rules.c,
 * cmd_rules_test.c). */
int cli_run_rules_list(const opt_cmd *cmd, int argc, char **argv);
int cli_run_rules_show(const opt_cmd *cmd, int argc, char **argv);
int cli_run_rules_new(const opt_cmd *cmd, int argc, char **argv);
int cli_run_rules_lint(const opt_cmd *cmd, int argc, char **argv);
int cli_run_rules_test(const opt_cmd *cmd, int argc, char **argv);

/* `optipipe history jobs|runs|show|prune` (cmd_history.c). */
int cli_run_history(const opt_cmd *cmd, int argc, char **argv);
/* `optipipe history copy SRC DST` (cmd_history_copy.c). */
int cli_run_history_copy(const opt_cmd *cmd, int argc, char **argv);

/* `optipipe review` (cmd_review.c). */
int cli_run_review(const opt_cmd *cmd, int argc, char **argv);

/* `optipipe baseline create|update` (cmd_baseline.c), and what review
 * shares with it: whether o's --fingerprint / --select choose f; each
 * --fingerprint prefix replaced by the one full fingerprint of s's
 * findings it starts (full holds them; EXIT_USAGE after a message when
 * none or several match); writing the decisions file (-1 after a
 * message). */
int cli_run_baseline(const opt_cmd *cmd, int argc, char **argv);
/* `optipipe baseline export` (cmd_baseline.c). */
int cli_run_baseline_export(const opt_cmd *cmd, int argc, char **argv);
int cli_chosen(const cli_opts *o, const finding *f);
int cli_resolve_fingerprints(cli_opts *o, const op_session *s,
                             char full[][17]);
/* baseline_save, its error said; 0 or the op_status (OP_EUSAGE: a
 * symbolic link or no file where path is, nothing written). */
int cli_save_baseline(baseline *b, const char *path);

#endif
