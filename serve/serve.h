/*
 * serve.h - `optipipe serve` (docs/serve.md): the team's upload service on
 * the one analysis pipeline (session.h) and the run store (store.h). The
 * serve_*.c files of serve/ share what is declared here; nothing outside
 * serve/ includes it (the command line sees include/op_serve.h alone: the
 * options and serve_main; the unit tests see everything).
 *
 *   serve.c           start and stop: options, the DATA folder, the lock,
 *                     the daemon, signals
 *   serve_http.c      libmicrohttpd glue: limits, routing, the checks
 *                     before a handler, security headers, error bodies
 *   serve_auth.c      tokens, browser sessions, the CSRF check, sign-in
 *   serve_users.c     users: the --users file, --trusted-proxy addresses,
 *                     `serve user add`, /api/v1/me and /api/v1/users
 *   serve_roles.c     the roles and the least role of each route
 *   serve_audit.c     a finding's decision history (page and API)
 *   serve_routes.c    the one list of route tables (docs/openapi.json
 *                     follows it; tests/e2e/serve_openapi.sh checks)
 *   serve_metrics.c   counters, GET /healthz, GET /metrics
 *   serve_stream.c    a page sent while its render thread writes it
 *   serve_budget.c    what a request may hold: the --server-memory budget,
 *                     the render slots that keep /healthz answered
 *   serve_multipart.c a streaming multipart/form-data parser (fuzzed)
 *   serve_upload.c    staging uploaded files on disk, safely
 *   serve_jobs.c      analyses on disk, the bounded queue, worker processes
 *   serve_worker.c    `serve --worker`: one analysis in its own process
 *   serve_notify.c    the webhook delivery queue fed when an analysis ends,
 *                     its counters, GET /api/v1/notifications
 *   serve_api.c       the REST API (/api/v1/...)
 *   serve_lint.c      POST /api/v1/rules/lint: an uploaded pack linted
 *   serve_ui.c        the HTML pages and their static assets
 *
 * Layout of DATA (every path below is made by the server, never from a
 * client's name):
 *   DATA/history.db               the run store (store.h)
 *   DATA/serve.lock               one server per DATA (flock)
 *   DATA/tmp/<random>/            an upload being received (removed when
 *                                 the client goes away or on start)
 *   DATA/analyses/<id>/           one analysis:
 *       meta.json                 its state (SRV_META), written by the
 *                                 server only, atomically
 *       inputs/                   the uploaded files (SRV_INPUTS)
 *       rules/                    uploaded rules (--allow-rule-upload)
 *       urls.txt                  URL inputs, one a line
 *       report.json, report.html  written by the worker, atomically
 *       summary.json              the same (SRV_SUMMARY_JSON)
 *       notify.json               its webhook events (SRV_NOTIFY_JSON)
 *       worker.log                the worker's diagnostics (stderr)
 */
#ifndef OP_SERVE_SERVE_H
#define OP_SERVE_SERVE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <optipipe/common.h>

#include "op_serve.h"

/* Request limits (serve_http.c). */
#define SRV_HEADER_MAX (16u * 1024)  /* all request headers: 431 beyond */
#define SRV_BODY_MAX (64u * 1024)    /* a non-upload body (JSON, form) */
#define SRV_FIELD_MAX (8u * 1024)    /* one multipart text field */
#define SRV_FIELDS_MAX 64            /* text fields per request */
#define SRV_NAME_MAX 200             /* bytes of a sanitized file name */
#define SRV_MAX_PARAMS 4             /* {x} segments per route */
#define SRV_SEGMENT_MAX 512          /* bytes of one decoded {x} segment */
/* A refused body is read and dropped (lingering close, serve_http.c) up
 * to this many bytes past the refusal and for this long, then the
 * connection is closed. */
#define SRV_DRAIN_BYTES (64ull << 20)
#define SRV_DRAIN_MS 10000u

/* ---- the running server --------------------------------------------------- */

typedef struct srv_jobs srv_jobs;       /* serve_jobs.c */
typedef struct srv_metrics srv_metrics; /* serve_metrics.c */
typedef struct srv_notify srv_notify;   /* serve_notify.c */

typedef struct srv {
    const serve_opts *o;
    char data[4096];       /* absolute DATA */
    char store_path[4096]; /* DATA/history.db */
    char self_exe[4096];   /* this binary (workers run it) */
    int loopback;          /* bound to a loopback address */
    int tokens;            /* token_file, users_file or auth_header given:
                            * requests must authenticate */
    struct srv_access *access; /* serve_users.c: users, proxies (NULL none) */
    srv_jobs *jobs;
    srv_metrics *metrics;
    srv_notify *notify;    /* NULL: the config has no `notify` */
    struct srv_http *http; /* serve_http.c's own: tokens, sessions, daemon */
} srv;

/* ---- requests and responses (serve_http.c) --------------------------------- */

/* How a request proved who it is. */
typedef enum srv_auth {
    SRV_AUTH_NONE = 0, /* no tokens configured (loopback only) */
    SRV_AUTH_TOKEN,    /* Authorization: Bearer <token> */
    SRV_AUTH_COOKIE,   /* a browser session from POST /login */
    SRV_AUTH_PROXY     /* --auth-header from a --trusted-proxy address */
} srv_auth;

/* What a request may do (docs/security.md "Users and roles"): each role
 * may do what the ones before it may. A --token-file token, a session
 * opened with one and a server without tokens are SRV_ROLE_ADMIN: setups
 * from before users keep working. */
typedef enum srv_role {
    SRV_ROLE_NONE = 0, /* --proxy-role none: a proxy user not in --users */
    SRV_ROLE_READ,     /* every page and GET of the API */
    SRV_ROLE_UPLOAD,   /* + uploads and retries */
    SRV_ROLE_DECIDE,   /* + approve, dismiss, reopen */
    SRV_ROLE_ADMIN     /* + the users list */
} srv_role;
#define SRV_ROLES (SRV_ROLE_ADMIN + 1)
/* "none", "read", "upload", "decide", "admin"; srv_role_parse: -1 when
 * name is none of them. */
const char *srv_role_name(srv_role r);
int srv_role_parse(const char *name);

/* One uploaded file, staged on disk. */
typedef struct srv_file {
    char field[64];             /* the multipart field ("file", "rules") */
    char name[SRV_NAME_MAX + 1]; /* the client's name, sanitized: a plain
                                  * name of [A-Za-z0-9._-], never a path */
    char path[4096];            /* where it is now (inside DATA/tmp) */
    uint64_t size;
} srv_file;

/* A whole upload: its staging folder DATA/tmp/<random> holds inputs/ and
 * rules/. Owned by the request until jobs_submit takes it. */
typedef struct srv_upload {
    char dir[4096];
    srv_file *files;
    size_t nfiles;
    uint64_t bytes;
    char **field_name, **field_value; /* the multipart text fields */
    size_t nfields;
} srv_upload;

typedef struct srv_req {
    srv *s;
    const char *method;  /* "GET", "HEAD", "POST" */
    const char *path;    /* the URL path, as sent (not decoded) */
    const char *param[SRV_MAX_PARAMS]; /* the route's {x} segments, decoded */
    size_t nparam;
    srv_auth auth;
    const char *user;    /* the user's name (--users, a proxy's header);
                          * NULL: a --token-file token or no tokens */
    srv_role role;       /* what it may do (checked before the handler) */
    const char *body;    /* SRV_BODY routes: the body, NUL-terminated */
    size_t body_len;
    srv_upload *upload;  /* SRV_UPLOAD routes: the staged files (NULL when
                          * the body was JSON: then body is set) */
    void *conn;          /* serve_http.c's own (the MHD connection) */
} srv_req;

/* A query argument, a request header, a form field (urlencoded body or a
 * multipart text field), a cookie; NULL when absent. Borrowed from r. */
const char *srv_arg(const srv_req *r, const char *name);
const char *srv_header(const srv_req *r, const char *name);
const char *srv_field(const srv_req *r, const char *name);
const char *srv_cookie(const srv_req *r, const char *name);

/* Takes the staged upload of an SRV_UPLOAD request: the caller owns it
 * from then on (jobs_submit takes it in turn). NULL when there is none or
 * it was taken already. What no handler took is removed after the
 * handler returned (serve_http.c). */
srv_upload *srv_take_upload(const srv_req *r);

/* What a handler answers. serve_http.c opens f (open_memstream over
 * body) before the handler runs and sends it after; a handler may send a
 * file instead (fd >= 0, owned by the response). */
typedef struct srv_resp {
    int status;
    const char *type;      /* Content-Type, a static string */
    FILE *f;
    char *body;
    size_t len;
    int fd;
    uint64_t fd_size;
    char location[1024];   /* Location (303 after a form post); "" none */
    char filename[SRV_NAME_MAX + 1]; /* Content-Disposition attachment */
    unsigned retry_after;  /* seconds (429, 503); 0 none */
    int frame_self;        /* may be framed by our own pages (report.html) */
    int over_budget;       /* serve_http.c: --server-memory refused f's
                            * growth (the answer becomes a 503) */
} srv_resp;

/* A handler returns 0 with the status in w, or nonzero for an internal
 * error (500, logged). */
typedef int (*srv_handler)(const srv_req *r, srv_resp *w);

enum srv_route_flags {
    SRV_PUBLIC = 1u << 0, /* no authentication (/healthz, /static, /login) */
    SRV_BODY = 1u << 1,   /* reads a small body (<= SRV_BODY_MAX) */
    SRV_UPLOAD = 1u << 2, /* streams a multipart or raw body to DATA/tmp */
    SRV_FORM = 1u << 3,   /* a browser form: the CSRF token is required */
    SRV_API = 1u << 4,    /* JSON errors (srv_fail) */
    SRV_LIGHT = 1u << 5   /* answered without a render slot (serve_budget.c):
                           * small, no store, never waits behind pages */
};

typedef struct srv_route {
    const char *method;   /* "GET" (HEAD follows), "POST" */
    const char *pattern;  /* "/api/v1/analyses/{id}": {x} is one segment */
    unsigned flags;
    srv_handler fn;
    const char *summary;  /* one line, as docs/api.md says it */
} srv_route;

/* Each module's routes, ended by {0}; serve_routes.c lists the tables. */
extern const srv_route srv_routes_http[];  /* serve_metrics.c, serve_http.c */
extern const srv_route srv_routes_api[];   /* serve_api.c */
extern const srv_route srv_routes_ui[];    /* serve_ui.c */
extern const srv_route *const srv_route_tables[];

/* Answers an error: JSON {"error": {"status": N, "message": "..."}} on an
 * SRV_API route, else a small HTML page (escaped). Also counts it in the
 * metrics. Returns 0, so a handler can `return srv_fail(...)`. */
int srv_fail(const srv_req *r, srv_resp *w, int status, const char *fmt, ...)
    OP_PRINTF(4, 5);

/* The CSRF token of this browser (double-submit cookie, SameSite=Strict):
 * pages put it into every form as the field "csrf" (srv_csrf_input) and
 * into <meta name="csrf-token"> for scripts, which send it as the header
 * X-CSRF-Token. Borrowed from r. */
const char *srv_csrf_token(const srv_req *r);
void srv_csrf_input(const srv_req *r, FILE *f);

/* ---- uploads (serve_upload.c, serve_multipart.c) ---------------------------- */

typedef struct srv_stage srv_stage;

/* Starts receiving a body into a fresh DATA/tmp/<random>. content_type
 * multipart/form-data: its parts (file fields become files, text fields
 * are kept for srv_field, at most SRV_FIELDS_MAX of SRV_FIELD_MAX);
 * anything else: the raw body is one file named raw_name (sanitized;
 * NULL: "upload"). Returns 0 with *out, OP_EPARSE (400: no boundary) or
 * another op_status. */
int stage_begin(srv *s, const char *content_type, const char *raw_name,
                srv_stage **out, op_error *err);
/* Feeds the next bytes. OP_ELIMIT: over max_upload_bytes or max_files
 * (413); OP_EPARSE: malformed (400); OP_EIO: disk (500). */
int stage_feed(srv_stage *st, const char *data, size_t len, op_error *err);
/* The body ended: 0 with *out (owned by the caller: srv_upload_free),
 * OP_EPARSE when the multipart body is cut. An upload without a file is
 * not an error here (it may carry url fields only): the handler decides.
 * The stage is freed whatever the result. */
int stage_end(srv_stage *st, srv_upload **out, op_error *err);
/* The client went away or a limit tripped: removes everything staged. */
void stage_abort(srv_stage *st);
/* The first text field called name of up; NULL when none. */
const char *srv_upload_field(const srv_upload *up, const char *name);
/* Frees up and removes its staging folder if it is still there. */
void srv_upload_free(srv_upload *up);
/* ---- analyses (serve_jobs.c, serve_worker.c) -------------------------------- */

#define SRV_ID_LEN 16 /* an analysis id: 16 lowercase hex digits */
#define SRV_META "meta.json"
#define SRV_INPUTS "inputs"
#define SRV_RULES "rules"
#define SRV_URLS "urls.txt"
#define SRV_REPORT_JSON "report.json"
#define SRV_REPORT_HTML "report.html"
#define SRV_WORKER_LOG "worker.log"
/* What the list of analyses shows of one (serve_ui.c), written by the
 * worker after its reports: {"runs": [{source, job, name, status}] (the
 * first SRV_SUMMARY_RUNS shown runs), "nruns", "findings": {"error",
 * "warning", "info"}}. */
#define SRV_SUMMARY_JSON "summary.json"
#define SRV_SUMMARY_RUNS 16
/* The analysis' webhook events (notify_events_json), written by the worker
 * when the config has `notify`, read by the delivery queue
 * (serve_notify.c) after the analysis ended. */
#define SRV_NOTIFY_JSON "notify.json"

/* SRV_RECORD_FAILED: the analysis ran and wrote its reports, but nothing
 * of it is in the run store (the worker's exit 6, EXIT_NOT_RECORDED); it
 * is not done: its runs are missing from the history and its findings
 * cannot be decided. jobs_retry runs it again. */
typedef enum srv_state {
    SRV_QUEUED = 0, SRV_RUNNING, SRV_DONE, SRV_FAILED, SRV_RECORD_FAILED
} srv_state;
#define SRV_STATES (SRV_RECORD_FAILED + 1)
const char *srv_state_name(srv_state s); /* "queued", ..., "record-failed" */

/* Whether id is an analysis id: SRV_ID_LEN lowercase hex digits, nothing
 * else (every lookup and the worker check it before making a path). */
int srv_id_valid(const char *id);

/* Whether url is an http(s):// URL whose host (as libcurl reads it) is one
 * of o->fetch_allow (case-insensitive); none configured: never. The API
 * checks URL inputs with it, the worker again before fetching. */
int srv_url_allowed(const serve_opts *o, const char *url);

/* Writes dir/name through dir/name.tmp (fsync, rename, fsync of dir):
 * there complete or not at all, also after a crash. fill writes the
 * content to f (borrowed) and returns nonzero on failure. Returns 0 or
 * OP_EIO with err. */
int srv_write_atomic(const char *dir, const char *name,
                     int (*fill)(FILE *f, void *ud), void *ud, op_error *err);

/* The environment variable that gives a worker the server's pid: a worker
 * whose parent is not that process exits at once (serve_worker.c). */
#define SRV_PARENT_ENV "OPTIPIPE_SERVE_PARENT"

typedef struct srv_analysis {
    char id[SRV_ID_LEN + 1];
    srv_state state;
    int64_t created_ms, started_ms, finished_ms; /* epoch ms; 0 not yet */
    int exit_code;        /* the analysis' exit code (docs/cli.md) */
    char error[1024];     /* SRV_FAILED, SRV_RECORD_FAILED: why ("" otherwise) */
    char dir[4096];       /* DATA/analyses/<id> */
    size_t nfiles;
    uint64_t bytes;
    size_t queue_pos;     /* SRV_QUEUED: analyses ahead of it */
} srv_analysis;

/* Opens the analyses of s->data and recovers them: finished ones stay as
 * they are, queued and interrupted ones are queued again (oldest first),
 * leftovers in DATA/tmp are removed; starts the worker slots. With a
 * PostgreSQL --store the queue is the store's analyses table, shared with
 * the other instances on DATA (serve_jobs.c): DATA/tmp is left alone and
 * the folders the table lacks are added to it. */
int jobs_open(srv *s, srv_jobs **out, op_error *err);
/* Stops taking analyses, kills running workers, frees j. */
void jobs_close(srv_jobs *j);
/* Moves up's files into a new DATA/analyses/<id> with the URL inputs
 * (urls, may be 0) and queues it. Takes up in every case; up may be NULL
 * for URL inputs alone. OP_ELIMIT when the queue is full (429 with
 * Retry-After: jobs_retry_after); the upload is removed then. OP_EUSAGE
 * (400) for no file and no URL, more than SRV_FIELDS_MAX URLs, or a URL
 * that is not one line of at most SRV_FIELD_MAX bytes without control
 * characters or not srv_url_allowed. */
int jobs_submit(srv_jobs *j, srv_upload *up, const char *const *urls,
                size_t nurls, char id[SRV_ID_LEN + 1], op_error *err);
unsigned jobs_retry_after(const srv_jobs *j);
/* Queues a failed or record-failed analysis again (meta.json first, then
 * the list), as it was uploaded: its worker runs it whole. OP_ENOTFOUND
 * (no such analysis), OP_EUSAGE (queued, running or done: 409), OP_ELIMIT
 * (the queue is full: 429). */
int jobs_retry(srv_jobs *j, const char *id, op_error *err);
/* One analysis by id (validated: SRV_ID_LEN hex digits); OP_ENOTFOUND. */
int jobs_get(srv_jobs *j, const char *id, srv_analysis *out, op_error *err);
/* Every analysis, newest first; fn returns nonzero to stop. */
int jobs_each(srv_jobs *j, int (*fn)(void *ud, const srv_analysis *a),
              void *ud);

/* With a PostgreSQL store (the shared queue): a store connection of the
 * HTTP threads (one of --threads, waited for when all are taken), held
 * until jobs_store_unlock gives it back (the analyses and the browser
 * sessions go through them); NULL without one (an SQLite store: then
 * jobs_store_unlock does nothing). */
struct store;
struct store *jobs_store_lock(srv_jobs *j);
void jobs_store_unlock(srv_jobs *j, struct store *db);

typedef struct srv_jobs_stats {
    size_t queued, running;
    uint64_t done, failed, rejected; /* since start */
} srv_jobs_stats;
void jobs_stats(srv_jobs *j, srv_jobs_stats *st);

/* `optipipe serve --worker ID`: runs analysis ID of o->data_dir, writes
 * its reports and records it in the run store; returns the exit code. */
int serve_worker_main(const serve_opts *o);

/* ---- webhook notifications (serve_notify.c) --------------------------------- */

/* Analyses whose delivery may wait at once; one more is dropped (counted
 * as result="dropped", said on stderr). */
#define SRV_NOTIFY_QUEUE 256
#define SRV_NOTIFY_QUEUE_TEXT "256"

/* Reads `notify` of --config (a config error fails the start: every
 * analysis would fail on it) and starts the delivery thread; s->notify
 * stays NULL without endpoints. Returns 0 or an op_status with err. */
int srv_notify_start(srv *s, op_error *err);
/* Stops it after the delivery under way (at most its endpoints'
 * deadline_ms); what still waits is dropped and counted. */
void srv_notify_stop(srv *s);
/* Analysis a ended (done, failed, record-failed; anything else is
 * ignored): queues its delivery without waiting (a full queue drops
 * it). Called by serve_jobs.c after the end is visible to clients. */
void srv_notify_ended(srv *s, const srv_analysis *a);
/* The optipipe_notify_deliveries_total family into f (nothing without
 * endpoints). */
void srv_notify_metrics(srv *s, FILE *f);
/* GET /api/v1/notifications: the delivery log, newest first (?limit);
 * GET /notifications: the same as a page, with each endpoint's counts. */
int srv_api_notifications(const srv_req *r, srv_resp *w);
int srv_page_notifications(const srv_req *r, srv_resp *w);

/* ---- the API's shared pieces (serve_api.c) ---------------------------------- */

/* The core of every upload handler (POST /api/v1/analyses, the UI's form
 * POST): the staged upload of r (taken) and its URL inputs (multipart
 * fields "url", or a JSON body {"urls": [...]}) checked and queued with
 * jobs_submit. Returns 0 with id set (w untouched), or 1 after answering
 * w through srv_fail: 400 (no file and no URL, a bad URL or JSON), 403
 * (a `rules` file without --allow-rule-upload, a URL host not in
 * --fetch-allow, named), 429 with Retry-After (queue full), 500. */
int srv_accept_upload(const srv_req *r, srv_resp *w, char id[SRV_ID_LEN + 1]);

/* POST /api/v1/rules/lint (serve_lint.c): the uploaded rule pack linted
 * by core's rule_lint_dir, its problems answered as JSON. */
int srv_api_rules_lint(const srv_req *r, srv_resp *w);

/* How long a decision waits for another writer of the run store (a
 * worker recording, a prune) before it fails (500): it holds an HTTP
 * thread meanwhile. Workers wait OPTIPIPE_STORE_WAIT_MS (store.h). */
#define SRV_STORE_WAIT_MS 10000

/* Writes a decision into the run store (store_decide: status approved,
 * dismissed or open; comment and who may be NULL) and counts it
 * (SRV_M_DECISIONS). Returns 0, OP_ENOTFOUND (no stored finding has fp),
 * OP_EUSAGE (bad fingerprint, status or text) or another op_status, with
 * err. Thread-safe (one store connection per call). */
int srv_decide(srv *s, const char *fp, const char *status,
               const char *comment, const char *who, op_error *err);

/* Queues analysis id again (jobs_retry). Returns 0 (w untouched), or 1
 * after answering w through srv_fail: 404, 409 (not failed or
 * record-failed), 429 with Retry-After (queue full), 500. */
int srv_retry(const srv_req *r, srv_resp *w, const char *id);

/* Who a request is, for decided_by: the user's name, else "token",
 * "browser" or "local" (a --token-file token, a session opened with one,
 * no tokens). */
const char *srv_who(const srv_req *r);

/* ---- users (serve_users.c; roles: serve_roles.c) ---------------------------- */

/* GET /api/v1/me: who the request is ({"user", "role", "auth",
 * "decided_by"}); GET /api/v1/users (admin): the --users names and roles
 * (never a hash) and the proxy's default role. */
int srv_api_me(const srv_req *r, srv_resp *w);
int srv_api_users(const srv_req *r, srv_resp *w);

/* ---- the decisions' audit trail (serve_audit.c) ----------------------------- */

/* GET /api/v1/findings/{fp}/history: the decision and its changes, newest
 * first; GET /findings/{fp}: the same as a page. 400 for a bad
 * fingerprint; a fingerprint nothing was decided for has none. */
int srv_api_finding_history(const srv_req *r, srv_resp *w);
int srv_page_finding(const srv_req *r, srv_resp *w);

/* ---- metrics (serve_metrics.c) ---------------------------------------------- */

typedef enum srv_metric {
    SRV_M_REQUESTS = 0,   /* HTTP requests answered */
    SRV_M_UPLOADS,        /* uploads accepted */
    SRV_M_UPLOAD_BYTES,
    SRV_M_REJECT_QUEUE,   /* 429 */
    SRV_M_REJECT_SIZE,    /* 413 */
    SRV_M_REJECT_AUTH,    /* 401 */
    SRV_M_REJECT_CSRF,    /* 403 by CSRF, Origin or Host */
    SRV_M_REJECT_BAD,     /* other 4xx */
    SRV_M_ERRORS,         /* 5xx */
    SRV_M_DECISIONS,      /* decisions written */
    SRV_M_COUNT
} srv_metric;

int metrics_new(srv_metrics **out, op_error *err);
void metrics_free(srv_metrics *m);
void srv_count(srv *s, srv_metric m, uint64_t n); /* thread-safe */
/* An analysis ended after ms (duration histogram). */
void srv_observe_analysis(srv *s, srv_state end, uint64_t ms);

/* ---- what a request may hold (serve_budget.c) --------------------------------- */

/* Takes bytes from the server's memory budget (s->o->server_memory, all
 * requests together; 0: no limit): 0, or -1 when it would go over (answer
 * 503 then). Thread-safe; give back exactly what was taken. */
int srv_budget_take(const srv *s, uint64_t bytes);
void srv_budget_give(uint64_t bytes);
uint64_t srv_budget_used(void); /* bytes held now */
/* A write-only memory stream like open_memstream (the size at fclose is the
 * position; rewind then a shorter write replaces the content) whose buffer
 * is charged to the budget as it grows. fclose stores the buffer in *body
 * (free it with srv_budget_free, which gives the charge back; NULL when
 * nothing was written) and its length in *len; a growth the budget refused
 * sets *over and makes writes and fclose fail. NULL when out of memory. */
FILE *srv_budget_stream(const srv *s, char **body, size_t *len, int *over);
void srv_budget_free(void *body); /* a body of srv_budget_stream; NULL ok */
/* body (a budgeted buffer, or NULL) resized to size bytes, the charge
 * following; NULL when the budget or malloc refuses (body untouched). */
void *srv_budget_realloc(const srv *s, void *body, size_t size);

/* ---- pages sent while rendered (serve_stream.c) ------------------------------- */

/* Bytes of one chunk of a streamed page, and how many full chunks may wait
 * for a slow client: what a page holds is at most
 * (SRV_STREAM_DEPTH + 1) * SRV_STREAM_CHUNK. */
#define SRV_STREAM_CHUNK (64u * 1024)
#define SRV_STREAM_DEPTH 2

typedef struct srv_pipe srv_pipe;
typedef int (*srv_pipe_cb)(void *ud);

/* A pipe from a render thread to the connection that sends it. commit
 * (called once, in the writer's thread, when the first chunk is full)
 * makes the response: nonzero refuses it and the stream breaks. wake
 * resumes the reader (called by the writer, after srv_pipe_read asked for
 * it). NULL when out of memory; free with srv_pipe_free once neither side
 * uses it. */
srv_pipe *srv_pipe_new(const srv *s, size_t chunk, size_t depth,
                       srv_pipe_cb commit, srv_pipe_cb wake, void *ud);
/* The writer's FILE. Like srv_budget_stream: an uncommitted page is left
 * whole in *body (srv_budget_free) and *len at fclose, *over when the
 * budget refused it (fclose fails then); rewind works until the commit,
 * after it breaks the stream. Writes fail once broken, gone or stopping;
 * a write waits while SRV_STREAM_DEPTH chunks are unread. */
FILE *srv_pipe_file(srv_pipe *p, char **body, size_t *len, int *over);
/* The writer is done (after fclose): the reader sees the end. */
void srv_pipe_finish(srv_pipe *p);
enum { SRV_PIPE_RENDERING, SRV_PIPE_DONE, SRV_PIPE_COMMITTED };
/* Under srv_pipe_lock: where the page is, and (want_wake) that the reader,
 * which suspended itself under the lock, wants wake called. */
void srv_pipe_lock(srv_pipe *p);
void srv_pipe_unlock(srv_pipe *p);
int srv_pipe_state(srv_pipe *p);
void srv_pipe_want_wake(srv_pipe *p);
/* The reader: up to max bytes into buf; 0 when none is there yet (then
 * suspend(ud) is called under the lock, and wake follows when there is);
 * SRV_PIPE_END after the last byte; SRV_PIPE_BROKEN when the page was
 * cut (a rewind after the commit, out of memory). */
#define SRV_PIPE_END (-1)
#define SRV_PIPE_BROKEN (-2)
ssize_t srv_pipe_read(srv_pipe *p, char *buf, size_t max,
                      void (*suspend)(void *), void *ud);
/* The client went away: writes fail from now on (the handler ends soon). */
void srv_pipe_gone(srv_pipe *p);
void srv_pipe_free(srv_pipe *p);
/* The server stops: every pipe's writes fail, no writer waits. */
void srv_pipes_stop(void);

/* A render slot for a handler: at most --threads - 1 run at once, each in
 * a render thread (serve_http.c), so HTTP threads stay free for the
 * SRV_LIGHT routes (/healthz never waits behind a page). 0 with a slot
 * (srv_render_leave after), -1 when all are taken (answer 503 with
 * Retry-After). Thread-safe. */
int srv_render_enter(const srv *s);
void srv_render_leave(void);
/* The test hook of OPTIPIPE_SERVE_TEST_HOLD (serve_budget.c says how); a
 * render thread calls it before its handler. */
void srv_test_hold_render(void);

#endif
