/*
 * serve_ui.h - what the HTML pages of `optipipe serve` (serve_ui*.c) share:
 * the page frame, validation of ids and segments, URL and HTML output,
 * and one finding with its decision form. Only serve_ui*.c and
 * serve_auth.c (the sign-in page) include it.
 *
 * Every page is served under the strict CSP of serve_http.c (script-src
 * 'self', style-src 'self'): no inline script, style or event handler; the
 * look is /static/app.css (the HTML report's stylesheet plus the UI's),
 * the behaviour /static/app.js (serve_ui_assets.c).
 */
#ifndef OP_SERVE_SERVE_UI_H
#define OP_SERVE_SERVE_UI_H

#include <cjson/cJSON.h>

#include "serve.h"

/* Bounds of what the pages read (docs/serve.md). */
#define UI_REPORT_MAX (32u << 20) /* report.json read for a page */
#define UI_LOG_TAIL 8192          /* bytes of worker.log shown */
#define UI_LOG_LINES 40           /* its last lines shown */
#define UI_COMMENT_MAX 2000       /* bytes of a decision's comment */
#define UI_RUNS_MAX 200           /* runs listed on a job page */
#define UI_ANALYSES_MAX 500       /* analyses listed on /analyses */
#define UI_SUMMARY_MAX (64u << 10) /* an analysis' summary.json read */
#define UI_TREND_RUNS 30          /* runs in a trend chart */
#define UI_TREND_METRICS 4        /* run metrics charted besides duration */
#define UI_FP_LEN 16              /* a fingerprint: 16 hex digits */

/* Static assets (serve_ui_assets.c). */
extern const char ui_app_js[];
extern const char ui_app_css[]; /* after the report's (html_report_css) */
extern const char ui_favicon_svg[]; /* /favicon.ico */

/* Starts an HTML page into w (200, text/html): the head with the CSRF
 * token in <meta name="csrf-token">, the stylesheet and the script, and
 * the navigation with nav ("upload", "analyses", "jobs") marked. title is
 * escaped. */
void ui_open(const srv_req *r, srv_resp *w, const char *title,
             const char *nav);
void ui_close(srv_resp *w);

/* 1 when s is n lowercase hex digits. */
int ui_is_hex(const char *s, size_t n);
/* 1 when s is a usable job or run reference: 1..SRV_SEGMENT_MAX bytes of
 * valid UTF-8 without control characters. */
int ui_is_ref(const char *s);

/* s percent-encoded for a URL path segment or query value (everything but
 * [A-Za-z0-9._~-]), so it is also safe inside an attribute. */
void ui_put_url(FILE *f, const char *s);

/* Epoch ms as "YYYY-MM-DD HH:MM:SS UTC" ("-" for <= 0), into buf (n >=
 * 32) or to f. */
const char *ui_time_text(char *buf, size_t n, int64_t ms);
void ui_put_time(FILE *f, int64_t ms);

/* One finding as the pages show it; every string is escaped when
 * written. changes and evidence may be NULL. */
typedef struct ui_finding {
    const char *rule, *severity, *fingerprint, *node, *title, *message;
    const char *recommendation;
    const cJSON *changes, *evidence;
    const char *decision, *comment; /* from the store; NULL: open */
    /* on a page of several runs, the finding's run: its id (linked to
     * /runs/ID when a usable reference) and name; NULL: not said */
    const char *run_id, *run_name;
} ui_finding;

/* Writes f as an <article id="f-FP">; action: the URL its approve /
 * dismiss form posts to (NULL: the decision is shown, no form). */
void ui_put_finding(FILE *out, const srv_req *r, const ui_finding *f,
                    const char *action);

/* The decisions the store holds for the findings of a report. */
typedef struct ui_decision {
    char fp[UI_FP_LEN + 1];
    char *status, *comment;
} ui_decision;
typedef struct ui_decisions {
    ui_decision *d;
    size_t n, cap;
} ui_decisions;
/* Reads them from the store at path (missing store: none). Returns 0 or
 * an op_status with err. */
int ui_decisions_read(const char *path, const cJSON *report, ui_decisions *out,
                      op_error *err);
const ui_decision *ui_decision_find(const ui_decisions *d, const char *fp);
void ui_decisions_free(ui_decisions *d);

/* The analysis page's content once done: summary, findings with forms,
 * the patches link and the framed report (serve_ui_report.c). id is
 * validated. Returns 0 or OP_EIO. */
int ui_report_body(FILE *f, const srv_req *r, const char *id,
                   const cJSON *report, const ui_decisions *d);

/* Pages of the run store (serve_ui_jobs.c). */
int ui_jobs_page(const srv_req *r, srv_resp *w);
int ui_job_page(const srv_req *r, srv_resp *w);
int ui_run_page(const srv_req *r, srv_resp *w);
int ui_diff_page(const srv_req *r, srv_resp *w);

#endif
