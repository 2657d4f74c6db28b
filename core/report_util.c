/*
 * report_util.c - helpers shared by the reporters (see report_util.h).
 * Durations and byte counts read like the rules' own (sdk units.lua), so a
 * chart axis and a finding message name the same numbers the same way.
 */
#include "report_util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "input.h"

#define DOC_MAX (64 * 1024)

int report_visible(const report_ctx *ctx, const finding *f)
{
    return !f->suppressed || ctx->show_suppressed;
}

size_t report_counts(const report_ctx *ctx, size_t count[3])
{
    size_t i, total = 0;

    count[0] = count[1] = count[2] = 0;
    for (i = 0; i < ctx->res->n; i++)
        if (report_visible(ctx, &ctx->res->f[i])) {
            count[ctx->res->f[i].sev]++;
            total++;
        }
    return total;
}

int report_fail_level(const report_ctx *ctx)
{
    return ctx->fail_on ? severity_parse(ctx->fail_on) : -1;
}

const char *report_run_name(const struct op_run *r)
{
    return r->name ? r->name : r->id;
}

/* "%.1f" without a trailing ".0", as units.lua's one_decimal. */
static void one_decimal(char *buf, size_t n, double v, const char *unit)
{
    char num[48];
    size_t len;

    snprintf(num, sizeof num, "%.1f", v);
    len = strlen(num);
    if (len > 2 && strcmp(num + len - 2, ".0") == 0)
        num[len - 2] = '\0';
    snprintf(buf, n, "%s %s", num, unit);
}

const char *report_fmt_value(char *buf, size_t n, const cJSON *v)
{
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d == floor(d) && fabs(d) < 1e15)
            snprintf(buf, n, "%.0f", d);
        else
            snprintf(buf, n, "%.4g", d);
    } else if (cJSON_IsString(v)) {
        snprintf(buf, n, "%s", v->valuestring);
    } else if (cJSON_IsBool(v)) {
        snprintf(buf, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else if (!v || cJSON_IsNull(v)) {
        snprintf(buf, n, "(unset)");
    } else {
        char *s = cJSON_PrintUnformatted(v);
        snprintf(buf, n, "%s", s ? s : "?");
        cJSON_free(s);
    }
    return buf;
}

const char *report_fmt_duration(char *buf, size_t n, double ms)
{
    char tmp[64];
    double a = fabs(ms), t;

    if (!isfinite(ms)) {
        snprintf(buf, n, "?");
        return buf;
    }
    if (a < 999.95)
        one_decimal(tmp, sizeof tmp, a, "ms");
    else if ((t = floor(a / 100 + 0.5)) < 600)
        one_decimal(tmp, sizeof tmp, t / 10, "s");
    else if ((t = floor(a / 1000 + 0.5)) < 3600)
        snprintf(tmp, sizeof tmp, "%.0fm %02.0fs", floor(t / 60), fmod(t, 60));
    else if ((t = floor(a / 60000 + 0.5)) < 1440)
        snprintf(tmp, sizeof tmp, "%.0fh %02.0fm", floor(t / 60), fmod(t, 60));
    else {
        t = floor(a / 3600000 + 0.5);
        snprintf(tmp, sizeof tmp, "%.0fd %02.0fh", floor(t / 24), fmod(t, 24));
    }
    snprintf(buf, n, "%s%s", ms < 0 ? "-" : "", tmp);
    return buf;
}

const char *report_fmt_bytes(char *buf, size_t n, double bytes)
{
    static const char *const names[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = fabs(bytes) / 1024;
    size_t i = 0;

    if (!isfinite(bytes)) {
        snprintf(buf, n, "?");
        return buf;
    }
    if (fabs(bytes) < 1023.5) {
        snprintf(buf, n, "%.0f B", bytes);
        return buf;
    }
    while ((v >= 1024 || floor(v * 10 + 0.5) / 10 >= 1024) && i < 4) {
        v /= 1024;
        i++;
    }
    one_decimal(buf, n, bytes < 0 ? -v : v, names[i]);
    return buf;
}

char *report_clean_dup(const char *s, int keep_newlines)
{
    size_t len, o = 0, k;
    uint32_t cp;
    char *out;

    s = s ? s : "";
    len = strlen(s);
    out = malloc(len * 3 + 1); /* a broken byte grows to U+FFFD (3 bytes) */
    if (!out)
        return NULL;
    while ((k = utf8_next(s, &cp, NULL))) {
        s += k;
        if (cp == '\n' && keep_newlines)
            out[o++] = '\n';
        else if (cp == '\n' || cp == '\t' || cp == '\r')
            out[o++] = ' ';
        else if (!utf8_is_control(cp))
            o += utf8_put(out + o, cp);
    }
    out[o] = '\0';
    return out;
}

/* The terminal form of the character at s (see report_term_put) into
 * out[4]: returns its length there and the bytes it used in *used (0 at
 * the end of s). */
static size_t term_char(const char *s, char out[4], size_t *used)
{
    uint32_t cp;
    int bad;
    size_t k = utf8_next(s, &cp, &bad);

    *used = k;
    if (!k)
        return 0;
    if (cp == '\n' || cp == '\t' || cp == '\r')
        out[0] = ' ';
    else if (utf8_is_control(cp) || bad)
        out[0] = '?';
    else {
        memcpy(out, s, k);
        return k;
    }
    return 1;
}

void report_term_put(FILE *f, const char *s)
{
    char c[4];
    size_t used, n;

    s = s ? s : "";
    while ((n = term_char(s, c, &used))) {
        fwrite(c, 1, n, f);
        s += used;
    }
}

const char *report_term_copy(char *buf, size_t n, const char *s)
{
    char c[4];
    size_t used, k, o = 0;

    s = s ? s : "";
    while ((k = term_char(s, c, &used)) && o + k < n) {
        memcpy(buf + o, c, k);
        o += k;
        s += used;
    }
    buf[o] = '\0';
    return buf;
}

/* Bundled rule ids are dotted words; anything else never becomes a path. */
static int plain_id(const char *id)
{
    size_t i;

    if (!id || !*id || strlen(id) > 128 || id[0] == '.')
        return 0;
    for (i = 0; id[i]; i++)
        if (!isalnum((unsigned char)id[i]) && !strchr("._-", id[i]))
            return 0;
    return strstr(id, "..") == NULL;
}

char *report_rule_doc(const char *id)
{
    char path[4096 + 256];
    op_error e;
    size_t n;

    if (!plain_id(id))
        return NULL;
    snprintf(path, sizeof path, "%s/docs/rules/%s.md", cli_home(), id);
    return input_read_file(path, DOC_MAX, &n, &e);
}

int report_applied_text(char *buf, size_t n, const report_applied *a)
{
    char c[4200] = "none", b[4200] = "none";

    buf[0] = '\0';
    if (!a->config && !a->baseline)
        return 0;
    if (a->config)
        snprintf(c, sizeof c, "%s (%zu finding%s ignored)", a->config,
                 a->ignored, a->ignored == 1 ? "" : "s");
    if (a->baseline)
        snprintf(b, sizeof b, "%s (%zu finding%s suppressed)", a->baseline,
                 a->suppressed, a->suppressed == 1 ? "" : "s");
    snprintf(buf, n, "config: %s; baseline: %s", c, b);
    return 1;
}
