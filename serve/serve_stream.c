/*
 * serve_stream.c - a page sent while it is rendered (issue #24): the
 * handler runs in a render thread of its own and writes into a FILE whose
 * bytes go to the client in chunks, so what a page holds is a few chunks,
 * never the whole page. The first chunk is kept until it is full or the
 * handler ends: a page that fits in it is answered whole (with its status,
 * and an error can still replace it: rewind), a longer one is committed
 * (its headers built, then sent) and streamed. After the commit a rewind
 * (an error half-way) cannot take back what was sent: the stream is
 * broken and the connection ends without the last chunk, so the client
 * sees a cut answer, never a complete-looking wrong one.
 *
 * No libmicrohttpd here: serve_http.c gives the callbacks that commit (make
 * the response) and wake (resume the suspended connection). Every chunk is
 * charged to --server-memory (serve_budget.c).
 */
#define _GNU_SOURCE /* fopencookie */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "serve.h"

typedef struct chunk {
    struct chunk *next;
    size_t len, off; /* bytes in it, bytes already read */
    char *data;      /* srv_budget_alloc'd */
} chunk;

struct srv_pipe {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    const srv *s;
    size_t chunk_max, depth;
    srv_pipe_cb commit, wake;
    void *ud;
    /* the chunk being written: grows from 4 KiB to chunk_max before the
     * commit (a small page costs little), chunk_max after */
    char *cur;
    size_t cur_cap, cur_len;
    chunk *head, *tail; /* full chunks the reader has not taken */
    size_t nq;
    int committed, done, broken, gone, want_wake, over;
    int failed; /* a write failed: an uncommitted page is not whole */
    char **body; /* where srv_pipe_file's fclose leaves an uncommitted body */
    size_t *blen;
    int *over_out;
};

static atomic_int stopping;

void srv_pipes_stop(void)
{
    atomic_store(&stopping, 1);
}

/* Under p->mu. Whether the reader asked to be woken (then cleared): the
 * caller wakes it after unlocking. */
static int take_wake(srv_pipe *p)
{
    int w = p->want_wake;

    p->want_wake = 0;
    return w;
}

static void unlock_wake(srv_pipe *p, int wake)
{
    pthread_mutex_unlock(&p->mu);
    if (wake && p->wake)
        p->wake(p->ud);
}

/* Under p->mu: cur (cur_len bytes) joins the queue; a fresh cur follows
 * on the next write. */
static int push_cur(srv_pipe *p)
{
    chunk *c;

    if (!p->cur_len)
        return 0;
    if (!(c = calloc(1, sizeof *c)))
        return -1;
    c->data = p->cur;
    c->len = p->cur_len;
    p->cur = NULL;
    p->cur_cap = p->cur_len = 0;
    if (p->tail)
        p->tail->next = c;
    else
        p->head = c;
    p->tail = c;
    p->nq++;
    return 0;
}

/* Under p->mu: room for at least one more byte in cur; -1 (over the
 * budget, or out of memory) when there is none. */
static int room(srv_pipe *p)
{
    size_t ncap;
    char *g;

    if (p->cur_len < p->cur_cap)
        return 0;
    ncap = p->cur_cap ? p->cur_cap * 2 : 4096;
    if (ncap > p->chunk_max)
        ncap = p->chunk_max;
    if (!(g = srv_budget_realloc(p->s, p->cur, ncap + 1))) { /* + a NUL */
        p->over = 1;
        return -1;
    }
    p->cur = g;
    p->cur_cap = ncap;
    return 0;
}

/* Under p->mu, cur full before the commit: builds the response (unlocked:
 * the reader cannot run before the commit, its connection is suspended). */
static int commit(srv_pipe *p)
{
    int rc;

    pthread_mutex_unlock(&p->mu);
    rc = p->commit ? p->commit(p->ud) : 0;
    pthread_mutex_lock(&p->mu);
    if (rc)
        return -1;
    p->committed = 1;
    return 0;
}

static ssize_t pipe_write(void *cookie, const char *buf, size_t n)
{
    srv_pipe *p = cookie;
    size_t done = 0;
    int wake = 0;

    pthread_mutex_lock(&p->mu);
    while (done < n) {
        size_t k;
        if (p->gone || p->broken || atomic_load(&stopping))
            break;
        if (p->cur_len == p->chunk_max) {
            if (!p->committed && commit(p)) {
                p->broken = 1;
                break;
            }
            /* at most depth chunks wait for the reader; the timed wait
             * only notices srv_pipes_stop (the reader signals) */
            while (p->nq >= p->depth && !p->gone && !atomic_load(&stopping)) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += 100 * 1000 * 1000;
                if (ts.tv_nsec >= 1000000000L) {
                    ts.tv_sec++;
                    ts.tv_nsec -= 1000000000L;
                }
                pthread_cond_timedwait(&p->cv, &p->mu, &ts);
            }
            if (p->gone || atomic_load(&stopping) || push_cur(p))
                break;
            wake |= take_wake(p);
        }
        if (room(p))
            break;
        k = p->cur_cap - p->cur_len;
        if (k > n - done)
            k = n - done;
        memcpy(p->cur + p->cur_len, buf + done, k);
        p->cur_len += k;
        done += k;
    }
    if (done < n) {
        p->failed = 1;
        if (p->committed)
            p->broken = 1; /* sent so far, and no more: a cut answer */
    }
    unlock_wake(p, wake);
    return done == n ? (ssize_t)n : 0; /* 0: an error (ferror) */
}

static int pipe_seek(void *cookie, off64_t *off, int whence)
{
    srv_pipe *p = cookie;
    int rc = -1;

    pthread_mutex_lock(&p->mu);
    if (p->committed) {
        p->broken = 1; /* what was sent stays sent */
    } else if (whence == SEEK_SET && *off >= 0 && (size_t)*off <= p->cur_len) {
        p->cur_len = (size_t)*off;
        rc = 0;
    } else if (whence == SEEK_CUR && *off == 0) {
        *off = (off64_t)p->cur_len;
        rc = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

/* fclose: a committed page's last chunk joins the queue; an uncommitted
 * one is handed out whole, as srv_budget_stream does. The reader learns
 * of the end from srv_pipe_finish, once the writer's side is settled. */
static int pipe_close(void *cookie)
{
    srv_pipe *p = cookie;
    int rc;

    pthread_mutex_lock(&p->mu);
    if (p->committed) {
        if (push_cur(p))
            p->broken = 1;
        *p->body = NULL;
        *p->blen = 0;
    } else {
        *p->body = p->cur;
        *p->blen = p->cur_len;
        if (p->cur)
            p->cur[p->cur_len] = '\0'; /* room() keeps a byte for it */
        p->cur = NULL;
        p->cur_cap = p->cur_len = 0;
    }
    *p->over_out = p->over;
    rc = p->over || (!p->committed && p->failed) ? -1 : 0;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

srv_pipe *srv_pipe_new(const srv *s, size_t chunk_max, size_t depth,
                       srv_pipe_cb commit_cb, srv_pipe_cb wake_cb, void *ud)
{
    srv_pipe *p = calloc(1, sizeof *p);

    if (!p)
        return NULL;
    if (pthread_mutex_init(&p->mu, NULL)) {
        free(p);
        return NULL;
    }
    if (pthread_cond_init(&p->cv, NULL)) {
        pthread_mutex_destroy(&p->mu);
        free(p);
        return NULL;
    }
    p->s = s;
    p->chunk_max = chunk_max > 4096 ? chunk_max : 4096;
    p->depth = depth ? depth : 1;
    p->commit = commit_cb;
    p->wake = wake_cb;
    p->ud = ud;
    return p;
}

FILE *srv_pipe_file(srv_pipe *p, char **body, size_t *len, int *over)
{
    cookie_io_functions_t io = {NULL, pipe_write, pipe_seek, pipe_close};

    *body = NULL;
    *len = 0;
    *over = 0;
    p->body = body;
    p->blen = len;
    p->over_out = over;
    return fopencookie(p, "w", io);
}

void srv_pipe_lock(srv_pipe *p)
{
    pthread_mutex_lock(&p->mu);
}

void srv_pipe_unlock(srv_pipe *p)
{
    pthread_mutex_unlock(&p->mu);
}

void srv_pipe_want_wake(srv_pipe *p)
{
    p->want_wake = 1;
}

int srv_pipe_state(srv_pipe *p)
{
    return p->committed ? SRV_PIPE_COMMITTED : p->done ? SRV_PIPE_DONE
                                                       : SRV_PIPE_RENDERING;
}

void srv_pipe_finish(srv_pipe *p)
{
    int wake;

    pthread_mutex_lock(&p->mu);
    p->done = 1;
    wake = take_wake(p);
    unlock_wake(p, wake);
}

ssize_t srv_pipe_read(srv_pipe *p, char *buf, size_t max,
                      void (*suspend)(void *), void *ud)
{
    ssize_t n;

    pthread_mutex_lock(&p->mu);
    if (p->head) {
        chunk *c = p->head;
        size_t k = c->len - c->off;
        if (k > max)
            k = max;
        memcpy(buf, c->data + c->off, k);
        c->off += k;
        if (c->off == c->len) {
            p->head = c->next;
            if (!p->head)
                p->tail = NULL;
            p->nq--;
            srv_budget_free(c->data);
            free(c);
            pthread_cond_signal(&p->cv);
        }
        n = (ssize_t)k;
    } else if (p->broken) {
        n = SRV_PIPE_BROKEN;
    } else if (p->done) {
        n = SRV_PIPE_END;
    } else {
        p->want_wake = 1;
        if (suspend)
            suspend(ud); /* under the lock: before any wake */
        n = 0;
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}

void srv_pipe_gone(srv_pipe *p)
{
    pthread_mutex_lock(&p->mu);
    p->gone = 1;
    p->want_wake = 0;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void srv_pipe_free(srv_pipe *p)
{
    chunk *c, *next;

    if (!p)
        return;
    for (c = p->head; c; c = next) {
        next = c->next;
        srv_budget_free(c->data);
        free(c);
    }
    srv_budget_free(p->cur);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
