/*
 * serve_metrics.c - the server's counters (lock-free atomics: every HTTP
 * thread counts), the analysis duration histogram, GET /healthz and GET
 * /metrics (Prometheus text exposition format 0.0.4), and the route table
 * of serve_http.c's own routes (srv_routes_http).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonw.h"
#include "serve.h"
#include "serve_http.h"
#include "store.h"
#include "util.h"

/* /healthz opens the store at most this often (ms); the requests between
 * two probes, and those that come while one runs, get the last result. */
#define STORE_PROBE_MS 2000

/* Upper bounds of the duration buckets, in seconds (+Inf follows). */
static const double bucket_s[] = {0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
                                  600, 1800};
#define NBUCKETS (sizeof bucket_s / sizeof bucket_s[0])

struct srv_metrics {
    atomic_uint_least64_t c[SRV_M_COUNT];
    atomic_uint_least64_t ended[SRV_STATES]; /* by end state */
    atomic_uint_least64_t bucket[NBUCKETS + 1];  /* not cumulative; last: +Inf */
    atomic_uint_least64_t sum_ms, count;
    /* the store as /healthz last found it (under mu) */
    pthread_mutex_t mu;
    int probing, checked, store_ok;
    uint64_t checked_ms;
    char store_err[512];
};

int metrics_new(srv_metrics **out, op_error *err)
{
    srv_metrics *m = calloc(1, sizeof *m);
    size_t i;

    *out = NULL;
    if (!m)
        return op_error_set(err, OP_ENOMEM, "out of memory (metrics)");
    for (i = 0; i < SRV_M_COUNT; i++)
        atomic_init(&m->c[i], 0);
    for (i = 0; i < SRV_STATES; i++)
        atomic_init(&m->ended[i], 0);
    for (i = 0; i <= NBUCKETS; i++)
        atomic_init(&m->bucket[i], 0);
    atomic_init(&m->sum_ms, 0);
    atomic_init(&m->count, 0);
    pthread_mutex_init(&m->mu, NULL);
    *out = m;
    return 0;
}

void metrics_free(srv_metrics *m)
{
    if (!m)
        return;
    pthread_mutex_destroy(&m->mu);
    free(m);
}

void srv_count(srv *s, srv_metric m, uint64_t n)
{
    if (s && s->metrics && (unsigned)m < SRV_M_COUNT)
        atomic_fetch_add_explicit(&s->metrics->c[m], n, memory_order_relaxed);
}

void srv_observe_analysis(srv *s, srv_state end, uint64_t ms)
{
    srv_metrics *m = s ? s->metrics : NULL;
    size_t b = 0;

    if (!m)
        return;
    while (b < NBUCKETS && (double)ms > bucket_s[b] * 1000.0)
        b++;
    if ((unsigned)end < SRV_STATES)
        atomic_fetch_add(&m->ended[end], 1);
    atomic_fetch_add(&m->bucket[b], 1);
    atomic_fetch_add(&m->sum_ms, ms);
    atomic_fetch_add(&m->count, 1);
}

static uint64_t get(atomic_uint_least64_t *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

static void jobs_now(srv *s, srv_jobs_stats *st)
{
    memset(st, 0, sizeof *st);
    if (s->jobs)
        jobs_stats(s->jobs, st);
}

/* ---- GET /healthz ------------------------------------------------------- */

/* Opens the store as a reader would: 0, or the error in msg. A store not
 * made yet (no file, or the first recording still making its schema) is
 * reachable: the first recording makes it. */
static int probe_store(const char *path, char *msg, size_t cap)
{
    store *st = NULL;
    op_error err;
    int rc;

    op_error_clear(&err);
    rc = store_open(path, 0, &st, &err);
    if (rc == OP_ENOTFOUND)
        rc = 0;
    else if (rc)
        snprintf(msg, cap, "%s", err.msg);
    store_close(st);
    return rc;
}

/* A probe's result (rc, its reason e) as the state; mu held. */
static void probe_done(srv_metrics *m, int rc, const char *e)
{
    if (rc && (m->store_ok || !m->checked || strcmp(e, m->store_err)))
        fprintf(stderr, "optipipe serve: /healthz: the run store is "
                "unreachable: %s\n", e);
    else if (!rc && m->checked && !m->store_ok)
        fprintf(stderr, "optipipe serve: /healthz: the run store is "
                "reachable again\n");
    m->store_ok = !rc;
    snprintf(m->store_err, sizeof m->store_err, "%s", e);
    m->checked_ms = util_now_ms();
    m->checked = 1;
    m->probing = 0;
}

/* Whether the store was reachable at the last probe (one running at a
 * time, at most every STORE_PROBE_MS). The reason, which names the store
 * (a host, a user), goes to the server's log when the state changes, not
 * to the anonymous answer. */
static int store_reachable(srv *s)
{
    srv_metrics *m = s->metrics;
    uint64_t now = util_now_ms();
    char e[sizeof m->store_err] = "";
    int probe, ok, rc;

    pthread_mutex_lock(&m->mu);
    probe = !m->probing &&
            (!m->checked || now - m->checked_ms >= STORE_PROBE_MS);
    m->probing |= probe;
    ok = !m->checked || m->store_ok; /* the first probe still running */
    pthread_mutex_unlock(&m->mu);
    if (!probe)
        return ok;
    rc = probe_store(s->store_path, e, sizeof e);
    pthread_mutex_lock(&m->mu);
    probe_done(m, rc, e);
    pthread_mutex_unlock(&m->mu);
    return !rc;
}

static int healthz(const srv_req *r, srv_resp *w)
{
    srv_jobs_stats st;
    int ok = store_reachable(r->s);
    jw j;

    jobs_now(r->s, &st);
    jw_init(&j, w->f, 0);
    jw_obj(&j);
    jw_key(&j, "status");
    jw_str(&j, ok ? "ok" : "store unreachable");
    jw_key(&j, "store");
    jw_obj(&j);
    jw_key(&j, "backend");
    jw_str(&j, store_uri_is_pg(r->s->store_path) ? "postgresql" : "sqlite");
    jw_key(&j, "reachable");
    jw_bool(&j, ok);
    if (!ok) {
        jw_key(&j, "error");
        jw_str(&j, "the server cannot open its run store (its log says why)");
    }
    jw_obj_end(&j);
    jw_key(&j, "version");
    jw_str(&j, OP_VERSION);
    jw_key(&j, "queue");
    jw_int(&j, (int64_t)st.queued);
    jw_key(&j, "running");
    jw_int(&j, (int64_t)st.running);
    jw_obj_end(&j);
    fputc('\n', w->f);
    w->status = ok ? 200 : 503;
    w->type = "application/json";
    return 0;
}

/* ---- GET /metrics ------------------------------------------------------- */

static void family(FILE *f, const char *name, const char *type,
                   const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(FILE *f, const char *name, const char *help, uint64_t v)
{
    family(f, name, "counter", help);
    fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void gauge(FILE *f, const char *name, const char *help, uint64_t v)
{
    family(f, name, "gauge", help);
    fprintf(f, "%s %llu\n", name, (unsigned long long)v);
}

static void rejections(FILE *f, srv_metrics *m)
{
    static const struct {
        const char *reason;
        srv_metric m;
    } r[] = {{"queue_full", SRV_M_REJECT_QUEUE}, {"too_large", SRV_M_REJECT_SIZE},
             {"unauthorized", SRV_M_REJECT_AUTH}, {"csrf", SRV_M_REJECT_CSRF},
             {"bad_request", SRV_M_REJECT_BAD}};
    size_t i;

    family(f, "optipipe_rejections_total", "counter",
           "requests refused, by reason (queue_full 429, too_large 413, "
           "unauthorized 401, csrf 403 by CSRF/Origin/Host, bad_request other 4xx)");
    for (i = 0; i < sizeof r / sizeof r[0]; i++)
        fprintf(f, "optipipe_rejections_total{reason=\"%s\"} %llu\n",
                r[i].reason, (unsigned long long)get(&m->c[r[i].m]));
}

static void durations(FILE *f, srv_metrics *m)
{
    uint64_t cum = 0;
    size_t b;

    family(f, "optipipe_analyses_total", "counter",
           "analyses that ended, by end state");
    fprintf(f, "optipipe_analyses_total{state=\"done\"} %llu\n",
            (unsigned long long)get(&m->ended[SRV_DONE]));
    fprintf(f, "optipipe_analyses_total{state=\"failed\"} %llu\n",
            (unsigned long long)get(&m->ended[SRV_FAILED]));
    fprintf(f, "optipipe_analyses_total{state=\"record-failed\"} %llu\n",
            (unsigned long long)get(&m->ended[SRV_RECORD_FAILED]));
    family(f, "optipipe_analysis_duration_seconds", "histogram",
           "wall clock of the analyses that ended");
    for (b = 0; b <= NBUCKETS; b++) {
        cum += get(&m->bucket[b]);
        if (b < NBUCKETS)
            fprintf(f, "optipipe_analysis_duration_seconds_bucket{le=\"%g\"} %llu\n",
                    bucket_s[b], (unsigned long long)cum);
        else
            fprintf(f, "optipipe_analysis_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
                    (unsigned long long)cum);
    }
    fprintf(f, "optipipe_analysis_duration_seconds_sum %.3f\n",
            (double)get(&m->sum_ms) / 1000.0);
    fprintf(f, "optipipe_analysis_duration_seconds_count %llu\n",
            (unsigned long long)get(&m->count));
}

static int metrics_page(const srv_req *r, srv_resp *w)
{
    srv_metrics *m = r->s->metrics;
    srv_jobs_stats st;
    FILE *f = w->f;

    jobs_now(r->s, &st);
    counter(f, "optipipe_http_requests_total", "HTTP requests answered",
            get(&m->c[SRV_M_REQUESTS]));
    counter(f, "optipipe_uploads_total", "uploads accepted",
            get(&m->c[SRV_M_UPLOADS]));
    counter(f, "optipipe_upload_bytes_total", "bytes of the accepted uploads",
            get(&m->c[SRV_M_UPLOAD_BYTES]));
    rejections(f, m);
    counter(f, "optipipe_http_errors_total", "answers with a 5xx status",
            get(&m->c[SRV_M_ERRORS]));
    counter(f, "optipipe_decisions_total", "decisions written",
            get(&m->c[SRV_M_DECISIONS]));
    gauge(f, "optipipe_queue_length", "analyses waiting for a worker",
          st.queued);
    gauge(f, "optipipe_analyses_running", "analyses running now", st.running);
    gauge(f, "optipipe_server_memory_bytes", "what the answers and pages "
          "being built or sent hold of the --server-memory budget",
          srv_budget_used());
    durations(f, m);
    srv_notify_metrics(r->s, f);
    family(f, "optipipe_build_info", "gauge", "the version serving");
    fprintf(f, "optipipe_build_info{version=\"%s\"} 1\n", OP_VERSION);
    w->status = 200;
    w->type = "text/plain; version=0.0.4; charset=utf-8";
    return 0;
}

const srv_route srv_routes_http[] = {
    {"GET", "/healthz", SRV_PUBLIC | SRV_API | SRV_LIGHT, healthz,
     "liveness: status, version, queue length, running analyses"},
    {"GET", "/metrics", SRV_API | SRV_LIGHT, metrics_page,
     "Prometheus text format 0.0.4 (behind the token when tokens are on)"},
    {"GET", "/login", SRV_PUBLIC | SRV_LIGHT, srv_login_page, "the sign-in form"},
    {"POST", "/login", SRV_PUBLIC | SRV_BODY | SRV_FORM, srv_login_post,
     "sign in with a token: a browser session cookie"},
    {"POST", "/logout", SRV_BODY | SRV_FORM, srv_logout_post,
     "end the browser session"},
    {0}};
