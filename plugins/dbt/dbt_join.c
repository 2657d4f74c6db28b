/*
 * dbt_join.c - the dbt plugin's finish(): everything that needs more than
 * one artifact. Each run is joined to a manifest (same invocation_id, else
 * the manifest of the same project closest in generated_at), which gives
 * its nodes parents (through ephemeral models), materializations, files
 * and tags, and the run its critical path and ready-waits. Then every run
 * gets its history key (project + command) so that nightly runs of one
 * project form a history. The slot is freed whatever happens.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optipipe/grow.h>

#include "dbt_internal.h"

/* Coverage is estimated on at most this many of the run's ids (evenly
 * spaced), so many runs × many manifests stays cheap. */
#define COVERAGE_SAMPLE 256

typedef struct join_ctx {
    op_builder *b;
    op_run *r;
    dbt_rrun *rr;
    const dbt_manifest *m;
    size_t *poff;  /* parents of run node i: par[poff[i] .. poff[i+1]) */
    size_t *par;   /* positions in rr->nodes */
    size_t npar, parcap;
    size_t *rmark; /* run node j: stamp of the node that last added it */
    size_t *mmark; /* manifest node k: stamp of the last visit */
    int exact;     /* the manifest is the run's own invocation's */
    int oom;
} join_ctx;

/* --- choosing the manifest ---------------------------------------------------- */

double dbt_coverage(const dbt_rrun *r, const dbt_manifest *m)
{
    size_t i, hit = 0, pos, step, n = 0;

    if (!r->n)
        return 0;
    step = r->n > COVERAGE_SAMPLE ? r->n / COVERAGE_SAMPLE : 1;
    for (i = 0; i < r->n; i += step, n++)
        hit += op_strmap_get(&m->index, r->nodes[i].id, &pos);
    return (double)hit / (double)n;
}

static int64_t abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* Same invocation first; else the best-covering manifest, the closest in
 * generated_at among those covering DBT_MIN_COVERAGE. */
static dbt_manifest *choose(dbt_state *st, const dbt_rrun *r, int *exact)
{
    dbt_manifest *best = NULL;
    int64_t best_gap = 0;
    size_t i;

    *exact = 0;
    for (i = 0; i < st->nmanifests; i++) {
        dbt_manifest *m = st->manifests[i];
        if (m->invocation && !strcmp(m->invocation, r->run_id)) {
            *exact = 1;
            return m;
        }
    }
    for (i = 0; i < st->nmanifests; i++) {
        dbt_manifest *m = st->manifests[i];
        int64_t gap;
        if (dbt_coverage(r, m) < DBT_MIN_COVERAGE)
            continue;
        gap = (m->has_generated && r->has_generated)
                  ? abs64(m->generated_us - r->generated_us)
                  : INT64_MAX;
        if (!best || gap < best_gap) {
            best = m;
            best_gap = gap;
        }
    }
    return best;
}

/* --- parents -------------------------------------------------------------------- */

static void push_parent(join_ctx *c, size_t j)
{
    if (OP_GROW(c->par, c->parcap, c->npar + 1, 256)) {
        c->oom = 1;
        return;
    }
    c->par[c->npar++] = j;
}

static int is_ephemeral(const dbt_mnode *n)
{
    return n->materialized && !strcmp(n->materialized, "ephemeral");
}

/* Adds the in-run parents of manifest node mn to run node i (stamp i+1),
 * walking through ephemeral models, which never appear in run_results. */
static void collect(join_ctx *c, size_t i, const dbt_mnode *mn, int depth)
{
    size_t d, j, k;

    for (d = 0; d < mn->ndeps && !c->oom; d++) {
        const char *dep = mn->deps[d];
        if (!dep)
            continue;
        if (op_strmap_get(&c->rr->index, dep, &j)) {
            if (j != i && c->rmark[j] != i + 1) {
                c->rmark[j] = i + 1;
                push_parent(c, j);
            }
            continue;
        }
        if (depth >= DBT_MAX_EPHEMERAL_DEPTH ||
            !op_strmap_get(&c->m->index, dep, &k) || c->mmark[k] == i + 1 ||
            !is_ephemeral(&c->m->nodes[k]))
            continue;
        c->mmark[k] = i + 1;
        collect(c, i, &c->m->nodes[k], depth + 1);
    }
}

void dbt_node_attrs(op_builder *b, op_node *n, const dbt_mnode *mn)
{
    static const struct {
        size_t off;
        const char *key;
    } fields[] = {
        {offsetof(dbt_mnode, materialized), "materialized"},
        {offsetof(dbt_mnode, file), "file"},
        {offsetof(dbt_mnode, tags), "tags"},
        {offsetof(dbt_mnode, package), "package"},
        {offsetof(dbt_mnode, unique_key), "unique_key"},
        {offsetof(dbt_mnode, incremental_strategy), "incremental_strategy"},
        {offsetof(dbt_mnode, full_refresh), "full_refresh"},
        {offsetof(dbt_mnode, attached_node), "attached_node"},
        {offsetof(dbt_mnode, test_name), "test_name"},
        {offsetof(dbt_mnode, severity), "severity"},
        {offsetof(dbt_mnode, on_schema_change), "on_schema_change"},
        {offsetof(dbt_mnode, relation_name), "relation_name"},
        {offsetof(dbt_mnode, checksum), "checksum"},
        {offsetof(dbt_mnode, macros), "macros"},
    };
    size_t f;

    for (f = 0; f < sizeof fields / sizeof *fields; f++) {
        const char *v = *(char *const *)((const char *)mn + fields[f].off);
        if (v && *v)
            op_node_attr(b, n, fields[f].key, v);
    }
}

void dbt_node_digest(op_builder *b, op_node *n, const dbt_mnode *mn)
{
    op_node_metric_int(b, n, "state_digest",
                       (int64_t)(mn->digest & DBT_DIGEST_MASK));
}

/* Parents and manifest attributes of every node of the run. */
static void join_nodes(join_ctx *c)
{
    size_t i, k, p;

    for (i = 0; i < c->rr->n && !c->oom; i++) {
        const dbt_rnode *rn = &c->rr->nodes[i];
        op_node *n;

        c->poff[i] = c->npar;
        if (!op_strmap_get(&c->m->index, rn->id, &k))
            continue;
        n = op_node_get(c->b, c->r, rn->id);
        if (!n)
            continue;
        dbt_node_attrs(c->b, n, &c->m->nodes[k]);
        /* the state of another invocation is not this run's */
        if (c->exact)
            dbt_node_digest(c->b, n, &c->m->nodes[k]);
        if (c->rr->executing) /* else: the manifest's parents, below */
            collect(c, i, &c->m->nodes[k], 0);
        for (p = c->poff[i]; p < c->npar; p++)
            op_node_parent(c->b, n, c->rr->nodes[c->par[p]].id);
    }
    c->poff[c->rr->n] = c->npar;
}

/* --- critical path and ready-waits ---------------------------------------------- */

typedef struct cp_state {
    size_t *order;   /* timed node positions sorted by (start, end) */
    size_t *rank;    /* position -> index in order (SIZE_MAX: untimed) */
    int64_t *dist;   /* longest chain ending at the node, microseconds */
    size_t *pred;    /* previous node on that chain (SIZE_MAX: none) */
} cp_state;

typedef struct sort_key {
    int64_t start, end;
    size_t pos;
} sort_key;

static int key_cmp(const void *a, const void *b)
{
    const sort_key *x = a, *y = b;

    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->pos < y->pos ? -1 : 1;
}

/* Timed nodes in start order (a topological order of scheduling edges). */
static int sort_timed(const dbt_rrun *r, size_t *order, size_t nt)
{
    sort_key *k = malloc((nt + 1) * sizeof *k);
    size_t i, n = 0;

    if (!k)
        return OP_ENOMEM;
    for (i = 0; i < r->n; i++)
        if (r->nodes[i].timed)
            k[n++] = (sort_key){r->nodes[i].start_us, r->nodes[i].end_us, i};
    qsort(k, n, sizeof *k, key_cmp);
    for (i = 0; i < n && i < nt; i++)
        order[i] = k[i].pos;
    free(k);
    return 0;
}

/* A parent edge the scheduler honoured: the parent ended before the child
 * started. dbt build runs unit tests before the model they depend on in
 * the manifest; such edges are dependencies but not scheduling order. */
static int sched_edge(const dbt_rrun *r, const cp_state *s, size_t j, size_t i)
{
    return r->nodes[j].timed && r->nodes[j].end_us <= r->nodes[i].start_us &&
           s->rank[j] < s->rank[i];
}

static void emit_path(join_ctx *c, const cp_state *s, size_t last,
                      int64_t cp_us)
{
    const dbt_rrun *r = c->rr;
    size_t path[4096], np = 0, i;

    for (i = last; i != SIZE_MAX && np < sizeof path / sizeof *path;
         i = s->pred[i])
        path[np++] = i;
    op_run_metric(c->b, c->r, "critical_path_ms", cp_us / 1000.0);
    op_run_metric_int(c->b, c->r, "critical_path_nodes", (int64_t)np);
    if (r->span_us > 0)
        op_run_metric(c->b, c->r, "critical_path_ratio",
                      (double)cp_us / (double)r->span_us);
    while (np--) {
        const dbt_rnode *n = &r->nodes[path[np]];
        op_record *rec = op_series_append(c->b, c->r, "critical_path");
        op_node *node = op_node_get(c->b, c->r, n->id);
        char name[512];

        dbt_id_name(n->id, name, sizeof name);
        if (!rec || !node)
            continue;
        op_record_str(c->b, rec, "node", n->id);
        op_record_str(c->b, rec, "name", name);
        op_record_num(c->b, rec, "duration_ms", (n->end_us - n->start_us) / 1000.0);
        op_record_num(c->b, rec, "start_offset_ms", (n->start_us - r->t0_us) / 1000.0);
        op_node_attr(c->b, node, "critical_path", "true");
    }
}

static void ready_waits(join_ctx *c, const cp_state *s)
{
    const dbt_rrun *r = c->rr;
    size_t i, p, nw = 0;
    int64_t sum = 0, maxw = 0;
    op_node *node;

    for (i = 0; i < r->n; i++) {
        const dbt_rnode *n = &r->nodes[i];
        int64_t ready = r->t0_us, w;
        if (!n->timed || n->main_thread)
            continue;
        for (p = c->poff[i]; p < c->poff[i + 1]; p++) {
            size_t j = c->par[p];
            if (sched_edge(r, s, j, i) && r->nodes[j].end_us > ready)
                ready = r->nodes[j].end_us;
        }
        w = n->start_us - ready;
        if (w < 0)
            w = 0;
        if ((node = op_node_get(c->b, c->r, n->id)))
            op_node_metric(c->b, node, "ready_wait_ms", w / 1000.0);
        sum += w;
        if (w > maxw)
            maxw = w;
        nw++;
    }
    if (nw) {
        op_run_metric(c->b, c->r, "mean_ready_wait_ms", (double)sum / nw / 1000.0);
        op_run_metric(c->b, c->r, "max_ready_wait_ms", maxw / 1000.0);
    }
}

/* Longest chain by node duration over scheduling edges (docs/dbt.md,
 * "Threads and utilization"), the ready-wait of every worker node, and the
 * lower bound of the span: max(critical path, busy / threads). */
static void critical_path(join_ctx *c)
{
    const dbt_rrun *r = c->rr;
    cp_state s;
    size_t i, p, nt = 0, last = SIZE_MAX;
    int64_t best = -1;

    if (!r->ntimed)
        return;
    s.order = malloc(r->n * sizeof *s.order);
    s.rank = malloc(r->n * sizeof *s.rank);
    s.dist = malloc(r->n * sizeof *s.dist);
    s.pred = malloc(r->n * sizeof *s.pred);
    if (!s.order || !s.rank || !s.dist || !s.pred) {
        c->oom = 1;
        goto out;
    }
    for (i = 0; i < r->n; i++) {
        s.rank[i] = SIZE_MAX;
        s.pred[i] = SIZE_MAX;
        s.dist[i] = 0;
        nt += r->nodes[i].timed;
    }
    if (sort_timed(r, s.order, nt)) {
        c->oom = 1;
        goto out;
    }
    for (i = 0; i < nt; i++)
        s.rank[s.order[i]] = i;
    for (i = 0; i < nt; i++) {
        size_t u = s.order[i];
        int64_t up = 0;
        for (p = c->poff[u]; p < c->poff[u + 1]; p++) {
            size_t j = c->par[p];
            if (sched_edge(r, &s, j, u) && s.dist[j] > up) {
                up = s.dist[j];
                s.pred[u] = j;
            }
        }
        s.dist[u] = up + (r->nodes[u].end_us - r->nodes[u].start_us);
        if (s.dist[u] > best) {
            best = s.dist[u];
            last = u;
        }
    }
    emit_path(c, &s, last, best);
    ready_waits(c, &s);
    if (r->threads > 0) {
        double by_threads = (double)r->busy_us / r->threads;
        double lb = (double)best > by_threads ? (double)best : by_threads;
        op_run_metric(c->b, c->r, "span_lower_bound_ms", lb / 1000.0);
    }
out:
    free(s.order);
    free(s.rank);
    free(s.dist);
    free(s.pred);
}

static int join_run(op_builder *b, op_run *r, dbt_rrun *rr,
                    const dbt_manifest *m, int exact, const dbt_state *st)
{
    join_ctx c;

    memset(&c, 0, sizeof c);
    c.exact = exact;
    c.b = b;
    c.r = r;
    c.rr = rr;
    c.m = m;
    c.poff = calloc(rr->n + 1, sizeof *c.poff);
    c.rmark = calloc(rr->n + 1, sizeof *c.rmark);
    c.mmark = calloc(m->n + 1, sizeof *c.mmark);
    if (!c.poff || !c.rmark || !c.mmark)
        c.oom = 1;
    if (!c.oom)
        join_nodes(&c);
    if (!c.oom && rr->kind == DBT_RUN_RESULTS && rr->executing)
        critical_path(&c);
    if (!c.oom && rr->kind == DBT_RUN_RESULTS && rr->executing &&
        dbt_join_freshness(b, r, rr, m, st))
        c.oom = 1;
    /* compile, docs generate, ls: nothing ran, so the DAG is checked as a
     * manifest alone would be, beside what the run measured */
    if (!c.oom && rr->kind == DBT_RUN_RESULTS && !rr->executing) {
        dbt_static_nodes(b, r, m, &rr->index, exact);
        op_run_metric_int(b, r, "static_dag", 1);
    }
    free(c.poff);
    free(c.par);
    free(c.rmark);
    free(c.mmark);
    return c.oom ? OP_ENOMEM : 0;
}

/* --- history keys ----------------------------------------------------------------- */

/* Whether `pkg` is one of the '+'-separated names of list. */
static int has_package(const char *list, const char *pkg)
{
    size_t n = strlen(pkg);
    const char *p = list;

    while (p && *p) {
        const char *e = strchr(p, '+');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, pkg, n))
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* The project of a run no manifest joined (docs/dbt.md "History"): a run
 * with the same packages that has one, else the only manifest project
 * among its packages, else args.project_dir's name when it is one of its
 * packages, else its only package, else the package list. */
static const char *infer_project(dbt_state *st, const char **proj, size_t i)
{
    const dbt_rrun *r = st->runs[i];
    const char *found = NULL;
    size_t j;

    for (j = 0; j < st->nruns; j++)
        if (proj[j] && st->runs[j]->packages && r->packages &&
            !strcmp(st->runs[j]->packages, r->packages))
            return proj[j];
    for (j = 0; j < st->nmanifests; j++) {
        const char *p = st->manifests[j]->project;
        if (!p || !r->packages || !has_package(r->packages, p))
            continue;
        if (found && strcmp(found, p))
            return r->packages;
        found = p;
    }
    if (found)
        return found;
    if (r->project_dir)
        return r->project_dir;
    return r->packages && *r->packages ? r->packages : "unknown";
}

static void set_identity(op_builder *b, op_run *r, const dbt_rrun *rr,
                         const char *project)
{
    char key[512], name[512], job[1100];

    snprintf(key, sizeof key, "%s%s%s", project, rr->which ? "/" : "",
             rr->which ? rr->which : "");
    snprintf(job, sizeof job, "%s%s%s", key, rr->select ? " -s " : "",
             rr->select ? rr->select : "");
    op_run_job(b, r, job);
    snprintf(name, sizeof name, "%s: dbt %s", project,
             rr->which ? rr->which : "run");
    op_run_str(b, r, OP_F_NAME, name);
    op_run_config(b, r, "optipipe.project", project);
    if (rr->has_generated)
        op_run_history(b, r, key, dbt_us_to_ms(rr->generated_us));
}

/* --- finish ---------------------------------------------------------------------- */

/* A manifest no run_results.json or sources.json matched is a run of its
 * own: the DAG without timings (dbt_static.c). */
static int report_unused(op_builder *b, dbt_state *st, op_error *err)
{
    size_t i;

    for (i = 0; i < st->nmanifests; i++)
        if (!st->manifests[i]->used &&
            dbt_static_run(b, st->manifests[i]))
            return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                                st->manifests[i]->origin);
    if (st->dropped_manifests)
        return op_error_set(err, OP_ELIMIT, "more than %d dbt manifests; %d "
                            "were not used", DBT_MAX_MANIFESTS,
                            st->dropped_manifests);
    return 0;
}

int dbt_finish(op_builder *b, op_error *err)
{
    void **slot = op_plugin_slot(b);
    dbt_state *st = slot ? *slot : NULL;
    const char **proj = NULL;
    size_t i;
    int rc = 0;

    if (!st)
        return 0;
    proj = calloc(st->nruns + 1, sizeof *proj);
    if (!proj) {
        rc = op_error_set(err, OP_ENOMEM, "dbt: out of memory in finish");
        goto out;
    }
    for (i = 0; i < st->nruns && !rc; i++) {
        dbt_rrun *rr = st->runs[i];
        op_run *r = op_run_find(b, "dbt", rr->run_id);
        int exact;
        dbt_manifest *m = choose(st, rr, &exact);

        if (r && !m && rr->kind == DBT_RUN_RESULTS && !rr->executing)
            op_run_warning(b, r, "this command did not execute models (its "
                           "timings measure compilation only); add the "
                           "manifest.json of the same invocation to check "
                           "the DAG without timings");
        if (!r || !m)
            continue;
        m->used = 1;
        op_json_notes_emit(m->notes, b, r);
        proj[i] = m->project;
        op_run_config(b, r, "optipipe.manifest", m->origin ? m->origin : "");
        op_run_config(b, r, "optipipe.manifest_match",
                      exact ? "invocation" : "closest");
        if (m->adapter)
            op_run_config(b, r, "optipipe.adapter", m->adapter);
        if (join_run(b, r, rr, m, exact, st))
            rc = op_error_set(err, OP_ENOMEM, "dbt: out of memory joining %s",
                              rr->origin);
    }
    for (i = 0; i < st->nruns && !rc; i++) {
        op_run *r = op_run_find(b, "dbt", st->runs[i]->run_id);
        if (r)
            set_identity(b, r, st->runs[i],
                         proj[i] ? proj[i] : infer_project(st, proj, i));
    }
    if (!rc)
        rc = report_unused(b, st, err);
out:
    free(proj);
    dbt_state_free(st);
    if (slot)
        *slot = NULL;
    return rc;
}
