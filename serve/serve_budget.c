/*
 * serve_budget.c - what one request of `optipipe serve` may hold, so that
 * no request (a 35 MB jobs page, a diff of two huge runs) can take the
 * server down (issue #24):
 *   - the memory budget (--server-memory): every answer is built in a
 *     budgeted memory stream (srv_budget_stream) that charges the server's
 *     one budget as it grows and gives it back when libmicrohttpd has sent
 *     and freed it; the store pages reserve what they parse
 *     (srv_budget_take). Over the budget a request gets 503, the server
 *     lives on.
 *   - render slots: at most --threads - 1 handlers render at once, each in
 *     a render thread of its own (serve_http.c), never on an HTTP thread,
 *     so the light routes (/healthz, /metrics, the static files; uploads
 *     take no slot either) never wait behind page rendering. A request
 *     finding no free slot gets 503 with Retry-After.
 *   - the test hook OPTIPIPE_SERVE_TEST_HOLD (srv_test_hold_render).
 * One server per process: the counters are this file's own.
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve.h"

static atomic_uint_fast64_t budget_used;
static atomic_uint render_busy;

/* ---- the memory budget -------------------------------------------------- */

int srv_budget_take(const srv *s, uint64_t bytes)
{
    uint64_t cap = s && s->o ? s->o->server_memory : 0;
    uint_fast64_t cur = atomic_load(&budget_used);

    if (!cap) {
        atomic_fetch_add(&budget_used, bytes);
        return 0;
    }
    do {
        if (bytes > cap || cur > cap - bytes)
            return -1;
    } while (!atomic_compare_exchange_weak(&budget_used, &cur, cur + bytes));
    return 0;
}

void srv_budget_give(uint64_t bytes)
{
    atomic_fetch_sub(&budget_used, bytes);
}

uint64_t srv_budget_used(void)
{
    return atomic_load(&budget_used);
}

/* A budgeted buffer: its charge lives in front of it, so whoever frees it
 * (libmicrohttpd, through srv_budget_free) gives back the right amount. */
typedef union mhdr {
    size_t charged;
    max_align_t align;
} mhdr;

void srv_budget_free(void *body)
{
    mhdr *h;

    if (!body)
        return;
    h = (mhdr *)body - 1;
    srv_budget_give(h->charged);
    free(h);
}

void *srv_budget_realloc(const srv *s, void *body, size_t size)
{
    mhdr *h = body ? (mhdr *)body - 1 : NULL, *g;
    size_t old = h ? h->charged : 0;

    if (size > old && srv_budget_take(s, size - old))
        return NULL;
    if (size > SIZE_MAX - sizeof *g || !(g = realloc(h, sizeof *g + size))) {
        if (size > old)
            srv_budget_give(size - old);
        return NULL;
    }
    if (size < old)
        srv_budget_give(old - size);
    g->charged = size;
    return g + 1;
}

/* The stream behind srv_budget_stream: open_memstream's behaviour (the
 * size at close is the position, so a rewind and a shorter error body
 * replace what was written) with every growth charged first. */
typedef struct mstream {
    const srv *s;
    char **body;
    size_t *len;
    int *over;
    mhdr *h;       /* NULL until the first write */
    size_t cap, pos;
} mstream;

static ssize_t ms_write(void *cookie, const char *buf, size_t n)
{
    mstream *m = cookie;
    size_t need = m->pos + n, ncap;
    mhdr *g;

    if (need + 1 > m->cap) {
        ncap = m->cap ? m->cap : 4096;
        while (ncap < need + 1)
            ncap = ncap > SIZE_MAX / 2 ? need + 1 : ncap * 2;
        if (srv_budget_take(m->s, ncap - m->cap)) {
            *m->over = 1;
            return 0; /* an error: ferror, fclose fails */
        }
        g = realloc(m->h, sizeof *g + ncap);
        if (!g) {
            srv_budget_give(ncap - m->cap);
            return 0;
        }
        m->h = g;
        m->h->charged = ncap;
        m->cap = ncap;
    }
    memcpy((char *)(m->h + 1) + m->pos, buf, n);
    m->pos += n;
    return (ssize_t)n;
}

static int ms_seek(void *cookie, off64_t *off, int whence)
{
    mstream *m = cookie;
    off64_t to = whence == SEEK_SET ? *off
               : whence == SEEK_CUR ? (off64_t)m->pos + *off : -1;

    if (to < 0 || (size_t)to > m->pos)
        return -1; /* only back, as rewind does */
    m->pos = (size_t)to;
    *off = to;
    return 0;
}

static int ms_close(void *cookie)
{
    mstream *m = cookie;
    int over = *m->over;

    if (m->h) {
        ((char *)(m->h + 1))[m->pos] = '\0';
        *m->body = (char *)(m->h + 1);
    } else {
        *m->body = NULL;
    }
    *m->len = m->pos;
    free(m);
    return over ? -1 : 0;
}

FILE *srv_budget_stream(const srv *s, char **body, size_t *len, int *over)
{
    cookie_io_functions_t io = {NULL, ms_write, ms_seek, ms_close};
    mstream *m = calloc(1, sizeof *m);
    FILE *f;

    *body = NULL;
    *len = 0;
    *over = 0;
    if (!m)
        return NULL;
    m->s = s;
    m->body = body;
    m->len = len;
    m->over = over;
    if (!(f = fopencookie(m, "w", io)))
        free(m);
    return f;
}

/* ---- render slots ----------------------------------------------------------- */

static unsigned slots_of(const srv *s)
{
    unsigned t = s && s->o && s->o->threads ? s->o->threads : 1;

    return t > 1 ? t - 1 : 1;
}

int srv_render_enter(const srv *s)
{
    unsigned cur = atomic_load(&render_busy), cap = slots_of(s);

    do {
        if (cur >= cap)
            return -1;
    } while (!atomic_compare_exchange_weak(&render_busy, &cur, cur + 1));
    return 0;
}

void srv_render_leave(void)
{
    atomic_fetch_sub(&render_busy, 1);
}

/* ---- the test hook ------------------------------------------------------------ */

/* OPTIPIPE_SERVE_TEST_HOLD=DIR (tests only): a render thread, before its
 * handler runs, writes DIR/held.<n> (n counting from 1) and waits until
 * DIR/release exists (polling, at most 120 s), so a test can hold every
 * renderer busy and show what still answers, without timing. */
void srv_test_hold_render(void)
{
    static atomic_uint n;
    const char *dir = getenv("OPTIPIPE_SERVE_TEST_HOLD");
    char path[4096];
    FILE *f;
    int i;

    if (!dir || !*dir)
        return;
    snprintf(path, sizeof path, "%s/held.%u", dir, atomic_fetch_add(&n, 1) + 1);
    if ((f = fopen(path, "w")))
        fclose(f);
    snprintf(path, sizeof path, "%s/release", dir);
    for (i = 0; i < 1200 && access(path, F_OK) != 0; i++)
        usleep(100 * 1000);
}
