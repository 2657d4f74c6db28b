/*
 * emit_stored.c - config patches from the run store (emit_stored.h): the
 * stored findings of a run become findings again (rule, fingerprints,
 * node and its name, message, changes), the store's decisions select the
 * approved ones, and emit_changes.c's emit_run writes them through the
 * run's engine, so a patch downloaded from the server is the one
 * `analyze --emit-changes` writes.
 */
#include "emit_stored.h"

#include <stdlib.h>
#include <string.h>

#include <optipipe/grow.h>

#include "model.h"
#include "util.h"

/* One stored run: what its patch header and file name need. */
typedef struct srun {
    int64_t pk;
    char *source, *id, *name;
    int found;
} srun;

typedef struct ctx {
    store *s;
    const baseline *bl;
    results res;  /* the run's selected findings */
    size_t nread; /* the run's findings read */
    op_error *err;
    int oom;
} ctx;

static int run_cb(void *ud, const store_run *r)
{
    srun *o = ud;
    int oom = 0;

    o->pk = r->pk;
    o->source = util_strdup(r->source, &oom);
    o->id = util_strdup(r->run_id, &oom);
    o->name = util_strdup(r->name, &oom);
    o->found = 1;
    return oom ? OP_ENOMEM : 0;
}

/* A stored finding as emit_run reads one: the fields a writer or the
 * cited comment use. */
static int finding_of(finding *f, const store_finding *sf)
{
    int oom = 0, sev = severity_parse(sf->severity);

    memset(f, 0, sizeof *f);
    f->rule = util_strdup(sf->rule, &oom);
    f->node_id = util_strdup(sf->node, &oom);
    f->message = util_strdup(sf->message, &oom);
    f->sev = sev < 0 ? SEV_INFO : (severity)sev;
    f->impact_ms = sf->impact_ms;
    snprintf(f->fingerprint, sizeof f->fingerprint, "%s", sf->fingerprint);
    snprintf(f->legacy_fp, sizeof f->legacy_fp, "%s",
             sf->legacy_fp ? sf->legacy_fp : sf->fingerprint);
    f->changes = sf->changes_json ? cJSON_Parse(sf->changes_json) : NULL;
    if (!f->changes)
        f->changes = cJSON_CreateArray(); /* none, or not ours: no change */
    return oom || !f->changes ? OP_ENOMEM : 0;
}

static void finding_drop(finding *f)
{
    cJSON_Delete(f->changes);
    free(f->rule);
    free(f->node_id);
    free(f->message);
}

static int finding_cb(void *ud, const store_finding *sf)
{
    ctx *c = ud;
    finding f;
    int rc;

    if (++c->nread > EMIT_STORED_MAX_FINDINGS)
        return op_error_set(c->err, OP_ELIMIT, "%s: a run with more than %d "
                            "findings", store_path(c->s),
                            EMIT_STORED_MAX_FINDINGS);
    if ((rc = finding_of(&f, sf)) == 0 && !emit_selected(&f, c->bl, 0)) {
        finding_drop(&f); /* not approved */
        return 0;
    }
    if (rc || OP_GROW(c->res.f, c->res.cap, c->res.n + 1, 16)) {
        finding_drop(&f);
        return op_error_set(c->err, OP_ENOMEM, "out of memory");
    }
    c->res.f[c->res.n++] = f;
    return 0;
}

/* The node names of the selected findings (dbt's writer names the model
 * by it), as results_add_finding gives them: the name, else the id. */
static int node_cb(void *ud, const store_node *n)
{
    ctx *c = ud;
    size_t i;

    for (i = 0; i < c->res.n; i++) {
        finding *f = &c->res.f[i];
        if (f->node_id && !f->node_name && strcmp(f->node_id, n->id) == 0 &&
            !(f->node_name = util_strdup(n->name ? n->name : n->id, &c->oom)))
            return OP_ENOMEM;
    }
    return 0;
}

/* Writes the patch of one stored run's approved findings to fn. */
static int one_run(ctx *c, const srun *r, char names[][128], size_t *used,
                   FILE *diag, emit_patch_fn fn, void *ud, emit_stats *st)
{
    struct op_run run;
    const finding **fs = NULL;
    char name[160], *text = NULL;
    size_t len = 0, i;
    FILE *f = NULL;
    int rc;

    results_init(&c->res);
    c->nread = 0;
    if ((rc = store_each_finding(c->s, r->pk, finding_cb, c, c->err)) ||
        c->res.n == 0)
        goto out;
    if ((rc = store_each_node(c->s, r->pk, node_cb, c, c->err)))
        goto out;
    for (i = 0; i < c->res.n; i++)
        if (c->res.f[i].node_id && !c->res.f[i].node_name &&
            !(c->res.f[i].node_name = util_strdup(c->res.f[i].node_id,
                                                  &c->oom)))
            break;
    fs = malloc(c->res.n * sizeof *fs);
    if (c->oom || !fs || !(f = open_memstream(&text, &len))) {
        rc = op_error_set(c->err, OP_ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < c->res.n; i++)
        fs[i] = &c->res.f[i];
    memset(&run, 0, sizeof run);
    run.source = r->source;
    run.id = r->id;
    run.name = r->name;
    emit_file_name(&run, names, (*used)++, name, sizeof name);
    rc = emit_run(f, name, &run, fs, c->res.n, diag, &st->nrefused);
    if (fclose(f) != 0 || rc) {
        f = NULL;
        rc = op_error_set(c->err, OP_ENOMEM, "%s: out of memory", name);
        goto out;
    }
    f = NULL;
    if ((rc = fn(ud, name, text, len, c->err)) == 0)
        st->nfiles++;
out:
    if (f)
        fclose(f);
    free(text);
    free(fs);
    results_free(&c->res);
    return rc;
}

int emit_changes_stored(store *s, const char *const *run_ids, size_t nruns,
                        FILE *diag, emit_patch_fn fn, void *ud,
                        emit_stats *st, op_error *err)
{
    baseline bl;
    char (*names)[128] = NULL;
    size_t i, used = 0;
    ctx c;
    int rc;

    memset(st, 0, sizeof *st);
    memset(&c, 0, sizeof c);
    c.s = s;
    c.bl = &bl;
    c.err = err;
    if ((rc = store_load_decisions(s, &bl, err)))
        return rc;
    if (!(names = calloc(nruns + 1, sizeof *names))) {
        rc = op_error_set(err, OP_ENOMEM, "out of memory");
        goto out;
    }
    for (i = 0; i < nruns && !rc; i++) {
        srun r;
        memset(&r, 0, sizeof r);
        rc = store_find_run(s, run_ids[i], run_cb, &r, err);
        if (rc == OP_ENOMEM)
            rc = op_error_set(err, OP_ENOMEM, "out of memory");
        else if (!rc && !r.found && diag)
            fprintf(diag, "optipipe: %s: run %s is not stored (pruned?): no "
                    "patch\n", store_path(s), run_ids[i]);
        if (!rc && r.found)
            rc = one_run(&c, &r, names, &used, diag, fn, ud, st);
        free(r.source), free(r.id), free(r.name);
    }
out:
    free(names);
    baseline_free(&bl);
    return rc;
}
