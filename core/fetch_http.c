/*
 * fetch_http.c - the one libcurl wrapper of the fetch commands. Every
 * request, Flink or Spark, goes through http_get / http_get_fd so that the
 * same rules hold everywhere: connect and total timeouts, a few retries
 * with backoff for what may be transient (connection errors, timeouts,
 * 5xx), a size cap enforced while receiving (not trusting Content-Length),
 * at most FH_MAX_REDIRS redirects between http and https URLs only, TLS
 * verification unless --insecure, and the token (from the environment)
 * never written anywhere but the Authorization header.
 */
#include "fetch_http.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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
        if (s->n + n + 1 > s->cap) {
            size_t ncap = s->cap ? s->cap : 4096;
            char *np;
            while (ncap < s->n + n + 1)
                ncap *= 2;
            np = realloc(s->p, ncap);
            if (!np) {
                s->io_err = ENOMEM;
                return 0;
            }
            s->p = np;
            s->cap = ncap;
        }
        memcpy(s->p + s->n, data, n);
        s->p[s->n + n] = '\0';
    }
    s->n += n;
    return n;
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
    curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, (long)FH_MAX_REDIRS);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "optipipe/" OP_VERSION);
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, to_ms(o->connect_timeout_s));
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
                            "GET %s: the response is larger than the cap of "
                            "%llu bytes (--max-size)",
                            url, (unsigned long long)max);
    if (s->io_err)
        return op_error_set(err, s->io_err == ENOMEM ? OP_ENOMEM : OP_EIO,
                            "GET %s: cannot store the response: %s", url,
                            strerror(s->io_err));
    if (cc == CURLE_TOO_MANY_REDIRECTS)
        return op_error_set(err, OP_EIO,
                            "GET %s: more than %d redirects (a redirect "
                            "loop?)",
                            url, FH_MAX_REDIRS);
    if (is_tls_error(cc))
        return op_error_set(err, OP_EIO,
                            "GET %s: TLS: %s; give the server's CA "
                            "certificate with --cacert FILE",
                            url, why);
    return op_error_set(err, OP_EIO, "GET %s: %s%s", url, why, tries);
}

static int perform(http_client *c, const char *url, sink *s, long *status,
                   int *attempts, op_error *err)
{
    const fetch_opts *o = c->o;
    int tries = o->retries < 0 ? 0 : o->retries, k;
    long backoff = FH_BACKOFF_MS;
    CURLcode cc = CURLE_OK;

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
            return op_error_set(err, OP_EIO, "GET %s: cannot reset the "
                                "download file: %s", url, strerror(errno));
        c->errbuf[0] = '\0';
        *status = 0;
        cc = curl_easy_perform(c->h);
        *attempts = k + 1;
        if (cc == CURLE_OK) {
            curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, status);
            if (*status < 500 || k >= tries)
                return 0;
        } else if (!retryable(cc) || s->over || s->io_err || k >= tries) {
            return fail(c, cc, s, url, k + 1, s->max, err);
        }
        sleep_ms(backoff);
        backoff = backoff * 2 > FH_BACKOFF_MAX_MS ? FH_BACKOFF_MAX_MS
                                                   : backoff * 2;
    }
}

int http_get(http_client *c, const char *url, uint64_t max, http_resp *r,
             op_error *err)
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
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, to_ms(c->o->timeout_s));
    curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_LIMIT, 0L);
    curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_TIME, 0L);
    rc = perform(c, url, &s, &r->status, &r->attempts, err);
    r->body = s.p;
    r->len = (size_t)s.n;
    return rc;
}

int http_get_fd(http_client *c, const char *url, int fd, uint64_t max,
                long *status, uint64_t *bytes, op_error *err)
{
    sink s;
    int attempts = 0, rc;
    long stall = to_ms(c->o->timeout_s) / 1000;

    memset(&s, 0, sizeof s);
    s.fd = fd;
    s.max = max;
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, 0L);
    curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c->h, CURLOPT_LOW_SPEED_TIME, stall > 0 ? stall : 1L);
    rc = perform(c, url, &s, status, &attempts, err);
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
