/*
 * serve_ui_jobs.c - the run store's pages of `optipipe serve`: every job
 * with its last run, open findings and a duration trend (/jobs), one job's
 * runs with trend charts and the choice of two runs to diff
 * (/jobs/{job}), one stored run (/runs/{run}: why it failed, the
 * report's charts of it, what its metrics say) and the diff of two
 * (/diff?a=RUN&b=RUN, core/diff.h). The store is opened read-only per
 * request; every string from it is escaped.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <optipipe/grow.h>

#include "diff.h"
#include "report_html.h"
#include "report_util.h"
#include "serve_ui.h"
#include "store.h"
#include "util.h"

#define UI_NODES_MAX 500 /* nodes listed on a run page */
/* A run page draws the report's charts of runs of at most this many
 * nodes (the dbt Gantt's and the Spark timeline's own caps are lower) */
#define UI_CHART_NODES 5000
#define UI_LABEL 64
#define UI_JOBS_PAGE 50       /* jobs on one page of /jobs (?limit) */
#define UI_JOBS_PAGE_MAX 200
/* A job page parses the run metrics of its newest UI_TREND_RUNS runs only
 * (the charts), each at most UI_METRICS_JSON_MAX bytes of JSON; a larger
 * one is not charted and the page says so. */
#define UI_METRICS_JSON_MAX (64u * 1024)
/* A diff page loads two whole runs: at most UI_DIFF_NODES_MAX nodes each
 * (the CLI's `optipipe diff` takes any size), charged to --server-memory
 * at UI_DIFF_NODE_BYTES a node and UI_DIFF_FINDING_BYTES a finding (its
 * message and evidence, on both sides and in the comparison). */
#define UI_DIFF_NODES_MAX 20000
#define UI_DIFF_NODE_BYTES 2048u
#define UI_DIFF_FINDING_BYTES 8192u
/* What parsing metrics JSON of n bytes is charged (cJSON's nodes). */
#define UI_JSON_COST(n) ((uint64_t)(n) * 8 + 256)

/* Opens the store read-only; *st stays NULL when nothing was recorded
 * yet. 1 when the answer (500) is in w. */
static int open_store(const srv_req *r, srv_resp *w, store **st)
{
    op_error err;

    *st = NULL;
    op_error_clear(&err);
    if (!store_uri_is_pg(r->s->store_path) && access(r->s->store_path, F_OK))
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
    const srv_req *req;   /* for the budget */
    size_t n, cap, nval;
    size_t unparsed;      /* runs whose metrics were too large to chart */
    int metrics;          /* parse the run metrics (the job page's charts) */
    uint64_t charged;     /* taken from --server-memory for the metrics */
    struct srun {
        char *run_id, *status;
        int64_t started_at, duration_ms, pk, nfindings;
        unsigned set;
        cJSON *metrics;
        char label[UI_LABEL];
        char currency[33]; /* config optipipe.currency ("": none) */
    } *r;
} series;

/* The run's currency (config optipipe.currency, a short label that
 * costs_check allowed) into buf; "" when the config has none. */
static void run_currency(const char *config, char *buf, size_t cap)
{
    static const char key[] = "\"optipipe.currency\":";
    const char *p = config ? strstr(config, key) : NULL;
    size_t n = 0;

    if (p) {
        p += sizeof key - 1;
        while (*p == ' ')
            p++;
        if (*p++ == '"')
            while (p[n] && p[n] != '"' && p[n] != '\\' && n + 1 < cap)
                n++;
    }
    memcpy(buf, p && n ? p : "", n);
    buf[n] = '\0';
}

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
    run_currency(r->config_json, e->currency, sizeof e->currency);
    if (s->metrics && r->metrics_json && s->n <= UI_TREND_RUNS) {
        size_t ml = strlen(r->metrics_json);
        if (ml > UI_METRICS_JSON_MAX) {
            s->unparsed++;
        } else if (srv_budget_take(s->req->s, UI_JSON_COST(ml)) != 0) {
            return op_error_set(s->err, OP_ELIMIT, "the server is at its "
                                "memory budget (--server-memory)"), 1;
        } else {
            s->charged += UI_JSON_COST(ml);
            e->metrics = cJSON_Parse(r->metrics_json);
        }
    }
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
    srv_budget_give(s->charged);
    s->charged = 0;
}

/* The newest limit runs of job into s; metrics: parse the run metrics
 * of the newest UI_TREND_RUNS (charged to the budget). */
static int series_read(const srv_req *r, store *st, const char *job, int limit,
                       int metrics, series *s, op_error *err)
{
    memset(s, 0, sizeof *s);
    s->req = r;
    s->metrics = metrics;
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
    const srv_req *r;
    FILE *f;
    store *st;
    op_error *err;
    int rc;
    const char *before;  /* ?before: the page starts after this job */
    int passed, limit, n, more;
    char last[SRV_SEGMENT_MAX + 1];
} jobs_ctx;

static int job_row(void *ud, const store_job *j)
{
    jobs_ctx *c = ud;
    series s;
    FILE *f = c->f;

    if (!c->passed) {
        c->passed = strcmp(j->job, c->before) == 0;
        return 0;
    }
    if (c->n == c->limit) {
        c->more = 1;
        return 1;
    }
    c->n++;
    snprintf(c->last, sizeof c->last, "%s", j->job);
    if ((c->rc = series_read(c->r, c->st, j->job, UI_TREND_RUNS, 0, &s, c->err))) {
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

/* ?limit for a page of /jobs: UI_JOBS_PAGE, 1..UI_JOBS_PAGE_MAX; -1 after
 * answering 400. */
static int jobs_limit(const srv_req *r, srv_resp *w)
{
    const char *v = srv_arg(r, "limit");
    char *end;
    long n;

    if (!v)
        return UI_JOBS_PAGE;
    n = strtol(v, &end, 10);
    if (end == v || *end || n < 1 || n > UI_JOBS_PAGE_MAX) {
        srv_fail(r, w, 400, "limit '%.40s': a whole number from 1 to %d", v,
                 UI_JOBS_PAGE_MAX);
        return -1;
    }
    return (int)n;
}

static void jobs_next_link(FILE *f, const jobs_ctx *c)
{
    if (!c->more)
        return;
    fputs("<p class=\"pager\"><a rel=\"next\" href=\"/jobs?before=", f);
    ui_put_url(f, c->last);
    fprintf(f, "&amp;limit=%d\">Next %d jobs</a></p>\n", c->limit, c->limit);
}

int ui_jobs_page(const srv_req *r, srv_resp *w)
{
    store *st;
    op_error err;
    jobs_ctx c;

    memset(&c, 0, sizeof c);
    c.r = r;
    c.err = &err;
    c.before = srv_arg(r, "before");
    c.passed = !c.before;
    if (c.before && !ui_is_ref(c.before))
        return srv_fail(r, w, 400, "before: a job name (the last of the "
                        "previous page)");
    if ((c.limit = jobs_limit(r, w)) < 0)
        return 0;
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
        if (store_each_job(st, job_row, &c, &err) && !c.rc && !c.more)
            c.rc = err.code ? err.code : OP_EIO;
        fputs("</tbody></table>\n", w->f);
        jobs_next_link(w->f, &c);
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

/* Whether metric moved over the charted runs of s: two runs with
 * different values of it. A metric that is 0 or the same in every run
 * (no spill, no event) says nothing as a chart. */
static int moved(const series *s, const char *metric, double *first)
{
    size_t n = s->n < UI_TREND_RUNS ? s->n : UI_TREND_RUNS, i, k = 0;

    for (i = 0; i < n; i++) {
        double v = run_value(&s->r[i], metric);
        if (!isfinite(v))
            continue;
        if (k++ && v != *first)
            return 1;
        *first = v;
    }
    return 0;
}

/* The run metrics charted: the first UI_TREND_METRICS numbers of the
 * newest run that has metrics whose value moved; those that did not are
 * named in steady (at most UI_STEADY_MAX, *nsteady counts them all).
 * The first UI_METRICS_SCAN numbers are looked at (each lookup walks a
 * run's metrics: the page stays linear in the metrics' size). */
#define UI_STEADY_MAX 64
#define UI_METRICS_SCAN 256
static size_t key_metrics(const series *s, const char **out, const char **steady,
                          double *steady_v, size_t *nsteady)
{
    const cJSON *m;
    size_t i, n = 0, seen = 0;
    double v = 0;

    *nsteady = 0;
    for (i = 0; i < s->n && !n && !*nsteady; i++)
        cJSON_ArrayForEach(m, s->r[i].metrics) {
            if (!cJSON_IsNumber(m) || !strcmp(m->string, "estimated_cost"))
                continue; /* charted first */
            if (++seen > UI_METRICS_SCAN)
                break;
            if (moved(s, m->string, &v)) {
                if (n < UI_TREND_METRICS)
                    out[n++] = m->string;
            } else if ((*nsteady)++ < UI_STEADY_MAX) {
                steady[*nsteady - 1] = m->string;
                steady_v[*nsteady - 1] = v;
            }
        }
    return n;
}

/* The metrics not charted, compactly: their one value. */
static void put_steady(FILE *f, const char *const *steady, const double *v, size_t n)
{
    size_t i;
    char buf[64];

    if (!n)
        return;
    fprintf(f, "<p class=\"meta steady\">Not charted, the same in every run (%zu): ", n);
    for (i = 0; i < n && i < UI_STEADY_MAX; i++) {
        cJSON num = {0};
        num.type = cJSON_Number;
        num.valuedouble = v[i];
        fputs(i ? ", <code>" : "<code>", f);
        html_put(f, steady[i]);
        fputs("</code> ", f);
        html_put(f, report_fmt_named(buf, sizeof buf, steady[i], &num));
    }
    fputs(n > UI_STEADY_MAX ? ", ...</p>\n" : "</p>\n", f);
}

static void job_runs_table(FILE *f, const series *s, store *st, op_error *err)
{
    size_t i;

    fputs("<form method=\"get\" action=\"/diff\" class=\"pick\">\n"
          "<table class=\"list\"><thead><tr><th scope=\"col\">A</th>"
          "<th scope=\"col\">B</th><th scope=\"col\">started</th><th scope=\"col\">run</th>"
          "<th scope=\"col\">status</th><th scope=\"col\">duration</th>"
          "<th scope=\"col\">est. cost</th>"
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
        fprintf(f, "</td><td class=\"num\">%s</td><td class=\"num\">",
                (e->set & MSET_DURATION_MS)
                ? report_fmt_duration(d, sizeof d, (double)e->duration_ms) : "");
        if (isfinite(run_value(e, "estimated_cost")))
            html_put(f, report_amount(d, sizeof d, run_value(e, "estimated_cost"),
                                      *e->currency ? e->currency : NULL));
        fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">%zu</td><td>",
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

typedef struct run_ctx {
    const srv_req *r;
    srv_resp *w;
    FILE *f;
    store *st;
    op_error *err;
    size_t n;
    char prev[SRV_SEGMENT_MAX + 1];
} run_ctx;

static int finding_item(void *ud, const store_finding *sf);

/* The newest run's findings: what the history rules (trends, flaky tests,
 * needless rebuilds) said about the job as of its last run. */
static void newest_findings(const srv_req *r, FILE *f, store *st,
                            const struct srun *e, op_error *err)
{
    run_ctx c;

    memset(&c, 0, sizeof c);
    c.r = r;
    c.f = f;
    c.st = st;
    c.err = err;
    fputs("<h2>Findings of the newest run</h2>\n", f);
    if (store_each_finding(st, e->pk, finding_item, &c, err) || !c.n)
        fputs("<p>No findings.</p>\n", f);
}

int ui_job_page(const srv_req *r, srv_resp *w)
{
    const char *job = r->nparam ? r->param[0] : NULL, *metrics[UI_TREND_METRICS];
    const char *steady[UI_STEADY_MAX];
    double steady_v[UI_STEADY_MAX];
    size_t i, nm, nsteady = 0;
    store *st;
    op_error err;
    series s;

    if (!ui_is_ref(job))
        return srv_fail(r, w, 400, "not a job name");
    if (open_store(r, w, &st))
        return 0;
    op_error_clear(&err);
    memset(&s, 0, sizeof s);
    if (!st || series_read(r, st, job, UI_RUNS_MAX, 1, &s, &err) || !s.n) {
        int missing = !err.msg[0], code = err.code == OP_ELIMIT ? 503 : 500;
        series_free(&s);
        store_close(st);
        return missing ? srv_fail(r, w, 404, "no stored run of this job")
                       : srv_fail(r, w, code, "%s", err.msg);
    }
    ui_open(r, w, job, "jobs");
    fputs("<h1>", w->f);
    html_put(w->f, job);
    fprintf(w->f, "</h1>\n<p class=\"meta\">%zu stored run%s%s</p>\n<div class=\"row\">\n",
            s.n, s.n == 1 ? "" : "s", s.n == UI_RUNS_MAX ? " (the newest)" : "");
    if (s.unparsed)
        fprintf(w->f, "<p class=\"meta\">%zu run%s metrics are larger than %u "
                "bytes and not charted.</p>\n", s.unparsed,
                s.unparsed == 1 ? "'s" : "s'", UI_METRICS_JSON_MAX);
    trend(w->f, &s, "Duration", NULL);
    /* the money each run cost, when recorded with rates (docs/costs.md) */
    for (i = 0; i < s.n && i < UI_TREND_RUNS; i++)
        if (isfinite(run_value(&s.r[i], "estimated_cost"))) {
            trend(w->f, &s, "Estimated cost", "estimated_cost");
            break;
        }
    nm = key_metrics(&s, metrics, steady, steady_v, &nsteady);
    for (i = 0; i < nm; i++)
        trend(w->f, &s, metrics[i], metrics[i]);
    fputs("</div>\n", w->f);
    if (s.n > 1) /* one run: nothing could move; its page has the values */
        put_steady(w->f, steady, steady_v, nsteady);
    fputs("<h2>Runs</h2>\n", w->f);
    job_runs_table(w->f, &s, st, &err);
    newest_findings(r, w->f, st, &s.r[0], &err);
    ui_close(w);
    series_free(&s);
    store_close(st);
    return 0;
}

/* ---- /runs/{run} --------------------------------------------------------------- */


/* A table of a JSON object's entries; skip: keys left out (NULL-ended,
 * may be NULL). zeros: numbers that are 0 are named in one line under
 * the table instead of a row each (what did not happen: no spill, no
 * event). */
static void kv_table(FILE *f, const char *title, const char *json,
                     const char *const *skip, int zeros)
{
    cJSON *o = json ? cJSON_Parse(json) : NULL;
    const cJSON *e;
    char buf[512];
    size_t nzero = 0, rows = 0, i;

    cJSON_ArrayForEach(e, o) {
        int left = 0;
        for (i = 0; skip && skip[i]; i++)
            left |= !strcmp(e->string, skip[i]);
        if (left)
            continue;
        if (zeros && cJSON_IsNumber(e) && e->valuedouble == 0) {
            nzero++;
            continue;
        }
        if (!rows++) {
            fputs("<h3>", f);
            html_put(f, title);
            fputs("</h3>\n<table><tbody>\n", f);
        }
        fputs("<tr><th scope=\"row\"><code>", f);
        html_put(f, e->string);
        fputs("</code></th><td>", f);
        html_put(f, report_fmt_named(buf, sizeof buf, e->string, e));
        fputs("</td></tr>\n", f);
    }
    if (rows)
        fputs("</tbody></table>\n", f);
    if (nzero) {
        fputs("<p class=\"meta zeros\">", f);
        html_put(f, title);
        fprintf(f, " at 0 (%zu): ", nzero);
        i = 0;
        cJSON_ArrayForEach(e, o)
            if (cJSON_IsNumber(e) && e->valuedouble == 0) {
                fputs(i++ ? ", <code>" : "<code>", f);
                html_put(f, e->string);
                fputs("</code>", f);
            }
        fputs("</p>\n", f);
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
                     sf->message, NULL, ch, ev, sf->decision, sf->comment,
                     NULL, NULL};

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
    fputs("</code></h1>\n<p class=\"meta\">", f);
    if (r->name) {
        html_put(f, r->name);
        fputs(" \xc2\xb7 ", f);
    }
    fputs("job ", f);
    put_job_link(f, r->job);
    fputs(" \xc2\xb7 ", f);
    html_put(f, r->status ? r->status : "unknown");
    fputs(" \xc2\xb7 started ", f);
    ui_put_time(f, (r->set & MSET_STARTED_AT) ? r->started_at : 0);
    if (r->set & MSET_ENDED_AT) {
        fputs(" \xc2\xb7 ended ", f);
        ui_put_time(f, r->ended_at);
    }
    fputs(" \xc2\xb7 ", f);
    put_dur(f, r);
    /* the engine is the run's source; its version when the input said */
    fputs(" \xc2\xb7 engine ", f);
    html_put(f, r->source ? r->source : "unknown");
    if (r->engine_version && *r->engine_version) {
        fputc(' ', f);
        html_put(f, r->engine_version);
    }
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

/* The run attrs that say why it failed (Flink: docs/model-flink.md). */
static const char *const failure_attrs[] = {"last_exception", "last_root_cause",
                                            NULL};

/* Why a failed run failed, from its attrs: the newest exception with its
 * root cause; a failed run without them says so. */
static void run_failure(FILE *f, const store_run *r)
{
    cJSON *a = r->attrs_json ? cJSON_Parse(r->attrs_json) : NULL;
    const cJSON *ex = cJSON_GetObjectItemCaseSensitive(a, "last_exception");
    const cJSON *root = cJSON_GetObjectItemCaseSensitive(a, "last_root_cause");
    int failed = r->status && !strcmp(r->status, "failed");

    if (!failed && !cJSON_IsString(ex))
        goto out;
    fputs("<section class=\"failure\" aria-label=\"Failure\">\n<h2>", f);
    fputs(failed ? "Why it failed" : "Its last exception", f);
    fputs("</h2>\n", f);
    if (cJSON_IsString(ex)) {
        fputs("<pre class=\"failure\">", f);
        html_put(f, ex->valuestring);
        if (cJSON_IsString(root) && strcmp(root->valuestring, ex->valuestring)) {
            fputs("\nCaused by: ", f);
            html_put(f, root->valuestring);
        }
        fputs("</pre>\n", f);
    } else {
        fputs("<p>Its data says no more: no exception was exported with it.</p>\n", f);
    }
    fputs("</section>\n", f);
out:
    cJSON_Delete(a);
}

/* The charts the full report draws for the run (the Spark stage
 * timeline, the dbt Gantt: core's html_stored_charts), for runs of at
 * most UI_CHART_NODES nodes, charged to --server-memory. */
static void run_charts(run_ctx *c, const store_run *r)
{
    uint64_t charge = (uint64_t)(r->nnodes > 0 ? r->nnodes : 0) * UI_DIFF_NODE_BYTES +
                      UI_JSON_COST(r->metrics_json ? strlen(r->metrics_json) : 0);
    unsigned nfig = 0;
    op_error err;

    op_error_clear(&err);
    if (r->nnodes > UI_CHART_NODES) {
        fprintf(c->f, "<h2>Charts</h2>\n<p class=\"meta\">Not drawn here: the run has "
                "%lld nodes, more than the %d a run page charts; the analysis' full "
                "report has them.</p>\n", (long long)r->nnodes, UI_CHART_NODES);
        return;
    }
    if (srv_budget_take(c->r->s, charge) != 0) {
        fputs("<h2>Charts</h2>\n<p class=\"meta\">Not drawn now: the server is at "
              "its memory budget (--server-memory); reload later.</p>\n", c->f);
        return;
    }
    fputs("<h2>Charts</h2>\n", c->f);
    if (html_stored_charts(c->f, c->st, r, UI_CHART_NODES, &nfig, &err)) {
        fputs("<p class=\"meta\">No chart: ", c->f);
        html_put(c->f, err.msg);
        fputs("</p>\n", c->f);
    } else if (!nfig) {
        fputs("<p class=\"meta\">No chart for this run: its stored data has no "
              "timeline to draw.</p>\n", c->f);
    }
    srv_budget_give(charge);
}

static int run_page(void *ud, const store_run *r)
{
    run_ctx *c = ud;
    FILE *f;

    ui_open(c->r, c->w, r->run_id ? r->run_id : "run", "jobs");
    f = c->f = c->w->f;
    run_header(c, r);
    run_failure(f, r);
    fputs("<h2>Findings</h2>\n<p class=\"meta\">Decisions are made on "
          "the page of the analysis that found them.</p>\n", f);
    c->n = 0;
    if (store_each_finding(c->st, r->pk, finding_item, c, c->err))
        return 2;
    if (!c->n)
        fputs("<p>No findings.</p>\n", f);
    run_charts(c, r);
    kv_table(f, "Run metrics", r->metrics_json, NULL, 1);
    fputs("<details class=\"data\"><summary>Attributes and config</summary>\n", f);
    kv_table(f, "Attributes", r->attrs_json, failure_attrs, 0);
    kv_table(f, "Config", r->config_json, NULL, 0);
    fputs("</details>\n<h2>Nodes</h2>\n<table class=\"list\"><thead><tr><th scope=\"col\">id</th>"
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

static int most_nodes(void *ud, const store_run *r)
{
    int64_t *n = ud;

    if (r->nnodes > n[0])
        n[0] = r->nnodes;
    if (r->nfindings > n[1])
        n[1] = r->nfindings;
    return 0;
}

/* The nodes of stored run ref (for JOB@best, of the largest run it may
 * pick), before it is loaded: 0 when there is no such run; its findings
 * (the most of those runs) into *nfindings. */
static int64_t ref_nodes(store *st, const char *ref, int64_t *nfindings,
                         op_error *err)
{
    size_t n = strlen(ref);
    int64_t most[2] = {0, 0};

    if (n > 5 && !strcmp(ref + n - 5, "@best")) {
        char job[SRV_SEGMENT_MAX + 1];
        snprintf(job, sizeof job, "%.*s", (int)(n - 5), ref);
        store_each_run(st, job, NULL, NULL, 0, STORE_HISTORY_MAX, most_nodes,
                       most, err);
    } else {
        store_find_run(st, ref, most_nodes, most, err);
    }
    *nfindings = most[1];
    return most[0];
}

/* 0 when the two runs fit a diff page, with *charge taken from the
 * budget; 1 after answering 413 (too many nodes) or 503 (budget). */
static int diff_fits(const srv_req *r, srv_resp *w, store *st,
                     const char *const ref[2], uint64_t *charge)
{
    int64_t n[2], nf[2];
    int i;

    *charge = 0;
    for (i = 0; i < 2; i++) {
        op_error err;
        op_error_clear(&err);
        n[i] = ref_nodes(st, ref[i], &nf[i], &err);
        if (n[i] > UI_DIFF_NODES_MAX)
            return srv_fail(r, w, 413, "run '%s' has %lld nodes, more than "
                            "the %d a diff page compares: `optipipe diff --history "
                            "DATA/history.db %s %s` compares runs of any "
                            "size", ref[i], (long long)n[i], UI_DIFF_NODES_MAX,
                            ref[0], ref[1]), 1;
    }
    *charge = (uint64_t)(n[0] + n[1]) * UI_DIFF_NODE_BYTES +
              (uint64_t)(nf[0] + nf[1]) * UI_DIFF_FINDING_BYTES;
    if (srv_budget_take(r->s, *charge) != 0) {
        *charge = 0;
        w->retry_after = 5;
        return srv_fail(r, w, 503, "the server is at its memory budget "
                        "(--server-memory): try the diff again later"), 1;
    }
    return 0;
}

int ui_diff_page(const srv_req *r, srv_resp *w)
{
    const char *ref[2] = {srv_arg(r, "a"), srv_arg(r, "b")};
    cJSON *run[2] = {NULL, NULL}, *d = NULL;
    op_error err;
    store *st = NULL;
    uint64_t charge = 0;
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
    if (diff_fits(r, w, st, ref, &charge)) {
        store_close(st);
        return 0;
    }
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
    srv_budget_give(charge);
    return rc;
}
