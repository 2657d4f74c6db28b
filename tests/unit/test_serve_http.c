/*
 * test_serve_http.c - the pure pieces of the server's HTTP core
 * (serve/serve_http.c): the --listen address, path segments and their
 * decoding, cookies, token comparison and the token file, the CSRF check,
 * and file names for Content-Disposition.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "serve_http.h"
#include "support.h"

static void test_listen(void **state)
{
    srv_listen l;
    op_error err;

    assert_int_equal(srv_parse_listen("127.0.0.1:8080", &l, &err), 0);
    assert_true(l.loopback);
    assert_int_equal(l.port, 8080);
    assert_string_equal(l.host, "127.0.0.1");
    assert_int_equal(srv_parse_listen("127.8.9.1:0", &l, &err), 0);
    assert_true(l.loopback);
    assert_int_equal(l.port, 0);
    assert_int_equal(srv_parse_listen("0.0.0.0:80", &l, &err), 0);
    assert_false(l.loopback);
    assert_int_equal(srv_parse_listen("[::1]:9000", &l, &err), 0);
    assert_true(l.loopback && l.v6);
    assert_string_equal(l.host, "[::1]");
    assert_int_equal(srv_parse_listen("[::]:9000", &l, &err), 0);
    assert_false(l.loopback);
    assert_int_equal(srv_parse_listen("[2001:db8::1]:1", &l, &err), 0);
    assert_false(l.loopback);
    /* refused: names, missing or bad ports, unbracketed v6 */
    assert_int_equal(srv_parse_listen("localhost:8080", &l, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "numeric"));
    assert_int_equal(srv_parse_listen("127.0.0.1", &l, &err), OP_EUSAGE);
    assert_int_equal(srv_parse_listen("127.0.0.1:", &l, &err), OP_EUSAGE);
    assert_int_equal(srv_parse_listen("127.0.0.1:65536", &l, &err), OP_EUSAGE);
    assert_int_equal(srv_parse_listen("127.0.0.1:-1", &l, &err), OP_EUSAGE);
    assert_int_equal(srv_parse_listen("127.0.0.1:80x", &l, &err), OP_EUSAGE);
    assert_int_equal(srv_parse_listen("::1:80", &l, &err), OP_EUSAGE);
    assert_int_equal(srv_parse_listen("[::1]80", &l, &err), OP_EUSAGE);
    assert_int_equal(srv_parse_listen("", &l, &err), OP_EUSAGE);
}

static void test_origin(void **state)
{
    char host[64];
    op_error err;

    assert_int_equal(srv_parse_origin("https://op.example.com", host,
                                      sizeof host, &err), 0);
    assert_string_equal(host, "op.example.com");
    assert_int_equal(srv_parse_origin("http://op.example.com:8443", host,
                                      sizeof host, &err), 0);
    assert_string_equal(host, "op.example.com:8443");
    assert_int_equal(srv_parse_origin("https://op.example.com/", host,
                                      sizeof host, &err), OP_EUSAGE);
    assert_int_equal(srv_parse_origin("op.example.com", host, sizeof host,
                                      &err), OP_EUSAGE);
    assert_int_equal(srv_parse_origin("https://", host, sizeof host, &err),
                     OP_EUSAGE);
    assert_int_equal(srv_parse_origin("https://u@h", host, sizeof host, &err),
                     OP_EUSAGE);
    assert_int_equal(srv_parse_origin(NULL, host, sizeof host, &err), OP_EUSAGE);
}

static void test_decode(void **state)
{
    char out[16];

    assert_int_equal(srv_pct_decode("a%2Fb", 5, 0, 0, out, sizeof out), 3);
    assert_string_equal(out, "a/b");
    assert_int_equal(srv_pct_decode("a%2fb", 5, 0, 1, out, sizeof out), -1);
    assert_int_equal(srv_pct_decode("a+b", 3, 1, 0, out, sizeof out), 3);
    assert_string_equal(out, "a b");
    assert_int_equal(srv_pct_decode("a+b", 3, 0, 0, out, sizeof out), 3);
    assert_string_equal(out, "a+b");
    assert_int_equal(srv_pct_decode("%00", 3, 0, 0, out, sizeof out), -1);
    assert_int_equal(srv_pct_decode("%4", 2, 0, 0, out, sizeof out), -1);
    assert_int_equal(srv_pct_decode("%", 1, 0, 0, out, sizeof out), -1);
    assert_int_equal(srv_pct_decode("%zz", 3, 0, 0, out, sizeof out), -1);
    /* a cut escape at the end of the counted bytes is cut, even when the
     * string goes on */
    assert_int_equal(srv_pct_decode("%41%4142", 4, 0, 0, out, sizeof out), -1);
    assert_int_equal(srv_pct_decode("0123456789abcdef", 16, 0, 0, out,
                                     sizeof out), -1); /* no room for NUL */
    assert_int_equal(srv_pct_decode("0123456789abcde", 15, 0, 0, out,
                                     sizeof out), 15);
}

static void test_route_match(void **state)
{
    static char p[SRV_MAX_PARAMS][SRV_SEGMENT_MAX + 1];
    char big[SRV_SEGMENT_MAX * 3 + 32];
    size_t n;

    assert_int_equal(srv_route_match("/healthz", "/healthz", p, &n), 1);
    assert_int_equal(n, 0);
    assert_int_equal(srv_route_match("/healthz", "/healthz/", p, &n), 0);
    assert_int_equal(srv_route_match("/healthz", "/health", p, &n), 0);
    assert_int_equal(srv_route_match("/", "/", p, &n), 1);
    assert_int_equal(srv_route_match("/", "/x", p, &n), 0);
    assert_int_equal(srv_route_match("/x", "/", p, &n), 0);
    assert_int_equal(srv_route_match("/a/{id}", "/a/0123", p, &n), 1);
    assert_int_equal(n, 1);
    assert_string_equal(p[0], "0123");
    /* a job key with '/' travels as %2F: one segment, decoded */
    assert_int_equal(srv_route_match("/api/v1/jobs/{job}/runs",
                                     "/api/v1/jobs/dbt%2Fshop%20x/runs", p, &n), 1);
    assert_string_equal(p[0], "dbt/shop x");
    assert_int_equal(srv_route_match("/api/v1/jobs/{job}/runs",
                                     "/api/v1/jobs/dbt/shop/runs", p, &n), 0);
    assert_int_equal(srv_route_match("/a/{x}/{y}", "/a/1/2", p, &n), 1);
    assert_int_equal(n, 2);
    assert_string_equal(p[1], "2");
    assert_int_equal(srv_route_match("/a/{x}", "/a/", p, &n), 0); /* empty */
    assert_int_equal(srv_route_match("/a/{x}", "/a/%00", p, &n), -1);
    assert_int_equal(srv_route_match("/a/{x}", "/a/%zz", p, &n), -1);
    /* literal segments compare decoded */
    assert_int_equal(srv_route_match("/healthz", "/heal%74hz", p, &n), 1);
    /* a segment longer than SRV_SEGMENT_MAX is not valid */
    strcpy(big, "/a/");
    memset(big + 3, 'x', SRV_SEGMENT_MAX + 1);
    big[3 + SRV_SEGMENT_MAX + 1] = '\0';
    assert_int_equal(srv_route_match("/a/{x}", big, p, &n), -1);
    big[3 + SRV_SEGMENT_MAX] = '\0';
    assert_int_equal(srv_route_match("/a/{x}", big, p, &n), 1);
    assert_int_equal(strlen(p[0]), SRV_SEGMENT_MAX);
}

static void test_cookie(void **state)
{
    char v[32];

    assert_true(srv_cookie_get("a=1; op_csrf=abc; b=2", "op_csrf", v, sizeof v));
    assert_string_equal(v, "abc");
    assert_true(srv_cookie_get("op_csrf=x", "op_csrf", v, sizeof v));
    assert_string_equal(v, "x");
    assert_true(srv_cookie_get("x=\"q\";y=2", "x", v, sizeof v));
    assert_string_equal(v, "q");
    assert_true(srv_cookie_get("x=", "x", v, sizeof v));
    assert_string_equal(v, "");
    assert_false(srv_cookie_get("my_op_csrf=1", "op_csrf", v, sizeof v));
    assert_false(srv_cookie_get("op_csrfx=1", "op_csrf", v, sizeof v));
    assert_false(srv_cookie_get("", "a", v, sizeof v));
    assert_false(srv_cookie_get("a", "a", v, sizeof v));
    assert_false(srv_cookie_get("a=0123456789012345678901234567890123", "a",
                                v, sizeof v)); /* too long: absent */
}

static void test_secret_eq(void **state)
{
    assert_true(srv_secret_eq("abc", 3, "abc", 3));
    assert_false(srv_secret_eq("abd", 3, "abc", 3));
    assert_false(srv_secret_eq("ab", 2, "abc", 3));
    assert_false(srv_secret_eq("abcd", 4, "abc", 3));
    assert_false(srv_secret_eq("", 0, "abc", 3));
    assert_true(srv_secret_eq("", 0, "", 0));
}

static void test_csrf(void **state)
{
    char a[SRV_CSRF_LEN + 1], b[SRV_CSRF_LEN + 1];

    assert_int_equal(srv_random_hex(a, SRV_CSRF_LEN / 2), 0);
    assert_int_equal(strlen(a), SRV_CSRF_LEN);
    assert_int_equal(srv_random_hex(b, SRV_CSRF_LEN / 2), 0);
    assert_string_not_equal(a, b);
    assert_true(srv_csrf_ok(a, a));
    assert_false(srv_csrf_ok(a, b));
    assert_false(srv_csrf_ok(a, NULL));
    assert_false(srv_csrf_ok(NULL, a));
    assert_false(srv_csrf_ok("", ""));
    assert_false(srv_csrf_ok("abc", "abc")); /* not a token of ours */
    memset(b, 'G', SRV_CSRF_LEN);
    b[SRV_CSRF_LEN] = '\0';
    assert_false(srv_csrf_ok(b, b));
}

static void test_sanitize(void **state)
{
    char out[SRV_NAME_MAX + 1], big[400];

    srv_sanitize_name("report.json", out);
    assert_string_equal(out, "report.json");
    srv_sanitize_name("../../etc/passwd", out);
    assert_string_equal(out, "_._.._etc_passwd");
    srv_sanitize_name(".hidden", out);
    assert_string_equal(out, "_hidden");
    srv_sanitize_name("a\"b\r\nc;d", out);
    assert_string_equal(out, "a_b__c_d");
    srv_sanitize_name("", out);
    assert_string_equal(out, "download");
    srv_sanitize_name(NULL, out);
    assert_string_equal(out, "download");
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    srv_sanitize_name(big, out);
    assert_int_equal(strlen(out), SRV_NAME_MAX);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    chmod(path, mode);
}

static void test_tokens(void **state)
{
    char path[128];
    srv_tokens t;
    op_error err;

    snprintf(path, sizeof path, "%s/tokens", tm_tmpdir);
    write_file(path, "# the CI token\n\n  abcdefghijklmnop  \r\n"
                     "0123456789abcdef0123\n", 0600);
    assert_int_equal(srv_tokens_load(path, &t, &err), 0);
    assert_int_equal(t.n, 2);
    assert_true(srv_tokens_check(&t, "abcdefghijklmnop", 16));
    assert_true(srv_tokens_check(&t, "0123456789abcdef0123", 20));
    assert_false(srv_tokens_check(&t, "abcdefghijklmno", 15));
    assert_false(srv_tokens_check(&t, "abcdefghijklmnopq", 17));
    assert_false(srv_tokens_check(&t, "", 0));
    /* group- or world-readable: refused, saying what to do */
    chmod(path, 0640);
    assert_int_equal(srv_tokens_load(path, &t, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "chmod 600"));
    /* a short token names its line */
    write_file(path, "# x\nshort\n", 0600);
    assert_int_equal(srv_tokens_load(path, &t, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, ":2:"));
    write_file(path, "abcdefgh ijklmnopq\n", 0600);
    assert_int_equal(srv_tokens_load(path, &t, &err), OP_EUSAGE);
    write_file(path, "# only comments\n\n", 0600);
    assert_int_equal(srv_tokens_load(path, &t, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "no token"));
    snprintf(path, sizeof path, "%s/absent", tm_tmpdir);
    assert_int_equal(srv_tokens_load(path, &t, &err), OP_EIO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listen),   cmocka_unit_test(test_origin),
        cmocka_unit_test(test_decode),
        cmocka_unit_test(test_route_match), cmocka_unit_test(test_cookie),
        cmocka_unit_test(test_secret_eq), cmocka_unit_test(test_csrf),
        cmocka_unit_test(test_sanitize), cmocka_unit_test(test_tokens),
    };
    return cmocka_run_group_tests(tests, tm_tmpdir_setup, tm_tmpdir_teardown);
}
