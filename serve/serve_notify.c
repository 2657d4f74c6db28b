/*
 * serve_notify.c - the server's own webhook notifications (docs/serve.md
 * "Webhook notifications", docs/notify.md): the `notify` endpoints of its
 * --config, a bounded delivery queue fed when an analysis ends
 * (serve_jobs.c calls srv_notify_ended after the end is visible), one
 * delivery thread that hands each analysis' events to core's
 * notify_deliver (the CLI's implementation: payloads, signature, retries,
 * "once until it changes" through the run store, the delivery log), the
 * counters of /metrics, GET /api/v1/notifications and its page,
 * /notifications.
 *
 * Why a thread of its own: a slow or unreachable receiver may take its
 * endpoints' deadline_ms; it must delay neither an analysis (a worker
 * slot) nor a request (an HTTP thread). A full queue drops the analysis'
 * delivery: counted (result="dropped"), said on stderr, never silent.
 *
 * Locking: srv_notify.mu guards the queue and the stopping flag; it is
 * never held across a delivery, a file read or the store. The counters
 * are atomics (the metrics page reads them from any HTTP thread).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "config.h"
#include "jsonw.h"
#include "notify.h"
#include "report_html.h"
#include "serve.h"
#include "serve_ui.h"
#include "store.h"
#include "testhook.h"

/* result="ok|failed|dropped" of optipipe_notify_deliveries_total */
enum { NR_OK = 0, NR_FAILED, NR_DROPPED, NR_COUNT };
static const char *const result_names[NR_COUNT] = {"ok", "failed", "dropped"};

/* The link of an analysis' page: --public-origin + this + its id. */
#define LINK_PATH "/analyses/"
#define LINK_MAX 1200
/* GET /api/v1/notifications: rows listed by default, at most. */
#define LOG_LIMIT_DEFAULT 100
#define LOG_LIMIT_MAX 1000

/* One analysis that ended, waiting for its delivery. */
typedef struct notify_item {
    char id[SRV_ID_LEN + 1];
    int failed;                          /* failed or record-failed */
    char reason[sizeof(((srv_analysis *)0)->error)];
} notify_item;

struct srv_notify {
    srv *s;
    cJSON *cfg;                          /* the checked `notify`, owned */
    size_t nep;
    char names[NOTIFY_MAX_ENDPOINTS][NOTIFY_NAME_MAX + 1];
    atomic_uint_least64_t count[NOTIFY_MAX_ENDPOINTS][NR_COUNT];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    notify_item *q;                      /* a ring of SRV_NOTIFY_QUEUE */
    size_t head, n;
    int stopping, started;
    int curl;                            /* curl_global_init taken */
    pthread_t thread;
};

/* ---- counting --------------------------------------------------------------- */

/* Every endpoint's delivery of one analysis that was never tried. */
static void drop(srv_notify *nt, const char *id, const char *why)
{
    for (size_t i = 0; i < nt->nep; i++)
        atomic_fetch_add(&nt->count[i][NR_DROPPED], 1);
    fprintf(stderr, "optipipe serve: notify: analysis %s: notifications "
            "dropped: %s\n", id, why);
}

static void count_result(srv_notify *nt, const notify_result *res)
{
    for (size_t i = 0; i < res->nep && i < nt->nep; i++)
        if (res->ep[i].outcome)
            atomic_fetch_add(&nt->count[i][res->ep[i].outcome > 0 ? NR_OK
                                                                  : NR_FAILED],
                             1);
}

/* ---- one delivery ------------------------------------------------------------- */

/* DATA/analyses/<id>/notify.json into *out: 0; 1 when there is none (the
 * worker wrote no events); else an op_status with err. */
static int read_events(const srv *s, const char *id, notify_events *out,
                       op_error *err)
{
    char path[4096 + 64], *buf = NULL;
    struct stat st;
    ssize_t len = 0, k;
    int fd, rc = 0;

    memset(out, 0, sizeof *out);
    snprintf(path, sizeof path, "%s/analyses/%s/%s", s->data, id,
             SRV_NOTIFY_JSON);
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return errno == ENOENT ? 1 : op_error_set(err, OP_EIO, "%s: %s",
                                                  SRV_NOTIFY_JSON,
                                                  strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = op_error_set(err, OP_EIO, "%s: not a regular file",
                          SRV_NOTIFY_JSON);
    else if (st.st_size > (off_t)NOTIFY_EVENTS_FILE_MAX)
        rc = op_error_set(err, OP_ELIMIT, "%s: larger than %u bytes",
                          SRV_NOTIFY_JSON, NOTIFY_EVENTS_FILE_MAX);
    else if (!(buf = malloc((size_t)st.st_size + 1)))
        rc = op_error_set(err, OP_ENOMEM, "out of memory");
    while (!rc && len < (ssize_t)st.st_size) {
        k = read(fd, buf + len, (size_t)st.st_size - (size_t)len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            rc = op_error_set(err, OP_EIO, "%s: cut short", SRV_NOTIFY_JSON);
        else
            len += k;
    }
    close(fd);
    if (!rc && (rc = notify_events_parse(buf, (size_t)len, out, err))) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        op_error_set(err, rc, "%s: %s", SRV_NOTIFY_JSON, why);
    }
    free(buf);
    return rc;
}

/* The events of it: its notify.json, or its failure. 0, or nonzero after
 * saying why on stderr (nothing is delivered then). */
static int events_of(srv_notify *nt, const notify_item *it, const char *link,
                     notify_events *e)
{
    op_error err;
    int rc;

    op_error_clear(&err);
    if (it->failed)
        rc = notify_collect(NULL, NULL, it->reason[0] ? it->reason
                            : "the analysis failed", e, &err);
    else if ((rc = read_events(nt->s, it->id, e, &err)) == 1)
        rc = 0; /* none: still a success (it forgets the failures told) */
    if (rc) {
        fprintf(stderr, "optipipe serve: notify: analysis %s: nothing "
                "delivered: %s\n", it->id, err.msg);
        return rc;
    }
    for (size_t i = 0; i < e->n; i++) {
        e->ev[i].analysis = it->id;
        e->ev[i].link = *link ? link : NULL;
    }
    return 0;
}

static void deliver(srv_notify *nt, const notify_item *it)
{
    const char *origin = nt->s->o->public_origin;
    char link[LINK_MAX];
    notify_events e;
    notify_result res;
    store *st = NULL;
    op_error err;
    size_t ol = origin ? strlen(origin) : 0;

    link[0] = '\0';
    while (ol && origin[ol - 1] == '/')
        ol--;
    if (ol)
        snprintf(link, sizeof link, "%.*s%s%s", (int)ol, origin, LINK_PATH,
                 it->id);
    if (events_of(nt, it, link, &e)) {
        drop(nt, it->id, "its events could not be read");
        notify_events_free(&e);
        return;
    }
    op_error_clear(&err);
    if (store_open(nt->s->store_path, 1, &st, &err)) {
        fprintf(stderr, "optipipe serve: notify: analysis %s: run store: %s "
                "(delivered without it: not deduplicated, not logged)\n",
                it->id, err.msg);
        st = NULL;
    }
    notify_deliver(nt->cfg, &e, st, stderr, &res);
    count_result(nt, &res);
    store_close(st);
    notify_events_free(&e);
}

static void *notify_main(void *ud)
{
    srv_notify *nt = ud;
    notify_item *it = malloc(sizeof *it); /* large: not on the stack */

    pthread_mutex_lock(&nt->mu);
    for (;;) {
        while (!nt->stopping && !nt->n)
            pthread_cond_wait(&nt->cv, &nt->mu);
        if (nt->stopping || !it)
            break;
        *it = nt->q[nt->head];
        nt->head = (nt->head + 1) % SRV_NOTIFY_QUEUE;
        nt->n--;
        pthread_mutex_unlock(&nt->mu);
        op_testhook("serve.notify"); /* a test holds the delivery here */
        deliver(nt, it);
        pthread_mutex_lock(&nt->mu);
    }
    /* stopping (or no memory): what waits is dropped, and counted so */
    while (nt->n) {
        drop(nt, nt->q[nt->head].id, nt->stopping ? "the server stopped "
             "before its delivery" : "out of memory");
        nt->head = (nt->head + 1) % SRV_NOTIFY_QUEUE;
        nt->n--;
    }
    pthread_mutex_unlock(&nt->mu);
    free(it);
    return NULL;
}

/* ---- the interface -------------------------------------------------------------- */

static void notify_free(srv_notify *nt)
{
    if (!nt)
        return;
    if (nt->curl)
        curl_global_cleanup();
    cJSON_Delete(nt->cfg);
    free(nt->q);
    pthread_cond_destroy(&nt->cv);
    pthread_mutex_destroy(&nt->mu);
    free(nt);
}

int srv_notify_start(srv *s, op_error *err)
{
    srv_notify *nt;
    config c;
    const cJSON *t;
    int rc;

    s->notify = NULL;
    if (!s->o->config_path)
        return 0;
    if ((rc = config_load(s->o->config_path, &c, err))) {
        config_free(&c); /* initialised by config_load whatever it says */
        return rc; /* every analysis would fail on it: said at start */
    }
    if (!c.notify || !c.notify->child) {
        config_free(&c);
        return 0;
    }
    if (!(nt = calloc(1, sizeof *nt)) ||
        !(nt->q = calloc(SRV_NOTIFY_QUEUE, sizeof *nt->q))) {
        if (nt)
            free(nt);
        config_free(&c);
        return op_error_set(err, OP_ENOMEM, "out of memory (notify)");
    }
    nt->s = s;
    nt->cfg = c.notify;
    c.notify = NULL; /* now nt's */
    config_free(&c);
    pthread_mutex_init(&nt->mu, NULL);
    pthread_cond_init(&nt->cv, NULL);
    cJSON_ArrayForEach(t, nt->cfg) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(t, "name");
        if (nt->nep == NOTIFY_MAX_ENDPOINTS)
            break; /* never: notify_check allows no more */
        snprintf(nt->names[nt->nep], sizeof nt->names[0], "%s",
                 cJSON_IsString(name) ? name->valuestring : "");
        for (size_t r = 0; r < NR_COUNT; r++)
            atomic_init(&nt->count[nt->nep][r], 0);
        nt->nep++;
    }
    /* once, before the thread: each delivery's client takes its own
     * reference, so libcurl's global state is never set up or torn down
     * while other threads run (not thread-safe in every libcurl) */
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        notify_free(nt);
        return op_error_set(err, OP_EIO, "libcurl could not be initialized");
    }
    nt->curl = 1;
    if ((rc = pthread_create(&nt->thread, NULL, notify_main, nt))) {
        notify_free(nt);
        return op_error_set(err, OP_EIO, "cannot start the notification "
                            "thread: %s", strerror(rc));
    }
    nt->started = 1;
    s->notify = nt;
    return 0;
}

void srv_notify_stop(srv *s)
{
    srv_notify *nt = s->notify;

    if (!nt)
        return;
    pthread_mutex_lock(&nt->mu);
    nt->stopping = 1;
    pthread_cond_signal(&nt->cv);
    pthread_mutex_unlock(&nt->mu);
    if (nt->started)
        pthread_join(nt->thread, NULL); /* after the delivery under way */
    s->notify = NULL;
    notify_free(nt);
}

void srv_notify_ended(srv *s, const srv_analysis *a)
{
    srv_notify *nt = s ? s->notify : NULL;
    notify_item *it;
    int full;

    if (!nt || (a->state != SRV_DONE && a->state != SRV_FAILED &&
                a->state != SRV_RECORD_FAILED))
        return;
    pthread_mutex_lock(&nt->mu);
    full = nt->n == SRV_NOTIFY_QUEUE || nt->stopping;
    if (!full) {
        it = &nt->q[(nt->head + nt->n) % SRV_NOTIFY_QUEUE];
        memcpy(it->id, a->id, sizeof it->id);
        it->failed = a->state != SRV_DONE;
        snprintf(it->reason, sizeof it->reason, "%s", a->error);
        nt->n++;
        pthread_cond_signal(&nt->cv);
    }
    pthread_mutex_unlock(&nt->mu);
    if (full)
        drop(nt, a->id, nt->stopping ? "the server is stopping"
             : "the delivery queue is full (" SRV_NOTIFY_QUEUE_TEXT
               " analyses waiting)");
}

void srv_notify_metrics(srv *s, FILE *f)
{
    srv_notify *nt = s ? s->notify : NULL;

    if (!nt)
        return;
    fprintf(f, "# HELP optipipe_notify_deliveries_total webhook deliveries "
            "(one per endpoint and analysis with something to tell it), by "
            "endpoint name and result (dropped: never tried, the queue was "
            "full or the server stopped)\n"
            "# TYPE optipipe_notify_deliveries_total counter\n");
    for (size_t i = 0; i < nt->nep; i++)
        for (size_t r = 0; r < NR_COUNT; r++)
            fprintf(f, "optipipe_notify_deliveries_total{endpoint=\"%s\","
                    "result=\"%s\"} %llu\n", nt->names[i], result_names[r],
                    (unsigned long long)atomic_load(&nt->count[i][r]));
}

/* ---- GET /api/v1/notifications ------------------------------------------------ */

static int log_row(void *ud, const store_notification *n)
{
    jw *j = ud;

    jw_obj(j);
    jw_key(j, "seq");
    jw_int(j, n->seq);
    jw_key(j, "at");
    jw_str(j, n->at);
    jw_key(j, "endpoint");
    jw_str(j, n->endpoint);
    jw_key(j, "event");
    jw_str(j, n->event);
    jw_key(j, "fingerprint");
    jw_str(j, n->fingerprint);
    jw_key(j, "status");
    jw_str(j, n->status);
    jw_key(j, "attempts");
    jw_int(j, n->attempts);
    jw_key(j, "error");
    jw_str(j, n->error);
    jw_key(j, "digest");
    jw_str(j, n->digest);
    jw_obj_end(j);
    return 0;
}

int srv_api_notifications(const srv_req *r, srv_resp *w)
{
    const char *v = srv_arg(r, "limit");
    long limit = LOG_LIMIT_DEFAULT;
    store *st = NULL;
    op_error err;
    char *end;
    int rc;
    jw j;

    if (v) {
        errno = 0;
        limit = strtol(v, &end, 10);
        if (errno || end == v || *end || limit < 1 || limit > LOG_LIMIT_MAX)
            return srv_fail(r, w, 400, "limit '%.40s': a whole number from 1 "
                            "to %d", v, LOG_LIMIT_MAX);
    }
    op_error_clear(&err);
    rc = store_open(r->s->store_path, 0, &st, &err);
    if (rc && rc != OP_ENOTFOUND)
        return srv_fail(r, w, 500, "run store: %s", err.msg);
    w->status = 200;
    w->type = "application/json";
    jw_init(&j, w->f, 1);
    jw_obj(&j);
    jw_key(&j, "endpoints");
    jw_arr(&j);
    for (size_t i = 0; r->s->notify && i < r->s->notify->nep; i++)
        jw_str(&j, r->s->notify->names[i]);
    jw_arr_end(&j);
    jw_key(&j, "notifications");
    jw_arr(&j);
    rc = st ? store_each_notification(st, (int)limit, log_row, &j, &err) : 0;
    jw_arr_end(&j);
    jw_obj_end(&j);
    fputc('\n', w->f);
    store_close(st);
    if (rc)
        return srv_fail(r, w, 500, "run store: %s", err.msg);
    return 0;
}

/* ---- GET /notifications ---------------------------------------------------------- */

/* The newest deliveries shown on the page; the API lists up to
 * LOG_LIMIT_MAX. */
#define PAGE_ROWS 200

static int page_row(void *ud, const store_notification *n)
{
    FILE *f = ud;

    fprintf(f, "<tr class=\"%s\"><td>", strcmp(n->status, "sent") ? "conflict"
                                                               : "change");
    html_put(f, n->at);
    fputs("</td><td>", f);
    html_put(f, n->endpoint);
    fputs("</td><td>", f);
    html_put(f, n->event);
    fputs("</td><td><code>", f);
    html_put(f, n->fingerprint);
    fputs("</code></td><td>", f);
    html_put(f, n->status);
    fprintf(f, "</td><td>%lld</td><td>", (long long)n->attempts);
    html_put(f, n->error ? n->error : "");
    fputs("</td></tr>\n", f);
    return 0;
}

int srv_page_notifications(const srv_req *r, srv_resp *w)
{
    srv_notify *nt = r->s->notify;
    store *st = NULL;
    op_error err;
    FILE *f;
    int rc;

    op_error_clear(&err);
    rc = store_open(r->s->store_path, 0, &st, &err);
    if (rc && rc != OP_ENOTFOUND)
        return srv_fail(r, w, 500, "run store: %s", err.msg);
    ui_open(r, w, "Notifications", NULL);
    f = w->f;
    fputs("<header>\n<h1>Notifications</h1>\n</header>\n<p>", f);
    if (!nt)
        fputs("This server sends no webhooks: its config has no "
              "<code>notify</code>.", f);
    for (size_t i = 0; nt && i < nt->nep; i++) {
        fputs(i ? ", <b>" : "Endpoints: <b>", f);
        html_put(f, nt->names[i]);
        fprintf(f, "</b> (%llu ok, %llu failed, %llu dropped)",
                (unsigned long long)atomic_load(&nt->count[i][NR_OK]),
                (unsigned long long)atomic_load(&nt->count[i][NR_FAILED]),
                (unsigned long long)atomic_load(&nt->count[i][NR_DROPPED]));
    }
    fputs("</p>\n<section aria-label=\"Delivery log\">\n<h2>Delivery log</h2>\n"
          "<table class=\"trail\"><thead><tr><th scope=\"col\">when</th>"
          "<th scope=\"col\">endpoint</th><th scope=\"col\">event</th>"
          "<th scope=\"col\">fingerprint</th><th scope=\"col\">status</th>"
          "<th scope=\"col\">attempts</th><th scope=\"col\">error</th></tr>"
          "</thead><tbody>\n", f);
    rc = st ? store_each_notification(st, PAGE_ROWS, page_row, f, &err) : 0;
    fprintf(f, "</tbody></table>\n<p class=\"meta\">The newest %d deliveries; "
            "<a href=\"/api/v1/notifications\">the API</a> lists up to %d.</p>\n"
            "</section>\n", PAGE_ROWS, LOG_LIMIT_MAX);
    ui_close(w);
    store_close(st);
    if (rc)
        return srv_fail(r, w, 500, "run store: %s", err.msg);
    return 0;
}
