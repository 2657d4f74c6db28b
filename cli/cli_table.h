/*
 * cli_table.h - the command table: every command of optipipe, its options
 * and its run function, described once (cli_table.c, read by core's
 * opts.c): what main() looks a command up in, what `optipipe --help`,
 * each `COMMAND --help`, `--dump-options=json` (and from it the man page,
 * the completion and the docs' tables) and the parser of each command use.
 * The `fetch NAME` commands and the URL options come from the engine table
 * (core/engine.h).
 */
#ifndef OP_CLI_CLI_TABLE_H
#define OP_CLI_CLI_TABLE_H

#include <stdio.h>

#include "opts.h"

/* The commands with a fixed table (the fetch commands are built from the
 * engine table: cli_commands). */
extern const opt_cmd cli_cmd_analyze, cli_cmd_normalize, cli_cmd_review,
    cli_cmd_baseline, cli_cmd_baseline_export, cli_cmd_rules_list, cli_cmd_rules_show,
    cli_cmd_rules_test, cli_cmd_rules_new, cli_cmd_rules_lint,
    cli_cmd_plugins_list, cli_cmd_history_jobs, cli_cmd_history_runs,
    cli_cmd_history_show, cli_cmd_history_prune,
    cli_cmd_history_notifications, cli_cmd_history_copy,
    cli_cmd_diff, cli_cmd_serve, cli_cmd_serve_user;

/* Every command, in the order `optipipe --help` lists them,
 * NULL-terminated: the rows above and a `fetch NAME` per engine fetch.
 * Built on first use (process-global, read-only afterwards). */
const opt_cmd *const *cli_commands(void);

/* Runs the command argv names (argv: the words after "optipipe"): its
 * first word, and for a word with several commands ("rules", "history")
 * the subcommand, wherever it is among the options (cli_sub_index), taken
 * out of argv before the run. Returns the exit code; an unknown command
 * is a usage error with "did you mean". */
int cli_dispatch(int argc, char **argv);

/* Writes every command, option and config key as JSON to f (the
 * --dump-options=json form, docs/architecture.md). */
void cli_dump_options(FILE *f);

/* Writes, for each command of cli_cmds whose first word is word (every
 * command when word is NULL), its synopsis and summary. Returns how many. */
size_t cli_help_commands(FILE *f, const char *word);

/* The second word of a command of cli_cmds starting with word that is
 * closest to sub ("rules lsit" -> "list"), or NULL. */
const char *cli_suggest_sub(const char *word, const char *sub);

/* The command of cli_cmds named "<word> <sub>" ("history", "jobs"), or
 * NULL. */
const opt_cmd *cli_find_sub(const char *word, const char *sub);

/* Where the subcommand of word is in argv: the index of the first word
 * that is neither an option of one of word's commands nor the value of
 * one ("history --history s.db jobs" -> 2), or argc when there is none. */
int cli_sub_index(const char *word, int argc, char **argv);

/* Prints "optipipe: unknown <what> '<word>' (did you mean '<suggestion>'?)"
 * (the hint only when suggestion is not NULL) and "Try 'optipipe
 * <help_cmd> --help'." to stderr; returns EXIT_USAGE (2). */
int cli_unknown(const char *what, const char *word, const char *suggestion,
                const char *help_cmd);

/* What a command with subcommands (rules, baseline, plugins, fetch) does
 * when argv[0] names none of them: no word prints its forms to stderr and
 * returns EXIT_USAGE; --help, -h or help prints them to stdout and returns
 * 0; another word is an unknown command (with "did you mean"), 2. */
int cli_subcommand_help(const char *word, int argc, char **argv);

#endif
