/*
 * diff_findings.h - core's own side of the findings in a diff
 * (diff_findings.c): one finding into a run's "findings" array, whatever
 * it came from (a finding just made, a stored one), and the comparison
 * diff_runs adds as the diff's "findings" section.
 */
#ifndef OP_CORE_DIFF_FINDINGS_H
#define OP_CORE_DIFF_FINDINGS_H

#include <cjson/cJSON.h>

/* A finding as a diff reads it; every field borrowed, NULL when absent.
 * evidence (an object) wins over evidence_json (its text). */
typedef struct diff_finding_in {
    const char *fingerprint, *legacy_fp, *rule, *severity, *node, *message;
    const cJSON *evidence;
    const char *evidence_json;
} diff_finding_in;

/* Appends {fingerprint, legacy_fp (when it differs), rule, severity,
 * node, message, evidence} to arr (an evidence text that is not an
 * object is left out). 0, or -1 on out of memory. */
int diff_finding_add(cJSON *arr, const diff_finding_in *in);

/* Adds "findings" to the diff out: null when a side has no "findings"
 * array, else {a, b, new, resolved, changed, unchanged}
 * (docs/history.md#findings-in-a-diff). 0, or -1 on out of memory. */
int diff_findings(cJSON *out, const cJSON *a, const cJSON *b);

#endif
