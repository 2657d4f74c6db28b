/*
 * dbt_fresh.c - what the sources of each model held when a build ran, from
 * the sources.json (`dbt source freshness`) taken before it: dbt's
 * `source_status:fresher+` as node metrics a run store keeps. A model's
 * upstream sources are every source reachable through its ancestors in
 * the manifest (one bitset per entry, filled in topological order); its
 * sources_digest changes when any of them got new data (a newer
 * max_loaded_at), so dbt.needless-rebuilds can tell a rebuild on unchanged
 * data by freshness rather than by row counts. docs/model-dbt.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbt_internal.h"

/* A sources.json taken more than this before the build says nothing of
 * the data it read (a freshness job that failed for days). */
#define FRESH_MAX_GAP_US ((int64_t)12 * 3600 * 1000000)
/* Upstream bitsets above this many 64-bit words are not built (a
 * warning says so): 64 MiB, e.g. 10,000 entries x 50,000 sources. */
#define FRESH_MAX_WORDS ((size_t)8 << 20)


/* One source's part of a digest: its id and its max_loaded_at. The parts
 * are XORed, so the digest does not depend on manifest order. */
static uint64_t source_part(const char *id, int64_t loaded_us)
{
    unsigned char b[8];
    uint64_t h = dbt_fnv(DBT_FNV_OFFSET, id, strlen(id) + 1);
    int i;

    for (i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)loaded_us >> (8 * i));
    return dbt_fnv(h, b, sizeof b);
}

/* The start of rr (its first timed node, else its generated_at); 0 when
 * neither is known. */
static int run_start(const dbt_rrun *rr, int64_t *at)
{
    if (rr->ntimed) {
        *at = rr->t0_us;
        return 1;
    }
    if (rr->has_generated) {
        *at = rr->generated_us;
        return 1;
    }
    return 0;
}

/* The newest freshness run of m's project generated before rr started
 * and at most FRESH_MAX_GAP_US before it; NULL when none. */
static const dbt_rrun *pick(const dbt_rrun *rr, const dbt_manifest *m,
                            const dbt_state *st)
{
    const dbt_rrun *best = NULL;
    int64_t start;
    size_t i;

    if (!run_start(rr, &start))
        return NULL;
    for (i = 0; i < st->nruns; i++) {
        const dbt_rrun *f = st->runs[i];
        if (f->kind != DBT_RUN_FRESHNESS || !f->has_generated ||
            f->generated_us > start || start - f->generated_us > FRESH_MAX_GAP_US ||
            dbt_coverage(f, m) < DBT_MIN_COVERAGE)
            continue;
        if (!best || f->generated_us > best->generated_us)
            best = f;
    }
    return best;
}

typedef struct fresh_ctx {
    const dbt_manifest *m;
    size_t *src;     /* manifest position -> source number (SIZE_MAX: none) */
    size_t *src_pos; /* source number -> manifest position */
    size_t nsrc, words;
    uint64_t *bits;  /* entry i's upstream sources: bits[i*words ..) */
} fresh_ctx;

static int is_source(const dbt_mnode *n)
{
    return n->resource_type && !strcmp(n->resource_type, "source");
}

/* The entries a build rebuilds from their sources' data. */
static int builds(const dbt_mnode *n)
{
    return n->resource_type && (!strcmp(n->resource_type, "model") ||
                                !strcmp(n->resource_type, "snapshot"));
}

/* Numbers the manifest's sources and fills every entry's upstream set. */
static int upstream_sets(fresh_ctx *c)
{
    const dbt_manifest *m = c->m;
    size_t *order = NULL, i, d, k, w;

    c->src = malloc((m->n + 1) * sizeof *c->src);
    c->src_pos = malloc((m->n + 1) * sizeof *c->src_pos);
    if (!c->src || !c->src_pos)
        return OP_ENOMEM;
    for (i = 0; i < m->n; i++) {
        c->src[i] = SIZE_MAX;
        if (is_source(&m->nodes[i])) {
            c->src_pos[c->nsrc] = i;
            c->src[i] = c->nsrc++;
        }
    }
    c->words = (c->nsrc + 63) / 64;
    if (!c->nsrc || m->n > FRESH_MAX_WORDS / c->words)
        return 0;
    if (!(c->bits = calloc(m->n * c->words, sizeof *c->bits)) ||
        dbt_topo_order(m, &order))
        return OP_ENOMEM;
    for (i = 0; i < m->n; i++) {
        size_t u = order[i];
        uint64_t *mine = c->bits + u * c->words;
        const dbt_mnode *n = &m->nodes[u];
        for (d = 0; d < n->ndeps; d++) {
            if (!n->deps[d] || !op_strmap_get(&m->index, n->deps[d], &k) || k == u)
                continue;
            if (c->src[k] != SIZE_MAX)
                mine[c->src[k] / 64] |= UINT64_C(1) << (c->src[k] % 64);
            else
                for (w = 0; w < c->words; w++)
                    mine[w] |= c->bits[k * c->words + w];
        }
    }
    free(order);
    return 0;
}

/* Run node id's metrics from its upstream sources in freshness run f:
 * set only when it has sources and f knows when each was loaded. */
static void node_fresh(op_builder *b, op_run *r, const fresh_ctx *c,
                       const dbt_rrun *f, const char *id, size_t k)
{
    const uint64_t *mine = c->bits + k * c->words;
    uint64_t digest = 0;
    int64_t newest = 0;
    size_t w, nsrc = 0, fp;
    op_node *n;

    for (w = 0; w < c->words; w++) {
        size_t bit;
        for (bit = 0; bit < 64 && mine[w] >> bit; bit++) {
            const dbt_mnode *s;
            const dbt_rnode *fn;
            if (!((mine[w] >> bit) & 1))
                continue;
            s = &c->m->nodes[c->src_pos[w * 64 + bit]];
            if (!op_strmap_get(&f->index, s->id, &fp) ||
                !(fn = &f->nodes[fp])->has_loaded)
                return; /* a source without freshness: unknown */
            digest ^= source_part(s->id, fn->loaded_us);
            if (!nsrc++ || fn->loaded_us > newest)
                newest = fn->loaded_us;
        }
    }
    if (!nsrc || !(n = op_node_get(b, r, id)))
        return;
    op_node_metric_int(b, n, "sources_digest", (int64_t)(digest & DBT_DIGEST_MASK));
    op_node_metric_int(b, n, "sources_max_loaded_at_ms", dbt_us_to_ms(newest));
    op_node_metric_int(b, n, "sources_n", (int64_t)nsrc);
}

int dbt_join_freshness(op_builder *b, op_run *r, const dbt_rrun *rr,
                       const dbt_manifest *m, const dbt_state *st)
{
    const dbt_rrun *f = pick(rr, m, st);
    fresh_ctx c;
    size_t i, k;
    int rc;

    if (!f)
        return 0;
    memset(&c, 0, sizeof c);
    c.m = m;
    rc = upstream_sets(&c);
    if (!rc && c.nsrc && !c.bits) {
        char msg[300];
        snprintf(msg, sizeof msg, "%.120s: %zu entries x %zu sources are too "
                 "many to relate models to the freshness of their sources; "
                 "rebuilds are judged by row counts", m->origin ? m->origin : "manifest",
                 m->n, c.nsrc);
        op_run_warning(b, r, msg);
    }
    if (!rc && c.bits) {
        op_run_config(b, r, "optipipe.freshness", f->origin ? f->origin : f->run_id);
        for (i = 0; i < rr->n; i++)
            if (op_strmap_get(&m->index, rr->nodes[i].id, &k) && builds(&m->nodes[k]))
                node_fresh(b, r, &c, f, rr->nodes[i].id, k);
    }
    free(c.src);
    free(c.src_pos);
    free(c.bits);
    return rc;
}
