/*
 * cli.h - what the command-line front end shares between its files:
 * options common to the commands and the helpers that find and load the
 * bundled rule packs next to the binary.
 */
#ifndef OP_CORE_CLI_H
#define OP_CORE_CLI_H

#include "analyze.h"
#include "findings.h"
#include "rules.h"

#define CLI_MAX_LIST 64

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
    int deterministic;
    int no_bundled; /* --no-bundled: only --rules folders */
    input_limits limits;
    rule_limits rlimits;
    const char *inputs[4096];
    size_t ninputs;
} cli_opts;

/* The directory holding rules/ and lua/ (OPTIPIPE_HOME, or next to the
 * binary). Returns a static buffer. */
const char *cli_home(void);

/* Loads the bundled packs (only opts->packs when given) and every
 * opts->rules_dirs folder into a new ruleset. Load errors go into errs and
 * to stderr. Returns 0 or an op_status with err. */
int cli_load_rules(const cli_opts *opts, ruleset **out, results *errs,
                   op_error *err);

/* `optipipe rules test [DIR...]`. Returns the process exit code. */
int rules_test_main(const cli_opts *opts, int argc, char **argv);

#endif
