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

#include "report.h"
#include "utf8.h" /* the decoder every escaper uses */

/* Whether the report shows f (baseline-suppressed ones only on request). */
int report_visible(const report_ctx *ctx, const finding *f);

/* Counts the shown findings by severity (count[SEV_INFO..SEV_ERROR]) and
 * returns their total. */
size_t report_counts(const report_ctx *ctx, size_t count[3]);

/* "config: optipipe.lua (2 findings ignored); baseline: ... (3 findings
 * suppressed)" into buf; "" (and 0) when neither a config nor a baseline
 * was applied, else 1. Plain text: each reporter escapes it. */
int report_applied_text(char *buf, size_t n, const report_applied *a);

/* The severity from ctx->fail_on, or -1 when none was given. */
int report_fail_level(const report_ctx *ctx);

/* The run's display name: its name, else its id. Borrowed. */
const char *report_run_name(const struct op_run *r);

/* Writes a finding value (evidence entry, change from/to) into buf as
 * people read it: integers without decimals, other numbers with 4
 * significant digits, strings as they are, "(unset)" for null/absent.
 * Longer values are cut. Returns buf. */
const char *report_fmt_value(char *buf, size_t n, const cJSON *v);

/* Writes a duration in ms as "850 ms", "2.7 s", "3m 57s", "1h 02m" into
 * buf. Returns buf. */
const char *report_fmt_duration(char *buf, size_t n, double ms);

/* Writes a byte count as "720 MiB". Returns buf. */
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
 * the binary, see cli_home()) into a new string, at most 64 KiB; NULL when
 * there is none or id is not a plain rule id. Free with free(). */
char *report_rule_doc(const char *id);

#endif
