/*
 * cmd_diff.c - `optipipe diff A B` (docs/cli.md#diff): resolves each side
 * to one run - an input read through the analysis session, or a run of
 * the run store (JOB@latest, JOB@previous, JOB@best, a run id) - and
 * writes what diff_runs() found in the chosen format. Its options are in
 * cli_table.c.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "diff.h"
#include "store.h"

/* ---- an input ------------------------------------------------------------------ */

static int is_input(const char *ref)
{
    struct stat st;

    return stat(ref, &st) == 0 || !strncmp(ref, "http://", 7) ||
           !strncmp(ref, "https://", 8);
}

/* Names the runs of an input that gave several, for the usage error. */
static int several_runs(const char *ref, const model *m, size_t n)
{
    char msg[OP_ERROR_MAX];
    size_t i, k = 0, len;

    len = (size_t)snprintf(msg, sizeof msg, "%s holds %zu runs, diff needs one "
                           "per side:", ref, n);
    for (i = 0; i < m->nruns && len < sizeof msg; i++) {
        const struct op_run *r = m->runs[i];
        if (r->superseded)
            continue;
        if (++k > 8) {
            snprintf(msg + len, sizeof msg - len, " ...");
            break;
        }
        len += (size_t)snprintf(msg + len, sizeof msg - len, " %s %s (%s)%s",
                                r->source, model_run_job(r), r->id,
                                k < n ? "," : "");
    }
    return cli_usage_error("%s", msg);
}

/* Reads ref with the analysis session (config, plugins, limits; no
 * baseline, records nothing) into *out. */
static int load_input(const cli_opts *base, const char *ref, cJSON **out)
{
    static cli_opts o; /* large (the inputs array); one side at a time */
    op_session s;
    op_error err;
    const struct op_run *one = NULL;
    size_t i, n = 0;
    int code;

    o = *base;
    o.inputs[0] = ref;
    o.ninputs = 1;
    o.record = 0;
    o.no_baseline = 1;
    code = cli_session_run(&s, &o, OP_SESSION_READ);
    for (i = 0; !code && i < s.an.m->nruns; i++)
        if (!s.an.m->runs[i]->superseded && ++n == 1)
            one = s.an.m->runs[i];
    if (!code && n != 1)
        code = n ? several_runs(ref, s.an.m, n)
                 : cli_usage_error("%s yields no run", ref);
    op_error_clear(&err);
    if (!code && diff_run_json(one, out, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        code = EXIT_NOINPUT;
    }
    op_session_free(&s);
    return code;
}

/* ---- a stored run -------------------------------------------------------------- */

typedef struct found {
    store *s;
    cJSON *run;
    double best_ms; /* JOB@best: the fastest so far */
    int best;
    int failed;     /* out of memory or a store error (in err) */
    op_error *err;
} found;

static int add_node(void *ud, const store_node *n)
{
    cJSON *arr = ud, *o = cJSON_CreateObject();
    int bad = !o || !cJSON_AddItemToArray(arr, o);

    if (bad) {
        cJSON_Delete(o);
        return 1;
    }
    if (n->id) bad |= !cJSON_AddStringToObject(o, "id", n->id);
    if (n->kind) bad |= !cJSON_AddStringToObject(o, "kind", n->kind);
    if (n->name) bad |= !cJSON_AddStringToObject(o, "name", n->name);
    if (n->status) bad |= !cJSON_AddStringToObject(o, "status", n->status);
    if (n->set & MSET_DURATION_MS)
        bad |= !cJSON_AddNumberToObject(o, "duration_ms", (double)n->duration_ms);
    if (n->set & MSET_PARALLELISM)
        bad |= !cJSON_AddNumberToObject(o, "parallelism", (double)n->parallelism);
    return bad;
}

/* A stored JSON column (written by optipipe) as an object; an unreadable
 * one is an empty object, the store already checked its size. */
static int add_json(cJSON *o, const char *key, const char *text)
{
    cJSON *v = text ? cJSON_Parse(text) : NULL;

    if (!cJSON_IsObject(v)) {
        cJSON_Delete(v);
        v = cJSON_CreateObject();
    }
    if (!v || !cJSON_AddItemToObject(o, key, v)) {
        cJSON_Delete(v);
        return 1;
    }
    return 0;
}

/* The stored run r in the shape diff_run_json writes. */
static int stored_json(found *fd, const store_run *r, cJSON **out)
{
    cJSON *o = cJSON_CreateObject(), *nodes = cJSON_CreateArray();
    const char *strs[][2] = {{"source", r->source}, {"id", r->run_id},
        {"job", r->job}, {"name", r->name}, {"status", r->status},
        {"engine_version", r->engine_version}, {"origin", r->origin}};
    size_t i;
    int bad = !o || !nodes;

    for (i = 0; !bad && i < sizeof strs / sizeof *strs; i++)
        if (strs[i][1])
            bad |= !cJSON_AddStringToObject(o, strs[i][0], strs[i][1]);
    if (!bad && (r->set & MSET_STARTED_AT))
        bad |= !cJSON_AddNumberToObject(o, "started_at", (double)r->started_at);
    if (!bad && (r->set & MSET_DURATION_MS))
        bad |= !cJSON_AddNumberToObject(o, "duration_ms", (double)r->duration_ms);
    bad = bad || add_json(o, "config", r->config_json) ||
          add_json(o, "metrics", r->metrics_json);
    if (!bad && !cJSON_AddItemToObject(o, "nodes", nodes))
        bad = 1;
    else if (!bad)
        nodes = NULL; /* o owns it */
    if (!bad && store_each_node(fd->s, r->pk, add_node,
                                cJSON_GetObjectItemCaseSensitive(o, "nodes"),
                                fd->err))
        bad = 1;
    cJSON_Delete(nodes);
    if (bad) {
        cJSON_Delete(o);
        if (!fd->err->msg[0])
            op_error_set(fd->err, OP_ENOMEM, "diff: out of memory");
        return 1;
    }
    *out = o;
    return 0;
}

static int take_run(void *ud, const store_run *r)
{
    found *fd = ud;
    cJSON *o;

    if (fd->best && (!r->status || strcmp(r->status, "succeeded") ||
                     !(r->set & MSET_DURATION_MS) ||
                     (fd->run && (double)r->duration_ms >= fd->best_ms)))
        return 0;
    if (stored_json(fd, r, &o)) {
        fd->failed = 1;
        return 1;
    }
    cJSON_Delete(fd->run);
    fd->run = o;
    fd->best_ms = (double)r->duration_ms;
    return fd->best ? 0 : 1; /* one run, unless looking for the best */
}

int diff_stored_run(store *st, const char *ref, cJSON **out, op_error *err)
{
    size_t n = strlen(ref);
    found fd;
    int rc;

    memset(&fd, 0, sizeof fd);
    fd.s = st;
    fd.err = err;
    if (n > 5 && !strcmp(ref + n - 5, "@best")) {
        char job[4096];
        snprintf(job, sizeof job, "%.*s", (int)(n - 5), ref);
        fd.best = 1;
        rc = store_each_run(st, job, NULL, NULL, 0, STORE_HISTORY_MAX, take_run,
                            &fd, err);
    } else {
        rc = store_find_run(st, ref, take_run, &fd, err);
    }
    if (fd.failed || (rc && rc != 1)) {
        cJSON_Delete(fd.run);
        return err->code ? err->code : OP_EIO;
    }
    if (!fd.run)
        return op_error_set(err, OP_ENOTFOUND, "%s: no stored run '%s' (a "
                            "stored run is JOB@latest, JOB@previous, JOB@best "
                            "or a run id; `optipipe history jobs` lists the "
                            "jobs)", store_path(st), ref);
    *out = fd.run;
    return 0;
}

/* Resolves ref in st into *out, saying what failed. */
static int load_stored(store *st, const char *ref, cJSON **out)
{
    op_error err;
    int rc;

    op_error_clear(&err);
    if (!(rc = diff_stored_run(st, ref, out, &err)))
        return 0;
    diag_msg(DIAG_ERROR, "%s", err.msg);
    return rc == OP_ENOTFOUND ? EXIT_USAGE : EXIT_NOINPUT;
}

/* Opens the run store for stored sides once (read-only). */
static int open_store(const cli_opts *o, const char *ref, store **st)
{
    config cfg;
    op_error err;
    const char *path;
    int code = 0;

    if (*st)
        return 0;
    config_init(&cfg);
    op_error_clear(&err);
    if (!o->no_config && !o->history && config_find(o->config_path, &cfg, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        code = EXIT_USAGE;
    } else if (!(path = cli_history_path(o->history, &cfg))) {
        diag_msg(DIAG_ERROR, "'%s' is no file or folder, and there is no run "
                 "store to look it up in: give --history FILE, set "
                 "OPTIPIPE_HISTORY or `history` in optipipe.lua", ref);
        code = EXIT_USAGE;
    } else if (store_open(path, 0, st, &err)) {
        diag_msg(DIAG_ERROR, "%s (needed for '%s')", err.msg, ref);
        code = EXIT_USAGE;
    }
    config_free(&cfg);
    return code;
}

/* ---- the command --------------------------------------------------------------- */

static int write_diff(const cli_opts *o, cJSON *const run[2])
{
    diff_opts dopt = {o->top, o->ignore_keys, o->nignore_keys};
    cJSON *d = NULL;
    op_error err;
    FILE *f;
    int code = EXIT_DONE;

    op_error_clear(&err);
    if (diff_runs(run[0], o->inputs[0], run[1], o->inputs[1], &dopt, &d, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return EXIT_NOINPUT;
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "same_job")))
        diag_msg(DIAG_WARNING, "%s and %s are runs of different jobs (or "
                 "engines): the diff compares unrelated work", o->inputs[0],
                 o->inputs[1]);
    if (!(f = cli_open_output(o))) {
        code = EXIT_USAGE;
    } else {
        if (report_diff(f, o->format, d))
            diag_msg(DIAG_ERROR, "diff: writing the output failed");
        if (cli_close_output(o, f))
            code = EXIT_NOINPUT;
    }
    cJSON_Delete(d);
    return code;
}

int diff_main(int argc, char **argv)
{
    static cli_opts o;
    cJSON *run[2] = {NULL, NULL};
    store *st = NULL;
    int code, i;

    cli_opts_default(&o);
    if ((code = cli_parse_opts(&o, argc, argv, &cli_cmd_diff)))
        return code;
    if (o.ninputs != 2)
        return cli_usage_error("%s", "diff needs two runs: optipipe diff A B");
    for (i = 0; i < 2 && !code; i++) {
        if (is_input(o.inputs[i]))
            code = load_input(&o, o.inputs[i], &run[i]);
        else if (!(code = open_store(&o, o.inputs[i], &st)))
            code = load_stored(st, o.inputs[i], &run[i]);
    }
    if (!code)
        code = write_diff(&o, run);
    cJSON_Delete(run[0]);
    cJSON_Delete(run[1]);
    store_close(st);
    return code;
}
