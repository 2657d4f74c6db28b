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
    /* tests without an attached_node key (manifests before v9): how their
     * model was found (docs/dbt.md "Manifest versions") */
    size_t tests_by_ref, tests_single_dep, tests_unknown;
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

/* depends_on.macros without the "macro." prefix, joined by ','; the
 * macros past DBT_CONFIG_MAX bytes are left out (the rules look for a few
 * known names, docs/rules/dbt.costly-macros.md). */
static char *macros_text(mf_ctx *c, const cJSON *node)
{
    const cJSON *ms = dbt_jarr(dbt_jobj(node, "depends_on"), "macros"), *m;
    char buf[DBT_CONFIG_MAX];
    size_t len = 0;

    buf[0] = '\0';
    cJSON_ArrayForEach(m, ms) {
        const char *id;
        size_t n;
        if (!cJSON_IsString(m))
            continue;
        id = m->valuestring;
        if (!strncmp(id, "macro.", 6))
            id += 6;
        n = strlen(id);
        if (len + n + 2 >= sizeof buf)
            continue;
        if (len)
            buf[len++] = ',';
        memcpy(buf + len, id, n + 1);
        len += n;
    }
    return len ? dbt_strdup(buf, &c->oom) : NULL;
}

/* The first ref('NAME') / ref("NAME") or source('A', 'B') named in s, as
 * the suffix a dependency's unique_id ends with (".NAME", ".A.B") in buf;
 * *is_source says which. Returns 0 when s names none. */
static int first_relation(const char *s, char *buf, size_t cap, int *is_source)
{
    const char *p;

    for (p = s; p && *p; p++) {
        int src = !strncmp(p, "source(", 7);
        const char *q;
        size_t len = 1, parts = 0;
        if (!src && strncmp(p, "ref(", 4))
            continue;
        q = p + (src ? 7 : 4);
        buf[0] = '\0';
        while (parts < (src ? 2u : 1u)) {
            const char *end;
            char quote;
            while (*q == ' ' || *q == ',')
                q++;
            quote = *q;
            if ((quote != '\'' && quote != '"') || !(end = strchr(q + 1, quote)))
                break;
            if (len + (size_t)(end - q) + 1 >= cap)
                return 0;
            buf[len - 1] = '.';
            memcpy(buf + len, q + 1, (size_t)(end - q - 1));
            len += (size_t)(end - q - 1) + 1;
            buf[len - 1] = '\0';
            q = end + 1;
            parts++;
        }
        if (parts == (src ? 2u : 1u)) {
            *is_source = src;
            return 1;
        }
    }
    return 0;
}

/* Whether id ends with suffix and is of a relation type (a source for
 * source(), else a model, seed or snapshot). */
static int dep_matches(const char *id, const char *suffix, int is_source)
{
    size_t n = strlen(id), k = strlen(suffix);

    if (n <= k || strcmp(id + n - k, suffix))
        return 0;
    return is_source ? !strncmp(id, "source.", 7)
                     : !strncmp(id, "model.", 6) || !strncmp(id, "seed.", 5) ||
                           !strncmp(id, "snapshot.", 9);
}

/* A test of a manifest before v9 has no attached_node: its model is the
 * dependency its test_metadata.kwargs.model refers to (dbt writes
 * depends_on sorted, so a relationships test's first dependency is the
 * model it points to, not the one it checks), else its only dependency.
 * Counted for the version note (version_notes). */
static void infer_attached(mf_ctx *c, dbt_mnode *n, const cJSON *node)
{
    const cJSON *kw = dbt_jobj(dbt_jobj(node, "test_metadata"), "kwargs");
    const char *model = dbt_jstr(kw, "model");
    char suffix[DBT_ID_MAX + 4];
    int is_source = 0;
    size_t d;

    if (!n->ndeps)
        return;
    if (model && strlen(model) < DBT_CONFIG_MAX &&
        first_relation(model, suffix, sizeof suffix, &is_source))
        for (d = 0; d < n->ndeps; d++)
            if (n->deps[d] && dep_matches(n->deps[d], suffix, is_source)) {
                n->attached_node = dbt_strdup(n->deps[d], &c->oom);
                c->tests_by_ref++;
                return;
            }
    if (n->ndeps == 1 && n->deps[0]) {
        n->attached_node = dbt_strdup(n->deps[0], &c->oom);
        c->tests_single_dep++;
        return;
    }
    c->tests_unknown++;
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
    n->relation_name = value_text(c, cJSON_GetObjectItemCaseSensitive(node, "relation_name"));
    n->test_name = value_text(
        c, cJSON_GetObjectItemCaseSensitive(dbt_jobj(node, "test_metadata"), "name"));
    n->tags = tags_text(c, node);
    n->macros = macros_text(c, node);
    n->checksum = value_text(
        c, cJSON_GetObjectItemCaseSensitive(dbt_jobj(node, "checksum"), "checksum"));
    read_deps(c, n, node);
    if (rt && !strcmp(rt, "test") &&
        !cJSON_GetObjectItemCaseSensitive(node, "attached_node"))
        infer_attached(c, n, node);
    if (op_strmap_put(&m->index, n->id, m->n - 1, 0, NULL))
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

/* Old manifests (v1-v9) carry no project_name: the package owning most
 * models stands in for it (ties: the first by name). */
static char *main_package(mf_ctx *c)
{
    op_strmap counts;
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
        if (!op_strmap_get(&counts, n->package, &pos)) {
            pos = nn++;
            names[pos] = n->package;
            if (op_strmap_put(&counts, n->package, pos, 0, NULL))
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
    op_strmap_free(&counts, 0);
    free(names);
    free(cnt);
    return out;
}

/* One warning for the runs of this manifest (the notes). */
static void add_note(mf_ctx *c, const char *msg)
{
    if (!c->m->notes && !(c->m->notes = calloc(1, sizeof *c->m->notes))) {
        c->oom = 1;
        return;
    }
    op_json_note(c->m->notes, msg);
}

/* What an older manifest lacks that the analysis would use, and what
 * stands in for it: said on every run of the manifest, never silently
 * (docs/dbt.md "Manifest versions"). */
static void version_notes(mf_ctx *c, const cJSON *meta, int has_project)
{
    const char *dv = dbt_jstr(meta, "dbt_version");
    int v = dbt_schema_number(dbt_jstr(meta, "dbt_schema_version"));
    char what[96], msg[OP_ERROR_MAX]; /* one note: what op_json_note keeps */

    if (v)
        snprintf(what, sizeof what, "manifest v%d (dbt %.20s)", v, dv ? dv : "?");
    else
        snprintf(what, sizeof what, "this manifest");
    if (!has_project && c->m->project) {
        snprintf(msg, sizeof msg, "%.100s: %s has no metadata.project_name "
                 "(written from manifest v10, dbt 1.6): the project is taken "
                 "as '%.100s', the package owning most models",
                 c->name, what, c->m->project);
        add_note(c, msg);
    }
    if (c->tests_by_ref + c->tests_single_dep + c->tests_unknown) {
        char how[200];
        int k = 0;
        how[0] = '\0';
        if (c->tests_by_ref)
            k += snprintf(how + k, sizeof how - (size_t)k, "%zu from the ref "
                          "in their test_metadata", c->tests_by_ref);
        if (c->tests_single_dep && k < (int)sizeof how)
            k += snprintf(how + k, sizeof how - (size_t)k, "%s%zu from their "
                          "only dependency", k ? ", " : "", c->tests_single_dep);
        if (c->tests_unknown && k < (int)sizeof how)
            snprintf(how + k, sizeof how - (size_t)k, "%s%zu unknown (several "
                     "dependencies, none named)", k ? ", " : "", c->tests_unknown);
        snprintf(msg, sizeof msg, "%.100s: %s has no attached_node on its "
                 "tests (written from manifest v9, dbt 1.5): the model a test "
                 "checks is found for %s", c->name, what, how);
        add_note(c, msg);
    }
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
    inv = dbt_jstr(meta, "adapter_type");
    c.m->adapter = inv && strlen(inv) < 64 ? dbt_strdup(inv, &c.oom) : NULL;
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
    proj = proj && *proj && strlen(proj) < 256 ? proj : NULL;
    c.m->project = proj ? dbt_strdup(proj, &c.oom) : main_package(&c);
    version_notes(&c, meta, proj != NULL);
    if (c.capped) {
        rc = op_error_set(err, OP_ELIMIT, "%s: more than %d manifest entries",
                          name, DBT_MAX_MNODES);
        goto out;
    }
    if (!c.oom && dbt_digest_manifest(c.m))
        c.oom = 1;
    if (c.oom || keep_manifest(st, c.m)) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
        goto out;
    }
    c.m = NULL;
out:
    dbt_manifest_free(c.m);
    return rc;
}
