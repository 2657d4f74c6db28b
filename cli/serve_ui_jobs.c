/*
 * serve_ui_jobs.c - the run store's pages of `optipipe serve`: every job
 * with its last run, open findings and a duration trend (/jobs), one job's
 * runs with trend charts and the choice of two runs to diff
 * (/jobs/{job}), one stored run (/runs/{run}) and the diff of two
 * (/diff?a=RUN&b=RUN, core/diff.h). The store is opened read-only per
 * request; every string from it is escaped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <optipipe/grow.h>

#include "cli.h"
#include "diff.h"
#include "report_html.h"
#include "report_util.h"
#include "serve_ui.h"
#include "store.h"
#include "util.h"

#define UI_NODES_MAX 500 /* nodes listed on a run page */
#define UI_LABEL 64

/* Opens the store read-only; *st stays NULL when nothing was recorded
 * yet. 1 when the answer (500) is in w. */
static int open_store(const srv_req *r, srv_resp *w, store **st)
{
    op_error err;

    *st = NULL;
    op_error_clear(&err);
    if (access(r->s->store_path, F_OK))
        return 0;
    if (store_open(r->s->store_path, 0, st, &err)) {
        srv_fail(r, w, 500, "%s", err.msg);
        return 1;
    }
    return 0;
}

static void put_job_link(FILE *f, const char *job)
{
    fputs("<a href=\"/jobs/", f);
    ui_put_url(f, job);
    fputs("\">", f);
    html_put(f, job);
    fputs("</a>", f);
}

static void put_run_link(FILE *f, const char *run_id, const char *text)
{
    fputs("<a href=\"/runs/", f);
    ui_put_url(f, run_id);
    fputs("\">", f);
    html_put(f, text ? text : run_id);
    fputs("</a>", f);
}

static void put_dur(FILE *f, const store_run *r)
{
    char d[48];

    if (r->set & MSET_DURATION_MS)
        fputs(report_fmt_duration(d, sizeof d, (double)r->duration_ms), f);
}

/* ---- a series of runs, newest first ----------------------------------------- */

typedef struct series {
    store *st;
    op_error *err;
    size_t n, cap, nval;
    struct srun {
        char *run_id, *status;
        int64_t started_at, duration_ms, pk, nfindings;
        unsigned set;
        cJSON *metrics;
        char label[UI_LABEL];
    } *r;
} series;

static int take_run(void *ud, const store_run *r)
{
    series *s = ud;
    struct srun *e;
    int oom = 0;

    if (OP_GROW(s->r, s->cap, s->n + 1, 16))
        return op_error_set(s->err, OP_ENOMEM, "out of memory"), 1;
    e = &s->r[s->n++];
    memset(e, 0, sizeof *e);
    e->run_id = util_strdup(r->run_id ? r->run_id : "", &oom);
    e->status = util_strdup(r->status, &oom);
    e->started_at = r->started_at;
    e->duration_ms = r->duration_ms;
    e->pk = r->pk;
    e->nfindings = r->nfindings;
    e->set = r->set;
    e->metrics = r->metrics_json ? cJSON_Parse(r->metrics_json) : NULL;
    if (r->set & MSET_STARTED_AT) {
        char t[40];
        snprintf(e->label, sizeof e->label, "%.16s", ui_time_text(t, sizeof t, r->started_at));
    } else {
        snprintf(e->label, sizeof e->label, "%.60s", e->run_id ? e->run_id : "?");
    }
    if (oom || !e->run_id)
        return op_error_set(s->err, OP_ENOMEM, "out of memory"), 1;
    return 0;
}

static void series_free(series *s)
{
    size_t i;

    for (i = 0; i < s->n; i++) {
        free(s->r[i].run_id);
        free(s->r[i].status);
        cJSON_Delete(s->r[i].metrics);
    }
    free(s->r);
}

static int series_read(store *st, const char *job, int limit, series *s,
                       op_error *err)
{
    memset(s, 0, sizeof *s);
    s->st = st;
    s->err = err;
    return store_each_run(st, job, NULL, NULL, 0, limit, take_run, s, err);
}

/* The value of metric (NULL: the duration) of run i, or NAN. */
static double run_value(const struct srun *e, const char *metric)
{
    const cJSON *v;

    if (!metric)
        return (e->set & MSET_DURATION_MS) ? (double)e->duration_ms : NAN;
    v = cJSON_GetObjectItemCaseSensitive(e->metrics, metric);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* A trend chart of metric over the newest UI_TREND_RUNS runs of s that
 * have it, oldest to newest. */
static int trend(FILE *f, const series *s, const char *title, const char *metric)
{
    size_t n = s->n < UI_TREND_RUNS ? s->n : UI_TREND_RUNS, i, k = 0;
    const char *labels[UI_TREND_RUNS];
    double v[UI_TREND_RUNS];
    hout h = {f, NULL, 0, 1};
    size_t len = metric ? strlen(metric) : 0;

    for (i = n; i-- > 0;) {
        double x = run_value(&s->r[i], metric);
        if (isfinite(x)) {
            labels[k] = s->r[i].label;
            v[k++] = x;
        }
    }
    html_trend_chart(&h, title, metric ? metric : "duration", labels, v, k,
                     !metric || (len > 3 && !strcmp(metric + len - 3, "_ms")));
    return (int)k;
}

/* Open findings (undecided or reopened) of a stored run. */
static int count_open(void *ud, const store_finding *f)
{
    size_t *n = ud;
    *n += !f->decision || !strcmp(f->decision, "open");
    return 0;
}

static size_t open_findings(store *st, int64_t pk, op_error *err)
{
    size_t n = 0;
    store_each_finding(st, pk, count_open, &n, err);
    return n;
}

/* ---- /jobs ------------------------------------------------------------------- */

typedef struct jobs_ctx {
    FILE *f;
    store *st;
    op_error *err;
    int rc;
} jobs_ctx;

static int job_row(void *ud, const store_job *j)
{
    jobs_ctx *c = ud;
    series s;
    FILE *f = c->f;

    if ((c->rc = series_read(c->st, j->job, UI_TREND_RUNS, &s, c->err))) {
        series_free(&s);
        return 1;
    }
    fputs("<tr><td>", f);
    put_job_link(f, j->job);
    fputs("</td><td>", f);
    html_put(f, j->source);
    fprintf(f, "</td><td class=\"num\">%lld</td><td>", (long long)j->nruns);
    if (s.n) {
        put_run_link(f, s.r[0].run_id, s.r[0].label);
        fputs("</td><td>", f);
        html_put(f, s.r[0].status ? s.r[0].status : "unknown");
        fputs("</td><td class=\"num\">", f);
        if (s.r[0].set & MSET_DURATION_MS) {
            char d[48];
            fputs(report_fmt_duration(d, sizeof d, (double)s.r[0].duration_ms), f);
        }
        fprintf(f, "</td><td class=\"num\">%zu</td><td>",
                open_findings(c->st, s.r[0].pk, c->err));
        trend(f, &s, "duration", NULL);
    } else {
        fputs("</td><td></td><td></td><td></td><td>", f);
    }
    fputs("</td></tr>\n", f);
    series_free(&s);
    return 0;
}

int ui_jobs_page(const srv_req *r, srv_resp *w)
{
    store *st;
    op_error err;
    jobs_ctx c = {NULL, NULL, &err, 0};

    if (open_store(r, w, &st))
        return 0;
    op_error_clear(&err);
    ui_open(r, w, "Jobs", "jobs");
    fputs("<h1>Jobs</h1>\n", w->f);
    if (!st) {
        fputs("<p>No run recorded yet: <a href=\"/\">upload</a> some files.</p>\n", w->f);
    } else {
        fputs("<table class=\"list jobs\"><thead><tr><th scope=\"col\">job</th>"
              "<th scope=\"col\">source</th><th scope=\"col\">runs</th>"
              "<th scope=\"col\">last run</th><th scope=\"col\">status</th>"
              "<th scope=\"col\">duration</th><th scope=\"col\">open findings</th>"
              "<th scope=\"col\">duration trend</th></tr></thead><tbody>\n", w->f);
        c.f = w->f;
        c.st = st;
        if (store_each_job(st, job_row, &c, &err) && !c.rc)
            c.rc = err.code ? err.code : OP_EIO;
        fputs("</tbody></table>\n", w->f);
        if (c.rc) {
            fputs("<p class=\"error\">", w->f);
            html_put(w->f, err.msg);
            fputs("</p>\n", w->f);
        }
    }
    ui_close(w);
    store_close(st);
    return 0;
}

/* ---- /jobs/{job} --------------------------------------------------------------- */

/* The run metrics charted: the first UI_TREND_METRICS numbers of the
 * newest run that has metrics. */
static size_t key_metrics(const series *s, const char **out)
{
    const cJSON *m;
    size_t i, n = 0;

    for (i = 0; i < s->n && !n; i++)
        cJSON_ArrayForEach(m, s->r[i].metrics)
            if (cJSON_IsNumber(m) && n < UI_TREND_METRICS)
                out[n++] = m->string;
    return n;
}

static void job_runs_table(FILE *f, const series *s, store *st, op_error *err)
{
    size_t i;

    fputs("<form method=\"get\" action=\"/diff\" class=\"pick\">\n"
          "<table class=\"list\"><thead><tr><th scope=\"col\">A</th>"
          "<th scope=\"col\">B</th><th scope=\"col\">started</th><th scope=\"col\">run</th>"
          "<th scope=\"col\">status</th><th scope=\"col\">duration</th>"
          "<th scope=\"col\">findings</th><th scope=\"col\">open</th><th scope=\"col\">"
          "</th></tr></thead><tbody>\n", f);
    for (i = 0; i < s->n; i++) {
        const struct srun *e = &s->r[i];
        char d[48];
        fputs("<tr><td><input type=\"radio\" name=\"a\" aria-label=\"A\" value=\"", f);
        html_put(f, e->run_id);
        fprintf(f, "\"%s></td><td><input type=\"radio\" name=\"b\" aria-label=\"B\" "
                "value=\"", i == 1 ? " checked" : "");
        html_put(f, e->run_id);
        fprintf(f, "\"%s></td><td>", i == 0 ? " checked" : "");
        ui_put_time(f, (e->set & MSET_STARTED_AT) ? e->started_at : 0);
        fputs("</td><td>", f);
        put_run_link(f, e->run_id, NULL);
        fputs("</td><td>", f);
        html_put(f, e->status ? e->status : "unknown");
        fprintf(f, "</td><td class=\"num\">%s</td><td class=\"num\">%lld</td>"
                "<td class=\"num\">%zu</td><td>", (e->set & MSET_DURATION_MS)
                ? report_fmt_duration(d, sizeof d, (double)e->duration_ms) : "",
                (long long)e->nfindings, open_findings(st, e->pk, err));
        if (i + 1 < s->n) {
            fputs("<a href=\"/diff?a=", f);
            ui_put_url(f, s->r[i + 1].run_id);
            fputs("&amp;b=", f);
            ui_put_url(f, e->run_id);
            fputs("\">diff with previous</a>", f);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</tbody></table>\n<button type=\"submit\">Diff A and B</button>\n</form>\n", f);
}

int ui_job_page(const srv_req *r, srv_resp *w)
{
    const char *job = r->nparam ? r->param[0] : NULL, *metrics[UI_TREND_METRICS];
    size_t i, nm;
    store *st;
    op_error err;
    series s;

    if (!ui_is_ref(job))
        return srv_fail(r, w, 400, "not a job name");
    if (open_store(r, w, &st))
        return 0;
    op_error_clear(&err);
    memset(&s, 0, sizeof s);
    if (!st || series_read(st, job, UI_RUNS_MAX, &s, &err) || !s.n) {
        int missing = !err.msg[0];
        series_free(&s);
        store_close(st);
        return missing ? srv_fail(r, w, 404, "no stored run of this job")
                       : srv_fail(r, w, 500, "%s", err.msg);
    }
    ui_open(r, w, job, "jobs");
    fputs("<h1>", w->f);
    html_put(w->f, job);
    fprintf(w->f, "</h1>\n<p class=\"meta\">%zu stored run%s%s</p>\n<div class=\"row\">\n",
            s.n, s.n == 1 ? "" : "s", s.n == UI_RUNS_MAX ? " (the newest)" : "");
    trend(w->f, &s, "Duration", NULL);
    nm = key_metrics(&s, metrics);
    for (i = 0; i < nm; i++)
        trend(w->f, &s, metrics[i], metrics[i]);
    fputs("</div>\n<h2>Runs</h2>\n", w->f);
    job_runs_table(w->f, &s, st, &err);
    ui_close(w);
    series_free(&s);
    store_close(st);
    return 0;
}

/* ---- /runs/{run} --------------------------------------------------------------- */

typedef struct run_ctx {
    const srv_req *r;
    srv_resp *w;
    FILE *f;
    store *st;
    op_error *err;
    size_t n;
    char prev[SRV_SEGMENT_MAX + 1];
} run_ctx;

static void kv_table(FILE *f, const char *title, const char *json)
{
    cJSON *o = json ? cJSON_Parse(json) : NULL;
    const cJSON *e;
    char buf[512];

    if (cJSON_GetArraySize(o)) {
        fputs("<h3>", f);
        html_put(f, title);
        fputs("</h3>\n<table><tbody>\n", f);
        cJSON_ArrayForEach(e, o) {
            fputs("<tr><th scope=\"row\"><code>", f);
            html_put(f, e->string);
            fputs("</code></th><td>", f);
            html_put(f, report_fmt_value(buf, sizeof buf, e));
            fputs("</td></tr>\n", f);
        }
        fputs("</tbody></table>\n", f);
    }
    cJSON_Delete(o);
}

static int node_row(void *ud, const store_node *n)
{
    run_ctx *c = ud;
    char d[48];

    if (c->n++ >= UI_NODES_MAX)
        return 0;
    fputs("<tr><td><code>", c->f);
    html_put(c->f, n->id);
    fputs("</code></td><td>", c->f);
    html_put(c->f, n->kind);
    fputs("</td><td>", c->f);
    html_put(c->f, n->name);
    fputs("</td><td>", c->f);
    html_put(c->f, n->status);
    fprintf(c->f, "</td><td class=\"num\">%s</td><td class=\"num\">",
            (n->set & MSET_DURATION_MS) ? report_fmt_duration(d, sizeof d, (double)n->duration_ms)
                                        : "");
    if (n->set & MSET_PARALLELISM)
        fprintf(c->f, "%lld", (long long)n->parallelism);
    fputs("</td></tr>\n", c->f);
    return 0;
}

static int finding_item(void *ud, const store_finding *sf)
{
    run_ctx *c = ud;
    cJSON *ch = sf->changes_json ? cJSON_Parse(sf->changes_json) : NULL;
    cJSON *ev = sf->evidence_json ? cJSON_Parse(sf->evidence_json) : NULL;
    ui_finding fi = {sf->rule, sf->severity, sf->fingerprint, sf->node, NULL,
                     sf->message, NULL, ch, ev, sf->decision, sf->comment};

    c->n++;
    ui_put_finding(c->f, c->r, &fi, NULL);
    cJSON_Delete(ch);
    cJSON_Delete(ev);
    return 0;
}

static int take_prev(void *ud, const store_run *r)
{
    run_ctx *c = ud;
    snprintf(c->prev, sizeof c->prev, "%s", r->run_id ? r->run_id : "");
    return 1;
}

static void run_header(run_ctx *c, const store_run *r)
{
    FILE *f = c->f;

    fputs("<h1>", f);
    html_put(f, r->source);
    fputs(" run <code>", f);
    html_put(f, r->run_id);
    fputs("</code></h1>\n<p class=\"meta\">job ", f);
    put_job_link(f, r->job);
    fputs(" \xc2\xb7 ", f);
    html_put(f, r->status ? r->status : "unknown");
    fputs(" \xc2\xb7 started ", f);
    ui_put_time(f, (r->set & MSET_STARTED_AT) ? r->started_at : 0);
    fputs(" \xc2\xb7 ", f);
    put_dur(f, r);
    fputs(" \xc2\xb7 engine ", f);
    html_put(f, r->engine_version ? r->engine_version : "-");
    fputs("</p>\n<p class=\"meta\">from ", f);
    html_put(f, r->origin ? r->origin : "-");
    fputs(", content ", f);
    html_put(f, r->content_hash ? r->content_hash : "-");
    fputs("</p>\n", f);
    if ((r->set & MSET_STARTED_AT) &&
        store_each_run(c->st, r->job, r->source, r->run_id, r->started_at, 1,
                       take_prev, c, c->err) == 1 && c->prev[0]) {
        fputs("<p><a href=\"/diff?a=", f);
        ui_put_url(f, c->prev);
        fputs("&amp;b=", f);
        ui_put_url(f, r->run_id);
        fputs("\">Diff with the previous run</a></p>\n", f);
    }
}

static int run_page(void *ud, const store_run *r)
{
    run_ctx *c = ud;
    FILE *f;

    ui_open(c->r, c->w, r->run_id ? r->run_id : "run", "jobs");
    f = c->f = c->w->f;
    run_header(c, r);
    kv_table(f, "Run metrics", r->metrics_json);
    fputs("<details class=\"data\"><summary>Config</summary>\n", f);
    kv_table(f, "Config", r->config_json);
    fputs("</details>\n<h2>Findings</h2>\n<p class=\"meta\">Decisions are made on "
          "the page of the analysis that found them.</p>\n", f);
    c->n = 0;
    if (store_each_finding(c->st, r->pk, finding_item, c, c->err))
        return 2;
    if (!c->n)
        fputs("<p>No findings.</p>\n", f);
    fputs("<h2>Nodes</h2>\n<table class=\"list\"><thead><tr><th scope=\"col\">id</th>"
          "<th scope=\"col\">kind</th><th scope=\"col\">name</th>"
          "<th scope=\"col\">status</th><th scope=\"col\">duration</th>"
          "<th scope=\"col\">parallelism</th></tr></thead><tbody>\n", f);
    c->n = 0;
    if (store_each_node(c->st, r->pk, node_row, c, c->err))
        return 2;
    fputs("</tbody></table>\n", f);
    if (c->n > UI_NODES_MAX)
        fprintf(f, "<p class=\"meta\">%zu more nodes not listed (at most %d are).</p>\n",
                c->n - UI_NODES_MAX, UI_NODES_MAX);
    ui_close(c->w);
    return 1;
}

int ui_run_page(const srv_req *r, srv_resp *w)
{
    const char *ref = r->nparam ? r->param[0] : NULL;
    run_ctx c;
    op_error err;
    store *st;
    int rc;

    if (!ui_is_ref(ref))
        return srv_fail(r, w, 400, "not a run id");
    if (open_store(r, w, &st))
        return 0;
    if (!st)
        return srv_fail(r, w, 404, "no stored run with this id");
    memset(&c, 0, sizeof c);
    op_error_clear(&err);
    c.r = r;
    c.w = w;
    c.st = st;
    c.err = &err;
    rc = store_find_run(st, ref, run_page, &c, &err);
    store_close(st);
    if (rc == 1)
        return 0;
    if (rc == 0)
        return srv_fail(r, w, 404, "no stored run with this id");
    return 1; /* a store error after the page began: 500, logged */
}

/* ---- /diff?a=&b= ------------------------------------------------------------- */

static void diff_form(const srv_req *r, srv_resp *w)
{
    ui_open(r, w, "Diff", "jobs");
    fputs("<h1>Diff two runs</h1>\n<p>Pick two runs on a <a href=\"/jobs\">job's page"
          "</a>, or name them (a run id, JOB@latest, JOB@previous or JOB@best):</p>\n"
          "<form method=\"get\" action=\"/diff\"><label>A <input type=\"text\" "
          "name=\"a\"></label><label>B <input type=\"text\" name=\"b\"></label>"
          "<button type=\"submit\">Diff</button></form>\n", w->f);
    ui_close(w);
}

int ui_diff_page(const srv_req *r, srv_resp *w)
{
    const char *ref[2] = {srv_arg(r, "a"), srv_arg(r, "b")};
    cJSON *run[2] = {NULL, NULL}, *d = NULL;
    op_error err;
    store *st = NULL;
    int i, rc = 0;

    if ((!ref[0] || !*ref[0]) && (!ref[1] || !*ref[1])) {
        diff_form(r, w);
        return 0;
    }
    if (!ui_is_ref(ref[0]) || !ui_is_ref(ref[1]))
        return srv_fail(r, w, 400, "a diff needs two runs: ?a=RUN&b=RUN");
    if (open_store(r, w, &st))
        return 0;
    if (!st)
        return srv_fail(r, w, 404, "no run recorded yet");
    op_error_clear(&err);
    for (i = 0; i < 2 && !rc; i++)
        rc = diff_stored_run(st, ref[i], &run[i], &err);
    if (!rc)
        rc = diff_runs(run[0], ref[0], run[1], ref[1], NULL, &d, &err);
    if (rc == OP_ENOTFOUND) { /* without the store's path */
        srv_fail(r, w, 404, "no stored run '%s' (a run id, JOB@latest, "
                 "JOB@previous or JOB@best)", ref[i - 1]);
        rc = 0;
    } else if (rc) {
        srv_fail(r, w, rc == OP_EUSAGE ? 400 : 500, "%s", err.msg);
        rc = 0;
    } else {
        ui_open(r, w, "Diff", "jobs");
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "same_job")))
            fputs("<p class=\"error\">These are runs of different jobs (or engines): the "
                  "diff compares unrelated work.</p>\n", w->f);
        rc = report_diff_html_body(w->f, d, 1);
        ui_close(w);
    }
    cJSON_Delete(d);
    cJSON_Delete(run[0]);
    cJSON_Delete(run[1]);
    store_close(st);
    return rc;
}
