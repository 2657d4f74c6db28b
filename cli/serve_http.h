/*
 * serve_http.h - what serve_http.c shares with serve.c (starting and
 * stopping the daemon) and, for the unit test, its pure pieces: the listen
 * address, path segments, cookies, tokens, the CSRF check, file names.
 * Nothing else includes it; the handlers see serve.h only.
 */
#ifndef OP_CLI_SERVE_HTTP_H
#define OP_CLI_SERVE_HTTP_H

#include <netinet/in.h>
#include <sys/socket.h>

#include "serve.h"

/* ---- the listen address ------------------------------------------------- */

typedef struct srv_listen {
    struct sockaddr_storage sa;
    socklen_t len;
    char host[64];   /* as printed: "127.0.0.1", "[::1]" */
    unsigned port;   /* 0: any free one */
    int v6;
    int loopback;    /* 127.0.0.0/8 or ::1 */
} srv_listen;

/* "ADDR:PORT" or "[V6]:PORT" (numeric addresses only, no names: what is
 * bound is what the loopback check saw). OP_EUSAGE with err saying why. */
int srv_parse_listen(const char *text, srv_listen *out, op_error *err);

/* --public-origin: "http(s)://HOST[:PORT]" with nothing after it; host
 * gets "HOST[:PORT]" (what the Host header says). OP_EUSAGE otherwise. */
int srv_parse_origin(const char *url, char *host, size_t cap, op_error *err);

/* ---- request pieces ------------------------------------------------------ */

/* Percent-decodes s[0..n) into out (cap bytes with the NUL); plus: '+' is
 * a space (query strings, form bodies). Returns the length, or -1 for a
 * bad escape, a NUL, a '/' when no_slash, or more than cap - 1 bytes. */
long srv_pct_decode(const char *s, size_t n, int plus, int no_slash,
                    char *out, size_t cap);

/* Matches the raw path against pattern ("/api/v1/analyses/{id}"), segment
 * by segment after splitting on '/': literal segments compare decoded,
 * each {x} takes one decoded segment (1..SRV_SEGMENT_MAX bytes, no NUL; a
 * %2F stays in it as '/': job keys may hold one) into params. Returns 1 on a match (with *nparam), 0 when the path
 * is another one, -1 when it would match but a segment is not valid. */
int srv_route_match(const char *pattern, const char *path,
                    char params[][SRV_SEGMENT_MAX + 1], size_t *nparam);

/* The value of cookie name in a Cookie header ("a=1; b=2") into out;
 * 0 when absent or longer than cap - 1. */
int srv_cookie_get(const char *header, const char *name, char *out,
                   size_t cap);

/* Whether a equals b, in a time that depends on their lengths only. */
int srv_secret_eq(const char *a, size_t alen, const char *b, size_t blen);

/* The CSRF check: given (the form field or header) equals the cookie,
 * both present and SRV_CSRF_LEN hex digits. */
#define SRV_CSRF_LEN 64
int srv_csrf_ok(const char *cookie, const char *given);

/* A client's file name as a plain name of [A-Za-z0-9._-] (other bytes
 * become '_', no leading dot, at most SRV_NAME_MAX bytes; "" becomes
 * "download"). */
void srv_sanitize_name(const char *in, char out[SRV_NAME_MAX + 1]);

/* ---- tokens ----------------------------------------------------------------- */

#define SRV_TOKEN_MIN 16   /* bytes of one token */
#define SRV_TOKEN_MAX 256
#define SRV_TOKENS_MAX 64
#define SRV_TOKEN_FILE_MAX (64u * 1024)

typedef struct srv_tokens {
    char tok[SRV_TOKENS_MAX][SRV_TOKEN_MAX + 1];
    size_t len[SRV_TOKENS_MAX];
    size_t n;
} srv_tokens;

/* Reads path: one token a line, '#' comments and blank lines ignored.
 * Refuses a file group or others may read, a short token, an empty file.
 * OP_EUSAGE / OP_EIO with err naming the file (and line). */
int srv_tokens_load(const char *path, srv_tokens *out, op_error *err);
/* Whether tok is one of t's (every token compared, in constant time). */
int srv_tokens_check(const srv_tokens *t, const char *tok, size_t len);

/* ---- the routes of serve_http.c (srv_routes_http is in serve_metrics.c) -- */

int srv_login_page(const srv_req *r, srv_resp *w);   /* GET /login */
int srv_login_post(const srv_req *r, srv_resp *w);   /* POST /login */
int srv_logout_post(const srv_req *r, srv_resp *w);  /* POST /logout */

/* ---- the daemon (serve.c) ---------------------------------------------- */

/* Starts libmicrohttpd on l with s's limits; tokens (may be NULL) are
 * copied. Sets s->http. Returns 0 with *port the bound port. */
int srv_http_start(srv *s, const srv_listen *l, const srv_tokens *tokens,
                   unsigned *port, op_error *err);
/* Stops the daemon (waits for the requests being answered) and frees
 * s->http. */
void srv_http_stop(srv *s);

/* Random bytes as lowercase hex (2 * n digits and a NUL) from getrandom.
 * Returns 0, or -1 when the kernel gave none. */
int srv_random_hex(char *out, size_t n);

#endif
