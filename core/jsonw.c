/*
 * jsonw.c - streaming JSON writer (see jsonw.h for why it exists).
 */
#include "jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

void jw_init(jw *w, FILE *f, int pretty)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    w->pretty = pretty;
}

static void newline(jw *w)
{
    static const char spaces[] = "\n                                        "
                                 "                                        ";
    size_t want = 1 + 2 * (size_t)w->depth;

    if (!w->pretty)
        return;
    if (want > sizeof spaces - 1)
        want = sizeof spaces - 1;
    fwrite(spaces, 1, want, w->f);
}

/* Separator and indentation before a value or a key. */
static void before_item(jw *w)
{
    if (w->after_key) {
        w->after_key = 0;
        return;
    }
    if (w->depth > 0) {
        if (w->count[w->depth] > 0)
            fputc(',', w->f);
        newline(w);
    }
    if (w->depth < JW_MAX_DEPTH)
        w->count[w->depth]++;
}

static void open_container(jw *w, char c)
{
    before_item(w);
    fputc(c, w->f);
    if (w->depth + 1 < JW_MAX_DEPTH) {
        w->depth++;
        w->count[w->depth] = 0;
    }
}

static void close_container(jw *w, char c)
{
    int had = w->count[w->depth];

    if (w->depth > 0)
        w->depth--;
    if (had)
        newline(w);
    fputc(c, w->f);
}

void jw_obj(jw *w) { open_container(w, '{'); }
void jw_obj_end(jw *w) { close_container(w, '}'); }
void jw_arr(jw *w) { open_container(w, '['); }
void jw_arr_end(jw *w) { close_container(w, ']'); }

void jw_write_string(FILE *f, const char *s)
{
    char u[4];
    uint32_t cp;
    size_t k;

    fputc('"', f);
    while (*s) {
        /* a run of plain ASCII in one write: most of every key and value */
        const char *p = s;
        while ((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f &&
               *p != '"' && *p != '\\' && *p != '<' && *p != '>' && *p != '&')
            p++;
        if (p > s) {
            fwrite(s, 1, (size_t)(p - s), f);
            s = p;
            continue;
        }
        if (!(k = utf8_next(s, &cp, NULL)))
            break;
        switch (cp) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '<': case '>': case '&':
        case 0x2028: case 0x2029: /* line breaks to JavaScript before ES2019 */
            fprintf(f, "\\u%04x", (unsigned)cp);
            break;
        default:
            if (utf8_is_control(cp))
                fprintf(f, "\\u%04x", (unsigned)cp);
            else if (cp < 0x80)
                fputc((int)cp, f);
            else
                fwrite(u, 1, utf8_put(u, cp), f); /* broken bytes: U+FFFD */
        }
        s += k;
    }
    fputc('"', f);
}

void jw_key(jw *w, const char *key)
{
    before_item(w);
    jw_write_string(w->f, key);
    fputs(w->pretty ? ": " : ":", w->f);
    w->after_key = 1;
}

void jw_str(jw *w, const char *s)
{
    before_item(w);
    if (s)
        jw_write_string(w->f, s);
    else
        fputs("null", w->f);
}

void jw_int(jw *w, int64_t v)
{
    char buf[JW_INT_TEXT];

    before_item(w);
    fwrite(buf, 1, jw_int_text(buf, v), w->f);
}

size_t jw_int_text(char buf[JW_INT_TEXT], int64_t v)
{
    /* what "%" PRId64 writes, without printf's cost on hot paths */
    char tmp[JW_INT_TEXT];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t n = 0, len = 0;

    do
        tmp[n++] = (char)('0' + u % 10);
    while ((u /= 10));
    if (v < 0)
        buf[len++] = '-';
    while (n)
        buf[len++] = tmp[--n];
    buf[len] = 0;
    return len;
}

/* What "%.15g" writes for v when v is the double nearest to k / scale
 * (k integral, at most 15 digits, scale 10^3 or 10^6: milliseconds with
 * microseconds, seconds with microseconds), without printf: such a v is
 * within half an ulp of that decimal, so %.15g rounds to it and it reads
 * back as v. 0 when v is no such number. */
static int jw_short_decimal(char buf[32], double v)
{
    static const int64_t scale[] = {1000, 1000000};
    static const int digits[] = {3, 6};
    double a = fabs(v);
    size_t i;

    if (a < 1e-4 || a >= 1e9)
        return 0; /* %g would use an exponent, or k has too many digits */
    for (i = 0; i < sizeof scale / sizeof scale[0]; i++) {
        int64_t k = llround(a * (double)scale[i]), frac;
        size_t n;
        int d;
        if ((double)k / (double)scale[i] != a)
            continue;
        n = v < 0 ? (buf[0] = '-', 1) : 0;
        n += jw_int_text(buf + n, k / scale[i]);
        frac = k % scale[i];
        for (d = digits[i]; frac % 10 == 0; d--)
            frac /= 10; /* v is not integral: frac is not 0 */
        buf[n + (size_t)d + 1] = 0;
        for (; d > 0; d--, frac /= 10)
            buf[n + (size_t)d] = (char)('0' + frac % 10);
        buf[n] = '.';
        return 1;
    }
    return 0;
}

/* Shortest of %.15g / %.17g that reads back as the same double. */
static void jw_write_double(FILE *f, double v)
{
    char buf[32];
    double back;

    if (jw_short_decimal(buf, v)) {
        fputs(buf, f);
        return;
    }
    snprintf(buf, sizeof buf, "%.15g", v);
    back = strtod(buf, NULL); /* what sscanf("%lg") reads, without its stream */
    if (back != v)
        snprintf(buf, sizeof buf, "%.17g", v);
    fputs(buf, f);
}

void jw_num(jw *w, double v)
{
    before_item(w);
    if (!isfinite(v))
        fputs("null", w->f);
    else if (v == floor(v) && fabs(v) < 9007199254740992.0) {
        /* what "%.0f" writes (also "-0"), without printf's cost */
        char buf[JW_INT_TEXT + 1];
        buf[0] = '-';
        jw_int_text(buf + (v == 0 && signbit(v)), (int64_t)v);
        fputs(buf, w->f);
    }
    else
        jw_write_double(w->f, v);
}

void jw_bool(jw *w, int v)
{
    before_item(w);
    fputs(v ? "true" : "false", w->f);
}

void jw_null(jw *w)
{
    before_item(w);
    fputs("null", w->f);
}

void jw_json_text(jw *w, const char *text)
{
    cJSON *v = text ? cJSON_Parse(text) : NULL;

    if (v)
        jw_cjson(w, v);
    else
        jw_null(w);
    cJSON_Delete(v);
}

void jw_cjson(jw *w, const cJSON *v)
{
    const cJSON *c;

    if (!v || cJSON_IsNull(v)) {
        jw_null(w);
    } else if (cJSON_IsBool(v)) {
        jw_bool(w, cJSON_IsTrue(v));
    } else if (cJSON_IsNumber(v)) {
        jw_num(w, v->valuedouble);
    } else if (cJSON_IsString(v)) {
        jw_str(w, v->valuestring);
    } else if (cJSON_IsArray(v)) {
        jw_arr(w);
        cJSON_ArrayForEach(c, v) jw_cjson(w, c);
        jw_arr_end(w);
    } else if (cJSON_IsObject(v)) {
        jw_obj(w);
        cJSON_ArrayForEach(c, v) {
            jw_key(w, c->string ? c->string : "");
            jw_cjson(w, c);
        }
        jw_obj_end(w);
    } else {
        jw_null(w);
    }
}
