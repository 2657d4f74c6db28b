/*
 * serve_ui.c - the web UI of `optipipe serve` (docs/serve.md): its routes
 * (srv_routes_ui), the upload page and its no-script form post, the list
 * of analyses, an analysis' page (status, or its findings with approve /
 * dismiss forms, or why it failed), decisions posted from those forms, the
 * framed report, the patches download and the static assets. The run
 * store's pages are serve_ui_jobs.c; shared pieces serve_ui_page.c.
 *
 * Every id is validated (jobs_get) before it names a path; every string
 * from a client, a report or the store is escaped (html_put); forms carry
 * the CSRF token (srv_csrf_input) that serve_http.c checks on SRV_FORM.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_html.h"
#include "report_util.h"
#include "serve_ui.h"

/* ---- reading an analysis' files, bounded ------------------------------------ */

/* dir/name into buf (room for 4096); 0, or OP_ELIMIT when too long. */
static int join(char *buf, const char *dir, const char *name)
{
    return snprintf(buf, 4096, "%s/%s", dir, name) >= 4096 ? OP_ELIMIT : 0;
}

/* Reads dir/name whole, at most max bytes, into a new string (*len its
 * length). OP_ENOTFOUND when missing, OP_ELIMIT when larger. */
static int read_file(const char *dir, const char *name, size_t max, char **out,
                     size_t *len, op_error *err)
{
    char path[4096];
    struct stat st;
    char *buf = NULL;
    ssize_t n;
    size_t got = 0;
    int fd = -1, rc = 0;

    if (join(path, dir, name))
        return op_error_set(err, OP_ELIMIT, "%s: path too long", name);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return op_error_set(err, errno == ENOENT ? OP_ENOTFOUND : OP_EIO,
                            "%s: %s", name, strerror(errno));
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        rc = op_error_set(err, OP_EIO, "%s: not a readable file", name);
    } else if ((uint64_t)st.st_size > max) {
        rc = op_error_set(err, OP_ELIMIT, "%s: %lld bytes, more than the %zu "
                          "a page reads", name, (long long)st.st_size, max);
    } else if (!(buf = malloc((size_t)st.st_size + 1))) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
    } else {
        while (got < (size_t)st.st_size &&
               (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
            got += (size_t)n;
        buf[got] = 0;
        *out = buf;
        *len = got;
        buf = NULL;
    }
    free(buf);
    close(fd);
    return rc;
}

static int load_report(const srv_analysis *a, cJSON **out, op_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_file(a->dir, SRV_REPORT_JSON, UI_REPORT_MAX, &text, &len, err);

    if (rc)
        return rc;
    *out = cJSON_ParseWithLength(text, len);
    free(text);
    if (!cJSON_IsObject(*out)) {
        cJSON_Delete(*out);
        *out = NULL;
        return op_error_set(err, OP_EPARSE, "%s: not a JSON report", SRV_REPORT_JSON);
    }
    return 0;
}

/* The analysis named by the route's {id}, or an answer already in w
 * (404 for a malformed or unknown id): returns 0 with *a, else 1. */
static int analysis_of(const srv_req *r, srv_resp *w, srv_analysis *a)
{
    op_error err;

    op_error_clear(&err);
    if (r->nparam < 1 || !srv_id_valid(r->param[0]) ||
        jobs_get(r->s->jobs, r->param[0], a, &err)) {
        srv_fail(r, w, 404, "no analysis with this id");
        return 1;
    }
    return 0;
}

/* ---- the upload page --------------------------------------------------------- */

static int page_upload(const srv_req *r, srv_resp *w)
{
    const serve_opts *o = r->s->o;
    char lim[48];

    ui_open(r, w, "Upload", "upload");
    fprintf(w->f, "<h1>Upload</h1>\n<p class=\"meta\">Spark event logs, dbt "
            "<code>run_results.json</code> and <code>manifest.json</code>, Flink "
            "exports, or a <code>.zip</code> of them: any mix, up to %u files and ",
            o->max_files ? o->max_files : SRV_FILES_DEFAULT);
    html_put(w->f, report_fmt_bytes(lim, sizeof lim, (double)(o->max_upload_bytes
                                    ? o->max_upload_bytes : SRV_UPLOAD_DEFAULT)));
    fputs(" in all.</p>\n<form id=\"upload\" method=\"post\" action=\"/analyses\" "
          "enctype=\"multipart/form-data\" data-api=\"/api/v1/analyses\">\n", w->f);
    srv_csrf_input(r, w->f);
    fputs("<div class=\"drop\" id=\"drop\"><p>Drop files here, or choose them:</p>\n"
          "<input type=\"file\" name=\"file\" id=\"file\" multiple aria-label=\"Files\">\n"
          "<ul class=\"files\" id=\"drop-list\" aria-live=\"polite\"></ul></div>\n", w->f);
    if (o->nfetch_allow)
        fputs("<label>Or a URL to fetch from (a Flink JobManager or a Spark History "
              "Server this server may reach)\n<input type=\"url\" name=\"url\" "
              "id=\"url\" placeholder=\"http://\"></label>\n", w->f);
    fputs("<button type=\"submit\" id=\"submit\">Analyze</button>\n</form>\n"
          "<div class=\"progress\" id=\"progress\" hidden><p id=\"progress-label\">"
          "Uploading</p><progress id=\"progress-bar\" max=\"100\" value=\"0\">"
          "</progress></div>\n<p class=\"error\" id=\"error\" role=\"alert\" hidden></p>\n",
          w->f);
    ui_close(w);
    return 0;
}

/* POST /analyses: the form without script; the API's upload core answers
 * refusals (400, 403, 413, 429) itself. */
static int post_upload(const srv_req *r, srv_resp *w)
{
    char id[SRV_ID_LEN + 1] = "";

    if (srv_accept_upload(r, w, id))
        return 0; /* refused: w holds the answer */
    w->status = 303;
    snprintf(w->location, sizeof w->location, "/analyses/%s", id);
    return 0;
}

/* ---- analyses ---------------------------------------------------------------- */

static void put_duration(FILE *f, const srv_analysis *a)
{
    char d[48];

    if (a->started_ms > 0 && a->finished_ms >= a->started_ms)
        fputs(report_fmt_duration(d, sizeof d, (double)(a->finished_ms - a->started_ms)), f);
}

typedef struct list_ctx {
    FILE *f;
    size_t n;
} list_ctx;

/* Adds s to the distinct strings seen (at most max; 0 when full or seen,
 * 1 when new). */
static int add_distinct(const char **seen, size_t *n, size_t max, const char *s)
{
    size_t i;

    for (i = 0; s && i < *n; i++)
        if (!strcmp(seen[i], s))
            return 0;
    if (!s || *n >= max)
        return 0;
    seen[(*n)++] = s;
    return 1;
}

#define UI_LIST_JOBS 3 /* jobs named in a row of /analyses */

/* The engines, jobs, run statuses and finding severities of a finished
 * analysis (its summary.json, SRV_SUMMARY_JSON) as four cells; empty ones
 * when it has none (an analysis of an older server, a failed one). */
static void summary_cells(FILE *f, const srv_analysis *a)
{
    static const char *const sev[] = {"error", "warning", "info"};
    const char *engines[SRV_SUMMARY_RUNS], *jobs[SRV_SUMMARY_RUNS];
    const char *states[SRV_SUMMARY_RUNS];
    size_t ne = 0, nj = 0, ns = 0, i, k, shown = 0;
    char *text = NULL;
    size_t len = 0;
    cJSON *sum = NULL;
    const cJSON *r, *runs, *fs;
    op_error err;
    double nruns;

    op_error_clear(&err);
    if (a->state == SRV_DONE || a->state == SRV_RECORD_FAILED)
        if (!read_file(a->dir, SRV_SUMMARY_JSON, UI_SUMMARY_MAX, &text, &len, &err))
            sum = cJSON_ParseWithLength(text, len);
    free(text);
    runs = cJSON_GetObjectItemCaseSensitive(sum, "runs");
    fs = cJSON_GetObjectItemCaseSensitive(sum, "findings");
    nruns = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(sum, "nruns"));
    cJSON_ArrayForEach(r, runs) {
        const cJSON *src = cJSON_GetObjectItemCaseSensitive(r, "source");
        const cJSON *job = cJSON_GetObjectItemCaseSensitive(r, "job");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "status");
        add_distinct(engines, &ne, SRV_SUMMARY_RUNS, cJSON_GetStringValue(src));
        add_distinct(jobs, &nj, SRV_SUMMARY_RUNS, cJSON_GetStringValue(job));
        add_distinct(states, &ns, SRV_SUMMARY_RUNS, cJSON_GetStringValue(st));
    }
    fputs("<td>", f);
    for (i = 0; i < ne; i++) {
        fputs(i ? ", " : "", f);
        html_put_trunc(f, engines[i], 40);
    }
    fputs("</td><td>", f);
    for (i = 0; i < nj && i < UI_LIST_JOBS; i++) {
        fputs(i ? ", " : "", f);
        if (ui_is_ref(jobs[i])) {
            fputs("<a href=\"/jobs/", f);
            ui_put_url(f, jobs[i]);
            fputs("\">", f);
        }
        html_put_trunc(f, jobs[i], 60);
        fputs(ui_is_ref(jobs[i]) ? "</a>" : "", f);
    }
    if (nj > UI_LIST_JOBS)
        fprintf(f, " and %zu more", nj - UI_LIST_JOBS);
    fputs("</td><td>", f);
    if (sum && isfinite(nruns) && nruns >= 0)
        fprintf(f, "%.0f run%s: ", nruns, nruns == 1 ? "" : "s");
    for (i = 0; i < ns; i++) { /* "2 succeeded, 1 failed" */
        size_t c = 0;
        cJSON_ArrayForEach(r, runs) {
            const char *st = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(r, "status"));
            c += st && !strcmp(st, states[i]);
        }
        fprintf(f, "%s%zu ", i ? ", " : "", c);
        html_put_trunc(f, states[i], 20);
    }
    fputs("</td><td>", f);
    for (k = 0; fs && k < 3; k++) {
        double v = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(fs, sev[k]));
        if (isfinite(v) && v > 0)
            fprintf(f, "%s<span class=\"sev sev-%s\">%.0f %s</span>", shown++ ? " " : "",
                    sev[k], v, sev[k]);
    }
    if (fs && !shown)
        fputs("none", f);
    fputs("</td>", f);
    cJSON_Delete(sum);
}

static int analysis_row(void *ud, const srv_analysis *a)
{
    list_ctx *c = ud;
    FILE *f = c->f;
    char b[48];

    if (++c->n > UI_ANALYSES_MAX)
        return 1; /* the newest only; the API pages through all */

    fprintf(f, "<tr><td><a href=\"/analyses/%s\"><code>%s</code></a></td>"
            "<td><span class=\"state state-%s\">%s</span></td><td>", a->id, a->id,
            srv_state_name(a->state), srv_state_name(a->state));
    ui_put_time(f, a->created_ms);
    fputs("</td>", f);
    summary_cells(f, a);
    fprintf(f, "<td class=\"num\">%zu file%s, %s</td><td class=\"num\">", a->nfiles,
            a->nfiles == 1 ? "" : "s", report_fmt_bytes(b, sizeof b, (double)a->bytes));
    put_duration(f, a);
    fputs("</td></tr>\n", f);
    return 0;
}

static int page_analyses(const srv_req *r, srv_resp *w)
{
    list_ctx c = {NULL, 0};

    ui_open(r, w, "Analyses", "analyses");
    c.f = w->f;
    fputs("<h1>Analyses</h1>\n<table class=\"list\"><thead><tr><th scope=\"col\">id</th>"
          "<th scope=\"col\">state</th><th scope=\"col\">uploaded</th>"
          "<th scope=\"col\">engines</th><th scope=\"col\">jobs</th>"
          "<th scope=\"col\">runs</th><th scope=\"col\">findings</th>"
          "<th scope=\"col\">input</th>"
          "<th scope=\"col\">took</th></tr></thead><tbody>\n", w->f);
    jobs_each(r->s->jobs, analysis_row, &c);
    fputs("</tbody></table>\n", w->f);
    if (c.n > UI_ANALYSES_MAX)
        fprintf(w->f, "<p class=\"meta\">The newest %u are listed; <a href=\"/api/v1/"
                "analyses\">the API</a> lists them all.</p>\n", UI_ANALYSES_MAX);
    ui_close(w);
    return 0;
}

static void page_waiting(srv_resp *w, const srv_analysis *a)
{
    fprintf(w->f, "<h1>Analysis <code>%s</code></h1>\n<section class=\"status\" "
            "data-poll=\"/api/v1/analyses/%s\">\n<p>State: <b id=\"state\">%s</b>",
            a->id, a->id, srv_state_name(a->state));
    if (a->state == SRV_QUEUED)
        fprintf(w->f, ", %zu analys%s ahead", a->queue_pos,
                a->queue_pos == 1 ? "is" : "es");
    fprintf(w->f, ". %zu file%s received.</p>\n<progress aria-label=\"Analysis\">"
            "</progress>\n<p><a href=\"/analyses/%s\">Refresh</a> (this page "
            "refreshes itself when scripts run).</p>\n</section>\n",
            a->nfiles, a->nfiles == 1 ? "" : "s", a->id);
}

/* The last UI_LOG_LINES lines of the worker's log, escaped line by line
 * (html_put would join them). */
static void put_log_tail(FILE *f, const srv_analysis *a)
{
    char path[4096], buf[UI_LOG_TAIL + 1], *p, *q, *e;
    size_t n = 0, lines = 0;
    struct stat st;
    ssize_t got;
    int fd = -1;

    if (join(path, a->dir, SRV_WORKER_LOG) ||
        (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st))
        goto out;
    if (st.st_size > UI_LOG_TAIL && lseek(fd, st.st_size - UI_LOG_TAIL, SEEK_SET) < 0)
        goto out;
    while (n < UI_LOG_TAIL && (got = read(fd, buf + n, UI_LOG_TAIL - n)) > 0)
        n += (size_t)got;
    buf[n] = 0;
    p = buf;
    if (st.st_size > UI_LOG_TAIL && (e = strchr(p, '\n')))
        p = e + 1; /* the first line is cut */
    for (q = buf + n; q > p; q--)
        if (q[-1] == '\n' && q != buf + n && ++lines == UI_LOG_LINES)
            break;
    fputs("<h2>Worker log (last lines)</h2>\n<pre class=\"log\">", f);
    for (p = q; *p; p = e + 1) {
        if ((e = strchr(p, '\n')))
            *e = 0;
        html_put(f, p);
        fputc('\n', f);
        if (!e)
            break;
    }
    fputs("</pre>\n", f);
out:
    if (fd >= 0)
        close(fd);
}

/* The form that runs a failed or record-failed analysis again. */
static void retry_form(const srv_req *r, srv_resp *w, const srv_analysis *a)
{
    fprintf(w->f, "<form class=\"retry\" method=\"post\" action=\"/analyses/%s/retry\">",
            a->id);
    srv_csrf_input(r, w->f);
    fputs("<button type=\"submit\">Retry</button> runs it again (queued like a new "
          "upload).</form>\n", w->f);
}

static void page_failed(const srv_req *r, srv_resp *w, const srv_analysis *a)
{
    int unrecorded = a->state == SRV_RECORD_FAILED;

    fprintf(w->f, "<h1>Analysis <code>%s</code> %s</h1>\n<p class=\"error\">", a->id,
            unrecorded ? "not recorded" : "failed");
    html_put(w->f, a->error[0] ? a->error : "the analysis failed");
    fprintf(w->f, "</p>\n<p class=\"meta\">exit code %d", a->exit_code);
    if (unrecorded)
        fprintf(w->f, "; its runs are not in the history and its findings cannot be "
                "decided until it is recorded. <a href=\"/analyses/%s/report.html\">The "
                "HTML report</a> was written.", a->id);
    fputs("</p>\n", w->f);
    retry_form(r, w, a);
    put_log_tail(w->f, a);
}

static int page_done(const srv_req *r, srv_resp *w, const srv_analysis *a)
{
    cJSON *report = NULL;
    ui_decisions d;
    op_error err;
    int rc = 0;

    memset(&d, 0, sizeof d);
    op_error_clear(&err);
    if (load_report(a, &report, &err) ||
        ui_decisions_read(r->s->store_path, report, &d, &err)) {
        fprintf(w->f, "<h1>Analysis <code>%s</code></h1>\n<p class=\"error\">", a->id);
        html_put(w->f, err.msg);
        fputs("</p>\n", w->f);
        fprintf(w->f, "<p><a href=\"/analyses/%s/report.html\">The HTML report</a></p>\n",
                a->id);
    } else {
        rc = ui_report_body(w->f, r, a->id, report, &d);
    }
    ui_decisions_free(&d);
    cJSON_Delete(report);
    return rc;
}

static int page_analysis(const srv_req *r, srv_resp *w)
{
    srv_analysis a;
    int rc = 0;

    if (analysis_of(r, w, &a))
        return 0;
    ui_open(r, w, a.state == SRV_DONE ? "Analysis" : srv_state_name(a.state), "analyses");
    if (a.state == SRV_DONE)
        rc = page_done(r, w, &a);
    else if (a.state == SRV_FAILED || a.state == SRV_RECORD_FAILED)
        page_failed(r, w, &a);
    else
        page_waiting(w, &a);
    ui_close(w);
    return rc;
}

/* ---- decisions --------------------------------------------------------------- */

/* Whether fp is the fingerprint of a finding of the analysis' report. */
static int report_has(const srv_analysis *a, const char *fp)
{
    cJSON *report = NULL;
    const cJSON *f;
    op_error err;
    int found = 0;

    op_error_clear(&err);
    if (load_report(a, &report, &err))
        return 0;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(report, "findings")) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(f, "fingerprint");
        found |= cJSON_IsString(v) && !strcmp(v->valuestring, fp);
    }
    cJSON_Delete(report);
    return found;
}

static int post_decision(const srv_req *r, srv_resp *w)
{
    const char *fp = srv_field(r, "fingerprint"), *status = srv_field(r, "status");
    const char *comment = srv_field(r, "comment");
    srv_analysis a;
    op_error err;

    if (analysis_of(r, w, &a))
        return 0;
    if (a.state != SRV_DONE)
        return srv_fail(r, w, 409, "the analysis is not done");
    if (!ui_is_hex(fp, UI_FP_LEN) || !report_has(&a, fp))
        return srv_fail(r, w, 400, "no finding with this fingerprint in the analysis");
    if (!status || (strcmp(status, "approved") && strcmp(status, "dismissed") &&
                    strcmp(status, "open")))
        return srv_fail(r, w, 400, "status must be approved, dismissed or open");
    if (comment && strlen(comment) > UI_COMMENT_MAX)
        return srv_fail(r, w, 400, "the comment is longer than %u bytes", UI_COMMENT_MAX);
    op_error_clear(&err);
    if (srv_decide(r->s, fp, status, comment && *comment ? comment : NULL, srv_who(r), &err))
        return srv_fail(r, w, err.code == OP_EUSAGE ? 400 : err.code == OP_ENOTFOUND
                        ? 404 : 500, "%s", err.msg);
    w->status = 303;
    snprintf(w->location, sizeof w->location, "/analyses/%s#f-%s", a.id, fp);
    return 0;
}

static int post_retry(const srv_req *r, srv_resp *w)
{
    srv_analysis a;

    if (analysis_of(r, w, &a) || srv_retry(r, w, a.id))
        return 0;
    w->status = 303;
    snprintf(w->location, sizeof w->location, "/analyses/%s", a.id);
    return 0;
}

/* ---- files ------------------------------------------------------------------- */

/* The worker's report.html, made fit for the strict CSP (its inline
 * stylesheet linked, its script and style attributes left out), framed by
 * the analysis page. */
static int get_report_html(const srv_req *r, srv_resp *w)
{
    srv_analysis a;
    op_error err;
    char *text = NULL;
    size_t len = 0;
    int rc;

    if (analysis_of(r, w, &a))
        return 0;
    op_error_clear(&err);
    if (a.state != SRV_DONE ||
        read_file(a.dir, SRV_REPORT_HTML, UI_REPORT_MAX, &text, &len, &err))
        return srv_fail(r, w, a.state != SRV_DONE || err.code == OP_ENOTFOUND ? 404 : 500,
                        "this analysis has no HTML report%s%s", err.msg[0] ? ": " : "",
                        err.code == OP_ENOTFOUND ? "" : err.msg);
    w->status = 200;
    w->type = "text/html; charset=utf-8";
    w->frame_self = 1;
    rc = html_report_strict(w->f, text, len, "/static/app.css");
    free(text);
    if (rc == OP_EPARSE) {
        rewind(w->f);
        return srv_fail(r, w, 500, "the HTML report of this analysis is not one "
                        "this server can show");
    }
    return rc;
}

/* The patches are the API's (one writer of them; ?format=text as the
 * page links them, else JSON); here they download. */
static int get_patches(const srv_req *r, srv_resp *w)
{
    const srv_route *rt;
    srv_analysis a;
    int rc;

    if (analysis_of(r, w, &a))
        return 0;
    for (rt = srv_routes_api; rt->pattern; rt++)
        if (!strcmp(rt->method, "GET") && !strcmp(rt->pattern, "/api/v1/analyses/{id}/patches"))
            break;
    if (!rt->pattern)
        return srv_fail(r, w, 404, "patches are not available");
    if ((rc = rt->fn(r, w)) || w->status != 200 || w->filename[0])
        return rc; /* ?format=text (the page's link): the API names it */
    snprintf(w->filename, sizeof w->filename, "optipipe-patches-%s.json", a.id);
    return 0;
}

static int get_js(const srv_req *r, srv_resp *w)
{
    (void)r;
    w->status = 200;
    w->type = "text/javascript; charset=utf-8";
    fputs(ui_app_js, w->f);
    return 0;
}

static int get_css(const srv_req *r, srv_resp *w)
{
    (void)r;
    w->status = 200;
    w->type = "text/css; charset=utf-8";
    fputs(html_report_css(), w->f);
    fputs(ui_app_css, w->f);
    return 0;
}

static int get_icon(const srv_req *r, srv_resp *w)
{
    (void)r;
    w->status = 200;
    w->type = "image/svg+xml";
    fputs(ui_favicon_svg, w->f);
    return 0;
}

const srv_route srv_routes_ui[] = {
    {"GET", "/", 0, page_upload, "the upload page"},
    {"POST", "/analyses", SRV_UPLOAD | SRV_FORM, post_upload,
     "an upload from the page's form (no script): 303 to the analysis"},
    {"GET", "/analyses", 0, page_analyses, "the analyses, newest first"},
    {"GET", "/analyses/{id}", 0, page_analysis,
     "an analysis: its state, or its findings with decision forms"},
    {"POST", "/analyses/{id}/retry", SRV_BODY | SRV_FORM, post_retry,
     "run a failed or record-failed analysis again"},
    {"POST", "/analyses/{id}/decisions", SRV_BODY | SRV_FORM, post_decision,
     "approve, dismiss or reopen a finding: 303 back to it"},
    {"GET", "/analyses/{id}/report.html", 0, get_report_html,
     "the analysis' HTML report (framed by its page)"},
    {"GET", "/analyses/{id}/patches", 0, get_patches,
     "the config patches of the approved changes, as a download"},
    {"GET", "/jobs", 0, ui_jobs_page, "every job of the run store"},
    {"GET", "/jobs/{job}", 0, ui_job_page, "a job's runs and trends"},
    {"GET", "/runs/{run}", 0, ui_run_page, "one stored run"},
    {"GET", "/diff", 0, ui_diff_page, "the diff of two stored runs (?a=RUN&b=RUN)"},
    {"GET", "/findings/{fp}", 0, srv_page_finding,
     "a finding's decision and its history (who, when, from what to what)"},
    {"GET", "/notifications", 0, srv_page_notifications,
     "the webhook endpoints' counts and the delivery log"},
    {"GET", "/static/app.js", SRV_PUBLIC | SRV_LIGHT, get_js, "the pages' script"},
    {"GET", "/static/app.css", SRV_PUBLIC | SRV_LIGHT, get_css, "the pages' stylesheet"},
    {"GET", "/favicon.ico", SRV_PUBLIC | SRV_LIGHT, get_icon, "the pages' icon (SVG)"},
    {0}};
