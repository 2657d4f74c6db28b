/*
 * fetch_flink.c - `optipipe fetch flink`: collects from a JobManager's REST
 * API every response the Flink plugin reads (docs/flink.md, "The export format") and
 * writes them as a `flink_rest_export`, bodies verbatim (numbers stay
 * exact). Poll 0 is a full snapshot; samples 1..N re-request the
 * time-varying paths for trends. Metric names are listed before they are
 * requested because Flink may answer a request naming one unknown metric
 * with an empty list (docs/flink.md). A backpressure answer whose
 * status is not "ok" ("deprecated": Flink is still collecting) is asked
 * again after Flink's own refresh interval, as its Web UI does.
 *
 * The server decides how much there is to fetch (jobs, vertices, metric
 * names), so every request passes fx_req, which stops at the request
 * budget and the deadline of the HTTP client; what was not requested is
 * named under "errors" (the first FX_SKIPPED_NAMED paths one by one, then
 * a count), and metric names past --max-metric-names per vertex too, as
 * are names with a comma (a ?get= list cannot carry them).
 */
#include "fetch.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "fetch_http.h"
#include "flink_host.h"
#include "report_util.h"
#include "util.h"

#define FX_ID_MAX 64
#define FX_PATH_MAX 4096
#define FX_QUERY_MAX 3000         /* metric names per request, encoded */
#define FX_DEFAULT_MAX (64ull << 20)
#define FX_MAX_TOTAL (1ull << 30) /* bytes of responses kept in total */
#define FX_MAX_JOBS 64
#define FX_MAX_VERTICES 4096
#define FX_MAX_DETAILS 20         /* checkpoint details per poll and job */
#define FX_SUBTASK_CKPTS 3        /* completed checkpoints with subtask details */
#define FX_MAX_SUBTASK_REQS 256   /* subtask-detail requests per job */
#define FX_MAX_SAMPLES 10000
#define FX_MAX_LISTED 20          /* jobs named in an error */
#define FX_BP_ROUNDS 5
#define FX_NOTES_SHOWN 5
#define FX_SKIPPED_NAMED 100      /* requests not made named one by one */
#define FX_EXCEPTIONS "?maxExceptions=20"
#define FX_AGG "&agg=min,max,avg,sum"

enum { G_OK, G_MISSING, G_FAIL };

typedef struct fx_entry {
    char *path, *body;
    size_t len;
} fx_entry;

typedef struct fx_poll {
    int64_t at;
    fx_entry *e;
    size_t n, cap;
} fx_poll;

typedef struct fx_note {
    char *path, *msg; /* msg NULL for a 404 */
} fx_note;

typedef struct fx_notes {
    fx_note *v;
    size_t n, cap;
} fx_notes;

typedef struct fx_strs {
    char **v;
    size_t n, cap;
} fx_strs;

typedef struct fx_vertex {
    char id[FX_ID_MAX + 1];
    int is_source;
    int bp_pending; /* backpressure answered without "ok" */
    fx_strs gets;   /* metric requests of poll 0, repeated in samples */
    fx_strs gets0;  /* metric requests of poll 0 only (names, not trends) */
} fx_vertex;

typedef struct fx_job {
    char jid[FX_ID_MAX + 1];
    fx_vertex *v;
    size_t nv;
    fx_strs gets;     /* job metric requests */
    int64_t *ckpts;   /* checkpoint ids whose details were requested */
    size_t nckpts, capckpts;
    int ok;           /* /jobs/<jid> answered */
} fx_job;

typedef struct fx {
    const fetch_opts *o;         /* &conn */
    fetch_opts conn;             /* the caller's, with the polls set */
    const flink_fetch_opts *fo;  /* Flink's own options */
    http_client *http;
    char *base;
    uint64_t max_response;
    fx_poll *polls;
    size_t npolls, cur;
    fx_notes errs, missing;
    uint64_t stored;
    size_t requests;
    size_t skipped;      /* requests not made: budget or deadline */
    op_error stop;       /* why, when skipped */
    long refresh_ms;
    int oom;
    int last_transport; /* the last failure had no HTTP answer */
    long last_status;
    op_error last;
    cJSON *overview;
    fx_job *jobs;
    size_t njobs;
    char phase[64];
    int progress_shown;
    int discovery; /* identifying the JobManager and its jobs */
} fx;

typedef struct fx_ans {
    cJSON *doc;
    char *body;
    size_t len;
} fx_ans;

/* --- small helpers --------------------------------------------------------- */

static int64_t now_epoch_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int id_ok(const char *s)
{
    size_t i;

    if (!s || !*s || strlen(s) > FX_ID_MAX)
        return 0;
    for (i = 0; s[i]; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
            return 0;
    return 1;
}

static int strs_add(fx *x, fx_strs *l, const char *s)
{
    char *d;

    if (OP_GROW(l->v, l->cap, l->n + 1, 4))
        return x->oom = 1;
    d = strdup(s);
    if (!d)
        return x->oom = 1;
    l->v[l->n++] = d;
    return 0;
}

static void strs_free(fx_strs *l)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static void notes_free(fx_notes *l)
{
    size_t i;

    for (i = 0; i < l->n; i++) {
        free(l->v[i].path);
        free(l->v[i].msg);
    }
    free(l->v);
}

static int note_has(const fx_notes *l, const char *path)
{
    size_t i;

    for (i = 0; i < l->n; i++)
        if (!strcmp(l->v[i].path, path))
            return 1;
    return 0;
}

static void notes_add(fx *x, fx_notes *l, const char *path, const char *msg)
{
    fx_note *nt;

    if (OP_GROW(l->v, l->cap, l->n + 1, 8)) {
        x->oom = 1;
        return;
    }
    nt = &l->v[l->n];
    nt->path = strdup(path);
    nt->msg = msg ? strdup(msg) : NULL;
    if (!nt->path || (msg && !nt->msg)) {
        free(nt->path);
        free(nt->msg);
        x->oom = 1;
        return;
    }
    l->n++;
}

/* --- progress and diagnostics ---------------------------------------------- */

/* The progress line: "fetch: <phase>: GET <path>" (or another doing). */
static void progress(fx *x, const char *path)
{
    char shown[72];

    if (!x->o->progress || !x->o->diag)
        return;
    report_term_copy(shown, sizeof shown, path);
    fprintf(x->o->diag, "\r\033[Kfetch: %s: %s%s%s", x->phase,
            path[0] == '/' ? "GET " : "", shown,
            strlen(path) >= sizeof shown ? "..." : "");
    fflush(x->o->diag);
    x->progress_shown = 1;
}

static void progress_clear(fx *x)
{
    if (x->progress_shown && x->o->diag) {
        fputs("\r\033[K", x->o->diag);
        fflush(x->o->diag);
    }
    x->progress_shown = 0;
}

static void diag(fx *x, const char *msg)
{
    char shown[OP_ERROR_MAX];

    if (!x->o->diag)
        return;
    progress_clear(x);
    report_term_copy(shown, sizeof shown, msg);
    fprintf(x->o->diag, "optipipe: fetch: %s\n", shown);
}

/* Records a failed path; reported at once, except during discovery,
 * where the final message (unreachable, not Flink) says it instead. */
static void fail_path(fx *x, const char *path, const char *msg)
{
    notes_add(x, &x->errs, path, msg);
    if (!x->discovery)
        diag(x, msg);
}

/* The first message of a Flink error body ({"errors": ["..."]}), else "". */
static void error_body(const char *body, size_t len, char *dst, size_t n)
{
    cJSON *doc = cJSON_ParseWithLength(body, len);
    cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItem(doc, "errors"), 0);
    char line[160];
    char *nl;

    dst[0] = '\0';
    if (cJSON_IsString(first)) {
        snprintf(line, sizeof line, "%s", first->valuestring);
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        snprintf(dst, n, ": %s", line);
    }
    cJSON_Delete(doc);
}

/* --- requests -------------------------------------------------------------- */

static int parse_json(const char *body, size_t len, cJSON **doc)
{
    const char *end = NULL;
    cJSON *d;

    if (memchr(body, '\0', len))
        return -1;
    d = cJSON_ParseWithLengthOpts(body, len, &end, 0);
    if (!d)
        return -1;
    while (end && end < body + len && isspace((unsigned char)*end))
        end++;
    if (!end || end != body + len) {
        cJSON_Delete(d);
        return -1;
    }
    *doc = d;
    return 0;
}

static void ans_free(fx_ans *a)
{
    cJSON_Delete(a->doc);
    free(a->body);
    memset(a, 0, sizeof *a);
}

/* Records path as failed with msg; frees the response. */
static int reject(fx *x, const char *path, http_resp *r, int code,
                  const char *msg)
{
    op_error_set(&x->last, code, "%s", msg);
    fail_path(x, path, msg);
    http_resp_free(r);
    return G_FAIL;
}

/* Why an answer that arrived is not usable, or "" when it is. */
static void unusable(const fx *x, const char *url, const http_resp *r,
                     char *msg, size_t n)
{
    char why[200];

    msg[0] = '\0';
    if (r->status < 200 || r->status > 299) {
        error_body(r->body, r->len, why, sizeof why);
        snprintf(msg, n, "GET %.1000s: HTTP %ld %s%s%s%s", url, r->status,
                 http_reason(r->status), why,
                 r->attempts > 1 ? " (after retries)" : "",
                 (r->status == 401 || r->status == 403)
                     ? "; pass credentials with --token-env VAR"
                     : "");
    } else if (r->len > FX_MAX_TOTAL - x->stored) {
        snprintf(msg, n, "GET %.1000s: not kept: the responses would pass "
                 "%llu bytes in total", url, (unsigned long long)FX_MAX_TOTAL);
    }
}

/* A request the budget or the deadline does not allow: named under
 * "errors" (the first FX_SKIPPED_NAMED; fx_skipped_note counts the rest),
 * reported once. */
static int skip(fx *x, const char *path, const op_error *why)
{
    op_error_set(&x->last, why->code, "%s", why->msg);
    if (x->skipped++ == 0) {
        x->stop = *why;
        if (!x->discovery) {
            char msg[OP_ERROR_MAX + 80];
            snprintf(msg, sizeof msg, "%s; this and the remaining requests "
                     "are listed under \"errors\"", why->msg);
            diag(x, msg);
        }
    }
    if (x->skipped <= FX_SKIPPED_NAMED)
        notes_add(x, &x->errs, path, why->msg);
    return G_FAIL;
}

/* The requests skipped past those named, as one entry of "errors". */
static void fx_skipped_note(fx *x)
{
    char path[64];

    if (x->skipped <= FX_SKIPPED_NAMED)
        return;
    snprintf(path, sizeof path, "(%zu more requests)",
             x->skipped - FX_SKIPPED_NAMED);
    notes_add(x, &x->errs, path, x->stop.msg);
}

/* GETs path. G_OK: a 2xx JSON answer in *a (free with ans_free). G_MISSING:
 * 404, recorded as unavailable. G_FAIL: anything else (a request not made
 * included), recorded as an error and reported. */
static int fx_req(fx *x, const char *path, fx_ans *a)
{
    char url[FX_PATH_MAX + 1024], msg[2048];
    http_resp r;
    op_error err;

    memset(a, 0, sizeof *a);
    x->last_transport = 0;
    x->last_status = 0;
    op_error_clear(&err);
    x->requests++;
    if (http_stopped(x->http, &err))
        return skip(x, path, &err);
    snprintf(url, sizeof url, "%s%s", x->base, path);
    progress(x, path);
    if (http_get(x->http, url, x->max_response, &r, &err)) {
        x->last_transport = 1;
        return reject(x, path, &r, err.code, err.msg);
    }
    x->last_status = r.status;
    if (r.status == 404) {
        if (!note_has(&x->missing, path))
            notes_add(x, &x->missing, path, NULL);
        http_resp_free(&r);
        return G_MISSING;
    }
    unusable(x, url, &r, msg, sizeof msg);
    if (msg[0])
        return reject(x, path, &r, OP_EIO, msg);
    if (parse_json(r.body, r.len, &a->doc)) {
        snprintf(msg, sizeof msg, "GET %.1000s: HTTP %ld but the answer is "
                 "not JSON (%zu bytes)", url, r.status, r.len);
        return reject(x, path, &r, OP_EPARSE, msg);
    }
    a->body = r.body;
    a->len = r.len;
    return G_OK;
}

/* Moves a's body into the current poll under path (replacing an entry of
 * the same path when replace). */
static void fx_keep(fx *x, const char *path, fx_ans *a, int replace)
{
    fx_poll *p = &x->polls[x->cur];
    size_t i;

    if (replace)
        for (i = 0; i < p->n; i++)
            if (!strcmp(p->e[i].path, path)) {
                x->stored -= p->e[i].len;
                free(p->e[i].body);
                p->e[i].body = a->body;
                p->e[i].len = a->len;
                x->stored += a->len;
                a->body = NULL;
                return;
            }
    if (OP_GROW(p->e, p->cap, p->n + 1, 32)) {
        x->oom = 1;
        return;
    }
    p->e[p->n].path = strdup(path);
    if (!p->e[p->n].path) {
        x->oom = 1;
        return;
    }
    p->e[p->n].body = a->body;
    p->e[p->n].len = a->len;
    x->stored += a->len;
    a->body = NULL;
    p->n++;
}

/* GETs and keeps path; *doc (when not NULL) receives the parsed answer
 * (caller deletes) on G_OK. */
static int fx_fetch(fx *x, const char *path, cJSON **doc)
{
    fx_ans a;
    int rc = fx_req(x, path, &a);

    if (rc == G_OK) {
        fx_keep(x, path, &a, 0);
        if (doc) {
            *doc = a.doc;
            a.doc = NULL;
        }
    }
    ans_free(&a);
    return rc;
}

/* --- metric names ---------------------------------------------------------- */

static int in_list(const char *s, const char *const *l)
{
    for (; *l; l++)
        if (!strcmp(s, *l))
            return 1;
    return 0;
}

/* Which of the requests of a listing a name goes to. */
enum { W_NO, W_EVERY, W_FIRST }; /* every poll / poll 0 only */

/* Aggregated over subtasks (/subtasks/metrics): the task metrics the
 * plugin reads, and operator metrics ("<operator>.<name>"; records-lag-max
 * is "<operator>.KafkaSourceReader.KafkaConsumer.records-lag-max"). */
static int want_agg(const char *id)
{
    static const char *const task[] = {
        "busyTimeMsPerSecond", "backPressuredTimeMsPerSecond",
        "idleTimeMsPerSecond", "numRecordsInPerSecond",
        "numRecordsOutPerSecond", "numBytesInPerSecond",
        "numBytesOutPerSecond", "checkpointStartDelayNanos", NULL};
    static const char *const op[] = {
        "pendingRecords", "numLateRecordsDropped", "watermarkLag",
        "sourceIdleTime", "records-lag-max", "currentEmitEventTimeLag", NULL};
    const char *dot = strrchr(id, '.');

    if (!dot)
        return in_list(id, task);
    if (in_list(dot + 1, op))
        return 1;
    /* a source operator's own input rate (the task's is 0) */
    return !strcmp(dot + 1, "numRecordsInPerSecond") &&
           !strncmp(id, "Source", 6);
}

static int ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n > k && !strcmp(s + n - k, suffix);
}

/* Per subtask (/vertices/<vid>/metrics), names "<n>.<operator>.<metric>":
 * output watermarks and RocksDB / ForSt native metrics ("...rocksdb.<name>",
 * there only when the job turned them on) in every poll; a Kafka source's
 * per-partition offsets
 * ("...KafkaSourceReader.topic.<t>.partition.<p>.currentOffset") once,
 * for their names: the plugin counts the partitions from them. */
static int want_subtask(const char *id)
{
    size_t n = strlen(id);
    const char *p = id;

    while (isdigit((unsigned char)*p))
        p++;
    if (p == id || *p != '.')
        return W_NO;
    if (ends_with(id, n, ".currentOutputWatermark") || strstr(id, ".rocksdb."))
        return W_EVERY;
    return ends_with(id, n, ".currentOffset") &&
                   strstr(id, ".KafkaSourceReader.topic.") &&
                   strstr(id, ".partition.")
               ? W_FIRST
               : W_NO;
}

/* Per subtask, for a vertex that is not a source: only the RocksDB /
 * ForSt native metrics ("<n>.<operator>[.<cf>].rocksdb.<name>"). */
static int want_native(const char *id)
{
    const char *p = id;

    while (isdigit((unsigned char)*p))
        p++;
    return p > id && *p == '.' && strstr(p, ".rocksdb.") ? W_EVERY : W_NO;
}

static int want_job(const char *id)
{
    static const char *const job[] = {
        "numRestarts", "fullRestarts", "lastCheckpointDuration",
        "lastCheckpointSize", "lastCheckpointFullSize", "uptime", "downtime",
        "restartingTime", NULL};
    return in_list(id, job);
}

/* Appends id percent-encoded (all but unreserved characters) to q. */
static int encode_name(const char *id, char *q, size_t *qn, size_t max)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = *qn;

    for (; *id; id++) {
        unsigned char c = (unsigned char)*id;
        if (n + 4 >= max)
            return -1;
        if (isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~') {
            q[n++] = (char)c;
        } else {
            q[n++] = '%';
            q[n++] = hex[c >> 4];
            q[n++] = hex[c & 15];
        }
    }
    q[n] = '\0';
    *qn = n;
    return 0;
}

static void flush_get(fx *x, const char *list, const char *q,
                      const char *suffix, fx_strs *out)
{
    char path[FX_PATH_MAX];
    int w;

    if (!*q)
        return;
    w = snprintf(path, sizeof path, "%s?get=%s%s", list, q, suffix);
    if (w > 0 && (size_t)w < sizeof path)
        strs_add(x, out, path);
}

/* Names wanted past the cap of a vertex: counted, and listed in full
 * (the listing bounds them) under "errors" for the listing's path. */
#define FX_LEFT_SHOWN 3 /* names on stderr; the export has them all */

typedef struct fx_left {
    char why[96]; /* after "N metric names left out " */
    size_t n, shown;
    char *names;
    size_t len;
    FILE *f;
} fx_left;

static void left_add(fx *x, fx_left *l, const char *id)
{
    if (!l->f && !(l->f = open_memstream(&l->names, &l->len))) {
        x->oom = 1;
        return;
    }
    fprintf(l->f, "%s%s", l->n ? ", " : "", id);
    if (++l->n == FX_LEFT_SHOWN)
        fflush(l->f);
    if (l->n == FX_LEFT_SHOWN)
        l->shown = l->len; /* the first names, for stderr */
}

/* The names a vertex (or the job's own list) may ask for. */
static size_t metric_room(const fx *x)
{
    return x->fo->max_metric_names ? x->fo->max_metric_names
                                   : FLINK_METRIC_NAMES;
}

static void left_note(fx *x, fx_left *l, const char *list)
{
    char head[160];
    char *msg;
    size_t n;

    if (!l->f)
        return;
    if (fclose(l->f) != 0 || !l->names) {
        x->oom = 1;
        free(l->names);
        return;
    }
    n = snprintf(head, sizeof head, "%zu metric names left out (%s): ",
                 l->n, l->why) +
        l->len + strlen(list) + 64;
    msg = malloc(n);
    if (msg) {
        snprintf(msg, n, "%s%s", head, l->names);
        notes_add(x, &x->errs, list, msg);
        if (l->shown && l->n > FX_LEFT_SHOWN)
            snprintf(msg, n, "%s: %s%.*s, ... (all under \"errors\")", list,
                     head, (int)l->shown, l->names);
        else
            snprintf(msg, n, "%s: %s%s", list, head, l->names);
        diag(x, msg);
    } else {
        x->oom = 1;
    }
    free(msg);
    free(l->names);
    memset(l, 0, sizeof *l);
}

/* One request being built: the encoded names so far and where it goes. */
typedef struct fx_query {
    char q[FX_QUERY_MAX + 1];
    size_t qn;
    fx_strs *out;
} fx_query;

static void query_add(fx *x, fx_query *g, const char *list, const char *enc,
                      size_t en, const char *suffix)
{
    if (g->qn && g->qn + 1 + en > FX_QUERY_MAX) {
        flush_get(x, list, g->q, suffix, g->out);
        g->qn = 0;
    }
    if (g->qn)
        g->q[g->qn++] = ',';
    memcpy(g->q + g->qn, enc, en);
    g->qn += en;
    g->q[g->qn] = '\0';
}

/* Lists the metric names at path list (not kept) and appends the requests
 * ("<list>?get=a,b<suffix>") for those want() accepts to every (W_EVERY)
 * or first (W_FIRST: poll 0 only), split so that no URL grows too long;
 * *room: names the vertex may still ask for (the rest are named under
 * "errors"). A name with a comma cannot be asked for (Flink splits the
 * ?get= list on commas, decoded or not): it is named under "errors". */
static void metric_gets(fx *x, const char *list, int (*want)(const char *),
                        const char *suffix, size_t *room, fx_strs *every,
                        fx_strs *first)
{
    char enc[FX_QUERY_MAX + 1];
    size_t en, k;
    const cJSON *e;
    fx_ans a;
    fx_left left, comma;
    fx_query g[2];

    memset(&left, 0, sizeof left);
    memset(&comma, 0, sizeof comma);
    memset(g, 0, sizeof g);
    g[0].out = every;
    g[1].out = first;
    if (fx_req(x, list, &a) != G_OK)
        return;
    snprintf(left.why, sizeof left.why,
             "over --max-metric-names %zu per vertex", metric_room(x));
    snprintf(comma.why, sizeof comma.why,
             "a comma in the name: Flink splits ?get= lists on commas");
    cJSON_ArrayForEach(e, a.doc)
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(e, "id"));
        int w;
        en = 0;
        if (!id || strlen(id) > 512 || (w = want(id)) == W_NO ||
            encode_name(id, enc, &en, sizeof enc))
            continue;
        if (strchr(id, ',')) {
            left_add(x, &comma, id);
            continue;
        }
        if (*room == 0) {
            left_add(x, &left, id);
            continue;
        }
        (*room)--;
        query_add(x, &g[w == W_FIRST && first], list, enc, en, suffix);
    }
    for (k = 0; k < 2; k++)
        if (g[k].out)
            flush_get(x, list, g[k].q, suffix, g[k].out);
    ans_free(&a);
    left_note(x, &comma, list);
    left_note(x, &left, list);
}


/* --- per job --------------------------------------------------------------- */

static int vertex_add(fx *x, fx_job *j, const char *id)
{
    size_t i;
    fx_vertex *nv;

    if (!id_ok(id) || j->nv >= FX_MAX_VERTICES)
        return 0;
    for (i = 0; i < j->nv; i++)
        if (!strcmp(j->v[i].id, id))
            return 0;
    nv = realloc(j->v, (j->nv + 1) * sizeof *nv);
    if (!nv)
        return x->oom = 1;
    j->v = nv;
    memset(&j->v[j->nv], 0, sizeof *nv);
    snprintf(j->v[j->nv].id, sizeof j->v[j->nv].id, "%s", id);
    j->nv++;
    return 0;
}

/* Vertices from /jobs/<jid>; sources are plan nodes without inputs. */
static void job_topology(fx *x, fx_job *j, const cJSON *job,
                         const cJSON *plan)
{
    const cJSON *v, *n;
    size_t i;

    cJSON_ArrayForEach(v, cJSON_GetObjectItem(job, "vertices"))
        vertex_add(x, j, cJSON_GetStringValue(cJSON_GetObjectItem(v, "id")));
    cJSON_ArrayForEach(n, cJSON_GetObjectItem(plan, "nodes"))
    {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(n, "id"));
        if (!id)
            continue;
        vertex_add(x, j, id);
        for (i = 0; i < j->nv; i++)
            if (!strcmp(j->v[i].id, id))
                j->v[i].is_source =
                    cJSON_GetArraySize(cJSON_GetObjectItem(n, "inputs")) == 0;
    }
}

static int ckpt_seen(fx *x, fx_job *j, int64_t id)
{
    size_t i;

    for (i = 0; i < j->nckpts; i++)
        if (j->ckpts[i] == id)
            return 1;
    if (OP_GROW(j->ckpts, j->capckpts, j->nckpts + 1, 16))
        return x->oom = 1;
    j->ckpts[j->nckpts++] = id;
    return 0;
}

/* Details of a checkpoint not asked for yet (completed or failed only:
 * an in-progress one is still changing). */
static void ckpt_detail(fx *x, fx_job *j, const cJSON *c, int *budget)
{
    const cJSON *id = cJSON_GetObjectItem(c, "id");
    const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(c, "status"));
    char path[FX_PATH_MAX];
    int64_t v;

    if (*budget <= 0 || !cJSON_IsNumber(id) || id->valuedouble < 0 ||
        id->valuedouble > 9e15 || (st && !strcmp(st, "IN_PROGRESS")))
        return;
    v = (int64_t)id->valuedouble;
    if (ckpt_seen(x, j, v))
        return;
    (*budget)--;
    snprintf(path, sizeof path, "/jobs/%s/checkpoints/details/%lld", j->jid,
             (long long)v);
    fx_fetch(x, path, NULL);
}

/* Adds the id of checkpoint c to ids (n of max used) when c is a completed
 * checkpoint (not a savepoint) not there yet. */
static void add_completed_id(const cJSON *c, int64_t *ids, size_t *n,
                             size_t max)
{
    const cJSON *id = cJSON_GetObjectItem(c, "id");
    const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(c, "status"));
    size_t k;

    if (*n >= max || !cJSON_IsNumber(id) || id->valuedouble < 0 ||
        id->valuedouble > 9e15 || !st || strcmp(st, "COMPLETED") ||
        cJSON_IsTrue(cJSON_GetObjectItem(c, "is_savepoint")))
        return;
    for (k = 0; k < *n; k++)
        if (ids[k] == (int64_t)id->valuedouble)
            return;
    ids[(*n)++] = (int64_t)id->valuedouble;
}

/* Poll 0: /checkpoints/details/<id>/subtasks/<vid> of every vertex for the
 * newest completed checkpoints (the phases of each subtask: sync, async,
 * alignment, start delay), newest checkpoint first, at most
 * FX_MAX_SUBTASK_REQS requests (each through fx_fetch, so each counts
 * like any other request). */
static void ckpt_subtasks(fx *x, fx_job *j, const cJSON *doc)
{
    int64_t ids[FX_SUBTASK_CKPTS];
    char path[FX_PATH_MAX], msg[256];
    const cJSON *h;
    size_t n = 0, k, i, reqs = 0;

    /* The latest completed one, then the history's (newest first). */
    add_completed_id(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "latest"),
                                         "completed"),
                     ids, &n, FX_SUBTASK_CKPTS);
    cJSON_ArrayForEach(h, cJSON_GetObjectItem(doc, "history"))
        add_completed_id(h, ids, &n, FX_SUBTASK_CKPTS);
    for (k = 0; k < n; k++)
        for (i = 0; i < j->nv && !x->oom; i++) {
            if (reqs++ == FX_MAX_SUBTASK_REQS) {
                snprintf(msg, sizeof msg,
                         "job %s: per-subtask checkpoint details limited to "
                         "%d requests",
                         j->jid, FX_MAX_SUBTASK_REQS);
                diag(x, msg);
                return;
            }
            snprintf(path, sizeof path,
                     "/jobs/%s/checkpoints/details/%lld/subtasks/%s", j->jid,
                     (long long)ids[k], j->v[i].id);
            fx_fetch(x, path, NULL);
        }
}

static void job_checkpoints(fx *x, fx_job *j)
{
    static const char *const latest[] = {"completed", "savepoint", "failed",
                                         NULL};
    char path[FX_PATH_MAX];
    cJSON *doc = NULL;
    const cJSON *h;
    int budget = FX_MAX_DETAILS, k;

    snprintf(path, sizeof path, "/jobs/%s/checkpoints", j->jid);
    if (fx_fetch(x, path, &doc) != G_OK)
        return;
    for (k = 0; latest[k]; k++)
        ckpt_detail(x, j,
                    cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "latest"),
                                        latest[k]),
                    &budget);
    cJSON_ArrayForEach(h, cJSON_GetObjectItem(doc, "history"))
        ckpt_detail(x, j, h, &budget);
    if (x->cur == 0)
        ckpt_subtasks(x, j, doc);
    cJSON_Delete(doc);
}

static int bp_ok(const cJSON *doc)
{
    const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(doc, "status"));
    return st && !strcmp(st, "ok");
}

/* Backpressure of v; in poll 0 a later round re-asks when it is not "ok",
 * keeping a stale answer with subtasks over a newer one without. */
static void vertex_backpressure(fx *x, fx_job *j, fx_vertex *v, int again)
{
    char path[FX_PATH_MAX];
    fx_ans a;

    snprintf(path, sizeof path, "/jobs/%s/vertices/%s/backpressure", j->jid,
             v->id);
    if (fx_req(x, path, &a) != G_OK)
        return;
    v->bp_pending = x->cur == 0 && !bp_ok(a.doc);
    if (!again || cJSON_GetObjectItem(a.doc, "subtasks") || v->bp_pending == 0)
        fx_keep(x, path, &a, again);
    ans_free(&a);
}

static void fetch_gets(fx *x, const fx_strs *g)
{
    size_t i;

    for (i = 0; i < g->n; i++)
        fx_fetch(x, g->v[i], NULL);
}

static void vertex_main(fx *x, fx_job *j, fx_vertex *v)
{
    char path[FX_PATH_MAX];
    size_t room = metric_room(x);

    snprintf(path, sizeof path, "/jobs/%s/vertices/%s", j->jid, v->id);
    fx_fetch(x, path, NULL);
    vertex_backpressure(x, j, v, 0);
    snprintf(path, sizeof path, "/jobs/%s/vertices/%s/watermarks", j->jid,
             v->id);
    fx_fetch(x, path, NULL);
    snprintf(path, sizeof path, "/jobs/%s/vertices/%s/subtasks/metrics",
             j->jid, v->id);
    metric_gets(x, path, want_agg, FX_AGG, &room, &v->gets, NULL);
    snprintf(path, sizeof path, "/jobs/%s/vertices/%s/metrics", j->jid,
             v->id);
    if (v->is_source)
        metric_gets(x, path, want_subtask, "", &room, &v->gets, &v->gets0);
    else
        metric_gets(x, path, want_native, "", &room, &v->gets, NULL);
    fetch_gets(x, &v->gets);
    fetch_gets(x, &v->gets0);
}

/* Poll 0 of job j: everything. Returns G_OK, or what /jobs/<jid> gave. */
static int job_main(fx *x, fx_job *j)
{
    static const char *const plain[] = {"/config", "/jobmanager/config",
                                        "/checkpoints/config",
                                        "/exceptions" FX_EXCEPTIONS, NULL};
    char path[FX_PATH_MAX];
    cJSON *job = NULL, *plan = NULL;
    const cJSON *pl;
    size_t i, room = metric_room(x);
    int rc;

    snprintf(path, sizeof path, "/jobs/%s", j->jid);
    rc = fx_fetch(x, path, &job);
    if (rc != G_OK)
        return rc;
    j->ok = 1;
    snprintf(path, sizeof path, "/jobs/%s/plan", j->jid);
    fx_fetch(x, path, &plan);
    pl = cJSON_GetObjectItem(job, "plan");
    job_topology(x, j, job, pl ? pl : cJSON_GetObjectItem(plan, "plan"));
    cJSON_Delete(job);
    cJSON_Delete(plan);
    for (i = 0; plain[i]; i++) {
        snprintf(path, sizeof path, "/jobs/%s%s", j->jid, plain[i]);
        fx_fetch(x, path, NULL);
    }
    job_checkpoints(x, j);
    snprintf(path, sizeof path, "/jobs/%s/metrics", j->jid);
    metric_gets(x, path, want_job, "", &room, &j->gets, NULL);
    fetch_gets(x, &j->gets);
    for (i = 0; i < j->nv && !x->oom; i++)
        vertex_main(x, j, &j->v[i]);
    return G_OK;
}

/* Samples: the paths whose answers change while the job runs. */
static void job_sample(fx *x, fx_job *j)
{
    char path[FX_PATH_MAX];
    size_t i;

    snprintf(path, sizeof path, "/jobs/%s", j->jid);
    fx_fetch(x, path, NULL);
    job_checkpoints(x, j);
    snprintf(path, sizeof path, "/jobs/%s/exceptions" FX_EXCEPTIONS, j->jid);
    fx_fetch(x, path, NULL);
    fetch_gets(x, &j->gets);
    for (i = 0; i < j->nv && !x->oom; i++) {
        vertex_backpressure(x, j, &j->v[i], 0);
        snprintf(path, sizeof path, "/jobs/%s/vertices/%s/watermarks", j->jid,
                 j->v[i].id);
        fx_fetch(x, path, NULL);
        fetch_gets(x, &j->v[i].gets);
    }
}

/* Re-asks backpressure answers that were not "ok" yet, after Flink's
 * refresh interval (what the Web UI does), a bounded number of times. */
static void backpressure_rounds(fx *x)
{
    double wait = x->fo->bp_wait_s >= 0 ? x->fo->bp_wait_s
                                        : (double)x->refresh_ms / 1000.0;
    int round;
    size_t i, k;
    op_error why;

    for (round = 0; round < FX_BP_ROUNDS && !x->oom; round++) {
        int pending = 0;
        for (i = 0; i < x->njobs; i++)
            for (k = 0; k < x->jobs[i].nv; k++)
                pending += x->jobs[i].v[k].bp_pending;
        if (!pending)
            return;
        snprintf(x->phase, sizeof x->phase, "backpressure, round %d of %d",
                 round + 1, FX_BP_ROUNDS);
        /* at the deadline the answers so far are kept, "not ready" */
        if (http_stopped(x->http, &why) || http_sleep(x->http, wait, &why))
            return;
        for (i = 0; i < x->njobs; i++)
            for (k = 0; k < x->jobs[i].nv; k++)
                if (x->jobs[i].v[k].bp_pending)
                    vertex_backpressure(x, &x->jobs[i], &x->jobs[i].v[k], 1);
    }
}

/* --- which jobs ------------------------------------------------------------ */

static void list_jobs(const fx *x, const char *only_state, char *dst,
                      size_t n)
{
    const cJSON *j;
    size_t used = 0, shown = 0;

    dst[0] = '\0';
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(x->overview, "jobs"))
    {
        const char *jid = cJSON_GetStringValue(cJSON_GetObjectItem(j, "jid"));
        const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(j, "state"));
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(j, "name"));
        char cj[FX_ID_MAX + 1], cs[24], cn[64];
        int w;
        if (!jid || (only_state && (!st || strcmp(st, only_state))))
            continue;
        if (shown++ == FX_MAX_LISTED) {
            snprintf(dst + used, n - used, "\n  ...");
            return;
        }
        report_term_copy(cj, sizeof cj, jid);
        report_term_copy(cs, sizeof cs, st ? st : "?");
        report_term_copy(cn, sizeof cn, name ? name : "");
        w = snprintf(dst + used, n - used, "\n  %s  %-10s %s", cj, cs, cn);
        if (w < 0 || (size_t)w >= n - used)
            return;
        used += (size_t)w;
    }
    if (!shown)
        snprintf(dst, n, " (none)");
}

static int add_job(fx *x, const char *jid)
{
    fx_job *nj;

    if (x->njobs >= FX_MAX_JOBS)
        return 0;
    nj = realloc(x->jobs, (x->njobs + 1) * sizeof *nj);
    if (!nj)
        return x->oom = 1;
    x->jobs = nj;
    memset(&x->jobs[x->njobs], 0, sizeof *nj);
    snprintf(x->jobs[x->njobs].jid, FX_ID_MAX + 1, "%s", jid);
    x->njobs++;
    return 0;
}

static int choose_jobs(fx *x, op_error *err)
{
    char list[1600];
    const cJSON *j;
    size_t running = 0;

    if (x->fo->job)
        return add_job(x, x->fo->job) ? OP_ENOMEM : 0;
    if (!cJSON_IsArray(cJSON_GetObjectItem(x->overview, "jobs")))
        return op_error_set(err, FETCH_ENOTHING,
                            "%s: cannot list the jobs (GET /jobs/overview "
                            "failed): name the job with --job ID",
                            x->base);
    cJSON_ArrayForEach(j, cJSON_GetObjectItem(x->overview, "jobs"))
    {
        const char *jid = cJSON_GetStringValue(cJSON_GetObjectItem(j, "jid"));
        const char *st = cJSON_GetStringValue(cJSON_GetObjectItem(j, "state"));
        if (id_ok(jid) && st && !strcmp(st, "RUNNING")) {
            running++;
            if ((x->fo->all_running || running == 1) && add_job(x, jid))
                return OP_ENOMEM;
        }
    }
    if (running == 1 || (running > 1 && x->fo->all_running))
        return 0;
    if (running == 0) {
        list_jobs(x, NULL, list, sizeof list);
        return op_error_set(err, FETCH_ENOTHING,
                            "%s: no job is running; name one with --job ID. "
                            "Jobs:%s",
                            x->base, list);
    }
    list_jobs(x, "RUNNING", list, sizeof list);
    return op_error_set(err, FETCH_EUSAGE,
                        "%s: %zu jobs are running; choose one with --job ID "
                        "or take all with --all-running:%s",
                        x->base, running, list);
}

/* /config tells a JobManager (and its refresh interval); /jobs/overview
 * lists the jobs (kept out of the export: the plugin would make a run of
 * every job it lists). */
static int identify(fx *x, op_error *err)
{
    cJSON *cfg = NULL;
    const cJSON *ri;
    fx_ans ov;
    int rc, flink;

    rc = fx_fetch(x, "/config", &cfg);
    if (rc == G_FAIL && (x->last_transport || x->last_status == 401 ||
                         x->last_status == 403))
        return op_error_set(err, FETCH_ENOTHING, "cannot fetch from %s: %s",
                            x->base, x->last.msg);
    flink = cJSON_IsString(cJSON_GetObjectItem(cfg, "flink-version"));
    ri = cJSON_GetObjectItem(cfg, "refresh-interval");
    if (cJSON_IsNumber(ri) && ri->valuedouble >= 0)
        x->refresh_ms = (long)(ri->valuedouble > 10000 ? 10000
                               : ri->valuedouble < 500 ? 500
                                                       : ri->valuedouble);
    cJSON_Delete(cfg);
    if (fx_req(x, "/jobs/overview", &ov) == G_OK) {
        x->overview = ov.doc;
        ov.doc = NULL;
    }
    ans_free(&ov);
    if (!flink && !cJSON_IsArray(cJSON_GetObjectItem(x->overview, "jobs")))
        return op_error_set(err, FETCH_ENOTHING,
                            "%s does not look like a Flink JobManager: "
                            "neither /config (no \"flink-version\") nor "
                            "/jobs/overview answered as Flink does",
                            x->base);
    fx_fetch(x, "/jobmanager/config", NULL);
    return choose_jobs(x, err);
}

/* --- the export document --------------------------------------------------- */

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void put_responses(FILE *f, const fx_poll *p, const char *indent)
{
    size_t i;

    fputs("{", f);
    for (i = 0; i < p->n; i++) {
        fprintf(f, "%s\n%s  ", i ? "," : "", indent);
        put_string(f, p->e[i].path);
        fputs(": ", f);
        fwrite(p->e[i].body, 1, p->e[i].len, f);
    }
    if (p->n)
        fprintf(f, "\n%s", indent);
    fputs("}", f);
}

static void put_notes(FILE *f, const char *key, const fx_notes *l)
{
    size_t i;

    if (!l->n)
        return;
    fprintf(f, ",\n  \"%s\": [", key);
    for (i = 0; i < l->n; i++) {
        fputs(i ? ",\n    " : "\n    ", f);
        if (l->v[i].msg) {
            fputs("{\"path\": ", f);
            put_string(f, l->v[i].path);
            fputs(", \"error\": ", f);
            put_string(f, l->v[i].msg);
            fputs("}", f);
        } else {
            put_string(f, l->v[i].path);
        }
    }
    fputs("\n  ]", f);
}

static int write_export(fx *x, char **buf, size_t *len, op_error *err)
{
    FILE *f = open_memstream(buf, len);
    size_t k;
    int bad;

    if (!f)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    fputs("{\n  \"flink_rest_export\": 1,\n  \"generator\": \"optipipe fetch "
          OP_VERSION "\",\n  \"base_url\": ", f);
    put_string(f, x->base);
    fprintf(f, ",\n  \"captured_at_ms\": %lld,\n  \"responses\": ",
            (long long)x->polls[0].at);
    put_responses(f, &x->polls[0], "  ");
    if (x->npolls > 1) {
        fputs(",\n  \"samples\": [", f);
        for (k = 1; k < x->npolls; k++) {
            fprintf(f, "%s\n    {\"captured_at_ms\": %lld, \"responses\": ",
                    k > 1 ? "," : "", (long long)x->polls[k].at);
            put_responses(f, &x->polls[k], "    ");
            fputs("}", f);
        }
        fputs("\n  ]", f);
    }
    put_notes(f, "errors", &x->errs);
    put_notes(f, "unavailable", &x->missing);
    fputs("\n}\n", f);
    bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad) {
        free(*buf);
        *buf = NULL;
        *len = 0;
        return op_error_set(err, OP_ENOMEM, "out of memory");
    }
    return 0;
}

/* --- entry ----------------------------------------------------------------- */

static void fx_free(fx *x)
{
    size_t i, k;

    for (i = 0; i < x->npolls; i++) {
        for (k = 0; k < x->polls[i].n; k++) {
            free(x->polls[i].e[k].path);
            free(x->polls[i].e[k].body);
        }
        free(x->polls[i].e);
    }
    free(x->polls);
    for (i = 0; i < x->njobs; i++) {
        for (k = 0; k < x->jobs[i].nv; k++) {
            strs_free(&x->jobs[i].v[k].gets);
            strs_free(&x->jobs[i].v[k].gets0);
        }
        free(x->jobs[i].v);
        strs_free(&x->jobs[i].gets);
        free(x->jobs[i].ckpts);
    }
    free(x->jobs);
    notes_free(&x->errs);
    notes_free(&x->missing);
    cJSON_Delete(x->overview);
    http_client_free(x->http);
    free(x->base);
}

static int check_opts(const flink_fetch_opts *o, op_error *err)
{
    if (o->job && o->all_running)
        return op_error_set(err, FETCH_EUSAGE,
                            "--job and --all-running exclude each other");
    if (o->job && !id_ok(o->job))
        return op_error_set(err, FETCH_EUSAGE,
                            "--job: '%.80s' is not a Flink job id", o->job);
    if (o->samples < 0 || o->samples > FX_MAX_SAMPLES)
        return op_error_set(err, FETCH_EUSAGE,
                            "--samples: expected 0 to %d", FX_MAX_SAMPLES);
    return 0;
}

/* Poll 0 of every chosen job. Returns how many answered /jobs/<jid>. */
static size_t snapshot(fx *x, op_error *err)
{
    size_t i, ok = 0;
    char list[1600];

    snprintf(x->phase, sizeof x->phase, "snapshot");
    for (i = 0; i < x->njobs && !x->oom; i++) {
        int rc = job_main(x, &x->jobs[i]);
        if (rc == G_OK) {
            ok++;
            continue;
        }
        if (rc == G_MISSING) {
            char path[FX_PATH_MAX];
            list_jobs(x, NULL, list, sizeof list);
            op_error_set(err, FETCH_ENOTHING,
                         "job %s not found on %s. Jobs:%s", x->jobs[i].jid,
                         x->base, list);
            snprintf(path, sizeof path, "/jobs/%s", x->jobs[i].jid);
            notes_add(x, &x->errs, path, "job not found (HTTP 404)");
        } else {
            op_error_set(err, FETCH_ENOTHING, "job %s: %s", x->jobs[i].jid,
                         x->last.msg);
        }
    }
    return ok;
}

/* Samples k.. that the budget or the deadline left out, as one error. */
static void samples_missed(fx *x, size_t k, const op_error *why)
{
    char path[64];

    snprintf(path, sizeof path, "(samples %zu to %zu)", k, x->npolls - 1);
    notes_add(x, &x->errs, path, why->msg);
    diag(x, why->msg);
}

static void samples(fx *x)
{
    size_t k, i;
    op_error why;

    for (k = 1; k < x->npolls && !x->oom; k++) {
        snprintf(x->phase, sizeof x->phase, "sample %zu of %zu", k,
                 x->npolls - 1);
        progress(x, "waiting for the interval");
        op_error_clear(&why);
        if (http_stopped(x->http, &why) ||
            http_sleep(x->http, x->fo->interval_s, &why)) {
            samples_missed(x, k, &why);
            return;
        }
        x->cur = k;
        x->polls[k].at = now_epoch_ms();
        for (i = 0; i < x->njobs; i++)
            if (x->jobs[i].ok)
                job_sample(x, &x->jobs[i]);
    }
}

static void summary(const fx *x, op_error *err)
{
    char paths[300];
    size_t i, used = 0;

    paths[0] = '\0';
    for (i = 0; i < x->errs.n && i < FX_NOTES_SHOWN; i++) {
        int w = snprintf(paths + used, sizeof paths - used, "%s%s",
                         i ? ", " : "", x->errs.v[i].path);
        if (w < 0 || (size_t)w >= sizeof paths - used)
            break;
        used += (size_t)w;
    }
    op_error_set(err, FETCH_INCOMPLETE,
                 "incomplete: %zu of %zu requests failed (listed under "
                 "\"errors\"): %s%s%s%s",
                 x->errs.n, x->requests, paths,
                 x->errs.n > FX_NOTES_SHOWN ? ", ..." : "",
                 x->skipped ? "; stopped early: " : "",
                 x->skipped ? x->stop.msg : "");
}

int fetch_flink_to_memory(const char *url, const fetch_opts *o,
                          const void *eo, char **buf, size_t *len,
                          op_error *err)
{
    static const flink_fetch_opts dflt = {NULL, 0, 0, 60, -1,
                                          FLINK_METRIC_NAMES};
    fx x;
    int rc;

    *buf = NULL;
    *len = 0;
    memset(&x, 0, sizeof x);
    x.fo = eo ? eo : &dflt;
    x.conn = *o;
    x.conn.polls = x.fo->samples;
    x.conn.poll_interval_s = x.fo->interval_s;
    x.o = &x.conn;
    x.refresh_ms = 3000;
    x.max_response = o->max_response ? o->max_response : FX_DEFAULT_MAX;
    if ((rc = check_opts(x.fo, err)))
        goto out;
    if ((rc = http_base_url(url, &x.base, err)) ||
        (rc = http_client_new(x.o, &x.http, err))) {
        rc = rc == OP_ENOMEM ? FETCH_ENOTHING : FETCH_EUSAGE;
        goto out;
    }
    /* npolls counts what polls holds: fx_free walks it */
    x.polls = calloc(1 + (size_t)x.fo->samples, sizeof *x.polls);
    if (!x.polls) {
        rc = op_error_set(err, FETCH_ENOTHING, "out of memory");
        goto out;
    }
    x.npolls = 1 + (size_t)x.fo->samples;
    x.polls[0].at = now_epoch_ms();
    snprintf(x.phase, sizeof x.phase, "discovery");
    x.discovery = 1;
    rc = identify(&x, err);
    x.discovery = 0;
    if (rc && x.skipped)
        rc = op_error_set(err, FETCH_ENOTHING, "%s: nothing usable: %s",
                          x.base, x.stop.msg);
    if (rc)
        goto out;
    if (!snapshot(&x, err)) {
        rc = FETCH_ENOTHING;
        goto out;
    }
    backpressure_rounds(&x);
    samples(&x);
    fx_skipped_note(&x);
    progress_clear(&x);
    if (x.oom) {
        rc = op_error_set(err, FETCH_ENOTHING, "out of memory");
        goto out;
    }
    if ((rc = write_export(&x, buf, len, err))) {
        rc = FETCH_ENOTHING;
        goto out;
    }
    rc = FETCH_OK;
    if (x.errs.n) {
        summary(&x, err);
        rc = FETCH_INCOMPLETE;
    }
out:
    progress_clear(&x);
    if (rc == OP_ENOMEM)
        rc = op_error_set(err, FETCH_ENOTHING, "out of memory");
    fx_free(&x);
    return rc;
}
