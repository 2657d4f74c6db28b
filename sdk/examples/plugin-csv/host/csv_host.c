/*
 * csv_host.c - the csv example's host code: its entry in the engine table
 * (core/engine.h) with one HTML chart, the median and slowest task of each
 * stage, drawn with the report's SVG helpers (core/report_html.h). It
 * shows what an engine adds beside its parser without a core edit: CMake
 * builds the .c files of <engine>/host/ into the binary (OP_ENGINE_DIRS names this
 * folder) and generates the table entry from `op_engine_csv` below. The
 * parser (../csv.c) stays an external .so built against the SDK alone.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "report_html.h"

#define CSV_WIDTH 760
#define CSV_LEFT 140
#define CSV_ROW 22
#define CSV_TOP 12
#define CSV_MAX_ROWS 200 /* stages drawn; the table lists them all */

static const op_dist *duration_dist(const struct op_node *n)
{
    size_t i;

    for (i = 0; i < n->ndists; i++)
        if (strcmp(n->dists[i].metric, "duration_ms") == 0)
            return &n->dists[i].d;
    return NULL;
}

static void stage_row(hout *h, const hscale *x, double y, const struct op_node *n,
                      const op_dist *d)
{
    char a[48], b[48], label[128];

    svg_text(h, CSV_LEFT - 8, y + CSV_ROW / 2.0 + 3, "end", "small",
             n->name ? n->name : n->id);
    fprintf(h->f, "<g><title>median %s, slowest %s</title>\n",
            report_fmt_duration(a, sizeof a, d->p50),
            report_fmt_duration(b, sizeof b, d->max));
    fprintf(h->f, "<rect class=\"v-bp1\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>\n",
            hs_map(x, 0), y + 3, hs_map(x, d->max) - hs_map(x, 0), CSV_ROW - 6);
    fprintf(h->f, "<rect class=\"v-bp3\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>"
            "</g>\n", hs_map(x, 0), y + 3, hs_map(x, d->p50) - hs_map(x, 0), CSV_ROW - 6);
    snprintf(label, sizeof label, "%s / %s", a, b);
    svg_text(h, hs_map(x, d->max) + 6, y + CSV_ROW / 2.0 + 3, "start", "small", label);
}

static void csv_charts(hout *h, const struct op_run *r)
{
    size_t i, rows = 0;
    double xmax = 0;
    char desc[160];
    int height;
    hscale x;

    for (i = 0; i < r->nnodes; i++) {
        const op_dist *d = duration_dist(r->nodes[i]);
        if (d && rows < CSV_MAX_ROWS) {
            rows++;
            xmax = fmax(xmax, d->max);
        }
    }
    if (!rows)
        return;
    height = CSV_TOP + (int)rows * CSV_ROW + 34;
    x = hs_make(0, xmax * 1.05 + 1, CSV_LEFT, CSV_WIDTH - 120);
    snprintf(desc, sizeof desc, "Per stage: the median task (dark) and the slowest "
             "task (light) of %zu stages.", rows);
    fig_open(h, "csv-stages", CSV_WIDTH, height, "Median and slowest task per stage", desc);
    svg_x_axis(h, &x, height - 24, CSV_TOP, 1);
    for (i = 0, rows = 0; i < r->nnodes && rows < CSV_MAX_ROWS; i++) {
        const op_dist *d = duration_dist(r->nodes[i]);
        if (d)
            stage_row(h, &x, CSV_TOP + rows++ * CSV_ROW, r->nodes[i], d);
    }
    fig_svg_end(h, "A light bar far longer than its dark one is a straggler "
                   "(csv.straggler).");
    fig_table_open(h, "Stages as a table", "stage|tasks|median|slowest");
    for (i = 0; i < r->nnodes; i++) {
        const op_dist *d = duration_dist(r->nodes[i]);
        char a[48], b[48];
        if (!d)
            continue;
        fputs("<tr><td>", h->f);
        html_put(h->f, r->nodes[i]->name ? r->nodes[i]->name : r->nodes[i]->id);
        fprintf(h->f, "</td><td class=\"num\">%.0f</td><td class=\"num\">%s</td>"
                "<td class=\"num\">%s</td></tr>\n", d->count,
                report_fmt_duration(a, sizeof a, d->p50),
                report_fmt_duration(b, sizeof b, d->max));
    }
    fig_table_end(h);
    fig_end(h);
}

const op_engine op_engine_csv = {
    .size = sizeof(op_engine),
    .source = "csv",
    .html_charts = csv_charts,
};
