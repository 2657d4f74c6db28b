/*
 * flink_polls.c - the index of a parse's responses: every classified
 * response of every poll, sorted by (endpoint, job, vertex, poll,
 * position), and the lookups flink_job.c and flink_checkpoints.c make in it
 * (fl_find and friends, flink_internal.h). Its own file so that the job and
 * checkpoint builders depend on the index, not on the plugin's entry
 * (flink.c), which calls them: no cycle between the files.
 *
 * Lookups binary-search the index, keeping a parse O(n log n) in the number
 * of vertices and responses (a scan per lookup was quadratic).
 */
#include <stdlib.h>
#include <string.h>

#include "flink_internal.h"

/* A response that is null (not one op_json_tidy made so and reported):
 * absent, like an error body. */
int fl_null_resp(const cJSON *resp)
{
    return cJSON_IsNull(resp) && !(resp->type & OP_JSON_TIDIED);
}

static int entry_matches(const fl_entry *e, enum fl_ep ep, const char *jid,
                         const char *vid, int64_t num)
{
    if (e->path.ep != ep)
        return 0;
    if (jid && strcmp(e->path.jid, jid))
        return 0;
    if (vid && strcmp(e->path.vid, vid))
        return 0;
    if (num >= 0 && e->path.num != num)
        return 0;
    return !e->err;
}

/* Index order: endpoint, jid, vid, then poll and position, so that the
 * entries of one (endpoint, jid, vid) are contiguous and in poll order. */
static int key_cmp(const fl_entry *e, enum fl_ep ep, const char *jid,
                   const char *vid)
{
    int d;

    if (e->path.ep != ep)
        return e->path.ep < ep ? -1 : 1;
    if (!jid)
        return 0;
    if ((d = strcmp(e->path.jid, jid)))
        return d;
    return vid ? strcmp(e->path.vid, vid) : 0;
}

static int idx_cmp(const void *a, const void *b)
{
    const fl_entry *x = *(const fl_entry *const *)a;
    const fl_entry *y = *(const fl_entry *const *)b;
    int d = key_cmp(x, y->path.ep, y->path.jid, y->path.vid);

    if (d)
        return d;
    if (x->poll != y->poll)
        return x->poll < y->poll ? -1 : 1;
    return x->pos < y->pos ? -1 : (x->pos > y->pos);
}

/* [*lo, *hi) of the index entries whose key starts with (ep, jid, vid);
 * a NULL jid or vid matches any (vid is ignored without jid). */
static void idx_range(const fl_ctx *c, enum fl_ep ep, const char *jid,
                      const char *vid, size_t *lo, size_t *hi)
{
    size_t a = 0, b = c->nidx;

    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (key_cmp(c->idx[mid], ep, jid, vid) < 0)
            a = mid + 1;
        else
            b = mid;
    }
    *lo = a;
    b = c->nidx;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (key_cmp(c->idx[mid], ep, jid, vid) <= 0)
            a = mid + 1;
        else
            b = mid;
    }
    *hi = a;
}

/* The range is ordered by (poll, pos) when all its entries share jid and
 * vid (always so when both are given; in practice nearly always). */
static int idx_uniform(const fl_ctx *c, size_t lo, size_t hi)
{
    const fl_entry *a, *b;

    if (hi - lo < 2)
        return 1;
    a = c->idx[lo];
    b = c->idx[hi - 1];
    return !strcmp(a->path.jid, b->path.jid) &&
           !strcmp(a->path.vid, b->path.vid);
}

/* What fl_find and friends look for; NULL jid / vid match any. */
typedef struct fl_query {
    enum fl_ep ep;
    const char *jid, *vid;
    int64_t num;
} fl_query;

static int query_matches(const fl_entry *e, const fl_query *q)
{
    return entry_matches(e, q->ep, q->jid, q->vid, q->num);
}

/* Which matching entry wins: in poll p (want == 0), the newest (> 0) or
 * the oldest (< 0) poll; within a poll the first one. */
static int better(const fl_entry *e, const fl_entry *best, int want)
{
    if (!best)
        return 1;
    if (e->poll != best->poll)
        return want > 0 ? e->poll > best->poll : e->poll < best->poll;
    return e->pos < best->pos;
}

/* A range that mixes ids (a wildcard over several): look at every entry. */
static const fl_entry *pick_scan(const fl_ctx *c, size_t lo, size_t hi,
                                 const fl_query *q, size_t p, int want)
{
    const fl_entry *best = NULL;
    size_t i;

    for (i = lo; i < hi; i++) {
        const fl_entry *e = c->idx[i];
        if ((want || e->poll == p) && query_matches(e, q) &&
            better(e, best, want))
            best = e;
    }
    return best;
}

/* The newest match of a range in poll order: the last match gives the
 * poll, the first match within that poll is the answer. */
static const fl_entry *pick_newest(const fl_ctx *c, size_t lo, size_t hi,
                                   const fl_query *q)
{
    const fl_entry *best = NULL;
    size_t i;

    for (i = hi; i-- > lo;) {
        const fl_entry *e = c->idx[i];
        if (best && e->poll != best->poll)
            break;
        if (query_matches(e, q))
            best = e;
    }
    return best;
}

/* The oldest match of a range in poll order: its first match. */
static const fl_entry *pick_oldest(const fl_ctx *c, size_t lo, size_t hi,
                                   const fl_query *q)
{
    size_t i;

    for (i = lo; i < hi; i++)
        if (query_matches(c->idx[i], q))
            return c->idx[i];
    return NULL;
}

/* The first match of poll p in a range in poll order. */
static const fl_entry *pick_in_poll(const fl_ctx *c, size_t lo, size_t hi,
                                    const fl_query *q, size_t p)
{
    size_t a = lo, b = hi, i;

    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (c->idx[mid]->poll < p)
            a = mid + 1;
        else
            b = mid;
    }
    for (i = a; i < hi && c->idx[i]->poll == p; i++)
        if (query_matches(c->idx[i], q))
            return c->idx[i];
    return NULL;
}

/* The entry fl_find (want == 0, poll p), fl_find_newest (want > 0) or
 * fl_find_oldest (want < 0) answers with: the one a scan of the polls in
 * order would find. */
static const fl_entry *idx_pick(const fl_ctx *c, const fl_query *q, size_t p,
                                int want)
{
    size_t lo, hi;

    idx_range(c, q->ep, q->jid, q->vid, &lo, &hi);
    if (!idx_uniform(c, lo, hi))
        return pick_scan(c, lo, hi, q, p, want);
    if (want > 0)
        return pick_newest(c, lo, hi, q);
    if (want < 0)
        return pick_oldest(c, lo, hi, q);
    return pick_in_poll(c, lo, hi, q, p);
}

const cJSON *fl_find(const fl_ctx *c, size_t p, enum fl_ep ep,
                     const char *jid, const char *vid, int64_t num)
{
    fl_query q = {ep, jid, vid, num};
    const fl_entry *e;

    if (p >= c->npolls)
        return NULL;
    e = idx_pick(c, &q, p, 0);
    return e ? e->resp : NULL;
}

const cJSON *fl_find_newest(const fl_ctx *c, enum fl_ep ep, const char *jid,
                            const char *vid, size_t *poll)
{
    fl_query q = {ep, jid, vid, -1};
    const fl_entry *e = idx_pick(c, &q, 0, 1);

    if (!e)
        return NULL;
    if (poll)
        *poll = e->poll;
    return e->resp;
}

const cJSON *fl_find_oldest(const fl_ctx *c, enum fl_ep ep, const char *jid,
                            const char *vid, size_t *poll)
{
    fl_query q = {ep, jid, vid, -1};
    const fl_entry *e = idx_pick(c, &q, 0, -1);

    if (!e)
        return NULL;
    if (poll)
        *poll = e->poll;
    return e->resp;
}

size_t fl_entries(const fl_ctx *c, enum fl_ep ep, const char *jid,
                  const char *vid, const fl_entry *const **out)
{
    size_t lo, hi;

    if (!c->nidx) {
        *out = NULL;
        return 0;
    }
    idx_range(c, ep, jid, vid, &lo, &hi);
    *out = c->idx + lo;
    return hi - lo;
}

int fl_entry_at(const fl_ctx *c, size_t p, size_t i, const fl_path **path,
                const cJSON **resp)
{
    const fl_pollx *x;

    if (p >= c->npolls)
        return 0;
    x = &c->px[p];
    if (i >= x->n)
        return 0;
    *path = &x->e[i].path;
    *resp = x->e[i].resp;
    return 1;
}

int fl_index_build(fl_ctx *c, fl_pollx *px, op_error *err)
{
    const fl_entry **idx;
    size_t p, i, n = 0;

    for (p = 0; p < c->npolls; p++)
        n += px[p].n;
    if (!n)
        return OP_OK;
    idx = malloc(n * sizeof *idx);
    if (!idx)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            c->input);
    n = 0;
    for (p = 0; p < c->npolls; p++)
        for (i = 0; i < px[p].n; i++) {
            fl_entry *e = &px[p].e[i];
            e->poll = p;
            e->pos = i;
            e->err = fl_error_body(e->resp) != NULL || fl_null_resp(e->resp);
            idx[n++] = e;
        }
    qsort(idx, n, sizeof *idx, idx_cmp);
    c->idx = idx;
    c->nidx = n;
    return OP_OK;
}
