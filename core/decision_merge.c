/*
 * decision_merge.c - the decisions of a file laid over a run store's,
 * newest first (decision_merge.h): what keeps an old
 * .optipipe-baseline.json from undoing a reviewer's newer decision.
 */
#include "decision_merge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <optipipe/grow.h>

#include "util.h"

typedef struct merge {
    baseline *file;
    decision_conflicts *out;
    op_error *err;
} merge;

static int same_text(const char *a, const char *b)
{
    return (!a || !*a) ? (!b || !*b) : (b && strcmp(a, b) == 0);
}

/* Whether b is strictly newer than a (NULL or "" is the oldest). */
static int newer(const char *b, const char *a)
{
    return b && *b && (!a || !*a || strcmp(b, a) > 0);
}

static int copy_decision(decision *to, const decision *from)
{
    int oom = 0;

    memset(to, 0, sizeof *to);
    memcpy(to->fingerprint, from->fingerprint, sizeof to->fingerprint);
    to->status = from->status;
    to->rule = util_strdup(from->rule, &oom);
    to->run = util_strdup(from->run, &oom);
    to->node = util_strdup(from->node, &oom);
    to->reason = util_strdup(from->reason, &oom);
    to->decided_at = util_strdup(from->decided_at, &oom);
    return oom ? OP_ENOMEM : 0;
}

static void conflict_free(decision_conflict *c)
{
    free(c->file.rule);
    free(c->file.run);
    free(c->file.node);
    free(c->file.reason);
    free(c->file.decided_at);
    free(c->rule);
    free(c->store_status);
    free(c->store_comment);
    free(c->store_at);
    free(c->store_by);
}

static int add_conflict(merge *m, const decision *f, const store_decision *d,
                        int store_won)
{
    decision_conflicts *o = m->out;
    decision_conflict *c;
    int oom = 0;

    if (OP_GROW(o->c, o->cap, o->n + 1, 8))
        return OP_ENOMEM;
    c = &o->c[o->n];
    memset(c, 0, sizeof *c);
    oom = copy_decision(&c->file, f) != 0;
    c->rule = util_strdup(d->rule, &oom);
    c->store_status = util_strdup(d->status, &oom);
    c->store_comment = util_strdup(d->comment, &oom);
    c->store_at = util_strdup(d->decided_at, &oom);
    c->store_by = util_strdup(d->decided_by, &oom);
    c->store_won = store_won;
    o->n++;
    return oom ? OP_ENOMEM : 0;
}

static int merge_one(void *ud, const store_decision *d)
{
    merge *m = ud;
    const decision *f = baseline_find(m->file, d->fingerprint);
    int st = decision_status_parse(d->status), won, rc;

    if (st < 0)
        return 0; /* store_load_decisions names such a row */
    if (f && (int)f->status == st && same_text(f->reason, d->comment))
        return 0;
    won = !f || newer(d->decided_at, f->decided_at);
    if (f && (rc = add_conflict(m, f, d, won)))
        return op_error_set(m->err, rc, "out of memory merging decisions");
    if (!won)
        return 0;
    rc = baseline_put(m->file, d->fingerprint, d->rule, d->run_id, d->node,
                      (decision_status)st, d->comment,
                      d->decided_at ? d->decided_at : "");
    return rc ? op_error_set(m->err, OP_ENOMEM, "out of memory merging "
                             "decisions") : 0;
}

int decision_merge_store(baseline *file, store *st, decision_conflicts *out,
                         op_error *err)
{
    merge m = {file, out, err};

    memset(out, 0, sizeof *out);
    return store_each_decision(st, NULL, merge_one, &m, err);
}

void decision_conflicts_free(decision_conflicts *c)
{
    size_t i;

    for (i = 0; i < c->n; i++)
        conflict_free(&c->c[i]);
    free(c->c);
    memset(c, 0, sizeof *c);
}

void decision_conflict_text(const decision_conflict *c, const char *file_path,
                            char *buf, size_t n)
{
    const decision *f = &c->file;

    snprintf(buf, n, "the decision of %s (%s) differs: %s says %s%s%.200s%s "
             "(decided %s), the run store says %s%s%.200s%s (decided %s by "
             "%.100s); the newer wins: %s", f->fingerprint,
             c->rule ? c->rule : "?", file_path ? file_path : "the file",
             decision_status_name(f->status), f->reason ? " '" : "",
             f->reason ? f->reason : "", f->reason ? "'" : "",
             f->decided_at && *f->decided_at ? f->decided_at : "at no time given",
             c->store_status ? c->store_status : "?",
             c->store_comment ? " '" : "",
             c->store_comment ? c->store_comment : "",
             c->store_comment ? "'" : "", c->store_at ? c->store_at : "?",
             c->store_by ? c->store_by : "a decisions file",
             c->store_won ? "the run store's" : "the file's");
}
