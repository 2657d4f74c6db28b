/*
 * fetch_http.c - the one libcurl wrapper of the fetch commands and the
 * webhook notifications (notify.c). Every request, Flink or Spark or a
 * webhook, goes through http_get / http_get_fd / http_post so that the
 * same rules hold everywhere: connect and total timeouts, a few retries
 * with backoff for what may be transient (connection errors, timeouts,
 * 5xx), a size cap enforced while receiving (not trusting Content-Length),
 * at most FH_MAX_REDIRS redirects that keep the URL's scheme, TLS
 * verification unless --insecure, the token (from the environment) never
 * written anywhere but the Authorization header, and the budgets of the
 * whole fetch: a deadline that cuts every timeout and wait, a number of
 * requests, and for downloads a minimum transfer rate.
 */
#include "fetch_http.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#define FH_MAX_REDIRS 5
#define FH_BACKOFF_MS 250     /* first retry after this; doubles */
#define FH_BACKOFF_MAX_MS 4000
#define FH_TOKEN_MAX 16384
#define FH_BASE_MAX 1024      /* longest base URL: paths are appended */

struct http_client {
    CURL *h;
    struct curl_slist *hdrs;
    const fetch_opts *o;
    const char *method;        /* of the request under way, for messages */
    int64_t deadline_ms;       /* CLOCK_MONOTONIC */
    double max_time_s;
    uint64_t budget, requests; /* requests allowed, made */
    char errbuf[CURL_ERROR_SIZE];
};

/* Where a response goes: a growing buffer or a file descriptor. */
typedef struct sink {
    char *p;
    size_t cap;
    int fd;
    uint64_t n, max;
    int over, io_err;
} sink;

static size_t on_write(char *data, size_t size, size_t nmemb, void *ud)
{
    sink *s = ud;
    size_t n = size * nmemb;

    if (n > s->max - s->n) {
        s->over = 1;
        return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
    }
    if (s->fd >= 0) {
        size_t off = 0;
        while (off < n) {
            ssize_t w = write(s->fd, data + off, n - off);
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                s->io_err = errno ? errno : EIO;
                return 0;
            }
            off += (size_t)w;
        }
    } else {
        if (OP_GROW(s->p, s->cap, s->n + n + 1, 4096)) {
            s->io_err = ENOMEM;
            return 0;
        }
        memcpy(s->p + s->n, data, n);
        s->p[s->n + n] = '\0';
    }
    s->n += n;
    return n;
}

static int64_t mono_ms(void)
{
    return (int64_t)util_now_ms(); /* signed: deadlines are subtracted */
}

static void sleep_ms(long ms)
{
    struct timespec ts;

    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static long to_ms(double s)
{
    if (!(s > 0))
        return 0;
    if (s > 86400.0)
        s = 86400.0;
    return (long)(s * 1000.0 + 0.5);
}

/* Milliseconds left before the deadline (0 when it has passed). */
static long left_ms(const http_client *c)
{
    int64_t d = c->deadline_ms - mono_ms();

    return d <= 0 ? 0 : d > 86400000 ? 86400000L : (long)d;
}

/* A timeout cut to the deadline; never 0, which libcurl reads as none. */
static long cut_ms(const http_client *c, long ms)
{
    long left = left_ms(c);

    if (ms <= 0 || ms > left)
        ms = left;
    return ms > 0 ? ms : 1;
}

static int deadline_msg(const http_client *c, op_error *why)
{
    return op_error_set(why, OP_ELIMIT,
                        "not requested: the deadline of %g s (--max-time) "
                        "has passed",
                        c->max_time_s);
}

int http_stopped(const http_client *c, op_error *why)
{
    if (c->requests >= c->budget)
        return op_error_set(why, OP_ELIMIT,
                            "not requested: the budget of %llu requests "
                            "(--max-requests) is spent",
                            (unsigned long long)c->budget);
    if (left_ms(c) == 0)
        return deadline_msg(c, why);
    return 0;
}

int http_sleep(const http_client *c, double s, op_error *why)
{
    long ms = to_ms(s), left = left_ms(c);

    if (ms <= left) {
        sleep_ms(ms);
        return 0;
    }
    sleep_ms(left);
    return deadline_msg(c, why);
}

/* --- client ---------------------------------------------------------------- */

/* An Authorization header value from the token: a bare token is a bearer
 * token; a value with a space already names its scheme ("Basic ..."). */
static int auth_header(const char *var, char **out, op_error *err)
{
    const char *tok = getenv(var);
    size_t n, i;
    char *h;

    if (!tok || !*tok)
        return op_error_set(err, OP_EUSAGE,
                            "--token-env %s: the environment variable is "
                            "not set or empty",
                            var);
    n = strlen(tok);
    if (n > FH_TOKEN_MAX)
        return op_error_set(err, OP_EUSAGE,
                            "--token-env %s: the value is longer than %d "
                            "bytes",
                            var, FH_TOKEN_MAX);
    for (i = 0; i < n; i++)
        if ((unsigned char)tok[i] < 0x20 || tok[i] == 0x7f)
            return op_error_set(err, OP_EUSAGE,
                                "--token-env %s: the value contains a "
                                "control character",
                                var);
    h = malloc(n + 32);
    if (!h)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    snprintf(h, n + 32, "Authorization: %s%s", strchr(tok, ' ') ? "" : "Bearer ",
             tok);
    *out = h;
    return 0;
}

static int header_ok(const char *h)
{
    const char *p = h;

    while (*p && (isalnum((unsigned char)*p) || strchr("!#$%&'*+-.^_`|~", *p)))
        p++;
    if (p == h || *p != ':')
        return 0;
    for (; *p; p++)
        if ((unsigned char)*p < 0x20 && *p != '\t')
            return 0;
    return 1;
}

static int add_header(http_client *c, const char *h, op_error *err)
{
    struct curl_slist *n = curl_slist_append(c->hdrs, h);

    if (!n)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    c->hdrs = n;
    return 0;
}

static void wipe(char *s)
{
    volatile char *v = s;

    while (s && *v)
        *v++ = '\0';
}

static int set_headers(http_client *c, op_error *err)
{
    const fetch_opts *o = c->o;
    char *auth = NULL;
    size_t i;
    int rc = 0;

    for (i = 0; i < o->nheaders; i++) {
        if (!header_ok(o->headers[i]))
            return op_error_set(err, OP_EUSAGE,
                                "--header: expected 'Name: value' without "
                                "line breaks, not '%.60s'",
                                o->headers[i]);
        if ((rc = add_header(c, o->headers[i], err)))
            return rc;
    }
    if (o->token_env) {
        if ((rc = auth_header(o->token_env, &auth, err)))
            return rc;
        rc = add_header(c, auth, err);
        wipe(auth);
        free(auth);
    }
    return rc;
}

int http_client_new(const fetch_opts *o, http_client **out, op_error *err)
{
    http_client *c;
    CURL *h;
    int rc;

    *out = NULL;
    c = calloc(1, sizeof *c);
    if (!c)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    c->o = o;
    c->max_time_s = fetch_deadline_s(o);
    /* not to_ms: a long sampling may run for weeks */
    c->deadline_ms = mono_ms() + (int64_t)(c->max_time_s * 1000.0);
    c->budget = fetch_request_budget(o);
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        free(c);
        return op_error_set(err, OP_EIO, "libcurl could not be initialized");
    }
    c->h = h = curl_easy_init();
    if (!h) {
        http_client_free(c);
        return op_error_set(err, OP_ENOMEM, "libcurl: out of memory");
    }
    if ((rc = set_headers(c, err))) {
        http_client_free(c);
        return rc;
    }
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, o->no_redirects ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, (long)FH_MAX_REDIRS);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "optipipe/" OP_VERSION);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, c->hdrs);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, o->insecure ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, o->insecure ? 0L : 2L);
    if (o->cacert)
        curl_easy_setopt(h, CURLOPT_CAINFO, o->cacert);
    if (o->insecure && o->diag)
        fprintf(o->diag, "optipipe: fetch: warning: --insecure: TLS "
                "certificates are not verified\n");
    *out = c;
    return 0;
}

void http_client_free(http_client *c)
{
    if (!c)
        return;
    if (c->h)
        curl_easy_cleanup(c->h);
    curl_slist_free_all(c->hdrs); /* holds the token: gone with the list */
    free(c);
    curl_global_cleanup();
}

void http_resp_free(http_resp *r)
{
    if (!r)
        return;
    free(r->body);
    r->body = NULL;
    r->len = 0;
}

/* --- requests -------------------------------------------------------------- */

static int retryable(CURLcode cc)
{
    switch (cc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
        return 1;
    default:
        return 0;
    }
}

static int is_tls_error(CURLcode cc)
{
    return cc == CURLE_PEER_FAILED_VERIFICATION ||
           cc == CURLE_SSL_CACERT_BADFILE || cc == CURLE_SSL_CONNECT_ERROR ||
           cc == CURLE_SSL_CERTPROBLEM || cc == CURLE_SSL_ISSUER_ERROR;
}

/* The message for a failed transfer; says what to do where it can. */
static int fail(http_client *c, CURLcode cc, const sink *s, const char *url,
                int attempts, uint64_t max, op_error *err)
{
    const char *why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(cc);
    char tries[40] = "";

    if (attempts > 1)
        snprintf(tries, sizeof tries, " (after %d attempts)", attempts);
    if (s->over || cc == CURLE_FILESIZE_EXCEEDED)
        return op_error_set(err, OP_ELIMIT,
                            "%s %s: the response is larger than the cap of "
                            "%llu bytes (--max-size)",
                            c->method, url, (unsigned long long)max);
    if (s->io_err)
        return op_error_set(err, s->io_err == ENOMEM ? OP_ENOMEM : OP_EIO,
                            "%s %s: cannot store the response: %s",
                            c->method, url, strerror(s->io_err));
    if (cc == CURLE_UNSUPPORTED_PROTOCOL && !strncmp(why, "Protocol", 8))
        return op_error_set(err, OP_EIO,
                            "%s %s: redirected to another scheme (http / "
                            "https), which is never followed: give the URL "
                            "with the scheme the server wants",
                            c->method, url);
    if (cc == CURLE_OPERATION_TIMEDOUT && left_ms(c) == 0)
        return op_error_set(err, OP_EIO,
                            "%s %s: stopped at the deadline of %g s "
                            "(--max-time)%s",
                            c->method, url, c->max_time_s, tries);
    if (cc == CURLE_OPERATION_TIMEDOUT && strstr(why, "too slow"))
        return op_error_set(err, OP_EIO,
                            "%s %s: %s (--min-rate %llu over "
                            "--min-rate-time %g s)%s",
                            c->method, url, why,
                            (unsigned long long)c->o->min_rate,
                            c->o->min_rate_time_s, tries);
    if (cc == CURLE_TOO_MANY_REDIRECTS)
        return op_error_set(err, OP_EIO,
                            "%s %s: more than %d redirects (a redirect "
                            "loop?)",
                            c->method, url, FH_MAX_REDIRS);
    if (is_tls_error(cc))
        return op_error_set(err, OP_EIO,
                            "%s %s: TLS: %s; give the server's CA "
                            "certificate with --cacert FILE",
                            c->method, url, why);
    return op_error_set(err, OP_EIO, "%s %s: %s%s", c->method, url, why, tries);
}

/* A redirect when o->no_redirects: its target may be a host the caller
 * never allowed (serve's --fetch-allow checks the first URL only). */
static int redirect_refused(http_client *c, const char *url, long status,
                            op_error *err)
{
    char *to = NULL;

    curl_easy_getinfo(c->h, CURLINFO_REDIRECT_URL, &to);
    return op_error_set(err, OP_EIO,
                        "%s %s: HTTP %ld redirect to %.200s refused "
                        "(URL inputs follow no redirect)",
                        c->method, url, status, to ? to : "(no Location)");
}

/* One request of the budget, with retries. timeout_ms: each attempt's
 * (0: none), cut to the deadline like the connect timeout. */
static int perform(http_client *c, const char *url, long timeout_ms, sink *s,
                   long *status, int *attempts, op_error *err)
{
    const fetch_opts *o = c->o;
    int tries = o->retries < 0 ? 0 : o->retries, k, rc;
    long backoff = FH_BACKOFF_MS;
    CURLcode cc = CURLE_OK;

    if ((rc = http_stopped(c, err)))
        return rc;
    c->requests++;
    /* a redirect never changes the scheme: no downgrade from https, and
     * no switch to a TLS peer the user did not name */
    curl_easy_setopt(c->h, CURLOPT_REDIR_PROTOCOLS_STR,
                     strncasecmp(url, "https:", 6) ? "http" : "https");
    curl_easy_setopt(c->h, CURLOPT_URL, url);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(c->h, CURLOPT_MAXFILESIZE_LARGE,
                     (curl_off_t)(s->max > (uint64_t)INT64_MAX ? INT64_MAX
                                                               : s->max));
    for (k = 0;; k++) {
        s->n = 0;
        s->over = s->io_err = 0;
        if (s->p)
            s->p[0] = '\0';
        if (s->fd >= 0 && (ftruncate(s->fd, 0) || lseek(s->fd, 0, SEEK_SET)))
            return op_error_set(err, OP_EIO, "%s %s: cannot reset the "
                                "download file: %s", c->method, url,
                                strerror(errno));
        c->errbuf[0] = '\0';
        *status = 0;
        curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, cut_ms(c, timeout_ms));
        curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS,
                         cut_ms(c, to_ms(o->connect_timeout_s)));
        cc = curl_easy_perform(c->h);
        *attempts = k + 1;
        if (cc == CURLE_OK) {
            curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, status);
            if (o->no_redirects && *status >= 300 && *status < 400)
                return redirect_refused(c, url, *status, err);
            if (*status < 500 || k >= tries)
                return 0;
        } else if (!retryable(cc) || s->over || s->io_err || k >= tries) {
            return fail(c, cc, s, url, k + 1, s->max, err);
        }
        if (backoff >= left_ms(c))
            return cc == CURLE_OK ? 0 : fail(c, cc, s, url, k + 1, s->max, err);
        sleep_ms(backoff);
        backoff = backoff * 2 > FH_BACKOFF_MAX_MS ? FH_BACKOFF_MAX_MS
                                                   : backoff * 2;
    }
}

/* One request whose answer goes into memory (http_get, http_post). */
static int to_memory(http_client *c, const char *url, uint64_t max,
                     http_resp *r, op_error *err)
{
    sink s;
    int rc;

    memset(r, 0, sizeof *r);
    memset(&s, 0, sizeof s);
    s.fd = -1;
    s.max = max;
    s.p = malloc(1);
    if (!s.p)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    s.p[0] = '\0';
    s.cap = 1;
    curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_LIMIT, 0L);
    curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_TIME, 0L);
    rc = perform(c, url, to_ms(c->o->timeout_s), &s, &r->status,
                 &r->attempts, err);
    r->body = s.p;
    r->len = (size_t)s.n;
    return rc;
}

int http_get(http_client *c, const char *url, uint64_t max, http_resp *r,
             op_error *err)
{
    c->method = "GET";
    curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
    return to_memory(c, url, max, r, err);
}

int http_post(http_client *c, const char *url, const char *body, size_t len,
              uint64_t max, http_resp *r, op_error *err)
{
    c->method = "POST";
    curl_easy_setopt(c->h, CURLOPT_POST, 1L);
    curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    return to_memory(c, url, max, r, err);
}

int http_get_fd(http_client *c, const char *url, int fd, uint64_t max,
                long *status, uint64_t *bytes, op_error *err)
{
    sink s;
    int attempts = 0, rc;
    long window = (to_ms(c->o->min_rate_time_s) + 999) / 1000;
    uint64_t rate = c->o->min_rate;

    c->method = "GET";
    curl_easy_setopt(c->h, CURLOPT_HTTPGET, 1L);
    memset(&s, 0, sizeof s);
    s.fd = fd;
    s.max = max;
    curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_LIMIT,
                     rate > 1 ? (rate > LONG_MAX ? LONG_MAX : (long)rate) : 1L);
    curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_TIME, window > 0 ? window : 1L);
    rc = perform(c, url, 0, &s, status, &attempts, err);
    *bytes = s.n;
    return rc;
}

/* --- URLs ------------------------------------------------------------------ */

int http_base_url(const char *url, char **base, op_error *err)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *part = NULL, *full = NULL;
    int rc = 0;
    size_t n;

    *base = NULL;
    if (!u)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        (strcmp(scheme, "http") && strcmp(scheme, "https"))) {
        rc = op_error_set(err, OP_EUSAGE,
                          "'%.200s' is not an http:// or https:// URL", url);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_USER, &part, 0) == CURLUE_OK ||
        curl_url_get(u, CURLUPART_PASSWORD, &part, 0) == CURLUE_OK) {
        rc = op_error_set(err, OP_EUSAGE,
                          "credentials in the URL are not accepted (they "
                          "would show in process lists and files): put the "
                          "token in an environment variable and pass "
                          "--token-env VAR");
        goto out;
    }
    if (curl_url_get(u, CURLUPART_QUERY, &part, 0) == CURLUE_OK ||
        curl_url_get(u, CURLUPART_FRAGMENT, &part, 0) == CURLUE_OK) {
        rc = op_error_set(err, OP_EUSAGE,
                          "'%.200s': give the base URL without '?' or '#'",
                          url);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_URL, &full, 0) != CURLUE_OK) {
        rc = op_error_set(err, OP_EUSAGE, "'%.200s' is not a valid URL", url);
        goto out;
    }
    n = strlen(full);
    while (n > 0 && full[n - 1] == '/')
        n--;
    if (n > FH_BASE_MAX) {
        rc = op_error_set(err, OP_EUSAGE, "the URL is longer than %d bytes",
                          FH_BASE_MAX);
        goto out;
    }
    *base = malloc(n + 1);
    if (!*base) {
        rc = op_error_set(err, OP_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(*base, full, n);
    (*base)[n] = '\0';
out:
    curl_free(scheme);
    curl_free(part);
    curl_free(full);
    curl_url_cleanup(u);
    return rc;
}

const char *http_reason(long status)
{
    switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
    }
}
