/*
 * report_html_svg.c - the drawing primitives of the HTML report: escaping,
 * linear scales with nice ticks, axes, figures with their text
 * alternatives, and lookups the charts share.
 */
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "report_html.h"

static void put_escaped_cp(FILE *f, const char *p, size_t k, uint32_t cp)
{
    switch (cp) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&#39;", f); break;
    case '\n': case '\t': case '\r': fputc(' ', f); break;
    default:
        if (utf8_is_control(cp))
            break;
        if (cp == 0xfffd && k == 1)
            fputs("\xef\xbf\xbd", f);
        else
            fwrite(p, 1, k, f);
    }
}

void html_put_trunc(FILE *f, const char *s, size_t max)
{
    const char *p = s ? s : "";
    uint32_t cp;
    size_t k, n = 0;

    while ((k = utf8_next(p, &cp, NULL))) {
        if (n++ == max) {
            fputs("\xe2\x80\xa6", f); /* ellipsis */
            return;
        }
        put_escaped_cp(f, p, k, cp);
        p += k;
    }
}

void html_put(FILE *f, const char *s)
{
    html_put_trunc(f, s, SIZE_MAX);
}

void html_printf(FILE *f, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    html_put(f, buf);
}

hscale hs_make(double d0, double d1, double r0, double r1)
{
    hscale s = {d0, d1 > d0 ? d1 : d0 + 1, r0, r1};
    return s;
}

double hs_map(const hscale *s, double v)
{
    return s->r0 + (v - s->d0) * (s->r1 - s->r0) / (s->d1 - s->d0);
}

static double nice_step(double range, size_t want)
{
    double raw = range / (double)(want ? want : 1);
    double mag = pow(10, floor(log10(raw)));
    double frac = raw / mag;

    return (frac <= 1 ? 1 : frac <= 2 ? 2 : frac <= 5 ? 5 : 10) * mag;
}

double hs_nice_ceil(double v)
{
    double step;

    if (!(v > 0) || !isfinite(v))
        return 1;
    step = nice_step(v, 5);
    return ceil(v / step - 1e-9) * step;
}

size_t hs_ticks(double lo, double hi, size_t want, double *out, size_t max)
{
    double step, t;
    size_t n = 0;

    if (!(hi > lo) || !isfinite(lo) || !isfinite(hi))
        return 0;
    step = nice_step(hi - lo, want);
    for (t = ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9 && n < max; t += step)
        out[n++] = fabs(t) < step * 1e-9 ? 0 : t;
    return n;
}

/* Durations tick nicely on 1-2-5 steps of seconds or minutes when the
 * range is a few minutes or more. */
static size_t time_ticks(double lo, double hi, double *out, size_t max)
{
    static const double steps[] = {1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900,
                                   1800, 3600, 7200, 10800, 21600, 43200, 86400};
    double range = (hi - lo) / 1000, step = 0, t;
    size_t i, n = 0;

    if (range < 5)
        return hs_ticks(lo, hi, 6, out, max);
    for (i = 0; i < sizeof steps / sizeof steps[0] && !step; i++)
        if (range / steps[i] <= 7)
            step = steps[i] * 1000;
    if (!step)
        return hs_ticks(lo, hi, 6, out, max);
    for (t = ceil(lo / step - 1e-9) * step; t <= hi + 1e-6 && n < max; t += step)
        out[n++] = t;
    return n;
}

void svg_text(hout *h, double x, double y, const char *anchor,
              const char *cls, const char *s)
{
    fprintf(h->f, "<text x=\"%.1f\" y=\"%.1f\"", x, y);
    if (anchor && strcmp(anchor, "start") != 0)
        fprintf(h->f, " text-anchor=\"%s\"", anchor);
    if (cls)
        fprintf(h->f, " class=\"%s\"", cls);
    fputc('>', h->f);
    html_put(h->f, s);
    fputs("</text>\n", h->f);
}

/* A tick's label; a number of a million or more with an SI suffix
 * ("500G", "1.5M"): the axes leave about 60 px for a label, and twelve
 * digits (a dbt job's bytes_billed) were cut at the chart's edge. */
static void tick_label(char *buf, size_t n, double v, int time)
{
    static const struct { double f; const char *s; } si[] = {
        {1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}};
    size_t i;

    if (v == 0) {
        snprintf(buf, n, "0");
    } else if (time) {
        report_fmt_duration(buf, n, v);
    } else {
        for (i = 0; i < sizeof si / sizeof *si; i++)
            if (fabs(v) >= si[i].f && fabs(v) < 1e18) {
                snprintf(buf, n, "%.3g%s", v / si[i].f, si[i].s);
                return;
            }
        fmt_number(buf, n, v);
    }
}

void svg_x_axis(hout *h, const hscale *x, double y, double top, int time)
{
    double ticks[HTML_MAX_TICKS];
    size_t n = time ? time_ticks(x->d0, x->d1, ticks, HTML_MAX_TICKS)
                    : hs_ticks(x->d0, x->d1, 6, ticks, HTML_MAX_TICKS);
    char buf[64];
    size_t i;

    fprintf(h->f, "<g class=\"axis\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            x->r0, y, x->r1, y);
    for (i = 0; i < n; i++) {
        double px = hs_map(x, ticks[i]);
        fprintf(h->f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                px, top, px, y);
        tick_label(buf, sizeof buf, ticks[i], time);
        svg_text(h, px, y + 16, "middle", NULL, buf);
    }
    fputs("</g>\n", h->f);
}

void svg_y_axis(hout *h, const hscale *y, double x, double right)
{
    svg_y_axis_as(h, y, x, right, 1);
}

void svg_y_axis_as(hout *h, const hscale *y, double x, double right, int time)
{
    double ticks[HTML_MAX_TICKS];
    size_t n = time ? time_ticks(y->d0, y->d1, ticks, HTML_MAX_TICKS)
                    : hs_ticks(y->d0, y->d1, 6, ticks, HTML_MAX_TICKS), i;
    char buf[64];

    fprintf(h->f, "<g class=\"axis\"><line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
            x, y->r0, x, y->r1);
    for (i = 0; i < n; i++) {
        double py = hs_map(y, ticks[i]);
        fprintf(h->f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
                x, py, right, py);
        tick_label(buf, sizeof buf, ticks[i], time);
        svg_text(h, x - 6, py + 4, "end", NULL, buf);
    }
    fputs("</g>\n", h->f);
}

void fig_open(hout *h, const char *chart, int width, int height,
              const char *title, const char *desc)
{
    unsigned id = ++h->nfig;

    fputs("<figure class=\"chart\">\n<div class=\"fig-title\" aria-hidden=\"true\">", h->f);
    html_put(h->f, title);
    fprintf(h->f, "</div>\n<svg data-chart=\"%s\" id=\"fig-%u\" "
            "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" ",
            chart, id, width, height, width, height);
    if (!h->strict)
        fprintf(h->f, HTML_FIG_STYLE "%dpx\" ", width);
    fprintf(h->f, "role=\"img\" aria-labelledby=\"fig-%u-t fig-%u-d\" "
            "xmlns=\"http://www.w3.org/2000/svg\">\n", id, id);
    fprintf(h->f, "<title id=\"fig-%u-t\">", id);
    html_put(h->f, title);
    fprintf(h->f, "</title>\n<desc id=\"fig-%u-d\">", id);
    html_put(h->f, desc);
    fputs("</desc>\n", h->f);
}

void fig_svg_end(hout *h, const char *caption)
{
    fputs("</svg>\n<figcaption>", h->f);
    html_put(h->f, caption);
    fputs("</figcaption>\n", h->f);
}

void fig_end(hout *h)
{
    fputs("</figure>\n", h->f);
}

void fig_table_open(hout *h, const char *summary, const char *heads)
{
    const char *p = heads, *bar;

    fputs("<details class=\"data\"><summary>", h->f);
    html_put(h->f, summary);
    fputs("</summary>\n<table><thead><tr>", h->f);
    while (p) {
        char col[128];
        size_t n;
        bar = strchr(p, '|');
        n = bar ? (size_t)(bar - p) : strlen(p);
        snprintf(col, sizeof col, "%.*s", (int)(n < sizeof col ? n : sizeof col - 1), p);
        fputs("<th scope=\"col\">", h->f);
        html_put(h->f, col);
        fputs("</th>", h->f);
        p = bar ? bar + 1 : NULL;
    }
    fputs("</tr></thead><tbody>\n", h->f);
}

void fig_table_end(hout *h)
{
    fputs("</tbody></table></details>\n", h->f);
}

const finding *html_finding_on(const report_ctx *ctx, size_t run,
                               const char *rule, const char *node)
{
    size_t i;

    for (i = 0; i < ctx->res->n; i++) {
        const finding *f = &ctx->res->f[i];
        if (f->run_index == run && report_visible(ctx, f) &&
            (!rule || strcmp(f->rule, rule) == 0) &&
            (!node || (f->node_id && strcmp(f->node_id, node) == 0)))
            return f;
    }
    return NULL;
}

double html_metric(const mmap *m, const char *key)
{
    const mentry *e = mmap_get(m, key);

    if (!e)
        return NAN;
    if (mentry_type(e) == MV_INT)
        return (double)e->u.i;
    if (mentry_type(e) == MV_NUM)
        return e->u.n;
    if (mentry_type(e) == MV_BOOL)
        return e->u.b;
    return NAN;
}

const char *html_attr(const mmap *m, const char *key)
{
    const mentry *e = mmap_get(m, key);

    return e && mentry_type(e) == MV_STR ? e->u.s : NULL;
}
