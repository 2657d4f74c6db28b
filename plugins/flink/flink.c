/*
 * flink.c - the Flink input plugin: detection, the three container shapes
 * it reads (the `flink_rest_export` of docs/flink.md, a HistoryServer archive
 * `{"archive":[{"path","json"}]}`, one raw REST response) and the REST path
 * classification. The per-job model is built in flink_job.c and
 * flink_checkpoints.c. See docs/flink.md and docs/model-flink.md.
 *
 * Responses are classified once here and indexed (flink_polls.c) by (endpoint, job, vertex,
 * poll), so that the per-vertex lookups keep a parse O(n log n) in the
 * number of vertices and responses (a scan per lookup was quadratic).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <optipipe/json.h>
#include <optipipe/grow.h>

#include "flink_internal.h"

#define FL_MAX_GLOBAL_WARNINGS 20
#define FL_MAX_VERTICES 10000 /* vertices[] / plan.nodes[] entries read */
/* Flink's numbers are Java longs and small doubles: beyond 2^63 a number is
 * out of range (Long.MIN/MAX_VALUE parse to +-2^63 and stay sentinels). */
#define FL_MAX_ABS 9223372036854775808.0

/* --- detection --------------------------------------------------------- */

/* Scores only what the first 4 KiB show; raw responses of other endpoints
 * get a middling score so that a dedicated plugin would still win. */
static int flink_detect(const op_probe *p)
{
    int first = op_probe_first(p);

    if (first != '{' && first != '[')
        return 0;
    if (first == '{' && op_probe_has(p, "\"flink_rest_export\""))
        return 95;
    if (first == '{' && op_probe_has(p, "\"archive\"") && op_probe_has(p, "\"path\"") &&
        op_probe_has(p, "/jobs"))
        return 90;
    if (first == '{' && op_probe_has(p, "\"jid\"") && op_probe_has(p, "\"vertices\""))
        return 80;
    if (first == '[')
        return (op_probe_has(p, ".currentInputWatermark\"") ||
                op_probe_has(p, "\"busyTimeMsPerSecond\"") ||
                op_probe_has(p, "\"Shuffle.Netty."))
                   ? 50
                   : 0;
    if (op_probe_has(p, "\"flink-version\"") ||
        (op_probe_has(p, "\"state_backend\"") && op_probe_has(p, "\"interval\"")) ||
        (op_probe_has(p, "\"counts\"") && op_probe_has(p, "\"summary\"") &&
         op_probe_has(p, "\"latest\"")) ||
        op_probe_has(p, "\"backpressure-level\"") ||
        op_probe_has(p, "\"backpressureLevel\"") ||
        op_probe_has(p, "\"root-exception\"") ||
        op_probe_has(p, "\"exceptionHistory\"") ||
        op_probe_has(p, "\"execution-config\"") ||
        (op_probe_has(p, "\"plan\"") && op_probe_has(p, "\"nodes\"")) ||
        (op_probe_has(p, "\"jobs\"") && op_probe_has(p, "\"last-modification\"")) ||
        (op_probe_has(p, "\"subtasks\"") && op_probe_has(p, "\"maxParallelism\"") &&
         op_probe_has(p, "\"read-records\"")))
        return 60;
    return 0;
}

/* --- REST paths -------------------------------------------------------- */

static int copy_id(const char *s, size_t n, char *dst)
{
    size_t i;

    if (n == 0 || n > FL_ID_MAX)
        return 0;
    for (i = 0; i < n; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
            return 0;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 1;
}

static int parse_index(const char *s, size_t n, int64_t *out)
{
    int64_t v = 0;
    size_t i;

    if (n == 0 || n > 18)
        return 0;
    for (i = 0; i < n; i++) {
        if (!isdigit((unsigned char)s[i]))
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 1;
}

#define FL_MAX_SEGS 10

typedef struct seg {
    const char *s;
    size_t n;
} seg;

static int seg_is(const seg *g, const char *lit)
{
    return g->n == strlen(lit) && !memcmp(g->s, lit, g->n);
}

/* After "/jobs/<jid>/vertices/<vid>". */
static enum fl_ep vertex_ep(const seg *g, size_t ns, fl_path *out)
{
    if (ns == 4)
        return EP_VERTEX;
    if (ns == 5 && seg_is(&g[4], "backpressure"))
        return EP_BACKPRESSURE;
    if (ns == 5 && seg_is(&g[4], "watermarks"))
        return EP_WATERMARKS;
    if (ns == 5 && seg_is(&g[4], "metrics"))
        return EP_VERTEX_METRICS;
    if (ns == 6 && seg_is(&g[4], "subtasks") && seg_is(&g[5], "metrics"))
        return EP_SUBTASKS_METRICS;
    if (ns == 7 && seg_is(&g[4], "subtasks") && seg_is(&g[6], "metrics") &&
        parse_index(g[5].s, g[5].n, &out->num))
        return EP_SUBTASK_METRICS;
    return EP_OTHER_JOB;
}

/* After "/jobs/<jid>". */
static enum fl_ep job_ep(const seg *g, size_t ns, fl_path *out)
{
    if (ns == 2)
        return EP_JOB;
    if (ns == 3 && seg_is(&g[2], "plan"))
        return EP_PLAN;
    if (ns == 3 && seg_is(&g[2], "config"))
        return EP_JOB_CONFIG;
    if (ns == 3 && seg_is(&g[2], "exceptions"))
        return EP_EXCEPTIONS;
    if (ns == 3 && seg_is(&g[2], "metrics"))
        return EP_JOB_METRICS;
    if (ns == 3 && seg_is(&g[2], "checkpoints"))
        return EP_CKPTS;
    if (ns == 4 && seg_is(&g[2], "jobmanager") && seg_is(&g[3], "config"))
        return EP_JOB_JM_CONFIG;
    if (ns == 4 && seg_is(&g[2], "checkpoints") && seg_is(&g[3], "config"))
        return EP_CKPT_CONFIG;
    if (ns == 5 && seg_is(&g[2], "checkpoints") && seg_is(&g[3], "details") &&
        parse_index(g[4].s, g[4].n, &out->num))
        return EP_CKPT_DETAIL;
    if (ns == 7 && seg_is(&g[2], "checkpoints") && seg_is(&g[3], "details") &&
        seg_is(&g[5], "subtasks") && parse_index(g[4].s, g[4].n, &out->num) &&
        copy_id(g[6].s, g[6].n, out->vid))
        return EP_CKPT_SUBTASKS;
    if (ns >= 4 && seg_is(&g[2], "vertices") &&
        copy_id(g[3].s, g[3].n, out->vid))
        return vertex_ep(g, ns, out);
    return EP_OTHER_JOB;
}

void fl_path_parse(const char *raw, fl_path *out)
{
    const char *p = raw, *end;
    seg g[FL_MAX_SEGS];
    size_t ns = 0;

    memset(out, 0, sizeof *out);
    out->num = -1;
    if (!raw)
        return;
    if (!strncmp(p, "http://", 7) || !strncmp(p, "https://", 8)) {
        p = strstr(p, "://") + 3;
        p = strchr(p, '/');
        if (!p)
            return;
    }
    end = p + strcspn(p, "?#");
    while (p < end && ns < FL_MAX_SEGS) {
        const char *s;
        while (p < end && *p == '/')
            p++;
        s = p;
        while (p < end && *p != '/')
            p++;
        if (p > s) {
            g[ns].s = s;
            g[ns].n = (size_t)(p - s);
            ns++;
        }
    }
    if (p < end)
        return; /* too many segments: not an endpoint we read */
    if (ns > 0 && seg_is(&g[0], "v1")) {
        memmove(g, g + 1, (ns - 1) * sizeof g[0]);
        ns--;
    }
    if (ns == 1 && seg_is(&g[0], "config"))
        out->ep = EP_DASH_CONFIG;
    else if (ns == 2 && seg_is(&g[0], "jobmanager") && seg_is(&g[1], "config"))
        out->ep = EP_JM_CONFIG;
    else if (ns == 2 && seg_is(&g[0], "jobs") && seg_is(&g[1], "overview"))
        out->ep = EP_JOBS_OVERVIEW;
    else if (ns >= 2 && seg_is(&g[0], "jobs") &&
             copy_id(g[1].s, g[1].n, out->jid))
        out->ep = job_ep(g, ns, out);
}

/* --- polls --------------------------------------------------------------- */

/* Job ids in order of first appearance, with an open-addressing hash of
 * their positions so that an export with many jobs stays linear. */
typedef struct jid_list {
    char (*v)[FL_ID_MAX + 1];
    size_t n, cap;
    size_t *tab; /* position + 1 in v; 0 = empty slot */
    size_t tabcap; /* a power of two, at least twice n */
} jid_list;

/* Doubles the hash table (all positions re-inserted). */
static int jid_rehash(jid_list *l)
{
    size_t ncap = l->tabcap ? l->tabcap * 2 : 16, i;
    size_t *nt = calloc(ncap, sizeof *nt);

    if (!nt)
        return OP_ENOMEM;
    for (i = 0; i < l->n; i++) {
        size_t h = fl_hash(l->v[i]) & (ncap - 1);
        while (nt[h])
            h = (h + 1) & (ncap - 1);
        nt[h] = i + 1;
    }
    free(l->tab);
    l->tab = nt;
    l->tabcap = ncap;
    return OP_OK;
}

/* Adds j unless present; *pos (when not NULL) is its position in l->v.
 * Returns 0 or OP_ENOMEM. */
static int jid_add(jid_list *l, const char *j, size_t *pos)
{
    size_t h;

    if ((l->n + 1) * 2 > l->tabcap && jid_rehash(l))
        return OP_ENOMEM;
    h = fl_hash(j) & (l->tabcap - 1);
    while (l->tab[h]) {
        if (!strcmp(l->v[l->tab[h] - 1], j)) {
            if (pos)
                *pos = l->tab[h] - 1;
            return OP_OK;
        }
        h = (h + 1) & (l->tabcap - 1);
    }
    if (OP_GROW(l->v, l->cap, l->n + 1, 8))
        return OP_ENOMEM;
    snprintf(l->v[l->n++], FL_ID_MAX + 1, "%s", j);
    l->tab[h] = l->n;
    if (pos)
        *pos = l->n - 1;
    return OP_OK;
}

static void jid_list_free(jid_list *l)
{
    free(l->v);
    free(l->tab);
}

typedef struct fl_state {
    fl_ctx c;
    fl_pollx *px; /* = c.px, writable */
    cJSON *root;  /* the parsed document */
    cJSON *owned; /* objects the plugin created (archive payloads) */
    size_t doc_len, tree_cost; /* the input's size; its trees' estimate */
    char *name;   /* c.input, owned: the state outlives the stream */
    jid_list jids; /* the jobs of a kept export (flink_finish) */
    const char *warn[FL_MAX_GLOBAL_WARNINGS];
    char warnbuf[FL_MAX_GLOBAL_WARNINGS][256];
    size_t nwarn;
} fl_state;

static void global_warning(fl_state *st, const char *msg)
{
    if (st->nwarn >= FL_MAX_GLOBAL_WARNINGS)
        return;
    snprintf(st->warnbuf[st->nwarn], sizeof st->warnbuf[0], "%s", msg);
    st->warn[st->nwarn] = st->warnbuf[st->nwarn];
    st->nwarn++;
}

static void tidy_warn(void *st, const char *msg)
{
    global_warning(st, msg);
}

/* Keeps the first max entries of list arr (at: its path, what: their
 * name), with a warning when there were more. */
static void cap_list(fl_state *st, cJSON *arr, const char *at, size_t max,
                     const char *what)
{
    cJSON *it = cJSON_IsArray(arr) ? arr->child : NULL;
    size_t i, rest = 0;
    char msg[256];

    for (i = 0; it && i < max; i++)
        it = it->next;
    if (it) {
        const cJSON *k;
        for (k = it; k; k = k->next)
            rest++;
        /* cut the chain at it: cJSON_Delete frees it and its successors */
        arr->child->prev = it->prev;
        it->prev->next = NULL;
        it->prev = NULL;
        cJSON_Delete(it);
        snprintf(msg, sizeof msg,
                 "%.150s: %zu entries, more than %zu %s: the last %zu "
                 "ignored",
                 at, i + rest, max, what, rest);
        global_warning(st, msg);
    }
}

/* Keeps the first FL_MAX_VERTICES entries of a vertex list and, of entries
 * sharing an id, the last one (as for duplicated keys). */
static int trim_vertex_list(fl_state *st, cJSON *arr, const char *at)
{
    cap_list(st, arr, at, FL_MAX_VERTICES, "vertices");
    return op_json_dedup_ids(arr, "id", at, tidy_warn, st, NULL);
}

/* The vertex lists of one response of endpoint ep, at path at. */
static int trim_response(fl_state *st, cJSON *resp, enum fl_ep ep,
                         const char *at)
{
    char sub[OP_JSON_PATH_MAX];
    int rc = OP_OK;

    if (ep == EP_VERTEX || ep == EP_BACKPRESSURE) {
        snprintf(sub, sizeof sub, "%.180s.subtasks", at);
        cap_list(st, cJSON_GetObjectItemCaseSensitive(resp, "subtasks"), sub,
                 FL_MAX_SUBTASKS, "subtasks");
    }
    if (ep == EP_JOB) {
        snprintf(sub, sizeof sub, "%.180s.vertices", at);
        rc = trim_vertex_list(
            st, cJSON_GetObjectItemCaseSensitive(resp, "vertices"), sub);
    }
    if (!rc && (ep == EP_JOB || ep == EP_PLAN)) {
        snprintf(sub, sizeof sub, "%.180s.plan.nodes", at);
        rc = trim_vertex_list(
            st,
            cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(resp, "plan"), "nodes"),
            sub);
    }
    return rc;
}

/* trim_response for every response of an object of REST paths at at. */
static int trim_responses(fl_state *st, cJSON *resps, const char *at,
                          op_error *err)
{
    cJSON *it;
    char sub[OP_JSON_PATH_MAX];
    fl_path path;

    cJSON_ArrayForEach(it, resps)
    {
        if (!it->string)
            continue;
        fl_path_parse(it->string, &path);
        snprintf(sub, sizeof sub, "%.60s[\"%.120s\"]", at, it->string);
        if (trim_response(st, it, path.ep, sub))
            return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                                st->c.input);
    }
    return OP_OK;
}

/* Sorts the responses of poll p into st->px[p]; warn: report the error
 * bodies (of each file's first poll, once). */
static int classify_poll(fl_state *st, size_t p, int warn, op_error *err)
{
    const cJSON *resps = st->c.polls[p].responses, *it;
    size_t n = (size_t)cJSON_GetArraySize(resps), i = 0;
    fl_pollx *x = &st->px[p];

    x->e = n ? calloc(n, sizeof *x->e) : NULL;
    if (n && !x->e)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            st->c.input);
    cJSON_ArrayForEach(it, resps)
    {
        if (i >= n || !it->string)
            break;
        fl_path_parse(it->string, &x->e[i].path);
        x->e[i].resp = it;
        if (fl_error_body(it) && warn) {
            char msg[256];
            char first[120];
            fl_first_line(fl_error_body(it), first, sizeof first);
            snprintf(msg, sizeof msg, "%.100s: Flink returned an error: %s",
                     it->string, first);
            global_warning(st, msg);
        }
        if (fl_null_resp(it) && warn) {
            char msg[256];
            snprintf(msg, sizeof msg,
                     "$.responses[\"%.100s\"]: null where a response is "
                     "expected: ignored", it->string);
            global_warning(st, msg);
        }
        i++;
    }
    x->n = i;
    return OP_OK;
}

/* --- containers ---------------------------------------------------------- */

static int set_polls(fl_state *st, size_t n, op_error *err)
{
    st->c.polls = calloc(n, sizeof *st->c.polls);
    st->px = calloc(n, sizeof *st->px);
    st->c.px = st->px;
    if (!st->c.polls || !st->px)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            st->c.input);
    st->c.npolls = n;
    return OP_OK;
}

/* `optipipe fetch` lists the requests that failed under "errors": the
 * rules that needed them stay quiet, so the run says what is missing. */
static void note_fetch_errors(fl_state *st, const cJSON *errors)
{
    const cJSON *e;
    char msg[256];

    cJSON_ArrayForEach(e, errors)
    {
        const char *path = fl_str(e, "path"), *why = fl_str(e, "error");
        if (!path)
            continue;
        snprintf(msg, sizeof msg, "%.100s could not be fetched: %.120s", path,
                 why ? why : "unknown error");
        global_warning(st, msg);
    }
}

static int read_export(fl_state *st, op_error *err)
{
    const cJSON *root = st->root, *resps, *samples, *s, *ver;
    size_t n = 1, k = 1;
    int64_t v = 0;
    int rc;

    ver = fl_get(root, "flink_rest_export");
    if (!fl_i64(ver, &v) || v < 1)
        return op_error_set(err, OP_EPARSE,
                            "%s: $.flink_rest_export: expected the format "
                            "version 1",
                            st->c.input);
    if (v > 1) {
        char msg[128];
        snprintf(msg, sizeof msg,
                 "export format version %lld is newer than 1: read as 1",
                 (long long)v);
        global_warning(st, msg);
    }
    resps = fl_get(root, "responses");
    if (!cJSON_IsObject(resps))
        return op_error_set(err, OP_EPARSE,
                            "%s: $.responses: expected an object mapping "
                            "REST paths to responses",
                            st->c.input);
    samples = fl_get(root, "samples");
    if (samples && !cJSON_IsArray(samples))
        global_warning(st, "$.samples is not an array: ignored");
    else if (samples)
        n += (size_t)cJSON_GetArraySize(samples);
    if (n > FL_MAX_POLLS) {
        global_warning(st, "more samples than 100000: the rest ignored");
        n = FL_MAX_POLLS;
    }
    note_fetch_errors(st, fl_get(root, "errors"));
    if ((rc = set_polls(st, n, err)) ||
        (rc = trim_responses(st, (cJSON *)resps, "$.responses", err)))
        return rc;
    st->c.polls[0].responses = resps;
    fl_geti64(root, "captured_at_ms", &st->c.polls[0].captured_at);
    if (cJSON_IsArray(samples)) {
        int idx = 0;
        char at[64];
        cJSON_ArrayForEach(s, samples)
        {
            const cJSON *sr = fl_get(s, "responses");
            if (k >= n)
                break;
            if (!cJSON_IsObject(sr)) {
                char msg[96];
                snprintf(msg, sizeof msg,
                         "$.samples[%d] has no responses object: ignored",
                         idx);
                global_warning(st, msg);
                idx++;
                continue;
            }
            snprintf(at, sizeof at, "$.samples[%d].responses", idx);
            if ((rc = trim_responses(st, (cJSON *)sr, at, err)))
                return rc;
            st->c.polls[k].responses = sr;
            fl_geti64(s, "captured_at_ms", &st->c.polls[k].captured_at);
            k++;
            idx++;
        }
    }
    st->c.npolls = k;
    return OP_OK;
}

/* A HistoryServer archive: every entry's "json" is a JSON text. */
static int read_archive(fl_state *st, op_error *err)
{
    const cJSON *arch = fl_get(st->root, "archive"), *it;
    cJSON *resps;
    int rc, idx = 0;
    char at[64];

    if (!cJSON_IsArray(arch))
        return op_error_set(err, OP_EPARSE,
                            "%s: $.archive: expected an array of "
                            "{\"path\", \"json\"} entries",
                            st->c.input);
    st->owned = cJSON_CreateObject();
    if (!st->owned)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            st->c.input);
    resps = st->owned;
    cJSON_ArrayForEach(it, arch)
    {
        const char *path = fl_str(it, "path"), *json = fl_str(it, "json");
        cJSON *doc;

        idx++;
        if (!path || !json) {
            char msg[96];
            snprintf(msg, sizeof msg,
                     "$.archive[%d]: no path or json string: ignored",
                     idx - 1);
            global_warning(st, msg);
            continue;
        }
        st->tree_cost += op_json_cost(json, strlen(json));
        if ((rc = op_json_check_cost(st->c.input, st->doc_len,
                                     st->tree_cost, err)))
            return rc;
        doc = cJSON_ParseWithLength(json, strlen(json));
        if (!doc) {
            char msg[200];
            snprintf(msg, sizeof msg,
                     "$.archive[%d] (%.100s): payload is not valid JSON: "
                     "ignored",
                     idx - 1, path);
            global_warning(st, msg);
            continue;
        }
        if (!cJSON_AddItemToObject(resps, path, doc)) { /* key copy */
            cJSON_Delete(doc);
            return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                                st->c.input);
        }
        snprintf(at, sizeof at, "$.archive[%d].json", idx - 1);
        if (op_json_tidy(doc, at, FL_MAX_ABS, OP_JSON_NUMERIC_STRINGS, tidy_warn,
                         st))
            return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                                st->c.input);
    }
    if ((rc = set_polls(st, 1, err)) ||
        (rc = trim_responses(st, resps, "$.archive", err)))
        return rc;
    st->c.polls[0].responses = resps;
    return OP_OK;
}

/* What a lone response is, by its members (the path is not known). */
static enum fl_ep lone_kind(const cJSON *root)
{
    if (cJSON_IsArray(root)) {
        const cJSON *first = cJSON_GetArrayItem(root, 0);
        const char *id = fl_str(first, "id");
        if (fl_get(first, "key"))
            return EP_JM_CONFIG;
        if (id && strstr(id, "currentInputWatermark") &&
            fl_get(first, "value") && cJSON_GetArraySize(root) > 0 &&
            id[0] >= '0' && id[0] <= '9')
            return EP_WATERMARKS;
        if (id)
            return EP_SUBTASKS_METRICS;
        return EP_UNKNOWN;
    }
    if (!cJSON_IsObject(root))
        return EP_UNKNOWN;
    if (fl_get(root, "jid") && fl_get(root, "vertices"))
        return EP_JOB;
    if (fl_get(root, "flink-version"))
        return EP_DASH_CONFIG;
    if (fl_get(root, "counts") && fl_get(root, "latest"))
        return EP_CKPTS;
    if (fl_get(root, "interval") &&
        (fl_get(root, "state_backend") || fl_get(root, "timeout")))
        return EP_CKPT_CONFIG;
    if (fl_get2(root, "backpressureLevel", "backpressure-level") ||
        (fl_get(root, "status") && fl_get(root, "subtasks") &&
         !fl_get(root, "id")))
        return EP_BACKPRESSURE;
    if (cJSON_HasObjectItem(root, "root-exception") ||
        fl_get(root, "exceptionHistory") || fl_get(root, "all-exceptions"))
        return EP_EXCEPTIONS;
    if (fl_get(root, "execution-config") ||
        (fl_get(root, "jid") && fl_get(root, "name") &&
         cJSON_GetArraySize(root) <= 3))
        return EP_JOB_CONFIG;
    if (cJSON_IsObject(fl_get(root, "plan")))
        return EP_PLAN;
    if (cJSON_IsArray(fl_get(root, "jobs")))
        return EP_JOBS_OVERVIEW;
    if (fl_get(root, "id") && cJSON_IsArray(fl_get(root, "subtasks")) &&
        fl_get(root, "parallelism"))
        return EP_VERTEX;
    return EP_OTHER_JOB;
}

/* The run id of a lone response without a job id: the input's base name
 * without its extensions (.json, .gz ...), reduced to id characters. */
static void id_from_name(const char *name, char *dst)
{
    static const char *exts[] = {".json", ".gz", ".zst", ".lz4", ".snappy",
                                 ".txt"};
    const char *base = name ? strrchr(name, '/') : NULL;
    size_t len, o, i, k;

    base = base ? base + 1 : (name ? name : "");
    len = strlen(base);
    for (k = 0; k < 3; k++)
        for (i = 0; i < sizeof exts / sizeof exts[0]; i++) {
            size_t el = strlen(exts[i]);
            if (len > el && !strcmp(base + len - el, exts[i]))
                len -= el;
        }
    for (o = 0; o < len && o < FL_ID_MAX; o++)
        dst[o] = (isalnum((unsigned char)base[o]) || base[o] == '-' ||
                  base[o] == '.')
                     ? base[o]
                     : '_';
    if (o == 0) {
        memcpy(dst, "flink-job", 9);
        o = 9;
    }
    dst[o] = '\0';
}

static const char *lone_jid(const cJSON *root, enum fl_ep ep)
{
    const char *j = fl_str(root, "jid");
    char tmp[FL_ID_MAX + 1];

    if (!j && ep == EP_PLAN)
        j = fl_str(fl_get(root, "plan"), "jid");
    if (j && copy_id(j, strlen(j), tmp))
        return j;
    return NULL;
}

static int read_lone(fl_state *st, op_error *err)
{
    enum fl_ep ep = lone_kind(st->root);
    fl_entry *e;
    const char *jid;
    int rc;

    if (ep == EP_UNKNOWN)
        return op_error_set(err, OP_EPARSE,
                            "%s: $: not a Flink REST export, HistoryServer "
                            "archive or JobManager REST response",
                            st->c.input);
    if ((rc = set_polls(st, 1, err)))
        return rc;
    st->c.lone = 1;
    st->c.polls[0].responses = st->root;
    if (trim_response(st, st->root, ep, "$"))
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            st->c.input);
    e = calloc(1, sizeof *e);
    if (!e)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            st->c.input);
    st->px[0].e = e;
    st->px[0].n = 1;
    e->resp = st->root;
    e->path.ep = ep;
    e->path.num = -1;
    jid = lone_jid(st->root, ep);
    if (ep == EP_JOBS_OVERVIEW &&
        cJSON_GetArraySize(fl_get(st->root, "jobs")) > 0)
        return OP_OK; /* the runs come from the listed job ids */
    if (jid)
        snprintf(e->path.jid, sizeof e->path.jid, "%s", jid);
    else
        id_from_name(st->c.input, e->path.jid);
    if (ep == EP_VERTEX) {
        const char *vid = fl_str(st->root, "id");
        if (!vid || !copy_id(vid, strlen(vid), e->path.vid))
            snprintf(e->path.vid, sizeof e->path.vid, "unknown-vertex");
    } else if (ep == EP_BACKPRESSURE || ep == EP_WATERMARKS ||
               ep == EP_SUBTASKS_METRICS) {
        snprintf(e->path.vid, sizeof e->path.vid, "unknown-vertex");
    }
    return OP_OK;
}

/* --- jobs ---------------------------------------------------------------- */

/* Every job id named by a path or listed in /jobs/overview, in order of
 * first appearance. */
static int collect_jids(const fl_state *st, jid_list *l)
{
    size_t p, i;

    for (p = 0; p < st->c.npolls; p++) {
        for (i = 0; i < st->px[p].n; i++) {
            const fl_entry *e = &st->px[p].e[i];
            const cJSON *j;

            if (e->path.jid[0] && jid_add(l, e->path.jid, NULL))
                return OP_ENOMEM;
            if (e->path.ep != EP_JOBS_OVERVIEW || e->path.jid[0])
                continue;
            cJSON_ArrayForEach(j, fl_get(e->resp, "jobs"))
            {
                const char *jid = fl_str(j, "jid");
                char tmp[FL_ID_MAX + 1];
                if (jid && copy_id(jid, strlen(jid), tmp) &&
                    jid_add(l, tmp, NULL))
                    return OP_ENOMEM;
            }
        }
    }
    return OP_OK;
}

static const char *lone_what(enum fl_ep ep)
{
    switch (ep) {
    case EP_JOB: return "/jobs/<jid>";
    case EP_DASH_CONFIG: return "/config";
    case EP_JM_CONFIG: return "/jobmanager/config";
    case EP_JOBS_OVERVIEW: return "/jobs/overview";
    case EP_PLAN: return "/jobs/<jid>/plan";
    case EP_JOB_CONFIG: return "/jobs/<jid>/config";
    case EP_CKPTS: return "/jobs/<jid>/checkpoints";
    case EP_CKPT_CONFIG: return "/jobs/<jid>/checkpoints/config";
    case EP_EXCEPTIONS: return "/jobs/<jid>/exceptions";
    case EP_VERTEX: return "/jobs/<jid>/vertices/<vid>";
    case EP_BACKPRESSURE: return "/jobs/<jid>/vertices/<vid>/backpressure";
    case EP_WATERMARKS: return "/jobs/<jid>/vertices/<vid>/watermarks";
    case EP_SUBTASKS_METRICS:
        return "/jobs/<jid>/vertices/<vid>/subtasks/metrics";
    default: return "Flink REST";
    }
}

static void lone_warnings(fl_state *st, op_run *r)
{
    enum fl_ep ep = st->px[0].e[0].path.ep;
    char msg[512];

    if (ep == EP_JOB) {
        op_run_warning(st->c.b, r,
                       "a lone /jobs/<jid> response: no checkpoint "
                       "statistics or config, backpressure, watermarks or "
                       "cluster config; make a full export (docs/flink.md) "
                       "for the checkpoint, watermark and bottleneck rules");
        return;
    }
    snprintf(msg, sizeof msg,
             "a lone %s response%s: the rest of the job is unknown; make a "
             "full export (docs/flink.md)",
             lone_what(ep),
             (st->px[0].e[0].path.jid[0] && !lone_jid(st->root, ep))
                 ? " without a job id (run named after the file)"
                 : "");
    op_run_warning(st->c.b, r, msg);
    if (ep == EP_OTHER_JOB)
        op_run_warning(st->c.b, r,
                       "the response is not one the model uses");
}

static int build_jobs(fl_state *st, op_error *err)
{
    jid_list l = {0};
    size_t i, w, named = 0;
    int rc = OP_OK;

    if (collect_jids(st, &l)) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", st->c.input);
        goto out;
    }
    if (l.n == 0) {
        rc = op_error_set(err, OP_EPARSE,
                          "%s: $.responses: no /jobs/<jid> path: the export "
                          "holds no job",
                          st->c.input);
        goto out;
    }
    for (i = 0; i < l.n; i++) {
        op_run *r;
        fl_bad bad;
        fl_bad_begin(&bad, st->root, st->owned, &named);
        rc = fl_job(&st->c, l.v[i], err);
        fl_bad_end();
        if (rc)
            goto out;
        r = op_run_get(st->c.b, "flink", l.v[i]);
        fl_bad_flush(&bad, st->c.b, r);
        for (w = 0; w < st->nwarn; w++)
            op_run_warning(st->c.b, r, st->warn[w]);
        if (st->c.lone)
            lone_warnings(st, r);
    }
out:
    jid_list_free(&l);
    return rc;
}

/* --- entry ---------------------------------------------------------------- */

static void json_error(const char *buf, size_t len, const char *input,
                       op_error *err)
{
    const char *at = cJSON_GetErrorPtr();
    size_t off = 0, line = 1, i;

    if (at && at >= buf && at <= buf + len)
        off = (size_t)(at - buf);
    for (i = 0; i < off; i++)
        if (buf[i] == '\n')
            line++;
    op_error_set(err, OP_EPARSE,
                 "%s: line %zu (byte %zu): invalid JSON (a Flink REST "
                 "export, archive or response was expected)",
                 input, line, off);
}

static void state_free(fl_state *st)
{
    size_t p;

    if (!st)
        return;
    if (st->px)
        for (p = 0; p < st->c.npolls; p++)
            free(st->px[p].e);
    free(st->px);
    free(st->c.idx);
    fl_byid_free(&st->c.overview);
    free(st->c.polls);
    cJSON_Delete(st->owned);
    cJSON_Delete(st->root);
    jid_list_free(&st->jids);
    free(st->name);
    free(st);
}

/* --- several exports of one job -----------------------------------------
 * Exports and archives are kept until finish(): files that name the same
 * job are then read as the polls of one export, ordered by captured_at_ms,
 * so that two exports taken an hour apart give the rates, trends and
 * series of both, and a file given twice counts once (docs/flink.md
 * "Several exports of one job"). A lone response is built at once: it is
 * one endpoint, and the builder merges endpoints by itself. */

typedef struct fl_keep {
    fl_state **v;
    size_t n, cap;
} fl_keep;

static void keep_free(fl_keep *k)
{
    size_t i;

    if (!k)
        return;
    for (i = 0; i < k->n; i++)
        state_free(k->v[i]);
    free(k->v);
    free(k);
}

/* Takes st into the plugin's slot and reserves its runs, so that they
 * keep the order and origin of the input they first appear in. */
static int keep_state(op_builder *b, fl_state *st, op_error *err)
{
    void **slot = op_plugin_slot(b);
    fl_keep *k = slot ? *slot : NULL;
    size_t i;

    if (collect_jids(st, &st->jids))
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            st->c.input);
    if (st->jids.n == 0)
        return op_error_set(err, OP_EPARSE,
                            "%s: $.responses: no /jobs/<jid> path: the export "
                            "holds no job",
                            st->c.input);
    if (!slot)
        return op_error_set(err, OP_ENOMEM, "%s: no plugin slot left",
                            st->c.input);
    if (!k && !(k = *slot = calloc(1, sizeof *k)))
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            st->c.input);
    if (OP_GROW(k->v, k->cap, k->n + 1, 4))
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            st->c.input);
    for (i = 0; i < st->jids.n; i++)
        op_run_get(b, "flink", st->jids.v[i]);
    k->v[k->n++] = st;
    return OP_OK;
}

static size_t group_root(size_t *g, size_t i)
{
    while (g[i] != i)
        i = g[i] = g[g[i]];
    return i;
}

/* g[i] = the first kept file that shares a job with file i, through any
 * chain of shared jobs. Returns 0 or OP_ENOMEM. */
static int find_groups(const fl_keep *k, size_t *g)
{
    jid_list all = {0};
    size_t *owner = NULL, i, j, pos;
    int rc = OP_OK;

    for (i = 0; i < k->n; i++)
        g[i] = i;
    for (i = 0; i < k->n && !rc; i++) {
        for (j = 0; j < k->v[i]->jids.n && !rc; j++) {
            size_t before = all.n, a, b;
            if ((rc = jid_add(&all, k->v[i]->jids.v[j], &pos)))
                break;
            if (all.n > before) {
                size_t *no = realloc(owner, all.cap * sizeof *no);
                if (!no) {
                    rc = OP_ENOMEM;
                    break;
                }
                owner = no;
                owner[pos] = i;
                continue;
            }
            a = group_root(g, owner[pos]);
            b = group_root(g, i);
            if (a < b)
                g[b] = a;
            else
                g[a] = b;
        }
    }
    for (i = 0; i < k->n; i++)
        g[i] = group_root(g, i);
    free(owner);
    jid_list_free(&all);
    return rc;
}

typedef struct poll_ref {
    int64_t at;
    size_t file, poll; /* file: position in the group */
    const fl_state *st;
} poll_ref;

static int poll_ref_cmp(const void *a, const void *b)
{
    const poll_ref *x = a, *y = b;

    if (x->at != y->at)
        return x->at < y->at ? -1 : 1;
    if (x->file != y->file)
        return x->file < y->file ? -1 : 1;
    return x->poll < y->poll ? -1 : x->poll > y->poll;
}

static void merged_warning(fl_state *out, const char *msg)
{
    size_t w;

    for (w = 0; w < out->nwarn; w++)
        if (strcmp(out->warn[w], msg) == 0)
            return;
    global_warning(out, msg);
}

/* Warns once per file that repeated captures of an earlier one. */
static void repeat_warnings(fl_state *out, fl_state *const *m, size_t nm,
                            const size_t *dropped, const size_t *of)
{
    size_t i;

    for (i = 0; i < nm; i++) {
        char msg[256];
        if (!dropped[i])
            continue;
        snprintf(msg, sizeof msg,
                 "%.80s repeats %zu capture%s of %.80s (same "
                 "captured_at_ms): read once",
                 m[i]->c.input, dropped[i], dropped[i] == 1 ? "" : "s",
                 m[of[i]]->c.input);
        merged_warning(out, msg);
    }
}

/* The polls of the group's files in time order (in file order when a
 * poll has no captured_at_ms); a poll taken at the same instant as one of
 * an earlier file is that poll again and is dropped. Returns the count;
 * dropped and of are scratch arrays of nm. */
static size_t order_polls(fl_state *out, fl_state *const *m, size_t nm,
                          poll_ref *r, size_t *dropped, size_t *of)
{
    size_t i, p, n = 0, kept = 0;
    int timed = 1;

    for (i = 0; i < nm; i++) {
        dropped[i] = 0;
        for (p = 0; p < m[i]->c.npolls; p++) {
            poll_ref x = {m[i]->c.polls[p].captured_at, i, p, m[i]};
            timed &= x.at > 0;
            r[n++] = x;
        }
    }
    if (timed)
        qsort(r, n, sizeof *r, poll_ref_cmp);
    else
        merged_warning(out, "several exports of this job, some without "
                            "captured_at_ms: their polls are read in the "
                            "order of the files");
    for (i = 0; i < n; i++) {
        if (timed && kept && r[kept - 1].at == r[i].at &&
            r[kept - 1].file != r[i].file) {
            if (!dropped[r[i].file]++)
                of[r[i].file] = r[kept - 1].file;
            continue;
        }
        r[kept++] = r[i];
    }
    repeat_warnings(out, m, nm, dropped, of);
    return kept;
}

/* One state over the polls of the nm kept files in m (which keep owning
 * their documents), ready for build_jobs. */
static int merge_states(fl_state *const *m, size_t nm, fl_state *out,
                        op_error *err)
{
    size_t total = 0, n, i, *scratch;
    poll_ref *r;
    int rc;

    for (i = 0; i < nm; i++) {
        total += m[i]->c.npolls;
        for (n = 0; n < m[i]->nwarn; n++)
            merged_warning(out, m[i]->warn[n]);
    }
    out->c.input = m[0]->c.input;
    r = malloc(total * sizeof *r);
    scratch = malloc(2 * nm * sizeof *scratch);
    if (!r || !scratch) {
        rc = op_error_set(err, OP_ENOMEM, "%s: out of memory",
                          out->c.input);
        goto out;
    }
    n = order_polls(out, m, nm, r, scratch, scratch + nm);
    if ((rc = set_polls(out, n, err)))
        goto out;
    for (i = 0; i < n; i++) {
        out->c.polls[i] = r[i].st->c.polls[r[i].poll];
        if ((rc = classify_poll(out, i, 0, err)))
            goto out;
    }
    rc = fl_index_build(&out->c, out->px, err);
out:
    free(r);
    free(scratch);
    return rc;
}

/* Builds the jobs of group g (its first file is k->v[first]). */
static int build_group(op_builder *b, const fl_keep *k, const size_t *g,
                       size_t first, op_error *err)
{
    fl_state **m, *merged;
    size_t nm = 0, i;
    int rc;

    for (i = first; i < k->n; i++)
        nm += g[i] == first;
    if (nm == 1) {
        k->v[first]->c.b = b;
        return build_jobs(k->v[first], err);
    }
    m = malloc(nm * sizeof *m);
    merged = calloc(1, sizeof *merged);
    if (!m || !merged) {
        free(m);
        free(merged);
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            k->v[first]->c.input);
    }
    for (nm = 0, i = first; i < k->n; i++)
        if (g[i] == first)
            m[nm++] = k->v[i];
    merged->c.b = b;
    rc = merge_states(m, nm, merged, err);
    if (!rc)
        rc = build_jobs(merged, err);
    state_free(merged);
    free(m);
    return rc;
}

static int flink_finish(op_builder *b, op_error *err)
{
    void **slot = op_plugin_slot(b);
    fl_keep *k = slot ? *slot : NULL;
    size_t *g = NULL, i;
    int rc = OP_OK;

    if (!k)
        return OP_OK;
    if (!k->n)
        goto out;
    if (!(g = malloc(k->n * sizeof *g)) || find_groups(k, g)) {
        rc = op_error_set(err, OP_ENOMEM, "flink: out of memory joining "
                                          "exports");
        goto out;
    }
    for (i = 0; i < k->n && !rc; i++)
        if (g[i] == i)
            rc = build_group(b, k, g, i, err);
    if (!rc && op_builder_failed(b, err))
        rc = err ? err->code : OP_ENOMEM;
out:
    free(g);
    keep_free(k);
    *slot = NULL;
    return rc;
}

/* --- entry ---------------------------------------------------------------- */

/* Reads one input into st: its container, polls and index. */
static int read_input(fl_state *st, op_stream *in, op_error *err)
{
    const char *buf = NULL;
    size_t len = 0, p;
    int rc;

    if ((rc = op_stream_read_all(in, &buf, &len, err)))
        return rc;
    st->doc_len = len;
    st->tree_cost = op_json_cost(buf, len);
    if ((rc = op_json_check_cost(st->c.input, len, st->tree_cost, err)))
        return rc;
    st->root = cJSON_ParseWithLength(buf, len);
    if (!st->root) {
        json_error(buf, len, st->c.input, err);
        return OP_EPARSE;
    }
    if (op_json_tidy(st->root, "$", FL_MAX_ABS, OP_JSON_NUMERIC_STRINGS,
                     tidy_warn, st))
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            st->c.input);
    if (cJSON_IsObject(st->root) && fl_get(st->root, "flink_rest_export"))
        rc = read_export(st, err);
    else if (cJSON_IsObject(st->root) &&
             cJSON_IsArray(fl_get(st->root, "archive")))
        rc = read_archive(st, err);
    else
        rc = read_lone(st, err);
    if (rc)
        return rc;
    if (!st->c.lone)
        for (p = 0; p < st->c.npolls; p++)
            if ((rc = classify_poll(st, p, p == 0, err)))
                return rc;
    return fl_index_build(&st->c, st->px, err);
}

static int flink_parse(op_stream *in, op_builder *b, op_error *err)
{
    fl_state *st = calloc(1, sizeof *st);
    int rc;

    if (!st || !(st->name = strdup(op_stream_name(in)))) {
        state_free(st);
        return op_error_set(err, OP_ENOMEM, "%s: out of memory",
                            op_stream_name(in));
    }
    st->c.b = b;
    st->c.input = st->name;
    if ((rc = read_input(st, in, err)))
        goto out;
    if (!st->c.lone) {
        if ((rc = keep_state(b, st, err)))
            goto out;
        st = NULL; /* the slot owns it now */
    } else if ((rc = build_jobs(st, err))) {
        goto out;
    }
    if (op_builder_failed(b, err))
        rc = err ? err->code : OP_ENOMEM;
out:
    state_free(st);
    return rc;
}

/* The built-in Flink plugin (docs/writing-plugins.md, docs/flink.md). */
const op_plugin op_plugin_flink = {
    OP_PLUGIN_HEADER,
    .name = "flink",
    .version = "0.1.0",
    .description = "Flink JobManager REST export (flink_rest_export 1), "
                   "HistoryServer archive or one raw REST response",
    .detect = flink_detect,
    .parse = flink_parse,
    .finish = flink_finish,
};
