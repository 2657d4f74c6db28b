/*
 * rules.h - the Lua rule engine: loading rule files into the sandbox,
 * validating their metadata and running them over a frozen model.
 *
 * A ruleset holds rules from several packs (the bundled ones and every
 * --rules folder). Each pack is its own trust domain and gets its own Lua
 * state; rules from packs marked untrusted run in a forked worker, so that
 * a rule stalled inside a C function can be stopped (see docs/sandbox.md).
 */
#ifndef OP_CORE_RULES_H
#define OP_CORE_RULES_H

#include <cjson/cJSON.h>
#include <optipipe/common.h>

#include "findings.h"
#include "model.h"

typedef struct rule_limits {
    size_t mem_bytes;       /* per Lua state; default 64 MiB */
    uint64_t instructions;  /* per rule call; default 100,000,000 */
    unsigned timeout_ms;    /* wall clock per rule call; default 2000 */
    unsigned pack_timeout_ms; /* wall clock per pack per analysis: loading
                                 its files and the ruleset_run after,
                                 together (each later ruleset_run gets a
                                 whole one again); default 30000 */
    int isolate;            /* -1 auto (untrusted packs), 0 never, 1 always */
} rule_limits;

/* The error of every file or rule a pack could not load or run because
 * its pack_timeout_ms was spent. */
#define RULES_REASON_PACK_TIME "pack time budget exceeded"

void rule_limits_default(rule_limits *l);

typedef struct rule_meta {
    char *id, *title, *description;
    char *file; /* path the rule was loaded from */
    char *pack; /* pack name: a bundled pack folder, or the --rules folder */
    severity sev;          /* effective (after config) */
    severity default_sev;  /* as the rule declares it */
    int sev_configured;    /* the config set sev: it applies to every finding,
                            * also those the rule reports with a severity */
    char **sources;        /* the source names it runs on, or {"*"} */
    size_t nsources;
    char **tags;
    size_t ntags;
    cJSON *options;   /* defaults declared by the rule (object), owned */
    cJSON *overrides; /* from config (object) or NULL, owned */
    int enabled;
    int trusted; /* from a bundled pack */
} rule_meta;

typedef struct ruleset ruleset;

/* Returns an empty ruleset using limits (copied), or NULL on OOM. */
ruleset *ruleset_new(const rule_limits *limits);
void ruleset_free(ruleset *rs);

/*
 * Loads every "*.lua" file directly in dir except "*_test.lua" as a rule of
 * pack `pack`. require() inside those rules resolves the sdk modules
 * (sdk_lua_dir, e.g. ".../sdk/lua": "optipipe.stats" -> optipipe/stats.lua)
 * and modules of the pack's own folder. A file that does not load or whose
 * metadata is invalid (syntax error, missing id, unknown severity, duplicate
 * id, ...) is recorded in errs->e with the file and line, and the others are
 * still loaded. Returns 0, or OP_EIO/OP_ENOTFOUND (with err) when dir itself
 * cannot be read.
 */
int ruleset_load_dir(ruleset *rs, const char *dir, const char *pack,
                     const char *sdk_lua_dir, int trusted, results *errs,
                     op_error *err);

/* At most this many bundled pack folders are looked at. */
#define RULES_MAX_PACKS 256

/* The rule pack folders under root (<home>/rules): its subfolders in name
 * order, without hidden ones and mappings/ (mapping packs, not rules).
 * names[0..*n) are strdup'ed, the caller frees each. Returns 0, or
 * OP_ENOTFOUND (root cannot be opened) / OP_ENOMEM with err; *n is the
 * count listed either way. */
int rules_pack_names(const char *root, char *names[RULES_MAX_PACKS],
                     size_t *n, op_error *err);

size_t ruleset_count(const ruleset *rs);
rule_meta *ruleset_rule(ruleset *rs, size_t i);
rule_meta *ruleset_find(ruleset *rs, const char *id);

/* Returns the options a call gets: m->options merged (recursively for
 * objects) with m->overrides. New object owned by the caller; NULL on OOM. */
cJSON *rule_meta_merged_options(const rule_meta *m);

/*
 * Runs every enabled rule: once per run whose source matches, or once over
 * the whole bundle for sources = {"*"}. Findings and rule errors are added to
 * out (not finished: the caller calls results_finish). The model is only
 * read. Returns 0, or OP_ENOMEM / OP_EIO when the engine itself failed.
 */
int ruleset_run(ruleset *rs, const model *m, results *out, op_error *err);

/*
 * Evaluates the Lua data file path (a *_test.lua) as luadata_eval_file
 * does, under lim's memory cap, instruction budget and time limit and,
 * unless lim->isolate is 0, in a forked worker that is killed after
 * timeout_ms (+ a grace period): a stall inside a C function ends as a
 * timeout. Returns 0 with *out (owned by the caller), or an op_status with
 * err naming path.
 */
int ruleset_eval_data(const rule_limits *lim, const char *path, cJSON **out,
                      op_error *err);

#endif
