/*
 * report_text.c - the default, human report: findings grouped by run,
 * most severe first, each with its evidence and exact changes.
 *
 * Everything taken from inputs (names, ids, config values) and from rules
 * (messages) goes through term_put(), which removes terminal control
 * characters so a crafted operator name cannot move the cursor, retitle
 * the window or hide text.
 */
#include <math.h>
#include <string.h>

#include "report.h"
#include "report_util.h"

typedef struct tctx {
    FILE *f;
    int color;
} tctx;

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_DIM "\033[2m"
#define C_RED "\033[31m"
#define C_YELLOW "\033[33m"
#define C_CYAN "\033[36m"

static void style(const tctx *t, const char *code)
{
    if (t->color)
        fputs(code, t->f);
}

/* Everything from inputs and rules: see report_term_put(). */
static void term_put(const tctx *t, const char *s)
{
    report_term_put(t->f, s);
}

static void value_put(const tctx *t, const cJSON *v)
{
    char buf[64];

    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d == floor(d) && fabs(d) < 1e15)
            snprintf(buf, sizeof buf, "%.0f", d);
        else
            snprintf(buf, sizeof buf, "%.4g", d);
        fputs(buf, t->f);
    } else if (cJSON_IsString(v)) {
        term_put(t, v->valuestring);
    } else if (cJSON_IsBool(v)) {
        fputs(cJSON_IsTrue(v) ? "true" : "false", t->f);
    } else if (!v || cJSON_IsNull(v)) {
        fputs("(unset)", t->f);
    } else {
        char *s = cJSON_PrintUnformatted(v);
        term_put(t, s ? s : "?");
        cJSON_free(s);
    }
}

static const char *sev_color(severity s)
{
    return s == SEV_ERROR ? C_RED : s == SEV_WARNING ? C_YELLOW : C_CYAN;
}

static void put_changes(const tctx *t, const finding *f)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, f->changes) {
        const cJSON *target = cJSON_GetObjectItemCaseSensitive(c, "target");
        fputs("    change: ", t->f);
        style(t, C_BOLD);
        term_put(t, cJSON_GetObjectItemCaseSensitive(c, "key")->valuestring);
        style(t, C_RESET);
        if (cJSON_IsString(target)) {
            fputs(" of ", t->f);
            term_put(t, target->valuestring);
        }
        fputs(": ", t->f);
        value_put(t, cJSON_GetObjectItemCaseSensitive(c, "from"));
        fputs(" -> ", t->f);
        value_put(t, cJSON_GetObjectItemCaseSensitive(c, "to"));
        fputc('\n', t->f);
    }
}

static void put_evidence(const tctx *t, const finding *f)
{
    const cJSON *e;
    int first = 1;

    if (!f->evidence || !f->evidence->child)
        return;
    style(t, C_DIM);
    fputs("    evidence: ", t->f);
    cJSON_ArrayForEach(e, f->evidence) {
        if (!first)
            fputs(", ", t->f);
        first = 0;
        term_put(t, e->string);
        fputc('=', t->f);
        value_put(t, e);
    }
    style(t, C_RESET);
    fputc('\n', t->f);
}

static void put_finding(const tctx *t, const finding *f)
{
    fputs("  ", t->f);
    style(t, sev_color(f->sev));
    style(t, C_BOLD);
    fprintf(t->f, "%-7s", severity_name(f->sev));
    style(t, C_RESET);
    fputc(' ', t->f);
    term_put(t, f->rule);
    if (f->node_name) {
        fputs("  ", t->f);
        term_put(t, f->node_name);
    }
    /* the short fingerprint: what `baseline --fingerprint` takes */
    style(t, C_DIM);
    fprintf(t->f, "  [%.8s]", f->fingerprint);
    style(t, C_RESET);
    if (f->suppressed)
        fputs(f->suppressed == 2 ? "  (ignored by config)"
                                 : "  (suppressed by baseline)", t->f);
    fputs("\n    ", t->f);
    term_put(t, f->message);
    fputc('\n', t->f);
    if (f->recommendation) {
        fputs("    -> ", t->f);
        term_put(t, f->recommendation);
        fputc('\n', t->f);
    }
    put_changes(t, f);
    put_evidence(t, f);
}

static void put_run_header(const tctx *t, const struct op_run *r)
{
    fputc('\n', t->f);
    style(t, C_BOLD);
    term_put(t, r->source);
    fputs(" ", t->f);
    term_put(t, r->name ? r->name : r->id);
    style(t, C_RESET);
    if (r->name) {
        fputs(" (", t->f);
        term_put(t, r->id);
        fputc(')', t->f);
    }
    fputs(" - ", t->f);
    term_put(t, r->status ? r->status : "unknown");
    if (r->set & MSET_DURATION_MS)
        fprintf(t->f, ", %.1f s", (double)r->duration_ms / 1000.0);
    if (r->nhistory)
        fprintf(t->f, " (newest of %zu runs in its history)", r->nhistory + 1);
    fputc('\n', t->f);
}

static int visible(const report_ctx *ctx, const finding *f)
{
    return !f->suppressed || ctx->show_suppressed;
}

static void put_group(const report_ctx *ctx, const tctx *t, size_t run)
{
    const results *res = ctx->res;
    size_t i, shown = 0;

    for (i = 0; i < res->n; i++) {
        if (res->f[i].run_index != run || !visible(ctx, &res->f[i]))
            continue;
        put_finding(t, &res->f[i]);
        shown++;
    }
    if (!shown && run != SIZE_MAX)
        fputs("  no findings\n", t->f);
}

int report_text(const report_ctx *ctx)
{
    const results *res = ctx->res;
    const model *m = ctx->an->m;
    tctx t = {ctx->out, ctx->color};
    size_t i, count[3] = {0, 0, 0}, total = 0;
    char applied[8600];

    for (i = 0; i < res->n; i++)
        if (visible(ctx, &res->f[i])) {
            count[res->f[i].sev]++;
            total++;
        }
    style(&t, C_BOLD);
    fprintf(t.f, "opti-pipe %s", OP_VERSION);
    style(&t, C_RESET);
    fprintf(t.f, ": %zu input%s, %zu run%s, %zu finding%s (%zu error, %zu warning, %zu info)\n",
            analysis_ninputs(ctx->an), analysis_ninputs(ctx->an) == 1 ? "" : "s", m->nruns,
            m->nruns == 1 ? "" : "s", total, total == 1 ? "" : "s", count[2],
            count[1], count[0]);
    if (report_applied_text(applied, sizeof applied, &ctx->applied)) {
        term_put(&t, applied);
        fputc('\n', t.f);
    }
    /* Runs superseded by a newer run of their history are only context:
     * rules checked the newest, which names how many came before. */
    for (i = 0; i < m->nruns; i++) {
        if (m->runs[i]->superseded)
            continue;
        put_run_header(&t, m->runs[i]);
        put_group(ctx, &t, i);
    }
    for (i = 0; i < res->n; i++)
        if (res->f[i].run_index == SIZE_MAX && visible(ctx, &res->f[i])) {
            fputs("\nacross runs\n", t.f);
            put_group(ctx, &t, SIZE_MAX);
            break;
        }
    if (res->ne) {
        fputc('\n', t.f);
        style(&t, C_RED);
        fprintf(t.f, "%zu rule error%s:\n", res->ne, res->ne == 1 ? "" : "s");
        style(&t, C_RESET);
        for (i = 0; i < res->ne; i++) {
            fputs("  ", t.f);
            term_put(&t, res->e[i].rule);
            fputs(": ", t.f);
            term_put(&t, res->e[i].error);
            fputc('\n', t.f);
        }
    }
    return ferror(t.f) ? OP_EIO : 0;
}
