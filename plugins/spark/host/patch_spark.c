/*
 * patch_spark.c - Spark's --emit-changes writer (emit_changes.h):
 * spark-defaults.conf lines for spark.* keys, anything else as a comment
 * naming where to change it.
 */
#include <stdio.h>
#include <string.h>

#include "spark_host.h"

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

void spark_patch_write(emit_out *o, const finding *const *fs, size_t n)
{
    size_t i;
    const cJSON *c;

    fputs("# Append to spark-defaults.conf, or pass each line to spark-submit\n"
          "# as --conf key=value.\n", o->f);
    for (i = 0; i < n; i++) {
        fputc('\n', o->f);
        emit_cite(o, fs[i], "");
        cJSON_ArrayForEach(c, fs[i]->changes) {
            const char *key = emit_str(c, "key");
            char val[EMIT_VALUE_MAX];
            if (emit_refused_change(o, fs[i], c, "", val, sizeof val))
                continue;
            if (strncmp(key, "spark.", 6) != 0) {
                emit_code_change(o, c, val, "");
                continue;
            }
            if (emit_refused_if(o, fs[i], "", emit_key_problem, "key", key))
                continue;
            emit_was(o, c, "");
            if (emit_repeated(o, "app", key, val, ""))
                continue;
            fprintf(o->f, "%s ", key);
            put_properties_value(o->f, val);
            fputc('\n', o->f);
        }
    }
}
