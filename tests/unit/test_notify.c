/*
 * test_notify.c - webhook notifications (core/notify.c, docs/notify.md):
 * the config's endpoints are checked, each naming the entry and key; an
 * analysis's findings become finding, regression and ineffective events
 * (hidden ones none) and a failure one failed event; the JSON payload is
 * versioned and carries every field, the Slack one is {"text"} with
 * mrkdwn's control characters escaped; the signature is HMAC-SHA256 of
 * "<t>.<body>" (checked against Python's hmac); a change of what a
 * finding says changes its digest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify.h"

static cJSON *parse(const char *json)
{
    cJSON *c = cJSON_Parse(json);
    assert_non_null(c);
    return c;
}

/* notify_check of json: 0, or -1 with a message containing want. */
static void check(const char *json, const char *want)
{
    char why[512] = "";
    cJSON *c = parse(json);
    int rc = notify_check(c, why, sizeof why);

    cJSON_Delete(c);
    if (!want) {
        if (rc)
            fail_msg("%s: %s", json, why);
        return;
    }
    assert_int_equal(rc, -1);
    if (!strstr(why, want))
        fail_msg("%s: got '%s', want '%s'", json, why, want);
}

static void test_check(void **state)
{
    (void)state;
    check("[]", NULL);
    check("{}", NULL); /* an empty Lua table */
    check("[{\"name\":\"team\",\"url\":\"https://hooks.example.com/x\","
          "\"kind\":\"slack\"}]", NULL);
    check("[{\"name\":\"ci\",\"url\":\"http://127.0.0.1:9/h\",\"kind\":\"json\","
          "\"secret_env\":\"HOOK_SECRET\",\"min_severity\":\"info\","
          "\"events\":[\"failed\",\"regression\"],\"retries\":0,"
          "\"timeout_ms\":500,\"deadline_ms\":1000}]", NULL);
    check("{\"a\":1}", "expected a list");
    check("[1]", "notify[1]: expected a table");
    check("[{\"url\":\"https://h/x\",\"kind\":\"slack\"}]", "notify[1].name");
    check("[{\"name\":\"a b\",\"url\":\"https://h/x\",\"kind\":\"slack\"}]",
          "notify[1].name");
    check("[{\"name\":\"a\",\"url\":\"https://h/x\",\"kind\":\"slack\"},"
          "{\"name\":\"a\",\"url\":\"https://h/y\",\"kind\":\"slack\"}]",
          "notify[2].name: given twice");
    check("[{\"name\":\"a\",\"url\":\"ftp://h/x\",\"kind\":\"slack\"}]",
          "notify[1].url");
    check("[{\"name\":\"a\",\"url\":\"https://u:p@h/x\",\"kind\":\"slack\"}]",
          "no user or password");
    check("[{\"name\":\"a\",\"url\":\"https://h/x y\",\"kind\":\"slack\"}]",
          "notify[1].url");
    check("[{\"name\":\"a\",\"url\":\"https://h/x\",\"kind\":\"teams\"}]",
          "notify[1].kind");
    check("[{\"name\":\"a\",\"url\":\"https://h/x\",\"kind\":\"json\"}]",
          "notify[1].secret_env: a json endpoint is signed");
    check("[{\"name\":\"a\",\"url\":\"https://h/x\",\"kind\":\"json\","
          "\"secret_env\":\"lower\"}]", "environment variable");
    check("[{\"name\":\"a\",\"url\":\"https://h/x\",\"kind\":\"slack\","
          "\"min_severity\":\"fatal\"}]", "min_severity");
    check("[{\"name\":\"a\",\"url\":\"https://h/x\",\"kind\":\"slack\","
          "\"events\":[\"finding\",\"weather\"]}]", "unknown event");
    check("[{\"name\":\"a\",\"url\":\"https://h/x\",\"kind\":\"slack\","
          "\"retries\":11}]", "notify[1].retries: expected a whole number "
          "from 0 to 10");
    check("[{\"name\":\"a\",\"url\":\"https://h/x\",\"kind\":\"slack\","
          "\"timeout_ms\":1.5}]", "timeout_ms");
    check("[{\"name\":\"a\",\"url\":\"https://h/x\",\"kind\":\"slack\","
          "\"secret\":\"x\"}]", "notify[1].secret: unknown key");
}

/* Three shown findings (a plain one, a regression, an ineffective change
 * outcome), one of another outcome and one hidden by a decision. */
static void findings(finding f[5], cJSON **ev)
{
    memset(f, 0, 5 * sizeof *f);
    f[0].rule = "team.slow", f[0].sev = SEV_WARNING, f[0].message = "slow <x>";
    f[0].recommendation = "do a & b";
    f[1].rule = "x.regression", f[1].sev = SEV_INFO, f[1].message = "slower";
    f[2].rule = "mixed.change-outcome", f[2].sev = SEV_WARNING;
    f[2].message = "no gain";
    ev[0] = parse("{\"outcome\":\"ineffective\"}");
    f[2].evidence = ev[0];
    f[3].rule = "mixed.change-outcome", f[3].sev = SEV_INFO;
    f[3].message = "it worked";
    ev[1] = parse("{\"outcome\":\"effective\"}");
    f[3].evidence = ev[1];
    f[4].rule = "team.slow", f[4].sev = SEV_ERROR, f[4].message = "hidden";
    f[4].suppressed = FINDING_BASELINE;
    for (int i = 0; i < 5; i++) {
        snprintf(f[i].fingerprint, sizeof f[i].fingerprint, "%016x", i + 1);
        f[i].run_index = SIZE_MAX;
        f[i].source = "csv", f[i].run_id = "r1";
    }
}

/* The events of findings(): res points at f. */
static void collect(finding f[5], cJSON **ev, results *res, notify_events *e)
{
    op_error err;

    findings(f, ev);
    memset(res, 0, sizeof *res);
    res->f = f;
    res->n = 5;
    assert_int_equal(notify_collect(NULL, res, NULL, e, &err), 0);
}

static void test_collect(void **state)
{
    finding f[5];
    cJSON *ev[2];
    results res;
    notify_events e;
    op_error err;
    char d0[SHA256_HEX_LEN + 1];

    (void)state;
    collect(f, ev, &res, &e);
    assert_int_equal(e.n, 4); /* the decided one is not news */
    assert_int_equal(e.ev[0].kind, NOTIFY_FINDING);
    assert_int_equal(e.ev[1].kind, NOTIFY_REGRESSION);
    assert_int_equal(e.ev[2].kind, NOTIFY_INEFFECTIVE);
    assert_int_equal(e.ev[3].kind, NOTIFY_FINDING);
    assert_string_equal(e.ev[0].fingerprint, "0000000000000001");
    assert_int_equal(strlen(e.ev[0].digest), SHA256_HEX_LEN);
    memcpy(d0, e.ev[0].digest, sizeof d0);
    notify_events_free(&e);
    /* what it says changed: another digest, the same fingerprint */
    f[0].message = "slower <x>";
    assert_int_equal(notify_collect(NULL, &res, NULL, &e, &err), 0);
    assert_string_not_equal(e.ev[0].digest, d0);
    assert_string_equal(e.ev[0].fingerprint, "0000000000000001");
    notify_events_free(&e);
    /* a failure: one event, whatever the findings */
    assert_int_equal(notify_collect(NULL, &res, "no input could be read",
                                    &e, &err), 0);
    assert_int_equal(e.n, 1);
    assert_int_equal(e.ev[0].kind, NOTIFY_FAILED);
    assert_string_equal(e.ev[0].message, "no input could be read");
    assert_int_equal(strlen(e.ev[0].fingerprint), 16);
    notify_events_free(&e);
    cJSON_Delete(ev[0]);
    cJSON_Delete(ev[1]);
}

static void test_render(void **state)
{
    finding f[5];
    cJSON *ev[2], *doc, *one;
    results res;
    notify_events e;
    op_error err;
    const notify_event *pick[4];
    char *body;
    size_t i;

    (void)state;
    collect(f, ev, &res, &e);
    for (i = 0; i < 4; i++)
        pick[i] = &e.ev[i];
    assert_int_equal(notify_render("json", "team", pick, 4, 2, 1700000000,
                                   &body, &err), 0);
    doc = parse(body);
    assert_int_equal(cJSON_GetObjectItem(doc, "version")->valueint,
                     NOTIFY_PAYLOAD_VERSION);
    assert_string_equal(cJSON_GetObjectItem(doc, "type")->valuestring,
                        "optipipe.notification");
    assert_string_equal(cJSON_GetObjectItem(doc, "endpoint")->valuestring,
                        "team");
    assert_string_equal(cJSON_GetObjectItem(doc, "sent_at")->valuestring,
                        "2023-11-14T22:13:20Z");
    assert_int_equal(cJSON_GetObjectItem(doc, "more")->valueint, 2);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "events")), 4);
    one = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "events"), 2);
    assert_string_equal(cJSON_GetObjectItem(one, "event")->valuestring,
                        "ineffective");
    assert_string_equal(cJSON_GetObjectItem(one, "rule")->valuestring,
                        "mixed.change-outcome");
    assert_string_equal(cJSON_GetObjectItem(one, "fingerprint")->valuestring,
                        "0000000000000003");
    assert_true(cJSON_IsNull(cJSON_GetObjectItem(one, "node")));
    cJSON_Delete(doc);
    free(body);

    assert_int_equal(notify_render("slack", "chat", pick, 1, 0, 1700000000,
                                   &body, &err), 0);
    doc = parse(body);
    assert_int_equal(cJSON_GetArraySize(doc), 1); /* text alone */
    assert_non_null(strstr(cJSON_GetObjectItem(doc, "text")->valuestring,
                           "*warning* finding `team.slow`: slow &lt;x&gt;"));
    assert_non_null(strstr(cJSON_GetObjectItem(doc, "text")->valuestring,
                           "do a &amp; b"));
    assert_non_null(strstr(cJSON_GetObjectItem(doc, "text")->valuestring,
                           "optipipe: 1 alert\n"));
    cJSON_Delete(doc);
    free(body);
    notify_events_free(&e);
    cJSON_Delete(ev[0]);
    cJSON_Delete(ev[1]);
}

static void test_sign(void **state)
{
    char sig[NOTIFY_SIG_MAX];

    (void)state;
    assert_int_equal(notify_sign("whsec", 5, 1700000000, "{\"a\":1}", 7, sig),
                     0);
    /* python3: hmac.new(b"whsec", b'1700000000.{"a":1}', sha256) */
    assert_string_equal(sig, "t=1700000000,v1=8ad37ba156048ae0e0a5533c75cdf2"
                             "6fee88b07f93cb57ee4c80adb053012032");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_collect),
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_sign),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
