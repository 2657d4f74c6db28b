/*
 * report_html.c - the HTML report: one self-contained page (inline CSS and
 * SVG, no network, no external scripts, fonts or images) with a summary,
 * then per run its findings and the charts that explain them (drawn by
 * the run's engine: op_engine.html_charts, engine.h).
 *
 * Safety: every string from inputs or rules is HTML-escaped (html_put),
 * and a Content-Security-Policy allows no network at all and only the one
 * inline script below, by its hash, so even a missed escape could not run
 * code. That script only acts when the page is opened as report.html#selftest:
 * it measures the charts and writes a verdict for the browser test
 * (tests/e2e/report_browser.sh). Its hash is checked by that test too.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "report_html.h"

/* The only script; CSP_SCRIPT_HASH is sha256 of exactly these bytes. */
static const char selftest_js[] =
    "(function(){if(location.hash!==\"#selftest\")return;"
    "var out={ok:true,charts:[]};"
    "document.querySelectorAll(\"svg[data-chart]\").forEach(function(s){"
    "var r=s.getBoundingClientRect();"
    "out.charts.push({chart:s.getAttribute(\"data-chart\"),"
    "width:Math.round(r.width),height:Math.round(r.height)});"
    "if(!(r.width>0&&r.height>0))out.ok=false;});"
    "document.getElementById(\"selftest\").textContent=JSON.stringify(out);})();";
#define CSP_SCRIPT_HASH "sha256-oGABYHz6ZXIifcVM6x4KDghADiCKo4pPn2HWKibgszU="

/* The report's own rules; each engine's (op_engine.html_css) follow them
 * in stylesheet(). */
static const char core_css[] =
    ":root{color-scheme:light;--fg:#1b1b1b;--muted:#555;--line:#d0d0d0;--card:#fafafa;"
    "--err:#b3261e;--warn:#8a4b00;--info:#0b5cad}\n"
    "*{box-sizing:border-box}\n"
    "body{margin:0;font:15px/1.5 system-ui,-apple-system,\"Segoe UI\",Roboto,Arial,sans-serif;"
    "color:var(--fg);background:#fff}\n"
    "main{max-width:1120px;margin:0 auto;padding:24px}\n"
    "h1{font-size:1.6em;margin:0}h2{font-size:1.3em;margin:40px 0 2px;padding-top:12px;"
    "border-top:3px solid var(--line)}h3{font-size:1.1em;margin:24px 0 8px}"
    "h4{font-size:1em;margin:0 0 6px}\n"
    ".meta{color:var(--muted);margin:0 0 12px}\n"
    ".tiles{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}"
    ".tile{border:1px solid var(--line);border-radius:6px;padding:8px 16px;min-width:110px}"
    ".tile b{display:block;font-size:1.7em;line-height:1.2}\n"
    ".sev{display:inline-block;font-size:.78em;font-weight:700;padding:0 8px;border-radius:10px;"
    "color:#fff;text-transform:uppercase;letter-spacing:.04em;vertical-align:1px}"
    ".sev-error{background:var(--err)}.sev-warning{background:var(--warn)}"
    ".sev-info{background:var(--info)}\n"
    ".finding{border:1px solid var(--line);border-left:6px solid var(--info);border-radius:4px;"
    "background:var(--card);padding:12px 16px;margin:12px 0;break-inside:avoid}"
    ".finding.error{border-left-color:var(--err)}.finding.warning{border-left-color:var(--warn)}\n"
    ".finding p{margin:6px 0}.node{font-weight:400;color:var(--muted)}\n"
    "table{border-collapse:collapse;font-size:.88em;margin:8px 0}"
    "th,td{border:1px solid var(--line);padding:2px 8px;text-align:left;vertical-align:top}"
    "th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9em}"
    "pre.change{background:#f1f1f1;border-radius:4px;padding:8px 12px;overflow-x:auto;"
    "white-space:pre-wrap}.del{color:#8b0000}.add{color:#005a00}.target{color:var(--muted)}\n"
    "figure{margin:20px 0;break-inside:avoid}figure svg{display:block;width:100%;height:auto;"
    "border:1px solid var(--line);border-radius:4px;background:#fff}"
    "figcaption{color:var(--muted);font-size:.88em;margin-top:4px}"
    ".fig-title{font-weight:600;margin-bottom:4px}"
    ".row{display:flex;flex-wrap:wrap;gap:16px}.row figure{flex:1 1 420px;max-width:560px}\n"
    "details.data summary{cursor:pointer;color:var(--muted);font-size:.88em}\n"
    "dl.evidence{display:grid;grid-template-columns:repeat(auto-fill,minmax(230px,1fr));"
    "gap:2px 16px;margin:8px 0 0;font-size:.85em}dl.evidence div{display:flex;gap:8px;"
    "min-width:0;border-bottom:1px dotted var(--line)}dl.evidence dt{font-family:ui-monospace,"
    "SFMono-Regular,Menlo,Consolas,monospace;color:var(--muted)}dl.evidence dd{margin:0 0 0 auto;"
    "text-align:right;overflow-wrap:anywhere;font-variant-numeric:tabular-nums}\n"
    "svg text{font-family:system-ui,-apple-system,\"Segoe UI\",Roboto,Arial,sans-serif;"
    "font-size:12px;fill:#1b1b1b}"
    "svg .small{font-size:11px}svg .tiny{font-size:9.5px}svg .strong{font-weight:700}\n"
    ".axis line{stroke:#444}.axis .grid{stroke:#e4e4e4}\n"
    ".pt{fill:#0072b2}.pt-fail{stroke:#c04a00;stroke-width:2;fill:none}"
    ".trend{stroke:#c04a00;stroke-width:2}.proj{stroke-dasharray:6 4}"
    ".limit{stroke:#000;stroke-width:1.2;stroke-dasharray:4 3}\n"
    ".bar-ok,.bar-node{fill:#56b4e9}.bar-failed,.bar-cp{fill:#c04a00}.bar-running{fill:#e69f00}"
    ".bar-test{fill:#c8c8c8}\n"
    ".start ol{margin:4px 0 16px;padding-left:24px}.start li{margin:4px 0}"
    ".start .rec{color:var(--muted);font-size:.92em}\n"
    "footer{margin-top:40px;color:var(--muted);font-size:.85em}\n"
    "@media print{body{font-size:11pt}main{max-width:none;padding:0}details.data{display:none}"
    "h2{break-after:avoid}.finding,figure{break-inside:avoid}"
    ".finding{background:none}}\n";

#define CSS_MAX 32768 /* the whole stylesheet, engines' rules included */

static char css_buf[CSS_MAX];
static pthread_once_t css_once = PTHREAD_ONCE_INIT;

/* The core rules, then each engine's in table order; an engine's rules
 * that do not fit are left out with a note on stderr (a build mistake:
 * the report test sees it). */
static void css_build(void)
{
    const op_engine *e;
    size_t i, used = strlen(core_css);

    memcpy(css_buf, core_css, used + 1);
    for (i = 0; (e = op_builtin_engines[i]) != NULL; i++) {
        const char *add = ENGINE_HAS(e, html_css) ? e->html_css : NULL;
        size_t n = add ? strlen(add) : 0;
        if (!n)
            continue;
        if (used + n + 1 > sizeof css_buf) {
            fprintf(stderr, "optipipe: report stylesheet: no room for "
                    "engine '%s' (CSS_MAX %d)\n", e->source, CSS_MAX);
            continue;
        }
        memcpy(css_buf + used, add, n + 1);
        used += n;
    }
}

/* The report's stylesheet (built once; then read-only, so threads may
 * share it). */
static const char *stylesheet(void)
{
    pthread_once(&css_once, css_build);
    return css_buf;
}

static const char *sev_class(severity s)
{
    return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "info";
}

/* The report's head around its stylesheet, and its script's element:
 * html_report_strict finds them by these exact bytes. */
#define HEAD_CSP "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src " \
    "'none'; style-src 'unsafe-inline'; img-src data:; script-src '" CSP_SCRIPT_HASH "'\">\n"
#define HEAD_STYLE_OPEN "<style>\n"
#define HEAD_STYLE_CLOSE "</style>\n"
#define SCRIPT_OPEN "<script>"
#define SCRIPT_CLOSE "</script>\n"

static void put_head(hout *h)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          HEAD_CSP "<title>opti-pipe report</title>\n" HEAD_STYLE_OPEN, h->f);
    fputs(stylesheet(), h->f);
    fputs(HEAD_STYLE_CLOSE "</head>\n<body>\n<main>\n", h->f);
}

/* The first occurrence of the n bytes of needle in [p, end), or NULL. */
static const char *find(const char *p, const char *end, const char *needle)
{
    size_t k = strlen(needle);

    for (; p && (size_t)(end - p) >= k; p++)
        if (!memcmp(p, needle, k))
            return p;
    return NULL;
}

/* Writes [p, end) without the figures' style attributes (fig_open's
 * HTML_FIG_STYLE, then digits and px"): no input string can hold a bare
 * '"', so only fig_open wrote that sequence. */
static void put_unstyled(FILE *f, const char *p, const char *end)
{
    const char *at;

    while ((at = find(p, end, " " HTML_FIG_STYLE))) {
        const char *q = at + 1 + strlen(HTML_FIG_STYLE);
        while (q < end && *q >= '0' && *q <= '9')
            q++;
        if ((size_t)(end - q) < 3 || memcmp(q, "px\"", 3)) {
            fwrite(p, 1, (size_t)(q - p), f);
            p = q;
            continue;
        }
        fwrite(p, 1, (size_t)(at - p), f);
        p = q + 3;
    }
    fwrite(p, 1, (size_t)(end - p), f);
}

int html_report_strict(FILE *f, const char *in, size_t n, const char *css_href)
{
    const char *end = in + n, *csp = find(in, end, HEAD_CSP);
    const char *style = csp ? find(csp, end, HEAD_STYLE_OPEN) : NULL;
    const char *body = style ? style + strlen(HEAD_STYLE_OPEN) : NULL;
    const char *script, *after;
    const char *css = stylesheet();
    size_t ncss = strlen(css);

    if (!body || (size_t)(end - body) < ncss + strlen(HEAD_STYLE_CLOSE) ||
        memcmp(body, css, ncss) || memcmp(body + ncss, HEAD_STYLE_CLOSE,
                                          strlen(HEAD_STYLE_CLOSE)))
        return OP_EPARSE;
    body += ncss + strlen(HEAD_STYLE_CLOSE);
    script = find(body, end, SCRIPT_OPEN "(function(){if(location.hash");
    after = script ? find(script, end, SCRIPT_CLOSE) : NULL;
    if (!after || find(after, end, SCRIPT_OPEN))
        return OP_EPARSE;
    fwrite(in, 1, (size_t)(csp - in), f);
    fwrite(csp + strlen(HEAD_CSP), 1, (size_t)(style - csp - strlen(HEAD_CSP)), f);
    fputs("<link rel=\"stylesheet\" href=\"", f);
    html_put(f, css_href);
    fputs("\">\n", f);
    put_unstyled(f, body, script);
    fwrite(after + strlen(SCRIPT_CLOSE), 1, (size_t)(end - after - strlen(SCRIPT_CLOSE)), f);
    return ferror(f) ? OP_EIO : 0;
}

/* A page of another command (diff, history runs): the same look, and a
 * policy that allows no script at all. */
void html_page_open(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
          "style-src 'unsafe-inline'; img-src data:\">\n<title>", f);
    html_put(f, title);
    fputs("</title>\n<style>\n", f);
    fputs(stylesheet(), f);
    fputs("</style>\n</head>\n<body>\n<main>\n", f);
}

const char *html_report_css(void)
{
    return stylesheet();
}

void html_page_close(FILE *f)
{
    fprintf(f, "<footer>Generated by opti-pipe %s. Charts are inline SVG; each has "
            "its data as a table underneath.</footer>\n</main>\n</body>\n</html>\n",
            OP_VERSION);
}

static void tile(hout *h, const char *label, size_t n, const char *cls)
{
    fprintf(h->f, "<div class=\"tile\"><b>%zu</b>", n);
    if (cls)
        fprintf(h->f, "<span class=\"sev sev-%s\">%s</span></div>\n", cls, label);
    else
        fprintf(h->f, "%s</div>\n", label);
}

/* The summary table, runs in report order (worst first): the severity
 * cell links to the run's most severe finding, the run to its section. */
static void runs_table(hout *h, const size_t *order, size_t nord)
{
    const model *m = h->ctx->an->m;
    char d[48];
    size_t i, k, n;

    fputs("<table class=\"runs\"><thead><tr><th scope=\"col\">severity</th>"
          "<th scope=\"col\">source</th><th scope=\"col\">run"
          "</th><th scope=\"col\">status</th><th scope=\"col\">duration</th>"
          "<th scope=\"col\">findings</th></tr></thead><tbody>\n", h->f);
    for (k = 0; k < (order ? nord : m->nruns); k++) {
        const struct op_run *r = m->runs[i = report_run_at(order, k)];
        const finding *first;
        int worst;
        if (r->superseded)
            continue;
        n = report_run_findings(h->ctx, i, &worst, &first);
        fputs("<tr><td>", h->f);
        if (first)
            fprintf(h->f, "<a href=\"#f-%s\"><span class=\"sev sev-%s\">%s</span></a>",
                    first->fingerprint, sev_class(first->sev), severity_name(first->sev));
        fputs("</td><td>", h->f);
        html_put(h->f, r->source);
        fprintf(h->f, "</td><td><a href=\"#run-%zu\">", i);
        html_put(h->f, report_run_name(r));
        fputs("</a></td><td>", h->f);
        html_put(h->f, r->status ? r->status : "unknown");
        fprintf(h->f, "</td><td class=\"num\">%s</td><td class=\"num\">%zu</td></tr>\n",
                (r->set & MSET_DURATION_MS)
                    ? report_fmt_duration(d, sizeof d, (double)r->duration_ms) : "",
                n);
    }
    fputs("</tbody></table>\n", h->f);
}

/* The most severe findings, linked, each with what to do first. */
static void put_start_here(hout *h)
{
    const report_ctx *ctx = h->ctx;
    const finding *top[REPORT_START_HERE];
    size_t i, n = report_start_here(ctx, top, REPORT_START_HERE);

    if (!n)
        return;
    fputs("<section class=\"start\" aria-label=\"Start here\">\n<h3>Start here</h3>\n<ol>\n",
          h->f);
    for (i = 0; i < n; i++) {
        const finding *f = top[i];
        const struct op_run *r = report_finding_run(ctx, f);
        fprintf(h->f, "<li><a href=\"#f-%s\"><span class=\"sev sev-%s\">%s</span> <code>",
                f->fingerprint, sev_class(f->sev), severity_name(f->sev));
        html_put(h->f, f->rule);
        fputs("</code></a> in ", h->f);
        if (r) {
            html_put(h->f, r->source);
            fputs(": ", h->f);
            html_put(h->f, report_run_name(r));
        } else {
            fputs("all runs", h->f);
        }
        if (f->node_name) {
            fputs(", on ", h->f);
            html_put(h->f, f->node_name);
        }
        if (f->recommendation) {
            fputs("<br><span class=\"rec\">", h->f);
            html_put(h->f, f->recommendation);
            fputs("</span>", h->f);
        }
        fputs("</li>\n", h->f);
    }
    fputs("</ol>\n</section>\n", h->f);
}

static void put_summary(hout *h, const size_t *order, size_t nord)
{
    const report_ctx *ctx = h->ctx;
    size_t count[3], total = report_counts(ctx, count);
    char in[48], runs[48], applied[8600];

    fputs("<header>\n<h1>opti-pipe report</h1>\n", h->f);
    fprintf(h->f, "<p class=\"meta\">%s, %s, opti-pipe %s</p>\n",
            fmt_count(in, sizeof in, (double)analysis_ninputs(ctx->an), "input", NULL),
            fmt_count(runs, sizeof runs, (double)ctx->an->m->nruns, "run", NULL), OP_VERSION);
    if (report_applied_text(applied, sizeof applied, &ctx->applied)) {
        fputs("<p class=\"meta applied\">", h->f);
        html_put(h->f, applied);
        fputs("</p>\n", h->f);
    }
    fputs("</header>\n", h->f);
    fputs("<section aria-label=\"Summary\">\n<div class=\"tiles\">\n", h->f);
    tile(h, "findings", total, NULL);
    tile(h, "error", count[SEV_ERROR], "error");
    tile(h, "warning", count[SEV_WARNING], "warning");
    tile(h, "info", count[SEV_INFO], "info");
    if (ctx->res->ne)
        tile(h, "rule errors", ctx->res->ne, NULL);
    fputs("</div>\n", h->f);
    put_start_here(h);
    runs_table(h, order, nord);
    fputs("</section>\n", h->f);
}

/* Evidence as a compact grid of key/value pairs: it backs the message, it
 * should not push the charts off the screen. */
void html_put_evidence(FILE *out, const cJSON *evidence)
{
    const cJSON *e;
    char buf[512];

    if (!cJSON_IsObject(evidence) || !evidence->child)
        return;
    fputs("<dl class=\"evidence\" aria-label=\"Evidence\">\n", out);
    cJSON_ArrayForEach(e, evidence) {
        fputs("<div><dt>", out);
        html_put(out, e->string);
        fputs("</dt><dd>", out);
        /* an epoch-ms time reads as one; other numbers stay as the rule
         * gave them (the evidence is what it measured) */
        html_put(out, report_is_epoch_ms(e->string, e)
                 ? report_fmt_time(buf, sizeof buf, (int64_t)e->valuedouble)
                 : report_fmt_value(buf, sizeof buf, e));
        fputs("</dd></div>\n", out);
    }
    fputs("</dl>\n", out);
}

void html_put_changes(FILE *out, const cJSON *changes)
{
    const cJSON *c;
    char buf[512];

    if (!cJSON_IsArray(changes) || !changes->child)
        return;
    fputs("<pre class=\"change\" aria-label=\"Proposed change\">", out);
    cJSON_ArrayForEach(c, changes) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "target");
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(c, "key");
        const cJSON *from = cJSON_GetObjectItemCaseSensitive(c, "from");
        if (cJSON_IsString(t)) {
            fputs("<span class=\"target\"># ", out);
            html_put(out, t->valuestring);
            fputs("</span>\n", out);
        }
        if (from) {
            fputs("<span class=\"del\">- ", out);
            html_put(out, cJSON_IsString(k) ? k->valuestring : "?");
            fputs(": ", out);
            html_put(out, report_fmt_value(buf, sizeof buf, from));
            fputs("</span>\n", out);
        }
        fputs("<span class=\"add\">+ ", out);
        html_put(out, cJSON_IsString(k) ? k->valuestring : "?");
        fputs(": ", out);
        html_put(out, report_fmt_value(buf, sizeof buf, cJSON_GetObjectItemCaseSensitive(c, "to")));
        fputs("</span>\n", out);
    }
    fputs("</pre>\n", out);
}

static void put_finding(hout *h, const finding *f)
{
    fprintf(h->f, "<article class=\"finding %s\" id=\"f-%s\">\n<h4><span class=\"sev sev-%s\">%s"
            "</span> <code>", sev_class(f->sev), f->fingerprint, sev_class(f->sev),
            severity_name(f->sev));
    html_put(h->f, f->rule);
    fputs("</code>", h->f);
    if (f->node_name) {
        fputs(" <span class=\"node\">on ", h->f);
        html_put(h->f, f->node_name);
        fputs("</span>", h->f);
    }
    if (f->suppressed)
        fputs(" <span class=\"node\">(suppressed by baseline)</span>", h->f);
    fputs("</h4>\n<p class=\"msg\">", h->f);
    html_put(h->f, f->message);
    fputs("</p>\n", h->f);
    if (f->recommendation) {
        fputs("<p class=\"rec\"><strong>Recommendation:</strong> ", h->f);
        html_put(h->f, f->recommendation);
        fputs("</p>\n", h->f);
    }
    if (f->savings_basis) { /* the config's costs (docs/costs.md) */
        char money[64];
        fputs("<p class=\"rec\"><strong>Saves:</strong> about ", h->f);
        html_put(h->f, report_money(money, sizeof money, h->ctx, f->savings));
        fputs(" a run (", h->f);
        html_put(h->f, f->savings_basis);
        fputs(")</p>\n", h->f);
    }
    html_put_changes(h->f, f->changes);
    html_put_evidence(h->f, f->evidence);
    fputs("</article>\n", h->f);
}

static void put_findings(hout *h, size_t run)
{
    const results *res = h->ctx->res;
    size_t i, shown = 0;

    for (i = 0; i < res->n; i++)
        if (res->f[i].run_index == run && report_visible(h->ctx, &res->f[i])) {
            put_finding(h, &res->f[i]);
            shown++;
        }
    if (!shown)
        fputs("<p>No findings.</p>\n", h->f);
}

static void put_charts(hout *h, const struct op_run *r)
{
    unsigned figs = h->nfig;
    const op_engine *e = engine_find(r->source);

    fputs("<h3>Charts</h3>\n", h->f);
    if (e && ENGINE_HAS(e, html_charts) && e->html_charts)
        e->html_charts(h, r);
    if (h->nfig == figs)
        fputs("<p class=\"meta\">No chart for this run: its data has no timeline, graph "
              "or series to draw.</p>\n", h->f);
}

static void put_run(hout *h, const struct op_run *r)
{
    char d[48];

    fprintf(h->f, "<section class=\"run\" id=\"run-%zu\">\n<h2>", r->index);
    html_put(h->f, r->source);
    fputs(": ", h->f);
    html_put(h->f, report_run_name(r));
    fputs("</h2>\n<p class=\"meta\"><code>", h->f);
    html_put(h->f, r->id);
    fputs("</code> \xc2\xb7 ", h->f);
    html_put(h->f, r->status ? r->status : "unknown");
    if (r->set & MSET_DURATION_MS)
        fprintf(h->f, " \xc2\xb7 %s", report_fmt_duration(d, sizeof d, (double)r->duration_ms));
    if (r->nhistory)
        fprintf(h->f, " \xc2\xb7 newest of %zu runs in its history", r->nhistory + 1);
    fputs("</p>\n", h->f);
    put_findings(h, r->index);
    put_charts(h, r);
    fputs("</section>\n", h->f);
}

static void put_problems(hout *h)
{
    const report_ctx *ctx = h->ctx;
    size_t i, j;

    if (ctx->res->ne) {
        fputs("<section><h2>Rule errors</h2>\n<ul>\n", h->f);
        for (i = 0; i < ctx->res->ne; i++) {
            fputs("<li><code>", h->f);
            html_put(h->f, ctx->res->e[i].rule);
            fputs("</code>: ", h->f);
            html_put(h->f, ctx->res->e[i].error);
            fputs("</li>\n", h->f);
        }
        fputs("</ul></section>\n", h->f);
    }
    for (i = 0, j = 0; i < ctx->an->ninputs; i++)
        j += ctx->an->inputs[i].nwarnings;
    if (!j)
        return;
    fputs("<section><h2>Input warnings</h2>\n<ul>\n", h->f);
    for (i = 0; i < ctx->an->ninputs; i++)
        for (j = 0; j < ctx->an->inputs[i].nwarnings; j++) {
            fputs("<li>", h->f);
            html_put(h->f, ctx->an->inputs[i].warnings[j]);
            fputs("</li>\n", h->f);
        }
    fputs("</ul></section>\n", h->f);
}

int report_html(const report_ctx *ctx)
{
    const model *m = ctx->an->m;
    hout h = {ctx->out, ctx, 0, 0};
    size_t i, k, nord, *order = report_run_order(ctx, &nord);

    put_head(&h);
    put_summary(&h, order, nord);
    for (k = 0; k < (order ? nord : m->nruns); k++)
        if (!m->runs[i = report_run_at(order, k)]->superseded)
            put_run(&h, m->runs[i]);
    free(order);
    for (i = 0; i < ctx->res->n; i++)
        if (ctx->res->f[i].run_index == SIZE_MAX && report_visible(ctx, &ctx->res->f[i])) {
            fputs("<section class=\"run\"><h2>Across runs</h2>\n", h.f);
            put_findings(&h, SIZE_MAX);
            fputs("</section>\n", h.f);
            break;
        }
    put_problems(&h);
    fprintf(h.f, "<footer>Generated by opti-pipe %s. Charts are inline SVG; each has its "
            "data as a table underneath.</footer>\n", OP_VERSION);
    fputs("<pre id=\"selftest\" hidden></pre>\n</main>\n" SCRIPT_OPEN, h.f);
    fputs(selftest_js, h.f);
    fputs(SCRIPT_CLOSE "</body>\n</html>\n", h.f);
    return ferror(h.f) ? OP_EIO : 0;
}
