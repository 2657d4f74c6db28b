/*
 * dbt_digest.c - the state digest of every manifest entry: what dbt's
 * `state:modified+` compares, as one number a run store can keep per node
 * and run. An entry's digest hashes its own definition (checksum of its
 * file, resource type, materialization and the configs the plugin keeps)
 * and its parents' digests, so it changes when the node or anything
 * upstream of it changed (a node on or below a cycle folds in its parents'
 * digests as far as they are known). The history rules (dbt.needless-rebuilds,
 * dbt.flaky-tests) read it through ctx.node_history. Sources have no
 * checksum in the manifest: a source's digest is its id, so a change to
 * its data is not seen here (docs/model-dbt.md "state_digest").
 */
#include <stdlib.h>
#include <string.h>

#include "dbt_internal.h"

#define FNV_OFFSET DBT_FNV_OFFSET
#define FNV_PRIME UINT64_C(1099511628211)

uint64_t dbt_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    size_t i;

    for (i = 0; i < n; i++) {
        h ^= s[i];
        h *= FNV_PRIME;
    }
    return h;
}

/* A field and a separator, so that ("ab","c") and ("a","bc") differ. */
static uint64_t fnv_str(uint64_t h, const char *s)
{
    static const char sep = '\x1f';

    if (s)
        h = dbt_fnv(h, s, strlen(s));
    return dbt_fnv(h, &sep, 1);
}

/* The same digest on every machine: bytes in little-endian order. */
static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
    unsigned char b[8];
    int i;

    for (i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    return dbt_fnv(h, b, sizeof b);
}

static uint64_t own_hash(const dbt_mnode *n)
{
    uint64_t h = FNV_OFFSET;

    h = fnv_str(h, n->resource_type);
    h = fnv_str(h, n->checksum ? n->checksum : n->id);
    h = fnv_str(h, n->materialized);
    h = fnv_str(h, n->unique_key);
    h = fnv_str(h, n->incremental_strategy);
    h = fnv_str(h, n->on_schema_change);
    h = fnv_str(h, n->full_refresh);
    return h;
}

/* Folds the digests of node u's parents into its own, in depends_on
 * order (a parent outside the manifest: its id). */
static void fold_parents(dbt_manifest *m, size_t u)
{
    dbt_mnode *n = &m->nodes[u];
    size_t d, k;

    for (d = 0; d < n->ndeps; d++) {
        uint64_t pd;
        if (!n->deps[d])
            continue;
        pd = op_strmap_get(&m->index, n->deps[d], &k) && k != u
                 ? m->nodes[k].digest
                 : fnv_str(FNV_OFFSET, n->deps[d]);
        n->digest = fnv_u64(n->digest, pd);
    }
}

int dbt_topo_order(const dbt_manifest *m, size_t **out)
{
    size_t *indeg = calloc(m->n + 1, sizeof *indeg);
    size_t *coff = calloc(m->n + 2, sizeof *coff); /* children CSR */
    size_t *kids = NULL, *queue = NULL, *fill = NULL;
    size_t i, d, k, nedges = 0, qh = 0, qt = 0;
    int rc = OP_ENOMEM;

    *out = NULL;
    if (!indeg || !coff)
        goto out;
    for (i = 0; i < m->n; i++)
        for (d = 0; d < m->nodes[i].ndeps; d++)
            if (m->nodes[i].deps[d] &&
                op_strmap_get(&m->index, m->nodes[i].deps[d], &k) && k != i) {
                indeg[i]++;
                coff[k + 1]++;
                nedges++;
            }
    for (i = 0; i < m->n; i++)
        coff[i + 1] += coff[i];
    kids = malloc((nedges + 1) * sizeof *kids);
    fill = calloc(m->n + 1, sizeof *fill);
    queue = malloc((m->n + 1) * sizeof *queue);
    if (!kids || !fill || !queue)
        goto out;
    for (i = 0; i < m->n; i++) {
        for (d = 0; d < m->nodes[i].ndeps; d++)
            if (m->nodes[i].deps[d] &&
                op_strmap_get(&m->index, m->nodes[i].deps[d], &k) && k != i)
                kids[coff[k] + fill[k]++] = i;
        if (!indeg[i])
            queue[qt++] = i;
    }
    /* Kahn's order: a node is final once all its parents are */
    while (qh < qt) {
        size_t u = queue[qh++];
        fill[u] = SIZE_MAX; /* placed */
        for (k = coff[u]; k < coff[u + 1]; k++)
            if (--indeg[kids[k]] == 0)
                queue[qt++] = kids[k];
    }
    /* on or below a cycle (hand-edited manifests, a self-reference): in
     * file order */
    for (i = 0; i < m->n; i++)
        if (fill[i] != SIZE_MAX)
            queue[qt++] = i;
    *out = queue;
    queue = NULL;
    rc = 0;
out:
    free(indeg);
    free(coff);
    free(kids);
    free(fill);
    free(queue);
    return rc;
}

int dbt_digest_manifest(dbt_manifest *m)
{
    size_t *order, i;

    if (dbt_topo_order(m, &order))
        return OP_ENOMEM;
    for (i = 0; i < m->n; i++)
        m->nodes[i].digest = own_hash(&m->nodes[i]);
    /* a node on or below a cycle folds in its parents' digests as far as
     * they are known, so a change above the cycle still shows below it */
    for (i = 0; i < m->n; i++)
        fold_parents(m, order[i]);
    free(order);
    return 0;
}
