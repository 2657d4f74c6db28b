/*
 * report.h - reporters: one file per output format (report_<format>.c),
 * all reading the same frozen analysis and finished results.
 */
#ifndef OP_CORE_REPORT_H
#define OP_CORE_REPORT_H

#include <stdio.h>

#include "analyze.h"
#include "findings.h"
#include "rules.h"

/* What decided which findings are shown: the config file and decisions
 * file applied (NULL: none) and how many findings each hid. */
typedef struct report_applied {
    const char *config;
    const char *baseline;
    size_t ignored;    /* by the config's `ignore` */
    size_t suppressed; /* by a decision in the baseline */
    const char *currency; /* the config's costs currency; NULL: no rates */
    /* the decisions file against the run store (decision_merge.h); NULL
     * or empty: none */
    const struct decision_conflicts *conflicts;
} report_applied;

typedef struct report_ctx {
    const analysis *an;
    const results *res;
    ruleset *rs;          /* rule metadata (titles, docs); may be NULL */
    FILE *out;
    int color;            /* text only: ANSI colours allowed */
    int show_suppressed;  /* include findings hidden by a baseline */
    int verbose;          /* text only: show evidence (-v) */
    unsigned long elapsed_ms;
    unsigned long read_ms;  /* reading and parsing the inputs */
    unsigned long rules_ms; /* loading and running the rules */
    int deterministic;    /* write 0 for elapsed time (golden tests) */
    const char *fail_on;  /* --fail-on level name, NULL when not given:
                           * junit fails the findings at or above it */
    report_applied applied;
} report_ctx;

typedef int (*report_fn)(const report_ctx *ctx);

/* The reporter for a format name, or NULL when the format is unknown. */
report_fn report_find(const char *format);

/* The name of the i-th format of the table (text first, the default), or
 * NULL past the end: --format, its help and the tests iterate it. */
const char *report_format_name(size_t i);

/* The same names, space-separated (a static buffer built from the table). */
const char *report_formats(void);

/* Each writes the whole report for ctx to ctx->out and returns 0, or
 * OP_EIO when writing failed. The analysis and results are only read. */
int report_text(const report_ctx *ctx);
int report_json(const report_ctx *ctx);
int report_markdown(const report_ctx *ctx); /* PR comment (docs/output-formats.md) */
int report_sarif(const report_ctx *ctx);    /* SARIF 2.1.0 */
int report_junit(const report_ctx *ctx);    /* JUnit XML: a testcase per rule and run */
int report_html(const report_ctx *ctx);     /* one self-contained page with charts */

#endif
