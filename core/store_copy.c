/*
 * store_copy.c - `optipipe history copy SRC DST` (store.h store_copy,
 * docs/history.md "Copying a store"): every row of one run store into
 * another (runs with their nodes and findings, decisions, the decisions'
 * audit trail, what each webhook endpoint was told and the delivery log),
 * SQLite and PostgreSQL either way, over the backends' row
 * readers and writers (store_int.h). All or nothing: one transaction of
 * the destination, committed only when its counts equal the source's.
 */
#include "store_int.h"

#include <string.h>

typedef struct copy {
    store *src, *dst;
    int64_t pk;  /* the destination's key of the run being copied */
    int64_t seq; /* of its node or finding */
    store_counts n;
    op_error *err;
} copy;

static int copy_node(void *ud, const store_node *n)
{
    copy *c = ud;
    int rc = store_put_node(c->dst, c->pk, c->seq++, n, c->err);

    c->n.nodes += !rc;
    return rc;
}

static int copy_finding(void *ud, const store_finding *f)
{
    copy *c = ud;
    int rc = store_put_finding(c->dst, c->pk, c->seq++, f, c->err);

    c->n.findings += !rc;
    return rc;
}

static int copy_run(void *ud, const store_run *r)
{
    copy *c = ud;
    int rc;

    if ((rc = store_put_run(c->dst, r, &c->pk, c->err)))
        return rc;
    c->n.runs++;
    c->seq = 0;
    if ((rc = store_each_node(c->src, r->pk, copy_node, c, c->err)))
        return rc;
    c->seq = 0;
    return store_each_finding(c->src, r->pk, copy_finding, c, c->err);
}

static int copy_decision(void *ud, const store_decision *d)
{
    copy *c = ud;
    int rc = store_put_decision(c->dst, d, c->err);

    c->n.decisions += !rc;
    return rc;
}

static int copy_change(void *ud, const store_decision_change *d)
{
    copy *c = ud;
    int rc = store_put_change(c->dst, d, c->err);

    c->n.changes += !rc;
    return rc;
}

static int copy_said(void *ud, const store_said *n)
{
    copy *c = ud;
    int rc = store_put_said(c->dst, n, c->err);

    c->n.said += !rc;
    return rc;
}

static int copy_delivery(void *ud, const store_notification *n)
{
    copy *c = ud;
    int rc = store_put_delivery(c->dst, n, c->err);

    c->n.deliveries += !rc;
    return rc;
}

/* The first table whose counts differ, or NULL. */
static const char *differs(const store_counts *a, const store_counts *b)
{
    return a->runs != b->runs               ? "runs"
           : a->nodes != b->nodes           ? "nodes"
           : a->findings != b->findings     ? "findings"
           : a->decisions != b->decisions   ? "decisions"
           : a->changes != b->changes       ? "decision changes"
           : a->said != b->said             ? "notifications remembered"
           : a->deliveries != b->deliveries ? "deliveries logged" : NULL;
}

/* Inside dst's transaction: dst empty, the rows, the counts checked. */
static int copy_rows(copy *c, const store_counts *want)
{
    store_counts had, got;
    const char *t;
    int rc;

    if ((rc = store_count(c->dst, &had, c->err)))
        return rc;
    if (had.runs || had.decisions || had.changes || had.said ||
        had.deliveries)
        return op_error_set(c->err, OP_EUSAGE, "%s: holds %lld runs, %lld "
                            "decisions, %lld decision changes and %lld "
                            "notification rows already: copy into a new file "
                            "or an empty database", store_path(c->dst),
                            (long long)had.runs, (long long)had.decisions,
                            (long long)had.changes,
                            (long long)(had.said + had.deliveries));
    if ((rc = store_each_run_all(c->src, copy_run, c, c->err)) ||
        (rc = store_each_decision(c->src, NULL, copy_decision, c, c->err)) ||
        (rc = store_each_change_all(c->src, copy_change, c, c->err)) ||
        (rc = store_each_said(c->src, copy_said, c, c->err)) ||
        (rc = store_each_delivery_all(c->src, copy_delivery, c, c->err)) ||
        (rc = store_count(c->dst, &got, c->err)))
        return rc;
    if ((t = differs(&got, want)) || (t = differs(&c->n, want)))
        return op_error_set(c->err, OP_EIO, "%s: the copy's %s do not add up "
                            "(%lld runs, %lld nodes, %lld findings, %lld "
                            "decisions, %lld decision changes, %lld "
                            "notifications remembered, %lld deliveries "
                            "logged; %s has %lld, %lld, %lld, %lld, %lld, "
                            "%lld, %lld): nothing copied",
                            store_path(c->dst), t, (long long)got.runs,
                            (long long)got.nodes, (long long)got.findings,
                            (long long)got.decisions, (long long)got.changes,
                            (long long)got.said, (long long)got.deliveries,
                            store_path(c->src), (long long)want->runs,
                            (long long)want->nodes, (long long)want->findings,
                            (long long)want->decisions,
                            (long long)want->changes, (long long)want->said,
                            (long long)want->deliveries);
    return 0;
}

int store_copy(store *src, store *dst, store_counts *copied, op_error *err)
{
    copy c;
    store_counts want;
    op_error ignore;
    int rc;

    memset(&c, 0, sizeof c);
    c.src = src, c.dst = dst, c.err = err;
    if (copied)
        memset(copied, 0, sizeof *copied);
    if ((rc = store_snapshot(src, 1, err)))
        return rc;
    if (!(rc = store_count(src, &want, err)) &&
        !(rc = store_tx(dst, 1, 0, err))) {
        rc = copy_rows(&c, &want);
        if (rc)
            store_tx(dst, 0, 0, &ignore);
        else
            rc = store_tx(dst, 0, 1, err);
    }
    store_snapshot(src, 0, &ignore);
    if (!rc && copied)
        *copied = c.n;
    return rc;
}
