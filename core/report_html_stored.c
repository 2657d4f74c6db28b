/*
 * report_html_stored.c - the charts of the HTML report for a run of the
 * run store (report_html.h: html_stored_charts), for optipipe serve's run
 * page: the run and its nodes are rebuilt as a one-run model from what
 * the store keeps (times, status, metrics, attrs, distributions) and the
 * run's engine draws them with the very code the full report uses (the
 * Spark stage timeline, the dbt Gantt), so the two never differ.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "engine.h"
#include "findings.h"
#include "model.h"
#include "report.h"
#include "report_html.h"
#include "store.h"

typedef struct rebuild {
    op_builder *b;
    op_run *run;
    size_t n, max;
} rebuild;

/* The numbers of a metrics object (JSON text) as metrics of a run
 * (node NULL) or a node; an integral value stays an int. */
static void put_metrics(op_builder *b, op_run *r, op_node *n, const char *json)
{
    cJSON *o = json && strcmp(json, "{}") ? cJSON_Parse(json) : NULL;
    const cJSON *e;

    cJSON_ArrayForEach(e, o) {
        double v = e->valuedouble;
        int whole = cJSON_IsNumber(e) && isfinite(v) && v == floor(v) &&
                    fabs(v) < 9007199254740992.0;
        if (!cJSON_IsNumber(e))
            continue;
        if (n && whole)
            op_node_metric_int(b, n, e->string, (int64_t)v);
        else if (n)
            op_node_metric(b, n, e->string, v);
        else if (whole)
            op_run_metric_int(b, r, e->string, (int64_t)v);
        else
            op_run_metric(b, r, e->string, v);
    }
    cJSON_Delete(o);
}

/* The attrs (JSON text) of a node: strings as they are, numbers and
 * booleans as their text (what html_attr reads). */
static void put_attrs(op_builder *b, op_node *n, const char *json)
{
    cJSON *o = json && strcmp(json, "{}") ? cJSON_Parse(json) : NULL;
    const cJSON *e;
    char buf[40];

    cJSON_ArrayForEach(e, o) {
        if (cJSON_IsString(e)) {
            op_node_attr(b, n, e->string, e->valuestring);
        } else if (cJSON_IsBool(e)) {
            op_node_attr(b, n, e->string, cJSON_IsTrue(e) ? "true" : "false");
        } else if (cJSON_IsNumber(e)) {
            snprintf(buf, sizeof buf, "%.17g", e->valuedouble);
            op_node_attr(b, n, e->string, buf);
        }
    }
    cJSON_Delete(o);
}

/* The distributions (store_dist_text's object of objects) of a node. */
static void put_dists(op_builder *b, op_node *n, const char *json)
{
    cJSON *o = json && strcmp(json, "{}") ? cJSON_Parse(json) : NULL;
    const cJSON *e;

    cJSON_ArrayForEach(e, o) {
        static const char *const k[] = {"count", "min", "p50", "p75", "p90",
                                        "p95", "p99", "max", "mean", "sum"};
        double v[10];
        size_t i;
        op_dist d;
        for (i = 0; i < 10; i++) {
            const cJSON *x = cJSON_GetObjectItemCaseSensitive(e, k[i]);
            v[i] = cJSON_IsNumber(x) ? x->valuedouble : NAN;
        }
        d = (op_dist){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9]};
        if (d.count > 0)
            op_node_dist(b, n, e->string, &d);
    }
    cJSON_Delete(o);
}

static void put_times(op_builder *b, op_node *n, op_run *r, unsigned set,
                      int64_t started, int64_t ended, int64_t dur)
{
    if (n) {
        if (set & MSET_STARTED_AT)
            op_node_int(b, n, OP_I_STARTED_AT, started);
        if (set & MSET_ENDED_AT)
            op_node_int(b, n, OP_I_ENDED_AT, ended);
        if (set & MSET_DURATION_MS)
            op_node_int(b, n, OP_I_DURATION_MS, dur);
        return;
    }
    if (set & MSET_STARTED_AT)
        op_run_int(b, r, OP_I_STARTED_AT, started);
    if (set & MSET_ENDED_AT)
        op_run_int(b, r, OP_I_ENDED_AT, ended);
    if (set & MSET_DURATION_MS)
        op_run_int(b, r, OP_I_DURATION_MS, dur);
}

static int add_node(void *ud, const store_node *sn)
{
    rebuild *c = ud;
    op_node *n;

    if (++c->n > c->max)
        return 1;
    if (!sn->id || !(n = op_node_get(c->b, c->run, sn->id)))
        return 0;
    if (sn->kind)
        op_node_str(c->b, n, OP_F_KIND, sn->kind);
    if (sn->name)
        op_node_str(c->b, n, OP_F_NAME, sn->name);
    if (sn->status)
        op_node_str(c->b, n, OP_F_STATUS, sn->status);
    put_times(c->b, n, NULL, sn->set, sn->started_at, sn->ended_at, sn->duration_ms);
    if (sn->set & MSET_PARALLELISM)
        op_node_int(c->b, n, OP_I_PARALLELISM, sn->parallelism);
    put_metrics(c->b, NULL, n, sn->metrics_json);
    put_attrs(c->b, n, sn->attrs_json);
    put_dists(c->b, n, sn->dist_json);
    return 0;
}

int html_stored_charts(FILE *f, struct store *st, const struct store_run *r,
                       size_t max_nodes, unsigned *nfig, op_error *err)
{
    const op_engine *e = engine_find(r->source);
    model *m = NULL;
    rebuild c = {NULL, NULL, 0, max_nodes};
    results res;
    report_ctx ctx;
    hout h = {f, &ctx, 0, 1};
    int rc = 0;

    *nfig = 0;
    results_init(&res);
    if (!e || !ENGINE_HAS(e, html_charts) || !e->html_charts || !r->source || !r->run_id)
        return 0; /* an engine without charts */
    if ((int64_t)max_nodes < r->nnodes)
        return op_error_set(err, OP_ELIMIT, "run '%s' has %lld nodes, more than the %zu "
                            "charted", r->run_id, (long long)r->nnodes, max_nodes);
    if (!(m = model_new()) || !(c.b = model_builder_new(m, r->origin ? r->origin : "store"))) {
        rc = op_error_set(err, OP_ENOMEM, "out of memory");
        goto out;
    }
    if ((c.run = op_run_get(c.b, r->source, r->run_id))) {
        if (r->name)
            op_run_str(c.b, c.run, OP_F_NAME, r->name);
        if (r->status)
            op_run_str(c.b, c.run, OP_F_STATUS, r->status);
        if (r->engine_version)
            op_run_str(c.b, c.run, OP_F_ENGINE_VERSION, r->engine_version);
        put_times(c.b, NULL, c.run, r->set, r->started_at, r->ended_at, r->duration_ms);
        put_metrics(c.b, c.run, NULL, r->metrics_json);
        rc = store_each_node(st, r->pk, add_node, &c, err);
    }
    if (rc == 1)
        rc = op_error_set(err, OP_ELIMIT, "run '%s' has more than %zu nodes to chart",
                          r->run_id, max_nodes);
    if (!rc && op_builder_failed(c.b, err))
        rc = err->code ? err->code : OP_ENOMEM;
    model_builder_free(c.b);
    c.b = NULL;
    if (rc)
        goto out;
    model_freeze(m);
    if (m->nruns == 1) {
        memset(&ctx, 0, sizeof ctx);
        ctx.res = &res; /* no findings: the charts mark none */
        ctx.out = f;
        e->html_charts(&h, m->runs[0]);
        *nfig = h.nfig;
    }
    rc = ferror(f) ? OP_EIO : 0;
out:
    model_builder_free(c.b);
    model_free(m);
    results_free(&res);
    return rc;
}
