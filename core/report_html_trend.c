/*
 * report_html_trend.c - the trend chart of `optipipe history runs --format
 * html` (docs/history.md): one metric per stored run, oldest to newest, as
 * inline SVG drawn with the HTML report's primitives (report_html_svg.c),
 * with its data as a table underneath.
 */
#include <math.h>

#include "fmt.h"
#include "report_html.h"

enum { TW = 720, TH = 260, TL = 70, TR = 16, TT = 14, TB = 40 };

static void value_text(char *buf, size_t n, double v, int time)
{
    if (time)
        report_fmt_duration(buf, n, v);
    else
        fmt_number(buf, n, v);
}

static void points(hout *h, const hscale *x, const hscale *y,
                   const double *v, size_t n)
{
    size_t i;

    fputs("<polyline class=\"trend\" fill=\"none\" points=\"", h->f);
    for (i = 0; i < n; i++)
        fprintf(h->f, "%s%.1f,%.1f", i ? " " : "", hs_map(x, (double)i),
                hs_map(y, v[i]));
    fputs("\"/>\n", h->f);
    for (i = 0; i < n; i++)
        fprintf(h->f, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"/>\n",
                hs_map(x, (double)i), hs_map(y, v[i]));
}

void html_trend_chart(hout *h, const char *title, const char *metric,
                      const char *const *labels, const double *v, size_t n,
                      int time)
{
    double lo = INFINITY, hi = -INFINITY;
    char desc[256], a[64], b[64];
    hscale x, y;
    size_t i;

    if (!n)
        return;
    for (i = 0; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    value_text(a, sizeof a, lo, time);
    value_text(b, sizeof b, hi, time);
    snprintf(desc, sizeof desc, "%s of %zu runs, oldest to newest: from %s to %s",
             metric, n, a, b);
    fig_open(h, "trend", TW, TH, title, desc);
    lo = lo > 0 ? 0 : lo;
    hi = hi > lo ? hs_nice_ceil(hi) : lo + 1;
    x = hs_make(0, n > 1 ? (double)(n - 1) : 1, TL + 8, TW - TR - 8);
    y = hs_make(lo, hi, TH - TB, TT);
    svg_y_axis_as(h, &y, TL, TW - TR, time);
    svg_text(h, TL, TH - TB + 18, "start", NULL, labels[0]);
    if (n > 1)
        svg_text(h, TW - TR, TH - TB + 18, "end", NULL, labels[n - 1]);
    points(h, &x, &y, v, n);
    fig_svg_end(h, desc);
    fig_table_open(h, "Data", "run|value");
    for (i = 0; i < n; i++) {
        value_text(a, sizeof a, v[i], time);
        fputs("<tr><td>", h->f);
        html_put(h->f, labels[i]);
        fputs("</td><td>", h->f);
        html_put(h->f, a);
        fputs("</td></tr>\n", h->f);
    }
    fig_table_end(h);
    fig_end(h);
}
