/*
 * cli_table.h - every command of optipipe and its options, described once
 * (cli_table.c, read by opts.c): what `optipipe --help`, each
 * `COMMAND --help` and the parser of each command use.
 */
#ifndef OP_CORE_CLI_TABLE_H
#define OP_CORE_CLI_TABLE_H

#include <stdio.h>

#include "opts.h"

/* The commands, in the order `optipipe --help` lists them. */
extern const opt_cmd cli_cmd_analyze, cli_cmd_normalize, cli_cmd_review,
    cli_cmd_baseline, cli_cmd_rules_list, cli_cmd_rules_show,
    cli_cmd_rules_test, cli_cmd_rules_new, cli_cmd_rules_lint,
    cli_cmd_plugins_list, cli_cmd_history_jobs, cli_cmd_history_runs,
    cli_cmd_history_show, cli_cmd_history_prune, cli_cmd_diff,
    cli_cmd_fetch_flink, cli_cmd_fetch_spark, cli_cmd_serve;

/* Every command above, NULL-terminated. */
extern const opt_cmd *const cli_cmds[];

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
