/*
 * patch_dbt.c - dbt's --emit-changes writer (emit_changes.h): a models:
 * properties block per model with the equivalent {{ config(...) }} line for
 * its .sql file; project-level settings (profiles.yml) as comments.
 */
#include <stdio.h>
#include <string.h>

#include "dbt_host.h"

/* The model a change configures: the .sql file it targets, else the
 * finding's node. NULL for project-level changes (profiles.yml). */
static void dbt_model(const finding *f, const cJSON *c, char *buf, size_t len)
{
    const char *t = emit_str(c, "target");
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

static void dbt_config_line(emit_out *o, const char *file, const char *key,
                            const char *val, const cJSON *to)
{
    fputs("  #   in ", o->f);
    emit_text(o->f, file, EMIT_COMMENT_MAX);
    fputs(": {{ config(", o->f);
    emit_text(o->f, key, 100);
    if (cJSON_IsString(to)) {
        fputs("='", o->f);
        emit_text(o->f, val, EMIT_COMMENT_MAX);
        fputs("'", o->f);
    } else {
        fputc('=', o->f);
        emit_text(o->f, val, EMIT_COMMENT_MAX);
    }
    fputs(") }}\n", o->f);
}

static void dbt_models(emit_out *o, const finding *const *fs, size_t n)
{
    size_t i;
    const cJSON *c;
    int any = 0;

    for (i = 0; i < n; i++)
        cJSON_ArrayForEach(c, fs[i]->changes) {
            const char *key = emit_str(c, "key"), *t = emit_str(c, "target");
            const cJSON *to = cJSON_GetObjectItemCaseSensitive(c, "to");
            char mname[256], val[EMIT_VALUE_MAX];
            dbt_model(fs[i], c, mname, sizeof mname);
            if (!*mname)
                continue;
            if (!any++)
                fputs("\nmodels:\n", o->f);
            emit_cite(o, fs[i], "  ");
            if (emit_refused_change(o, fs[i], c, "  ", val, sizeof val) ||
                emit_refused_if(o, fs[i], "  ", emit_key_problem, "key", key) ||
                emit_refused_if(o, fs[i], "  ", emit_text_problem, "model name", mname))
                continue;
            emit_was(o, c, "  ");
            if (emit_repeated(o, mname, key, val, "  "))
                continue;
            if (t && strstr(t, ".sql"))
                dbt_config_line(o, t, key, val, to);
            fputs("  - name: ", o->f);
            emit_yaml(o->f, mname);
            fputs("\n    config:\n      ", o->f);
            emit_yaml(o->f, key);
            fputs(": ", o->f);
            emit_yaml(o->f, val);
            fputc('\n', o->f);
        }
}

void dbt_patch_write(emit_out *o, const finding *const *fs, size_t n)
{
    size_t i;
    const cJSON *c;

    fputs("# Model configs: merge into the models' properties YAML (a\n"
          "# models/*.yml file), or put the config() line into the model's .sql\n"
          "# file. Project settings (profiles.yml) are listed as comments.\n", o->f);
    dbt_models(o, fs, n);
    for (i = 0; i < n; i++)
        cJSON_ArrayForEach(c, fs[i]->changes) {
            const char *t = emit_str(c, "target");
            char mname[256], val[EMIT_VALUE_MAX];
            dbt_model(fs[i], c, mname, sizeof mname);
            if (*mname)
                continue;
            fputc('\n', o->f);
            emit_cite(o, fs[i], "");
            if (emit_refused_change(o, fs[i], c, "", val, sizeof val))
                continue;
            emit_was(o, c, "");
            fputs("# in ", o->f);
            emit_text(o->f, t ? t : "dbt_project.yml", EMIT_COMMENT_MAX);
            fputs(":\n#   ", o->f);
            emit_text(o->f, emit_str(c, "key"), EMIT_COMMENT_MAX);
            fputs(": ", o->f);
            emit_text(o->f, val, EMIT_COMMENT_MAX);
            fputc('\n', o->f);
        }
}
