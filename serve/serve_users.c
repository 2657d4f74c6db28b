/*
 * serve_users.c - the users of `optipipe serve` (docs/security.md "Users
 * and roles"): the --users file (a name, a role and the SHA-256 of a
 * token a line: the file never holds a token), the --trusted-proxy
 * addresses whose --auth-header names the user, `optipipe serve user
 * add`, which makes a token and prints it once, and GET /api/v1/me and
 * /api/v1/users. serve_http.c asks it who a request is; what each role
 * may do is serve_roles.c's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "diag.h"
#include "jsonw.h"
#include "serve_http.h"

/* ---- the users file ------------------------------------------------------------------- */

int srv_user_name_ok(const char *name)
{
    static const char *const legacy[] = {"token", "browser", "local"};
    size_t i, n = name ? strlen(name) : 0;

    if (!n || n > SRV_USER_MAX || name[0] == '-')
        return 0;
    for (i = 0; i < n; i++)
        if (!((name[i] >= 'A' && name[i] <= 'Z') ||
              (name[i] >= 'a' && name[i] <= 'z') ||
              (name[i] >= '0' && name[i] <= '9') || strchr("._@+-", name[i])))
            return 0;
    for (i = 0; i < 3; i++)
        if (!strcmp(name, legacy[i]))
            return 0;
    return 1;
}

static int is_hex64(const char *s)
{
    size_t i;

    for (i = 0; i < SHA256_HEX_LEN; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return s[SHA256_HEX_LEN] == '\0';
}

/* One line: NAME ROLE sha256:HEX (blank and '#' lines skipped). */
static int user_line(srv_users *u, const char *path, unsigned lineno,
                     char *line, op_error *err)
{
    char *f[4], *save = NULL, *p;
    int n = 0, role;

    for (p = strtok_r(line, " \t\r", &save); p && n < 4;
         p = strtok_r(NULL, " \t\r", &save))
        f[n++] = p;
    if (!n || f[0][0] == '#')
        return 0;
    if (n != 3)
        return op_error_set(err, OP_EUSAGE, "%s:%u: a user is 'NAME ROLE "
                            "sha256:HEX' (`optipipe serve user add` writes "
                            "one)", path, lineno);
    if (!srv_user_name_ok(f[0]))
        return op_error_set(err, OP_EUSAGE, "%s:%u: '%.80s' is not a user name "
                            "(1 to %d of A-Z a-z 0-9 . _ @ + -)", path, lineno,
                            f[0], SRV_USER_MAX);
    if ((role = srv_role_parse(f[1])) <= SRV_ROLE_NONE)
        return op_error_set(err, OP_EUSAGE, "%s:%u: role '%.40s': read, "
                            "upload, decide or admin", path, lineno, f[1]);
    if (strncmp(f[2], "sha256:", 7) != 0 || !is_hex64(f[2] + 7))
        return op_error_set(err, OP_EUSAGE, "%s:%u: the token hash is "
                            "sha256: and 64 lowercase hex digits", path, lineno);
    if (srv_users_by_name(u, f[0]))
        return op_error_set(err, OP_EUSAGE, "%s:%u: user '%s' is there twice",
                            path, lineno, f[0]);
    if (u->n >= SRV_USERS_MAX)
        return op_error_set(err, OP_ELIMIT, "%s:%u: more than %d users", path,
                            lineno, SRV_USERS_MAX);
    snprintf(u->u[u->n].name, sizeof u->u[0].name, "%s", f[0]);
    u->u[u->n].role = (srv_role)role;
    memcpy(u->u[u->n].hash, f[2] + 7, SHA256_HEX_LEN + 1);
    u->n++;
    return 0;
}

/* path's content (a regular file nobody else may write, at most
 * SRV_USERS_FILE_MAX bytes) into *buf, NUL-terminated. */
static int read_users_file(const char *path, char **buf, op_error *err)
{
    struct stat st;
    ssize_t got;
    int fd, rc = 0;

    *buf = NULL;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return op_error_set(err, errno == ENOENT ? OP_ENOTFOUND : OP_EIO,
                            "--users %s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        rc = op_error_set(err, OP_EUSAGE, "--users %s: not a regular file", path);
    else if (st.st_mode & 022)
        rc = op_error_set(err, OP_EUSAGE, "--users %s: group or others may "
                          "write it (mode %04o): chmod 600 it", path,
                          (unsigned)(st.st_mode & 07777));
    else if (st.st_size > (off_t)SRV_USERS_FILE_MAX)
        rc = op_error_set(err, OP_ELIMIT, "--users %s: larger than %u bytes",
                          path, SRV_USERS_FILE_MAX);
    else if (!(*buf = malloc((size_t)st.st_size + 1)))
        rc = op_error_set(err, OP_ENOMEM, "out of memory reading %s", path);
    else if ((got = read(fd, *buf, (size_t)st.st_size)) < 0)
        rc = op_error_set(err, OP_EIO, "--users %s: %s", path, strerror(errno));
    else if (((*buf)[got] = '\0', memchr(*buf, '\0', (size_t)got)))
        rc = op_error_set(err, OP_EUSAGE, "--users %s: holds a NUL byte", path);
    close(fd);
    if (rc) {
        free(*buf);
        *buf = NULL;
    }
    return rc;
}

int srv_users_load(const char *path, srv_users *out, op_error *err)
{
    char *buf, *line, *next;
    unsigned lineno = 1;
    int rc;

    memset(out, 0, sizeof *out);
    if ((rc = read_users_file(path, &buf, err)))
        return rc;
    for (line = buf; line && !rc; line = next, lineno++) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        rc = user_line(out, path, lineno, line, err);
    }
    free(buf);
    return rc;
}

const srv_user *srv_users_by_token(const srv_users *u, const char *tok,
                                   size_t len)
{
    char h[SHA256_HEX_LEN + 1];
    const srv_user *hit = NULL;
    size_t i;

    sha256_hex(tok, len, h);
    for (i = 0; i < u->n; i++) /* no early exit: every hash is compared */
        if (srv_secret_eq(h, SHA256_HEX_LEN, u->u[i].hash, SHA256_HEX_LEN))
            hit = &u->u[i];
    explicit_bzero(h, sizeof h);
    return len >= SRV_TOKEN_MIN ? hit : NULL;
}

const srv_user *srv_users_by_name(const srv_users *u, const char *name)
{
    size_t i;

    for (i = 0; name && i < u->n; i++)
        if (!strcmp(u->u[i].name, name))
            return &u->u[i];
    return NULL;
}

/* ---- trusted proxies -------------------------------------------------------------------- */

int srv_cidr_parse(const char *text, srv_cidr *out, op_error *err)
{
    char host[64];
    const char *slash = text ? strchr(text, '/') : NULL;
    size_t hl = slash ? (size_t)(slash - text) : (text ? strlen(text) : 0);
    unsigned long bits;
    char *end;

    memset(out, 0, sizeof *out);
    if (!text || !hl || hl >= sizeof host)
        goto bad;
    memcpy(host, text, hl);
    host[hl] = '\0';
    if (inet_pton(AF_INET, host, out->addr) == 1)
        out->bits = 32;
    else if (inet_pton(AF_INET6, host, out->addr) == 1)
        out->v6 = 1, out->bits = 128;
    else
        goto bad;
    if (slash) {
        errno = 0;
        bits = strtoul(slash + 1, &end, 10);
        if (!slash[1] || *end || errno || bits > out->bits || slash[1] == '-' ||
            slash[1] == '+')
            goto bad;
        out->bits = (unsigned)bits;
    }
    return 0;
bad:
    return op_error_set(err, OP_EUSAGE, "--trusted-proxy %.100s: give a "
                        "numeric address or ADDR/BITS (127.0.0.1, "
                        "10.0.0.0/8, ::1, fd00::/8)", text ? text : "");
}

static int prefix_eq(const unsigned char *a, const unsigned char *b,
                     unsigned bits)
{
    unsigned full = bits / 8, rest = bits % 8;

    if (memcmp(a, b, full) != 0)
        return 0;
    return !rest || ((a[full] ^ b[full]) & (0xff << (8 - rest)) & 0xff) == 0;
}

int srv_cidr_match(const srv_cidr *c, const struct sockaddr *sa)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0,
                                             0, 0, 0, 0, 0xff, 0xff};
    const unsigned char *a;

    if (!sa)
        return 0;
    if (sa->sa_family == AF_INET) {
        a = (const unsigned char *)&((const struct sockaddr_in *)sa)->sin_addr;
        return !c->v6 && prefix_eq(a, c->addr, c->bits);
    }
    if (sa->sa_family != AF_INET6)
        return 0;
    a = (const unsigned char *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
    if (c->v6)
        return prefix_eq(a, c->addr, c->bits);
    return !memcmp(a, mapped, 12) && prefix_eq(a + 12, c->addr, c->bits);
}

/* ---- what serve.c loads ------------------------------------------------------------------- */

int srv_access_load(const serve_opts *o, srv_access **out, op_error *err)
{
    srv_access *a;
    size_t i;
    int rc = 0, role = SRV_ROLE_READ;

    *out = NULL;
    if (!o->users_file && !o->auth_header && !o->ntrusted_proxies &&
        !o->proxy_role)
        return 0;
    if (!o->auth_header != !o->ntrusted_proxies)
        return op_error_set(err, OP_EUSAGE, "--auth-header and "
                            "--trusted-proxy go together: the header is "
                            "believed only from those addresses");
    if (o->proxy_role && (role = srv_role_parse(o->proxy_role)) < 0)
        return op_error_set(err, OP_EUSAGE, "--proxy-role %.40s: read, upload, "
                            "decide, admin or none", o->proxy_role);
    if (o->auth_header && (!*o->auth_header ||
                           strcspn(o->auth_header, " \t\r\n:") !=
                               strlen(o->auth_header)))
        return op_error_set(err, OP_EUSAGE, "--auth-header '%.60s': a header "
                            "name, like X-Forwarded-User", o->auth_header);
    if (!(a = calloc(1, sizeof *a)))
        return op_error_set(err, OP_ENOMEM, "out of memory (users)");
    a->auth_header = o->auth_header;
    a->proxy_role = (srv_role)role;
    for (i = 0; !rc && i < o->ntrusted_proxies; i++)
        rc = srv_cidr_parse(o->trusted_proxies[i], &a->proxies[a->nproxies++],
                            err);
    if (!rc && o->users_file)
        rc = srv_users_load(o->users_file, &a->users, err);
    if (rc) {
        srv_access_free(a);
        return rc;
    }
    *out = a;
    return 0;
}

void srv_access_free(srv_access *a)
{
    if (a)
        explicit_bzero(a, sizeof *a);
    free(a);
}

/* ---- serve user add ------------------------------------------------------------------------- */

/* Appends line to path (created 0600 when missing) in one write, after a
 * newline when the file's last line has none. */
static int append_line(const char *path, const char *line, op_error *err)
{
    char buf[SRV_USER_MAX + SHA256_HEX_LEN + 48], last = '\n';
    int fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    struct stat st;
    size_t n;
    ssize_t w;

    if (fd < 0)
        return op_error_set(err, OP_EIO, "%s: %s", path, strerror(errno));
    if (fstat(fd, &st) == 0 && st.st_size > 0 &&
        pread(fd, &last, 1, st.st_size - 1) != 1)
        last = '\n';
    snprintf(buf, sizeof buf, "%s%s", last == '\n' ? "" : "\n", line);
    n = strlen(buf);
    w = write(fd, buf, n);
    if (w != (ssize_t)n || fsync(fd) != 0) {
        int e = w < 0 ? errno : EIO;
        close(fd);
        return op_error_set(err, OP_EIO, "%s: %s", path, strerror(e));
    }
    return close(fd) ? op_error_set(err, OP_EIO, "%s: %s", path,
                                    strerror(errno)) : 0;
}

static int user_add(const char *path, const char *name, const char *role,
                    FILE *out, op_error *err)
{
    static srv_users u; /* large: not on the stack (one command at a time) */
    char tok[SRV_SESSION_LEN + 1], line[SRV_USER_MAX + SHA256_HEX_LEN + 40];
    char h[SHA256_HEX_LEN + 1];
    int rc, r = srv_role_parse(role);

    if (!path)
        return op_error_set(err, OP_EUSAGE, "serve user add needs --users FILE");
    if (!srv_user_name_ok(name))
        return op_error_set(err, OP_EUSAGE, "'%.80s' is not a user name (1 to "
                            "%d of A-Z a-z 0-9 . _ @ + -; not token, browser "
                            "or local)", name ? name : "", SRV_USER_MAX);
    if (r <= SRV_ROLE_NONE)
        return op_error_set(err, OP_EUSAGE, "--role %.40s: read, upload, "
                            "decide or admin", role ? role : "(none)");
    rc = srv_users_load(path, &u, err);
    if (rc == OP_ENOTFOUND)
        memset(&u, 0, sizeof u);
    else if (rc)
        return rc;
    if (srv_users_by_name(&u, name))
        return op_error_set(err, OP_EUSAGE, "%s: user '%s' is there already "
                            "(remove its line to give it a new token)", path,
                            name);
    if (u.n >= SRV_USERS_MAX)
        return op_error_set(err, OP_ELIMIT, "%s: it has %d users already",
                            path, SRV_USERS_MAX);
    if (srv_random_hex(tok, SRV_SESSION_LEN / 2))
        return op_error_set(err, OP_EIO, "no randomness for a token");
    sha256_hex(tok, strlen(tok), h);
    snprintf(line, sizeof line, "%s %s sha256:%s\n", name, srv_role_name(r), h);
    if (!(rc = append_line(path, line, err))) {
        fprintf(out, "%s\n", tok);
        diag_msg(DIAG_NOTE, "%s: added %s (%s); the token above is shown "
                 "this once: give it to %s", path, name, srv_role_name(r),
                 name);
    }
    explicit_bzero(tok, sizeof tok);
    return rc;
}

int serve_user_add(const char *users_file, const char *name, const char *role,
                   FILE *out)
{
    op_error err;
    int rc;

    op_error_clear(&err);
    if (!(rc = user_add(users_file, name, role, out, &err)))
        return fflush(out) == 0 ? 0 : 3;
    diag_msg(DIAG_ERROR, "%s", err.msg);
    return rc == OP_EUSAGE || rc == OP_ELIMIT ? 2 : 3;
}

/* ---- GET /api/v1/me, GET /api/v1/users ------------------------------------------------------ */

static const char *auth_name(srv_auth a)
{
    return a == SRV_AUTH_TOKEN    ? "token"
           : a == SRV_AUTH_COOKIE ? "session"
           : a == SRV_AUTH_PROXY  ? "proxy"
                                  : "none";
}

int srv_api_me(const srv_req *r, srv_resp *w)
{
    jw j;

    w->status = 200;
    w->type = "application/json";
    jw_init(&j, w->f, 1);
    jw_obj(&j);
    jw_key(&j, "user");
    jw_str(&j, r->user);
    jw_key(&j, "role");
    jw_str(&j, srv_role_name(r->role));
    jw_key(&j, "auth");
    jw_str(&j, auth_name(r->auth));
    jw_key(&j, "decided_by");
    jw_str(&j, srv_who(r));
    jw_obj_end(&j);
    fputc('\n', w->f);
    return 0;
}

int srv_api_users(const srv_req *r, srv_resp *w)
{
    const srv_access *a = r->s->access;
    size_t i;
    jw j;

    w->status = 200;
    w->type = "application/json";
    jw_init(&j, w->f, 1);
    jw_obj(&j);
    jw_key(&j, "users");
    jw_arr(&j);
    for (i = 0; a && i < a->users.n; i++) {
        jw_obj(&j);
        jw_key(&j, "name");
        jw_str(&j, a->users.u[i].name);
        jw_key(&j, "role");
        jw_str(&j, srv_role_name(a->users.u[i].role));
        jw_obj_end(&j);
    }
    jw_arr_end(&j);
    jw_key(&j, "proxy_role");
    jw_str(&j, a && a->auth_header ? srv_role_name(a->proxy_role) : NULL);
    jw_obj_end(&j);
    fputc('\n', w->f);
    return 0;
}
