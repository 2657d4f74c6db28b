/*
 * dbt_manifest.c - manifest.json reduced to what the joins need: for each
 * entry of `nodes`, `sources`, `exposures` and `unit_tests` its
 * depends_on.nodes, resource type, materialization, file, tags, package and
 * a few configs the rules use. The rest (macros, docs, compiled SQL) is
 * never copied. Kept in the plugin slot until finish() (dbt_join.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optipipe/grow.h>

#include "dbt_internal.h"

typedef struct mf_ctx {
    dbt_manifest *m;
    const char *name;
    int oom;
    int capped;
} mf_ctx;

/* A config value as text: strings as they are, booleans as true/false,
 * lists and objects as compact JSON (bounded). */
static char *value_text(mf_ctx *c, const cJSON *v)
{
    char *s;

    if (cJSON_IsString(v))
        return strlen(v->valuestring) < DBT_CONFIG_MAX
                   ? dbt_strdup(v->valuestring, &c->oom)
                   : NULL;
    if (cJSON_IsBool(v))
        return dbt_strdup(cJSON_IsTrue(v) ? "true" : "false", &c->oom);
    if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
        return NULL;
    s = cJSON_PrintUnformatted(v);
    if (!s) {
        c->oom = 1;
        return NULL;
    }
    if (strlen(s) >= DBT_CONFIG_MAX) {
        cJSON_free(s);
        return NULL;
    }
    {
        char *copy = dbt_strdup(s, &c->oom);
        cJSON_free(s);
        return copy;
    }
}

/* Tags joined by ',' (node.tags, else config.tags). */
static char *tags_text(mf_ctx *c, const cJSON *node)
{
    const cJSON *tags = dbt_jarr(node, "tags"), *t;
    char buf[DBT_CONFIG_MAX];
    size_t len = 0;

    if (!tags || !cJSON_GetArraySize(tags))
        tags = dbt_jarr(dbt_jobj(node, "config"), "tags");
    if (!tags || !cJSON_GetArraySize(tags))
        return NULL;
    buf[0] = '\0';
    cJSON_ArrayForEach(t, tags) {
        size_t n;
        if (!cJSON_IsString(t))
            continue;
        n = strlen(t->valuestring);
        if (len + n + 2 >= sizeof buf)
            break;
        if (len)
            buf[len++] = ',';
        memcpy(buf + len, t->valuestring, n + 1);
        len += n;
    }
    return len ? dbt_strdup(buf, &c->oom) : NULL;
}

static void read_deps(mf_ctx *c, dbt_mnode *n, const cJSON *node)
{
    const cJSON *deps = dbt_jarr(dbt_jobj(node, "depends_on"), "nodes"), *d;
    size_t cnt, i = 0;

    if (!deps || !(cnt = (size_t)cJSON_GetArraySize(deps)))
        return;
    if (cnt > DBT_MAX_DEPS)
        cnt = DBT_MAX_DEPS;
    n->deps = calloc(cnt, sizeof *n->deps);
    if (!n->deps) {
        c->oom = 1;
        return;
    }
    cJSON_ArrayForEach(d, deps) {
        if (i == cnt)
            break;
        if (cJSON_IsString(d) && strlen(d->valuestring) <= DBT_ID_MAX)
            n->deps[i++] = dbt_strdup(d->valuestring, &c->oom);
    }
    n->ndeps = i;
}

static void read_entry(mf_ctx *c, const cJSON *node)
{
    const char *id = node->string;
    const cJSON *cfg = dbt_jobj(node, "config");
    const char *rt = dbt_jstr(node, "resource_type");
    dbt_manifest *m = c->m;
    dbt_mnode *n;

    if (!cJSON_IsObject(node) || !id || !*id || strlen(id) > DBT_ID_MAX)
        return;
    if (m->n >= DBT_MAX_MNODES) {
        c->capped = 1;
        return;
    }
    if (OP_GROW(m->nodes, m->cap, m->n + 1, 256)) {
        c->oom = 1;
        return;
    }
    n = &m->nodes[m->n];
    memset(n, 0, sizeof *n);
    n->id = dbt_strdup(id, &c->oom);
    if (!n->id)
        return;
    m->n++;
    n->resource_type = dbt_strdup(rt, &c->oom);
    n->name = value_text(c, cJSON_GetObjectItemCaseSensitive(node, "name"));
    n->package = value_text(c, cJSON_GetObjectItemCaseSensitive(node, "package_name"));
    n->file = value_text(c, cJSON_GetObjectItemCaseSensitive(node, "original_file_path"));
    n->materialized = value_text(c, cJSON_GetObjectItemCaseSensitive(cfg, "materialized"));
    n->unique_key = value_text(c, cJSON_GetObjectItemCaseSensitive(cfg, "unique_key"));
    n->incremental_strategy =
        value_text(c, cJSON_GetObjectItemCaseSensitive(cfg, "incremental_strategy"));
    n->full_refresh = value_text(c, cJSON_GetObjectItemCaseSensitive(cfg, "full_refresh"));
    n->severity = value_text(c, cJSON_GetObjectItemCaseSensitive(cfg, "severity"));
    n->on_schema_change =
        value_text(c, cJSON_GetObjectItemCaseSensitive(cfg, "on_schema_change"));
    n->attached_node = value_text(c, cJSON_GetObjectItemCaseSensitive(node, "attached_node"));
    n->test_name = value_text(
        c, cJSON_GetObjectItemCaseSensitive(dbt_jobj(node, "test_metadata"), "name"));
    n->tags = tags_text(c, node);
    read_deps(c, n, node);
    if (dbt_map_put(&m->index, n->id, m->n - 1))
        c->oom = 1;
}

static void read_section(mf_ctx *c, const cJSON *root, const char *key)
{
    const cJSON *sec = dbt_jobj(root, key), *node;

    cJSON_ArrayForEach(node, sec) {
        if (c->oom || c->capped)
            return;
        read_entry(c, node);
    }
}

/* Old manifests (v1-v10) carry no project_name: the package owning most
 * models stands in for it (ties: the first by name). */
static char *main_package(mf_ctx *c)
{
    dbt_map counts;
    const char **names = NULL;
    size_t *cnt = NULL, nn = 0, i, best = 0, pos;
    char *out = NULL;

    memset(&counts, 0, sizeof counts);
    names = calloc(c->m->n + 1, sizeof *names);
    cnt = calloc(c->m->n + 1, sizeof *cnt);
    if (!names || !cnt)
        goto out;
    for (i = 0; i < c->m->n; i++) {
        const dbt_mnode *n = &c->m->nodes[i];
        if (!n->package || !n->resource_type || strcmp(n->resource_type, "model"))
            continue;
        if (!dbt_map_get(&counts, n->package, &pos)) {
            pos = nn++;
            names[pos] = n->package;
            if (dbt_map_put(&counts, n->package, pos))
                goto out;
        }
        cnt[pos]++;
    }
    for (i = 1; i < nn; i++)
        if (cnt[i] > cnt[best] ||
            (cnt[i] == cnt[best] && strcmp(names[i], names[best]) < 0))
            best = i;
    if (nn)
        out = dbt_strdup(names[best], &c->oom);
out:
    dbt_map_free(&counts);
    free(names);
    free(cnt);
    return out;
}

static int keep_manifest(dbt_state *st, dbt_manifest *m)
{
    if (st->nmanifests >= DBT_MAX_MANIFESTS) {
        st->dropped_manifests++;
        dbt_manifest_free(m);
        return 0;
    }
    if (OP_GROW(st->manifests, st->manifests_cap, st->nmanifests + 1, 4))
        return OP_ENOMEM;
    st->manifests[st->nmanifests++] = m;
    return 0;
}

int dbt_read_manifest(const cJSON *root, const char *name,
                      const dbt_notes *notes, op_builder *b, op_error *err)
{
    const cJSON *meta = dbt_jobj(root, "metadata");
    dbt_state *st = dbt_state_get(b);
    mf_ctx c;
    const char *proj, *inv;
    int rc = 0;

    memset(&c, 0, sizeof c);
    c.name = name;
    if (!st || !(c.m = calloc(1, sizeof *c.m)))
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
    if (!dbt_jobj(root, "nodes")) {
        rc = op_error_set(err, OP_EPARSE, "%s: manifest without a `nodes` "
                          "object", name);
        goto out;
    }
    inv = dbt_jstr(meta, "invocation_id");
    c.m->invocation = inv && strlen(inv) < 128 ? dbt_strdup(inv, &c.oom) : NULL;
    c.m->origin = dbt_strdup(name, &c.oom);
    inv = dbt_jstr(meta, "dbt_version");
    c.m->dbt_version = inv && strlen(inv) < 64 ? dbt_strdup(inv, &c.oom) : NULL;
    if (notes && notes->n && !(c.m->notes = malloc(sizeof *notes)))
        c.oom = 1;
    else if (c.m->notes) {
        memcpy(c.m->notes, notes, sizeof *notes);
        c.m->notes->prefix = NULL; /* borrowed from the stream */
    }
    c.m->has_generated =
        dbt_parse_time(dbt_jstr(meta, "generated_at"), &c.m->generated_us);
    read_section(&c, root, "nodes");
    read_section(&c, root, "sources");
    read_section(&c, root, "exposures");
    read_section(&c, root, "unit_tests");
    proj = dbt_jstr(meta, "project_name");
    c.m->project = proj && *proj && strlen(proj) < 256 ? dbt_strdup(proj, &c.oom)
                                                       : main_package(&c);
    if (c.capped) {
        rc = op_error_set(err, OP_ELIMIT, "%s: more than %d manifest entries",
                          name, DBT_MAX_MNODES);
        goto out;
    }
    if (c.oom || keep_manifest(st, c.m)) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
        goto out;
    }
    c.m = NULL;
out:
    dbt_manifest_free(c.m);
    return rc;
}
