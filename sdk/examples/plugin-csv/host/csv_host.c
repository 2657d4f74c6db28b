/*
 * csv_host.c - the csv example's host code: its entry in the engine table
 * (core/engine.h) with one HTML chart, the median and slowest task of each
 * stage, drawn with the report's SVG helpers (core/report_html.h) in its
 * own CSS classes; and `optipipe fetch csv URL` (also `analyze URL` for a
 * URL ending in .csv) with an option of its own, --csv-rows. It shows what
 * an engine adds beside its parser without a core or CLI edit: CMake
 * builds the .c files of <engine>/host/ into the binary (OP_ENGINE_DIRS
 * names this folder) and generates the table entry from `op_engine_csv`
 * below; the CLI builds the fetch command, its --help and its docs from
 * the entry. The parser (../csv.c) stays an external .so built against the
 * SDK alone.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "engine.h"
#include "fetch.h"
#include "fetch_http.h"
#include "opts.h"
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
    fprintf(h->f, "<rect class=\"csv-max\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>\n",
            hs_map(x, 0), y + 3, hs_map(x, d->max) - hs_map(x, 0), CSV_ROW - 6);
    fprintf(h->f, "<rect class=\"csv-p50\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\"/>"
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

/* ---- fetch csv --------------------------------------------------------- */

#define CSV_FETCH_MAX (256ull << 20) /* a response, unless --max-size */

/* The engine's own options (op_engine_options): rows bound to this. */
typedef struct csv_fetch_opts {
    uint64_t rows; /* data rows kept after the header; 0: all */
} csv_fetch_opts;

static const opt_spec csv_specs[] = {
    {"--csv-rows", NULL, .type = OPT_INT, .off = offsetof(csv_fetch_opts, rows),
     .width = sizeof(uint64_t), .lo = 0, .hi = 1e12, .metavar = "N",
     .def = "0",
     .help = "keep the header and the first N rows of a fetched csv (0: "
             "all); the rows left out are counted on stderr"},
    {.name = NULL}};

static const op_engine_options csv_options = {
    "CSV over HTTP (URL inputs ending in .csv, fetch csv)", csv_specs,
    sizeof(csv_fetch_opts), NULL,
};

/* The length of the header and the first rows lines of body, and how
 * many lines follow. */
static size_t cut_rows(const char *body, size_t len, uint64_t rows,
                       uint64_t *left_out)
{
    size_t at = 0;
    uint64_t line = 0;

    *left_out = 0;
    while (at < len) {
        const char *nl = memchr(body + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - body) + 1 : len;
        if (line++ > rows) { /* line 0 is the header */
            size_t keep = at;
            for (; at < len; (*left_out)++) {
                nl = memchr(body + at, '\n', len - at);
                at = nl ? (size_t)(nl - body) + 1 : len;
            }
            return keep;
        }
        at = end;
    }
    return len;
}

static int csv_fetch(const char *url, const fetch_opts *o, const void *eo,
                     char **buf, size_t *len, op_error *err)
{
    const csv_fetch_opts *co = eo;
    http_client *c = NULL;
    http_resp r;
    uint64_t left_out = 0;
    int rc;

    *buf = NULL;
    *len = 0;
    memset(&r, 0, sizeof r);
    if ((rc = http_client_new(o, &c, err)))
        return rc == OP_ENOMEM ? FETCH_ENOTHING : FETCH_EUSAGE;
    rc = http_get(c, url, o->max_response ? o->max_response : CSV_FETCH_MAX,
                  &r, err);
    if (!rc && (r.status < 200 || r.status > 299))
        rc = op_error_set(err, OP_EIO, "GET %.300s: HTTP %ld %s", url,
                          r.status, http_reason(r.status));
    if (!rc) {
        *len = co && co->rows ? cut_rows(r.body, r.len, co->rows, &left_out)
                              : r.len;
        r.body[*len] = '\0';
        *buf = r.body; /* the caller's now */
        r.body = NULL;
        if (left_out && o->diag && !o->quiet)
            fprintf(o->diag, "optipipe: fetch: %llu row(s) left out "
                    "(--csv-rows %llu)\n", (unsigned long long)left_out,
                    (unsigned long long)co->rows);
    }
    http_resp_free(&r);
    http_client_free(c);
    return rc ? FETCH_ENOTHING : FETCH_OK;
}

/* A URL whose path ends in .csv (before any query or fragment). */
static int csv_url_score(const char *url)
{
    size_t n = strcspn(url, "?#");

    return fetch_is_url(url) && n >= 4 && strncasecmp(url + n - 4, ".csv", 4) == 0
               ? 50 : 0;
}

static const op_engine_fetch csv_fetch_entry = {
    .name = "csv",
    .to_memory = csv_fetch,
    .url_score = csv_url_score,
    .summary = "download a csv of stage tasks (the SDK example engine)",
    .about = "GETs URL, a csv the example plugin reads (sdk/examples/"
             "plugin-csv), and writes it to -o FILE or stdout.",
    .output_help = "where to write the csv",
};

/* The chart's classes: its own, so that no other engine's palette is
 * borrowed. */
static const char csv_css[] =
    ".csv-max{fill:#f0c987}.csv-p50{fill:#9a5b00}\n";

const op_engine op_engine_csv = {
    .size = sizeof(op_engine),
    .source = "csv",
    .html_charts = csv_charts,
    .fetch = &csv_fetch_entry,
    .options = &csv_options,
    .html_css = csv_css,
};
