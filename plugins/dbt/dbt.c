/*
 * dbt.c - the dbt input plugin: detection, and dispatch of one artifact to
 * its reader by metadata.dbt_schema_version (never by file name). Reads
 * run_results.json v1-v6, manifest.json (any version with nodes and
 * depends_on) and sources.json v1-v3. See docs/dbt.md.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbt_internal.h"

enum dbt_kind { K_NONE = 0, K_RESULTS, K_MANIFEST, K_SOURCES, K_OTHER };

/* The schema URL names the artifact; other dbt artifacts (catalog,
 * semantic_manifest) are left to "not recognized". Without a schema URL in
 * the first bytes (keys reordered by a tool), the shape of a result gives
 * a weaker score. */
static int dbt_detect(const op_probe *p)
{
    if (p->is_dir || op_probe_first(p) != '{')
        return 0;
    if (op_probe_has(p, "schemas.getdbt.com/dbt/run-results/") ||
        op_probe_has(p, "schemas.getdbt.com/dbt/manifest/") ||
        op_probe_has(p, "schemas.getdbt.com/dbt/sources/"))
        return 95;
    if (op_probe_has(p, "\"dbt_schema_version\"") || op_probe_has(p, "\"$schema\"") ||
        op_probe_has(p, "\"definitions\"") || op_probe_has(p, "\"$defs\""))
        return 0; /* another dbt artifact, or a JSON Schema describing one */
    if (op_probe_has(p, "\"unique_id\"") &&
        (op_probe_has(p, "\"execution_time\"") ||
         op_probe_has(p, "\"max_loaded_at\"")))
        return 60;
    if (op_probe_has(p, "\"depends_on\"") && op_probe_has(p, "\"resource_type\"") &&
        op_probe_has(p, "\"nodes\""))
        return 50;
    return 0;
}

/* Which artifact root is: by schema URL first, by shape otherwise. */
static int classify(const cJSON *root)
{
    const char *url = dbt_jstr(dbt_jobj(root, "metadata"), "dbt_schema_version");
    const cJSON *results, *first;

    if (url) {
        if (strstr(url, "/run-results/"))
            return K_RESULTS;
        if (strstr(url, "/manifest/"))
            return K_MANIFEST;
        if (strstr(url, "/sources/"))
            return K_SOURCES;
        return K_OTHER;
    }
    if (dbt_jobj(root, "nodes") &&
        (dbt_jobj(root, "parent_map") || dbt_jobj(root, "child_map") ||
         dbt_jobj(root, "sources")))
        return K_MANIFEST;
    results = dbt_jarr(root, "results");
    first = results ? cJSON_GetArrayItem(results, 0) : NULL;
    if (first && (cJSON_GetObjectItemCaseSensitive(first, "max_loaded_at") ||
                  cJSON_GetObjectItemCaseSensitive(first, "criteria")))
        return K_SOURCES;
    if (results)
        return K_RESULTS;
    return K_NONE;
}

static int dbt_parse(op_stream *in, op_builder *b, op_error *err)
{
    const char *name = op_stream_name(in), *buf = NULL, *url;
    size_t len = 0;
    cJSON *root = NULL;
    dbt_notes *notes = NULL;
    int rc;

    rc = op_stream_read_all(in, &buf, &len, err);
    if (rc)
        return rc;
    if (len > DBT_MAX_DOC)
        return op_error_set(err, OP_ELIMIT,
                            "%s: %zu bytes is more than the %zu MiB a dbt "
                            "artifact may have", name, len, DBT_MAX_DOC >> 20);
    if ((rc = op_json_check_cost(name, len, op_json_cost(buf, len), err)))
        return rc;
    root = cJSON_ParseWithLength(buf, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= buf && at <= buf + len ? (size_t)(at - buf) : len;
        return op_error_set(err, OP_EPARSE,
                            "%s: not valid JSON near byte %zu (truncated or "
                            "not a dbt artifact)", name, off);
    }
    if (!cJSON_IsObject(root)) {
        rc = op_error_set(err, OP_EPARSE, "%s: a dbt artifact is a JSON "
                          "object; found another JSON value", name);
        goto out;
    }
    notes = calloc(1, sizeof *notes);
    if (notes)
        notes->prefix = name;
    if (!notes || op_json_tidy(root, "$", DBT_MAX_ABS, 0, op_json_note, notes)) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
        goto out;
    }
    switch (classify(root)) {
    case K_RESULTS:
        rc = dbt_read_results(root, name, notes, b, err);
        break;
    case K_MANIFEST:
        rc = dbt_read_manifest(root, name, notes, b, err);
        break;
    case K_SOURCES:
        rc = dbt_read_sources(root, name, notes, b, err);
        break;
    case K_OTHER:
        url = dbt_jstr(dbt_jobj(root, "metadata"), "dbt_schema_version");
        rc = op_error_set(err, OP_EPARSE,
                          "%s: metadata.dbt_schema_version \"%.200s\" is a "
                          "dbt artifact opti-pipe does not read (it reads "
                          "run-results, manifest and sources)", name, url);
        break;
    default:
        rc = op_error_set(err, OP_EPARSE,
                          "%s: no metadata.dbt_schema_version and neither "
                          "`results` nor `nodes`: not a dbt artifact", name);
        break;
    }
out:
    free(notes);
    cJSON_Delete(root);
    return rc;
}

const op_plugin op_plugin_dbt = {
    OP_PLUGIN_HEADER,
    .name = "dbt",
    .version = "0.1.0",
    .description = "dbt run_results.json (v1-v6), manifest.json, sources.json",
    .detect = dbt_detect,
    .parse = dbt_parse,
    .finish = dbt_finish,
};
