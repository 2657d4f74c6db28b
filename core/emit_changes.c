/*
 * emit_changes.c - writing findings' `changes` as config patches
 * (emit_changes.h). One writer per engine; they share the comment that
 * cites a finding, value formatting, the checks that refuse a change the
 * engine would read differently from what the rule meant (a key or value
 * that could start a line of its own, a key the engine does not allow, a
 * Flink vertex id that is not one), and a small table that notices two
 * findings asking for different values of one key.
 */
#include "emit_changes.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "utf8.h"

#define EMIT_MAX_KEYS 512
#define COMMENT_MAX 200
#define VALUE_MAX 1024     /* bytes of a value written as config */
#define SHOWN_MAX 80       /* bytes of a refused key or value quoted */
#define FLINK_MAX_PARALLELISM 32768 /* Flink's upper bound (2^15) */

typedef struct seen {
    char *scope, *key, *value;
} seen;

typedef struct out {
    FILE *f;
    FILE *diag;       /* where refusals are also told (may be NULL) */
    const char *path; /* the file being written */
    const struct op_run *run;
    seen keys[EMIT_MAX_KEYS];
    size_t nkeys;
    size_t nrefused;
} out;

/* ---- small helpers ------------------------------------------------------- */

static const char *str_item(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A value as text: strings as they are, whole numbers without a point.
 * Returns 0 when it did not fit into buf (then cut). */
static int value_text(const cJSON *v, char *buf, size_t len)
{
    char *s;
    int n;

    if (cJSON_IsString(v)) {
        n = snprintf(buf, len, "%s", v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (isfinite(d) && d == floor(d) && fabs(d) < 9.0e15)
            n = snprintf(buf, len, "%lld", (long long)d);
        else
            n = snprintf(buf, len, "%.15g", d);
    } else if (cJSON_IsBool(v)) {
        n = snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else if (v && (s = cJSON_PrintUnformatted(v))) {
        n = snprintf(buf, len, "%s", s);
        cJSON_free(s);
    } else {
        n = snprintf(buf, len, "null");
    }
    return n >= 0 && (size_t)n < len;
}

/* Line breaks of some reader of our outputs: controls (C0, DEL, C1 with
 * NEL) and U+2028 / U+2029 (YAML 1.1, as PyYAML reads dbt files). */
static int breaks_line(uint32_t cp)
{
    return utf8_is_control(cp) || cp == 0x2028 || cp == 0x2029;
}

/* Writes s on one line: line breaks become spaces, broken UTF-8 U+FFFD,
 * text longer than max bytes is cut with "..." (a comment must never end
 * early or run on). */
static void put_line_text(FILE *f, const char *s, size_t max)
{
    const char *p = s ? s : "", *start = p;
    char u[4];
    uint32_t cp;
    size_t k;

    for (; (k = utf8_next(p, &cp, NULL)) && (size_t)(p - start) < max; p += k)
        if (breaks_line(cp))
            fputc(' ', f);
        else
            fwrite(u, 1, utf8_put(u, cp), f);
    if (*p)
        fputs("...", f);
}

/* What makes s unfit for a config line (why[] gets it), or 0: a line
 * break of any reader, a broken UTF-8 sequence. */
static int text_problem(const char *s, char *why, size_t len)
{
    const char *p = s;
    uint32_t cp;
    size_t k;
    int bad;

    for (; (k = utf8_next(p, &cp, &bad)); p += k) {
        if (bad) {
            snprintf(why, len, "is not valid UTF-8 (byte 0x%02x at byte %ld)",
                     (unsigned char)*p, (long)(p - s));
            return 1;
        }
        if (breaks_line(cp)) {
            snprintf(why, len, "has a %s (U+%04X at byte %ld)",
                     utf8_is_control(cp) ? "control character" : "line separator",
                     (unsigned)cp, (long)(p - s));
            return 1;
        }
    }
    return 0;
}

/* Why key is not a configuration key as Flink, Spark and dbt spell them
 * ([A-Za-z0-9._-]+), or 0. */
static int key_problem(const char *key, char *why, size_t len)
{
    const char *p;
    uint32_t cp;
    size_t k;
    int bad;

    if (!*key) {
        snprintf(why, len, "is empty");
        return 1;
    }
    for (p = key; (k = utf8_next(p, &cp, &bad)); p += k) {
        char what[32];
        if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
            (cp >= '0' && cp <= '9') || cp == '.' || cp == '_' || cp == '-')
            continue;
        if (bad)
            snprintf(what, sizeof what, "byte 0x%02x", (unsigned char)*p);
        else if (cp == ' ')
            snprintf(what, sizeof what, "a space");
        else if (cp > ' ' && cp < 0x7f)
            snprintf(what, sizeof what, "'%c'", (char)cp);
        else
            snprintf(what, sizeof what, "U+%04X", (unsigned)cp);
        snprintf(why, len, "has %s at byte %ld; configuration keys are "
                 "[A-Za-z0-9._-]+", what, (long)(p - key));
        return 1;
    }
    return 0;
}

/* Tells that a change of f is not written, in the patch (a comment at the
 * change) and on diag (naming the file, rule and finding). */
static void refuse(out *o, const finding *f, const char *indent,
                   const char *fmt, ...) OP_PRINTF(4, 5);

static void refuse(out *o, const finding *f, const char *indent,
                   const char *fmt, ...)
{
    char why[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    o->nrefused++;
    fprintf(o->f, "%s#   refused: ", indent);
    put_line_text(o->f, why, sizeof why);
    fputc('\n', o->f);
    if (!o->diag)
        return;
    fprintf(o->diag, "optipipe: %s: ", o->path);
    put_line_text(o->diag, f->rule, COMMENT_MAX);
    fprintf(o->diag, " [%s]: change refused: ", f->fingerprint);
    put_line_text(o->diag, why, sizeof why);
    fputc('\n', o->diag);
}

typedef int (*problem_fn)(const char *s, char *why, size_t len);

/* Refuses (and returns 1) when problem() finds one in s, which is what
 * of f (e.g. "key", "key"); s is quoted with escapes. */
static int refused_if(out *o, const finding *f, const char *indent,
                      problem_fn problem, const char *what, const char *s)
{
    char why[128], shown[SHOWN_MAX * 4 + 8];

    if (!problem(s, why, sizeof why))
        return 0;
    refuse(o, f, indent, "%s %s %s", what,
           utf8_quote(shown, sizeof shown, s, SHOWN_MAX), why);
    return 1;
}

/* The checks every change passes: key and value are text a line holds,
 * the value fits. On success val holds the value as text (vlen bytes). */
static int refused_change(out *o, const finding *f, const cJSON *c,
                          const char *indent, char *val, size_t vlen)
{
    const char *key = str_item(c, "key");

    if (refused_if(o, f, indent, text_problem, "key", key ? key : ""))
        return 1;
    if (!value_text(cJSON_GetObjectItemCaseSensitive(c, "to"), val, vlen)) {
        refuse(o, f, indent, "the value of %s is longer than %zu bytes", key,
               vlen - 1);
        return 1;
    }
    return refused_if(o, f, indent, text_problem, "value", val);
}

/* Plain YAML scalars for the safe cases, double quotes otherwise. */
static void put_yaml(FILE *f, const char *s)
{
    static const char lead[] = "-?:,[]{}#&*!|>'\"%@` ";
    size_t n = strlen(s), i;
    int plain = n > 0 && !strchr(lead, s[0]) && s[n - 1] != ' ' &&
                !strstr(s, ": ") && !strstr(s, " #");

    for (i = 0; i < n && plain; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            plain = 0;
    if (plain) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void cite(out *o, const finding *f, const char *indent)
{
    fprintf(o->f, "%s# ", indent);
    put_line_text(o->f, f->rule, COMMENT_MAX);
    fprintf(o->f, " [%s]: ", f->fingerprint);
    put_line_text(o->f, f->message, COMMENT_MAX);
    fputc('\n', o->f);
}

static void was(out *o, const cJSON *c, const char *indent)
{
    const cJSON *from = cJSON_GetObjectItemCaseSensitive(c, "from");
    char buf[512];

    if (!from || cJSON_IsNull(from)) {
        fprintf(o->f, "%s#   was: not set\n", indent);
        return;
    }
    value_text(from, buf, sizeof buf); /* cut: the comment shows "..." */
    fprintf(o->f, "%s#   was: ", indent);
    put_line_text(o->f, buf, COMMENT_MAX);
    fputc('\n', o->f);
}

/* Remembers scope/key = value. Returns 0 when new, 1 when the same value
 * was set before, -1 when a different one was (conflict). */
static int remember(out *o, const char *scope, const char *key,
                    const char *value, const char **before)
{
    size_t i;

    for (i = 0; i < o->nkeys; i++)
        if (strcmp(o->keys[i].scope, scope) == 0 &&
            strcmp(o->keys[i].key, key) == 0) {
            *before = o->keys[i].value;
            return strcmp(o->keys[i].value, value) == 0 ? 1 : -1;
        }
    if (o->nkeys < EMIT_MAX_KEYS) {
        seen *s = &o->keys[o->nkeys];
        s->scope = strdup(scope);
        s->key = strdup(key);
        s->value = strdup(value);
        if (s->scope && s->key && s->value)
            o->nkeys++;
        else {
            free(s->scope);
            free(s->key);
            free(s->value);
        }
    }
    return 0;
}

static void forget_all(out *o)
{
    size_t i;

    for (i = 0; i < o->nkeys; i++) {
        free(o->keys[i].scope);
        free(o->keys[i].key);
        free(o->keys[i].value);
    }
    o->nkeys = 0;
}

/* Says so and returns 1 when scope/key was set before (same or other
 * value); the caller then writes nothing more for this change. */
static int repeated(out *o, const char *scope, const char *key,
                    const char *value, const char *indent)
{
    const char *before = NULL;
    int r = remember(o, scope, key, value, &before);

    if (r == 1)
        fprintf(o->f, "%s#   (already set above)\n", indent);
    else if (r == -1) {
        fprintf(o->f, "%s#   not applied: conflicts with ", indent);
        put_line_text(o->f, key, COMMENT_MAX);
        fputs(" = ", o->f);
        put_line_text(o->f, before, COMMENT_MAX);
        fputs(" above; wanted ", o->f);
        put_line_text(o->f, value, COMMENT_MAX);
        fputc('\n', o->f);
    }
    return r != 0;
}

/* Whether a Flink change's key names configuration, not code: code is
 * named like Java (WatermarkStrategy.withIdleness, a call with "("), or
 * has no dot. Configuration keys must then pass key_problem(). */
static int flink_config_key(const char *k)
{
    return strchr(k, '.') && !strchr(k, '(') && !(k[0] >= 'A' && k[0] <= 'Z');
}

/* A change written as a comment: code, not configuration. */
static void code_change(out *o, const cJSON *c, const char *val,
                        const char *indent)
{
    const char *target = str_item(c, "target"), *key = str_item(c, "key");

    fprintf(o->f, "%s#   not a config key; change it where the job is defined: ",
            indent);
    if (target) {
        put_line_text(o->f, target, COMMENT_MAX);
        fputs(": ", o->f);
    }
    put_line_text(o->f, key, COMMENT_MAX);
    fputs(" = ", o->f);
    put_line_text(o->f, val, COMMENT_MAX);
    fputc('\n', o->f);
}

/* ---- Flink ---------------------------------------------------------------- */

typedef struct override {
    const finding *f;
    const cJSON *c;
    long to;   /* the parallelism */
    int write; /* passed the checks and is not a repeat */
} override;

/* Whether id is a JobVertexID as Flink prints it: 32 hex digits. */
static int flink_vertex_id(const char *id)
{
    size_t i;

    for (i = 0; id[i]; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f') ||
              (id[i] >= 'A' && id[i] <= 'F')))
            return 0;
    return i == 32;
}

/* A parallelism: an integer 1..FLINK_MAX_PARALLELISM (a number, or a
 * string of digits). Returns it, or 0. */
static long parallelism_of(const cJSON *v)
{
    long n = 0;
    size_t i;

    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        return d == floor(d) && d >= 1 && d <= FLINK_MAX_PARALLELISM ? (long)d : 0;
    }
    if (!cJSON_IsString(v) || !*v->valuestring)
        return 0;
    for (i = 0; v->valuestring[i]; i++) {
        char ch = v->valuestring[i];
        if (ch < '0' || ch > '9' || (n = n * 10 + (ch - '0')) > FLINK_MAX_PARALLELISM)
            return 0;
    }
    return n;
}

/* The comment for one override, and whether it goes into the line. */
static void flink_override_note(out *o, override *ov)
{
    const char *target = str_item(ov->c, "target");
    const char *id = ov->f->node_id;
    char from[64], to[64], shown[SHOWN_MAX * 4 + 8];

    cite(o, ov->f, "");
    fputs("#   vertex ", o->f);
    put_line_text(o->f, id, COMMENT_MAX);
    if (target) {
        fputs(" (", o->f);
        put_line_text(o->f, target, 120);
        fputc(')', o->f);
    }
    if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(ov->c, "from")) ||
        !cJSON_GetObjectItemCaseSensitive(ov->c, "from"))
        snprintf(from, sizeof from, "(not set)");
    else
        value_text(cJSON_GetObjectItemCaseSensitive(ov->c, "from"), from, sizeof from);
    value_text(cJSON_GetObjectItemCaseSensitive(ov->c, "to"), to, sizeof to);
    fputs(": parallelism ", o->f);
    put_line_text(o->f, from, sizeof from);
    fputs(" -> ", o->f);
    put_line_text(o->f, to, sizeof to);
    fputc('\n', o->f);
    if (!flink_vertex_id(id)) {
        refuse(o, ov->f, "", "vertex id %s is not 32 hex digits",
               utf8_quote(shown, sizeof shown, id, SHOWN_MAX));
        return;
    }
    ov->to = parallelism_of(cJSON_GetObjectItemCaseSensitive(ov->c, "to"));
    if (!ov->to) {
        refuse(o, ov->f, "", "parallelism %s is not an integer from 1 to %d",
               utf8_quote(shown, sizeof shown, to, SHOWN_MAX), FLINK_MAX_PARALLELISM);
        return;
    }
    snprintf(to, sizeof to, "%ld", ov->to);
    /* one value per vertex: the first (most severe) wins */
    ov->write = !repeated(o, "vertex", id, to, "");
}

static void flink_overrides(out *o, override *ov, size_t n)
{
    size_t i, k = 0;

    if (!n)
        return;
    fputs("\n# Vertex parallelism (Flink 1.18+ with the adaptive scheduler, or any\n"
          "# job restarted from a savepoint with this setting):\n", o->f);
    for (i = 0; i < n; i++)
        flink_override_note(o, &ov[i]);
    for (i = 0; i < n; i++) {
        if (!ov[i].write)
            continue;
        fprintf(o->f, "%s%s:%ld", k++ ? "," : "pipeline.jobvertex-parallelism-overrides: ",
                ov[i].f->node_id, ov[i].to);
    }
    if (k)
        fputc('\n', o->f);
}

static void flink_file(out *o, const finding *const *fs, size_t n)
{
    override ov[EMIT_MAX_KEYS];
    size_t nov = 0, i;
    const cJSON *c;

    fputs("# Add to the job's Flink configuration (config.yaml, or flink-conf.yaml\n"
          "# before Flink 1.19), or pass each line as -D key=value.\n", o->f);
    for (i = 0; i < n; i++) {
        const finding *f = fs[i];
        int cited = 0;
        cJSON_ArrayForEach(c, f->changes) {
            const char *key = str_item(c, "key");
            char val[VALUE_MAX];
            if (strcmp(key, "parallelism") == 0 && f->node_id &&
                nov < EMIT_MAX_KEYS) {
                ov[nov++] = (override){f, c, 0, 0};
                continue;
            }
            if (!cited++) {
                fputc('\n', o->f);
                cite(o, f, "");
            }
            if (strcmp(key, "parallelism") == 0 && f->node_id) {
                refuse(o, f, "", "more than %d vertex parallelism changes in one run",
                       EMIT_MAX_KEYS);
                continue;
            }
            if (refused_change(o, f, c, "", val, sizeof val))
                continue;
            if (!flink_config_key(key)) {
                code_change(o, c, val, "");
                continue;
            }
            if (refused_if(o, f, "", key_problem, "key", key))
                continue;
            was(o, c, "");
            if (repeated(o, "job", key, val, ""))
                continue;
            fprintf(o->f, "%s: ", key);
            put_yaml(o->f, val);
            fputc('\n', o->f);
        }
    }
    flink_overrides(o, ov, nov);
}

/* ---- Spark ---------------------------------------------------------------- */

/* A value as java.util.Properties (spark-defaults.conf) reads it back: a
 * backslash is an escape there, so it is doubled. */
static void put_properties_value(FILE *f, const char *v)
{
    for (; *v; v++) {
        if (*v == '\\')
            fputc('\\', f);
        fputc(*v, f);
    }
}

static void spark_file(out *o, const finding *const *fs, size_t n)
{
    size_t i;
    const cJSON *c;

    fputs("# Append to spark-defaults.conf, or pass each line to spark-submit\n"
          "# as --conf key=value.\n", o->f);
    for (i = 0; i < n; i++) {
        fputc('\n', o->f);
        cite(o, fs[i], "");
        cJSON_ArrayForEach(c, fs[i]->changes) {
            const char *key = str_item(c, "key");
            char val[VALUE_MAX];
            if (refused_change(o, fs[i], c, "", val, sizeof val))
                continue;
            if (strncmp(key, "spark.", 6) != 0) {
                code_change(o, c, val, "");
                continue;
            }
            if (refused_if(o, fs[i], "", key_problem, "key", key))
                continue;
            was(o, c, "");
            if (repeated(o, "app", key, val, ""))
                continue;
            fprintf(o->f, "%s ", key);
            put_properties_value(o->f, val);
            fputc('\n', o->f);
        }
    }
}

/* ---- dbt ------------------------------------------------------------------- */

/* The model a change configures: the .sql file it targets, else the
 * finding's node. NULL for project-level changes (profiles.yml). */
static void dbt_model(const finding *f, const cJSON *c, char *buf, size_t len)
{
    const char *t = str_item(c, "target");
    size_t n = t ? strlen(t) : 0;

    buf[0] = '\0';
    if (n > 4 && strcmp(t + n - 4, ".sql") == 0) {
        const char *slash = strrchr(t, '/');
        const char *b = slash ? slash + 1 : t;
        snprintf(buf, len, "%.*s", (int)(t + n - 4 - b), b);
    } else if (f->node_id && (!t || !strstr(t, ".yml"))) {
        snprintf(buf, len, "%s", f->node_name ? f->node_name : f->node_id);
    }
}

static void dbt_config_line(out *o, const char *file, const char *key,
                            const char *val, const cJSON *to)
{
    fputs("  #   in ", o->f);
    put_line_text(o->f, file, COMMENT_MAX);
    fputs(": {{ config(", o->f);
    put_line_text(o->f, key, 100);
    if (cJSON_IsString(to)) {
        fputs("='", o->f);
        put_line_text(o->f, val, COMMENT_MAX);
        fputs("'", o->f);
    } else {
        fputc('=', o->f);
        put_line_text(o->f, val, COMMENT_MAX);
    }
    fputs(") }}\n", o->f);
}

static void dbt_models(out *o, const finding *const *fs, size_t n)
{
    size_t i;
    const cJSON *c;
    int any = 0;

    for (i = 0; i < n; i++)
        cJSON_ArrayForEach(c, fs[i]->changes) {
            const char *key = str_item(c, "key"), *t = str_item(c, "target");
            const cJSON *to = cJSON_GetObjectItemCaseSensitive(c, "to");
            char mname[256], val[VALUE_MAX];
            dbt_model(fs[i], c, mname, sizeof mname);
            if (!*mname)
                continue;
            if (!any++)
                fputs("\nmodels:\n", o->f);
            cite(o, fs[i], "  ");
            if (refused_change(o, fs[i], c, "  ", val, sizeof val) ||
                refused_if(o, fs[i], "  ", key_problem, "key", key) ||
                refused_if(o, fs[i], "  ", text_problem, "model name", mname))
                continue;
            was(o, c, "  ");
            if (repeated(o, mname, key, val, "  "))
                continue;
            if (t && strstr(t, ".sql"))
                dbt_config_line(o, t, key, val, to);
            fputs("  - name: ", o->f);
            put_yaml(o->f, mname);
            fputs("\n    config:\n      ", o->f);
            put_yaml(o->f, key);
            fputs(": ", o->f);
            put_yaml(o->f, val);
            fputc('\n', o->f);
        }
}

static void dbt_file(out *o, const finding *const *fs, size_t n)
{
    size_t i;
    const cJSON *c;

    fputs("# Model configs: merge into the models' properties YAML (a\n"
          "# models/*.yml file), or put the config() line into the model's .sql\n"
          "# file. Project settings (profiles.yml) are listed as comments.\n", o->f);
    dbt_models(o, fs, n);
    for (i = 0; i < n; i++)
        cJSON_ArrayForEach(c, fs[i]->changes) {
            const char *t = str_item(c, "target");
            char mname[256], val[VALUE_MAX];
            dbt_model(fs[i], c, mname, sizeof mname);
            if (*mname)
                continue;
            fputc('\n', o->f);
            cite(o, fs[i], "");
            if (refused_change(o, fs[i], c, "", val, sizeof val))
                continue;
            was(o, c, "");
            fputs("# in ", o->f);
            put_line_text(o->f, t ? t : "dbt_project.yml", COMMENT_MAX);
            fputs(":\n#   ", o->f);
            put_line_text(o->f, str_item(c, "key"), COMMENT_MAX);
            fputs(": ", o->f);
            put_line_text(o->f, val, COMMENT_MAX);
            fputc('\n', o->f);
        }
}

/* ---- any other source ----------------------------------------------------- */

static void other_file(out *o, const finding *const *fs, size_t n)
{
    size_t i;
    const cJSON *c;

    fputs("# Changes as target: key = value.\n", o->f);
    for (i = 0; i < n; i++) {
        fputc('\n', o->f);
        cite(o, fs[i], "");
        cJSON_ArrayForEach(c, fs[i]->changes) {
            const char *t = str_item(c, "target");
            char val[VALUE_MAX];
            if (refused_change(o, fs[i], c, "", val, sizeof val))
                continue;
            was(o, c, "");
            put_line_text(o->f, t ? t : "run", COMMENT_MAX);
            fputs(": ", o->f);
            put_line_text(o->f, str_item(c, "key"), COMMENT_MAX);
            fputs(" = ", o->f);
            put_line_text(o->f, val, sizeof val);
            fputc('\n', o->f);
        }
    }
}

/* ---- files ------------------------------------------------------------------ */

static int selected(const finding *f, const baseline *bl, int all)
{
    const decision *d;

    if (f->suppressed == FINDING_IGNORED || !cJSON_GetArraySize(f->changes))
        return 0;
    d = baseline_decision_of(bl, f);
    if (all)
        return !d || d->status != DECISION_DISMISSED;
    return d && d->status == DECISION_APPROVED;
}

/* Appends s to buf[*n..] keeping [A-Za-z0-9._] and turning runs of
 * anything else into one '-', up to max characters of s. */
static void put_slug(char *buf, size_t len, size_t *n, const char *s,
                     size_t max)
{
    size_t i;
    int dash = *n > 0 && buf[*n - 1] == '-';

    for (i = 0; s[i] && i < max && *n + 1 < len; i++) {
        char ch = s[i];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                 (ch >= '0' && ch <= '9') || ch == '.' || ch == '_';
        if (ok) {
            buf[(*n)++] = ch;
            dash = 0;
        } else if (!dash) {
            buf[(*n)++] = '-';
            dash = 1;
        }
    }
    while (*n > 0 && (buf[*n - 1] == '-' || buf[*n - 1] == '.'))
        (*n)--;
    buf[*n] = '\0';
}

/* <source>-<name or id>[-<first 8 of the id>][-k], safe as a file name. */
static void slug(const struct op_run *r, int with_id, size_t k, char *buf,
                 size_t len)
{
    size_t n = 0;

    put_slug(buf, len, &n, r->source, 40);
    buf[n++] = '-';
    put_slug(buf, len, &n, r->name && *r->name ? r->name : r->id, 80);
    if (with_id) {
        buf[n++] = '-';
        put_slug(buf, len, &n, r->id, 8);
    }
    if (k > 2)
        snprintf(buf + n, len - n, "-%zu", k);
}

static const char *extension(const char *source)
{
    if (strcmp(source, "flink") == 0)
        return "yaml";
    if (strcmp(source, "spark") == 0)
        return "conf";
    if (strcmp(source, "dbt") == 0)
        return "yml";
    return "txt";
}

/* A file name not taken by an earlier run of this call: <source>-<name>,
 * then <source>-<name>-<first 8 characters of the run id>. */
static void file_name(const char *dir, const struct op_run *r, char names[][128],
                      size_t used, char *path, size_t len)
{
    char cand[128];
    size_t i, k;

    for (k = 1;; k++) {
        slug(r, k > 1, k, cand, sizeof cand - 8);
        for (i = 0; i < used && strcmp(names[i], cand) != 0; i++)
            ;
        if (i == used)
            break;
    }
    snprintf(names[used], 128, "%s", cand);
    snprintf(path, len, "%s/%s.%s", dir, cand, extension(r->source));
}

static int write_run(const char *path, const struct op_run *r,
                     const finding *const *fs, size_t n, FILE *diag,
                     size_t *nrefused, op_error *err)
{
    out o;
    int bad;

    memset(&o, 0, sizeof o);
    o.run = r;
    o.diag = diag;
    o.path = path;
    o.f = fopen(path, "w");
    if (!o.f)
        return op_error_set(err, OP_EIO, "%s: cannot write: %s", path,
                            strerror(errno));
    fprintf(o.f, "# opti-pipe %s: changes for %s run ", OP_VERSION, r->source);
    put_line_text(o.f, r->name ? r->name : r->id, COMMENT_MAX);
    if (r->name) {
        fputs(" (", o.f);
        put_line_text(o.f, r->id, COMMENT_MAX);
        fputc(')', o.f);
    }
    fputc('\n', o.f);
    if (strcmp(r->source, "flink") == 0)
        flink_file(&o, fs, n);
    else if (strcmp(r->source, "spark") == 0)
        spark_file(&o, fs, n);
    else if (strcmp(r->source, "dbt") == 0)
        dbt_file(&o, fs, n);
    else
        other_file(&o, fs, n);
    if (o.nrefused)
        fprintf(o.f, "\n# %zu change%s refused: see \"refused:\" above\n",
                o.nrefused, o.nrefused == 1 ? "" : "s");
    *nrefused += o.nrefused;
    forget_all(&o);
    bad = ferror(o.f);
    bad |= fclose(o.f) != 0;
    return bad ? op_error_set(err, OP_EIO, "%s: write failed", path) : 0;
}

static int make_dir(const char *dir, op_error *err)
{
    char p[PATH_MAX];
    size_t i;

    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return op_error_set(err, OP_EIO, "%s: path too long", dir);
    for (i = 1; p[i]; i++)
        if (p[i] == '/') {
            p[i] = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST)
                return op_error_set(err, OP_EIO, "%s: cannot create: %s", p,
                                    strerror(errno));
            p[i] = '/';
        }
    if (mkdir(p, 0777) != 0 && errno != EEXIST)
        return op_error_set(err, OP_EIO, "%s: cannot create: %s", p,
                            strerror(errno));
    return 0;
}

int emit_changes(const char *dir, const model *m, const results *res,
                 const baseline *bl, int all, FILE *diag, emit_stats *st,
                 op_error *err)
{
    const finding **fs = NULL;
    char (*names)[128] = NULL;
    char path[PATH_MAX + 256];
    size_t r, i, n, used = 0;
    int rc;

    memset(st, 0, sizeof *st);
    if ((rc = make_dir(dir, err)))
        return rc;
    fs = calloc(res->n + 1, sizeof *fs);
    names = calloc(m->nruns + 1, sizeof *names);
    if (!fs || !names) {
        rc = op_error_set(err, OP_ENOMEM, "out of memory");
        goto out;
    }
    for (r = 0; r < m->nruns && !rc; r++) {
        for (i = n = 0; i < res->n; i++)
            if (res->f[i].run_index == r && selected(&res->f[i], bl, all))
                fs[n++] = &res->f[i];
        if (!n)
            continue;
        file_name(dir, m->runs[r], names, used++, path, sizeof path);
        rc = write_run(path, m->runs[r], fs, n, diag, &st->nrefused, err);
        if (!rc)
            st->nfiles++;
    }
out:
    free(fs);
    free(names);
    return rc;
}
