/*
 * report_util.h - what the reporters share: which findings are shown,
 * counts, readable values and durations, and a cleaner built on the
 * UTF-8 decoder (utf8.h) so that control characters and broken bytes
 * from inputs never reach an output unchanged.
 */
#ifndef OP_CORE_REPORT_UTIL_H
#define OP_CORE_REPORT_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include "fmt.h" /* every number a reporter prints */
#include "report.h"
#include "utf8.h" /* the decoder every escaper uses */

/* Whether the report shows f (baseline-suppressed ones only on request). */
int report_visible(const report_ctx *ctx, const finding *f);

/* Counts the shown findings by severity (count[SEV_INFO..SEV_ERROR]) and
 * returns their total. */
size_t report_counts(const report_ctx *ctx, size_t count[3]);

/* The order in which reports show the runs: the shown (not superseded)
 * runs, the one with the worst finding first (findings are sorted by
 * severity and impact, results_finish, so "worst" is the rank of a run's
 * first shown finding), runs without findings last in input order. Returns
 * a new array of *n run indices (free with free()), or NULL when out of
 * memory or there is no run to show: callers then use input order. */
size_t *report_run_order(const report_ctx *ctx, size_t *n);

/* The run at position k of order (from report_run_order; NULL means input
 * order). */
size_t report_run_at(const size_t *order, size_t k);

/* The "Start here" findings into out (at most max, borrowed from
 * ctx->res): errors first, then by what they save, largest first (money
 * with the config's rates, docs/costs.md; else time), then the rest in
 * the findings' order; one per rule first, then filled up in that order.
 * Returns how many. */
#define REPORT_START_HERE 3
size_t report_start_here(const report_ctx *ctx, const finding **out, size_t max);

/* Money (docs/costs.md): the sum of the estimated savings of the visible
 * priced findings of run (an index into the model's runs; SIZE_MAX: all)
 * into *sum; returns how many there are (0: no rates, or nothing priced).
 * A run-level finding whose rule also priced node findings of that run is
 * left out of the sum (it restates them). */
size_t report_savings(const report_ctx *ctx, size_t run, double *sum);

/* An amount in currency ("$12.30", "EUR 12.30"; NULL: USD), into buf: a
 * stored run's estimated_cost (history, the server's job page). */
const char *report_amount(char *buf, size_t cap, double amount,
                          const char *currency);

/* An amount in the config's currency ("$12.30"), into buf. */
const char *report_money(char *buf, size_t cap, const report_ctx *ctx,
                         double amount);

/* The jobs (model_run_job, borrowed) of the priced findings, in finding
 * order, at most max; returns how many. */
#define REPORT_MAX_JOBS 64
size_t report_jobs_priced(const report_ctx *ctx, const char **jobs, size_t max);

/* The same over the runs of job (model_run_job). */
size_t report_job_savings(const report_ctx *ctx, const char *job, double *sum);

/* The shown findings of run (SIZE_MAX: across runs) and the worst of
 * their severities into *worst (-1 when none); returns how many. *first
 * (may be NULL) gets the most severe of them. */
size_t report_run_findings(const report_ctx *ctx, size_t run, int *worst,
                           const finding **first);

/* The run f is about, or NULL for a finding across runs. Borrowed. */
const struct op_run *report_finding_run(const report_ctx *ctx, const finding *f);

/* The length of the first line of s: text (a stack trace, a diagnostic)
 * after the first newline is left to the JSON and HTML reports. */
size_t report_first_line(const char *s);

/* "config: optipipe.lua (2 findings ignored); baseline: ... (3 findings
 * suppressed)" into buf; "" (and 0) when neither a config nor a baseline
 * was applied, else 1. Plain text: each reporter escapes it. */
int report_applied_text(char *buf, size_t n, const report_applied *a);

/* The severity from ctx->fail_on, or -1 when none was given. */
int report_fail_level(const report_ctx *ctx);

/* The run's display name: its name, else its id. Borrowed. */
const char *report_run_name(const struct op_run *r);

/* Writes a finding value (evidence entry, change from/to) into buf as
 * people read it: numbers as fmt_number() writes them (no exponent),
 * strings as they are, "(unset)" for null/absent.
 * Longer values are cut. Returns buf. */
const char *report_fmt_value(char *buf, size_t n, const cJSON *v);

/* Epoch ms as "2026-12-02 03:12:09 UTC" ("-" for <= 0) into buf (n >=
 * 32). Returns buf. */
const char *report_fmt_time(char *buf, size_t n, int64_t ms);

/* 1 when v is an epoch-ms time by its name: a number whose key ends with
 * "_at" or "_at_ms" (Flink's failed_at, an evidence's failed_at_ms). */
int report_is_epoch_ms(const char *key, const cJSON *v);

/* A metric or evidence value named key as people read it: an epoch-ms
 * time (report_is_epoch_ms) in UTC, a number named *_ms as a duration,
 * *_bytes as a size, else report_fmt_value. Returns buf. */
const char *report_fmt_named(char *buf, size_t n, const char *key, const cJSON *v);

/* fmt_duration_ms() (fmt.h) under the reporters' older name: "850 ms",
 * "2.7 s", "3m 57s", "1h 02m". Returns buf. */
const char *report_fmt_duration(char *buf, size_t n, double ms);

/* fmt_bytes() (fmt.h) under the reporters' older name: "720 MiB".
 * Returns buf. */
const char *report_fmt_bytes(char *buf, size_t n, double bytes);

/* A copy of s (NULL reads as "") with control characters removed (newline
 * and tab become a space unless keep_newlines) and broken UTF-8 replaced
 * by U+FFFD; NULL on out of memory. Free with free(). */
char *report_clean_dup(const char *s, int keep_newlines);

/* The terminal form of s (NULL reads as ""), for everything from inputs
 * and rules that reaches a terminal (the text report, stderr): newline,
 * tab and CR become a space, other control characters (C0, DEL, C1, so
 * ESC, BEL, CSI, OSC) and bytes of broken UTF-8 become '?', valid text
 * passes unchanged. report_term_put writes it to f; report_term_copy into
 * buf (n > 0 bytes, cut at a character boundary, always terminated) and
 * returns buf. */
void report_term_put(FILE *f, const char *s);
const char *report_term_copy(char *buf, size_t n, const char *s);

/* Reads the documentation of a bundled rule (docs/rules/<id>.md next to
 * the binary, see op_home()) into a new string, at most 64 KiB; NULL when
 * there is none or id is not a plain rule id. Free with free(). */
char *report_rule_doc(const char *id);

#endif
