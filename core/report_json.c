/*
 * report_json.c - the JSON report (schema 1; documented in
 * docs/json-output.md). Machine-facing: stable key order, exact integers.
 */
#include "decision_merge.h"
#include "jsonw.h"
#include "model_json.h"
#include "report.h"
#include "report_util.h"

static void inputs(jw *w, const analysis *an)
{
    size_t i, j;

    jw_key(w, "inputs");
    jw_arr(w);
    for (i = 0; i < an->ninputs; i++) {
        const input_rec *in = &an->inputs[i];
        jw_obj(w);
        jw_key(w, "path");
        jw_str(w, in->path);
        jw_key(w, "plugin");
        jw_str(w, in->plugin);
        jw_key(w, "runs");
        jw_arr(w);
        for (j = 0; j < an->m->nruns; j++)
            if (analysis_run_from(an->m->runs[j], in))
                jw_str(w, an->m->runs[j]->id);
        jw_arr_end(w);
        jw_key(w, "warnings");
        jw_arr(w);
        for (j = 0; j < in->nwarnings; j++)
            jw_str(w, in->warnings[j]);
        jw_arr_end(w);
        if (in->skipped) { /* no plugin recognized it: not an input */
            jw_key(w, "skipped");
            jw_bool(w, 1);
        }
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

static void runs(jw *w, const model *m)
{
    size_t i;

    jw_key(w, "runs");
    jw_arr(w);
    for (i = 0; i < m->nruns; i++) {
        const struct op_run *r = m->runs[i];
        jw_obj(w);
        jw_key(w, "source");
        jw_str(w, r->source);
        jw_key(w, "id");
        jw_str(w, r->id);
        jw_key(w, "name");
        jw_str(w, r->name ? r->name : r->id);
        jw_key(w, "status");
        jw_str(w, r->status ? r->status : "unknown");
        jw_key(w, "duration_ms");
        if (r->set & MSET_DURATION_MS)
            jw_int(w, r->duration_ms);
        else
            jw_null(w);
        if (r->attrs.n) /* platform, accelerator, attempts (model.md) */
            model_json_map(w, "attrs", &r->attrs);
        jw_key(w, "warnings");
        jw_arr(w);
        for (size_t j = 0; j < r->nwarnings; j++)
            jw_str(w, r->warnings[j]);
        jw_arr_end(w);
        if (r->superseded) {
            jw_key(w, "superseded");
            jw_bool(w, 1);
        }
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

static void finding_obj(jw *w, const finding *f, const char *currency)
{
    jw_obj(w);
    jw_key(w, "rule");
    jw_str(w, f->rule);
    jw_key(w, "severity");
    jw_str(w, severity_name(f->sev));
    jw_key(w, "source");
    jw_str(w, f->source);
    jw_key(w, "run");
    jw_str(w, f->run_id);
    jw_key(w, "node");
    jw_str(w, f->node_id);
    jw_key(w, "node_name");
    jw_str(w, f->node_name);
    jw_key(w, "title");
    jw_str(w, f->title);
    jw_key(w, "message");
    jw_str(w, f->message);
    jw_key(w, "recommendation");
    jw_str(w, f->recommendation);
    jw_key(w, "evidence");
    jw_cjson(w, f->evidence);
    jw_key(w, "changes");
    jw_cjson(w, f->changes);
    if (f->impact_ms >= 0) {
        jw_key(w, "impact");
        jw_obj(w);
        jw_key(w, "time_saved_ms");
        jw_num(w, f->impact_ms);
        if (f->savings_basis) { /* only with the config's costs */
            jw_key(w, "estimated_savings");
            jw_num(w, f->savings);
            jw_key(w, "currency");
            jw_str(w, currency ? currency : "USD");
            jw_key(w, "cost_basis");
            jw_str(w, f->savings_basis);
        }
        jw_obj_end(w);
    }
    jw_key(w, "fingerprint");
    jw_str(w, f->fingerprint);
    if (f->suppressed) {
        jw_key(w, "suppressed");
        jw_bool(w, 1);
    }
    jw_obj_end(w);
}

/* The decisions file against the run store, when they differ (added
 * within schema 1; absent when there is no conflict). */
static void conflicts(jw *w, const decision_conflicts *dc)
{
    size_t i;

    if (!dc || !dc->n)
        return;
    jw_key(w, "decision_conflicts");
    jw_arr(w);
    for (i = 0; i < dc->n; i++) {
        const decision_conflict *c = &dc->c[i];
        jw_obj(w);
        jw_key(w, "fingerprint");
        jw_str(w, c->file.fingerprint);
        jw_key(w, "rule");
        jw_str(w, c->rule);
        jw_key(w, "winner");
        jw_str(w, c->store_won ? "store" : "file");
        jw_key(w, "file");
        jw_obj(w);
        jw_key(w, "status");
        jw_str(w, decision_status_name(c->file.status));
        jw_key(w, "comment");
        jw_str(w, c->file.reason);
        jw_key(w, "decided_at");
        jw_str(w, c->file.decided_at && *c->file.decided_at
                      ? c->file.decided_at : NULL);
        jw_obj_end(w);
        jw_key(w, "store");
        jw_obj(w);
        jw_key(w, "status");
        jw_str(w, c->store_status);
        jw_key(w, "comment");
        jw_str(w, c->store_comment);
        jw_key(w, "decided_at");
        jw_str(w, c->store_at);
        jw_key(w, "decided_by");
        jw_str(w, c->store_by);
        jw_obj_end(w);
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

/* Which config and decisions file applied (null: none), how many findings
 * each hid (added within schema 1). */
static void applied(jw *w, const report_applied *a)
{
    jw_key(w, "applied");
    jw_obj(w);
    jw_key(w, "config");
    jw_str(w, a->config);
    jw_key(w, "baseline");
    jw_str(w, a->baseline);
    jw_key(w, "ignored_by_config");
    jw_int(w, (int64_t)a->ignored);
    jw_key(w, "suppressed_by_baseline");
    jw_int(w, (int64_t)a->suppressed);
    conflicts(w, a->conflicts);
    jw_obj_end(w);
}

/* With the config's costs and a priced finding (docs/costs.md): the
 * estimated savings in total, per run and per job. Absent otherwise. */
static void savings(jw *w, const report_ctx *ctx)
{
    const char *jobs[REPORT_MAX_JOBS];
    const model *m = ctx->an->m;
    double sum;
    size_t i, k, n = report_savings(ctx, SIZE_MAX, &sum);

    if (!n)
        return;
    jw_key(w, "savings");
    jw_obj(w);
    jw_key(w, "currency");
    jw_str(w, ctx->applied.currency ? ctx->applied.currency : "USD");
    jw_key(w, "total");
    jw_num(w, sum);
    jw_key(w, "findings");
    jw_int(w, (int64_t)n);
    jw_key(w, "by_run");
    jw_arr(w);
    for (i = 0; i < m->nruns; i++) {
        if (!(k = report_savings(ctx, i, &sum)))
            continue;
        jw_obj(w);
        jw_key(w, "run");
        jw_str(w, m->runs[i]->id);
        jw_key(w, "job");
        jw_str(w, model_run_job(m->runs[i]));
        jw_key(w, "estimated_savings");
        jw_num(w, sum);
        jw_key(w, "findings");
        jw_int(w, (int64_t)k);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_key(w, "by_job");
    jw_arr(w);
    n = report_jobs_priced(ctx, jobs, REPORT_MAX_JOBS);
    for (i = 0; i < n; i++) {
        k = report_job_savings(ctx, jobs[i], &sum);
        jw_obj(w);
        jw_key(w, "job");
        jw_str(w, jobs[i]);
        jw_key(w, "estimated_savings");
        jw_num(w, sum);
        jw_key(w, "findings");
        jw_int(w, (int64_t)k);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
}

int report_json(const report_ctx *ctx)
{
    const results *res = ctx->res;
    jw w;
    size_t i;

    jw_init(&w, ctx->out, 1);
    jw_obj(&w);
    jw_key(&w, "schema");
    jw_int(&w, 1);
    jw_key(&w, "optipipe_version");
    jw_str(&w, OP_VERSION);
    inputs(&w, ctx->an);
    runs(&w, ctx->an->m);
    jw_key(&w, "findings");
    jw_arr(&w);
    for (i = 0; i < res->n; i++)
        if (!res->f[i].suppressed || ctx->show_suppressed)
            finding_obj(&w, &res->f[i], ctx->applied.currency);
    jw_arr_end(&w);
    jw_key(&w, "rule_errors");
    jw_arr(&w);
    for (i = 0; i < res->ne; i++) {
        jw_obj(&w);
        jw_key(&w, "rule");
        jw_str(&w, res->e[i].rule);
        jw_key(&w, "error");
        jw_str(&w, res->e[i].error);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "stats");
    jw_obj(&w);
    jw_key(&w, "rules_run");
    jw_int(&w, res->rules_run);
    jw_key(&w, "elapsed_ms");
    jw_int(&w, ctx->deterministic ? 0 : (int64_t)ctx->elapsed_ms);
    jw_key(&w, "read_ms");
    jw_int(&w, ctx->deterministic ? 0 : (int64_t)ctx->read_ms);
    jw_key(&w, "rules_ms");
    jw_int(&w, ctx->deterministic ? 0 : (int64_t)ctx->rules_ms);
    jw_obj_end(&w);
    applied(&w, &ctx->applied);
    savings(&w, ctx);
    jw_obj_end(&w);
    fputc('\n', ctx->out);
    return ferror(ctx->out) ? OP_EIO : 0;
}
