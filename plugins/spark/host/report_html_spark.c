/*
 * report_html_spark.c - the Spark charts of the HTML report: a timeline of
 * the stage attempts, and per stage the distribution of task durations
 * (min to max, median to p90, p99) on one shared axis, so that a stage
 * whose slowest task dwarfs its median (skew) stands out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_html.h"
#include "spark_host.h"

#define SP_MAX_STAGES 300
#define SP_ROW 24
#define SP_LEFT 270
#define SP_RIGHT 170
#define SP_WIDTH 960
#define SP_TOP 10

typedef struct stage {
    const struct op_node *n;
    const op_dist *d; /* task durations, or NULL */
    const finding *f; /* a finding on this stage, or NULL */
} stage;

static const op_dist *task_dist(const struct op_node *n)
{
    size_t i;

    for (i = 0; i < n->ndists; i++)
        if (strcmp(n->dists[i].metric, "duration_ms") == 0 && n->dists[i].d.count > 0)
            return &n->dists[i].d;
    for (i = 0; i < n->ndists; i++)
        if (strcmp(n->dists[i].metric, "executor_run_ms") == 0 && n->dists[i].d.count > 0)
            return &n->dists[i].d;
    return NULL;
}

static int by_start(const void *a, const void *b)
{
    const struct op_node *x = ((const stage *)a)->n, *y = ((const stage *)b)->n;
    int64_t sx = (x->set & MSET_STARTED_AT) ? x->started_at : INT64_MAX;
    int64_t sy = (y->set & MSET_STARTED_AT) ? y->started_at : INT64_MAX;

    if (sx != sy)
        return sx < sy ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The stage attempts in submission order (at most SP_MAX_STAGES: then
 * *partial is set). */
static size_t load_stages(hout *h, const struct op_run *r, stage *st, int *partial)
{
    size_t i, n = 0;

    *partial = 0;
    for (i = 0; i < r->nnodes; i++) {
        const struct op_node *nd = r->nodes[i];
        if (!nd->kind || strcmp(nd->kind, "stage") != 0)
            continue;
        if (n == SP_MAX_STAGES) {
            *partial = 1;
            break;
        }
        st[n].n = nd;
        st[n].d = task_dist(nd);
        st[n].f = html_finding_on(h->ctx, r->index, NULL, nd->id);
        n++;
    }
    qsort(st, n, sizeof *st, by_start);
    return n;
}

/* "stage 3 · join at Orders.scala:70" for the row label. */
static void stage_label(hout *h, double y, const stage *s, int bold)
{
    const char *id = html_attr(&s->n->attrs, "stage_id");

    fprintf(h->f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\"%s>", SP_LEFT - 8, y,
            bold ? " class=\"strong\"" : "");
    if (id) {
        fputs("stage ", h->f);
        html_put(h->f, id);
        fputs(" \xc2\xb7 ", h->f);
    }
    html_put_trunc(h->f, s->n->name ? s->n->name : s->n->id, 30);
    fputs("</text>\n", h->f);
}

static const char *status_class(const struct op_node *n)
{
    if (n->status && strcmp(n->status, "failed") == 0)
        return "bar-failed";
    if (n->status && strcmp(n->status, "running") == 0)
        return "bar-running";
    return "bar-ok";
}

static void timeline_bar(hout *h, const hscale *x, double y, const stage *s, int64_t t0)
{
    const struct op_node *n = s->n;
    int64_t end = (n->set & MSET_ENDED_AT) ? n->ended_at
                : (n->set & MSET_DURATION_MS) ? n->started_at + n->duration_ms : n->started_at;
    double x1 = hs_map(x, (double)(n->started_at - t0)), x2 = hs_map(x, (double)(end - t0));
    char buf[96], d[48];

    if (x2 - x1 < 2)
        x2 = x1 + 2;
    fprintf(h->f, "<g><title>");
    html_put(h->f, n->name ? n->name : n->id);
    fprintf(h->f, ": %s</title><rect class=\"%s%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
            "height=\"%d\"/></g>\n", report_fmt_duration(d, sizeof d, (double)(end - n->started_at)),
            status_class(n), s->f ? " flagged" : "", x1, y, x2 - x1, SP_ROW - 8);
    snprintf(buf, sizeof buf, "%s%s%s", d, s->f ? " \xe2\x9a\x91 " : "", s->f ? s->f->rule : "");
    svg_text(h, x2 + 6, y + SP_ROW - 12, "start", s->f ? "small strong" : "small", buf);
}

static void timeline(hout *h, const struct op_run *r, stage *st, size_t n, int partial)
{
    int64_t t0 = (r->set & MSET_STARTED_AT) ? r->started_at : INT64_MAX, tmax = 0;
    size_t i, rows = 0;
    int height;
    hscale x;
    char desc[256], cnt[48];

    for (i = 0; i < n; i++)
        if ((st[i].n->set & MSET_STARTED_AT) && st[i].n->started_at < t0)
            t0 = st[i].n->started_at;
    for (i = 0; i < n; i++) {
        const struct op_node *nd = st[i].n;
        if (!(nd->set & MSET_STARTED_AT))
            continue;
        rows++;
        if ((nd->set & MSET_ENDED_AT) && nd->ended_at - t0 > tmax)
            tmax = nd->ended_at - t0;
    }
    if (!rows)
        return;
    height = SP_TOP + (int)rows * SP_ROW + 34;
    x = hs_make(0, (double)tmax * 1.02 + 1, SP_LEFT, SP_WIDTH - SP_RIGHT);
    snprintf(desc, sizeof desc, "Timeline of %s%s from the application's "
             "start; stages with findings are marked.",
             fmt_count(cnt, sizeof cnt, (double)rows, "stage attempt", NULL),
             partial ? " (the first ones only)" : "");
    fig_open(h, "spark-timeline", SP_WIDTH, height, "Stage timeline", desc);
    svg_x_axis(h, &x, height - 24, SP_TOP, 1);
    for (i = 0, rows = 0; i < n; i++) {
        double y;
        if (!(st[i].n->set & MSET_STARTED_AT))
            continue;
        y = SP_TOP + rows++ * SP_ROW;
        stage_label(h, y + SP_ROW - 12, &st[i], st[i].f != NULL);
        timeline_bar(h, &x, y + 2, &st[i], t0);
    }
    fig_svg_end(h, "Each bar runs from a stage attempt's submission to its completion "
                   "(time since the application started). Blue succeeded, vermillion "
                   "failed, orange running; \xe2\x9a\x91 names the rule that flagged it.");
    fig_end(h);
}

/* The tooltip of a row: every quantile in words. */
static void dist_title(hout *h, const op_dist *d)
{
    char v[7][48];

    fprintf(h->f, "<g><title>min %s, median %s, p75 %s, p90 %s, p99 %s, max %s over %s"
            "</title>\n", report_fmt_duration(v[0], 48, d->min),
            report_fmt_duration(v[1], 48, d->p50), report_fmt_duration(v[2], 48, d->p75),
            report_fmt_duration(v[3], 48, d->p90), report_fmt_duration(v[4], 48, d->p99),
            report_fmt_duration(v[5], 48, d->max), fmt_count(v[6], 48, d->count, "task", NULL));
}

static void dist_row(hout *h, const hscale *x, double y, const stage *s)
{
    const op_dist *d = s->d;
    double mid = y + (SP_ROW - 4) / 2.0, ratio = d->p50 > 0 ? d->max / d->p50 : 0;
    int skew = ratio >= 3 || (s->f && strcmp(s->f->rule, "spark.skew") == 0);
    char buf[128], a[48], b[48], r[48];

    stage_label(h, mid + 4, s, skew);
    dist_title(h, d);
    fprintf(h->f, "<line class=\"whisker\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            hs_map(x, d->min), mid, hs_map(x, d->max), mid);
    fprintf(h->f, "<rect class=\"box\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>\n",
            hs_map(x, d->p50), y + 2, hs_map(x, d->p90) - hs_map(x, d->p50) + 1, SP_ROW - 8);
    fprintf(h->f, "<line class=\"median\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            hs_map(x, d->p50), y + 1, hs_map(x, d->p50), y + SP_ROW - 5);
    fprintf(h->f, "<circle class=\"p99\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>\n", hs_map(x, d->p99), mid);
    fprintf(h->f, "<path class=\"%s\" d=\"M%.1f %.1fl5 5l-5 5l-5 -5z\"/></g>\n",
            skew ? "max skew" : "max", hs_map(x, d->max), mid - 5);
    snprintf(buf, sizeof buf, "median %s \xc2\xb7 max %s (%s)",
             report_fmt_duration(a, sizeof a, d->p50), report_fmt_duration(b, sizeof b, d->max),
             fmt_ratio(r, sizeof r, ratio));
    svg_text(h, hs_map(x, d->max) + 10, mid + 4, "start", skew ? "small strong" : "small", buf);
}

static void dist_table(hout *h, const stage *st, size_t n)
{
    size_t i;
    char v[7][48];

    fig_table_open(h, "Task durations as a table",
                   "stage|tasks|min|median|p75|p90|p99|max|max / median");
    for (i = 0; i < n; i++) {
        const op_dist *d = st[i].d;
        if (!d)
            continue;
        fputs("<tr><td>", h->f);
        html_put(h->f, st[i].n->name ? st[i].n->name : st[i].n->id);
        fprintf(h->f, "</td><td class=\"num\">%.0f</td><td class=\"num\">%s</td>"
                "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td>"
                "<td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                d->count, report_fmt_duration(v[0], 48, d->min),
                report_fmt_duration(v[1], 48, d->p50), report_fmt_duration(v[2], 48, d->p75),
                report_fmt_duration(v[3], 48, d->p90), report_fmt_duration(v[4], 48, d->p99),
                report_fmt_duration(v[5], 48, d->max), fmt_ratio(v[6], 48, d->p50 > 0 ? d->max / d->p50 : 0));
    }
    fig_table_end(h);
}

static void task_distribution(hout *h, stage *st, size_t n)
{
    double xmax = 0;
    size_t i, rows = 0;
    int height;
    hscale x;
    char desc[256], cnt[48];

    for (i = 0; i < n; i++)
        if (st[i].d) {
            rows++;
            xmax = st[i].d->max > xmax ? st[i].d->max : xmax;
        }
    if (!rows)
        return;
    height = SP_TOP + (int)rows * SP_ROW + 34;
    x = hs_make(0, xmax * 1.02 + 1, SP_LEFT, SP_WIDTH - SP_RIGHT - 70);
    snprintf(desc, sizeof desc, "Task durations of %s on one axis: line from the "
             "fastest to the slowest task, box from the median to p90, dot at p99, diamond "
             "at the slowest.", fmt_count(cnt, sizeof cnt, (double)rows, "stage", NULL));
    fig_open(h, "spark-tasks", SP_WIDTH, height, "Task time distribution per stage", desc);
    svg_x_axis(h, &x, height - 24, SP_TOP, 1);
    for (i = 0, rows = 0; i < n; i++)
        if (st[i].d)
            dist_row(h, &x, SP_TOP + rows++ * SP_ROW, &st[i]);
    fig_svg_end(h, "Per stage: thin line = fastest to slowest task, box = median to p90, "
                   "dot = p99, diamond = slowest task. A slowest task far right of its box "
                   "is skew: a few partitions hold most of the data.");
    dist_table(h, st, n);
    fig_end(h);
}

void html_charts_spark(hout *h, const struct op_run *r)
{
    stage *st = calloc(SP_MAX_STAGES, sizeof *st);
    size_t n;
    int partial;

    if (!st)
        return;
    n = load_stages(h, r, st, &partial);
    if (n) {
        timeline(h, r, st, n, partial);
        task_distribution(h, st, n);
    }
    free(st);
}
