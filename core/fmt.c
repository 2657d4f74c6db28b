/*
 * fmt.c - the one place numbers get their human form (see fmt.h); the Lua
 * twin is sdk/lua/optipipe/units.lua and tests/unit/fmt_cases.txt holds
 * the cases both must agree on.
 */
#include "fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Drops trailing zeros of a decimal fraction, then a bare '.'. */
static void trim_zeros(char *s)
{
    size_t len = strlen(s);

    if (!strchr(s, '.'))
        return;
    while (len && s[len - 1] == '0')
        s[--len] = '\0';
    if (len && s[len - 1] == '.')
        s[--len] = '\0';
}

/* "%.1f" without a trailing ".0" (units.lua's one_decimal). */
static void one_decimal(char *buf, size_t n, double v)
{
    size_t len;

    snprintf(buf, n, "%.1f", v);
    len = strlen(buf);
    if (len > 2 && strcmp(buf + len - 2, ".0") == 0)
        buf[len - 2] = '\0';
}

/* v with `decimals` decimals (trimmed) and thousands separators in the
 * whole part, as units.format_num: "1,234,567", "1,234.57". */
static void grouped(char *buf, size_t n, double v, int decimals)
{
    char num[400], *dot;
    size_t len, whole, o = 0, i;

    snprintf(num, sizeof num, "%.*f", decimals, fabs(v));
    trim_zeros(num);
    dot = strchr(num, '.');
    len = strlen(num);
    whole = dot ? (size_t)(dot - num) : len;
    if (v < 0 && strcmp(num, "0") != 0 && o + 1 < n)
        buf[o++] = '-';
    for (i = 0; i < len && o + 1 < n; i++) {
        if (i && i < whole && (whole - i) % 3 == 0) {
            buf[o++] = ',';
            if (o + 1 >= n)
                break;
        }
        buf[o++] = num[i];
    }
    buf[o] = '\0';
}

/* A nonzero |v| < 0.01 with 3 significant digits, as units.format_num:
 * "0.00123", no exponent above 1e-9. */
static void tiny(char *buf, size_t n, double v)
{
    if (fabs(v) < 1e-9) {
        snprintf(buf, n, "%.3g", v);
        return;
    }
    snprintf(buf, n, "%.*f", 2 - (int)floor(log10(fabs(v))), v);
    trim_zeros(buf);
}

const char *fmt_count(char *buf, size_t n, double count, const char *singular,
                      const char *plural)
{
    char num[64];

    if (!isfinite(count))
        snprintf(num, sizeof num, "?");
    else if (count != 0 && fabs(count) < 0.01)
        tiny(num, sizeof num, count);
    else
        grouped(num, sizeof num, count, 2);
    if (strcmp(num, "1") == 0)
        snprintf(buf, n, "%s %s", num, singular);
    else if (plural)
        snprintf(buf, n, "%s %s", num, plural);
    else
        snprintf(buf, n, "%s %ss", num, singular);
    return buf;
}

const char *fmt_duration_ms(char *buf, size_t n, double ms)
{
    char tmp[64];
    double a = fabs(ms), t;

    if (!isfinite(ms)) {
        snprintf(buf, n, "?");
        return buf;
    }
    if (a < 999.95) {
        one_decimal(tmp, sizeof tmp - 3, a);
        strcat(tmp, " ms");
    } else if ((t = floor(a / 100 + 0.5)) < 600) {
        one_decimal(tmp, sizeof tmp - 2, t / 10);
        strcat(tmp, " s");
    } else if ((t = floor(a / 1000 + 0.5)) < 3600)
        snprintf(tmp, sizeof tmp, "%.0fm %02.0fs", floor(t / 60), fmod(t, 60));
    else if ((t = floor(a / 60000 + 0.5)) < 1440)
        snprintf(tmp, sizeof tmp, "%.0fh %02.0fm", floor(t / 60), fmod(t, 60));
    else if ((t = floor(a / 3600000 + 0.5)) < 1e12)
        snprintf(tmp, sizeof tmp, "%.0fd %02.0fh", floor(t / 24), fmod(t, 24));
    else
        snprintf(tmp, sizeof tmp, "%.4gd", t / 24);
    snprintf(buf, n, "%s%s", ms < 0 && strcmp(tmp, "0 ms") != 0 ? "-" : "", tmp);
    return buf;
}

const char *fmt_bytes(char *buf, size_t n, double bytes)
{
    static const char *const names[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = fabs(bytes) / 1024;
    char num[64];
    size_t i = 0;

    if (!isfinite(bytes)) {
        snprintf(buf, n, "?");
        return buf;
    }
    if (fabs(bytes) < 1023.5) {
        snprintf(buf, n, "%.0f B", fabs(bytes) < 0.5 ? 0.0 : bytes);
        return buf;
    }
    while ((v >= 1024 || floor(v * 10 + 0.5) / 10 >= 1024) && i < 5) {
        v /= 1024;
        i++;
    }
    one_decimal(num, sizeof num, bytes < 0 ? -v : v);
    snprintf(buf, n, "%s %s", num, names[i]);
    return buf;
}

const char *fmt_ratio(char *buf, size_t n, double ratio)
{
    char num[400];

    if (!isfinite(ratio)) {
        snprintf(buf, n, "?\xc3\x97");
        return buf;
    }
    if (fabs(ratio) >= 99.95)
        grouped(num, sizeof num, ratio, 0);
    else
        one_decimal(num, sizeof num, ratio);
    if (strcmp(num, "-0") == 0)
        strcpy(num, "0");
    snprintf(buf, n, "%s\xc3\x97", num);
    return buf;
}

/* Whether s (a formatted share of pct percent) would mislead: 100 for a
 * share below 100, 0 for a nonzero share. */
static int misleading(const char *s, double pct)
{
    double shown = fabs(strtod(s, NULL));

    return (pct > 0 && pct < 100 && shown >= 100) || (pct != 0 && shown == 0);
}

const char *fmt_percent(char *buf, size_t n, double ratio, int decimals)
{
    double pct = ratio * 100;
    char num[400];
    int d;

    if (!isfinite(ratio)) {
        snprintf(buf, n, "?%%");
        return buf;
    }
    decimals = decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
    for (d = decimals; d <= decimals + 2; d++) {
        snprintf(num, sizeof num, "%.*f", d, pct);
        trim_zeros(num);
        if (!misleading(num, pct)) {
            if (strcmp(num, "-0") == 0)
                strcpy(num, "0");
            snprintf(buf, n, "%s%%", num);
            return buf;
        }
    }
    d = decimals + 2;
    if (fabs(pct) < 1)
        snprintf(buf, n, "%s%.*f%%", pct < 0 ? ">-" : "<", d, pow(10, -d));
    else
        snprintf(buf, n, ">%.*f%%", d, 100 - pow(10, -d));
    return buf;
}

const char *fmt_number(char *buf, size_t n, double v)
{
    double a = fabs(v);

    if (!isfinite(v))
        snprintf(buf, n, "?");
    else if (v == 0)
        snprintf(buf, n, "0");
    else if (v == floor(v) && a < 1e21)
        snprintf(buf, n, "%.0f", v);
    else if (a >= 1e21 || a < 1e-9)
        snprintf(buf, n, "%.4g", v);
    else if (a >= 999.95)
        snprintf(buf, n, "%.0f", v);
    else {
        int d = 3 - (int)floor(log10(a));
        snprintf(buf, n, "%.*f", d < 0 ? 0 : d, v);
        trim_zeros(buf);
    }
    return buf;
}
