/*
 * patch_flink.c - Flink's --emit-changes writer (emit_changes.h): config
 * lines for config.yaml / flink-conf.yaml, code-level changes as comments,
 * and vertex parallelism as one pipeline.jobvertex-parallelism-overrides
 * line. A vertex id that is not 32 hex digits or a parallelism outside
 * 1..32768 (or more than 512 of them in a run) is refused.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "flink_host.h"
#include "utf8.h"

#define FLINK_MAX_PARALLELISM 32768 /* Flink's upper bound (2^15) */

/* Whether a Flink change's key names configuration, not code: code is
 * named like Java (WatermarkStrategy.withIdleness, a call with "("), or
 * has no dot. Configuration keys must then pass emit_key_problem(). */
static int flink_config_key(const char *k)
{
    return strchr(k, '.') && !strchr(k, '(') && !(k[0] >= 'A' && k[0] <= 'Z');
}

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
static void flink_override_note(emit_out *o, override *ov)
{
    const char *target = emit_str(ov->c, "target");
    const char *id = ov->f->node_id;
    char from[64], to[64], shown[EMIT_SHOWN_MAX * 4 + 8];

    emit_cite(o, ov->f, "");
    fputs("#   vertex ", o->f);
    emit_text(o->f, id, EMIT_COMMENT_MAX);
    if (target) {
        fputs(" (", o->f);
        emit_text(o->f, target, 120);
        fputc(')', o->f);
    }
    if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(ov->c, "from")) ||
        !cJSON_GetObjectItemCaseSensitive(ov->c, "from"))
        snprintf(from, sizeof from, "(not set)");
    else
        emit_value_text(cJSON_GetObjectItemCaseSensitive(ov->c, "from"), from, sizeof from);
    emit_value_text(cJSON_GetObjectItemCaseSensitive(ov->c, "to"), to, sizeof to);
    fputs(": parallelism ", o->f);
    emit_text(o->f, from, sizeof from);
    fputs(" -> ", o->f);
    emit_text(o->f, to, sizeof to);
    fputc('\n', o->f);
    if (!flink_vertex_id(id)) {
        emit_refuse(o, ov->f, "", "vertex id %s is not 32 hex digits",
               utf8_quote(shown, sizeof shown, id, EMIT_SHOWN_MAX));
        return;
    }
    ov->to = parallelism_of(cJSON_GetObjectItemCaseSensitive(ov->c, "to"));
    if (!ov->to) {
        emit_refuse(o, ov->f, "", "parallelism %s is not an integer from 1 to %d",
               utf8_quote(shown, sizeof shown, to, EMIT_SHOWN_MAX), FLINK_MAX_PARALLELISM);
        return;
    }
    snprintf(to, sizeof to, "%ld", ov->to);
    /* one value per vertex: the first (most severe) wins */
    ov->write = !emit_repeated(o, "vertex", id, to, "");
}

static void flink_overrides(emit_out *o, override *ov, size_t n)
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

void flink_patch_write(emit_out *o, const finding *const *fs, size_t n)
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
            const char *key = emit_str(c, "key");
            char val[EMIT_VALUE_MAX];
            if (strcmp(key, "parallelism") == 0 && f->node_id &&
                nov < EMIT_MAX_KEYS) {
                ov[nov++] = (override){f, c, 0, 0};
                continue;
            }
            if (!cited++) {
                fputc('\n', o->f);
                emit_cite(o, f, "");
            }
            if (strcmp(key, "parallelism") == 0 && f->node_id) {
                emit_refuse(o, f, "", "more than %d vertex parallelism changes in one run",
                       EMIT_MAX_KEYS);
                continue;
            }
            if (emit_refused_change(o, f, c, "", val, sizeof val))
                continue;
            if (!flink_config_key(key)) {
                emit_code_change(o, c, val, "");
                continue;
            }
            if (emit_refused_if(o, f, "", emit_key_problem, "key", key))
                continue;
            emit_was(o, c, "");
            if (emit_repeated(o, "job", key, val, ""))
                continue;
            fprintf(o->f, "%s: ", key);
            emit_yaml(o->f, val);
            fputc('\n', o->f);
        }
    }
    flink_overrides(o, ov, nov);
}
