/*
 * test_serve_stream.c - the pipe a page is streamed through
 * (serve/serve_stream.c), without libmicrohttpd: a page of one chunk is
 * handed out whole and may be rewound; a longer one commits once and
 * reaches the reader byte for byte while the writer never holds more than
 * SRV_STREAM_DEPTH + 1 chunks of the budget; a rewind after the commit
 * breaks it; a reader gone makes the writer's writes fail instead of
 * waiting. The reader here waits on a condition variable for the wake
 * (no sleeps).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define CHUNK 4096
#define DEPTH 2

typedef struct harness {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int commits, wakes, suspended;
    srv_pipe *p;
    FILE *f;
    char *body;
    size_t len;
    int over;
    size_t total;     /* bytes the writer writes */
    uint64_t base, peak; /* budget before, most held while writing */
} harness;

static int on_commit(void *ud)
{
    harness *h = ud;

    pthread_mutex_lock(&h->mu);
    h->commits++;
    pthread_mutex_unlock(&h->mu);
    return 0;
}

static int on_wake(void *ud)
{
    harness *h = ud;

    pthread_mutex_lock(&h->mu);
    h->wakes++;
    h->suspended = 0;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return 0;
}

static void on_suspend(void *ud)
{
    harness *h = ud;

    pthread_mutex_lock(&h->mu);
    h->suspended = 1;
    pthread_mutex_unlock(&h->mu);
}

static void make(harness *h, srv *s, serve_opts *o)
{
    memset(h, 0, sizeof *h);
    memset(s, 0, sizeof *s);
    memset(o, 0, sizeof *o);
    s->o = o;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->base = srv_budget_used();
    h->p = srv_pipe_new(s, CHUNK, DEPTH, on_commit, on_wake, h);
    assert_non_null(h->p);
    h->f = srv_pipe_file(h->p, &h->body, &h->len, &h->over);
    assert_non_null(h->f);
}

static void done(harness *h)
{
    srv_budget_free(h->body);
    srv_pipe_free(h->p);
    assert_int_equal(srv_budget_used(), h->base);
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
}

static void test_small_page_whole(void **state)
{
    harness h;
    serve_opts o;
    srv s;

    (void)state;
    make(&h, &s, &o);
    fputs("an error first", h.f);
    rewind(h.f);
    fputs("<p>small</p>", h.f);
    assert_int_equal(fclose(h.f), 0);
    srv_pipe_finish(h.p);
    assert_int_equal(h.commits, 0);
    assert_int_equal(srv_pipe_state(h.p), SRV_PIPE_DONE);
    assert_int_equal(h.len, strlen("<p>small</p>"));
    assert_memory_equal(h.body, "<p>small</p>", h.len);
    done(&h);
}

static void *writer(void *arg)
{
    harness *h = arg;
    size_t i;

    for (i = 0; i < h->total; i++) {
        uint64_t held = srv_budget_used() - h->base;
        fputc('a' + (int)(i % 26), h->f);
        if (held > h->peak)
            h->peak = held;
    }
    fclose(h->f);
    srv_pipe_finish(h->p);
    return NULL;
}

/* Reads the whole stream as the connection would: a 0 means wait for the
 * wake. Returns the bytes read into out (cap), or -1 when broken. */
static long read_all(harness *h, char *out, size_t cap)
{
    size_t got = 0;

    for (;;) {
        char buf[1000];
        ssize_t n = srv_pipe_read(h->p, buf, sizeof buf, on_suspend, h);
        if (n == SRV_PIPE_END)
            return (long)got;
        if (n == SRV_PIPE_BROKEN)
            return -1;
        if (n == 0) {
            pthread_mutex_lock(&h->mu);
            while (h->suspended)
                pthread_cond_wait(&h->cv, &h->mu);
            pthread_mutex_unlock(&h->mu);
            continue;
        }
        assert_true(got + (size_t)n <= cap);
        memcpy(out + got, buf, (size_t)n);
        got += (size_t)n;
    }
}

static void test_long_page_streams(void **state)
{
    harness h;
    serve_opts o;
    srv s;
    pthread_t t;
    char *out;
    long n;
    size_t i;

    (void)state;
    make(&h, &s, &o);
    h.total = 50 * CHUNK + 123;
    out = malloc(h.total);
    assert_non_null(out);
    /* the reader is suspended from the start, as the connection is */
    srv_pipe_lock(h.p);
    srv_pipe_want_wake(h.p);
    h.suspended = 1;
    srv_pipe_unlock(h.p);
    assert_int_equal(pthread_create(&t, NULL, writer, &h), 0);
    pthread_mutex_lock(&h.mu);
    while (h.suspended)
        pthread_cond_wait(&h.cv, &h.mu);
    pthread_mutex_unlock(&h.mu);
    srv_pipe_lock(h.p);
    assert_int_equal(srv_pipe_state(h.p), SRV_PIPE_COMMITTED);
    srv_pipe_unlock(h.p);
    n = read_all(&h, out, h.total);
    pthread_join(t, NULL);
    assert_int_equal(n, (long)h.total);
    for (i = 0; i < h.total; i++)
        assert_int_equal(out[i], 'a' + (int)(i % 26));
    assert_int_equal(h.commits, 1);
    assert_null(h.body);
    /* the writer held at most the chunk it filled and DEPTH waiting (each
     * with its NUL byte) */
    print_message("peak held %llu bytes for a %zu-byte page\n",
                  (unsigned long long)h.peak, h.total);
    assert_true(h.peak <= (uint64_t)(DEPTH + 1) * (CHUNK + 1));
    free(out);
    done(&h);
}

static void test_rewind_after_commit_breaks(void **state)
{
    harness h;
    serve_opts o;
    srv s;
    char *big = malloc(CHUNK + 10), out[CHUNK * 4];

    (void)state;
    assert_non_null(big);
    memset(big, 'x', CHUNK + 10);
    make(&h, &s, &o);
    fwrite(big, 1, CHUNK + 10, h.f);
    fflush(h.f);
    assert_int_equal(h.commits, 1);
    rewind(h.f); /* an error half-way: what was sent stays sent */
    fputs("500", h.f);
    fclose(h.f);
    srv_pipe_finish(h.p);
    assert_int_equal(read_all(&h, out, sizeof out), -1);
    free(big);
    done(&h);
}

static void test_reader_gone(void **state)
{
    harness h;
    serve_opts o;
    srv s;
    char *big = malloc(CHUNK * 8);

    (void)state;
    assert_non_null(big);
    memset(big, 'y', CHUNK * 8);
    make(&h, &s, &o);
    srv_pipe_gone(h.p); /* the client went away: nothing waits for it */
    assert_int_not_equal(fwrite(big, 1, CHUNK * 8, h.f), CHUNK * 8);
    fclose(h.f);
    srv_pipe_finish(h.p);
    free(big);
    done(&h);
}

static void test_over_budget(void **state)
{
    harness h;
    serve_opts o;
    srv s;
    size_t i;

    (void)state;
    make(&h, &s, &o);
    o.server_memory = h.base + 2048; /* less than a first chunk grows to */
    for (i = 0; i < 3000; i++)
        fputc('z', h.f);
    assert_int_not_equal(fclose(h.f), 0);
    assert_int_equal(h.over, 1);
    srv_pipe_finish(h.p);
    done(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_page_whole),
        cmocka_unit_test(test_long_page_streams),
        cmocka_unit_test(test_rewind_after_commit_breaks),
        cmocka_unit_test(test_reader_gone),
        cmocka_unit_test(test_over_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
