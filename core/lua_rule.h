/*
 * lua_rule.h - one rule inside a sandbox: loading a rule file and checking
 * its metadata, and running its check function once with a ctx whose
 * report() turns Lua tables into validated finding objects.
 *
 * Used the same way in-process and inside an isolated worker (rules.c).
 */
#ifndef OP_CORE_LUA_RULE_H
#define OP_CORE_LUA_RULE_H

#include <cjson/cJSON.h>

#include "rules.h"
#include "sbx.h"

/* Longest rule file read (bytes). */
#define LRULE_FILE_MAX (1u << 20)
/* Findings one call may report, and their rough total size in bytes. */
#define LRULE_MAX_FINDINGS 10000
#define LRULE_MAX_BYTES (16u << 20)

/* Frees every field of m and zeroes it. */
void rule_meta_clear(rule_meta *m);

/*
 * Loads the rule file path into s: reads it (at most LRULE_FILE_MAX
 * bytes; once per process, lrule_read), compiles it text-only as "@path" with its own _ENV, runs the
 * chunk under lim's instruction and time budget and validates the table it
 * returns into *meta (fields malloc'd: id, title, description, file, pack,
 * sev/default_sev, sources, tags, options (an object, {} when absent);
 * enabled = 1, trusted as given). On success *fn_ref is a registry
 * reference to check. Returns 0, or -1 with *reason (malloc'd, or NULL on
 * OOM): the Lua error with file and line, a limit reason, or
 * "<path>: <what is wrong>"; meta->id is set when it was read.
 */
int lrule_load(sbx *s, const char *path, const char *pack, int trusted,
               const rule_limits *lim, rule_meta *meta, int *fn_ref,
               char **reason);

/* Reads the rule file path (inside s's pack or SDK folder) into the
 * process' rule texts, as lrule_load does first: lrule_load of path
 * later, also in a forked child, runs that text and reads no file. 0, or
 * -1 with *reason (caller frees). */
int lrule_read(const sbx *s, const char *path, char **reason);

/* Releases what lrule_load gave a rule. */
void lrule_unref(sbx *s, int fn_ref);

/* Rule metadata as JSON (for the pipe of an isolated worker) and back.
 * rule_meta_from_json returns 0 or -1 (malformed / OOM). */
cJSON *rule_meta_to_json(const rule_meta *m);
int rule_meta_from_json(const cJSON *j, rule_meta *m);


/* One call of a rule's check function. */
typedef struct lrule_call {
    const rule_meta *meta;
    int fn_ref;
    const model *m;
    size_t run_index;      /* into m->runs; SIZE_MAX: the whole bundle */
    const cJSON *options;  /* merged options, borrowed */
    cJSON *findings;       /* out: array of finding objects, owned by caller */
    size_t bytes;          /* rough size of findings so far */
    lua_Integer serial;    /* ties ctx.report to this call */
} lrule_call;

/*
 * Runs c->meta's check(run or bundle, ctx) under lim's budget. Findings
 * reported through ctx.report are validated (finding_check) and
 * collected in c->findings; a report that does not validate is a Lua error
 * in the rule. started(ud) (may be NULL) is called once the arguments are
 * built, right before the rule runs. Returns SBX_OK or an sbx_fail with
 * *reason (malloc'd, may be NULL on OOM).
 */
int lrule_exec(sbx *s, lrule_call *c, const rule_limits *lim,
               void (*started)(void *), void *ud, char **reason);

#endif
