/*
 * test_serve_multipart.c - the streaming multipart/form-data parser
 * (serve/serve_multipart.c): every body is fed whole, a byte at a time, cut
 * at every position into two feeds and at random positions, and must give
 * the same parts, data and error (byte offset included) each time; the
 * boundary forms of a Content-Type, every error case and the limits at
 * their edge.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_multipart.h"
#include "support.h"

/* ---- a recorder: parts and data as one string ---------------------------- */

typedef struct rec {
    dbuf out;
    int fail_at_begin; /* the n-th begin fails (1-based); 0 never */
    int begins;
} rec;

static int r_begin(void *ud, const mp_part *p, op_error *err)
{
    rec *r = ud;
    char line[MP_HEADER_MAX * 2];

    if (++r->begins == r->fail_at_begin)
        return op_error_set(err, OP_ELIMIT, "test: no more parts");
    snprintf(line, sizeof line, "[%s|%s|%s@%llu]", p->name,
             p->filename ? p->filename : "-",
             p->content_type ? p->content_type : "-",
             (unsigned long long)p->offset);
    db_add(&r->out, line, strlen(line));
    return 0;
}

static int r_data(void *ud, const char *buf, size_t len, op_error *err)
{
    rec *r = ud;

    (void)err;
    assert_true(len > 0);
    db_add(&r->out, buf, len);
    return 0;
}

static int r_end(void *ud, op_error *err)
{
    rec *r = ud;

    (void)err;
    db_add(&r->out, "[end]", 5);
    return 0;
}

static const mp_callbacks rcb = {r_begin, r_data, r_end};

/* Feeds body cut at the positions cuts[0..ncuts) (ascending); returns the
 * status of the first failing call (or of mp_finish) with the recording
 * in *got and the message in msg. */
static int run_cuts(const char *boundary, const char *body, size_t len,
                    const size_t *cuts, size_t ncuts, char **got,
                    char msg[OP_ERROR_MAX], int fail_at_begin)
{
    rec r = {{0}, fail_at_begin, 0};
    mp_parser *p = NULL;
    op_error err;
    size_t i, at = 0;
    int rc;

    op_error_clear(&err);
    assert_int_equal(mp_new(boundary, &rcb, &r, &p, &err), 0);
    rc = 0;
    for (i = 0; i <= ncuts && !rc; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        rc = mp_feed(p, body + at, end - at, &err);
        at = end;
    }
    if (!rc)
        rc = mp_finish(p, &err);
    else /* sticky: the same error again */
        assert_int_equal(mp_feed(p, "x", 1, NULL), rc);
    mp_free(p);
    db_add(&r.out, "", 0);
    *got = (char *)r.out.p;
    snprintf(msg, OP_ERROR_MAX, "%s", rc ? err.msg : "");
    return rc;
}

/* Runs body every way and checks each gives the same result; returns the
 * status, the recording (caller frees) and the message. */
static int run_all(const char *boundary, const char *body, size_t len,
                   char **got, char msg[OP_ERROR_MAX])
{
    char m2[OP_ERROR_MAX], *g2;
    size_t *cuts = malloc((len + 1) * sizeof *cuts), i, k;
    int rc = run_cuts(boundary, body, len, NULL, 0, got, msg, 0), rc2, round;

    assert_non_null(cuts);
    for (i = 0; i + 1 < len; i++) /* one byte at a time */
        cuts[i] = i + 1;
    rc2 = run_cuts(boundary, body, len, cuts, len ? len - 1 : 0, &g2, m2, 0);
    assert_int_equal(rc2, rc);
    assert_string_equal(g2, *got);
    assert_string_equal(m2, msg);
    free(g2);
    for (i = 0; i <= len; i++) { /* two feeds, cut at every position */
        cuts[0] = i;
        rc2 = run_cuts(boundary, body, len, cuts, 1, &g2, m2, 0);
        assert_int_equal(rc2, rc);
        assert_string_equal(g2, *got);
        assert_string_equal(m2, msg);
        free(g2);
    }
    srand(1234);
    for (round = 0; round < 50; round++) { /* random cuts */
        size_t n = 0;
        for (k = 0; k < len; k++)
            if (rand() % 7 == 0)
                cuts[n++] = k;
        rc2 = run_cuts(boundary, body, len, cuts, n, &g2, m2, 0);
        assert_int_equal(rc2, rc);
        assert_string_equal(g2, *got);
        assert_string_equal(m2, msg);
        free(g2);
    }
    free(cuts);
    return rc;
}

static void expect_ok(const char *boundary, const char *body, const char *want)
{
    char msg[OP_ERROR_MAX], *got;
    int rc = run_all(boundary, body, strlen(body), &got, msg);

    if (rc)
        fail_msg("unexpected error: %s", msg);
    assert_string_equal(got, want);
    free(got);
}

/* An error whose message contains needle, the same under every split. */
static void expect_err(const char *boundary, const char *body, size_t len,
                       int code, const char *needle)
{
    char msg[OP_ERROR_MAX], *got;
    int rc = run_all(boundary, body, len, &got, msg);

    free(got);
    if (rc != code || !strstr(msg, needle))
        fail_msg("want %d '%s', got %d '%s'", code, needle, rc, msg);
    assert_true(strncmp(msg, "multipart: byte ", 16) == 0);
}

#define CD "Content-Disposition: form-data; "

/* ---- well-formed bodies ------------------------------------------------------------ */

static void two_parts_with_preamble_and_epilogue(void **state)
{
    (void)state;
    expect_ok("XyZ",
              "preamble, ignored\r\n"
              "--XyZ\r\n" CD "name=\"csrf\"\r\n\r\n"
              "tok\r\n"
              "--XyZ\r\n" CD "name=\"file\"; filename=\"a.json\"\r\n"
              "Content-Type: application/json\r\n\r\n"
              "{\"a\":\r\n1}\r\n"
              "--XyZ--\r\nepilogue ignored\r\n--XyZ\r\n",
              "[csrf|-|-@26]tok[end][file|a.json|application/json@85]"
              "{\"a\":\r\n1}[end]");
}

static void near_boundaries_are_data(void **state)
{
    (void)state;
    /* CR, CRLF, CRLF-, CRLF--, CRLF--b, CRLF--bo: prefixes of the
     * delimiter inside the data, one running into a real one */
    expect_ok("bou",
              "--bou\r\n" CD "name=file\r\n\r\n"
              "\r\r\n\r\n-\r\n--\r\n--b\r\n--bo\r\nbou\r\r\n--bou\r\n"
              CD "name=\"x\"\r\n\r\n\r\n\r\n--bou--",
              "[file|-|-@7]\r\r\n\r\n-\r\n--\r\n--b\r\n--bo\r\nbou\r[end]"
              "[x|-|-@88]\r\n[end]");
}

static void empty_parts_and_no_parts(void **state)
{
    (void)state;
    expect_ok("b", "--b--", "");
    expect_ok("b", "--b\r\n" CD "name=a\r\n\r\n\r\n--b--\r\n",
              "[a|-|-@5][end]");
    /* blanks after a boundary (transport padding) */
    expect_ok("b", "--b \t\r\n" CD "name=a\r\n\r\nv\r\n--b--",
              "[a|-|-@7]v[end]");
}

static void header_forms(void **state)
{
    (void)state;
    /* escapes in quoted strings; a Windows path keeps its backslashes;
     * header names any case; unknown headers and parameters ignored */
    expect_ok("b",
              "--b\r\ncontent-disposition:FORM-DATA;NAME=\"a\\\"b\";"
              "filename=\"C:\\dir\\x \\\"y\\\".gz\";  size=3 \r\n"
              "X-Other: 1\r\ncontent-type:  text/csv \r\n\r\nd\r\n--b--",
              "[a\"b|C:\\dir\\x \"y\".gz|text/csv@5]d[end]");
    /* filename* (RFC 8187) wins over filename */
    expect_ok("b",
              "--b\r\n" CD "name=file; filename=\"plain.txt\"; "
              "filename*=UTF-8''%C3%A9t%c3%a9.json\r\n\r\nd\r\n--b--",
              "[file|\xc3\xa9t\xc3\xa9.json|-@5]d[end]");
}

static void boundary_from_content_type(void **state)
{
    char b[MP_BOUNDARY_MAX + 1], long_b[100];
    op_error err;

    (void)state;
    assert_int_equal(mp_boundary("multipart/form-data; boundary=abc", b, &err), 0);
    assert_string_equal(b, "abc");
    assert_int_equal(mp_boundary("multipart/form-data;charset=utf-8;BOUNDARY=\"a b:c\"", b,
                                 &err), 0);
    assert_string_equal(b, "a b:c");
    assert_int_equal(mp_boundary("multipart/form-data; x; boundary=q;y=z", b, &err), 0);
    assert_string_equal(b, "q");
    /* 70 is the most, 71 too many */
    memset(long_b, 'a', 70);
    snprintf(long_b + 70, sizeof long_b - 70, "%s", "");
    {
        char ct[200];
        snprintf(ct, sizeof ct, "multipart/form-data; boundary=%s", long_b);
        assert_int_equal(mp_boundary(ct, b, &err), 0);
        assert_int_equal(strlen(b), 70);
        snprintf(ct, sizeof ct, "multipart/form-data; boundary=%sa", long_b);
        assert_int_equal(mp_boundary(ct, b, &err), OP_EPARSE);
        assert_non_null(strstr(err.msg, "1 to 70"));
    }
    assert_int_equal(mp_boundary("multipart/form-data", b, &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "no boundary"));
    assert_int_equal(mp_boundary("multipart/form-data; boundary=", b, &err), OP_EPARSE);
    assert_int_equal(mp_boundary("multipart/form-data; boundary=\"a\r\"", b, &err),
                     OP_EPARSE);
    assert_int_equal(mp_boundary("multipart/form-data; boundary=\"ab \"", b, &err),
                     OP_EPARSE);
    assert_int_equal(mp_boundary("multipart/form-data; boundary=\"ab", b, &err),
                     OP_EPARSE);
    assert_int_equal(mp_boundary("multipart/form-data; boundary=a; boundary=b", b, &err),
                     OP_EPARSE);
    assert_int_equal(mp_boundary(NULL, b, &err), OP_EPARSE);
}

/* ---- errors ---------------------------------------------------------------------- */

static void cut_bodies(void **state)
{
    const char *part = "--b\r\n" CD "name=a\r\n\r\ndata";

    (void)state;
    expect_err("b", part, strlen(part), OP_EPARSE,
               "byte 51: the body ends inside part 'a', before the final");
    expect_err("b", "", 0, OP_EPARSE, "byte 0: the body ends before the first");
    expect_err("b", "--b\r\n" CD "name=a\r\n", 28, OP_EPARSE,
               "before the final boundary");
    expect_err("b", "--b\r\n" CD "name=a\r\n\r\nx\r\n--b", 35, OP_EPARSE,
               "byte 35: the body ends before the final boundary");
    expect_err("b", "--b-", 4, OP_EPARSE, "ends before the final");
    /* the part's name shown as printable ASCII without quotes */
    expect_err("b", "--b\r\n" CD "name=\"a'\xc3\xa9\"\r\n\r\nx", 53, OP_EPARSE,
               "inside part 'a??" "?', before");
}

#define EXPECT_ERR(body, code, needle) \
    expect_err("b", body, sizeof body - 1, code, needle)

static void bad_lines(void **state)
{
    (void)state;
    EXPECT_ERR("--b\n" CD "name=a\n\ndata\n--b--", OP_EPARSE,
               "byte 3: a boundary is followed by 0x0a");
    EXPECT_ERR("--b\rx", OP_EPARSE, "byte 4: a boundary line ends in CR");
    EXPECT_ERR("--bX\r\n", OP_EPARSE, "byte 3: a boundary is followed by 'X'");
    EXPECT_ERR("--b-x", OP_EPARSE, "byte 4: a boundary is followed by '-'");
    EXPECT_ERR("--b\r\n" CD "name=a\n\n", OP_EPARSE,
               "byte 43: a bare LF in the part headers");
    EXPECT_ERR("--b\r\n" CD "name=a\rx", OP_EPARSE,
               "byte 44: CR not followed by LF");
    EXPECT_ERR("--b\r\n" CD "name=\"a\x01\"\r\n\r\n", OP_EPARSE,
               "byte 44: control byte 0x01");
    EXPECT_ERR("--b\r\nX-A: 1\r\n folded\r\n" CD "name=a\r\n\r\n--b--",
               OP_EPARSE, "byte 13: a folded");
    EXPECT_ERR("--b\r\nno colon here\r\n\r\n", OP_EPARSE,
               "byte 5: a part header line is not 'Name: value'");
}

static void bad_dispositions(void **state)
{
    static const struct {
        const char *hdr, *needle;
    } cases[] = {
        {"Content-Type: text/plain", "without a Content-Disposition"},
        {"Content-Disposition: attachment; name=a", "is not form-data"},
        {"Content-Disposition: form-data", "has no name parameter"},
        {"Content-Disposition: form-data; filename=x", "has no name parameter"},
        {"Content-Disposition: form-data; name=a; name=b", "two name parameters"},
        {"Content-Disposition: form-data; name=a; filename=x; filename=y",
         "two filename parameters"},
        {"Content-Disposition: form-data; name=\"a", "quoted string is not closed"},
        {"Content-Disposition: form-data; name=", "has no value"},
        {"Content-Disposition: form-data; name", "not name=value"},
        {"Content-Disposition: form-data name=a", "separated by ';'"},
        {"Content-Disposition: form-data; name=a; filename*=latin1''x",
         "charset other than UTF-8"},
        {"Content-Disposition: form-data; name=a; filename*=x", "charset'language"},
        {"Content-Disposition: form-data; name=a; filename*=UTF-8''a%00b", "NUL"},
        {"Content-Disposition: form-data; name=a; filename*=UTF-8''a%zz", "bad"},
        {"Content-Disposition: form-data; name=a\r\nContent-Disposition: form-data; name=b",
         "two Content-Disposition"},
        {"Content-Disposition: form-data; name=a\r\nContent-Type: a\r\nContent-Type: b",
         "two Content-Type"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char body[512];
        int n = snprintf(body, sizeof body, "--b\r\n%s\r\n\r\nx\r\n--b--",
                         cases[i].hdr);
        expect_err("b", body, (size_t)n, OP_EPARSE, cases[i].needle);
    }
}

/* ---- limits ---------------------------------------------------------------------- */

static char *repeat(char c, size_t n)
{
    char *s = malloc(n + 1);
    assert_non_null(s);
    memset(s, c, n);
    s[n] = '\0';
    return s;
}

static void header_limits(void **state)
{
    dbuf b = {0};
    char *pad;
    char msg[OP_ERROR_MAX], *got;
    int i;

    (void)state;
    /* 16 header lines pass, 17 do not */
    db_add(&b, "--b\r\n" CD "name=a\r\n", 5 + strlen(CD) + 8);
    for (i = 0; i < 15; i++)
        db_add(&b, "X-A: 1\r\n", 8);
    db_add(&b, "\r\n\r\n--b--", 9);
    assert_int_equal(run_cuts("b", (char *)b.p, b.n, NULL, 0, &got, msg, 0), 0);
    free(got);
    b.n -= 9;
    db_add(&b, "X-A: 1\r\n\r\n\r\n--b--", 17);
    expect_err("b", (char *)b.p, b.n, OP_ELIMIT, "more than 16 header lines");
    free(b.p);

    /* a header block (its lines with CRLF and the blank line) of exactly
     * MP_HEADER_MAX bytes passes, one more not */
    {
        size_t fixed = strlen(CD "name=a\r\nX: ") + strlen("\r\n\r\n");
        char body[MP_HEADER_MAX + 64];
        int n;

        pad = repeat('v', MP_HEADER_MAX - fixed);
        n = snprintf(body, sizeof body, "--b\r\n" CD "name=a\r\nX: %s\r\n\r\nd\r\n--b--",
                     pad);
        assert_int_equal(run_cuts("b", body, (size_t)n, NULL, 0, &got, msg, 0), 0);
        free(got);
        free(pad);
        pad = repeat('v', MP_HEADER_MAX - fixed + 1);
        n = snprintf(body, sizeof body, "--b\r\n" CD "name=a\r\nX: %s\r\n\r\nd\r\n--b--",
                     pad);
        assert_int_equal(run_cuts("b", body, (size_t)n, NULL, 0, &got, msg, 0),
                         OP_ELIMIT);
        assert_non_null(strstr(msg, "part headers over 8192 bytes"));
        free(got);
        free(pad);
    }
}

static void preamble_and_epilogue_limits(void **state)
{
    char msg[OP_ERROR_MAX], *got, *body;
    size_t n;

    (void)state;
    /* MP_PREAMBLE_MAX bytes of preamble (its last CRLF excluded) pass */
    n = MP_PREAMBLE_MAX + 64;
    body = malloc(n);
    assert_non_null(body);
    memset(body, 'p', MP_PREAMBLE_MAX - 2);
    memcpy(body + MP_PREAMBLE_MAX - 2, "\r\n--b--", 7);
    assert_int_equal(run_cuts("b", body, MP_PREAMBLE_MAX + 5, NULL, 0, &got, msg, 0), 0);
    free(got);
    memset(body, 'p', MP_PREAMBLE_MAX + 1);
    memcpy(body + MP_PREAMBLE_MAX + 1, "\r\n--b--", 7);
    assert_int_equal(run_cuts("b", body, MP_PREAMBLE_MAX + 8, NULL, 0, &got, msg, 0),
                     OP_ELIMIT);
    assert_non_null(strstr(msg, "preamble limit"));
    free(got);
    free(body);

    /* the epilogue: exactly the limit passes, one byte more is refused */
    n = 5 + MP_EPILOGUE_MAX + 1;
    body = malloc(n);
    assert_non_null(body);
    memcpy(body, "--b--", 5);
    memset(body + 5, 'e', MP_EPILOGUE_MAX + 1);
    assert_int_equal(run_cuts("b", body, n - 1, NULL, 0, &got, msg, 0), 0);
    free(got);
    assert_int_equal(run_cuts("b", body, n, NULL, 0, &got, msg, 0), OP_ELIMIT);
    assert_non_null(strstr(msg, "byte 65541: more than 65536 bytes after"));
    free(got);
    {
        size_t cuts[3] = {3, 7, 1000};
        assert_int_equal(run_cuts("b", body, n, cuts, 3, &got, msg, 0), OP_ELIMIT);
        assert_non_null(strstr(msg, "byte 65541:"));
        free(got);
    }
    free(body);

    /* blanks after a boundary: MP_PADDING_MAX pass */
    {
        char pbody[600];
        int k = snprintf(pbody, sizeof pbody, "--b%*s\r\n" CD "name=a\r\n\r\n\r\n--b--",
                         MP_PADDING_MAX, "");
        assert_int_equal(run_cuts("b", pbody, (size_t)k, NULL, 0, &got, msg, 0), 0);
        free(got);
        k = snprintf(pbody, sizeof pbody, "--b%*s\r\n", MP_PADDING_MAX + 1, "");
        assert_int_equal(run_cuts("b", pbody, (size_t)k, NULL, 0, &got, msg, 0),
                         OP_ELIMIT);
        free(got);
    }
}

static void callback_errors_stop_the_parser(void **state)
{
    static const char body[] = "--b\r\n" CD "name=a\r\n\r\nx\r\n--b\r\n" CD
                               "name=c\r\n\r\ny\r\n--b--";
    char msg[OP_ERROR_MAX], *got;

    (void)state;
    assert_int_equal(run_cuts("b", body, sizeof body - 1, NULL, 0, &got, msg, 2),
                     OP_ELIMIT);
    assert_string_equal(msg, "test: no more parts");
    assert_string_equal(got, "[a|-|-@5]x[end]");
    free(got);
}

static void bad_boundaries_refused(void **state)
{
    mp_parser *p = NULL;
    op_error err;

    (void)state;
    assert_int_equal(mp_new("", &rcb, NULL, &p, &err), OP_EUSAGE);
    assert_int_equal(mp_new("a\rb", &rcb, NULL, &p, &err), OP_EUSAGE);
    assert_int_equal(mp_new(NULL, &rcb, NULL, &p, &err), OP_EUSAGE);
    assert_null(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(two_parts_with_preamble_and_epilogue),
        cmocka_unit_test(near_boundaries_are_data),
        cmocka_unit_test(empty_parts_and_no_parts),
        cmocka_unit_test(header_forms),
        cmocka_unit_test(boundary_from_content_type),
        cmocka_unit_test(cut_bodies),
        cmocka_unit_test(bad_lines),
        cmocka_unit_test(bad_dispositions),
        cmocka_unit_test(header_limits),
        cmocka_unit_test(preamble_and_epilogue_limits),
        cmocka_unit_test(callback_errors_stop_the_parser),
        cmocka_unit_test(bad_boundaries_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
