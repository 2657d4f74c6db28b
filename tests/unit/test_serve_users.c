/*
 * test_serve_users.c - users and roles of the server (serve/serve_users.c,
 * serve/serve_roles.c): every route of srv_route_tables has a row in the
 * role table and every row a route (a new route must say who may use it);
 * the role order; the users file (good lines, each bad line named, a file
 * others may write refused) and finding a user by token hash or name;
 * `serve user add` (the token printed once, its hash stored, a taken name
 * refused); --trusted-proxy CIDRs for IPv4, IPv6 and v4-mapped peers; the
 * options that go together; sessions knowing their user and role.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "serve_http.h"
#include "sha256.h"
#include "support.h"

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

/* Every route has its least role, and the table names no route that is
 * not served (a stale row). */
static void test_route_roles(void **state)
{
    size_t t, i, n = 0;

    (void)state;
    for (t = 0; srv_route_tables[t]; t++)
        for (i = 0; srv_route_tables[t][i].method; i++) {
            const srv_route *rt = &srv_route_tables[t][i];
            srv_route fake = *rt;
            srv_role want = srv_route_role(rt);
            n++;
            /* a route not in the table needs admin: tell them apart */
            fake.pattern = "/not/in/the/table";
            assert_int_equal(srv_route_role(&fake), SRV_ROLE_ADMIN);
            if (rt->flags & SRV_PUBLIC) {
                assert_int_equal(want, SRV_ROLE_NONE);
                continue;
            }
            if (want == SRV_ROLE_ADMIN && strcmp(rt->pattern, "/api/v1/users")) {
                print_error("route %s %s has no row in serve_roles.c\n",
                            rt->method, rt->pattern);
                fail();
            }
            assert_true(want >= SRV_ROLE_READ);
            if (!strcmp(rt->method, "POST") && strcmp(rt->pattern, "/logout"))
                assert_true(want >= SRV_ROLE_UPLOAD); /* a change: never read */
        }
    assert_true(n >= 30);
    assert_int_equal(srv_role_parse("decide"), SRV_ROLE_DECIDE);
    assert_int_equal(srv_role_parse("root"), -1);
    assert_string_equal(srv_role_name(SRV_ROLE_UPLOAD), "upload");
    assert_true(SRV_ROLE_READ < SRV_ROLE_UPLOAD && SRV_ROLE_UPLOAD < SRV_ROLE_DECIDE &&
                SRV_ROLE_DECIDE < SRV_ROLE_ADMIN);
}

static void test_users_file(void **state)
{
    static srv_users u;
    char path[256], line[512], h[SHA256_HEX_LEN + 1];
    op_error err;

    (void)state;
    snprintf(path, sizeof path, "%s/users", tm_tmpdir);
    sha256_hex("alice-token-0123456789", 22, h);
    snprintf(line, sizeof line, "# people\n\nalice decide sha256:%s\n"
             "bob\tread  sha256:%s \r\n", h,
             "0000000000000000000000000000000000000000000000000000000000000000");
    write_file(path, line, 0640); /* others may read: a hash is no secret */
    assert_int_equal(srv_users_load(path, &u, &err), 0);
    assert_int_equal(u.n, 2);
    assert_string_equal(srv_users_by_token(&u, "alice-token-0123456789", 22)->name,
                        "alice");
    assert_int_equal(srv_users_by_token(&u, "alice-token-0123456789", 22)->role,
                     SRV_ROLE_DECIDE);
    assert_null(srv_users_by_token(&u, "alice-token-012345678", 21));
    assert_null(srv_users_by_token(&u, "", 0));
    assert_int_equal(srv_users_by_name(&u, "bob")->role, SRV_ROLE_READ);
    assert_null(srv_users_by_name(&u, "carol"));
    /* each bad line named */
    write_file(path, "alice decide\n", 0600);
    assert_int_equal(srv_users_load(path, &u, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, ":1: a user is"));
    write_file(path, "# x\nal/ice read sha256:00\n", 0600);
    assert_int_equal(srv_users_load(path, &u, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, ":2: 'al/ice' is not a user name"));
    snprintf(line, sizeof line, "alice boss sha256:%s\n", h);
    write_file(path, line, 0600);
    assert_int_equal(srv_users_load(path, &u, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "role 'boss'"));
    snprintf(line, sizeof line, "token read sha256:%s\n", h);
    write_file(path, line, 0600);
    assert_int_equal(srv_users_load(path, &u, &err), OP_EUSAGE); /* legacy name */
    write_file(path, "alice read sha256:ABC\n", 0600);
    assert_int_equal(srv_users_load(path, &u, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "64 lowercase hex"));
    snprintf(line, sizeof line, "alice read sha256:%s\nalice admin sha256:%s\n",
             h, h);
    write_file(path, line, 0600);
    assert_int_equal(srv_users_load(path, &u, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, ":2: user 'alice' is there twice"));
    snprintf(line, sizeof line, "alice read sha256:%s\n", h);
    write_file(path, line, 0666);
    assert_int_equal(srv_users_load(path, &u, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "others may write"));
    snprintf(path, sizeof path, "%s/absent-users", tm_tmpdir);
    assert_int_equal(srv_users_load(path, &u, &err), OP_ENOTFOUND);
}

static void test_user_add(void **state)
{
    static srv_users u;
    char path[256], out[256], tok[128];
    op_error err;
    struct stat st;
    FILE *f, *f2;

    (void)state;
    snprintf(path, sizeof path, "%s/added", tm_tmpdir);
    snprintf(out, sizeof out, "%s/added.out", tm_tmpdir);
    remove(path);
    f = fopen(out, "w+");
    assert_non_null(f);
    assert_int_equal(serve_user_add(path, "carol@example.com", "upload", f), 0);
    rewind(f);
    assert_non_null(fgets(tok, sizeof tok, f));
    fclose(f);
    tok[strcspn(tok, "\n")] = '\0';
    assert_int_equal(strlen(tok), 64);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(srv_users_load(path, &u, &err), 0);
    assert_int_equal(u.n, 1);
    assert_int_equal(srv_users_by_token(&u, tok, strlen(tok))->role,
                     SRV_ROLE_UPLOAD);
    f = fopen(out, "w");
    assert_int_equal(serve_user_add(path, "carol@example.com", "read", f), 2);
    assert_int_equal(serve_user_add(path, "dave", "boss", f), 2);
    assert_int_equal(serve_user_add(path, "-dave", "read", f), 2);
    assert_int_equal(serve_user_add(path, "dave", "read", f), 0);
    /* a hand-edited file whose last line has no newline */
    f2 = fopen(path, "a");
    fputs("# edited by hand", f2);
    fclose(f2);
    assert_int_equal(serve_user_add(path, "erin", "admin", f), 0);
    fclose(f);
    assert_int_equal(srv_users_load(path, &u, &err), 0);
    assert_int_equal(u.n, 3);
    assert_int_equal(srv_users_by_name(&u, "erin")->role, SRV_ROLE_ADMIN);
}

static void addr4(struct sockaddr_in *a, const char *ip)
{
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, ip, &a->sin_addr), 1);
}

static void addr6(struct sockaddr_in6 *a, const char *ip)
{
    memset(a, 0, sizeof *a);
    a->sin6_family = AF_INET6;
    assert_int_equal(inet_pton(AF_INET6, ip, &a->sin6_addr), 1);
}

static void test_cidr(void **state)
{
    srv_cidr c;
    struct sockaddr_in a;
    struct sockaddr_in6 b;
    op_error err;

    (void)state;
    assert_int_equal(srv_cidr_parse("127.0.0.2", &c, &err), 0);
    addr4(&a, "127.0.0.2");
    assert_true(srv_cidr_match(&c, (struct sockaddr *)&a));
    addr4(&a, "127.0.0.1");
    assert_false(srv_cidr_match(&c, (struct sockaddr *)&a));
    addr6(&b, "::ffff:127.0.0.2");
    assert_true(srv_cidr_match(&c, (struct sockaddr *)&b));
    addr6(&b, "::1");
    assert_false(srv_cidr_match(&c, (struct sockaddr *)&b));
    assert_int_equal(srv_cidr_parse("10.0.0.0/8", &c, &err), 0);
    addr4(&a, "10.200.3.4");
    assert_true(srv_cidr_match(&c, (struct sockaddr *)&a));
    addr4(&a, "11.0.0.1");
    assert_false(srv_cidr_match(&c, (struct sockaddr *)&a));
    assert_int_equal(srv_cidr_parse("172.16.0.0/12", &c, &err), 0);
    addr4(&a, "172.31.255.255");
    assert_true(srv_cidr_match(&c, (struct sockaddr *)&a));
    addr4(&a, "172.32.0.0");
    assert_false(srv_cidr_match(&c, (struct sockaddr *)&a));
    assert_int_equal(srv_cidr_parse("fd00::/8", &c, &err), 0);
    addr6(&b, "fd12::1");
    assert_true(srv_cidr_match(&c, (struct sockaddr *)&b));
    addr6(&b, "fe80::1");
    assert_false(srv_cidr_match(&c, (struct sockaddr *)&b));
    assert_int_equal(srv_cidr_parse("0.0.0.0/0", &c, &err), 0);
    addr4(&a, "8.8.8.8");
    assert_true(srv_cidr_match(&c, (struct sockaddr *)&a));
    assert_int_equal(srv_cidr_parse("10.0.0.0/33", &c, &err), OP_EUSAGE);
    assert_int_equal(srv_cidr_parse("localhost", &c, &err), OP_EUSAGE);
    assert_int_equal(srv_cidr_parse("10.0.0.0/", &c, &err), OP_EUSAGE);
    assert_int_equal(srv_cidr_parse("", &c, &err), OP_EUSAGE);
    assert_null(strstr(err.msg, "(null)"));
}

static void test_access_options(void **state)
{
    static const char *proxies[] = {"127.0.0.2"};
    serve_opts o;
    srv_access *a;
    op_error err;

    (void)state;
    serve_opts_default(&o);
    assert_int_equal(srv_access_load(&o, &a, &err), 0);
    assert_null(a); /* nothing asked: the server of before */
    o.auth_header = "X-Forwarded-User";
    assert_int_equal(srv_access_load(&o, &a, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "go together"));
    o.trusted_proxies = proxies;
    o.ntrusted_proxies = 1;
    o.proxy_role = "boss";
    assert_int_equal(srv_access_load(&o, &a, &err), OP_EUSAGE);
    o.proxy_role = "none";
    assert_int_equal(srv_access_load(&o, &a, &err), 0);
    assert_non_null(a);
    assert_int_equal(a->proxy_role, SRV_ROLE_NONE);
    assert_int_equal(a->nproxies, 1);
    srv_access_free(a);
    o.auth_header = "X Bad";
    assert_int_equal(srv_access_load(&o, &a, &err), OP_EUSAGE);
}

static void test_sessions(void **state)
{
    static srv_sessions ss;
    char id[SRV_SESSION_LEN + 1], id2[SRV_SESSION_LEN + 1];
    char user[SRV_USER_MAX + 1];
    srv_role role = SRV_ROLE_NONE;

    (void)state;
    assert_int_equal(srv_sessions_init(&ss), 0);
    assert_int_equal(srv_session_open(&ss, id, "alice", SRV_ROLE_DECIDE), 0);
    assert_int_equal(srv_session_new(&ss, id2), 0);
    assert_true(srv_session_get(&ss, id, user, &role));
    assert_string_equal(user, "alice");
    assert_int_equal(role, SRV_ROLE_DECIDE);
    assert_true(srv_session_get(&ss, id2, user, &role));
    assert_string_equal(user, "");
    assert_int_equal(role, SRV_ROLE_ADMIN);
    srv_session_end(&ss, id);
    assert_false(srv_session_get(&ss, id, user, &role));
    srv_sessions_destroy(&ss);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_route_roles),
        cmocka_unit_test(test_users_file),
        cmocka_unit_test(test_user_add),
        cmocka_unit_test(test_cidr),
        cmocka_unit_test(test_access_options),
        cmocka_unit_test(test_sessions),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
