/*
 * model.c - the "model" input plugin: reads back the JSON that
 * `optipipe normalize --format json` writes ({"schema": 1, "runs": [...]},
 * docs/model.md), so a model can be saved, trimmed or written by hand and
 * analyzed again. Rule tests use it for inline models (a run written as a
 * Lua table in a *_test.lua file, docs/writing-rules.md).
 *
 * Derived fields (children, origin(s), history run ids, superseded) are
 * ignored: the host derives them again when the model is frozen.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <optipipe/json.h>
#include <optipipe/plugin.h>

#define MODEL_MAX_DOC ((size_t)1 << 30)
#define MODEL_MAX_DIST_VALUES 1000000

/* --- detection --------------------------------------------------------- */

static size_t skip_ws(const op_probe *p, size_t i)
{
    while (i < p->head_len && isspace(p->head[i]))
        i++;
    return i;
}

/* Matches `lit` at i (after blanks); returns the index after it or 0. */
static size_t expect(const op_probe *p, size_t i, const char *lit)
{
    size_t n = strlen(lit);

    i = skip_ws(p, i);
    if (i + n > p->head_len || memcmp(p->head + i, lit, n) != 0)
        return 0;
    return i + n;
}

/* Exactly `{ "schema": 1, "runs": [` at the start: what normalize writes,
 * and not the JSON report (whose second key is "optipipe_version"). */
static int model_detect(const op_probe *p)
{
    size_t i = 0;

    if (p->is_dir)
        return 0;
    if (p->head_len >= 3 && p->head[0] == 0xEF && p->head[1] == 0xBB &&
        p->head[2] == 0xBF)
        i = 3;
    if (!(i = expect(p, i, "{")) || !(i = expect(p, i, "\"schema\"")) ||
        !(i = expect(p, i, ":")) || !(i = expect(p, i, "1")) ||
        !(i = expect(p, i, ",")) || !(i = expect(p, i, "\"runs\"")) ||
        !(i = expect(p, i, ":")) || !(i = expect(p, i, "[")))
        return 0;
    return 100;
}

/* --- reading ------------------------------------------------------------ */

typedef struct rd {
    op_builder *b;
    const char *file;
    op_error *err;
} rd;

static int fail(rd *r, const char *where, const char *what)
{
    return op_error_set(r->err, OP_EPARSE, "%s: %s: %s", r->file, where, what);
}

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Whole numbers that a double holds exactly are integers, as in Lua. */
static int as_int(double v, int64_t *out)
{
    if (!isfinite(v) || v != floor(v) || fabs(v) > 9007199254740992.0)
        return 0;
    *out = (int64_t)v;
    return 1;
}

/* An empty Lua table arrives as {}: accept it where a list is expected. */
static int is_list(const cJSON *v)
{
    return cJSON_IsArray(v) || (cJSON_IsObject(v) && !v->child);
}

static int is_map(const cJSON *v)
{
    return cJSON_IsObject(v) || (cJSON_IsArray(v) && !v->child);
}

static int check_type(rd *r, const cJSON *v, int map, const char *where)
{
    if (!v || cJSON_IsNull(v) || (map ? is_map(v) : is_list(v)))
        return 0;
    return fail(r, where, map ? "must be an object" : "must be a list");
}

static int put_value(rd *r, op_record *rec, const cJSON *v, const char *where)
{
    int64_t i;

    if (cJSON_IsNumber(v)) {
        if (as_int(v->valuedouble, &i))
            op_record_int(r->b, rec, v->string, i);
        else
            op_record_num(r->b, rec, v->string, v->valuedouble);
    } else if (cJSON_IsString(v)) {
        op_record_str(r->b, rec, v->string, v->valuestring);
    } else if (cJSON_IsBool(v)) {
        op_record_bool(r->b, rec, v->string, cJSON_IsTrue(v));
    } else if (!cJSON_IsNull(v)) {
        return fail(r, where, "record values are numbers, strings or booleans");
    }
    return 0;
}

static int read_series(rd *r, op_run *run, const cJSON *series,
                       const char *where)
{
    const cJSON *s, *rec, *f;
    char at[256];
    int rc;

    if ((rc = check_type(r, series, 1, where)))
        return rc;
    cJSON_ArrayForEach(s, series) {
        snprintf(at, sizeof at, "%s.%s", where, s->string);
        if ((rc = check_type(r, s, 0, at)))
            return rc;
        cJSON_ArrayForEach(rec, s) {
            op_record *o;
            if (!is_map(rec))
                return fail(r, at, "each record must be an object");
            o = op_series_append(r->b, run, s->string);
            cJSON_ArrayForEach(f, rec)
                if ((rc = put_value(r, o, f, at)))
                    return rc;
        }
    }
    return 0;
}


static int read_metrics(rd *r, const cJSON *m, const char *where, op_run *run,
                        op_node *node)
{
    const cJSON *v;
    int64_t i;
    int rc;

    if ((rc = check_type(r, m, 1, where)))
        return rc;
    cJSON_ArrayForEach(v, m) {
        if (cJSON_IsNull(v))
            continue;
        if (!cJSON_IsNumber(v))
            return fail(r, where, "metrics are numbers");
        if (as_int(v->valuedouble, &i)) {
            if (node)
                op_node_metric_int(r->b, node, v->string, i);
            else
                op_run_metric_int(r->b, run, v->string, i);
        } else if (node) {
            op_node_metric(r->b, node, v->string, v->valuedouble);
        } else {
            op_run_metric(r->b, run, v->string, v->valuedouble);
        }
    }
    return 0;
}

/* A string map (config, attrs); numbers and booleans are written as text
 * for convenience in hand-written models. Into node's attrs when node is
 * set, else run's attrs (run_attrs) or config. */
static int read_map(rd *r, const cJSON *m, const char *where, op_run *run,
                    op_node *node, int run_attrs)
{
    const cJSON *v;
    char num[64];
    int rc;

    if ((rc = check_type(r, m, 1, where)))
        return rc;
    cJSON_ArrayForEach(v, m) {
        const char *s = NULL;
        int64_t i;
        if (cJSON_IsString(v))
            s = v->valuestring;
        else if (cJSON_IsBool(v))
            s = cJSON_IsTrue(v) ? "true" : "false";
        else if (cJSON_IsNumber(v)) {
            if (as_int(v->valuedouble, &i))
                snprintf(num, sizeof num, "%lld", (long long)i);
            else
                snprintf(num, sizeof num, "%.17g", v->valuedouble);
            s = num;
        } else if (!cJSON_IsNull(v))
            return fail(r, where, "values are strings");
        if (!s)
            continue;
        if (node)
            op_node_attr(r->b, node, v->string, s);
        else if (run_attrs)
            op_run_attr(r->b, run, v->string, s);
        else
            op_run_config(r->b, run, v->string, s);
    }
    return 0;
}

static int read_strings(rd *r, const cJSON *m, const char *where, op_run *run,
                        op_node *node)
{
    return read_map(r, m, where, run, node, 0);
}

static double dnum(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

/* dist.<metric> is either the summary normalize prints or a list of raw
 * values (the host computes the summary). */
static int read_dists(rd *r, op_node *node, const cJSON *d, const char *where)
{
    const cJSON *m, *v;
    int rc;

    if ((rc = check_type(r, d, 1, where)))
        return rc;
    cJSON_ArrayForEach(m, d) {
        if (cJSON_IsArray(m)) {
            double buf[256], *vals = buf;
            int n = cJSON_GetArraySize(m), k = 0;
            if (n > MODEL_MAX_DIST_VALUES)
                return fail(r, where, "too many raw values");
            if (n > 256 && !(vals = malloc((size_t)n * sizeof *vals)))
                return op_error_set(r->err, OP_ENOMEM, "out of memory");
            cJSON_ArrayForEach(v, m)
                vals[k++] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
            op_node_dist_values(r->b, node, m->string, vals, (size_t)k);
            if (vals != buf)
                free(vals);
        } else if (cJSON_IsObject(m)) {
            op_dist s;
            s.count = dnum(m, "count");
            s.min = dnum(m, "min");
            s.p50 = dnum(m, "p50");
            s.p75 = dnum(m, "p75");
            s.p90 = dnum(m, "p90");
            s.p95 = dnum(m, "p95");
            s.p99 = dnum(m, "p99");
            s.max = dnum(m, "max");
            s.mean = dnum(m, "mean");
            s.sum = dnum(m, "sum");
            op_node_dist(r->b, node, m->string, &s);
        } else {
            return fail(r, where, "a dist is a summary object or a list of values");
        }
    }
    return 0;
}

/* An integer field and what an engine can report for it: epoch times and
 * durations are not negative, a parallelism counts tasks (Spark's is a
 * Java int). A value outside would reach rules' arithmetic as nonsense. */
typedef struct int_field {
    const char *k;
    enum op_ifield f;
    int64_t lo, hi;
} int_field;

#define TIME_FIELD(k, f) {k, f, 0, INT64_MAX}
#define TASKS_FIELD(k, f) {k, f, 1, INT32_MAX}

/* A null (other than one op_json_tidy made of 1e999 and reported) or a
 * value out of range is left out with a warning on the run; a value of the
 * wrong type fails the file, as before. */
static int set_int(rd *r, const cJSON *o, const int_field *fd, op_run *run,
                   op_node *node, const char *where)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, fd->k);
    char msg[400];
    int64_t i;

    if (!v || (v->type & OP_JSON_TIDIED))
        return 0;
    if (cJSON_IsNull(v)) {
        snprintf(msg, sizeof msg,
                 "%s: %s: null where an integer is expected: ignored", where,
                 fd->k);
        op_run_warning(r->b, run, msg);
        return 0;
    }
    if (!cJSON_IsNumber(v) || !as_int(v->valuedouble, &i))
        return fail(r, where, "timestamps, durations and parallelism are integers");
    if (i < fd->lo || i > fd->hi) {
        snprintf(msg, sizeof msg,
                 "%s: %s: %lld is outside %lld..%lld: ignored", where, fd->k,
                 (long long)i, (long long)fd->lo, (long long)fd->hi);
        op_run_warning(r->b, run, msg);
        return 0;
    }
    if (node)
        op_node_int(r->b, node, fd->f, i);
    else
        op_run_int(r->b, run, fd->f, i);
    return 0;
}

static int set_strs(rd *r, const cJSON *o, op_run *run, op_node *node,
                    const char *where)
{
    static const struct { const char *k; enum op_field f; } f[] = {
        {"name", OP_F_NAME}, {"status", OP_F_STATUS},
        {"raw_status", OP_F_RAW_STATUS}, {"engine_version", OP_F_ENGINE_VERSION},
        {"kind", OP_F_KIND}};
    size_t i;

    for (i = 0; i < sizeof f / sizeof f[0]; i++) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, f[i].k);
        if (!v || cJSON_IsNull(v))
            continue;
        if (!cJSON_IsString(v))
            return fail(r, where, "name, status, kind ... are strings");
        if (node && f[i].f != OP_F_ENGINE_VERSION)
            op_node_str(r->b, node, f[i].f, v->valuestring);
        else if (!node && f[i].f != OP_F_KIND)
            op_run_str(r->b, run, f[i].f, v->valuestring);
    }
    return 0;
}

static int read_node(rd *r, op_run *run, const cJSON *n, const char *where)
{
    static const int_field ints[] = {
        TIME_FIELD("started_at", OP_I_STARTED_AT),
        TIME_FIELD("ended_at", OP_I_ENDED_AT),
        TIME_FIELD("duration_ms", OP_I_DURATION_MS),
        TASKS_FIELD("parallelism", OP_I_PARALLELISM),
        TASKS_FIELD("max_parallelism", OP_I_MAX_PARALLELISM)};
    const char *id = jstr(n, "id");
    const cJSON *parents = cJSON_GetObjectItemCaseSensitive(n, "parents"), *p;
    char at[256];
    op_node *node;
    size_t i;
    int rc;

    if (!cJSON_IsObject(n) || !id || !*id)
        return fail(r, where, "every node needs a string id");
    snprintf(at, sizeof at, "%s (node %.80s)", where, id);
    node = op_node_get(r->b, run, id);
    if (!node) /* refused by the builder (a run warning says so) or no run */
        return 0;
    if ((rc = set_strs(r, n, run, node, at)))
        return rc;
    for (i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if ((rc = set_int(r, n, &ints[i], run, node, at)))
            return rc;
    if ((rc = check_type(r, parents, 0, at)))
        return rc;
    cJSON_ArrayForEach(p, parents) {
        if (!cJSON_IsString(p))
            return fail(r, at, "parents are node ids");
        op_node_parent(r->b, node, p->valuestring);
    }
    if ((rc = read_metrics(r, cJSON_GetObjectItemCaseSensitive(n, "metrics"),
                           at, run, node)) ||
        (rc = read_strings(r, cJSON_GetObjectItemCaseSensitive(n, "attrs"),
                           at, run, node)))
        return rc;
    return read_dists(r, node, cJSON_GetObjectItemCaseSensitive(n, "dist"), at);
}

static int read_run(rd *r, const cJSON *o, int index)
{
    static const int_field ints[] = {
        TIME_FIELD("started_at", OP_I_STARTED_AT),
        TIME_FIELD("ended_at", OP_I_ENDED_AT),
        TIME_FIELD("duration_ms", OP_I_DURATION_MS)};
    const char *source = jstr(o, "source"), *id = jstr(o, "id"), *hk;
    const cJSON *nodes, *n, *w, *order;
    char at_run[128], nat[160];
    op_run *run;
    size_t i;
    int rc, k = 0;

    snprintf(at_run, sizeof at_run, "runs[%d]", index + 1);
    if (!cJSON_IsObject(o) || !source || !*source || !id || !*id)
        return fail(r, at_run, "every run needs a string source and id");
    run = op_run_get(r->b, source, id);
    if ((rc = set_strs(r, o, run, NULL, at_run)))
        return rc;
    for (i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if ((rc = set_int(r, o, &ints[i], run, NULL, at_run)))
            return rc;
    if ((rc = read_strings(r, cJSON_GetObjectItemCaseSensitive(o, "config"),
                           at_run, run, NULL)) ||
        (rc = read_map(r, cJSON_GetObjectItemCaseSensitive(o, "attrs"),
                       at_run, run, NULL, 1)) ||
        (rc = read_metrics(r, cJSON_GetObjectItemCaseSensitive(o, "metrics"),
                           at_run, run, NULL)))
        return rc;
    nodes = cJSON_GetObjectItemCaseSensitive(o, "nodes");
    if ((rc = check_type(r, nodes, 0, at_run)))
        return rc;
    cJSON_ArrayForEach(n, nodes) {
        snprintf(nat, sizeof nat, "%s.nodes[%d]", at_run, ++k);
        if ((rc = read_node(r, run, n, nat)))
            return rc;
    }
    if ((rc = read_series(r, run, cJSON_GetObjectItemCaseSensitive(o, "series"), at_run)))
        return rc;
    w = cJSON_GetObjectItemCaseSensitive(o, "warnings");
    if ((rc = check_type(r, w, 0, at_run)))
        return rc;
    cJSON_ArrayForEach(n, w)
        if (cJSON_IsString(n))
            op_run_warning(r->b, run, n->valuestring);
    hk = jstr(o, "history_key");
    if (hk) {
        /* history_order, else started_at, else the position in the file */
        int64_t pos = index;
        order = cJSON_GetObjectItemCaseSensitive(o, "history_order");
        if (!cJSON_IsNumber(order))
            order = cJSON_GetObjectItemCaseSensitive(o, "started_at");
        if (cJSON_IsNumber(order) && !as_int(order->valuedouble, &pos))
            return fail(r, at_run, "history_order is an integer");
        op_run_history(r->b, run, hk, pos);
    }
    return 0;
}

/* The document's own warnings (duplicated keys, numbers beyond a double)
 * go to every run it holds: the model has no place for a file's. */
static void emit_notes(rd *r, const cJSON *runs, const op_json_notes *notes)
{
    const cJSON *o;

    if (!notes->n)
        return;
    cJSON_ArrayForEach(o, runs)
        op_json_notes_emit(notes, r->b,
                           op_run_get(r->b, jstr(o, "source"), jstr(o, "id")));
}

static int model_parse(op_stream *in, op_builder *b, op_error *err)
{
    const char *buf = NULL;
    size_t len = 0;
    cJSON *root, *runs, *o;
    op_json_notes *notes = NULL;
    rd r;
    int rc, i = 0;

    r.b = b;
    r.file = op_stream_name(in);
    r.err = err;
    if ((rc = op_stream_read_all(in, &buf, &len, err)))
        return rc;
    if (len > MODEL_MAX_DOC)
        return op_error_set(err, OP_ELIMIT, "%s: larger than 1 GiB", r.file);
    if ((rc = op_json_check_cost(r.file, len, op_json_cost(buf, len), err)))
        return rc;
    root = cJSON_ParseWithLength(buf, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= buf && at <= buf + len ? (size_t)(at - buf) : len;
        return op_error_set(err, OP_EPARSE, "%s: not valid JSON near byte %zu",
                            r.file, off);
    }
    /* the model holds what plugins wrote: only inf (1e400) is out of range */
    if (!(notes = calloc(1, sizeof *notes)) ||
        op_json_tidy(root, "$", 0, 0, op_json_note, notes)) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", r.file);
        goto out;
    }
    runs = cJSON_GetObjectItemCaseSensitive(root, "runs");
    if (!cJSON_IsArray(runs)) {
        rc = fail(&r, "runs", "must be a list of runs");
        goto out;
    }
    cJSON_ArrayForEach(o, runs)
        if ((rc = read_run(&r, o, i++)))
            goto out;
    emit_notes(&r, runs, notes);
    rc = op_builder_failed(b, err);
out:
    free(notes);
    cJSON_Delete(root);
    return rc;
}

const op_plugin op_plugin_model = {
    OP_PLUGIN_HEADER,
    .name = "model",
    .version = "1.0.0",
    .description = "a model as `optipipe normalize --format json` writes it",
    .detect = model_detect,
    .parse = model_parse,
};
