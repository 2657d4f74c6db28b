/*
 * fmt.h - how every number reaches a person: counts with their noun,
 * durations, byte sizes, ratios, percentages and evidence values. Every
 * reporter uses these, and sdk/lua/optipipe/units.lua gives rules the same
 * forms (both are tested against tests/unit/fmt_cases.txt), so a chart, a
 * run header and a finding message write one number the same way.
 *
 * Each function writes into buf (n > 0 bytes; output is cut to fit and
 * always terminated) and returns buf. Non-finite values print as "?".
 * Nothing is allocated and no state is kept.
 */
#ifndef OP_CORE_FMT_H
#define OP_CORE_FMT_H

#include <stddef.h>

/* "1 executor", "3 executors", "12,000 records": the count with thousands
 * separators (up to two decimals, trailing zeros trimmed) and the singular
 * exactly when the count is 1. plural NULL means singular + "s". */
const char *fmt_count(char *buf, size_t n, double count, const char *singular,
                      const char *plural);

/* Milliseconds as "850 ms", "2.7 s", "2m 36s", "6h 00m", "3d 04h". Each
 * form rounds to its last unit; a value that rounds up to the next form
 * moves there (59.96 s -> "1m 00s"). */
const char *fmt_duration_ms(char *buf, size_t n, double ms);

/* Bytes in binary (IEC) units: "100 B", "1.5 KiB", "720 MiB", "2.4 GiB";
 * one decimal, ".0" trimmed; never "1024 KiB". */
const char *fmt_bytes(char *buf, size_t n, double bytes);

/* A ratio as "36.9×" (U+00D7 in every engine's messages): one decimal,
 * ".0" trimmed ("2×"); from 100 on whole and grouped ("1,250×"). */
const char *fmt_ratio(char *buf, size_t n, double ratio);

/* A share (0.973) as a percentage with at most `decimals` decimals,
 * trailing zeros trimmed ("97%", "97.3%", "341.3%"). It never reads 100%
 * for a share below 1 nor 0% for a nonzero one: up to two more decimals
 * are used ("99.5%", "0.04%"), then ">99.99%" / "<0.01%". */
const char *fmt_percent(char *buf, size_t n, double ratio, int decimals);

/* An evidence value in plain digits, never an exponent: integers as they
 * are ("9905000"), other values from 1000 on rounded to whole ("9904615"),
 * below that 4 significant digits, trailing zeros trimmed ("2.708",
 * "0.0001234"). Only magnitudes beyond 1e21 or below 1e-9 use "%.4g". */
const char *fmt_number(char *buf, size_t n, double v);

#endif
