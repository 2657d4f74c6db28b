/*
 * dbt_static.c - a manifest.json that no run_results.json or sources.json
 * of the inputs matched becomes a run of its own, so that the DAG can be
 * checked without a build: one node per manifest entry (models, tests,
 * seeds, snapshots, sources, exposures, ...), its parents from
 * depends_on.nodes, its manifest attrs, and no timings. The run says so:
 * metric executing = 0 (performance rules skip it), manifest_only = 1 and
 * config optipipe.static = manifest. See docs/model-dbt.md "Manifest
 * alone". A run that did not execute its models (compile, docs generate,
 * ls) gets the same nodes and parents added to its own (dbt_join.c).
 */
#include <stdio.h>
#include <string.h>

#include "dbt_internal.h"

static void run_id(const dbt_manifest *m, char *buf, size_t cap)
{
    if (m->invocation)
        snprintf(buf, cap, "manifest-%s", m->invocation);
    else if (m->has_generated)
        snprintf(buf, cap, "manifest-%lld",
                 (long long)dbt_us_to_ms(m->generated_us));
    else
        snprintf(buf, cap, "manifest-%s", m->origin ? m->origin : "unknown");
}

static int is(const dbt_mnode *n, const char *type, const char *mat)
{
    return n->resource_type && !strcmp(n->resource_type, type) &&
           (!mat || (n->materialized && !strcmp(n->materialized, mat)));
}

static void emit_node(op_builder *b, op_run *r, const dbt_manifest *m,
                      const dbt_mnode *mn, int digest)
{
    char kind[64], name[DBT_ID_MAX + 1];
    op_node *n = op_node_get(b, r, mn->id);

    if (!n)
        return;
    dbt_id_type(mn->id, kind, sizeof kind);
    dbt_id_name(mn->id, name, sizeof name);
    op_node_str(b, n, OP_F_KIND, kind);
    op_node_str(b, n, OP_F_NAME, name);
    op_node_str(b, n, OP_F_STATUS, "unknown");
    op_node_str(b, n, OP_F_RAW_STATUS, "not run");
    dbt_node_attrs(b, n, mn);
    if (digest)
        dbt_node_digest(b, n, mn);
    (void)m;
}

/* Parents from depends_on.nodes: the entries of the manifest (sources
 * and ephemeral models included, as nodes of their own). */
static void static_parents(op_builder *b, op_run *r, const dbt_manifest *m,
                           const dbt_mnode *mn)
{
    op_node *n = op_node_get(b, r, mn->id);
    size_t d, k;

    for (d = 0; n && d < mn->ndeps; d++)
        if (mn->deps[d] && op_strmap_get(&m->index, mn->deps[d], &k))
            op_node_parent(b, n, mn->deps[d]);
}

void dbt_static_nodes(op_builder *b, op_run *r, const dbt_manifest *m,
                      const op_strmap *have, int digest)
{
    size_t i, k;

    for (i = 0; i < m->n; i++) {
        const dbt_mnode *mn = &m->nodes[i];
        if (!have || !op_strmap_get(have, mn->id, &k))
            emit_node(b, r, m, mn, digest);
        static_parents(b, r, m, mn);
    }
}

int dbt_static_run(op_builder *b, const dbt_manifest *m)
{
    const char *project = m->project ? m->project : "unknown";
    char id[256], text[512];
    int64_t models = 0, views = 0, tests = 0;
    op_run *r;
    size_t i;

    run_id(m, id, sizeof id);
    if (!(r = op_run_get(b, "dbt", id)))
        return -1;
    snprintf(text, sizeof text, "%s: dbt manifest", project);
    op_run_str(b, r, OP_F_NAME, text);
    op_run_str(b, r, OP_F_STATUS, "unknown");
    op_run_str(b, r, OP_F_RAW_STATUS, "manifest");
    if (m->dbt_version)
        op_run_str(b, r, OP_F_ENGINE_VERSION, m->dbt_version);
    if (m->has_generated)
        op_run_int(b, r, OP_I_ENDED_AT, dbt_us_to_ms(m->generated_us));
    op_run_config(b, r, "optipipe.project", project);
    op_run_config(b, r, "optipipe.manifest", m->origin ? m->origin : "");
    op_run_config(b, r, "optipipe.static", "manifest");
    if (m->adapter)
        op_run_config(b, r, "optipipe.adapter", m->adapter);
    snprintf(text, sizeof text, "%s/manifest", project);
    if (m->has_generated)
        op_run_history(b, r, text, dbt_us_to_ms(m->generated_us));
    snprintf(text, sizeof text,
             "manifest only: no run_results.json or sources.json of project "
             "%.200s in the inputs; the DAG is checked without timings",
             project);
    op_run_warning(b, r, text);
    op_json_notes_emit(m->notes, b, r);
    dbt_static_nodes(b, r, m, NULL, 1);
    for (i = 0; i < m->n; i++) {
        const dbt_mnode *mn = &m->nodes[i];
        models += is(mn, "model", NULL);
        views += is(mn, "model", "view");
        tests += is(mn, "test", NULL) || is(mn, "unit_test", NULL);
    }
    op_run_metric_int(b, r, "executing", 0);
    op_run_metric_int(b, r, "manifest_only", 1);
    op_run_metric_int(b, r, "nodes_total", (int64_t)m->n);
    op_run_metric_int(b, r, "models", models);
    op_run_metric_int(b, r, "views", views);
    op_run_metric_int(b, r, "tests_total", tests);
    return op_builder_failed(b, NULL) ? -1 : 0;
}
