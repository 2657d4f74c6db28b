/*
 * emit_changes.c - writing findings' `changes` as config patches
 * (emit_changes.h): one file per run, written by its engine's patch writer
 * (engine.h; they live in <engine>/host/) or by the generic one here. What
 * every writer shares is here: the comment that cites a finding, value
 * formatting, the checks that refuse a change the engine would read
 * differently from what the rule meant (a key or value that could start a
 * line of its own, a key the engine does not allow), and a small table
 * that notices two findings asking for different values of one key.
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
#include "engine.h"
#include "utf8.h"
#include "wfile.h"

/* ---- small helpers ------------------------------------------------------- */

const char *emit_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A value as text: strings as they are, whole numbers without a point.
 * Returns 0 when it did not fit into buf (then cut). */
int emit_value_text(const cJSON *v, char *buf, size_t len)
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
void emit_text(FILE *f, const char *s, size_t max)
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
int emit_text_problem(const char *s, char *why, size_t len)
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
int emit_key_problem(const char *key, char *why, size_t len)
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
void emit_refuse(emit_out *o, const finding *f, const char *indent,
                   const char *fmt, ...)
{
    char why[768];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    o->nrefused++;
    fprintf(o->f, "%s#   refused: ", indent);
    emit_text(o->f, why, sizeof why);
    fputc('\n', o->f);
    if (!o->diag)
        return;
    fprintf(o->diag, "optipipe: %s: ", o->path);
    emit_text(o->diag, f->rule, EMIT_COMMENT_MAX);
    fprintf(o->diag, " [%s]: change refused: ", f->fingerprint);
    emit_text(o->diag, why, sizeof why);
    fputc('\n', o->diag);
}

/* Refuses (and returns 1) when problem() finds one in s, which is what
 * of f (e.g. "key", "key"); s is quoted with escapes. */
int emit_refused_if(emit_out *o, const finding *f, const char *indent,
                      emit_problem_fn problem, const char *what, const char *s)
{
    char why[128], shown[EMIT_SHOWN_MAX * 4 + 8];

    if (!problem(s, why, sizeof why))
        return 0;
    emit_refuse(o, f, indent, "%s %s %s", what,
           utf8_quote(shown, sizeof shown, s, EMIT_SHOWN_MAX), why);
    return 1;
}

/* The checks every change passes: key and value are text a line holds,
 * the value fits. On success val holds the value as text (vlen bytes). */
int emit_refused_change(emit_out *o, const finding *f, const cJSON *c,
                          const char *indent, char *val, size_t vlen)
{
    const char *key = emit_str(c, "key");

    if (emit_refused_if(o, f, indent, emit_text_problem, "key", key ? key : ""))
        return 1;
    if (!emit_value_text(cJSON_GetObjectItemCaseSensitive(c, "to"), val, vlen)) {
        emit_refuse(o, f, indent, "the value of %s is longer than %zu bytes", key,
               vlen - 1);
        return 1;
    }
    return emit_refused_if(o, f, indent, emit_text_problem, "value", val);
}

/* Plain YAML scalars for the safe cases, double quotes otherwise. */
void emit_yaml(FILE *f, const char *s)
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

void emit_cite(emit_out *o, const finding *f, const char *indent)
{
    fprintf(o->f, "%s# ", indent);
    emit_text(o->f, f->rule, EMIT_COMMENT_MAX);
    fprintf(o->f, " [%s]: ", f->fingerprint);
    emit_text(o->f, f->message, EMIT_COMMENT_MAX);
    fputc('\n', o->f);
}

void emit_was(emit_out *o, const cJSON *c, const char *indent)
{
    const cJSON *from = cJSON_GetObjectItemCaseSensitive(c, "from");
    char buf[512];

    if (!from || cJSON_IsNull(from)) {
        fprintf(o->f, "%s#   was: not set\n", indent);
        return;
    }
    emit_value_text(from, buf, sizeof buf); /* cut: the comment shows "..." */
    fprintf(o->f, "%s#   was: ", indent);
    emit_text(o->f, buf, EMIT_COMMENT_MAX);
    fputc('\n', o->f);
}

/* Remembers scope/key = value. Returns 0 when new, 1 when the same value
 * was set before, -1 when a different one was (conflict). */
static int remember(emit_out *o, const char *scope, const char *key,
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
        emit_seen *s = &o->keys[o->nkeys];
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

static void forget_all(emit_out *o)
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
int emit_repeated(emit_out *o, const char *scope, const char *key,
                    const char *value, const char *indent)
{
    const char *before = NULL;
    int r = remember(o, scope, key, value, &before);

    if (r == 1)
        fprintf(o->f, "%s#   (already set above)\n", indent);
    else if (r == -1) {
        fprintf(o->f, "%s#   not applied: conflicts with ", indent);
        emit_text(o->f, key, EMIT_COMMENT_MAX);
        fputs(" = ", o->f);
        emit_text(o->f, before, EMIT_COMMENT_MAX);
        fputs(" above; wanted ", o->f);
        emit_text(o->f, value, EMIT_COMMENT_MAX);
        fputc('\n', o->f);
    }
    return r != 0;
}

/* A change written as a comment: code, not configuration. */
void emit_code_change(emit_out *o, const cJSON *c, const char *val,
                        const char *indent)
{
    const char *target = emit_str(c, "target"), *key = emit_str(c, "key");

    fprintf(o->f, "%s#   not a config key; change it where the job is defined: ",
            indent);
    if (target) {
        emit_text(o->f, target, EMIT_COMMENT_MAX);
        fputs(": ", o->f);
    }
    emit_text(o->f, key, EMIT_COMMENT_MAX);
    fputs(" = ", o->f);
    emit_text(o->f, val, EMIT_COMMENT_MAX);
    fputc('\n', o->f);
}

/* ---- any other source ----------------------------------------------------- */

static void other_file(emit_out *o, const finding *const *fs, size_t n)
{
    size_t i;
    const cJSON *c;

    fputs("# Changes as target: key = value.\n", o->f);
    for (i = 0; i < n; i++) {
        fputc('\n', o->f);
        emit_cite(o, fs[i], "");
        cJSON_ArrayForEach(c, fs[i]->changes) {
            const char *t = emit_str(c, "target");
            char val[EMIT_VALUE_MAX];
            if (emit_refused_change(o, fs[i], c, "", val, sizeof val))
                continue;
            emit_was(o, c, "");
            emit_text(o->f, t ? t : "run", EMIT_COMMENT_MAX);
            fputs(": ", o->f);
            emit_text(o->f, emit_str(c, "key"), EMIT_COMMENT_MAX);
            fputs(" = ", o->f);
            emit_text(o->f, val, sizeof val);
            fputc('\n', o->f);
        }
    }
}

/* ---- files ------------------------------------------------------------------ */

int emit_selected(const finding *f, const baseline *bl, int all)
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

/* The run's patch writer: its engine's (engine.h), else the generic one. */
static const op_engine_patch *patch_of(const char *source)
{
    static const op_engine_patch generic = {"txt", other_file};
    const op_engine *e = engine_find(source);

    return e && ENGINE_HAS(e, patch) && e->patch ? e->patch : &generic;
}

void emit_file_name(const struct op_run *r, char names[][128], size_t used,
                    char *name, size_t len)
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
    snprintf(name, len, "%s.%s", cand, patch_of(r->source)->ext);
}

int emit_run(FILE *f, const char *path, const struct op_run *r,
             const finding *const *fs, size_t n, FILE *diag, size_t *nrefused)
{
    emit_out o;

    memset(&o, 0, sizeof o);
    o.run = r;
    o.diag = diag;
    o.path = path;
    o.f = f;
    fprintf(o.f, "# opti-pipe %s: changes for %s run ", OP_VERSION, r->source);
    emit_text(o.f, r->name ? r->name : r->id, EMIT_COMMENT_MAX);
    if (r->name) {
        fputs(" (", o.f);
        emit_text(o.f, r->id, EMIT_COMMENT_MAX);
        fputc(')', o.f);
    }
    fputc('\n', o.f);
    patch_of(r->source)->write(&o, fs, n);
    if (o.nrefused)
        fprintf(o.f, "\n# %zu change%s refused: see \"refused:\" above\n",
                o.nrefused, o.nrefused == 1 ? "" : "s");
    *nrefused += o.nrefused;
    forget_all(&o);
    return ferror(f) ? -1 : 0;
}

static int write_run(const char *path, const struct op_run *r,
                     const finding *const *fs, size_t n, FILE *diag,
                     size_t *nrefused, op_error *err)
{
    wfile out;
    int rc;

    /* DIR may hold links planted where a patch goes: never followed */
    if ((rc = wfile_open(&out, path, err)))
        return rc;
    if (emit_run(out.f, path, r, fs, n, diag, nrefused)) {
        wfile_abort(&out);
        return op_error_set(err, OP_EIO, "%s: write failed", path);
    }
    return wfile_commit(&out, err);
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
    char path[PATH_MAX + 256], name[160];
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
            if (res->f[i].run_index == r && emit_selected(&res->f[i], bl, all))
                fs[n++] = &res->f[i];
        if (!n)
            continue;
        emit_file_name(m->runs[r], names, used++, name, sizeof name);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        rc = write_run(path, m->runs[r], fs, n, diag, &st->nrefused, err);
        if (!rc)
            st->nfiles++;
    }
out:
    free(fs);
    free(names);
    return rc;
}

