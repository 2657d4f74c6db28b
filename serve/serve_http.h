/*
 * serve_http.h - what serve_http.c shares with serve.c (starting and
 * stopping the daemon) and serve_auth.c (tokens, sessions, sign-in), and,
 * for the unit test, their pure pieces: the listen address, path
 * segments, cookies, tokens, the CSRF check, file names. Nothing else
 * includes it; the handlers see serve.h only.
 */
#ifndef OP_SERVE_SERVE_HTTP_H
#define OP_SERVE_SERVE_HTTP_H

#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>

#include "serve.h"
#include "sha256.h"

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

/* ---- users, roles, proxies (serve_users.c) ------------------------------- */

#define SRV_USERS_MAX 256
#define SRV_USER_MAX 64 /* bytes of a user name */
#define SRV_USERS_FILE_MAX (256u * 1024)
#define SRV_PROXIES_MAX SRV_MAX_LIST

typedef struct srv_user {
    char name[SRV_USER_MAX + 1];
    srv_role role;
    char hash[SHA256_HEX_LEN + 1]; /* of the token, lowercase hex */
} srv_user;

typedef struct srv_users {
    srv_user u[SRV_USERS_MAX];
    size_t n;
} srv_users;

/* Whether name may be a user's: 1 to SRV_USER_MAX bytes of
 * [A-Za-z0-9._@+-], not starting with '-', and none of the names
 * decided_by had before users ("token", "browser", "local"). */
int srv_user_name_ok(const char *name);

/* Reads a users file: "NAME ROLE sha256:HEX" a line, '#' comments and
 * blank lines ignored; names unique. Refuses a file group or others may
 * write, a bad line (named by its number). OP_EUSAGE / OP_EIO with err.
 * out is the caller's (large: not on a thread's stack). */
int srv_users_load(const char *path, srv_users *out, op_error *err);
/* The user whose token is tok (its hash compared with every user's, in
 * constant time), or NULL. */
const srv_user *srv_users_by_token(const srv_users *u, const char *tok,
                                   size_t len);
const srv_user *srv_users_by_name(const srv_users *u, const char *name);

/* One --trusted-proxy: an address and a prefix length. */
typedef struct srv_cidr {
    int v6;
    unsigned char addr[16];
    unsigned bits;
} srv_cidr;
/* "10.0.0.0/8", "127.0.0.2", "::1", "fd00::/8" (a bare address is /32
 * or /128). OP_EUSAGE with err naming text. */
int srv_cidr_parse(const char *text, srv_cidr *out, op_error *err);
/* Whether sa (AF_INET, or AF_INET6 also as a v4-mapped address) is in c. */
int srv_cidr_match(const srv_cidr *c, const struct sockaddr *sa);

/* What serve.c loads at start for serve_http.c's authentication. */
typedef struct srv_access {
    srv_users users;                /* --users (n 0: none) */
    srv_cidr proxies[SRV_PROXIES_MAX];
    size_t nproxies;
    const char *auth_header;        /* --auth-header; NULL: none */
    srv_role proxy_role;            /* --proxy-role */
} srv_access;

/* Reads o's --users, --trusted-proxy, --auth-header and --proxy-role into
 * *out (malloc'd; free with srv_access_free), or *out NULL when none is
 * given. --auth-header without --trusted-proxy (or the reverse) is
 * OP_EUSAGE. */
int srv_access_load(const serve_opts *o, srv_access **out, op_error *err);
void srv_access_free(srv_access *a);

/* The least role route rt needs (the table in serve_roles.c); a route the
 * table does not name needs SRV_ROLE_ADMIN (tests/unit/test_serve_users.c
 * fails on such a route). */
srv_role srv_route_role(const srv_route *rt);

/* ---- browser sessions (serve_auth.c) ------------------------------------ */

#define SRV_SESSIONS_MAX 1024
#define SRV_SESSION_LEN 64 /* hex digits: 32 random bytes */
#define SRV_SESSION_COOKIE "op_session"
#define SRV_CSRF_COOKIE "op_csrf"

typedef struct srv_session {
    char id[SRV_SESSION_LEN + 1]; /* "" free */
    uint64_t created_ms;
    char user[SRV_USER_MAX + 1];  /* "" a --token-file token's */
    srv_role role;
} srv_session;

/* The sessions POST /login opened; thread-safe. */
typedef struct srv_sessions {
    pthread_mutex_t mu;
    srv_session s[SRV_SESSIONS_MAX];
    srv *owner; /* set: with a PostgreSQL store the sessions are in its
                 * table (by the SHA-256 of the id), so that every
                 * instance knows them, and s[] stays unused */
} srv_sessions;

/* 0, or -1 without a mutex (owner NULL: memory only). */
int srv_sessions_init(srv_sessions *ss);
/* Forgets every session (the ids wiped). */
void srv_sessions_destroy(srv_sessions *ss);
/* Whether id is an open session younger than 12 h (older ones close). */
int srv_session_valid(srv_sessions *ss, const char *id);
/* The same, with the session's user ("" for a --token-file token's) into
 * user and its role into *role when it is one. */
int srv_session_get(srv_sessions *ss, const char *id,
                    char user[SRV_USER_MAX + 1], srv_role *role);
/* A new session in a free (or the oldest) slot, its id into id; 0, or -1
 * without randomness. srv_session_new is an admin's without a name (a
 * --token-file token), srv_session_open one for user (NULL: none). */
int srv_session_new(srv_sessions *ss, char id[SRV_SESSION_LEN + 1]);
int srv_session_open(srv_sessions *ss, char id[SRV_SESSION_LEN + 1],
                     const char *user, srv_role role);
void srv_session_end(srv_sessions *ss, const char *id);

/* Whether token is a CSRF token's shape: SRV_CSRF_LEN lowercase hex. */
int srv_csrf_valid(const char *token);

/* Where a sign-in may send the browser back to: a path of this server
 * (no "//host", no backslash, no control or quote characters). */
int srv_local_path(const char *p);
/* "/login?next=PATH" (PATH's '%' as %25, so srv_arg gives it back as
 * sent), or "/login" for a path that is not srv_local_path; into out. */
void srv_login_location(const char *path, char *out, size_t cap);

/* ---- the routes of serve_auth.c (srv_routes_http is in serve_metrics.c) -- */

int srv_login_page(const srv_req *r, srv_resp *w);   /* GET /login */
int srv_login_post(const srv_req *r, srv_resp *w);   /* POST /login */
int srv_logout_post(const srv_req *r, srv_resp *w);  /* POST /logout */

/* What serve_auth.c uses of serve_http.c's state: the server's tokens and
 * sessions (borrowed from s), and a Set-Cookie on r's answer (HttpOnly,
 * SameSite=Strict; expire: Max-Age=0). */
const srv_tokens *srv_http_tokens(const srv *s);
srv_sessions *srv_http_sessions(srv *s);
void srv_add_cookie(const srv_req *r, const char *name, const char *value,
                    int expire);

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
