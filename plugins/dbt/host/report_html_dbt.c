/*
 * report_html_dbt.c - the dbt charts of the HTML report: a Gantt of the
 * nodes on their threads with the critical path highlighted (what bounds
 * the build), and for every dbt.regression finding the history of the
 * regressed model (or build) across the earlier runs of its history.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report_html.h"
#include "dbt_host.h"

#define DB_MAX_BARS 3000
#define DB_MAX_THREADS 256
#define DB_ROW 26
#define DB_LEFT 150
#define DB_WIDTH 960
#define DB_RIGHT 40
#define DB_TOP 10
#define HI_W 480
#define HI_H 250

typedef struct bar {
    const struct op_node *n;
    int row;
    int critical;
} bar;

typedef struct gantt {
    bar b[DB_MAX_BARS];
    size_t n, total; /* drawn, timed nodes in the run */
    const char *threads[DB_MAX_THREADS];
    size_t nthreads;
    int64_t t0, t1;
} gantt;

static int timed(const struct op_node *n)
{
    return (n->set & MSET_STARTED_AT) && (n->set & MSET_ENDED_AT) &&
           n->ended_at >= n->started_at && !html_attr(&n->attrs, "untimed") &&
           !html_attr(&n->attrs, "timing_outside_run");
}

/* "Thread-2 (worker)" before "Thread-10 (worker)": digits compare as
 * numbers; "main" (hooks) first. */
static int natural_cmp(const char *a, const char *b)
{
    int ma = strcmp(a, "main") == 0, mb = strcmp(b, "main") == 0;

    if (ma != mb)
        return mb - ma;
    while (*a && *b) {
        if (*a >= '0' && *a <= '9' && *b >= '0' && *b <= '9') {
            unsigned long x = strtoul(a, (char **)&a, 10), y = strtoul(b, (char **)&b, 10);
            if (x != y)
                return x < y ? -1 : 1;
            continue;
        }
        if (*a != *b)
            return (unsigned char)*a - (unsigned char)*b;
        a++, b++;
    }
    return (unsigned char)*a - (unsigned char)*b;
}

static int thread_cmp(const void *a, const void *b)
{
    return natural_cmp(*(const char *const *)a, *(const char *const *)b);
}

static const char *thread_of(const struct op_node *n)
{
    const char *t = html_attr(&n->attrs, "thread");
    return t ? t : "(no thread)";
}

static void add_thread(gantt *g, const char *t)
{
    size_t i;

    for (i = 0; i < g->nthreads; i++)
        if (strcmp(g->threads[i], t) == 0)
            return;
    if (g->nthreads < DB_MAX_THREADS)
        g->threads[g->nthreads++] = t;
}

static int row_of(const gantt *g, const char *t)
{
    size_t i;

    for (i = 0; i < g->nthreads; i++)
        if (strcmp(g->threads[i], t) == 0)
            return (int)i;
    return -1;
}

static int dur_desc(const struct op_node *x, const struct op_node *y)
{
    int64_t dx = x->ended_at - x->started_at, dy = y->ended_at - y->started_at;

    if (dx != dy)
        return dx > dy ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int by_duration_desc(const void *a, const void *b)
{
    return dur_desc(((const bar *)a)->n, ((const bar *)b)->n);
}

static int node_by_duration_desc(const void *a, const void *b)
{
    return dur_desc(*(const struct op_node *const *)a, *(const struct op_node *const *)b);
}

/* Timed nodes; with more than DB_MAX_BARS, the longest ones. Returns 0
 * on out of memory. */
static int load_bars(gantt *g, const struct op_run *r)
{
    const struct op_node **all = malloc((r->nnodes + 1) * sizeof *all);
    size_t i;

    if (!all)
        return 0;
    g->t0 = INT64_MAX, g->t1 = INT64_MIN;
    for (i = 0; i < r->nnodes; i++) {
        const struct op_node *n = r->nodes[i];
        if (!timed(n))
            continue;
        all[g->total++] = n;
        g->t0 = n->started_at < g->t0 ? n->started_at : g->t0;
        g->t1 = n->ended_at > g->t1 ? n->ended_at : g->t1;
    }
    if (g->total > DB_MAX_BARS)
        qsort(all, g->total, sizeof *all, node_by_duration_desc);
    for (i = 0; i < g->total && g->n < DB_MAX_BARS; i++)
        g->b[g->n++].n = all[i];
    free(all);
    for (i = 0; i < g->n; i++)
        add_thread(g, thread_of(g->b[i].n));
    qsort(g->threads, g->nthreads, sizeof *g->threads, thread_cmp);
    for (i = 0; i < g->n; i++) {
        const char *cp = html_attr(&g->b[i].n->attrs, "critical_path");
        g->b[i].row = row_of(g, thread_of(g->b[i].n));
        g->b[i].critical = cp && strcmp(cp, "true") == 0;
    }
    return 1;
}

static void gantt_bar(hout *h, const hscale *x, const gantt *g, const bar *b)
{
    const struct op_node *n = b->n;
    double x1 = hs_map(x, (double)(n->started_at - g->t0));
    double w = hs_map(x, (double)(n->ended_at - g->t0)) - x1;
    double y = DB_TOP + b->row * DB_ROW + 3;
    const char *cls = b->critical ? "bar-cp"
                    : n->kind && strcmp(n->kind, "test") == 0 ? "bar-test" : "bar-node";
    char d[48];

    if (b->row < 0)
        return;
    if (w < 1)
        w = 1;
    fputs("<g><title>", h->f);
    html_put(h->f, n->name ? n->name : n->id);
    fprintf(h->f, ": %s%s</title><rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
            "height=\"%d\"/>", report_fmt_duration(d, sizeof d, (double)(n->ended_at - n->started_at)),
            b->critical ? " (critical path)" : "", cls, x1, y, w, DB_ROW - 6);
    if (w > 48) {
        fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" class=\"small %s\">", x1 + 4, y + 14,
                b->critical ? "on-dark" : "");
        html_put_trunc(h->f, n->name ? n->name : n->id, (size_t)(w / 7));
        fputs("</text>", h->f);
    }
    fputs("</g>\n", h->f);
}

/* The critical path as the data table (from the run's critical_path
 * series), or the longest nodes when there is no manifest. */
static void gantt_table(hout *h, const struct op_run *r, gantt *g)
{
    const mseries *cp = model_find_series(r, "critical_path");
    char a[48], b[48];
    size_t i;

    if (cp && cp->n) {
        fig_table_open(h, "Critical path as a table", "node|starts after|duration");
        for (i = 0; i < cp->n; i++) {
            const mmap *f = &cp->recs[i]->fields;
            fputs("<tr><td>", h->f);
            html_put(h->f, html_attr(f, "name"));
            fprintf(h->f, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                    report_fmt_duration(a, sizeof a, html_metric(f, "start_offset_ms")),
                    report_fmt_duration(b, sizeof b, html_metric(f, "duration_ms")));
        }
        fig_table_end(h);
        return;
    }
    qsort(g->b, g->n, sizeof *g->b, by_duration_desc);
    fig_table_open(h, "Longest nodes as a table", "node|thread|starts after|duration");
    for (i = 0; i < g->n && i < 20; i++) {
        const struct op_node *n = g->b[i].n;
        fputs("<tr><td>", h->f);
        html_put(h->f, n->name ? n->name : n->id);
        fputs("</td><td>", h->f);
        html_put(h->f, thread_of(n));
        fprintf(h->f, "</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                report_fmt_duration(a, sizeof a, (double)(n->started_at - g->t0)),
                report_fmt_duration(b, sizeof b, (double)(n->ended_at - n->started_at)));
    }
    fig_table_end(h);
}

static void gantt_chart(hout *h, const struct op_run *r)
{
    gantt *g = calloc(1, sizeof *g);
    int height;
    hscale x;
    size_t i;
    char desc[320], cn[48], ct[48];

    if (!g)
        return;
    if (!load_bars(g, r) || !g->n) {
        free(g);
        return;
    }
    height = DB_TOP + (int)g->nthreads * DB_ROW + 34;
    /* DB_RIGHT: the last tick's label is centred on its tick and must fit */
    x = hs_make(0, (double)(g->t1 - g->t0) * 1.01 + 1, DB_LEFT, DB_WIDTH - DB_RIGHT);
    snprintf(desc, sizeof desc, "Gantt chart of %s%s on %s; nodes on the "
             "critical path are highlighted.", fmt_count(cn, sizeof cn, (double)g->n, "node", NULL),
             g->n < g->total ? " (the longest)" : "",
             fmt_count(ct, sizeof ct, (double)g->nthreads, "thread", NULL));
    fig_open(h, "dbt-gantt", DB_WIDTH, height, "Nodes by thread, critical path highlighted", desc);
    svg_x_axis(h, &x, height - 24, DB_TOP, 1);
    for (i = 0; i < g->nthreads; i++) {
        fprintf(h->f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", DB_LEFT - 8,
                DB_TOP + i * DB_ROW + 17.0);
        html_put_trunc(h->f, g->threads[i], 20);
        fputs("</text>\n", h->f);
    }
    for (i = 0; i < g->n; i++)
        gantt_bar(h, &x, g, &g->b[i]);
    fig_svg_end(h, g->n < g->total
                   ? "Each bar is a node from start to end on its thread (only the longest "
                     "nodes are drawn). Vermillion: the critical path, the chain of "
                     "dependencies that bounds the build; grey: tests."
                   : "Each bar is a node from start to end on its thread. Vermillion: the "
                     "critical path, the chain of dependencies that bounds the build; "
                     "grey: tests.");
    gantt_table(h, r, g);
    fig_end(h);
    free(g);
}

/* ---- history of a regressed model ---------------------------------------- */

typedef struct hist {
    const struct op_run *run;
    double ms; /* NAN when the node is absent from that run */
} hist;

static double node_ms(const struct op_run *r, const char *node)
{
    const struct op_node *n;

    if (!node)
        return (r->set & MSET_DURATION_MS) ? (double)r->duration_ms : NAN;
    n = model_find_node(r, node);
    if (!n || !(n->set & MSET_DURATION_MS))
        return NAN;
    return (double)n->duration_ms;
}

static void run_date(char *buf, size_t n, const struct op_run *r)
{
    time_t t;
    struct tm tm;

    if (!(r->set & (MSET_STARTED_AT | MSET_ENDED_AT))) {
        snprintf(buf, n, "?");
        return;
    }
    t = (time_t)(((r->set & MSET_STARTED_AT) ? r->started_at : r->ended_at) / 1000);
    if (!gmtime_r(&t, &tm)) {
        snprintf(buf, n, "?");
        return;
    }
    strftime(buf, n, "%Y-%m-%d %H:%M", &tm);
}

/* "MM-DD" of run_date, for axis labels. */
static void run_day(char *buf, size_t n, const struct op_run *r)
{
    char full[48];

    run_date(full, sizeof full, r);
    snprintf(buf, n, "%.5s", strlen(full) >= 10 ? full + 5 : full);
}

static double hist_median(const hist *v, size_t n)
{
    double tmp[64];
    size_t i, m = 0, j;

    for (i = 0; i < n && m < 64; i++)
        if (!isnan(v[i].ms))
            tmp[m++] = v[i].ms;
    if (!m)
        return NAN;
    for (i = 1; i < m; i++) /* insertion sort: at most 64 values */
        for (j = i; j > 0 && tmp[j - 1] > tmp[j]; j--) {
            double t = tmp[j];
            tmp[j] = tmp[j - 1], tmp[j - 1] = t;
        }
    return m % 2 ? tmp[m / 2] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2;
}

static void history_bars(hout *h, const hist *v, size_t n, const hscale *y, double med)
{
    double slot = (HI_W - 80.0) / (double)n;
    size_t every = (n + 7) / 8, i; /* at most 8 date labels */
    char lab[48];

    for (i = 0; i < n; i++) {
        double x = 64 + i * slot + slot * 0.15, top;
        run_day(lab, sizeof lab, v[i].run);
        if (!isnan(v[i].ms)) {
            top = hs_map(y, v[i].ms);
            fprintf(h->f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
                    i + 1 == n ? "bar-cp" : "bar-ok", x, top, slot * 0.7, y->r0 - top);
        }
        if ((n - 1 - i) % every == 0)
            svg_text(h, x + slot * 0.35, y->r0 + 14, "middle", "tiny", lab);
    }
    if (!isnan(med)) {
        double py = hs_map(y, med);
        char d[48], buf[80];
        fprintf(h->f, "<line class=\"limit\" x1=\"64\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>\n",
                py, HI_W - 16, py);
        snprintf(buf, sizeof buf, "dashed line: median before, %s",
                 report_fmt_duration(d, sizeof d, med));
        svg_text(h, HI_W - 16, 14, "end", "small", buf);
    }
}

static void history_table(hout *h, const hist *v, size_t n)
{
    char lab[48], d[48];
    size_t i;

    fig_table_open(h, "History as a table", "run started (UTC)|run|duration");
    for (i = 0; i < n; i++) {
        run_date(lab, sizeof lab, v[i].run);
        fprintf(h->f, "<tr><td>%s</td><td>", lab);
        html_put(h->f, v[i].run->id);
        fprintf(h->f, "</td><td class=\"num\">%s</td></tr>\n",
                isnan(v[i].ms) ? "n/a" : report_fmt_duration(d, sizeof d, v[i].ms));
    }
    fig_table_end(h);
}

static void history_chart(hout *h, const struct op_run *r, const finding *f)
{
    hist v[65];
    size_t n = 0, i;
    double ymax = 0, med;
    hscale y;
    char title[256], desc[320], d[48], m[48];

    for (i = r->nhistory > 64 ? r->nhistory - 64 : 0; i < r->nhistory; i++, n++)
        v[n].run = r->history[i], v[n].ms = node_ms(r->history[i], f->node_id);
    med = hist_median(v, n);
    v[n].run = r, v[n].ms = node_ms(r, f->node_id);
    n++;
    for (i = 0; i < n; i++)
        ymax = !isnan(v[i].ms) && v[i].ms > ymax ? v[i].ms : ymax;
    y = hs_make(0, hs_nice_ceil(ymax * 1.05), HI_H - 34, 28);
    snprintf(title, sizeof title, "History of %s", f->node_name ? f->node_name : "the build");
    snprintf(desc, sizeof desc, "Duration in the last %zu runs, oldest first; the newest "
             "run took %s against a median of %s before.", n,
             report_fmt_duration(d, sizeof d, v[n - 1].ms),
             isnan(med) ? "n/a" : report_fmt_duration(m, sizeof m, med));
    fig_open(h, "dbt-history", HI_W, HI_H, title, desc);
    svg_y_axis(h, &y, 64, HI_W - 16);
    history_bars(h, v, n, &y, med);
    fig_svg_end(h, f->node_name ? "Duration of this node in each run of the history; the "
                                  "newest run in vermillion."
                                : "Duration of the whole build in each run of the history; "
                                  "the newest run in vermillion.");
    history_table(h, v, n);
    fig_end(h);
}

static void history_charts(hout *h, const struct op_run *r)
{
    const results *res = h->ctx->res;
    size_t i, shown = 0;

    if (!r->nhistory)
        return;
    for (i = 0; i < res->n && shown < 12; i++) {
        const finding *f = &res->f[i];
        if (f->run_index != r->index || strcmp(f->rule, "dbt.regression") != 0 ||
            !report_visible(h->ctx, f))
            continue;
        if (!shown++)
            fputs("<div class=\"row\">\n", h->f);
        history_chart(h, r, f);
    }
    if (shown)
        fputs("</div>\n", h->f);
}

void html_charts_dbt(hout *h, const struct op_run *r)
{
    gantt_chart(h, r);
    history_charts(h, r);
}
