/*
 * serve_http.c - the libmicrohttpd glue of `optipipe serve`: one access
 * handler routes every request over srv_route_tables and applies, before
 * any handler runs, the defences of docs/security.md: header size, Host
 * (DNS rebinding), cross-site POSTs (Origin, Sec-Fetch-Site), Bearer
 * tokens or the browser session of POST /login, CSRF (double-submit
 * cookie), body limits; then reads a small body or streams an upload into
 * DATA/tmp (serve_upload.c) and adds the security headers to the answer.
 * A handler that renders (every route but the light ones and uploads)
 * runs in a render thread of its own while its connection is suspended,
 * and its page is sent as it is written (serve_stream.c): no HTTP thread
 * ever waits for a page, so /healthz on any connection answers while every
 * renderer is busy, and a page holds a few chunks, not itself.
 * Who a request is (tokens, sessions, the CSRF check, the sign-in pages)
 * is serve_auth.c's. The pure pieces (path segments, cookies) are at the
 * top, for tests/unit/test_serve_http.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <microhttpd.h>

#include "diag.h"
#include "jsonw.h"
#include "report_html.h"
#include "serve_http.h"
#include "util.h"

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

/* ---- the server's state -------------------------------------------------------- */

struct srv_http {
    struct MHD_Daemon *d;
    srv_tokens tokens;
    unsigned port;
    char bound_host[64];
    char public_host[256]; /* --public-origin's HOST[:PORT]; "" none */
    srv_sessions sessions;
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
    uint64_t drain_from;     /* received when it failed: the drain's start */
    uint64_t drain_ms;       /* and when */
    kv *form;                /* an urlencoded body's fields */
    size_t nform;
    char **owned;            /* what srv_arg / srv_cookie handed out */
    size_t nowned;
    char csrf[SRV_CSRF_LEN + 1];
    int csrf_new;            /* set the cookie with the answer */
    char set_cookie[2][160];
    size_t ncookies;
    char allow[32];          /* 405 */
    char user[SRV_USER_MAX + 1]; /* a session's user (r.user points here) */
    /* A page rendered in a thread of its own (run_render): MHD's request,
     * the render thread and the streamed response each hold a reference;
     * the last one frees the context. */
    atomic_int refs;
    srv_pipe *pipe;
    srv_resp w;                 /* the render thread's answer */
    struct MHD_Response *stream; /* made at the commit, queued on resume */
    int stream_status;          /* w.status at the commit */
    int stream_queued;          /* the answer is queued */
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
    if (srv_csrf_valid(c)) {
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

void srv_add_cookie(const srv_req *r, const char *name, const char *value,
                    int expire)
{
    rctx *x = ctx_of(r);

    if (x)
        add_cookie(x, name, value, expire);
}

const srv_tokens *srv_http_tokens(const srv *s)
{
    return &s->http->tokens;
}

srv_sessions *srv_http_sessions(srv *s)
{
    return &s->http->sessions;
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

static int resp_open(rctx *x, srv_resp *w);

/* An answer the memory budget refused to hold becomes a short 503 (its
 * own few bytes are charged too; when even they are refused, the body is
 * empty). */
static void over_budget(rctx *x, srv_resp *w)
{
    static const char msg[] = "the server is at its memory budget "
                              "(--server-memory): try again later";
    if (resp_open(x, w) == 0) {
        srv_fail(&x->r, w, 503, "%s", msg);
        if (fclose(w->f) != 0) {
            srv_budget_free(w->body);
            w->body = NULL;
            w->len = 0;
        }
        w->f = NULL;
    }
    w->status = 503;
    w->retry_after = 5;
}

/* Closes w's stream: a body it could not hold becomes a 500, or the 503
 * of over_budget. */
static void close_body(rctx *x, srv_resp *w)
{
    if (w->f && fclose(w->f) != 0) {
        int over = w->over_budget;
        w->f = NULL;
        srv_budget_free(w->body);
        w->body = NULL;
        w->len = 0;
        w->status = 500;
        if (over)
            over_budget(x, w);
    }
    w->f = NULL;
}

/* Sends w (closing its stream first). */
static enum MHD_Result send_resp(rctx *x, srv_resp *w)
{
    struct MHD_Response *resp;
    enum MHD_Result ok;

    close_body(x, w);
    if (w->fd >= 0) {
        resp = MHD_create_response_from_fd64(w->fd_size, w->fd);
        if (resp)
            w->fd = -1; /* the response owns it */
    } else {
        /* the buffer's charge goes back when MHD frees it, sent */
        resp = MHD_create_response_from_buffer_with_free_callback(
            w->len, w->body, srv_budget_free);
        if (resp)
            w->body = NULL;
    }
    if (w->fd >= 0)
        close(w->fd);
    srv_budget_free(w->body);
    if (!resp)
        return MHD_NO;
    security_headers(x, resp, w);
    srv_count(x->s, SRV_M_REQUESTS, 1);
    ok = MHD_queue_response(x->c, (unsigned)w->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static int resp_open(rctx *x, srv_resp *w)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->status = 500;
    w->f = srv_budget_stream(x->s, &w->body, &w->len, &w->over_budget);
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

    if (resp_open(x, &w))
        return MHD_NO;
    va_start(ap, fmt);
    vfail(&x->r, &w, status, m, fmt, ap);
    va_end(ap);
    return send_resp(x, &w);
}

/* Whether the route's handler needs a render slot (serve_budget.c): all
 * but the light routes and uploads, whose handler only queues what was
 * already staged (many finish at once under load; none renders). */
static int needs_slot(const rctx *x)
{
    return !(x->route->flags & (SRV_LIGHT | SRV_UPLOAD));
}

/* ---- pages rendered in a thread of their own ---------------------------------------- */

static void ctx_free(rctx *x);

static void release(rctx *x)
{
    if (atomic_fetch_sub(&x->refs, 1) == 1)
        ctx_free(x);
}

/* Render threads alive: srv_http_stop waits for them (they resume their
 * connection, which must not outlive the daemon). */
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t live_cv = PTHREAD_COND_INITIALIZER;
static unsigned live_renders;

static void suspend_conn(void *ud)
{
    MHD_suspend_connection(((rctx *)ud)->c);
}

static int wake_conn(void *ud)
{
    MHD_resume_connection(((rctx *)ud)->c);
    return 0;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    rctx *x = cls;
    ssize_t n = srv_pipe_read(x->pipe, buf, max, suspend_conn, x);

    (void)pos;
    if (n == SRV_PIPE_BROKEN)
        diag_msg(DIAG_WARNING, "serve: %s %.200s: the page was cut after "
                 "its first %u bytes were sent", x->r.method, x->r.path,
                 SRV_STREAM_CHUNK);
    return n == SRV_PIPE_END      ? MHD_CONTENT_READER_END_OF_STREAM
         : n == SRV_PIPE_BROKEN ? MHD_CONTENT_READER_END_WITH_ERROR : n;
}

static void stream_freed(void *cls)
{
    release(cls);
}

/* The first chunk is full (render thread, its connection suspended): the
 * status and headers the handler set are final; the rest streams. */
static int stream_commit(void *ud)
{
    rctx *x = ud;
    struct MHD_Response *resp;

    atomic_fetch_add(&x->refs, 1);
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SRV_STREAM_CHUNK,
                                             stream_read, x, stream_freed);
    if (!resp) {
        release(x);
        return -1;
    }
    security_headers(x, resp, &x->w);
    x->stream_status = x->w.status;
    x->stream = resp;
    return 0;
}

static void *render_main(void *arg)
{
    rctx *x = arg;
    srv_resp *w = &x->w;
    int committed;

    srv_test_hold_render();
    if (x->route->fn(&x->r, w) != 0) {
        diag_msg(DIAG_ERROR, "serve: %s %.200s failed", x->r.method, x->r.path);
        srv_fail(&x->r, w, 500, "internal error (the server log says more)");
    }
    srv_render_leave();
    srv_pipe_lock(x->pipe);
    committed = srv_pipe_state(x->pipe) == SRV_PIPE_COMMITTED;
    srv_pipe_unlock(x->pipe);
    if (committed) {
        if (w->f)
            fclose(w->f); /* the last chunk; a failure broke the stream */
        w->f = NULL;
    } else {
        close_body(x, w);
    }
    srv_pipe_finish(x->pipe); /* wakes the connection */
    pthread_mutex_lock(&live_mu);
    live_renders--;
    pthread_cond_broadcast(&live_cv);
    pthread_mutex_unlock(&live_mu);
    release(x);
    return NULL;
}

/* Starts the handler in a render thread (it has its slot) and suspends the
 * connection until the page is done or its first chunk full. */
static enum MHD_Result run_render(rctx *x)
{
    pthread_attr_t at;
    pthread_t t;
    int rc;

    x->pipe = srv_pipe_new(x->s, SRV_STREAM_CHUNK, SRV_STREAM_DEPTH,
                           stream_commit, wake_conn, x);
    if (!x->pipe)
        goto fail;
    memset(&x->w, 0, sizeof x->w);
    x->w.fd = -1;
    x->w.status = 500;
    x->w.f = srv_pipe_file(x->pipe, &x->w.body, &x->w.len, &x->w.over_budget);
    if (!x->w.f)
        goto fail;
    if (pthread_attr_init(&at))
        goto fail;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    atomic_fetch_add(&x->refs, 1);
    pthread_mutex_lock(&live_mu);
    live_renders++;
    pthread_mutex_unlock(&live_mu);
    /* the thread wakes the connection only under the pipe's lock, so it
     * is suspended before any wake */
    srv_pipe_lock(x->pipe);
    rc = pthread_create(&t, &at, render_main, x);
    pthread_attr_destroy(&at);
    if (rc) {
        srv_pipe_unlock(x->pipe);
        pthread_mutex_lock(&live_mu);
        live_renders--;
        pthread_mutex_unlock(&live_mu);
        atomic_fetch_sub(&x->refs, 1);
        goto fail;
    }
    srv_pipe_want_wake(x->pipe);
    MHD_suspend_connection(x->c);
    srv_pipe_unlock(x->pipe);
    return MHD_YES;
fail:
    if (x->w.f) {
        fclose(x->w.f);
        x->w.f = NULL;
        srv_budget_free(x->w.body);
        x->w.body = NULL;
    }
    srv_render_leave();
    return answer_fail(x, 500, SRV_M_ERRORS, "no render thread (out of "
                       "memory or threads)");
}

/* MHD calls again once a render thread woke the connection: the page is
 * whole (sent as a buffer) or committed (streamed); a wake with neither
 * suspends it again. */
static enum MHD_Result render_resumed(rctx *x)
{
    enum MHD_Result ok;
    int st;

    if (x->stream_queued)
        return MHD_YES;
    srv_pipe_lock(x->pipe);
    st = srv_pipe_state(x->pipe);
    if (st == SRV_PIPE_RENDERING) {
        srv_pipe_want_wake(x->pipe);
        MHD_suspend_connection(x->c);
        srv_pipe_unlock(x->pipe);
        return MHD_YES;
    }
    srv_pipe_unlock(x->pipe);
    x->stream_queued = 1;
    if (st == SRV_PIPE_DONE)
        return send_resp(x, &x->w);
    srv_count(x->s, SRV_M_REQUESTS, 1);
    ok = MHD_queue_response(x->c, (unsigned)x->stream_status, x->stream);
    MHD_destroy_response(x->stream);
    x->stream = NULL;
    return ok;
}

static enum MHD_Result run_handler(rctx *x)
{
    srv_resp w;

    uint64_t bytes = x->upload ? x->upload->bytes : 0;
    int had = x->upload != NULL;

    if (needs_slot(x)) {
        if (srv_render_enter(x->s) == 0)
            return run_render(x);
        if (resp_open(x, &w))
            return MHD_NO;
        w.retry_after = 1;
        srv_fail(&x->r, &w, 503, "the server is busy: every page renderer "
                 "(--threads - 1) is at work; try again");
        return send_resp(x, &w);
    }
    if (resp_open(x, &w))
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

static const struct sockaddr *peer_of(const rctx *x)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(x->c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

    return ci ? ci->client_addr : NULL;
}

static void peer_text(const struct sockaddr *sa, char *buf, size_t n)
{
    const void *a = !sa ? NULL
                  : sa->sa_family == AF_INET
                      ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
                  : sa->sa_family == AF_INET6
                      ? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
                      : NULL;

    if (!a || !inet_ntop(sa->sa_family, a, buf, (socklen_t)n))
        snprintf(buf, n, "?");
}

/* A trusted proxy's --auth-header: 1 when it names the user (r.user,
 * r.role from --users by name or --proxy-role), 0 when there is none to
 * believe (no header; or one from an address that is no --trusted-proxy:
 * ignored and logged), -1 when the proxy named a user who may not be
 * here (a bad name, or no role: 403). */
static int proxy_user(rctx *x)
{
    const srv_access *a = x->s->access;
    const struct sockaddr *peer;
    const srv_user *u;
    const char *name;
    char from[INET6_ADDRSTRLEN];
    size_t i;
    int trusted = 0;

    if (!a || !a->auth_header || !(name = srv_header(&x->r, a->auth_header)))
        return 0;
    peer = peer_of(x);
    for (i = 0; i < a->nproxies && !trusted; i++)
        trusted = srv_cidr_match(&a->proxies[i], peer);
    if (!trusted) {
        peer_text(peer, from, sizeof from);
        diag_msg(DIAG_WARNING, "serve: %s from %s is not a --trusted-proxy: "
                 "the header is ignored (%s %.200s)", a->auth_header, from,
                 x->r.method, x->r.path);
        return 0;
    }
    if (!srv_user_name_ok(name))
        return -1;
    u = srv_users_by_name(&a->users, name);
    x->r.role = u ? u->role : a->proxy_role;
    x->r.user = u ? u->name : name;
    x->r.auth = SRV_AUTH_PROXY;
    return x->r.role == SRV_ROLE_NONE ? -1 : 1;
}

/* A Bearer token: a --token-file one (an admin without a name) or a
 * user's. */
static int bearer_ok(rctx *x, const char *t)
{
    const srv_user *u = x->s->access
                            ? srv_users_by_token(&x->s->access->users, t, strlen(t))
                            : NULL;

    if (u) {
        x->r.user = u->name;
        x->r.role = u->role;
    } else if (!srv_tokens_check(&x->s->http->tokens, t, strlen(t))) {
        return 0;
    }
    x->r.auth = SRV_AUTH_TOKEN;
    return 1;
}

/* Decides r.auth, r.user and r.role. Returns 0, or the status to answer
 * (401; 403 for a proxy's user who may not be here; 303 to the login page
 * for a browser's GET). */
static int authenticate(rctx *x)
{
    const char *a = srv_header(&x->r, MHD_HTTP_HEADER_AUTHORIZATION);
    unsigned flags = x->route->flags;
    int p;

    x->r.auth = SRV_AUTH_NONE;
    x->r.user = NULL;
    x->r.role = SRV_ROLE_ADMIN;
    if (!x->s->tokens)
        return 0;
    if ((p = proxy_user(x)) != 0)
        return p > 0 || (flags & SRV_PUBLIC) ? 0 : 403;
    if (a && strncasecmp(a, "Bearer ", 7) == 0) {
        const char *t = a + 7;
        while (*t == ' ')
            t++;
        if (bearer_ok(x, t))
            return 0;
        return flags & SRV_PUBLIC ? 0 : 401;
    }
    if (srv_session_get(&x->s->http->sessions,
                        srv_cookie(&x->r, SRV_SESSION_COOKIE), x->user,
                        &x->r.role)) {
        x->r.auth = SRV_AUTH_COOKIE;
        x->r.user = x->user[0] ? x->user : NULL;
        return 0;
    }
    x->r.role = SRV_ROLE_NONE;
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

static void set_fail(rctx *x, int status, srv_metric m, const char *msg)
{
    if (x->fail)
        return;
    x->fail = status;
    x->fail_m = m;
    snprintf(x->fail_msg, sizeof x->fail_msg, "%s", msg);
    x->drain_from = x->received;
    x->drain_ms = util_now_ms();
}

/* Lingering close: a refused body is read and dropped, so that a client
 * that sends it whole before it reads (no "Expect: 100-continue", like
 * Python's urllib) gets the answer instead of a reset; but at most
 * SRV_DRAIN_BYTES past the refusal and for SRV_DRAIN_MS, then the
 * connection is closed. */
static enum MHD_Result drain(rctx *x)
{
    return x->received - x->drain_from > SRV_DRAIN_BYTES ||
                   util_now_ms() - x->drain_ms > SRV_DRAIN_MS
               ? MHD_NO
               : MHD_YES;
}

/* The answer to a refusal of set_fail: 303 to the login page, or an
 * error body. */
static enum MHD_Result answer_refusal(rctx *x)
{
    srv_resp w;

    if (x->fail != 303)
        return answer_fail(x, x->fail, x->fail_m, "%s", x->fail_msg);
    if (resp_open(x, &w))
        return MHD_NO;
    w.status = 303;
    w.type = "text/plain; charset=utf-8";
    srv_login_location(x->r.path, w.location, sizeof w.location);
    fputs("sign in at /login\n", w.f);
    return send_resp(x, &w);
}

/* A request refused from its headers: answered at once when no body
 * follows, when the client waits for "100 Continue" before sending it, or
 * when the declared body is beyond what drain reads; otherwise the body
 * is drained first and the answer follows it (finish). */
static enum MHD_Result refuse(rctx *x, int status, srv_metric m,
                              const char *fmt, ...) OP_PRINTF(4, 5);

static enum MHD_Result refuse(rctx *x, int status, srv_metric m,
                              const char *fmt, ...)
{
    const char *cl = srv_header(&x->r, MHD_HTTP_HEADER_CONTENT_LENGTH);
    const char *te = srv_header(&x->r, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    const char *ex = srv_header(&x->r, MHD_HTTP_HEADER_EXPECT);
    uint64_t len = cl ? strtoull(cl, NULL, 10) : 0;
    char msg[OP_ERROR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    set_fail(x, status, m, msg);
    if ((len == 0 && !te) || (ex && strcasecmp(ex, "100-continue") == 0) ||
        len > SRV_DRAIN_BYTES)
        return answer_refusal(x);
    return MHD_YES;
}

/* Every query argument must decode (no bad %-escape, no NUL): a cursor
 * like ?before=%00 is refused, not taken for no cursor. */
static enum MHD_Result arg_check(void *cls, enum MHD_ValueKind kind,
                                 const char *key, const char *value)
{
    const char **bad = cls;
    const char *part[2] = {key, value ? value : ""};
    size_t i;

    (void)kind;
    for (i = 0; i < 2; i++) {
        size_t n = strlen(part[i]);
        char *tmp = malloc(n + 1);
        long got = tmp ? srv_pct_decode(part[i], n, 1, 0, tmp, n + 1) : -1;
        free(tmp);
        if (got < 0) {
            *bad = key;
            return MHD_NO;
        }
    }
    return MHD_YES;
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
    const char *badarg = NULL;
    op_error err;

    x->api = strncmp(x->r.path, "/api/", 5) == 0;
    MHD_get_connection_values(x->c, MHD_HEADER_KIND, header_bytes, &hbytes);
    if (hbytes > SRV_HEADER_MAX)
        return refuse(x, 431, SRV_M_REJECT_BAD, "the request headers "
                           "have more than %u bytes", SRV_HEADER_MAX);
    if (!host_ok(x, host))
        return refuse(x, 403, SRV_M_REJECT_CSRF, "Host '%.100s' is not "
                           "this server (it answers to localhost, 127.0.0.1 "
                           "and [::1] with its port)", host);
    if ((st = find_route(x)) != 0)
        return refuse(x, st, SRV_M_REJECT_BAD, "%s",
                           st == 404 ? "no such page"
                           : st == 405 ? "this method is not allowed here"
                                       : "a path segment is not valid");
    if (post && cross_site(x))
        return refuse(x, 403, SRV_M_REJECT_CSRF, "a cross-site request "
                           "(Origin or Sec-Fetch-Site) may not POST here");
    if ((st = authenticate(x)) == 303)
        return refuse(x, 303, SRV_M_REQUESTS, "sign in at /login");
    if (st == 403)
        return refuse(x, 403, SRV_M_REJECT_BAD, "the proxy's %s names no "
                      "user who may use this server", x->s->access->auth_header);
    if (st)
        return refuse(x, 401, SRV_M_REJECT_AUTH, "%s",
                           srv_header(&x->r, MHD_HTTP_HEADER_AUTHORIZATION)
                               ? "the token is not valid"
                               : "sign in: send 'Authorization: Bearer TOKEN'");
    if (!(x->route->flags & SRV_PUBLIC) &&
        x->r.role < srv_route_role(x->route))
        return refuse(x, 403, SRV_M_REJECT_BAD, "%s%s has the role '%s'; %s "
                      "%.100s needs '%s' or more", x->r.user ? "user " : "",
                      x->r.user ? x->r.user : "this sign-in",
                      srv_role_name(x->r.role), x->route->method,
                      x->route->pattern, srv_role_name(srv_route_role(x->route)));
    MHD_get_connection_values(x->c, MHD_GET_ARGUMENT_KIND, arg_check, &badarg);
    if (badarg)
        return refuse(x, 400, SRV_M_REJECT_BAD, "the query argument '%.60s' "
                      "is not valid (a bad %%-escape or a NUL)", badarg);
    if (!(x->route->flags & (SRV_BODY | SRV_UPLOAD)))
        return MHD_YES; /* answered when MHD calls again: keeps keep-alive */
    x->mode = (x->route->flags & SRV_UPLOAD) && !is_json(ct) ? BODY_STAGE
                                                             : BODY_SMALL;
    cap = x->mode == BODY_STAGE ? x->s->o->max_upload_bytes : SRV_BODY_MAX;
    if (len > cap)
        return refuse(x, 413, SRV_M_REJECT_SIZE, "the body has %llu "
                           "bytes, more than the %llu allowed here",
                           (unsigned long long)len, (unsigned long long)cap);
    if (x->mode == BODY_STAGE) {
        op_error_clear(&err);
        if ((st = stage_begin(x->s, ct, srv_arg(&x->r, "name"), &x->stage, &err)))
            return refuse(x, status_of(st), metric_of(status_of(st)), "%s",
                               err.msg);
    }
    return MHD_YES;
}

/* ---- the body --------------------------------------------------------------------------- */

/* More body bytes. After a failure the rest is read and dropped (drain),
 * so the client gets the answer. A route that takes no body drops what it
 * is sent, up to SRV_BODY_MAX; more is a 413. */
static enum MHD_Result feed(rctx *x, const char *data, size_t n)
{
    op_error err;
    int st;

    x->received += n;
    if (x->fail)
        return drain(x);
    if (x->mode == BODY_NONE) {
        if (x->received > SRV_BODY_MAX)
            set_fail(x, 413, SRV_M_REJECT_SIZE, "this route takes no body "
                     "(one of at most 65536 bytes is ignored)");
        return MHD_YES;
    }
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

/* Form routes, and every POST a browser session makes (also one signed
 * in by a proxy), carry the CSRF token; a Bearer token is no browser's,
 * so it needs none. */
static int csrf_needed(const rctx *x)
{
    return x->r.auth != SRV_AUTH_TOKEN &&
           ((x->route->flags & SRV_FORM) ||
            ((x->r.auth == SRV_AUTH_COOKIE || x->r.auth == SRV_AUTH_PROXY) &&
             strcmp(x->r.method, "POST") == 0));
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
        return answer_refusal(x);
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
        atomic_init(&x->refs, 1); /* MHD's, until on_completed */
        x->s = s;
        x->c = c;
        x->r.s = s;
        x->r.conn = x;
        x->r.method = method;
        x->r.path = url;
        return begin(x);
    }
    if (x->pipe)
        return render_resumed(x);
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
    struct MHD_Response *unsent = NULL;

    if (!x)
        return;
    *con_cls = NULL;
    if (x->pipe) {
        srv_pipe_gone(x->pipe); /* the render thread's writes fail now */
        srv_pipe_lock(x->pipe);
        unsent = x->stream;
        x->stream = NULL;
        srv_pipe_unlock(x->pipe);
    }
    if (unsent)
        MHD_destroy_response(unsent); /* its reference goes with it */
    release(x);
}

/* What a request held, once MHD, its render thread and its streamed
 * response are all done with it. */
static void ctx_free(rctx *x)
{
    size_t i;

    if (x->pipe) { /* x->w is the render thread's answer */
        if (x->w.f)
            fclose(x->w.f);
        srv_budget_free(x->w.body);
        if (x->w.fd >= 0)
            close(x->w.fd);
        srv_pipe_free(x->pipe);
    }
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
                     MHD_ALLOW_SUSPEND_RESUME |
                     (l->v6 ? MHD_USE_IPv6 : 0) | MHD_USE_ERROR_LOG;
    const serve_opts *o = s->o;

    if (!h)
        return op_error_set(err, OP_ENOMEM, "out of memory (server)");
    if (srv_sessions_init(&h->sessions)) {
        free(h);
        return op_error_set(err, OP_ENOMEM, "no mutex for the sessions");
    }
    h->sessions.owner = s; /* the store's table when it is shared */
    if (tokens)
        h->tokens = *tokens;
    snprintf(h->bound_host, sizeof h->bound_host, "%s", l->host);
    if (o->public_origin &&
        srv_parse_origin(o->public_origin, h->public_host,
                         sizeof h->public_host, err)) {
        srv_sessions_destroy(&h->sessions);
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
    /* render threads end first: each resumes its connection, which must
     * still exist (writes fail from now on, so they end soon) */
    srv_pipes_stop();
    pthread_mutex_lock(&live_mu);
    while (live_renders)
        pthread_cond_wait(&live_cv, &live_mu);
    pthread_mutex_unlock(&live_mu);
    if (h->d)
        MHD_stop_daemon(h->d);
    srv_sessions_destroy(&h->sessions);
    explicit_bzero(&h->tokens, sizeof h->tokens);
    free(h);
    s->http = NULL;
}
