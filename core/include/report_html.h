/*
 * report_html.h - internals of the HTML report, shared by the page
 * (report_html.c), the SVG primitives (report_html_svg.c) and the charts of
 * each engine (op_engine.html_charts, engine.h: <engine>/host/).
 *
 * Charts are drawn here, in C, as inline SVG: the page needs no script to
 * show them, prints as it looks, and stays one file. Every string from an
 * input goes through html_put() or html_put_trunc().
 */
#ifndef OP_CORE_REPORT_HTML_H
#define OP_CORE_REPORT_HTML_H

#include "report_util.h"

typedef struct hout {
    FILE *f;
    const report_ctx *ctx;
    unsigned nfig; /* figures written: makes element ids unique */
    int strict;    /* the page's CSP forbids style attributes (optipipe
                    * serve): figures leave their max-width to the
                    * stylesheet */
} hout;

/* A linear map from the data range [d0, d1] to pixels [r0, r1]. */
typedef struct hscale {
    double d0, d1, r0, r1;
} hscale;

#define HTML_MAX_TICKS 16

/* Writes s escaped for HTML text and attribute values (&, <, >, ", '),
 * without control characters and with broken UTF-8 replaced. */
void html_put(FILE *f, const char *s);

/* The same, cut after max characters with an ellipsis. */
void html_put_trunc(FILE *f, const char *s, size_t max);

/* printf-style, then escaped (at most 1 KiB). */
void html_printf(FILE *f, const char *fmt, ...) OP_PRINTF(2, 3);

hscale hs_make(double d0, double d1, double r0, double r1);
double hs_map(const hscale *s, double v);

/* Up to max "nice" tick values (1, 2, 5 × 10^k steps) covering [lo, hi]
 * into out; returns how many. */
size_t hs_ticks(double lo, double hi, size_t want, double *out, size_t max);

/* Rounds v up to the next nice value (for an axis end). */
double hs_nice_ceil(double v);

/* Opens a figure: <figure><svg data-chart=chart ...> with a <title> and a
 * <desc> (the text alternative screen readers announce). */
void fig_open(hout *h, const char *chart, int width, int height,
              const char *title, const char *desc);

/* Closes the <svg> and writes the caption; the caller may then add a data
 * table (fig_table_open) before fig_end(). */
void fig_svg_end(hout *h, const char *caption);
void fig_end(hout *h);

/* A collapsible data table under a chart: "<details><table><tr><th>...".
 * heads is a '|'-separated list of column names. Close with
 * fig_table_end(). */
void fig_table_open(hout *h, const char *summary, const char *heads);
void fig_table_end(hout *h);

/* Writes a horizontal axis at y from scale x, labelled as durations in ms
 * (time = 1) or plain numbers. */
void svg_x_axis(hout *h, const hscale *x, double y, double top, int time);

/* A vertical axis at x from scale y (durations in ms). */
void svg_y_axis(hout *h, const hscale *y, double x, double right);
/* The same, labelled as durations (time = 1) or plain numbers. */
void svg_y_axis_as(hout *h, const hscale *y, double x, double right, int time);

/* <text> at x, y; anchor "start" | "middle" | "end"; cls may be NULL. */
void svg_text(hout *h, double x, double y, const char *anchor,
              const char *cls, const char *s);

/* The first shown finding in run of rule (NULL: any rule) on node (NULL:
 * any node), or NULL: charts mark what the findings talk about. */
const finding *html_finding_on(const report_ctx *ctx, size_t run,
                               const char *rule, const char *node);

/* A number metric of a node/run map, or NAN. */
double html_metric(const mmap *m, const char *key);

/* A string attr, or NULL. */
const char *html_attr(const mmap *m, const char *key);

/* The head (inline CSS, a no-script CSP) and end of a page of another
 * command than analyze (diff, history runs); title is escaped. */
void html_page_open(FILE *f, const char *title);
void html_page_close(FILE *f);

/* A finding's proposed changes (a JSON array of {target, key, from, to})
 * as <pre class="change"> and its evidence (an object) as a <dl>; nothing
 * when absent or empty. Shared with optipipe serve's finding pages. */
void html_put_changes(FILE *f, const cJSON *changes);
void html_put_evidence(FILE *f, const cJSON *evidence);

/* The start of the style attribute fig_open gives a figure's <svg>
 * unless hout.strict: its max-width in px. */
#define HTML_FIG_STYLE "style=\"max-width:"

/* Copies a report that report_html wrote (in, n bytes) to f as a page a
 * strict CSP (no inline script or style) allows, for optipipe serve: its
 * CSP meta tag, inline stylesheet and self-test script are left out, the
 * stylesheet is linked from css_href instead (a stylesheet that holds
 * html_report_css()), and the figures lose their style attribute. The
 * rest is copied byte for byte. OP_EPARSE when in is not such a report
 * (another version's, or cut), OP_EIO on a write error. */
int html_report_strict(FILE *f, const char *in, size_t n, const char *css_href);

/* The report's stylesheet (what html_page_open inlines), for pages that
 * link it instead (optipipe serve's /static/app.css). Static. */
const char *html_report_css(void);

/* A line chart of one value per run, oldest to newest (labels[i] names
 * run i, e.g. its start), with its data table: history runs' trend. time:
 * values are durations in ms. Writes nothing when n is 0. */
void html_trend_chart(hout *h, const char *title, const char *metric,
                      const char *const *labels, const double *v, size_t n,
                      int time);

/* The charts the HTML report draws for a run (its engine's html_charts),
 * for run r of the run store st: the run and its nodes (times, status,
 * metrics, attrs, distributions) rebuilt as a one-run model, drawn for a
 * strict CSP (no style attribute). Series are not stored: charts drawn
 * from them are left out; no finding is marked. A run of more than
 * max_nodes nodes is OP_ELIMIT, nothing written. *nfig gets the figures
 * written (0: the engine has nothing to draw). The caller owns f, st and
 * r. Returns 0 or an op_status with err. */
struct store;
struct store_run;
int html_stored_charts(FILE *f, struct store *st, const struct store_run *r,
                       size_t max_nodes, unsigned *nfig, op_error *err);

#endif
