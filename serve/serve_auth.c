/*
 * serve_auth.c - who a request of `optipipe serve` is (docs/security.md):
 * the Bearer tokens of --token-file, the browser sessions that POST
 * /login opens with one or with a user's token (a bounded table, 12 h
 * each; a session knows its user and role), the CSRF double-submit token
 * check, and the sign-in pages, rendered through the page template of
 * serve_ui_page.c. serve_http.c asks it before any handler runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report_html.h"
#include "serve_http.h"
#include "sha256.h"
#include "store.h"
#include "serve_ui.h"
#include "util.h"

#define SRV_SESSION_TTL_MS (12ull * 3600 * 1000)

/* ---- secrets ----------------------------------------------------------------- */

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

int srv_csrf_valid(const char *token)
{
    return token && strlen(token) == SRV_CSRF_LEN && all_hex(token, SRV_CSRF_LEN);
}

int srv_csrf_ok(const char *cookie, const char *given)
{
    return cookie && given && all_hex(cookie, SRV_CSRF_LEN) &&
           strlen(given) == SRV_CSRF_LEN &&
           srv_secret_eq(given, SRV_CSRF_LEN, cookie, SRV_CSRF_LEN);
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

/* ---- browser sessions ---------------------------------------------------------- */

/* The shared store of h's server (locked: give it back with
 * jobs_store_unlock), or NULL: the sessions are in memory. */
static store *shared_db(srv_sessions *h)
{
    return h->owner ? jobs_store_lock(h->owner->jobs) : NULL;
}

static void shared_give(srv_sessions *h, store *db)
{
    jobs_store_unlock(h->owner->jobs, db);
}

/* A session in the store: the SHA-256 of its id (who reads the table
 * cannot sign in with what is there), its user and role. */
static int shared_get(srv_sessions *h, store *db, const char *id,
                      char user[SRV_USER_MAX + 1], srv_role *role)
{
    char hash[SHA256_HEX_LEN + 1], u[SRV_USER_MAX + 1], r[16];
    op_error err;
    int rc, ro;

    sha256_hex(id, strlen(id), hash);
    rc = store_session_get(db, hash, u, sizeof u, r, sizeof r, &err);
    shared_give(h, db);
    if (rc) {
        if (rc != OP_ENOTFOUND)
            fprintf(stderr, "optipipe serve: a browser session: %s\n", err.msg);
        return 0;
    }
    if ((ro = srv_role_parse(r)) < 0)
        return 0; /* a row no optipipe wrote */
    if (user)
        memcpy(user, u, SRV_USER_MAX + 1);
    if (role)
        *role = (srv_role)ro;
    return 1;
}

int srv_sessions_init(srv_sessions *h)
{
    h->owner = NULL;
    memset(h->s, 0, sizeof h->s);
    return pthread_mutex_init(&h->mu, NULL) ? -1 : 0;
}

void srv_sessions_destroy(srv_sessions *h)
{
    explicit_bzero(h->s, sizeof h->s);
    pthread_mutex_destroy(&h->mu);
}

int srv_session_get(srv_sessions *h, const char *id,
                    char user[SRV_USER_MAX + 1], srv_role *role)
{
    uint64_t now = util_now_ms();
    size_t i;
    int ok = 0;

    store *db;

    if (!id || strlen(id) != SRV_SESSION_LEN)
        return 0;
    if ((db = shared_db(h)))
        return shared_get(h, db, id, user, role);
    pthread_mutex_lock(&h->mu);
    for (i = 0; i < SRV_SESSIONS_MAX; i++) {
        srv_session *s = &h->s[i];
        if (s->id[0] && now - s->created_ms > SRV_SESSION_TTL_MS)
            s->id[0] = '\0';
        if (s->id[0] && srv_secret_eq(id, SRV_SESSION_LEN, s->id, SRV_SESSION_LEN)) {
            ok = 1;
            if (user)
                memcpy(user, s->user, SRV_USER_MAX + 1);
            if (role)
                *role = s->role;
        }
    }
    pthread_mutex_unlock(&h->mu);
    return ok;
}

int srv_session_valid(srv_sessions *h, const char *id)
{
    return srv_session_get(h, id, NULL, NULL);
}

/* Where a sign-in may send the browser back to: a path of this server
 * (no "//host", no backslash, no control or quote characters). */
int srv_local_path(const char *p)
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
 * sent), or "/login" for a path that is not srv_local_path. */
void srv_login_location(const char *path, char *out, size_t cap)
{
    size_t o;

    snprintf(out, cap, "/login");
    if (!srv_local_path(path) || strcmp(path, "/") == 0)
        return;
    o = (size_t)snprintf(out, cap, "/login?next=");
    for (; *path && o + 4 < cap; path++)
        o += (size_t)snprintf(out + o, cap - o, *path == '%' ? "%%25" : "%c",
                              *path);
}

int srv_session_new(srv_sessions *h, char id[SRV_SESSION_LEN + 1])
{
    return srv_session_open(h, id, NULL, SRV_ROLE_ADMIN);
}

int srv_session_open(srv_sessions *h, char id[SRV_SESSION_LEN + 1],
                     const char *user, srv_role role)
{
    size_t i, pick = 0;
    store *db;

    if (srv_random_hex(id, SRV_SESSION_LEN / 2))
        return -1;
    if ((db = shared_db(h))) {
        char hash[SHA256_HEX_LEN + 1];
        op_error err;
        int rc;

        sha256_hex(id, strlen(id), hash);
        rc = store_session_put(db, hash, user ? user : "", srv_role_name(role),
                               (int64_t)SRV_SESSION_TTL_MS, &err);
        shared_give(h, db);
        if (rc)
            fprintf(stderr, "optipipe serve: a browser session: %s\n", err.msg);
        return rc ? -1 : 0;
    }
    pthread_mutex_lock(&h->mu);
    for (i = 0; i < SRV_SESSIONS_MAX; i++) {
        if (!h->s[i].id[0]) {
            pick = i;
            break;
        }
        if (h->s[i].created_ms < h->s[pick].created_ms)
            pick = i;
    }
    memcpy(h->s[pick].id, id, SRV_SESSION_LEN + 1);
    h->s[pick].created_ms = util_now_ms();
    snprintf(h->s[pick].user, sizeof h->s[pick].user, "%s", user ? user : "");
    h->s[pick].role = role;
    pthread_mutex_unlock(&h->mu);
    return 0;
}

void srv_session_end(srv_sessions *h, const char *id)
{
    size_t i;

    store *db;

    if (!id || strlen(id) != SRV_SESSION_LEN)
        return;
    if ((db = shared_db(h))) {
        char hash[SHA256_HEX_LEN + 1];
        op_error err;

        sha256_hex(id, strlen(id), hash);
        if (store_session_end(db, hash, &err))
            fprintf(stderr, "optipipe serve: a browser session: %s\n", err.msg);
        shared_give(h, db);
        return;
    }
    pthread_mutex_lock(&h->mu);
    for (i = 0; i < SRV_SESSIONS_MAX; i++)
        if (srv_secret_eq(id, SRV_SESSION_LEN, h->s[i].id, SRV_SESSION_LEN))
            h->s[i].id[0] = '\0';
    pthread_mutex_unlock(&h->mu);
}

/* ---- GET /login, POST /login, POST /logout ------------------------------------------------ */

/* The sign-in page (status: 200, or 401 after a wrong token), in the
 * frame of every page. */
static void login_form(const srv_req *r, srv_resp *w, int status,
                       const char *note)
{
    const char *next = srv_field(r, "next") ? srv_field(r, "next")
                                            : srv_arg(r, "next");
    FILE *f = w->f;

    ui_open(r, w, "Sign in", NULL);
    w->status = status;
    fputs("<h1>Sign in</h1>\n", f);
    if (note) {
        fputs("<p class=\"error\">", f);
        html_put(f, note);
        fputs("</p>\n", f);
    }
    if (!r->s->tokens) {
        fputs("<p>This server needs no sign-in (it listens on loopback "
              "without tokens).</p><p><a href=\"/\">Start page</a></p>\n", f);
    } else {
        fputs("<form method=\"post\" action=\"/login\">", f);
        srv_csrf_input(r, f);
        if (srv_local_path(next)) {
            fputs("<input type=\"hidden\" name=\"next\" value=\"", f);
            html_put(f, next);
            fputs("\">", f);
        }
        fputs("<label>Token <input type=\"password\" name=\"token\" "
              "autocomplete=\"current-password\" required></label> "
              "<button type=\"submit\">Sign in</button></form>\n", f);
    }
    ui_close(w);
}

int srv_login_page(const srv_req *r, srv_resp *w)
{
    login_form(r, w, 200, NULL);
    return 0;
}

int srv_login_post(const srv_req *r, srv_resp *w)
{
    const char *tok = srv_field(r, "token");
    const srv_user *user;
    char id[SRV_SESSION_LEN + 1];

    if (!r->s->tokens) {
        w->status = 303;
        snprintf(w->location, sizeof w->location, "/");
        return 0;
    }
    user = tok && r->s->access
               ? srv_users_by_token(&r->s->access->users, tok, strlen(tok))
               : NULL;
    if (!tok || (!user && !srv_tokens_check(srv_http_tokens(r->s), tok,
                                            strlen(tok)))) {
        srv_count(r->s, SRV_M_REJECT_AUTH, 1);
        login_form(r, w, 401, "That token is not valid.");
        return 0;
    }
    if (srv_session_open(srv_http_sessions(r->s), id, user ? user->name : NULL,
                         user ? user->role : SRV_ROLE_ADMIN))
        return srv_fail(r, w, 500, "cannot open a session (no randomness, "
                        "or the shared store did not take it)");
    srv_add_cookie(r, SRV_SESSION_COOKIE, id, 0);
    w->status = 303;
    w->type = "text/plain; charset=utf-8";
    snprintf(w->location, sizeof w->location, "%s",
             srv_local_path(srv_field(r, "next")) ? srv_field(r, "next") : "/");
    fputs("signed in\n", w->f);
    return 0;
}

int srv_logout_post(const srv_req *r, srv_resp *w)
{
    srv_session_end(srv_http_sessions(r->s), srv_cookie(r, SRV_SESSION_COOKIE));
    srv_add_cookie(r, SRV_SESSION_COOKIE, "", 1);
    w->status = 303;
    w->type = "text/plain; charset=utf-8";
    snprintf(w->location, sizeof w->location, "/login");
    fputs("signed out\n", w->f);
    return 0;
}
