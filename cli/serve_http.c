/*
 * serve_http.c - the libmicrohttpd glue of `optipipe serve`: one access
 * handler routes every request over srv_route_tables and applies, before
 * any handler runs, the defences of docs/security.md: header size, Host
 * (DNS rebinding), cross-site POSTs (Origin, Sec-Fetch-Site), Bearer
 * tokens or the browser session of POST /login, CSRF (double-submit
 * cookie), body limits; then reads a small body or streams an upload into
 * DATA/tmp (serve_upload.c) and adds the security headers to the answer.
 * The pure pieces (path segments, cookies, tokens) are at the top, for
 * tests/unit/test_serve_http.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <microhttpd.h>

#include "diag.h"
#include "jsonw.h"
#include "report_html.h"
#include "serve_http.h"
#include "util.h"

#define SRV_SESSIONS_MAX 1024
#define SRV_SESSION_TTL_MS (12ull * 3600 * 1000)
#define SRV_SESSION_COOKIE "op_session"
#define SRV_CSRF_COOKIE "op_csrf"
#define SRV_SESSION_LEN 64 /* hex digits: 32 random bytes */
/* MHD's per-connection pool holds the request line, the headers and the
 * read buffer: headers far beyond SRV_HEADER_MAX fail there (MHD answers
 * 431 itself); up to it, the access handler counts exactly. */
#define SRV_CONN_MEMORY (4 * SRV_HEADER_MAX)

/* frame-src 'self': the analysis page frames its report.html (the only
 * answer with frame-ancestors 'self'). */
static const char csp_none[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' "
    "data:; connect-src 'self'; frame-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'";
static const char csp_self[] =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' "
    "data:; connect-src 'self'; frame-src 'self'; form-action 'self'; "
    "frame-ancestors 'self'; base-uri 'none'";

/* ---- pure pieces ------------------------------------------------------------ */

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

long srv_pct_decode(const char *s, size_t n, int plus, int no_slash,
                    char *out, size_t cap)
{
    size_t i, o = 0;

    for (i = 0; i < n; i++) {
        int c = (unsigned char)s[i];
        if (c == '%') {
            if (i + 2 >= n || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0)
                return -1;
            c = hexval(s[i + 1]) * 16 + hexval(s[i + 2]);
            i += 2;
        } else if (c == '+' && plus) {
            c = ' ';
        }
        if (c == 0 || (c == '/' && no_slash) || o + 1 >= cap)
            return -1;
        out[o++] = (char)c;
    }
    if (cap)
        out[o] = '\0';
    return (long)o;
}

/* The next segment of a path after *p (which is at a '/' or the end):
 * [*seg, *seg + *len), *p moved past it. 0 at the end. */
static int next_segment(const char **p, const char **seg, size_t *len)
{
    const char *s = *p, *e;

    if (*s != '/')
        return 0;
    s++;
    e = strchr(s, '/');
    if (!e)
        e = s + strlen(s);
    *seg = s;
    *len = (size_t)(e - s);
    *p = e;
    return 1;
}

int srv_route_match(const char *pattern, const char *path,
                    char params[][SRV_SEGMENT_MAX + 1], size_t *nparam)
{
    const char *pp = pattern, *up = path, *ps, *us;
    size_t pl, ul, np = 0;
    int bad = 0;
    char tmp[SRV_SEGMENT_MAX + 1];

    *nparam = 0;
    if (strcmp(pattern, "/") == 0 || strcmp(path, "/") == 0)
        return strcmp(pattern, path) == 0;
    for (;;) {
        int hp = next_segment(&pp, &ps, &pl), hu = next_segment(&up, &us, &ul);
        if (!hp || !hu) {
            if (hp != hu)
                return 0;
            break;
        }
        if (pl >= 2 && ps[0] == '{' && ps[pl - 1] == '}') {
            if (np >= SRV_MAX_PARAMS)
                return 0;
            if (ul == 0)
                return 0;
            /* '/' stays: a job key may hold one (sent as %2F) */
            if (srv_pct_decode(us, ul, 0, 0, params[np], SRV_SEGMENT_MAX + 1) < 0)
                bad = 1;
            np++;
            continue;
        }
        if (srv_pct_decode(us, ul, 0, 1, tmp, sizeof tmp) != (long)pl ||
            memcmp(tmp, ps, pl) != 0)
            return 0;
    }
    if (bad)
        return -1;
    *nparam = np;
    return 1;
}

int srv_cookie_get(const char *header, const char *name, char *out,
                   size_t cap)
{
    size_t nl = strlen(name);
    const char *p = header;

    while (p && *p) {
        const char *end;
        size_t vl;
        while (*p == ' ' || *p == '\t' || *p == ';')
            p++;
        end = strchr(p, ';');
        if (!end)
            end = p + strlen(p);
        if ((size_t)(end - p) > nl && strncmp(p, name, nl) == 0 && p[nl] == '=') {
            const char *v = p + nl + 1;
            vl = (size_t)(end - v);
            while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
                vl--;
            if (vl >= 2 && v[0] == '"' && v[vl - 1] == '"') {
                v++;
                vl -= 2;
            }
            if (vl + 1 > cap)
                return 0;
            memcpy(out, v, vl);
            out[vl] = '\0';
            return 1;
        }
        p = end;
    }
    return 0;
}

int srv_secret_eq(const char *a, size_t alen, const char *b, size_t blen)
{
    unsigned char d = alen != blen;
    size_t i;

    /* walks b's length whatever a is, so the time says nothing about a */
    for (i = 0; i < blen; i++)
        d |= (unsigned char)(b[i] ^ (i < alen ? a[i] : 0));
    return d == 0;
}

static int all_hex(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return s[n] == '\0';
}

int srv_csrf_ok(const char *cookie, const char *given)
{
    return cookie && given && all_hex(cookie, SRV_CSRF_LEN) &&
           strlen(given) == SRV_CSRF_LEN &&
           srv_secret_eq(given, SRV_CSRF_LEN, cookie, SRV_CSRF_LEN);
}

void srv_sanitize_name(const char *in, char out[SRV_NAME_MAX + 1])
{
    size_t i, o = 0;

    for (i = 0; in && in[i] && o < SRV_NAME_MAX; i++) {
        char c = in[i];
        int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                 (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
        if (o == 0 && c == '.')
            c = '_';
        out[o++] = ok ? c : '_';
    }
    out[o] = '\0';
    if (!o)
        strcpy(out, "download");
}

int srv_random_hex(char *out, size_t n)
{
    unsigned char b[64];
    size_t i, got = 0;

    if (n > sizeof b)
        return -1;
    while (got < n) {
        ssize_t k = getrandom(b + got, n - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        got += (size_t)k;
    }
    for (i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
    out[2 * n] = '\0';
    return 0;
}

/* ---- the listen address ----------------------------------------------------- */

int srv_parse_listen(const char *text, srv_listen *out, op_error *err)
{
    char host[48];
    const char *colon, *port_s;
    char *end;
    unsigned long port;
    size_t hl;

    memset(out, 0, sizeof *out);
    if (!text || !*text)
        return op_error_set(err, OP_EUSAGE, "--listen takes ADDR:PORT");
    if (text[0] == '[') {
        const char *rb = strchr(text, ']');
        if (!rb || rb[1] != ':')
            return op_error_set(err, OP_EUSAGE, "--listen %.100s: an IPv6 "
                                "address is written [ADDR]:PORT", text);
        hl = (size_t)(rb - text - 1);
        if (hl >= sizeof host)
            return op_error_set(err, OP_EUSAGE, "--listen %.100s: address too "
                                "long", text);
        memcpy(host, text + 1, hl);
        host[hl] = '\0';
        port_s = rb + 2;
        out->v6 = 1;
    } else {
        colon = strrchr(text, ':');
        if (!colon || strchr(text, ':') != colon)
            return op_error_set(err, OP_EUSAGE, "--listen %.100s: give ADDR:PORT "
                                "(IPv6: [ADDR]:PORT)", text);
        hl = (size_t)(colon - text);
        if (hl >= sizeof host)
            return op_error_set(err, OP_EUSAGE, "--listen %.100s: address too "
                                "long", text);
        memcpy(host, text, hl);
        host[hl] = '\0';
        port_s = colon + 1;
    }
    errno = 0;
    port = strtoul(port_s, &end, 10);
    if (!*port_s || *end || errno || port > 65535 || port_s[0] == '-' ||
        port_s[0] == '+')
        return op_error_set(err, OP_EUSAGE, "--listen %.100s: the port is a "
                            "number from 0 to 65535 (0: any free one)", text);
    out->port = (unsigned)port;
    if (out->v6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&out->sa;
        if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1)
            return op_error_set(err, OP_EUSAGE, "--listen %.100s: '%s' is not "
                                "a numeric IPv6 address", text, host);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)port);
        out->len = sizeof *a;
        out->loopback = IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
        snprintf(out->host, sizeof out->host, "[%s]", host);
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&out->sa;
        if (inet_pton(AF_INET, host, &a->sin_addr) != 1)
            return op_error_set(err, OP_EUSAGE, "--listen %.100s: '%s' is not "
                                "a numeric IPv4 address (use 127.0.0.1, not "
                                "localhost)", text, host);
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)port);
        out->len = sizeof *a;
        out->loopback = (ntohl(a->sin_addr.s_addr) >> 24) == 127;
        snprintf(out->host, sizeof out->host, "%s", host);
    }
    return 0;
}

int srv_parse_origin(const char *url, char *host, size_t cap, op_error *err)
{
    const char *h = !url                            ? NULL
                  : strncasecmp(url, "https://", 8) == 0 ? url + 8
                  : strncasecmp(url, "http://", 7) == 0  ? url + 7 : NULL;
    size_t i;

    if (!h || !*h || strlen(h) >= cap)
        goto bad;
    for (i = 0; h[i]; i++)
        if (!((h[i] >= 'A' && h[i] <= 'Z') || (h[i] >= 'a' && h[i] <= 'z') ||
              (h[i] >= '0' && h[i] <= '9') || strchr(".-:[]", h[i])))
            goto bad;
    memcpy(host, h, i + 1);
    return 0;
bad:
    return op_error_set(err, OP_EUSAGE, "--public-origin %.200s: give the "
                        "scheme and host browsers use, like "
                        "https://optipipe.example.com (no path)",
                        url ? url : "");
}

/* ---- tokens ------------------------------------------------------------------- */

static int token_line(srv_tokens *t, const char *path, unsigned lineno,
                      char *line, op_error *err)
{
    size_t n, i;
    char *s = line;

    while (*s == ' ' || *s == '\t')
        s++;
    n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = '\0';
    if (!n || s[0] == '#')
        return 0;
    for (i = 0; i < n; i++)
        if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
            return op_error_set(err, OP_EUSAGE, "%s:%u: a token is printable "
                                "ASCII without spaces", path, lineno);
    if (n < SRV_TOKEN_MIN || n > SRV_TOKEN_MAX)
        return op_error_set(err, OP_EUSAGE, "%s:%u: a token has %d to %d "
                            "bytes (this one %zu)", path, lineno, SRV_TOKEN_MIN,
                            SRV_TOKEN_MAX, n);
    if (t->n >= SRV_TOKENS_MAX)
        return op_error_set(err, OP_ELIMIT, "%s:%u: more than %d tokens", path,
                            lineno, SRV_TOKENS_MAX);
    memcpy(t->tok[t->n], s, n + 1);
    t->len[t->n++] = n;
    return 0;
}

int srv_tokens_load(const char *path, srv_tokens *out, op_error *err)
{
    char *buf = NULL, *line, *next;
    struct stat st;
    unsigned lineno = 1;
    ssize_t got;
    int fd, rc = 0;

    memset(out, 0, sizeof *out);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return op_error_set(err, OP_EIO, "--token-file %s: %s", path,
                            strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        rc = op_error_set(err, OP_EUSAGE, "--token-file %s: not a regular file",
                          path);
        goto out;
    }
    if (st.st_mode & 077) {
        rc = op_error_set(err, OP_EUSAGE, "--token-file %s: group or others may "
                          "access it (mode %04o): chmod 600 it", path,
                          (unsigned)(st.st_mode & 07777));
        goto out;
    }
    if (st.st_size > (off_t)SRV_TOKEN_FILE_MAX) {
        rc = op_error_set(err, OP_ELIMIT, "--token-file %s: larger than %u "
                          "bytes", path, SRV_TOKEN_FILE_MAX);
        goto out;
    }
    buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        rc = op_error_set(err, OP_ENOMEM, "out of memory reading %s", path);
        goto out;
    }
    got = read(fd, buf, (size_t)st.st_size);
    if (got < 0) {
        rc = op_error_set(err, OP_EIO, "--token-file %s: %s", path,
                          strerror(errno));
        goto out;
    }
    buf[got] = '\0';
    if (memchr(buf, '\0', (size_t)got)) {
        rc = op_error_set(err, OP_EUSAGE, "--token-file %s: holds a NUL byte",
                          path);
        goto out;
    }
    for (line = buf; line && !rc; line = next, lineno++) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        rc = token_line(out, path, lineno, line, err);
    }
    if (!rc && !out->n)
        rc = op_error_set(err, OP_EUSAGE, "--token-file %s: no token in it "
                          "(one a line, at least %d bytes)", path, SRV_TOKEN_MIN);
out:
    free(buf);
    close(fd);
    return rc;
}

int srv_tokens_check(const srv_tokens *t, const char *tok, size_t len)
{
    size_t i;
    int ok = 0;

    for (i = 0; i < t->n; i++) /* no early exit: every token is compared */
        ok |= srv_secret_eq(tok, len, t->tok[i], t->len[i]);
    return ok;
}

/* ---- the server's state -------------------------------------------------------- */

typedef struct session {
    char id[SRV_SESSION_LEN + 1]; /* "" free */
    uint64_t created_ms;
} session;

struct srv_http {
    struct MHD_Daemon *d;
    srv_tokens tokens;
    unsigned port;
    char bound_host[64];
    char public_host[256]; /* --public-origin's HOST[:PORT]; "" none */
    pthread_mutex_t mu; /* sessions */
    session sessions[SRV_SESSIONS_MAX];
};

/* One request (MHD's con_cls), from its headers until MHD is done. */
typedef struct kv {
    char *k, *v;
} kv;

enum body_mode { BODY_NONE, BODY_SMALL, BODY_STAGE };

typedef struct rctx {
    srv *s;
    struct MHD_Connection *c;
    const srv_route *route;
    int api;                 /* errors as JSON */
    srv_req r;
    char params[SRV_MAX_PARAMS][SRV_SEGMENT_MAX + 1];
    enum body_mode mode;
    char *body;
    size_t blen;
    srv_stage *stage;
    srv_upload *upload;      /* not yet taken by a handler */
    uint64_t received;
    int fail;                /* a status to answer once the body is in */
    srv_metric fail_m;
    char fail_msg[OP_ERROR_MAX];
    kv *form;                /* an urlencoded body's fields */
    size_t nform;
    char **owned;            /* what srv_arg / srv_cookie handed out */
    size_t nowned;
    char csrf[SRV_CSRF_LEN + 1];
    int csrf_new;            /* set the cookie with the answer */
    char set_cookie[2][160];
    size_t ncookies;
    char allow[32];          /* 405 */
} rctx;

static rctx *ctx_of(const srv_req *r)
{
    return r ? (rctx *)r->conn : NULL;
}

/* Keeps s for the request's lifetime; NULL when out of memory. */
static const char *own(rctx *x, char *s)
{
    char **g;

    if (!s)
        return NULL;
    g = realloc(x->owned, (x->nowned + 1) * sizeof *g);
    if (!g) {
        free(s);
        return NULL;
    }
    x->owned = g;
    g[x->nowned++] = s;
    return s;
}

const char *srv_header(const srv_req *r, const char *name)
{
    rctx *x = ctx_of(r);

    return x ? MHD_lookup_connection_value(x->c, MHD_HEADER_KIND, name) : NULL;
}

const char *srv_arg(const srv_req *r, const char *name)
{
    rctx *x = ctx_of(r);
    const char *raw;
    size_t n;
    char *out;

    raw = x ? MHD_lookup_connection_value(x->c, MHD_GET_ARGUMENT_KIND, name)
            : NULL;
    if (!raw)
        return NULL;
    n = strlen(raw);
    out = malloc(n + 1);
    if (!out || srv_pct_decode(raw, n, 1, 0, out, n + 1) < 0) {
        free(out);
        return NULL;
    }
    return own(x, out);
}

const char *srv_cookie(const srv_req *r, const char *name)
{
    const char *h = srv_header(r, MHD_HTTP_HEADER_COOKIE);
    char buf[SRV_FIELD_MAX];
    rctx *x = ctx_of(r);
    int oom = 0;

    if (!h || !srv_cookie_get(h, name, buf, sizeof buf))
        return NULL;
    return own(x, util_strdup(buf, &oom));
}

const char *srv_field(const srv_req *r, const char *name)
{
    rctx *x = ctx_of(r);
    size_t i;

    if (!x)
        return NULL;
    for (i = 0; i < x->nform; i++)
        if (strcmp(x->form[i].k, name) == 0)
            return x->form[i].v;
    return x->upload ? srv_upload_field(x->upload, name) : NULL;
}

srv_upload *srv_take_upload(const srv_req *r)
{
    rctx *x = ctx_of(r);
    srv_upload *up;

    if (!x)
        return NULL;
    up = x->upload;
    x->upload = NULL;
    x->r.upload = NULL;
    return up;
}

const char *srv_csrf_token(const srv_req *r)
{
    rctx *x = ctx_of(r);
    const char *c;

    if (!x)
        return "";
    if (x->csrf[0])
        return x->csrf;
    c = srv_cookie(r, SRV_CSRF_COOKIE);
    if (c && strlen(c) == SRV_CSRF_LEN && all_hex(c, SRV_CSRF_LEN)) {
        memcpy(x->csrf, c, SRV_CSRF_LEN + 1);
    } else if (srv_random_hex(x->csrf, SRV_CSRF_LEN / 2) == 0) {
        x->csrf_new = 1;
    } else {
        x->csrf[0] = '\0';
    }
    return x->csrf;
}

void srv_csrf_input(const srv_req *r, FILE *f)
{
    fputs("<input type=\"hidden\" name=\"csrf\" value=\"", f);
    html_put(f, srv_csrf_token(r));
    fputs("\">", f);
}

/* ---- errors --------------------------------------------------------------------- */

static srv_metric metric_of(int status)
{
    return status == 401   ? SRV_M_REJECT_AUTH
         : status == 413   ? SRV_M_REJECT_SIZE
         : status == 429   ? SRV_M_REJECT_QUEUE
         : status >= 500   ? SRV_M_ERRORS : SRV_M_REJECT_BAD;
}

static const char *reason_of(int status)
{
    const char *s = MHD_get_reason_phrase_for((unsigned)status);
    return s && *s ? s : "Error";
}

/* msg with each occurrence of the server's folder written "DATA": a
 * client learns nothing of the machine's paths from an error. */
static void hide_data(char *msg, size_t cap, const char *data)
{
    char out[OP_ERROR_MAX];
    size_t dl = strlen(data), o = 0;
    const char *p = msg, *hit;

    if (dl < 2 || !strstr(msg, data))
        return;
    while ((hit = strstr(p, data)) && o < sizeof out) {
        o += (size_t)snprintf(out + o, sizeof out - o, "%.*sDATA",
                              (int)(hit - p), p);
        p = hit + dl;
    }
    if (o < sizeof out)
        snprintf(out + o, sizeof out - o, "%s", p);
    snprintf(msg, cap, "%s", out);
}

static int vfail(const srv_req *r, srv_resp *w, int status, srv_metric m,
                 const char *fmt, va_list ap)
{
    rctx *x = ctx_of(r);
    char msg[OP_ERROR_MAX];
    jw j;

    vsnprintf(msg, sizeof msg, fmt, ap);
    hide_data(msg, sizeof msg, r->s->data);
    srv_count(r->s, m, 1);
    w->status = status;
    if (w->fd >= 0) {
        close(w->fd);
        w->fd = -1;
    }
    w->filename[0] = '\0';
    if (!w->f)
        return 0;
    rewind(w->f);
    if (x ? x->api : 1) {
        w->type = "application/json";
        jw_init(&j, w->f, 0);
        jw_obj(&j);
        jw_key(&j, "error");
        jw_obj(&j);
        jw_key(&j, "status");
        jw_int(&j, status);
        jw_key(&j, "message");
        jw_str(&j, msg);
        jw_obj_end(&j);
        jw_obj_end(&j);
        fputc('\n', w->f);
    } else {
        w->type = "text/html; charset=utf-8";
        fprintf(w->f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
                "charset=\"utf-8\"><title>%d %s</title><link rel=\"stylesheet\" "
                "href=\"/static/app.css\"></head><body><main><h1>%d %s</h1><p>",
                status, reason_of(status), status, reason_of(status));
        html_put(w->f, msg);
        fputs("</p><p><a href=\"/\">Back to the start page</a></p></main>"
              "</body></html>\n", w->f);
    }
    return 0;
}

int srv_fail(const srv_req *r, srv_resp *w, int status, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vfail(r, w, status, metric_of(status), fmt, ap);
    va_end(ap);
    return 0;
}

/* ---- answering ---------------------------------------------------------------------- */

/* Our cookies are HttpOnly, SameSite=Strict, Path=/; Secure when a proxy
 * says the client came over https or --public-origin is https (the server
 * itself speaks plain HTTP, so it cannot know; a forged header only makes
 * the cookie stricter). */
static void add_cookie(rctx *x, const char *name, const char *value,
                       int expire)
{
    const char *proto = srv_header(&x->r, "X-Forwarded-Proto");
    const char *pub = x->s->o->public_origin;

    if (pub && strncasecmp(pub, "https://", 8) == 0)
        proto = "https";

    if (x->ncookies < 2)
        snprintf(x->set_cookie[x->ncookies++], sizeof x->set_cookie[0],
                 "%s=%s; Path=/; HttpOnly; SameSite=Strict%s%s", name, value,
                 proto && strcasecmp(proto, "https") == 0 ? "; Secure" : "",
                 expire ? "; Max-Age=0" : "");
}

static int is_static(const rctx *x)
{
    return x->route && strncmp(x->route->pattern, "/static/", 8) == 0;
}

static void security_headers(rctx *x, struct MHD_Response *resp,
                             const srv_resp *w)
{
    char buf[64];
    size_t i;

    MHD_add_response_header(resp, "Content-Security-Policy",
                            w->frame_self ? csp_self : csp_none);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options",
                            w->frame_self ? "SAMEORIGIN" : "DENY");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL,
                            is_static(x) ? "no-cache" : "no-store");
    if (w->type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, w->type);
    if (w->location[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_LOCATION, w->location);
    if (w->retry_after) {
        snprintf(buf, sizeof buf, "%u", w->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, buf);
    }
    if (w->filename[0]) {
        char name[SRV_NAME_MAX + 1], cd[SRV_NAME_MAX + 40];
        srv_sanitize_name(w->filename, name);
        snprintf(cd, sizeof cd, "attachment; filename=\"%s\"", name);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, cd);
    }
    if (w->status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Bearer realm=\"optipipe\"");
    if (w->status == 405 && x->allow[0])
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, x->allow);
    if (w->type && strncmp(w->type, "text/html", 9) == 0)
        srv_csrf_token(&x->r); /* every page carries the cookie forms need */
    if (x->csrf_new)
        add_cookie(x, SRV_CSRF_COOKIE, x->csrf, 0);
    for (i = 0; i < x->ncookies; i++)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_SET_COOKIE,
                                x->set_cookie[i]);
}

/* Sends w (closing its stream first). */
static enum MHD_Result send_resp(rctx *x, srv_resp *w)
{
    struct MHD_Response *resp;
    enum MHD_Result ok;

    if (w->f && fclose(w->f) != 0) {
        w->f = NULL;
        free(w->body);
        w->body = NULL;
        w->len = 0;
        w->status = 500;
    }
    w->f = NULL;
    if (w->fd >= 0) {
        resp = MHD_create_response_from_fd64(w->fd_size, w->fd);
        if (resp)
            w->fd = -1; /* the response owns it */
    } else {
        resp = MHD_create_response_from_buffer(w->len, w->body,
                                               MHD_RESPMEM_MUST_FREE);
        if (resp)
            w->body = NULL;
    }
    if (w->fd >= 0)
        close(w->fd);
    free(w->body);
    if (!resp)
        return MHD_NO;
    security_headers(x, resp, w);
    srv_count(x->s, SRV_M_REQUESTS, 1);
    ok = MHD_queue_response(x->c, (unsigned)w->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static int resp_open(srv_resp *w)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->status = 500;
    w->f = open_memstream(&w->body, &w->len);
    return w->f ? 0 : -1;
}

/* Answers an error before (or instead of) a handler. */
static enum MHD_Result answer_fail(rctx *x, int status, srv_metric m,
                                   const char *fmt, ...) OP_PRINTF(4, 5);

static enum MHD_Result answer_fail(rctx *x, int status, srv_metric m,
                                   const char *fmt, ...)
{
    srv_resp w;
    va_list ap;

    if (resp_open(&w))
        return MHD_NO;
    va_start(ap, fmt);
    vfail(&x->r, &w, status, m, fmt, ap);
    va_end(ap);
    return send_resp(x, &w);
}

static enum MHD_Result run_handler(rctx *x)
{
    srv_resp w;

    uint64_t bytes = x->upload ? x->upload->bytes : 0;
    int had = x->upload != NULL;

    if (resp_open(&w))
        return MHD_NO;
    if (x->route->fn(&x->r, &w) != 0) {
        diag_msg(DIAG_ERROR, "serve: %s %.200s failed", x->r.method, x->r.path);
        srv_fail(&x->r, &w, 500, "internal error (the server log says more)");
    }
    if (had && !x->upload && w.status < 400) { /* a handler queued it */
        srv_count(x->s, SRV_M_UPLOADS, 1);
        srv_count(x->s, SRV_M_UPLOAD_BYTES, bytes);
    }
    return send_resp(x, &w);
}

/* ---- checks before the body ----------------------------------------------------------- */

static enum MHD_Result header_bytes(void *cls, enum MHD_ValueKind kind,
                                    const char *key, const char *value)
{
    size_t *n = cls;

    *n += strlen(key) + (value ? strlen(value) : 0) + 4;
    return MHD_YES;
}

/* When bound to loopback, a browser reaching us under another name was
 * sent by DNS rebinding: only the loopback names (and the bound address)
 * with our port are us. */
static int host_ok(const rctx *x, const char *host)
{
    static const char *const names[] = {"localhost", "127.0.0.1", "[::1]"};
    const struct srv_http *h = x->s->http;
    char want[96];
    size_t i;

    if (!x->s->loopback || !host ||
        (h->public_host[0] && strcasecmp(host, h->public_host) == 0))
        return 1;
    for (i = 0; i < 4; i++) {
        const char *n = i < 3 ? names[i] : h->bound_host;
        snprintf(want, sizeof want, "%s:%u", n, h->port);
        if (strcasecmp(host, want) == 0 ||
            (h->port == 80 && strcasecmp(host, n) == 0))
            return 1;
    }
    return 0;
}

/* A POST from another site (a form or script elsewhere) is refused
 * whatever it carries: Origin must be this server, Sec-Fetch-Site must not
 * say cross-site or same-site. Our pages send Referrer-Policy no-referrer,
 * under which a browser's own form post says "Origin: null": that passes
 * only with Sec-Fetch-Site same-origin (a header no page can set). */
static int cross_site(const rctx *x)
{
    const char *origin = srv_header(&x->r, "Origin");
    const char *site = srv_header(&x->r, "Sec-Fetch-Site");
    const char *host = srv_header(&x->r, MHD_HTTP_HEADER_HOST);
    const char *pub = x->s->o->public_origin;
    const char *rest;

    if (site && strcmp(site, "same-origin") != 0 && strcmp(site, "none") != 0)
        return 1;
    if (!origin)
        return 0;
    if (strcmp(origin, "null") == 0)
        return !site || strcmp(site, "same-origin") != 0;
    if (pub && strcasecmp(origin, pub) == 0)
        return 0;
    if (strncmp(origin, "http://", 7) == 0)
        rest = origin + 7;
    else if (strncmp(origin, "https://", 8) == 0)
        rest = origin + 8;
    else
        return 1; /* "null" and the like */
    return !host || strcasecmp(rest, host) != 0;
}

static int session_valid(struct srv_http *h, const char *id)
{
    uint64_t now = util_now_ms();
    size_t i;
    int ok = 0;

    if (!id || strlen(id) != SRV_SESSION_LEN)
        return 0;
    pthread_mutex_lock(&h->mu);
    for (i = 0; i < SRV_SESSIONS_MAX; i++) {
        session *s = &h->sessions[i];
        if (s->id[0] && now - s->created_ms > SRV_SESSION_TTL_MS)
            s->id[0] = '\0';
        if (s->id[0] && srv_secret_eq(id, SRV_SESSION_LEN, s->id, SRV_SESSION_LEN))
            ok = 1;
    }
    pthread_mutex_unlock(&h->mu);
    return ok;
}

/* Where a sign-in may send the browser back to: a path of this server
 * (no "//host", no backslash, no control or quote characters). */
static int local_path(const char *p)
{
    size_t i;

    if (!p || p[0] != '/' || p[1] == '/' || strlen(p) > 512)
        return 0;
    for (i = 0; p[i]; i++)
        if (!((p[i] >= 'A' && p[i] <= 'Z') || (p[i] >= 'a' && p[i] <= 'z') ||
              (p[i] >= '0' && p[i] <= '9') || strchr("/._~%-", p[i])))
            return 0;
    return 1;
}

/* "/login?next=PATH" (PATH's '%' as %25, so srv_arg gives it back as
 * sent), or "/login" for a path that is not local_path. */
static void login_location(const char *path, char *out, size_t cap)
{
    size_t o;

    snprintf(out, cap, "/login");
    if (!local_path(path) || strcmp(path, "/") == 0)
        return;
    o = (size_t)snprintf(out, cap, "/login?next=");
    for (; *path && o + 4 < cap; path++)
        o += (size_t)snprintf(out + o, cap - o, *path == '%' ? "%%25" : "%c",
                              *path);
}

/* Decides r.auth. Returns 0, or the status to answer (401, or 303 to the
 * login page for a browser's GET). */
static int authenticate(rctx *x)
{
    const char *a = srv_header(&x->r, MHD_HTTP_HEADER_AUTHORIZATION);
    unsigned flags = x->route->flags;

    x->r.auth = SRV_AUTH_NONE;
    if (!x->s->tokens)
        return 0;
    if (a && strncasecmp(a, "Bearer ", 7) == 0) {
        const char *t = a + 7;
        while (*t == ' ')
            t++;
        if (srv_tokens_check(&x->s->http->tokens, t, strlen(t))) {
            x->r.auth = SRV_AUTH_TOKEN;
            return 0;
        }
        return flags & SRV_PUBLIC ? 0 : 401;
    }
    if (session_valid(x->s->http, srv_cookie(&x->r, SRV_SESSION_COOKIE))) {
        x->r.auth = SRV_AUTH_COOKIE;
        return 0;
    }
    if (flags & SRV_PUBLIC)
        return 0;
    if (!(flags & SRV_API) && strcmp(x->r.method, "POST") != 0)
        return 303;
    return 401;
}

/* Finds the route; 0, or the status to answer (404, 405, 400). */
static int find_route(rctx *x)
{
    const char *m = strcmp(x->r.method, "HEAD") == 0 ? "GET" : x->r.method;
    size_t t, i, np;
    int seen = 0, bad = 0;

    x->allow[0] = '\0';
    for (t = 0; srv_route_tables[t]; t++)
        for (i = 0; srv_route_tables[t][i].method; i++) {
            const srv_route *rt = &srv_route_tables[t][i];
            int k = srv_route_match(rt->pattern, x->r.path, x->params, &np);
            if (k == 0)
                continue;
            if (strcmp(rt->method, m) != 0) {
                if (!strstr(x->allow, rt->method) &&
                    strlen(x->allow) + 12 < sizeof x->allow)
                    snprintf(x->allow + strlen(x->allow),
                             sizeof x->allow - strlen(x->allow), "%s%s",
                             x->allow[0] ? ", " : "",
                             strcmp(rt->method, "GET") == 0 ? "GET, HEAD"
                                                            : rt->method);
                seen = 1;
                continue;
            }
            if (k < 0) {
                bad = 1;
                x->route = rt;
                continue;
            }
            x->route = rt;
            x->api = (rt->flags & SRV_API) != 0;
            x->r.nparam = np;
            for (np = 0; np < x->r.nparam; np++)
                x->r.param[np] = x->params[np];
            return 0;
        }
    x->route = NULL;
    return bad ? 400 : seen ? 405 : 404;
}

static int is_json(const char *ct)
{
    return ct && strncasecmp(ct, "application/json", 16) == 0;
}

static int is_urlencoded(const char *ct)
{
    return ct && strncasecmp(ct, "application/x-www-form-urlencoded", 33) == 0;
}

static int status_of(int op)
{
    return op == OP_ELIMIT ? 413 : op == OP_EPARSE || op == OP_EUSAGE ? 400 : 500;
}

/* Everything that is known from the request line and the headers. */
static enum MHD_Result begin(rctx *x)
{
    const char *cl = srv_header(&x->r, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *ct = srv_header(&x->r, MHD_HTTP_HEADER_CONTENT_TYPE);
    const char *host = srv_header(&x->r, MHD_HTTP_HEADER_HOST);
    uint64_t len = cl ? strtoull(cl, NULL, 10) : 0, cap;
    size_t hbytes = strlen(x->r.path);
    int st, post = strcmp(x->r.method, "POST") == 0;
    op_error err;

    x->api = strncmp(x->r.path, "/api/", 5) == 0;
    MHD_get_connection_values(x->c, MHD_HEADER_KIND, header_bytes, &hbytes);
    if (hbytes > SRV_HEADER_MAX)
        return answer_fail(x, 431, SRV_M_REJECT_BAD, "the request headers "
                           "have more than %u bytes", SRV_HEADER_MAX);
    if (!host_ok(x, host))
        return answer_fail(x, 403, SRV_M_REJECT_CSRF, "Host '%.100s' is not "
                           "this server (it answers to localhost, 127.0.0.1 "
                           "and [::1] with its port)", host);
    if ((st = find_route(x)) != 0)
        return answer_fail(x, st, SRV_M_REJECT_BAD, "%s",
                           st == 404 ? "no such page"
                           : st == 405 ? "this method is not allowed here"
                                       : "a path segment is not valid");
    if (post && cross_site(x))
        return answer_fail(x, 403, SRV_M_REJECT_CSRF, "a cross-site request "
                           "(Origin or Sec-Fetch-Site) may not POST here");
    if ((st = authenticate(x)) == 303) {
        srv_resp w;
        if (resp_open(&w))
            return MHD_NO;
        w.status = 303;
        w.type = "text/plain; charset=utf-8";
        login_location(x->r.path, w.location, sizeof w.location);
        fputs("sign in at /login\n", w.f);
        return send_resp(x, &w);
    }
    if (st)
        return answer_fail(x, 401, SRV_M_REJECT_AUTH, "%s",
                           srv_header(&x->r, MHD_HTTP_HEADER_AUTHORIZATION)
                               ? "the token is not valid"
                               : "sign in: send 'Authorization: Bearer TOKEN'");
    if (!(x->route->flags & (SRV_BODY | SRV_UPLOAD)))
        return MHD_YES; /* answered when MHD calls again: keeps keep-alive */
    x->mode = (x->route->flags & SRV_UPLOAD) && !is_json(ct) ? BODY_STAGE
                                                             : BODY_SMALL;
    cap = x->mode == BODY_STAGE ? x->s->o->max_upload_bytes : SRV_BODY_MAX;
    if (len > cap)
        return answer_fail(x, 413, SRV_M_REJECT_SIZE, "the body has %llu "
                           "bytes, more than the %llu allowed here",
                           (unsigned long long)len, (unsigned long long)cap);
    if (x->mode == BODY_STAGE) {
        op_error_clear(&err);
        if ((st = stage_begin(x->s, ct, srv_arg(&x->r, "name"), &x->stage, &err)))
            return answer_fail(x, status_of(st), metric_of(status_of(st)), "%s",
                               err.msg);
    }
    return MHD_YES;
}

/* ---- the body --------------------------------------------------------------------------- */

static void set_fail(rctx *x, int status, srv_metric m, const char *msg)
{
    if (x->fail)
        return;
    x->fail = status;
    x->fail_m = m;
    snprintf(x->fail_msg, sizeof x->fail_msg, "%s", msg);
}

/* More body bytes. After a failure the rest is read and dropped (so the
 * client gets the answer), but only up to the upload limit. */
static enum MHD_Result feed(rctx *x, const char *data, size_t n)
{
    uint64_t cap = x->s->o->max_upload_bytes;
    op_error err;
    int st;

    x->received += n;
    if (x->fail)
        return x->received > cap ? MHD_NO : MHD_YES;
    if (x->mode == BODY_SMALL) {
        char *b;
        if (x->blen + n > SRV_BODY_MAX) {
            set_fail(x, 413, SRV_M_REJECT_SIZE, "the body is larger than the "
                     "65536 bytes allowed here");
            return MHD_YES;
        }
        b = realloc(x->body, x->blen + n + 1);
        if (!b) {
            set_fail(x, 500, SRV_M_ERRORS, "out of memory reading the body");
            return MHD_YES;
        }
        memcpy(b + x->blen, data, n);
        x->body = b;
        x->blen += n;
        b[x->blen] = '\0';
        return MHD_YES;
    }
    op_error_clear(&err);
    if ((st = stage_feed(x->stage, data, n, &err)) != 0) {
        stage_abort(x->stage);
        x->stage = NULL;
        set_fail(x, status_of(st), metric_of(status_of(st)), err.msg);
    }
    return MHD_YES;
}

/* application/x-www-form-urlencoded into x->form. */
static int parse_form(rctx *x)
{
    char *p = x->body;

    while (p && *p) {
        char *amp = strchr(p, '&'), *eq;
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        kv *g;
        if (amp)
            *amp = '\0';
        eq = strchr(p, '=');
        if (x->nform >= SRV_FIELDS_MAX)
            return 400;
        g = realloc(x->form, (x->nform + 1) * sizeof *g);
        if (!g)
            return 500;
        x->form = g;
        g[x->nform].k = g[x->nform].v = NULL;
        g[x->nform].k = malloc(n + 1);
        g[x->nform].v = malloc(n + 1);
        x->nform++;
        if (!g[x->nform - 1].k || !g[x->nform - 1].v)
            return 500;
        if (srv_pct_decode(p, eq ? (size_t)(eq - p) : n, 1, 0,
                           g[x->nform - 1].k, n + 1) < 0 ||
            srv_pct_decode(eq ? eq + 1 : "", eq ? n - (size_t)(eq - p) - 1 : 0,
                           1, 0, g[x->nform - 1].v, n + 1) < 0)
            return 400;
        p = amp ? amp + 1 : NULL;
    }
    return 0;
}

/* Whether a JSON text holds the escape \u0000: cJSON would end the string
 * there and drop the rest without a word. */
static int json_nul_escape(const char *s)
{
    for (; *s; s++)
        if (s[0] == '\\' && s[1] == '\\')
            s++;
        else if (s[0] == '\\' && s[1] == 'u' && strncmp(s + 2, "0000", 4) == 0)
            return 1;
    return 0;
}

/* Form routes, and every POST a browser session makes, carry the CSRF
 * token; a Bearer token is no browser's, so it needs none. */
static int csrf_needed(const rctx *x)
{
    return x->r.auth != SRV_AUTH_TOKEN &&
           ((x->route->flags & SRV_FORM) ||
            (x->r.auth == SRV_AUTH_COOKIE && strcmp(x->r.method, "POST") == 0));
}

static int csrf_passes(rctx *x)
{
    const char *given = srv_header(&x->r, "X-CSRF-Token");

    if (!given)
        given = srv_field(&x->r, "csrf");
    return srv_csrf_ok(srv_cookie(&x->r, SRV_CSRF_COOKIE), given);
}

/* The body is in: the upload staged or the small body read. */
static enum MHD_Result finish(rctx *x)
{
    const char *ct = srv_header(&x->r, MHD_HTTP_HEADER_CONTENT_TYPE);
    op_error err;
    int st;

    if (!x->fail && x->mode == BODY_STAGE) {
        srv_stage *stage = x->stage;
        x->stage = NULL;
        op_error_clear(&err);
        if ((st = stage_end(stage, &x->upload, &err)) != 0)
            set_fail(x, status_of(st), metric_of(status_of(st)), err.msg);
        x->r.upload = x->upload;
    }
    if (!x->fail && x->mode == BODY_SMALL) {
        if (!x->body && !(x->body = calloc(1, 1)))
            set_fail(x, 500, SRV_M_ERRORS, "out of memory");
        else if (memchr(x->body, '\0', x->blen))
            set_fail(x, 400, SRV_M_REJECT_BAD, "the body holds a NUL byte");
        else if (is_json(ct) && json_nul_escape(x->body))
            set_fail(x, 400, SRV_M_REJECT_BAD, "the JSON body holds a NUL "
                     "character (\\u0000)");
        else if (is_urlencoded(ct) && (st = parse_form(x)) != 0)
            set_fail(x, st, metric_of(st), st == 400 ? "the form is not valid "
                     "(bad escape or more than 64 fields)" : "out of memory");
        x->r.body = x->body;
        x->r.body_len = x->blen;
    }
    if (x->fail)
        return answer_fail(x, x->fail, x->fail_m, "%s", x->fail_msg);
    if (csrf_needed(x) && !csrf_passes(x))
        return answer_fail(x, 403, SRV_M_REJECT_CSRF, "the form's CSRF token is "
                           "missing or stale: reload the page and try again");
    return run_handler(x);
}

/* ---- libmicrohttpd's callbacks ---------------------------------------------------------- */

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c,
                                  const char *url, const char *method,
                                  const char *version, const char *data,
                                  size_t *data_size, void **con_cls)
{
    srv *s = cls;
    rctx *x = *con_cls;

    if (!x) {
        x = calloc(1, sizeof *x);
        if (!x)
            return MHD_NO;
        *con_cls = x;
        x->s = s;
        x->c = c;
        x->r.s = s;
        x->r.conn = x;
        x->r.method = method;
        x->r.path = url;
        return begin(x);
    }
    if (*data_size) {
        enum MHD_Result ok = feed(x, data, *data_size);
        *data_size = 0;
        return ok;
    }
    return finish(x);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    rctx *x = *con_cls;
    size_t i;

    if (!x)
        return;
    if (x->stage)
        stage_abort(x->stage); /* the client went away mid-upload */
    if (x->upload)
        srv_upload_free(x->upload);
    for (i = 0; i < x->nform; i++) {
        free(x->form[i].k);
        free(x->form[i].v);
    }
    free(x->form);
    for (i = 0; i < x->nowned; i++)
        free(x->owned[i]);
    free(x->owned);
    free(x->body);
    free(x);
    *con_cls = NULL;
}

/* The path stays as sent: serve_http.c splits on '/' first and decodes
 * each segment itself, so a %2F inside a job key is no separator. */
static size_t no_unescape(void *cls, struct MHD_Connection *c, char *s)
{
    return strlen(s);
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
    char msg[512];
    size_t n;

    vsnprintf(msg, sizeof msg, fmt, ap);
    n = strlen(msg);
    while (n && msg[n - 1] == '\n')
        msg[--n] = '\0';
    diag_msg(DIAG_WARNING, "serve: %s", msg);
}

/* ---- GET /login, POST /login, POST /logout ------------------------------------------------ */

static void login_form(const srv_req *r, srv_resp *w, const char *note)
{
    const char *next = srv_field(r, "next") ? srv_field(r, "next")
                                            : srv_arg(r, "next");
    FILE *f = w->f;

    w->type = "text/html; charset=utf-8";
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<title>Sign in - optipipe</title><link rel=\"stylesheet\" "
          "href=\"/static/app.css\"></head><body><main><h1>Sign in</h1>", f);
    if (note) {
        fputs("<p class=\"error\">", f);
        html_put(f, note);
        fputs("</p>", f);
    }
    if (!r->s->tokens) {
        fputs("<p>This server needs no sign-in (it listens on loopback "
              "without tokens).</p><p><a href=\"/\">Start page</a></p>", f);
    } else {
        fputs("<form method=\"post\" action=\"/login\">", f);
        srv_csrf_input(r, f);
        if (local_path(next)) {
            fputs("<input type=\"hidden\" name=\"next\" value=\"", f);
            html_put(f, next);
            fputs("\">", f);
        }
        fputs("<label>Token <input type=\"password\" name=\"token\" "
              "autocomplete=\"current-password\" required></label> "
              "<button type=\"submit\">Sign in</button></form>", f);
    }
    fputs("</main></body></html>\n", f);
}

int srv_login_page(const srv_req *r, srv_resp *w)
{
    w->status = 200;
    login_form(r, w, NULL);
    return 0;
}

/* A new session in a free (or the oldest) slot; 0, or -1 without
 * randomness. */
static int session_new(struct srv_http *h, char id[SRV_SESSION_LEN + 1])
{
    size_t i, pick = 0;

    if (srv_random_hex(id, SRV_SESSION_LEN / 2))
        return -1;
    pthread_mutex_lock(&h->mu);
    for (i = 0; i < SRV_SESSIONS_MAX; i++) {
        if (!h->sessions[i].id[0]) {
            pick = i;
            break;
        }
        if (h->sessions[i].created_ms < h->sessions[pick].created_ms)
            pick = i;
    }
    memcpy(h->sessions[pick].id, id, SRV_SESSION_LEN + 1);
    h->sessions[pick].created_ms = util_now_ms();
    pthread_mutex_unlock(&h->mu);
    return 0;
}

static void session_end(struct srv_http *h, const char *id)
{
    size_t i;

    if (!id || strlen(id) != SRV_SESSION_LEN)
        return;
    pthread_mutex_lock(&h->mu);
    for (i = 0; i < SRV_SESSIONS_MAX; i++)
        if (srv_secret_eq(id, SRV_SESSION_LEN, h->sessions[i].id, SRV_SESSION_LEN))
            h->sessions[i].id[0] = '\0';
    pthread_mutex_unlock(&h->mu);
}

int srv_login_post(const srv_req *r, srv_resp *w)
{
    const char *tok = srv_field(r, "token");
    char id[SRV_SESSION_LEN + 1];
    rctx *x = ctx_of(r);

    if (!r->s->tokens) {
        w->status = 303;
        snprintf(w->location, sizeof w->location, "/");
        return 0;
    }
    if (!tok || !srv_tokens_check(&r->s->http->tokens, tok, strlen(tok))) {
        srv_count(r->s, SRV_M_REJECT_AUTH, 1);
        w->status = 401;
        login_form(r, w, "That token is not valid.");
        return 0;
    }
    if (session_new(r->s->http, id))
        return srv_fail(r, w, 500, "no randomness for a session id");
    add_cookie(x, SRV_SESSION_COOKIE, id, 0);
    w->status = 303;
    w->type = "text/plain; charset=utf-8";
    snprintf(w->location, sizeof w->location, "%s",
             local_path(srv_field(r, "next")) ? srv_field(r, "next") : "/");
    fputs("signed in\n", w->f);
    return 0;
}

int srv_logout_post(const srv_req *r, srv_resp *w)
{
    rctx *x = ctx_of(r);

    session_end(r->s->http, srv_cookie(r, SRV_SESSION_COOKIE));
    add_cookie(x, SRV_SESSION_COOKIE, "", 1);
    w->status = 303;
    w->type = "text/plain; charset=utf-8";
    snprintf(w->location, sizeof w->location, "/login");
    fputs("signed out\n", w->f);
    return 0;
}

/* ---- the daemon ------------------------------------------------------------------------------ */

/* MHD_USE_ITC: MHD_stop_daemon wakes every pool thread through its own
 * eventfd; without it a thread asleep in its poll may never notice the
 * stop (seen with more threads than connections), and SIGTERM hangs.
 * MHD_USE_POLL, not epoll: with epoll (libmicrohttpd 0.9.75) a client
 * that went away in the middle of its body was now and then seen only at
 * --conn-timeout (about 1 run in 6 of e2e/serve_upload under ASan; none
 * in 26 with poll), and its staged upload stayed that long. poll() is
 * fine for the --max-connections (64) a pool thread holds. */
int srv_http_start(srv *s, const srv_listen *l, const srv_tokens *tokens,
                   unsigned *port, op_error *err)
{
    const union MHD_DaemonInfo *info;
    struct srv_http *h = calloc(1, sizeof *h);
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ITC |
                     (l->v6 ? MHD_USE_IPv6 : 0) | MHD_USE_ERROR_LOG;
    const serve_opts *o = s->o;

    if (!h)
        return op_error_set(err, OP_ENOMEM, "out of memory (server)");
    if (pthread_mutex_init(&h->mu, NULL)) {
        free(h);
        return op_error_set(err, OP_ENOMEM, "no mutex for the sessions");
    }
    if (tokens)
        h->tokens = *tokens;
    snprintf(h->bound_host, sizeof h->bound_host, "%s", l->host);
    if (o->public_origin &&
        srv_parse_origin(o->public_origin, h->public_host,
                         sizeof h->public_host, err)) {
        pthread_mutex_destroy(&h->mu);
        free(h);
        return err->code;
    }
    s->http = h;
    h->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_request, s,
        MHD_OPTION_EXTERNAL_LOGGER, on_log, s,
        MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&l->sa,
        MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(o->threads ? o->threads : 1),
        MHD_OPTION_CONNECTION_LIMIT, (unsigned int)o->max_connections,
        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)o->conn_timeout_s,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)SRV_CONN_MEMORY,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
        MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, s,
        MHD_OPTION_END);
    if (!h->d) {
        srv_http_stop(s);
        return op_error_set(err, OP_EIO, "cannot listen on %s:%u (in use, or "
                            "not an address of this machine)", l->host, l->port);
    }
    info = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    h->port = info && info->port ? info->port : l->port;
    *port = h->port;
    return 0;
}

void srv_http_stop(srv *s)
{
    struct srv_http *h = s->http;

    if (!h)
        return;
    if (h->d)
        MHD_stop_daemon(h->d);
    pthread_mutex_destroy(&h->mu);
    explicit_bzero(&h->tokens, sizeof h->tokens);
    free(h);
    s->http = NULL;
}
