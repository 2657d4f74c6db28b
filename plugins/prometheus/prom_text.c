/*
 * prom_text.c - the Prometheus text exposition format (0.0.4) and
 * OpenMetrics 1.0 text, one line at a time: # HELP / # TYPE / # UNIT /
 * # EOF, samples with labels (escapes \\ \" \n, UTF-8 quoted names), values
 * as Go's ParseFloat reads them (NaN, +Inf, -Inf), optional timestamps and
 * OpenMetrics exemplars (skipped). The line is copied into a buffer of the
 * parser's and unescaped in place, so the only allocation is that buffer.
 */
#include "prom_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void prom_text_init(prom_text *t)
{
    memset(t, 0, sizeof *t);
}

void prom_text_free(prom_text *t)
{
    free(t->buf);
    free(t->fam);
    memset(t, 0, sizeof *t);
}

static int is_name_start(int c)
{
    return isalpha(c) || c == '_' || c == ':';
}

static int is_name_char(int c)
{
    return isalnum(c) || c == '_' || c == ':';
}

static char *skip_ws(char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* A quoted string at *p (past the opening quote) unescaped in place; *p
 * moves past the closing quote. NULL when it does not close. */
static char *quoted(char **p)
{
    char *r = *p, *w = *p, *start = *p;

    while (*r && *r != '"') {
        if (*r == '\\') {
            r++;
            if (*r == 'n')
                *w++ = '\n';
            else if (*r == '\\' || *r == '"')
                *w++ = *r;
            else if (*r) { /* unknown escape: kept as written */
                *w++ = '\\';
                *w++ = *r;
            } else
                return NULL;
            r++;
        } else {
            *w++ = *r++;
        }
    }
    if (*r != '"')
        return NULL;
    *w = '\0'; /* w <= r: the closing quote may be overwritten */
    *p = r + 1;
    return start;
}

/* A bare name at *p: NUL-terminated in place only after the caller saw
 * the next character (returned in *next). */
static char *bare_name(char **p, char *next)
{
    char *s = *p;

    if (!is_name_start((unsigned char)*s))
        return NULL;
    while (is_name_char((unsigned char)**p))
        (*p)++;
    *next = **p;
    **p = '\0';
    if ((size_t)(*p - s) > PROM_MAX_NAME)
        return NULL;
    return s;
}

/* Scans a bare name at q: its end (not terminated), or NULL. */
static char *scan_name(char *q)
{
    if (!is_name_start((unsigned char)*q))
        return NULL;
    while (is_name_char((unsigned char)*q))
        q++;
    return q;
}

/* Parses "{...}" at *p (past the '{') into s; a quoted item without '='
 * is the metric name (UTF-8 names). NULL or a static reason. Names and
 * values are terminated in place once the character after them was read. */
static const char *labels(char **p, prom_sample *s)
{
    char *q = *p;

    for (;;) {
        char *name, *end = NULL, *after, *val;
        q = skip_ws(q);
        if (*q == '}') {
            *p = q + 1;
            return NULL;
        }
        if (*q == '"') {
            q++;
            if (!(name = quoted(&q)))
                return "a quoted name does not close";
        } else {
            name = q;
            if (!(end = scan_name(q)))
                return "a label name was expected";
            q = end;
        }
        after = skip_ws(q);
        if (*after == ',' || *after == '}') {
            if (end)
                return "a label needs '=' and a quoted value";
            if (s->name)
                return "two metric names in one sample";
            s->name = name; /* {"utf8.name", ...} */
            q = *after == ',' ? after + 1 : after;
            continue;
        }
        if (*after != '=')
            return "'=' was expected after a label name";
        if (end)
            *end = '\0';
        if ((size_t)strlen(name) > PROM_MAX_NAME)
            return "a label name is longer than the limit (1024)";
        q = skip_ws(after + 1);
        if (*q != '"')
            return "a label value must be quoted";
        q++;
        if (!(val = quoted(&q)))
            return "a label value does not close";
        if (s->nlabels == PROM_MAX_LABELS)
            return "more labels than the limit (64) on one sample";
        s->labels[s->nlabels].name = name;
        s->labels[s->nlabels++].value = val;
        q = skip_ws(q);
        if (*q == ',')
            q++;
        else if (*q != '}')
            return "',' or '}' was expected after a label";
    }
}

/* A float as Go's strconv.ParseFloat reads it (what Prometheus uses):
 * also NaN, Inf, +Inf, -Inf in any case. */
static int parse_value(char *s, double *out)
{
    char *end;

    if (!*s)
        return -1;
    errno = 0;
    *out = strtod(s, &end);
    if (end == s || *end)
        return -1;
    /* strtod reads "nan(...)" and hex floats; Go does not read nan(...) */
    if (strchr(s, '('))
        return -1;
    if (errno == ERANGE && !isinf(*out) && *out != 0)
        return -1;
    return 0;
}

/* A timestamp: milliseconds (text format, an integer) or seconds
 * (OpenMetrics, maybe with a fraction). Told apart by magnitude: a
 * seconds count below 1e11 is before the year 5138, a milliseconds count
 * below it before 1973. */
static int parse_ts(char *s, int64_t *ms)
{
    double v;

    if (parse_value(s, &v) || !isfinite(v) || fabs(v) > 9.2e15)
        return -1;
    *ms = fabs(v) < 1e11 ? (int64_t)llround(v * 1000.0) : (int64_t)llround(v);
    return 0;
}

/* The # TYPE of the current family applies to name when name is the
 * family or the family plus one of its sample suffixes. */
static const char *type_of(const prom_text *t, const char *name)
{
    static const char *const sfx[] = {"_total", "_created", "_bucket", "_sum",
                                      "_count", "_gcount", "_gsum", "_info"};
    size_t n, i;

    if (!t->fam)
        return NULL;
    n = strlen(t->fam);
    if (strncmp(name, t->fam, n) != 0)
        return NULL;
    if (!name[n])
        return t->type;
    for (i = 0; i < sizeof sfx / sizeof *sfx; i++)
        if (strcmp(name + n, sfx[i]) == 0)
            return t->type;
    return NULL;
}

static int comment(prom_text *t, char *p, const char **why)
{
    char *kw, *name, next = 0;

    p = skip_ws(p + 1);
    if (strncmp(p, "EOF", 3) == 0 && !p[3 + strspn(p + 3, " \t\r")]) {
        t->eof = 1;
        return 0;
    }
    kw = p;
    if (strncmp(kw, "TYPE", 4) != 0 || (kw[4] != ' ' && kw[4] != '\t'))
        return 0; /* HELP, UNIT and other comments carry no values */
    p = skip_ws(kw + 4);
    if (*p == '"') {
        p++;
        if (!(name = quoted(&p)))
            return *why = "a quoted family name does not close", OP_EPARSE;
        next = *p;
    } else if (!(name = bare_name(&p, &next))) {
        return *why = "# TYPE needs a metric family name", OP_EPARSE;
    }
    if (next)
        p++;
    p = skip_ws(p);
    p[strcspn(p, " \t\r")] = '\0';
    if (!*p || strlen(p) >= sizeof t->type)
        return *why = "# TYPE needs a type (counter, gauge, ...)", OP_EPARSE;
    free(t->fam);
    if (!(t->fam = strdup(name)))
        return OP_ENOMEM;
    snprintf(t->type, sizeof t->type, "%s", p);
    for (p = t->type; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return 0;
}

static int sample(prom_text *t, char *p, prom_sample_fn fn, void *ud,
                  const char **why)
{
    prom_sample s;
    char *val, *ts, *end = NULL, *after;

    memset(&s, 0, sizeof s);
    if (*p != '{') {
        s.name = p;
        if (!(end = scan_name(p)))
            return *why = "a metric name was expected", OP_EPARSE;
        p = end;
    }
    after = skip_ws(p);
    if (*after == '{') {
        p = after + 1;
        if ((*why = labels(&p, &s)))
            return OP_EPARSE;
        if (end)
            *end = '\0';
        end = NULL;
    }
    if (!s.name || !*s.name)
        return *why = "a sample needs a metric name", OP_EPARSE;
    if (*p != ' ' && *p != '\t')
        return *why = "white space and a value were expected", OP_EPARSE;
    if (end)
        *end = '\0';
    val = skip_ws(p + 1);
    p = val + strcspn(val, " \t");
    if (*p) {
        *p++ = '\0';
        p = skip_ws(p);
    }
    if (parse_value(val, &s.value))
        return *why = "the value is not a number", OP_EPARSE;
    if (*p && *p != '#') {
        ts = p;
        p = ts + strcspn(ts, " \t");
        if (*p) {
            *p++ = '\0';
            p = skip_ws(p);
        }
        if (parse_ts(ts, &s.ts_ms))
            return *why = "the timestamp is not a number", OP_EPARSE;
        s.has_ts = 1;
    }
    /* what may follow is an OpenMetrics exemplar: "# {labels} value [ts]" */
    if (*p && !(p[0] == '#' && (p[1] == ' ' || p[1] == '\t')))
        return *why = "unexpected text after the value", OP_EPARSE;
    if (strlen(s.name) > PROM_MAX_NAME)
        return *why = "the metric name is longer than the limit (1024)",
               OP_EPARSE;
    s.type = type_of(t, s.name);
    /* _created samples are creation times, not values */
    if (s.type && strlen(s.name) > 8 &&
        strcmp(s.name + strlen(s.name) - 8, "_created") == 0)
        return 0;
    return fn(ud, &s);
}

int prom_text_line(prom_text *t, const char *line, size_t len,
                   prom_sample_fn fn, void *ud, const char **why)
{
    char *p;

    *why = NULL;
    while (len && (line[len - 1] == '\r' || line[len - 1] == ' ' ||
                   line[len - 1] == '\t'))
        len--;
    if (len + 1 > t->cap) {
        char *nb = realloc(t->buf, len + 1);
        if (!nb)
            return OP_ENOMEM;
        t->buf = nb;
        t->cap = len + 1;
    }
    memcpy(t->buf, line, len);
    t->buf[len] = '\0';
    if (memchr(t->buf, '\0', len))
        return *why = "a NUL byte in the line", OP_EPARSE;
    p = skip_ws(t->buf);
    if (!*p)
        return 0;
    if (t->eof) {
        t->after_eof++;
        return *why = "text after OpenMetrics' # EOF", OP_EPARSE;
    }
    if (*p == '#')
        return comment(t, p, why);
    return sample(t, p, fn, ud, why);
}
