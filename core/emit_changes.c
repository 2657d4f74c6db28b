/*
 * emit_changes.c - writing findings' `changes` as config patches
 * (emit_changes.h). One writer per engine; they share the comment that
 * cites a finding, value formatting and a small table that notices two
 * findings asking for different values of one key.
 */
#include "emit_changes.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"

#define EMIT_MAX_KEYS 512
#define COMMENT_MAX 200

typedef struct seen {
    char *scope, *key, *value;
} seen;

typedef struct out {
    FILE *f;
    const struct op_run *run;
    seen keys[EMIT_MAX_KEYS];
    size_t nkeys;
} out;

/* ---- small helpers ------------------------------------------------------- */

static const char *str_item(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A value as text: strings as they are, whole numbers without a point. */
static void value_text(const cJSON *v, char *buf, size_t len)
{
    char *s;

    if (cJSON_IsString(v)) {
        snprintf(buf, len, "%s", v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (isfinite(d) && d == floor(d) && fabs(d) < 9.0e15)
            snprintf(buf, len, "%lld", (long long)d);
        else
            snprintf(buf, len, "%.15g", d);
    } else if (cJSON_IsBool(v)) {
        snprintf(buf, len, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else if (v && (s = cJSON_PrintUnformatted(v))) {
        snprintf(buf, len, "%s", s);
        cJSON_free(s);
    } else {
        snprintf(buf, len, "null");
    }
}

/* Writes s on one line: control characters become spaces, long text is
 * cut (a comment must never end early or run on). */
static void put_line_text(FILE *f, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t i;

    for (i = 0; p[i] && i < max; i++) {
        if (p[i] < 0x20 || p[i] == 0x7f)
            fputc(' ', f);
        else if (p[i] == 0xc2 && p[i + 1] >= 0x80 && p[i + 1] <= 0x9f)
            fputc(' ', f), i++; /* a C1 control */
        else
            fputc(p[i], f);
    }
    if (p[i])
        fputs("...", f);
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
    fprintf(o->f, "%s# %s [%s]: ", indent, f->rule, f->fingerprint);
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
    value_text(from, buf, sizeof buf);
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

static int config_key_like(const char *k)
{
    size_t i;

    if (!*k)
        return 0;
    for (i = 0; k[i]; i++)
        if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') ||
              k[i] == '.' || k[i] == '-' || k[i] == '_'))
            return 0;
    return strchr(k, '.') != NULL;
}

static void code_change(out *o, const cJSON *c, const char *indent)
{
    const char *target = str_item(c, "target"), *key = str_item(c, "key");
    char buf[512];

    value_text(cJSON_GetObjectItemCaseSensitive(c, "to"), buf, sizeof buf);
    fprintf(o->f, "%s#   not a config key; change it where the job is defined: ",
            indent);
    if (target) {
        put_line_text(o->f, target, COMMENT_MAX);
        fputs(": ", o->f);
    }
    put_line_text(o->f, key, COMMENT_MAX);
    fputs(" = ", o->f);
    put_line_text(o->f, buf, COMMENT_MAX);
    fputc('\n', o->f);
}

/* ---- Flink ---------------------------------------------------------------- */

typedef struct override {
    const finding *f;
    const cJSON *c;
} override;

static void flink_overrides(out *o, const override *ov, size_t n)
{
    size_t i, j;
    int first = 1;

    if (!n)
        return;
    fputs("\n# Vertex parallelism (Flink 1.18+ with the adaptive scheduler, or any\n"
          "# job restarted from a savepoint with this setting):\n", o->f);
    for (i = 0; i < n; i++) {
        char to[64];
        const char *target = str_item(ov[i].c, "target");
        value_text(cJSON_GetObjectItemCaseSensitive(ov[i].c, "to"), to, sizeof to);
        cite(o, ov[i].f, "");
        fputs("#   vertex ", o->f);
        put_line_text(o->f, ov[i].f->node_id, COMMENT_MAX);
        if (target) {
            fputs(" (", o->f);
            put_line_text(o->f, target, 120);
            fputc(')', o->f);
        }
        fputs(": parallelism ", o->f);
        value_text(cJSON_GetObjectItemCaseSensitive(ov[i].c, "from"), to, sizeof to);
        fputs(to, o->f);
        value_text(cJSON_GetObjectItemCaseSensitive(ov[i].c, "to"), to, sizeof to);
        fprintf(o->f, " -> %s\n", to);
    }
    fputs("pipeline.jobvertex-parallelism-overrides: ", o->f);
    for (i = 0; i < n; i++) {
        char to[64];
        for (j = 0; j < i; j++)
            if (strcmp(ov[j].f->node_id, ov[i].f->node_id) == 0)
                break;
        if (j < i)
            continue; /* one value per vertex: the first (most severe) wins */
        value_text(cJSON_GetObjectItemCaseSensitive(ov[i].c, "to"), to, sizeof to);
        fprintf(o->f, "%s%s:%s", first ? "" : ",", ov[i].f->node_id, to);
        first = 0;
    }
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
            char val[1024];
            if (strcmp(key, "parallelism") == 0 && f->node_id) {
                if (nov < EMIT_MAX_KEYS)
                    ov[nov++] = (override){f, c};
                continue;
            }
            if (!cited++) {
                fputc('\n', o->f);
                cite(o, f, "");
            }
            if (!config_key_like(key)) {
                code_change(o, c, "");
                continue;
            }
            was(o, c, "");
            value_text(cJSON_GetObjectItemCaseSensitive(c, "to"), val, sizeof val);
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
            char val[1024];
            if (strncmp(key, "spark.", 6) != 0 || strpbrk(key, " \t=")) {
                code_change(o, c, "");
                continue;
            }
            was(o, c, "");
            value_text(cJSON_GetObjectItemCaseSensitive(c, "to"), val, sizeof val);
            if (repeated(o, "app", key, val, ""))
                continue;
            fprintf(o->f, "%s ", key);
            put_line_text(o->f, val, sizeof val);
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
            char mname[256], val[1024];
            dbt_model(fs[i], c, mname, sizeof mname);
            if (!*mname)
                continue;
            if (!any++)
                fputs("\nmodels:\n", o->f);
            cite(o, fs[i], "  ");
            was(o, c, "  ");
            value_text(to, val, sizeof val);
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
            char mname[256], val[1024];
            dbt_model(fs[i], c, mname, sizeof mname);
            if (*mname)
                continue;
            value_text(cJSON_GetObjectItemCaseSensitive(c, "to"), val, sizeof val);
            fputc('\n', o->f);
            cite(o, fs[i], "");
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
            char val[1024];
            was(o, c, "");
            value_text(cJSON_GetObjectItemCaseSensitive(c, "to"), val, sizeof val);
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
    d = baseline_find(bl, f->fingerprint);
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
                     const finding *const *fs, size_t n, op_error *err)
{
    out o;
    int bad;

    memset(&o, 0, sizeof o);
    o.run = r;
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
                 const baseline *bl, int all, size_t *nfiles, op_error *err)
{
    const finding **fs = NULL;
    char (*names)[128] = NULL;
    char path[PATH_MAX + 256];
    size_t r, i, n, used = 0;
    int rc;

    *nfiles = 0;
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
        rc = write_run(path, m->runs[r], fs, n, err);
        if (!rc)
            (*nfiles)++;
    }
out:
    free(fs);
    free(names);
    return rc;
}
