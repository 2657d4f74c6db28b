/*
 * config.h - the project config file, optipipe.lua (docs/config.md): which
 * rules and packs run, at which severity and with which options, which
 * nodes are ignored, and where extra rules, plugins and the baseline are.
 *
 * The file is a Lua table evaluated in the sandbox (luadata.h). Loading
 * checks its shape; config_apply() checks it against the rules actually
 * loaded (unknown ids, option names and types are errors).
 */
#ifndef OP_CORE_CONFIG_H
#define OP_CORE_CONFIG_H

#include <cjson/cJSON.h>
#include <optipipe/common.h>

#include "findings.h"
#include "model.h"
#include "rules.h"

#define CONFIG_FILE_NAME "optipipe.lua"

typedef struct config_rule {
    char *pattern;  /* exact rule id, or an fnmatch(3) glob */
    int is_glob;
    int enabled;    /* -1 unchanged, 0 off, 1 on */
    int sev;        /* -1 unchanged, else a severity */
    cJSON *options; /* object of option overrides, or NULL */
} config_rule;

typedef struct config_pack {
    char *name;
    int enabled;
} config_pack;

typedef struct config_ignore {
    char *rule, *source, *run, *node; /* globs; NULL matches anything */
    char *reason;
} config_ignore;

typedef struct config {
    char *path; /* the file read; NULL when there is none */
    char *dir;  /* its folder: relative paths in the file start there */
    config_rule *rules;
    size_t nrules;
    config_pack *packs;
    size_t npacks;
    int packs_only; /* packs = {"a", "b"}: only those bundled packs */
    config_ignore *ignore;
    size_t nignore;
    char **rules_dirs; /* resolved against dir */
    size_t nrules_dirs;
    char **mapping_dirs; /* mapping pack folders (map_packs.h), resolved */
    size_t nmapping_dirs;
    char *plugin_path; /* ':'-joined, resolved against dir; NULL if none */
    char *baseline;    /* resolved against dir; NULL if none */
    char *history;     /* run store (docs/history.md), resolved; NULL if none */
    char *fail_on;     /* "info" | "warning" | "error"; NULL if none */
    long long rule_pack_timeout_ms; /* rule_limits.pack_timeout_ms; -1 if none */
    int allow_rule_errors; /* 1: a rule error does not fail analyze (exit 5) */
    cJSON *costs; /* the team's rates (core/costs.h), owned; NULL if none */
    cJSON *notify; /* webhook endpoints (core/notify.h), checked, owned;
                    * NULL if none */
} config;

struct opt_spec; /* opts.h */

/* The keys of optipipe.lua, one row each (opts.h's model: name, type,
 * value, default, meaning), NULL-terminated: what config_load accepts and
 * what `optipipe --dump-options=json` lists under "config". Static. */
const struct opt_spec *config_keys(void);

/* An empty config (what applies when there is no file). */
void config_init(config *c);
void config_free(config *c);

/*
 * Reads the config file at path into c (initialised here): evaluates it in
 * the sandbox and checks its shape. Returns 0, or OP_EUSAGE (a mistake in
 * the file: the message names the file and the key) / OP_EIO / OP_ENOMEM
 * with err.
 */
int config_load(const char *path, config *c, op_error *err);

/* Folders config_locate climbs at most. */
#define CONFIG_SEARCH_DEPTH 64

/*
 * Finds the nearest file `name` (optipipe.lua, .optipipe-baseline.json)
 * as ESLint or SQLFluff do: the working directory, then its parents up to
 * and including the top of the project, which is the first folder holding
 * `.git` (a repository's root) or the home folder, whichever comes first.
 * Outside both (no repository, not under $HOME) only the working
 * directory is searched. Writes the path, relative to the working
 * directory ("optipipe.lua", "../../optipipe.lua"), into out; returns 0,
 * or -1 when there is none.
 */
int config_locate(const char *name, char *out, size_t n);

/* Whether the working directory is inside a repository (a parent holds
 * `.git`). */
int config_in_repository(void);

/*
 * Finds and loads the config: `explicit_path` when given (it must exist),
 * else the nearest optipipe.lua (config_locate), else an empty config.
 * Returns 0 or an op_status with err.
 */
int config_find(const char *explicit_path, config *c, op_error *err);

/*
 * Applies c to the loaded rules: pack switches, then rule patterns (longer
 * patterns after shorter ones), then exact ids. Checks every rule id,
 * pack name, option name and option type against rs. `partial` is set when
 * only some packs were loaded (--pack, --no-bundled): ids and packs that
 * were not loaded are then skipped instead of refused. Returns 0 or
 * OP_EUSAGE with err naming the config file and the entry.
 */
int config_apply(const config *c, ruleset *rs, int partial, op_error *err);

/* Marks findings matched by an `ignore` entry as suppressed
 * (FINDING_IGNORED); returns how many. Call after results_finish(). */
size_t config_ignore_findings(const config *c, const model *m, results *res);

/* Whether every option in `got` exists in `want` (a rule's defaults) with
 * the same JSON type, recursively for objects. On a mismatch returns -1
 * and writes "<where>.<key>: ..." into msg. */
int config_check_options(const cJSON *want, const cJSON *got,
                         const char *where, char *msg, size_t msglen);

#endif
