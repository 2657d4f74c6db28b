/*
 * main.c - the optipipe command line (docs/cli.md): a lookup in the
 * command table (cli_table.c: each command's name, options and run
 * function), `--help`, `--version` and `--dump-options=json`. Exit codes:
 *   0 done, 1 findings at/above --fail-on, 2 usage error,
 *   3 no input could be read, 4 fetch incomplete, 5 a rule failed (beats 1).
 * Results go to stdout (or -o FILE), diagnostics to stderr.
 */
#include <string.h>

#include <lua.h>

#include "cli.h"
#include "cli_table.h"

/* What `optipipe --help` says around the command list (main_help). */
static const char help_intro[] =
    "Usage: optipipe COMMAND [options] ...\n"
    "\n"
    "Reads Spark event logs, dbt artifacts and Flink REST exports, runs rules\n"
    "written in Lua over one metrics model and prints recommendations.\n"
    "\n"
    "Commands:\n";

static const char help_outro[] =
    "\n"
    "  optipipe --version | --help | --dump-options=json | COMMAND --help\n"
    "\n"
    "A config file optipipe.lua in the working directory or a parent up to\n"
    "the repository root (or --config FILE) enables, disables and tunes\n"
    "rules (docs/config.md); .optipipe-baseline.json, found the same way,\n"
    "holds the approved and dismissed findings (docs/baselines.md).\n"
    "\n"
    "Exit codes: 0 done, 1 findings at/above --fail-on, 2 usage error,\n"
    "3 no input could be read, 4 fetch incomplete, 5 a rule failed\n"
    "(--allow-rule-errors accepts it; 5 wins over 1).\n";

/* `optipipe --help`: every command of the table, with its synopsis. */
static void main_help(FILE *f)
{
    fputs(help_intro, f);
    cli_help_commands(f, NULL);
    fputs(help_outro, f);
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;

    if (!cmd) {
        main_help(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("optipipe %s (plugin ABI %d.%d, %s)\n", OP_VERSION,
               OP_ABI_MAJOR, OP_ABI_MINOR, LUA_RELEASE);
        return EXIT_DONE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        main_help(stdout);
        return EXIT_DONE;
    }
    if (strcmp(cmd, "--dump-options=json") == 0 ||
        (strcmp(cmd, "--dump-options") == 0 && argc > 2 &&
         strcmp(argv[2], "json") == 0)) {
        cli_dump_options(stdout);
        return fflush(stdout) == 0 ? EXIT_DONE : EXIT_NOINPUT;
    }
    if (strncmp(cmd, "--dump-options", 14) == 0)
        return cli_usage_error("%s", "--dump-options takes json "
                               "(--dump-options=json)");
    return cli_dispatch(argc - 1, argv + 1);
}
