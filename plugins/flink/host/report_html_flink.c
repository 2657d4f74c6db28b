/*
 * report_html_flink.c - the Flink charts of the HTML report: the job graph
 * with each vertex coloured by how busy or backpressured it is and the
 * bottleneck marked, and the checkpoint durations over time with a
 * Theil-Sen trend (robust to the odd slow checkpoint, as the
 * flink.checkpoint-trend rule fits it) projected to the timeout line,
 * and the phases of the newest checkpoint with per-subtask details (start
 * delay, alignment, sync, async) on the slowest subtask of each vertex.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_html.h"
#include "flink_host.h"

#define G_MAX_VERTICES 200
#define G_BOX_W 300
#define G_BOX_H 86
#define G_GAP_X 24
#define G_GAP_Y 46
#define G_PAD 16
#define CK_MAX_POINTS 2000
#define CK_MAX_FIT 300
#define CK_TABLE_ROWS 60
#define PH_ROW_H 26
#define PH_BAR_X0 300.0
#define PH_BAR_X1 744.0

/* ---- job graph ------------------------------------------------------------ */

typedef struct gnode {
    const struct op_node *n;
    int layer, slot;
    double x, y; /* top-left */
} gnode;

typedef struct graph {
    gnode v[G_MAX_VERTICES];
    size_t n;
    int nlayers, width, height;
    int per_layer[G_MAX_VERTICES];
} graph;

static int gfind(const graph *g, const char *id)
{
    size_t i;

    for (i = 0; i < g->n; i++)
        if (strcmp(g->v[i].n->id, id) == 0)
            return (int)i;
    return -1;
}

/* Longest-path layers: a vertex sits one row below its deepest parent.
 * At most n passes, so a cycle (never in Flink) cannot loop forever. */
static void assign_layers(graph *g)
{
    size_t pass, i, j;
    int changed = 1;

    for (pass = 0; pass < g->n && changed; pass++) {
        changed = 0;
        for (i = 0; i < g->n; i++)
            for (j = 0; j < g->v[i].n->nparents; j++) {
                int p = gfind(g, g->v[i].n->parents[j]);
                if (p >= 0 && g->v[p].layer + 1 > g->v[i].layer &&
                    g->v[p].layer + 1 < G_MAX_VERTICES) {
                    g->v[i].layer = g->v[p].layer + 1;
                    changed = 1;
                }
            }
    }
}

static void place(graph *g)
{
    int widest = 1;
    size_t i;

    for (i = 0; i < g->n; i++) {
        gnode *v = &g->v[i];
        v->slot = g->per_layer[v->layer]++;
        if (v->layer + 1 > g->nlayers)
            g->nlayers = v->layer + 1;
        if (g->per_layer[v->layer] > widest)
            widest = g->per_layer[v->layer];
    }
    g->width = 2 * G_PAD + widest * (G_BOX_W + G_GAP_X) - G_GAP_X;
    g->height = 2 * G_PAD + g->nlayers * (G_BOX_H + G_GAP_Y) - G_GAP_Y;
    for (i = 0; i < g->n; i++) {
        gnode *v = &g->v[i];
        int row = g->per_layer[v->layer];
        double row_w = row * (G_BOX_W + G_GAP_X) - G_GAP_X;
        v->x = (g->width - row_w) / 2 + v->slot * (G_BOX_W + G_GAP_X);
        v->y = G_PAD + v->layer * (G_BOX_H + G_GAP_Y);
    }
}

static double ratio_of(const struct op_node *n, const char *max_key, const char *key)
{
    double v = html_metric(&n->metrics, max_key);
    return isnan(v) ? html_metric(&n->metrics, key) : v;
}

/* CSS class of a vertex fill: the dominant state and a 0..4 intensity. */
static void vertex_class(char *buf, size_t n, double busy, double bp)
{
    double b = isnan(busy) ? 0 : busy, p = isnan(bp) ? 0 : bp;
    double top = b > p ? b : p;
    int step = (int)(top * 5);

    if (isnan(busy) && isnan(bp))
        snprintf(buf, n, "v-none");
    else if (top < 0.1)
        snprintf(buf, n, "v-idle");
    else
        snprintf(buf, n, "v-%s%d", p > b ? "bp" : "busy", step > 4 ? 4 : step);
}

/* The ship strategy of the edge parent -> child: child's ship_strategy
 * lists one entry per input, in parent order. */
static void edge_label(char *buf, size_t n, const struct op_node *child, size_t input)
{
    const char *s = html_attr(&child->attrs, "ship_strategy");
    size_t i = 0;

    buf[0] = '\0';
    while (s && i < input) {
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
        i++;
    }
    if (s) {
        size_t len = strcspn(s, ",");
        snprintf(buf, n, "%.*s", (int)(len < 40 ? len : 40), s);
    }
}

static void draw_edges(hout *h, const graph *g, unsigned fig)
{
    size_t i, j;
    char label[48];

    for (i = 0; i < g->n; i++)
        for (j = 0; j < g->v[i].n->nparents; j++) {
            int p = gfind(g, g->v[i].n->parents[j]);
            double x1, y1, x2, y2;
            if (p < 0)
                continue;
            x1 = g->v[p].x + G_BOX_W / 2.0, y1 = g->v[p].y + G_BOX_H;
            x2 = g->v[i].x + G_BOX_W / 2.0, y2 = g->v[i].y - 3;
            fprintf(h->f, "<path class=\"edge\" d=\"M%.1f %.1fC%.1f %.1f %.1f %.1f %.1f %.1f\" "
                    "marker-end=\"url(#arrow-%u)\"/>\n", x1, y1, x1, y1 + G_GAP_Y / 2.0,
                    x2, y2 - G_GAP_Y / 2.0, x2, y2, fig);
            edge_label(label, sizeof label, g->v[i].n, j);
            if (label[0])
                svg_text(h, (x1 + x2) / 2 + 6, (y1 + y2) / 2 + 4, "start", "small", label);
        }
}

static void ratio_bar(hout *h, double x, double y, const char *what, double v,
                      const char *cls)
{
    char buf[64], pct[24];

    if (isnan(v))
        snprintf(buf, sizeof buf, "%s n/a", what);
    else
        snprintf(buf, sizeof buf, "%s %s", what, fmt_percent(pct, sizeof pct, v, 0));
    fprintf(h->f, "<rect class=\"track\" x=\"%.1f\" y=\"%.1f\" width=\"120\" height=\"8\"/>",
            x, y);
    if (!isnan(v))
        fprintf(h->f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"8\"/>\n",
                cls, x, y, 120 * (v < 0 ? 0 : v > 1 ? 1 : v));
    svg_text(h, x + 128, y + 8, "start", "small", buf);
}

static void draw_vertex(hout *h, const gnode *v, const finding *bottleneck)
{
    const struct op_node *n = v->n;
    double busy = ratio_of(n, "busy_ratio_max", "busy_ratio");
    double bp = ratio_of(n, "backpressure_ratio_max", "backpressure_ratio");
    double rate = html_metric(&n->metrics, "records_in_per_s");
    char cls[32], line[128];

    vertex_class(cls, sizeof cls, busy, bp);
    fprintf(h->f, "<g class=\"vertex%s\"><title>", bottleneck ? " bottleneck" : "");
    html_put(h->f, n->name ? n->name : n->id);
    fprintf(h->f, "</title>\n<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" "
            "height=\"%d\" rx=\"6\"/>\n", cls, v->x, v->y, G_BOX_W, G_BOX_H);
    fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\" class=\"strong\">", v->x + 10, v->y + 20);
    html_put_trunc(h->f, n->name ? n->name : n->id, 34); /* bold: ~8 px a char */
    fputs("</text>\n", h->f);
    if (n->set & MSET_PARALLELISM)
        snprintf(line, sizeof line, "parallelism %lld", (long long)n->parallelism);
    else
        snprintf(line, sizeof line, "parallelism ?");
    if (!isnan(rate))
        snprintf(line + strlen(line), sizeof line - strlen(line), " \xc2\xb7 %.0f rec/s in", rate);
    svg_text(h, v->x + 10, v->y + 38, "start", "small", line);
    ratio_bar(h, v->x + 10, v->y + 50, "busy", busy, "bar-busy");
    ratio_bar(h, v->x + 10, v->y + 66, "backpressured", bp, "bar-bp");
    if (bottleneck) {
        fprintf(h->f, "<rect class=\"badge\" x=\"%.1f\" y=\"%.1f\" width=\"92\" height=\"18\" rx=\"9\"/>",
                v->x + G_BOX_W - 100, v->y - 10);
        svg_text(h, v->x + G_BOX_W - 54, v->y + 3, "middle", "badge-text", "BOTTLENECK");
    }
    fputs("</g>\n", h->f);
}

static void graph_table(hout *h, const graph *g, size_t run)
{
    size_t i;

    fig_table_open(h, "Vertices as a table",
                   "vertex|parallelism|busy|backpressured|idle|records in/s|finding");
    for (i = 0; i < g->n; i++) {
        const struct op_node *n = g->v[i].n;
        const char *keys[] = {"busy_ratio_max", "backpressure_ratio_max", "idle_ratio_max"};
        const finding *f = html_finding_on(h->ctx, run, NULL, n->id);
        char pct[24];
        size_t k;
        fputs("<tr><td>", h->f);
        html_put(h->f, n->name ? n->name : n->id);
        fprintf(h->f, "</td><td class=\"num\">%lld</td>",
                (long long)((n->set & MSET_PARALLELISM) ? n->parallelism : 0));
        for (k = 0; k < 3; k++) {
            double v = html_metric(&n->metrics, keys[k]);
            if (isnan(v))
                fputs("<td class=\"num\">n/a</td>", h->f);
            else
                fprintf(h->f, "<td class=\"num\">%s</td>", fmt_percent(pct, sizeof pct, v, 0));
        }
        if (isnan(html_metric(&n->metrics, "records_in_per_s")))
            fputs("<td class=\"num\">n/a</td><td>", h->f);
        else
            fprintf(h->f, "<td class=\"num\">%.0f</td><td>",
                    html_metric(&n->metrics, "records_in_per_s"));
        if (f)
            html_put(h->f, f->rule);
        fputs("</td></tr>\n", h->f);
    }
    fig_table_end(h);
}

static void job_graph(hout *h, const struct op_run *r)
{
    graph *g = calloc(1, sizeof *g);
    const finding *bn = NULL;
    char desc[512], cnt[48];
    size_t i, total = 0;

    if (!g)
        return;
    for (i = 0; i < r->nnodes; i++)
        if (r->nodes[i]->kind && strcmp(r->nodes[i]->kind, "vertex") == 0) {
            if (g->n < G_MAX_VERTICES)
                g->v[g->n].n = r->nodes[i];
            g->n++, total++;
        }
    if (g->n > G_MAX_VERTICES)
        g->n = G_MAX_VERTICES;
    if (!g->n) {
        free(g);
        return;
    }
    assign_layers(g);
    place(g);
    bn = html_finding_on(h->ctx, r->index, "flink.bottleneck", NULL);
    snprintf(desc, sizeof desc, "Job graph of %s%s from sources (top) to sinks "
             "(bottom); fill shows how busy (orange) or backpressured (blue) each "
             "vertex is.%s", fmt_count(cnt, sizeof cnt, (double)g->n, "vertex", "vertices"),
             total > g->n ? " (the first ones only)" : "",
             bn ? " The bottleneck found by flink.bottleneck is marked." : "");
    fig_open(h, "flink-graph", g->width, g->height, "Job graph: busy and backpressure", desc);
    fprintf(h->f, "<defs><marker id=\"arrow-%u\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
            "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path class=\"arrow\" "
            "d=\"M0 0L10 5L0 10z\"/></marker></defs>\n", h->nfig);
    draw_edges(h, g, h->nfig);
    for (i = 0; i < g->n; i++)
        draw_vertex(h, &g->v[i],
                    html_finding_on(h->ctx, r->index, "flink.bottleneck", g->v[i].n->id));
    fig_svg_end(h, "Vertices coloured by their busiest subtask: orange = busy, blue = "
                   "backpressured (waiting on a slower vertex downstream), grey = idle. "
                   "The bottleneck is the busy vertex where the backpressure stops.");
    graph_table(h, g, r->index);
    fig_end(h);
    free(g);
}

/* ---- checkpoint durations -------------------------------------------------- */

typedef struct ckpt {
    double x, y; /* trigger time, duration (ms) */
    int failed;
    int64_t id;
} ckpt;

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, dbl_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Indices of the completed checkpoints, evenly thinned to CK_MAX_FIT so
 * that the pairwise slopes of Theil-Sen stay bounded. */
static size_t fit_points(const ckpt *c, size_t n, size_t *idx)
{
    size_t i, ok = 0, seen = 0, m = 0;

    for (i = 0; i < n; i++)
        ok += !c[i].failed;
    for (i = 0; i < n && m < CK_MAX_FIT; i++) {
        if (c[i].failed)
            continue;
        /* exactly CK_MAX_FIT of the ok points cross a bucket boundary */
        if (ok <= CK_MAX_FIT ||
            (seen + 1) * CK_MAX_FIT / ok != seen * CK_MAX_FIT / ok)
            idx[m++] = i;
        seen++;
    }
    return m;
}

/* Theil-Sen: the median pairwise slope, then the median intercept.
 * Returns 0 when there are fewer than 3 completed checkpoints. */
static int theil_sen(const ckpt *c, size_t n, double *slope, double *icpt)
{
    size_t idx[CK_MAX_FIT], m = fit_points(c, n, idx), i, j, k = 0;
    double *s;

    if (m < 3)
        return 0;
    s = malloc(m * (m - 1) / 2 * sizeof *s);
    if (!s)
        return 0;
    for (i = 0; i < m; i++)
        for (j = i + 1; j < m; j++)
            if (c[idx[j]].x != c[idx[i]].x)
                s[k++] = (c[idx[j]].y - c[idx[i]].y) / (c[idx[j]].x - c[idx[i]].x);
    if (!k) {
        free(s);
        return 0;
    }
    *slope = median(s, k);
    for (i = 0; i < m; i++)
        s[i] = c[idx[i]].y - *slope * c[idx[i]].x;
    *icpt = median(s, m);
    free(s);
    return 1;
}

static size_t load_checkpoints(const struct op_run *r, ckpt *c, size_t max)
{
    const mseries *s = model_find_series(r, "checkpoints");
    size_t i, n = 0, first;

    if (!s)
        return 0;
    first = s->n > max ? s->n - max : 0; /* the newest ones */
    for (i = first; i < s->n; i++) {
        const mmap *f = &s->recs[i]->fields;
        double x = html_metric(f, "trigger_ms"), y = html_metric(f, "end_to_end_duration_ms");
        const char *st = html_attr(f, "status");
        if (isnan(x) || isnan(y) || (st && strcmp(st, "IN_PROGRESS") == 0))
            continue;
        c[n].x = x, c[n].y = y;
        c[n].failed = st && strcmp(st, "FAILED") == 0;
        c[n].id = (int64_t)html_metric(f, "id");
        n++;
    }
    return n;
}

/* The limit the trend is judged against: the rule's (evidence limit_ms)
 * when it reported one, else the configured checkpoint timeout. */
static double checkpoint_limit(const report_ctx *ctx, const struct op_run *r)
{
    const finding *f = html_finding_on(ctx, r->index, "flink.checkpoint-trend", NULL);
    const cJSON *lim = f ? cJSON_GetObjectItemCaseSensitive(f->evidence, "limit_ms") : NULL;

    if (cJSON_IsNumber(lim) && lim->valuedouble > 0)
        return lim->valuedouble;
    return html_metric(&r->metrics, "checkpoint_timeout_ms");
}

typedef struct ckplot {
    hscale x, y;
    double x0, slope, icpt, limit, cross; /* cross: x where the trend meets the limit */
    int trend;
} ckplot;

static void ck_scales(ckplot *p, const ckpt *c, size_t n)
{
    double xmax = c[n - 1].x, ymax = 0;
    size_t i;

    p->x0 = c[0].x;
    for (i = 0; i < n; i++)
        ymax = c[i].y > ymax ? c[i].y : ymax;
    p->cross = NAN;
    if (p->trend && p->slope > 0 && p->limit > 0) {
        double t = (p->limit - p->icpt) / p->slope;
        if (t > xmax && t - p->x0 <= 4 * (xmax - p->x0 + 1))
            p->cross = t, xmax = t;
    }
    if (p->limit > ymax)
        ymax = p->limit;
    p->x = hs_make(0, (xmax - p->x0) * 1.02 + 1, 72, 744);
    p->y = hs_make(0, hs_nice_ceil(ymax * 1.05), 270, 14);
}

static void ck_marks(hout *h, const ckplot *p, const ckpt *c, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        double px = hs_map(&p->x, c[i].x - p->x0), py = hs_map(&p->y, c[i].y);
        if (c[i].failed)
            fprintf(h->f, "<path class=\"pt-fail\" d=\"M%.1f %.1fl8 8m0 -8l-8 8\"/>\n",
                    px - 4, py - 4);
        else
            fprintf(h->f, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>\n", px, py);
    }
}

static void ck_lines(hout *h, const ckplot *p, const ckpt *c, size_t n)
{
    char buf[96], d[48];

    if (p->trend) {
        double xa = c[0].x, xb = c[n - 1].x;
        fprintf(h->f, "<line class=\"trend\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                hs_map(&p->x, xa - p->x0), hs_map(&p->y, p->slope * xa + p->icpt),
                hs_map(&p->x, xb - p->x0), hs_map(&p->y, p->slope * xb + p->icpt));
        if (!isnan(p->cross))
            fprintf(h->f, "<line class=\"trend proj\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                    "y2=\"%.1f\"/>\n", hs_map(&p->x, xb - p->x0),
                    hs_map(&p->y, p->slope * xb + p->icpt), hs_map(&p->x, p->cross - p->x0),
                    hs_map(&p->y, p->limit));
    }
    if (p->limit > 0) {
        double py = hs_map(&p->y, p->limit);
        fprintf(h->f, "<line class=\"limit\" x1=\"72\" y1=\"%.1f\" x2=\"744\" y2=\"%.1f\"/>\n",
                py, py);
        snprintf(buf, sizeof buf, "timeout %s", report_fmt_duration(d, sizeof d, p->limit));
        svg_text(h, 740, py - 5, "end", "small", buf);
    }
}

static void ck_table(hout *h, const ckpt *c, size_t n, double x0)
{
    size_t i = n > CK_TABLE_ROWS ? n - CK_TABLE_ROWS : 0;
    char a[48], b[48];

    fig_table_open(h, n > CK_TABLE_ROWS ? "The newest 60 checkpoints as a table"
                                        : "Checkpoints as a table",
                   "checkpoint|triggered after|duration|status");
    for (; i < n; i++)
        fprintf(h->f, "<tr><td class=\"num\">%lld</td><td class=\"num\">%s</td>"
                "<td class=\"num\">%s</td><td>%s</td></tr>\n", (long long)c[i].id,
                report_fmt_duration(a, sizeof a, c[i].x - x0),
                report_fmt_duration(b, sizeof b, c[i].y), c[i].failed ? "failed" : "completed");
    fig_table_end(h);
}

static void ck_desc(char *buf, size_t len, const ckplot *p, const ckpt *c, size_t n,
                    int partial)
{
    char span[48], first[48], last[48], slope[48], lim[48], cnt[48];

    snprintf(buf, len, "%s%s over %s, durations from %s to %s; trend %s per hour; "
             "limit %s%s.", fmt_count(cnt, sizeof cnt, (double)n, "checkpoint", NULL),
             partial ? " (the newest)" : "",
             report_fmt_duration(span, sizeof span, c[n - 1].x - c[0].x),
             report_fmt_duration(first, sizeof first, c[0].y),
             report_fmt_duration(last, sizeof last, c[n - 1].y),
             p->trend ? report_fmt_duration(slope, sizeof slope, p->slope * 3600000.0) : "n/a",
             p->limit > 0 ? report_fmt_duration(lim, sizeof lim, p->limit) : "unknown",
             isnan(p->cross) ? "" : "; the trend reaches it within the chart");
}

static void checkpoint_chart(hout *h, const struct op_run *r)
{
    ckpt *c = malloc(CK_MAX_POINTS * sizeof *c);
    ckplot p;
    char desc[512];
    size_t n;

    if (!c)
        return;
    n = load_checkpoints(r, c, CK_MAX_POINTS);
    if (n < 2) {
        free(c);
        return;
    }
    memset(&p, 0, sizeof p);
    p.trend = theil_sen(c, n, &p.slope, &p.icpt);
    p.limit = checkpoint_limit(h->ctx, r);
    ck_scales(&p, c, n);
    ck_desc(desc, sizeof desc, &p, c, n, n == CK_MAX_POINTS);
    fig_open(h, "flink-checkpoints", 760, 300, "Checkpoint duration over time", desc);
    svg_x_axis(h, &p.x, 270, 14, 1);
    svg_y_axis(h, &p.y, 72, 744);
    ck_lines(h, &p, c, n);
    ck_marks(h, &p, c, n);
    fig_svg_end(h, "End-to-end duration of each checkpoint (dots; crosses failed) against "
                   "the time since the first one shown, with the Theil-Sen trend (solid), "
                   "its projection (dashed) and the timeout (dashed line).");
    ck_table(h, c, n, c[0].x);
    fig_end(h);
    free(c);
}

/* ---- checkpoint phases ------------------------------------------------------ */

#define PH_N 4
static const char *const ph_key[PH_N] = {"start_delay_ms", "alignment_ms", "sync_ms",
                                          "async_ms"};
static const char *const ph_name[PH_N] = {"start delay", "alignment", "sync", "async"};
static const char *const ph_cls[PH_N] = {"bar-test", "bar-running", "bar-cp", "bar-ok"};

/* The slowest subtask of one vertex in the checkpoint shown. */
typedef struct phrow {
    const struct op_node *n;
    double ph[PH_N], total, state;
    int64_t subtask;
    int have;
} phrow;

static int ck_failed(const struct op_run *r, int64_t id)
{
    const mseries *s = model_find_series(r, "checkpoints");
    size_t i;

    for (i = 0; s && i < s->n; i++) {
        const mmap *f = &s->recs[i]->fields;
        const char *st = html_attr(f, "status");
        if ((int64_t)html_metric(f, "id") == id)
            return st && strcmp(st, "COMPLETED") != 0;
    }
    return 0;
}

static int sub_completed(const mmap *f)
{
    const char *st = html_attr(f, "status");
    return st && strcmp(st, "completed") == 0;
}

/* The newest completed checkpoint with subtask details, or -1: the newest
 * id below bound with a completed subtask, skipping failed checkpoints (a
 * few tries, so that a hostile series stays linear). */
static int64_t phase_checkpoint(const struct op_run *r, const mseries *s)
{
    int64_t bound = INT64_MAX;
    int tries;

    for (tries = 0; tries < 8; tries++) {
        int64_t best = -1;
        size_t i;
        for (i = 0; i < s->n; i++) {
            const mmap *f = &s->recs[i]->fields;
            double id = html_metric(f, "checkpoint_id");
            if (!isnan(id) && (int64_t)id > best && (int64_t)id < bound &&
                sub_completed(f))
                best = (int64_t)id;
        }
        if (best < 0 || !ck_failed(r, best))
            return best;
        bound = best;
    }
    return -1;
}

/* One row per vertex of r (at most max) with its slowest subtask of
 * checkpoint id. Returns the rows filled. */
static size_t load_phases(const struct op_run *r, const mseries *s, int64_t id,
                          phrow *rows, size_t max)
{
    size_t i, k, n = 0, out = 0;

    for (i = 0; i < r->nnodes && n < max; i++)
        if (r->nodes[i]->kind && strcmp(r->nodes[i]->kind, "vertex") == 0) {
            memset(&rows[n], 0, sizeof rows[n]);
            rows[n++].n = r->nodes[i];
        }
    for (i = 0; i < s->n; i++) {
        const mmap *f = &s->recs[i]->fields;
        const char *vid = html_attr(f, "vertex");
        double e2e = html_metric(f, "end_to_end_duration_ms");
        double st = html_metric(f, "state_size_bytes");
        if ((int64_t)html_metric(f, "checkpoint_id") != id || !vid || !sub_completed(f))
            continue;
        if (isnan(st))
            st = html_metric(f, "checkpointed_size_bytes");
        for (k = 0; k < n && strcmp(rows[k].n->id, vid) != 0; k++)
            ;
        if (k == n)
            continue;
        rows[k].state += isnan(st) ? 0 : st;
        if (isnan(e2e) || (rows[k].have && e2e <= rows[k].total))
            continue;
        rows[k].have = 1;
        rows[k].total = e2e;
        rows[k].subtask = (int64_t)html_metric(f, "subtask");
        for (int p = 0; p < PH_N; p++) {
            double v = html_metric(f, ph_key[p]);
            rows[k].ph[p] = isnan(v) || v < 0 ? 0 : v;
        }
    }
    for (i = 0; i < n; i++)
        if (rows[i].have)
            rows[out++] = rows[i];
    return out;
}

static void ph_legend(hout *h)
{
    double x = PH_BAR_X0;

    for (int p = 0; p < PH_N; p++) {
        fprintf(h->f, "<rect class=\"%s\" x=\"%.1f\" y=\"6\" width=\"10\" height=\"10\"/>",
                ph_cls[p], x);
        svg_text(h, x + 14, 15, "start", "small", ph_name[p]);
        x += 100;
    }
}

static void ph_bar(hout *h, const phrow *row, const hscale *x, double y)
{
    double at = 0;
    char d[48], label[128];

    fprintf(h->f, "<text x=\"10\" y=\"%.1f\" class=\"small\">", y + 13);
    html_put_trunc(h->f, row->n->name ? row->n->name : row->n->id, 32);
    fputs("</text>\n", h->f);
    for (int p = 0; p < PH_N; p++) {
        double w = hs_map(x, at + row->ph[p]) - hs_map(x, at);
        if (w > 0) {
            fprintf(h->f, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                    "height=\"16\"><title>%s %s</title></rect>\n", ph_cls[p],
                    hs_map(x, at), y, w, ph_name[p],
                    report_fmt_duration(d, sizeof d, row->ph[p]));
        }
        at += row->ph[p];
    }
    snprintf(label, sizeof label, "#%lld %s", (long long)row->subtask,
             report_fmt_duration(d, sizeof d, row->total));
    svg_text(h, PH_BAR_X0 - 6, y + 13, "end", "small", label);
}

static void ph_table(hout *h, const phrow *rows, size_t n)
{
    char b[PH_N + 2][48];

    fig_table_open(h, "Checkpoint phases as a table",
                   "vertex|slowest subtask|start delay|alignment|sync|async|end to end|"
                   "state (all subtasks)");
    for (size_t i = 0; i < n; i++) {
        fputs("<tr><td>", h->f);
        html_put(h->f, rows[i].n->name ? rows[i].n->name : rows[i].n->id);
        fprintf(h->f, "</td><td class=\"num\">%lld</td>", (long long)rows[i].subtask);
        for (int p = 0; p < PH_N; p++)
            fprintf(h->f, "<td class=\"num\">%s</td>",
                    report_fmt_duration(b[p], sizeof b[p], rows[i].ph[p]));
        fprintf(h->f, "<td class=\"num\">%s</td><td class=\"num\">%s</td></tr>\n",
                report_fmt_duration(b[PH_N], sizeof b[PH_N], rows[i].total),
                report_fmt_bytes(b[PH_N + 1], sizeof b[PH_N + 1], rows[i].state));
    }
    fig_table_end(h);
}

static void phases_chart(hout *h, const struct op_run *r)
{
    const mseries *s = model_find_series(r, "checkpoint_subtasks");
    phrow *rows;
    hscale x;
    char desc[512], d[48], cnt[48];
    double longest = 0;
    size_t n, i;
    int64_t id;

    if (!s || (id = phase_checkpoint(r, s)) < 0)
        return;
    rows = malloc(G_MAX_VERTICES * sizeof *rows);
    if (!rows)
        return;
    n = load_phases(r, s, id, rows, G_MAX_VERTICES);
    for (i = 0; i < n; i++)
        if (rows[i].total > longest)
            longest = rows[i].total;
    if (!n || longest <= 0) {
        free(rows);
        return;
    }
    snprintf(desc, sizeof desc, "Phases of checkpoint %lld on the slowest subtask of each of "
             "%s; the slowest took %s.", (long long)id,
             fmt_count(cnt, sizeof cnt, (double)n, "vertex", "vertices"),
             report_fmt_duration(d, sizeof d, longest));
    x = hs_make(0, hs_nice_ceil(longest), PH_BAR_X0, PH_BAR_X1);
    fig_open(h, "flink-checkpoint-phases", 760, 56 + (int)n * PH_ROW_H,
             "Checkpoint phases per vertex", desc);
    ph_legend(h);
    svg_x_axis(h, &x, 32 + (double)n * PH_ROW_H, 24, 1);
    for (i = 0; i < n; i++)
        ph_bar(h, &rows[i], &x, 28 + (double)i * PH_ROW_H);
    fig_svg_end(h, "Where the slowest subtask of each vertex spent the checkpoint: waiting "
                   "for the barrier (start delay), aligning its inputs, the synchronous "
                   "snapshot and the asynchronous upload. Start delay and alignment point at "
                   "backpressure, a long upload at the checkpoint storage.");
    ph_table(h, rows, n);
    fig_end(h);
    free(rows);
}

void html_charts_flink(hout *h, const struct op_run *r)
{
    job_graph(h, r);
    checkpoint_chart(h, r);
    phases_chart(h, r);
}
