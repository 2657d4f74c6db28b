/*
 * test_serve_notify.c - the server's webhook delivery queue
 * (serve/serve_notify.c): with the delivery thread held at its test hook
 * (serve.notify) the queue takes SRV_NOTIFY_QUEUE analyses and drops the
 * next one, counting it as result="dropped" for every endpoint; an
 * analysis that did not end (queued again) is no delivery; released, every
 * queued one is delivered (to an endpoint that listens nowhere: failed)
 * and logged in the run store; a server without `notify` has no queue.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "serve.h"
#include "store.h"
#include "testhook.h"

static char dir[] = "/tmp/test_serve_notify.XXXXXX";
static char path[4200];

static void write_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");

    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The counter of endpoint team and result in /metrics' text; -1 absent. */
static long long counter(srv *s, const char *result)
{
    char *buf = NULL, want[128], *p;
    size_t len = 0;
    long long v = -1;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    srv_notify_metrics(s, f);
    fclose(f);
    snprintf(want, sizeof want, "optipipe_notify_deliveries_total{endpoint="
             "\"team\",result=\"%s\"} ", result);
    if ((p = strstr(buf, want)))
        v = strtoll(p + strlen(want), NULL, 10);
    free(buf);
    return v;
}

/* Waits (bounded: 120 s, a safety net) until cond(s) holds. */
static int wait_for(int (*cond)(srv *s), srv *s)
{
    struct timespec tick = {0, 10 * 1000 * 1000};

    for (int i = 0; i < 12000; i++) {
        if (cond(s))
            return 1;
        nanosleep(&tick, NULL);
    }
    return 0;
}

static int hook_reached(srv *s)
{
    (void)s;
    snprintf(path, sizeof path, "%s/hooks/serve.notify", dir);
    return access(path, F_OK) == 0;
}

static int all_delivered(srv *s)
{
    return counter(s, "failed") == SRV_NOTIFY_QUEUE + 1;
}

static int count_row(void *ud, const store_notification *n)
{
    (void)n;
    ++*(size_t *)ud;
    return 0;
}

static void test_queue(void **state)
{
    serve_opts o;
    srv s;
    srv_analysis a;
    op_error err;
    store *st = NULL;
    size_t rows = 0;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/hooks", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    setenv(OP_TESTHOOK_ENV, path, 1);
    snprintf(path, sizeof path, "%s/hooks/serve.notify.pause", dir);
    write_file(path, "");
    snprintf(path, sizeof path, "%s/optipipe.lua", dir);
    write_file(path, "return { notify = { { name = \"team\", url = "
               "\"http://127.0.0.1:1/x\", kind = \"slack\", retries = 0, "
               "timeout_ms = 1000, deadline_ms = 1000 } } }\n");
    serve_opts_default(&o);
    o.config_path = path;
    memset(&s, 0, sizeof s);
    s.o = &o;
    snprintf(s.data, sizeof s.data, "%s", dir);
    snprintf(s.store_path, sizeof s.store_path, "%s/history.db", dir);
    op_error_clear(&err);
    assert_int_equal(srv_notify_start(&s, &err), 0);
    assert_non_null(s.notify);
    assert_int_equal(counter(&s, "dropped"), 0);

    memset(&a, 0, sizeof a);
    snprintf(a.id, sizeof a.id, "0123456789abcdef");
    snprintf(a.error, sizeof a.error, "exit 3: boom");
    a.state = SRV_FAILED;
    srv_notify_ended(&s, &a); /* taken by the thread, held at its hook */
    assert_true(wait_for(hook_reached, &s));
    a.state = SRV_QUEUED; /* interrupted, queued again: nothing to tell */
    srv_notify_ended(&s, &a);
    a.state = SRV_FAILED;
    for (int i = 0; i < SRV_NOTIFY_QUEUE; i++)
        srv_notify_ended(&s, &a);
    assert_int_equal(counter(&s, "dropped"), 0); /* all waiting */
    srv_notify_ended(&s, &a);
    assert_int_equal(counter(&s, "dropped"), 1); /* one too many */
    assert_int_equal(counter(&s, "ok"), 0);

    snprintf(path, sizeof path, "%s/hooks/serve.notify.release", dir);
    write_file(path, "");
    assert_true(wait_for(all_delivered, &s));
    assert_int_equal(counter(&s, "dropped"), 1);
    srv_notify_stop(&s);
    assert_null(s.notify);

    /* every delivery logged: the held one and the SRV_NOTIFY_QUEUE after */
    assert_int_equal(store_open(s.store_path, 0, &st, &err), 0);
    assert_int_equal(store_each_notification(st, 0, count_row, &rows, &err), 0);
    assert_int_equal(rows, SRV_NOTIFY_QUEUE + 1);
    store_close(st);
    unsetenv(OP_TESTHOOK_ENV);

    /* no notify in the config: no queue, nothing counted */
    write_file(o.config_path, "return {}\n");
    assert_int_equal(srv_notify_start(&s, &err), 0);
    assert_null(s.notify);
    srv_notify_ended(&s, &a);
    assert_int_equal(counter(&s, "dropped"), -1);
    srv_notify_stop(&s);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    assert_int_equal(system(path), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
