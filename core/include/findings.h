/*
 * findings.h - the results of running rules: findings and rule errors.
 *
 * Rules (possibly in a forked worker) describe each finding as a cJSON
 * object; results_add_finding() validates it against the frozen model and
 * keeps its own copy. results_finish() fingerprints and sorts, after which
 * reporters read the arrays in order.
 */
#ifndef OP_CORE_FINDINGS_H
#define OP_CORE_FINDINGS_H

#include <cjson/cJSON.h>
#include <optipipe/common.h>

#include "model.h"

typedef enum severity { SEV_INFO = 0, SEV_WARNING = 1, SEV_ERROR = 2 } severity;

/* "info" / "warning" / "error"; returns -1 for anything else. */
int severity_parse(const char *s);
const char *severity_name(severity s);

/* Why a finding is hidden (finding.suppressed): a decision in the
 * decisions file (baseline.h), or the config's `ignore` (config.h). */
typedef enum finding_hidden {
    FINDING_SHOWN = 0,
    FINDING_BASELINE = 1,
    FINDING_IGNORED = 2
} finding_hidden;

/* A person's decision on a finding, as the decisions file records it. */
typedef enum decision_status {
    DECISION_APPROVED = 1,
    DECISION_DISMISSED = 2
} decision_status;

/* "approved" / "dismissed"; -1 for anything else. */
int decision_status_parse(const char *s);
const char *decision_status_name(decision_status s);

typedef struct finding {
    char *rule, *title, *source, *run_id, *node_id, *node_name;
    char *message, *recommendation;
    severity sev;
    cJSON *evidence; /* object, owned; keys sorted */
    cJSON *changes;  /* array of {target,key,from,to}, owned */
    double impact_ms; /* estimated time saved; < 0 when the rule gave none */
    double savings;   /* money that saves under the config's costs
                       * (core/costs.c); only when savings_basis is set */
    char *savings_basis; /* how the rate was derived, owned; NULL: no
                          * estimate (no rates, no time saved) */
    size_t run_index; /* into model.runs; SIZE_MAX for bundle-wide findings */
    char fingerprint[17]; /* 16 hex digits, keyed by the run's job */
    char legacy_fp[17];   /* the same before job keys (history key, name or
                           * id): decisions recorded under it still apply */
    finding_hidden suppressed; /* FINDING_SHOWN unless hidden */
} finding;

typedef struct rule_error {
    char *rule;  /* rule id, or the rule file when the id is unknown */
    char *error; /* reason: "instruction budget exceeded", traceback ... */
} rule_error;

typedef struct results {
    finding *f;
    size_t n, cap;
    rule_error *e;
    size_t ne, ecap;
    unsigned rules_run;
    size_t noop_dropped; /* findings whose every change set what was set */
} results;

void results_init(results *r);
void results_free(results *r);

/*
 * Adds a finding described by obj (borrowed), of the form
 *   {"rule": id, "title": t, "severity": "warning", "run": <run index>,
 *    "node": id?, "message": m, "recommendation": r?, "evidence": {}?,
 *    "changes": [{"target"?, "key", "from"?, "to"}]?,
 *    "impact": {"time_saved_ms": n}?}
 * "run" is omitted for bundle-wide findings. Validates it (message present,
 * run index and node exist in m, changes entries have key and to) and
 * copies it, without the changes whose `from` equals their `to` (they
 * change nothing); a finding all of whose changes were such is not added
 * (counted in r->noop_dropped). Returns 0, OP_EPARSE with err naming the
 * problem, or OP_ENOMEM.
 */
int results_add_finding(results *r, const model *m, const cJSON *obj,
                        op_error *err);

/* Validates obj as above without adding it (results_add_finding checks
 * with it; the rule sandbox checks a worker's findings before sending). */
int finding_check(const model *m, const cJSON *obj, op_error *err);

/* Records that rule failed for reason (both copied). 0 or OP_ENOMEM. */
int results_add_error(results *r, const char *rule, const char *reason);

/* Computes fingerprints and sorts findings (severity desc, impact desc,
 * rule id, run, node, message) and rule errors (rule id), then reconciles
 * changes: within one run, when findings set the same (target, key) to
 * different values, the first in that order keeps its change and every
 * later one loses it, its message saying why and naming the kept finding
 * (docs/rules-engine.md). Returns 0, or OP_ENOMEM (findings then stay
 * valid; a change that could not be annotated is kept). */
int results_finish(results *r, const model *m);

/* Count of the findings shown (not suppressed) at or above sev. */
size_t results_count_shown_at_least(const results *r, severity sev);

#endif
