/*
 * test_notify.c - webhook notifications (core/notify.c, docs/notify.md):
 * the config's endpoints are checked, each naming the entry and key; an
 * analysis's findings become finding, regression and ineffective events
 * (hidden ones none) and a failure one failed event; the JSON payload is
 * versioned and carries every field, the Slack one is {"text"} with
 * mrkdwn's control characters escaped; the signature is HMAC-SHA256 of
 * "<t>.<body>" (checked against Python's hmac); a change of what a
 * finding says changes its digest. The events file (serve's worker to the
 * server) reads back what was written, its digests computed anew, and
 * refuses what no event holds; a failure told is not told again until an
 * analysis succeeded (the run store forgets it then).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "notify.h"
#include "store.h"

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

/* Replaces the first copy of from in *text by to (same length). */
static void patch(char *text, const char *from, const char *to)
{
    char *p = strstr(text, from);

    assert_non_null(p);
    assert_int_equal(strlen(from), strlen(to));
    memcpy(p, to, strlen(to));
}

/* notify_events_parse of json fails, naming want. */
static void refused(const char *json, const char *want)
{
    notify_events e;
    op_error err;

    op_error_clear(&err);
    assert_int_not_equal(notify_events_parse(json, strlen(json), &e, &err), 0);
    if (!strstr(err.msg, want))
        fail_msg("'%s': got '%s', want '%s'", json, err.msg, want);
    notify_events_free(&e);
}

static void test_events_file(void **state)
{
    finding f[5];
    cJSON *ev[2];
    results res;
    notify_events e, back;
    op_error err;
    char *text = NULL, bad_digest[SHA256_HEX_LEN + 1];
    size_t i;

    (void)state;
    collect(f, ev, &res, &e);
    e.ev[0].analysis = "0123456789abcdef";
    e.ev[0].link = "https://o.example/analyses/0123456789abcdef";
    assert_int_equal(notify_events_json(&e, &text, &err), 0);
    /* a digest in the file is not believed: computed anew */
    memset(bad_digest, '0', SHA256_HEX_LEN);
    bad_digest[SHA256_HEX_LEN] = '\0';
    patch(text, e.ev[1].digest, bad_digest);
    assert_int_equal(notify_events_parse(text, strlen(text), &back, &err), 0);
    assert_int_equal(back.n, e.n);
    for (i = 0; i < e.n; i++) {
        assert_int_equal(back.ev[i].kind, e.ev[i].kind);
        assert_int_equal(back.ev[i].sev, e.ev[i].sev);
        assert_string_equal(back.ev[i].fingerprint, e.ev[i].fingerprint);
        assert_string_equal(back.ev[i].digest, e.ev[i].digest);
        assert_string_equal(back.ev[i].rule, e.ev[i].rule);
        assert_string_equal(back.ev[i].message, e.ev[i].message);
    }
    assert_string_equal(back.ev[0].recommendation, "do a & b");
    assert_string_equal(back.ev[0].analysis, "0123456789abcdef");
    assert_non_null(strstr(back.ev[0].link, "/analyses/"));
    assert_null(back.ev[1].analysis);
    assert_null(back.ev[1].node);
    notify_events_free(&back);
    free(text);
    notify_events_free(&e);
    /* a failure reads back with the same digest (its rule is null) */
    assert_int_equal(notify_collect(NULL, &res, "exit 3: no input", &e, &err),
                     0);
    assert_int_equal(notify_events_json(&e, &text, &err), 0);
    assert_int_equal(notify_events_parse(text, strlen(text), &back, &err), 0);
    assert_int_equal(back.n, 1);
    assert_int_equal(back.ev[0].kind, NOTIFY_FAILED);
    assert_string_equal(back.ev[0].digest, e.ev[0].digest);
    notify_events_free(&back);
    free(text);
    notify_events_free(&e);
    /* what no event holds, each named */
    refused("nope", "not JSON");
    refused("{\"version\":2,\"events\":[]}", "$.version");
    refused("{\"version\":1}", "$.events: not a list");
    refused("{\"version\":1,\"events\":[1]}", "$.events[0]: not an object");
    refused("{\"version\":1,\"events\":[{\"event\":\"party\"}]}",
            "$.events[0].event");
    refused("{\"version\":1,\"events\":[{\"event\":\"finding\","
            "\"fingerprint\":\"../../etc\"}]}", "$.events[0].fingerprint");
    refused("{\"version\":1,\"events\":[{\"event\":\"finding\","
            "\"fingerprint\":\"0000000000000001\",\"severity\":\"huge\"}]}",
            "$.events[0].severity");
    refused("{\"version\":1,\"events\":[{\"event\":\"finding\","
            "\"fingerprint\":\"0000000000000001\",\"severity\":\"info\","
            "\"message\":\"m\"}]}", "$.events[0].rule");
    refused("{\"version\":1,\"events\":[{\"event\":\"failed\","
            "\"fingerprint\":\"0000000000000001\",\"severity\":\"error\","
            "\"message\":\"m\",\"node\":7}]}", "$.events[0].node");
    {
        char big[64];
        assert_int_not_equal(notify_events_parse(big, NOTIFY_EVENTS_FILE_MAX + 1,
                                                 &back, &err), 0);
        assert_int_equal(err.code, OP_ELIMIT);
        notify_events_free(&back);
    }
    cJSON_Delete(ev[0]);
    cJSON_Delete(ev[1]);
}

/* A failure is told once: the same one again is unchanged (no POST), an
 * analysis that succeeded forgets it, and then it is tried again. The
 * endpoint listens nowhere (port 1): a POST fails at once. */
static void test_failure_once(void **state)
{
    char dir[] = "/tmp/test_notify.XXXXXX", path[64],
         said[SHA256_HEX_LEN + 1];
    cJSON *cfg = parse("[{\"name\":\"team\",\"url\":\"http://127.0.0.1:1/x\","
                       "\"kind\":\"slack\",\"retries\":0}]");
    store *st = NULL;
    notify_events e, none;
    notify_result r;
    op_error err;
    store_notification row = {0, NULL, "team", "failed", NULL, "sent", 1,
                              NULL, NULL};

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/h.db", dir);
    assert_int_equal(store_open(path, 1, &st, &err), 0);
    assert_int_equal(notify_collect(NULL, NULL, "exit 3: no input", &e, &err),
                     0);
    row.fingerprint = e.ev[0].fingerprint;
    row.digest = e.ev[0].digest; /* told before, as a delivery logs it */
    assert_int_equal(store_notify_log(st, &row, &err), 0);
    assert_int_equal(notify_deliver(cfg, &e, st, NULL, &r), 0);
    assert_int_equal(r.unchanged, 1);
    assert_int_equal(r.nep, 1);
    assert_string_equal(r.ep[0].name, "team");
    assert_int_equal(r.ep[0].outcome, 0); /* nothing to send */
    memset(&none, 0, sizeof none); /* an analysis that succeeded */
    assert_int_equal(notify_deliver(cfg, &none, st, NULL, &r), 0);
    assert_int_equal(store_notify_said(st, "team", e.ev[0].fingerprint, said,
                                       sizeof said, &err), 0);
    assert_string_equal(said, "");
    assert_int_equal(notify_deliver(cfg, &e, st, NULL, &r), OP_EIO);
    assert_int_equal(r.unchanged, 0);
    assert_int_equal(r.failed, 1);
    assert_int_equal(r.ep[0].outcome, -1);
    assert_int_equal(r.ep[0].events, 1);
    notify_events_free(&e);
    store_close(st);
    cJSON_Delete(cfg);
    unlink(path);
    strcat(path, "-wal"), unlink(path);
    strcpy(path + strlen(path) - 4, "-shm"), unlink(path);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_collect),
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_sign),
        cmocka_unit_test(test_events_file),
        cmocka_unit_test(test_failure_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
