/*
 * test_serve_ui.c - the HTML of optipipe serve's pages (serve/serve_ui*.c)
 * without a server: a finding and a report with hostile strings render
 * escaped, forms carry the CSRF field, ids and references are validated,
 * URLs are percent-encoded, and the page frame and assets keep the strict
 * CSP (no inline script, style or handler).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "report_html.h"
#include "serve_ui.h"

/* The CSRF token source of serve_http.c, as a test stands in for it: the
 * pages only write what it gives. */
static const char fake_token[] = "tok\"<en>";

const char *srv_csrf_token(const srv_req *r)
{
    (void)r;
    return fake_token;
}

void srv_csrf_input(const srv_req *r, FILE *f)
{
    (void)r;
    fputs("<input type=\"hidden\" name=\"csrf\" value=\"CSRF\">", f);
}

typedef struct page {
    FILE *f;
    char *p;
    size_t n;
} page;

static void page_open(page *pg)
{
    pg->p = NULL;
    pg->n = 0;
    pg->f = open_memstream(&pg->p, &pg->n);
    assert_non_null(pg->f);
}

static char *page_text(page *pg)
{
    fclose(pg->f);
    return pg->p;
}

/* No markup an attacker could have brought survives. */
static void assert_inert(const char *html)
{
    assert_null(strstr(html, "<script>"));
    assert_null(strstr(html, "<img"));
    assert_null(strstr(html, "<x"));
    assert_null(strstr(html, "'>")); /* no attribute closed by a quote */
}

static const char hostile[] = "<script>alert(1)</script>\"><img src=x onerror=alert(1)>'";

static void finding_escaped(void **state)
{
    cJSON *ch = cJSON_Parse("[{\"target\":\"</pre><script>x</script>\",\"key\":\"<x k>\","
                            "\"from\":\"<img src=x onerror=1>\",\"to\":\"\\\"><x>\"}]");
    cJSON *ev = cJSON_Parse("{\"<x evil>\":\"<img src=x onerror=1>\",\"n\":3}");
    ui_finding f = {hostile, "warning", "0123456789abcdef", hostile, hostile, hostile,
                    hostile, ch, ev, "approved", hostile, hostile, hostile};
    srv_req r = {0};
    page pg;
    char *html;

    (void)state;
    page_open(&pg);
    ui_put_finding(pg.f, &r, &f, "/analyses/00000000000000aa/decisions");
    html = page_text(&pg);
    assert_inert(html);
    assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img"));
    assert_non_null(strstr(html, "&#39;"));
    assert_non_null(strstr(html, "id=\"f-0123456789abcdef\""));
    assert_non_null(strstr(html, "name=\"csrf\""));
    assert_non_null(strstr(html, "name=\"fingerprint\" value=\"0123456789abcdef\""));
    /* approved: no second approve, but dismiss and reopen */
    assert_null(strstr(html, "value=\"approved\""));
    assert_non_null(strstr(html, "value=\"dismissed\""));
    assert_non_null(strstr(html, "value=\"open\""));
    assert_non_null(strstr(html, "state-approved"));
    /* its run (a page of several runs): linked, the id percent-encoded */
    assert_non_null(strstr(html, "<span class=\"run\">in <a href=\"/runs/%3Cscript%3E"));
    free(html);
    cJSON_Delete(ch);
    cJSON_Delete(ev);
}

/* A fingerprint that is not 16 hex digits names nothing: no id, no form,
 * and unknown severities and states fall back to known classes. */
static void finding_bad_fingerprint(void **state)
{
    ui_finding f = {"r", "<evil>", "\"><x>", NULL, NULL, "m", NULL, NULL, NULL,
                    "\"><x>", NULL, NULL, NULL};
    srv_req r = {0};
    page pg;
    char *html;

    (void)state;
    page_open(&pg);
    ui_put_finding(pg.f, &r, &f, "/analyses/00000000000000aa/decisions");
    html = page_text(&pg);
    assert_inert(html);
    assert_null(strstr(html, "<form"));
    assert_null(strstr(html, " id="));
    assert_non_null(strstr(html, "class=\"finding info\""));
    assert_non_null(strstr(html, "state-open"));
    free(html);
}

static void ids_and_refs(void **state)
{
    char big[SRV_SEGMENT_MAX + 2];

    (void)state;
    assert_true(ui_is_hex("0123456789abcdef", 16));
    assert_false(ui_is_hex("0123456789ABCDEF", 16));
    assert_false(ui_is_hex("0123456789abcde", 16));
    assert_false(ui_is_hex("../../etc/passwd", 16));
    assert_false(ui_is_hex(NULL, 16));
    assert_true(ui_is_ref("application_1700000000000_0042"));
    assert_true(ui_is_ref("shop: dbt build@latest"));
    assert_false(ui_is_ref(""));
    assert_false(ui_is_ref("a\nb"));
    assert_false(ui_is_ref("a\x1b[31m"));
    assert_false(ui_is_ref("\xff\xfe"));
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    assert_false(ui_is_ref(big));
}

static void url_encoding(void **state)
{
    page pg;
    char *s;

    (void)state;
    page_open(&pg);
    ui_put_url(pg.f, "a b/c?d&e=\"<f>'#\xc3\xa9_x.y~z-");
    s = page_text(&pg);
    assert_string_equal(s, "a%20b%2Fc%3Fd%26e%3D%22%3Cf%3E%27%23%C3%A9_x.y~z-");
    free(s);
}

/* The whole analysis body from a report whose every string is hostile. */
static void report_escaped(void **state)
{
    char text[4096];
    cJSON *report;
    ui_decisions d = {0};
    ui_decision one = {"0123456789abcdef", (char *)"dismissed", (char *)"<x>"};
    srv_req r = {0};
    page pg;
    char *html;

    (void)state;
    snprintf(text, sizeof text,
             "{\"optipipe_version\":\"<x>\",\"inputs\":[{\"path\":\"<x p>\",\"warnings\":"
             "[\"<img src=x onerror=1>\"]}],\"runs\":[{\"source\":\"<x s>\",\"id\":"
             "\"\\\"><x>\",\"name\":\"<x n>\",\"status\":\"<x>\",\"duration_ms\":5}],"
             "\"findings\":[{\"rule\":\"<x r>\",\"severity\":\"error\",\"fingerprint\":"
             "\"0123456789abcdef\",\"message\":\"<img src=x onerror=1>\",\"run\":\"r\"}],"
             "\"rule_errors\":[{\"rule\":\"<x>\",\"error\":\"<script>\"}]}");
    report = cJSON_Parse(text);
    assert_non_null(report);
    d.d = &one;
    d.n = 1;
    page_open(&pg);
    assert_int_equal(ui_report_body(pg.f, &r, "00000000000000aa", report, &d), 0);
    html = page_text(&pg);
    assert_inert(html);
    assert_non_null(strstr(html, "<iframe class=\"report\" sandbox src=\"/analyses/"
                                 "00000000000000aa/report.html\""));
    assert_non_null(strstr(html, "href=\"/analyses/00000000000000aa/patches?format=text\""));
    assert_non_null(strstr(html, "href=\"/runs/%22%3E%3Cx%3E\""));
    assert_non_null(strstr(html, "state-dismissed"));
    assert_non_null(strstr(html, "action=\"/analyses/00000000000000aa/decisions\""));
    free(html);
    cJSON_Delete(report);
}

/* The frame: the token in a meta tag (escaped), the script and style
 * only from /static, no inline script, style or handler. */
static void frame_strict(void **state)
{
    srv_req r = {0};
    srv_resp w;
    char *html;

    (void)state;
    memset(&w, 0, sizeof w);
    w.f = open_memstream(&w.body, &w.len);
    assert_non_null(w.f);
    ui_open(&r, &w, hostile, "jobs");
    ui_close(&w);
    fclose(w.f);
    html = w.body;
    assert_int_equal(w.status, 200);
    assert_inert(html);
    assert_non_null(strstr(html, "<meta name=\"csrf-token\" content=\"tok&quot;&lt;en&gt;\">"));
    assert_non_null(strstr(html, "<script src=\"/static/app.js\" defer></script>"));
    assert_non_null(strstr(html, "<link rel=\"stylesheet\" href=\"/static/app.css\">"));
    assert_null(strstr(html, "<style"));
    assert_null(strstr(html, "style="));
    assert_non_null(strstr(html, "href=\"/jobs\" aria-current=\"page\""));
    free(html);
}

/* The assets stay small and inert: no eval, no HTML written from strings,
 * nothing fetched from another origin. */
static void assets_strict(void **state)
{
    (void)state;
    assert_true(strlen(ui_app_js) < 16 * 1024);
    assert_null(strstr(ui_app_js, "eval("));
    assert_null(strstr(ui_app_js, "innerHTML"));
    assert_null(strstr(ui_app_js, "document.write"));
    assert_null(strstr(ui_app_js, "http:"));
    assert_null(strstr(ui_app_js, "https:"));
    assert_non_null(strstr(ui_app_js, "X-CSRF-Token"));
    assert_non_null(strstr(ui_app_js, "upload.onprogress"));
    assert_null(strstr(ui_app_css, "@import"));
    assert_null(strstr(ui_app_css, "url("));
}

/* The demo's HTML report, made strict for the server: no inline style,
 * script or style attribute is left, every chart and finding is, and a
 * cut report is refused. */
static void report_strict(void **state)
{
    char cmd[8192], path[] = "/tmp/op_ui_report_XXXXXX";
    FILE *in;
    char *text = NULL, *out;
    size_t cap = 0, len;
    page pg;
    int fd;

    (void)state;
    assert_true((fd = mkstemp(path)) >= 0);
    close(fd);
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/optipipe' analyze --format html "
             "--deterministic -o '%s' fixtures/demo 2>/dev/null", OP_SOURCE_DIR,
             OP_BINARY_DIR, path);
    assert_true(system(cmd) >= 0);
    assert_non_null(in = fopen(path, "rb"));
    len = getdelim(&text, &cap, 0, in); /* the whole file: it holds no NUL */
    fclose(in);
    unlink(path);
    assert_true(len > 1000 && len != (size_t)-1);
    page_open(&pg);
    assert_int_equal(html_report_strict(pg.f, text, len, "/static/app.css"), 0);
    out = page_text(&pg);
    assert_null(strstr(out, "<style"));
    assert_null(strstr(out, "<script"));
    assert_null(strstr(out, "style="));
    assert_null(strstr(out, "Content-Security-Policy"));
    assert_non_null(strstr(out, "<link rel=\"stylesheet\" href=\"/static/app.css\">"));
    assert_non_null(strstr(out, "data-chart=\"spark-timeline\""));
    assert_non_null(strstr(out, "data-chart=\"flink-graph\""));
    assert_non_null(strstr(out, "data-chart=\"dbt-gantt\""));
    assert_non_null(strstr(out, "class=\"finding"));
    free(out);
    page_open(&pg);
    assert_int_equal(html_report_strict(pg.f, text, len / 2, "/x.css"), OP_EPARSE);
    free(page_text(&pg));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(finding_escaped),
        cmocka_unit_test(finding_bad_fingerprint),
        cmocka_unit_test(ids_and_refs),
        cmocka_unit_test(url_encoding),
        cmocka_unit_test(report_escaped),
        cmocka_unit_test(frame_strict),
        cmocka_unit_test(assets_strict),
        cmocka_unit_test(report_strict),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
