/*
 * serve_api.c - the REST API of `optipipe serve` (docs/api.md,
 * docs/openapi.json): uploads into the queue, analyses with their JSON
 * reports (decisions of the store laid over them), patches of the
 * approved changes from the store, jobs, runs and decisions. Every answer
 * is JSON written through core/jsonw (escaped, valid UTF-8); every error
 * goes through srv_fail. Also the two pieces the UI reuses:
 * srv_accept_upload and srv_decide.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "emit_stored.h"
#include "input.h"
#include "jsonw.h"
#include "serve.h"
#include "store.h"

#define API_LIMIT_DEFAULT 50
#define API_LIMIT_MAX 500        /* items of one list page */
#define API_RUNS_MAX 100         /* runs of one page of /jobs/{job}/runs */
#define API_REPORT_MAX (256u << 20) /* report.json read back (bytes) */
#define API_URLS_MAX 64          /* URL inputs of one upload */
#define API_PATCH_RUNS 4096      /* runs of one analysis given patches */
#define API_STOP 100             /* a store callback's "enough" (no op_status) */

/* ---- small pieces ------------------------------------------------------------ */

static void json_begin(srv_resp *w, jw *j, int status)
{
    w->status = status;
    w->type = "application/json";
    jw_init(j, w->f, 1);
}

static void json_end(srv_resp *w)
{
    fputc('\n', w->f);
}

/* epoch ms as RFC 3339 UTC with milliseconds; null when 0 (not yet). */
static void put_time(jw *j, const char *key, int64_t ms)
{
    char buf[40];
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    jw_key(j, key);
    if (ms <= 0 || !gmtime_r(&t, &tm)) {
        jw_null(j);
        return;
    }
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), ".%03dZ",
             (int)(ms % 1000));
    jw_str(j, buf);
}

static void put_str(jw *j, const char *key, const char *v)
{
    jw_key(j, key);
    jw_str(j, v);
}

static void put_int(jw *j, const char *key, int64_t v)
{
    jw_key(j, key);
    jw_int(j, v);
}

/* v when the bit of set says it is known, else null. */
static void put_opt_int(jw *j, const char *key, unsigned set, unsigned bit,
                        int64_t v)
{
    jw_key(j, key);
    if (set & bit)
        jw_int(j, v);
    else
        jw_null(j);
}

/* A stored JSON text (written by jsonw) as a value; null when unreadable. */
static void put_json_text(jw *j, const char *key, const char *text)
{
    jw_key(j, key);
    jw_json_text(j, text);
}

/* ?limit: API_LIMIT_DEFAULT, 1..max; -1 (answered 400) when bad. */
static int arg_limit(const srv_req *r, srv_resp *w, int max)
{
    const char *v = srv_arg(r, "limit");
    char *end;
    long n;

    if (!v)
        return API_LIMIT_DEFAULT < max ? API_LIMIT_DEFAULT : max;
    errno = 0;
    n = strtol(v, &end, 10);
    if (errno || end == v || *end || n < 1 || n > max) {
        srv_fail(r, w, 400, "limit '%.40s': a whole number from 1 to %d", v,
                 max);
        return -1;
    }
    return (int)n;
}

/* A store for reading: 0 with *st; 1 when there is none yet (nothing
 * recorded: an empty answer); -1 after answering 500. */
static int open_store(const srv_req *r, srv_resp *w, int writable, store **st)
{
    op_error err;
    int rc;

    op_error_clear(&err);
    *st = NULL;
    rc = store_open(r->s->store_path, writable, st, &err);
    if (rc == OP_ENOTFOUND)
        return 1;
    if (rc) {
        srv_fail(r, w, 500, "run store: %s", err.msg);
        return -1;
    }
    return 0;
}

const char *srv_who(const srv_req *r)
{
    return r->user                      ? r->user
           : r->auth == SRV_AUTH_TOKEN  ? "token"
           : r->auth == SRV_AUTH_COOKIE ? "browser"
                                        : "local";
}

/* ---- decisions --------------------------------------------------------------- */

int srv_decide(srv *s, const char *fp, const char *status,
               const char *comment, const char *who, op_error *err)
{
    store *st = NULL;
    int rc = store_open(s->store_path, 1, &st, err);

    /* a store this server cannot open (a newer schema, a broken file) is
     * the server's problem, never the client's: OP_EIO (500), not 400 */
    if (rc == OP_EUSAGE || rc == OP_EPARSE)
        rc = err->code = OP_EIO;
    if (!rc) {
        store_set_wait(st, SRV_STORE_WAIT_MS); /* an HTTP thread: not minutes */
        rc = store_decide(st, fp, status, comment, who, err);
    }
    store_close(st);
    if (!rc)
        srv_count(s, SRV_M_DECISIONS, 1);
    return rc;
}

static void put_decision_fields(jw *j, const store_decision *d)
{
    put_str(j, "status", d->status);
    put_str(j, "comment", d->comment);
    put_str(j, "decided_at", d->decided_at);
    put_str(j, "decided_by", d->decided_by);
}

static int decision_cb(void *ud, const store_decision *d)
{
    jw *j = ud;

    jw_obj(j);
    put_str(j, "fingerprint", d->fingerprint);
    put_decision_fields(j, d);
    put_str(j, "rule", d->rule);
    put_str(j, "job", d->job);
    put_str(j, "run", d->run_id);
    put_str(j, "node", d->node);
    jw_obj_end(j);
    return API_STOP; /* the first: the fingerprint's own */
}

static const char *json_str(const cJSON *o, const char *k, int *bad)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

    if (!v || cJSON_IsNull(v))
        return NULL;
    if (!cJSON_IsString(v))
        *bad = 1;
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A JSON body by its Content-Type too: a form a page of another site
 * could send (text/plain, urlencoded) is never read as one. */
static int is_json(const srv_req *r)
{
    const char *t = srv_header(r, "Content-Type");
    size_t n = strlen("application/json");

    return t && strncasecmp(t, "application/json", n) == 0 &&
           (t[n] == '\0' || t[n] == ';' || t[n] == ' ');
}

static int api_decide(const srv_req *r, srv_resp *w)
{
    cJSON *o;
    const char *fp, *status, *comment;
    op_error err;
    store *st = NULL;
    int bad = 0, rc;
    jw j;

    if (!is_json(r))
        return srv_fail(r, w, 415, "a decision is a JSON body (Content-Type: "
                        "application/json)");
    o = r->body ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
    if (!cJSON_IsObject(o)) {
        cJSON_Delete(o);
        return srv_fail(r, w, 400, "the body must be a JSON object "
                        "{\"fingerprint\", \"status\", \"comment\"}");
    }
    fp = json_str(o, "fingerprint", &bad);
    status = json_str(o, "status", &bad);
    comment = json_str(o, "comment", &bad);
    if (bad || !fp || !status) {
        cJSON_Delete(o);
        return srv_fail(r, w, 400, "fingerprint and status are strings "
                        "(comment a string or null)");
    }
    op_error_clear(&err);
    rc = srv_decide(r->s, fp, status, comment, srv_who(r), &err);
    if (rc) {
        int code = rc == OP_ENOTFOUND ? 404 : rc == OP_EUSAGE ? 400 : 500;
        srv_fail(r, w, code, "%s", err.msg);
        cJSON_Delete(o);
        return 0;
    }
    json_begin(w, &j, 200);
    if (strcmp(status, "open") == 0) {
        jw_obj(&j);
        put_str(&j, "fingerprint", fp);
        put_str(&j, "status", "open");
        jw_obj_end(&j);
    } else if (open_store(r, w, 0, &st) != 0 ||
               store_each_decision(st, fp, decision_cb, &j, &err) != API_STOP) {
        rc = 1;
    }
    store_close(st);
    cJSON_Delete(o);
    if (rc) {
        rewind(w->f);
        return srv_fail(r, w, 500, "reading the decision back failed");
    }
    json_end(w);
    return 0;
}

/* ---- uploads ------------------------------------------------------------------- */

/* The host of an http(s) URL, for the 403 message (bounded, never
 * trusted beyond that). */
static void url_host(const char *url, char *buf, size_t len)
{
    const char *p = strstr(url, "://"), *end, *at;
    size_t n;

    p = p ? p + 3 : url;
    end = p + strcspn(p, "/?#");
    at = memchr(p, '@', (size_t)(end - p));
    if (at)
        p = at + 1;
    if (*p == '[')
        n = strcspn(p, "]") + 1;
    else
        n = strcspn(p, ":/?#");
    if (n > (size_t)(end - p))
        n = (size_t)(end - p);
    if (n >= len)
        n = len - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
}

typedef struct urls {
    const char *v[API_URLS_MAX];
    size_t n;
} urls;

/* The URL inputs of r: multipart fields "url", or {"urls": [...]}.
 * Returns 0, or 1 after answering 400. */
static int collect_urls(const srv_req *r, srv_resp *w, cJSON **json, urls *u)
{
    const srv_upload *up = r->upload;
    const cJSON *list, *it;
    size_t i;

    u->n = 0;
    for (i = 0; up && i < up->nfields; i++) {
        if (strcmp(up->field_name[i], "url") != 0 || !*up->field_value[i])
            continue;
        if (u->n == API_URLS_MAX)
            return srv_fail(r, w, 400, "more than %d URL inputs",
                            API_URLS_MAX), 1;
        u->v[u->n++] = up->field_value[i];
    }
    if (up || !r->body)
        return 0;
    *json = cJSON_ParseWithLength(r->body, r->body_len);
    list = cJSON_GetObjectItemCaseSensitive(*json, "urls");
    if (!cJSON_IsObject(*json) || !cJSON_IsArray(list))
        return srv_fail(r, w, 400, "a JSON upload is {\"urls\": [\"http://"
                        "...\", ...]}"), 1;
    cJSON_ArrayForEach(it, list) {
        if (!cJSON_IsString(it))
            return srv_fail(r, w, 400, "urls: every entry is a string"), 1;
        if (u->n == API_URLS_MAX)
            return srv_fail(r, w, 400, "more than %d URL inputs",
                            API_URLS_MAX), 1;
        u->v[u->n++] = it->valuestring;
    }
    return 0;
}

/* 403s and 400s before anything is queued; 0 when fine. */
static int check_upload(const srv_req *r, srv_resp *w, const urls *u)
{
    const srv_upload *up = r->upload;
    size_t i, nfiles = 0;

    for (i = 0; up && i < up->nfiles; i++) {
        if (strcmp(up->files[i].field, SRV_RULES) == 0) {
            if (!r->s->o->allow_rule_upload)
                return srv_fail(r, w, 403, "rule uploads are off on this "
                                "server (--allow-rule-upload): '%s' refused",
                                up->files[i].name), 1;
        } else {
            nfiles++;
        }
    }
    for (i = 0; i < u->n; i++)
        if (!srv_url_allowed(r->s->o, u->v[i])) {
            char host[256];
            url_host(u->v[i], host, sizeof host);
            return srv_fail(r, w, 403, "URL host '%s' is not allowed here "
                            "(--fetch-allow)", host), 1;
        }
    if (nfiles == 0 && u->n == 0)
        return srv_fail(r, w, 400, "nothing to analyze: give a file (field "
                        "'file', or a raw body) or a URL (field 'url')"), 1;
    return 0;
}

int srv_accept_upload(const srv_req *r, srv_resp *w, char id[SRV_ID_LEN + 1])
{
    cJSON *json = NULL;
    srv_upload *up;
    op_error err;
    urls u;
    int rc;

    id[0] = '\0';
    if (collect_urls(r, w, &json, &u) || check_upload(r, w, &u)) {
        cJSON_Delete(json);
        return 1;
    }
    op_error_clear(&err);
    up = srv_take_upload(r);
    rc = jobs_submit(r->s->jobs, up, u.v, u.n, id, &err);
    cJSON_Delete(json);
    if (rc == OP_ELIMIT) {
        w->retry_after = jobs_retry_after(r->s->jobs);
        return srv_fail(r, w, 429, "the analysis queue is full: retry in %u s",
                        w->retry_after), 1;
    }
    if (rc)
        return srv_fail(r, w, rc == OP_EUSAGE ? 400 : 500, "%s", err.msg), 1;
    return 0;
}

static void put_links(jw *j, const char *id)
{
    char buf[128];

    jw_key(j, "links");
    jw_obj(j);
    snprintf(buf, sizeof buf, "/api/v1/analyses/%s", id);
    put_str(j, "self", buf);
    snprintf(buf, sizeof buf, "/api/v1/analyses/%s/patches", id);
    put_str(j, "patches", buf);
    snprintf(buf, sizeof buf, "/analyses/%s", id);
    put_str(j, "page", buf);
    snprintf(buf, sizeof buf, "/analyses/%s/report.html", id);
    put_str(j, "report_html", buf);
    jw_obj_end(j);
}

static int api_upload(const srv_req *r, srv_resp *w)
{
    char id[SRV_ID_LEN + 1];
    jw j;

    if (srv_accept_upload(r, w, id))
        return 0;
    snprintf(w->location, sizeof w->location, "/api/v1/analyses/%s", id);
    json_begin(w, &j, 202);
    jw_obj(&j);
    put_str(&j, "id", id);
    put_str(&j, "status", "queued");
    put_links(&j, id);
    jw_obj_end(&j);
    json_end(w);
    return 0;
}

/* ---- analyses -------------------------------------------------------------------- */

static void put_analysis_head(jw *j, const srv_analysis *a)
{
    put_str(j, "id", a->id);
    put_str(j, "status", srv_state_name(a->state));
    put_time(j, "created_at", a->created_ms);
    put_time(j, "started_at", a->started_ms);
    put_time(j, "finished_at", a->finished_ms);
    put_str(j, "error", a->state == SRV_FAILED || a->state == SRV_RECORD_FAILED
                            ? a->error : NULL);
    if (a->state == SRV_QUEUED)
        put_int(j, "queue_position", (int64_t)a->queue_pos);
    if (a->state == SRV_DONE || a->state == SRV_RECORD_FAILED)
        put_int(j, "exit_code", a->exit_code);
    put_int(j, "files", (int64_t)a->nfiles);
    put_int(j, "bytes", (int64_t)a->bytes);
    put_links(j, a->id);
}

typedef struct list_ctx {
    jw *j;
    const char *before; /* cursor: an id; items after it */
    int passed;         /* the cursor was met (or none given) */
    int limit, n;
    char next[SRV_ID_LEN + 1];
} list_ctx;

static int list_cb(void *ud, const srv_analysis *a)
{
    list_ctx *c = ud;

    if (!c->passed) {
        c->passed = strcmp(a->id, c->before) == 0;
        return 0;
    }
    if (c->n == c->limit)
        return API_STOP; /* one more exists: the page has a next */
    jw_obj(c->j);
    put_analysis_head(c->j, a);
    jw_obj_end(c->j);
    c->n++;
    snprintf(c->next, sizeof c->next, "%s", a->id);
    return 0;
}

/* The next page's cursor: null on the last page. */
static void put_next(jw *j, int more, const char *cursor)
{
    jw_key(j, "next");
    if (more)
        jw_str(j, cursor);
    else
        jw_null(j);
}

static int api_list(const srv_req *r, srv_resp *w)
{
    list_ctx c;
    jw j;
    int more;

    memset(&c, 0, sizeof c);
    c.before = srv_arg(r, "before");
    if (c.before && !srv_id_valid(c.before))
        return srv_fail(r, w, 400, "before: an analysis id (%d hex digits)",
                        SRV_ID_LEN);
    c.passed = !c.before;
    if ((c.limit = arg_limit(r, w, API_LIMIT_MAX)) < 0)
        return 0;
    json_begin(w, &j, 200);
    c.j = &j;
    jw_obj(&j);
    jw_key(&j, "analyses");
    jw_arr(&j);
    more = jobs_each(r->s->jobs, list_cb, &c) == API_STOP;
    jw_arr_end(&j);
    put_next(&j, more, c.next);
    jw_obj_end(&j);
    json_end(w);
    return 0;
}

/* The analysis of the {id} segment: 0 with *a, 1 after answering 400/404. */
static int find_analysis(const srv_req *r, srv_resp *w, srv_analysis *a)
{
    const char *id = r->nparam ? r->param[0] : "";
    op_error err;
    int rc;

    if (!srv_id_valid(id))
        return srv_fail(r, w, 400, "'%.40s' is not an analysis id (%d "
                        "lowercase hex digits)", id, SRV_ID_LEN), 1;
    op_error_clear(&err);
    rc = jobs_get(r->s->jobs, id, a, &err);
    if (rc == OP_ENOTFOUND)
        return srv_fail(r, w, 404, "no analysis %s", id), 1;
    if (rc)
        return srv_fail(r, w, 500, "%s", err.msg), 1;
    return 0;
}

/* The report names its inputs by where the worker read them, inside
 * DATA, and the run store it took decisions from: the API says them
 * relative to the analysis ("inputs/x.json") and DATA ("history.db"),
 * never the server's folders. */
static void strip_dir(cJSON *s, const char *dir)
{
    const char *v = cJSON_GetStringValue(s);
    size_t n = strlen(dir);

    if (v && strncmp(v, dir, n) == 0 && v[n] == '/')
        memmove(s->valuestring, v + n + 1, strlen(v + n + 1) + 1);
}

static void relative_paths(cJSON *rep, const char *data, const char *dir)
{
    cJSON *in;

    cJSON_ArrayForEach(in, cJSON_GetObjectItemCaseSensitive(rep, "inputs"))
        strip_dir(cJSON_GetObjectItemCaseSensitive(in, "path"), dir);
    /* decisions from the store: "history.db" (the worker, in DATA/analyses/ID,
     * names it "../../history.db") */
    in = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rep, "applied"),
                                          "baseline");
    strip_dir(in, data);
    strip_dir(in, "..");
    strip_dir(in, "..");
}

/* report.json of a finished analysis, parsed; NULL after answering. */
static cJSON *read_report(const srv_req *r, srv_resp *w, const srv_analysis *a)
{
    char path[4200];
    size_t len = 0;
    op_error err;
    char *buf;
    cJSON *rep;

    snprintf(path, sizeof path, "%s/%s", a->dir, SRV_REPORT_JSON);
    op_error_clear(&err);
    if (!(buf = input_read_file(path, API_REPORT_MAX, &len, &err))) {
        srv_fail(r, w, 500, "analysis %s: its report cannot be read (%s)",
                 a->id, err.code == OP_ELIMIT ? "too large" : "missing");
        return NULL;
    }
    rep = cJSON_ParseWithLength(buf, len);
    free(buf);
    if (!cJSON_IsObject(rep)) {
        cJSON_Delete(rep);
        srv_fail(r, w, 500, "analysis %s: its report is not JSON", a->id);
        return NULL;
    }
    relative_paths(rep, r->s->data, a->dir);
    return rep;
}

static int overlay_cb(void *ud, const store_decision *d)
{
    cJSON *o = ud;

    if (!cJSON_AddStringToObject(o, "status", d->status) ||
        !(d->comment ? cJSON_AddStringToObject(o, "comment", d->comment)
                     : cJSON_AddNullToObject(o, "comment")) ||
        !cJSON_AddStringToObject(o, "decided_at", d->decided_at) ||
        !(d->decided_by ? cJSON_AddStringToObject(o, "decided_by", d->decided_by)
                        : cJSON_AddNullToObject(o, "decided_by")))
        return OP_ENOMEM;
    return API_STOP;
}

/* The store's decision of fp as a new object, else a new null; NULL on
 * an error. */
static cJSON *decision_json(store *st, const char *fp)
{
    cJSON *d = cJSON_CreateObject();
    op_error err;
    int rc;

    if (!d || !st || !fp)
        return d ? (cJSON_Delete(d), cJSON_CreateNull()) : NULL;
    rc = store_each_decision(st, fp, overlay_cb, d, &err);
    if (rc == API_STOP)
        return d;
    cJSON_Delete(d);
    return rc == 0 ? cJSON_CreateNull() : NULL;
}

/* Lays the store's current decisions over the report's findings:
 * "decision": {status, comment, decided_at, decided_by} or null. The
 * report was written when the analysis ran; decisions come later. */
static int overlay_decisions(store *st, cJSON *rep)
{
    cJSON *f, *list = cJSON_GetObjectItemCaseSensitive(rep, "findings");

    cJSON_ArrayForEach(f, list) {
        const char *fp = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(f, "fingerprint"));
        cJSON *d = decision_json(st, fp);
        if (!d || !cJSON_AddItemToObject(f, "decision", d)) {
            cJSON_Delete(d);
            return OP_ENOMEM;
        }
    }
    return 0;
}

static int api_get(const srv_req *r, srv_resp *w)
{
    srv_analysis a;
    cJSON *rep = NULL;
    store *st = NULL;
    jw j;

    if (find_analysis(r, w, &a))
        return 0;
    if (a.state == SRV_DONE || a.state == SRV_RECORD_FAILED) {
        if (!(rep = read_report(r, w, &a)))
            return 0;
        if (open_store(r, w, 0, &st) < 0 || overlay_decisions(st, rep)) {
            store_close(st);
            cJSON_Delete(rep);
            return w->status ? 0 : srv_fail(r, w, 500, "out of memory");
        }
        store_close(st);
    }
    json_begin(w, &j, 200);
    jw_obj(&j);
    put_analysis_head(&j, &a);
    jw_key(&j, "report");
    if (rep)
        jw_cjson(&j, rep);
    else
        jw_null(&j);
    jw_obj_end(&j);
    json_end(w);
    cJSON_Delete(rep);
    return 0;
}

/* ---- retry ------------------------------------------------------------------------ */

int srv_retry(const srv_req *r, srv_resp *w, const char *id)
{
    op_error err;
    int rc;

    op_error_clear(&err);
    rc = jobs_retry(r->s->jobs, id, &err);
    if (rc == OP_ELIMIT) {
        w->retry_after = jobs_retry_after(r->s->jobs);
        return srv_fail(r, w, 429, "%s: retry in %u s", err.msg, w->retry_after), 1;
    }
    if (rc)
        return srv_fail(r, w, rc == OP_ENOTFOUND ? 404 : rc == OP_EUSAGE ? 409 : 500,
                        "%s", err.msg), 1;
    return 0;
}

static int api_retry(const srv_req *r, srv_resp *w)
{
    srv_analysis a;
    jw j;

    if (find_analysis(r, w, &a) || srv_retry(r, w, a.id))
        return 0;
    snprintf(w->location, sizeof w->location, "/api/v1/analyses/%s", a.id);
    json_begin(w, &j, 202);
    jw_obj(&j);
    put_str(&j, "id", a.id);
    put_str(&j, "status", "queued");
    put_links(&j, a.id);
    jw_obj_end(&j);
    json_end(w);
    return 0;
}

/* ---- patches ---------------------------------------------------------------------- */

typedef struct patches {
    jw *j;     /* JSON: one {file, text} each */
    FILE *txt; /* text: the files one after the other */
} patches;

static int patch_cb(void *ud, const char *name, const char *text, size_t len,
                    op_error *err)
{
    patches *p = ud;

    (void)err;
    if (p->txt) {
        fprintf(p->txt, "# ==== %s ====\n", name);
        fwrite(text, 1, len, p->txt);
        fputc('\n', p->txt);
        return 0;
    }
    jw_obj(p->j);
    put_str(p->j, "file", name);
    put_str(p->j, "text", text);
    jw_obj_end(p->j);
    return 0;
}

/* The run ids of a report (runs[].id), at most API_PATCH_RUNS. */
static size_t report_runs(const cJSON *rep, const char **ids)
{
    const cJSON *run;
    size_t n = 0;

    cJSON_ArrayForEach(run, cJSON_GetObjectItemCaseSensitive(rep, "runs")) {
        const char *id = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(run, "id"));
        if (id && n < API_PATCH_RUNS)
            ids[n++] = id;
    }
    return n;
}

static int wants_text(const srv_req *r)
{
    const char *f = srv_arg(r, "format"), *acc = srv_header(r, "Accept");

    if (f)
        return strcmp(f, "text") == 0 ? 1 : strcmp(f, "json") == 0 ? 0 : -1;
    return acc && strncasecmp(acc, "text/plain", 10) == 0;
}

static int api_patches(const srv_req *r, srv_resp *w)
{
    const char **run_ids = NULL;
    srv_analysis a;
    cJSON *rep = NULL;
    store *st = NULL;
    emit_stats es;
    op_error err;
    patches p;
    int text = wants_text(r), rc = 0, have;
    size_t n = 0;
    jw j;

    if (text < 0)
        return srv_fail(r, w, 400, "format: json or text");
    if (find_analysis(r, w, &a))
        return 0;
    if (a.state != SRV_DONE)
        return srv_fail(r, w, 409, "analysis %s is %s: patches come when it is "
                        "done", a.id, srv_state_name(a.state));
    if (!(rep = read_report(r, w, &a)))
        return 0;
    if (!(run_ids = malloc(API_PATCH_RUNS * sizeof *run_ids)) ||
        (have = open_store(r, w, 0, &st)) < 0) {
        free(run_ids);
        cJSON_Delete(rep);
        return w->status ? 0 : srv_fail(r, w, 500, "out of memory");
    }
    n = report_runs(rep, run_ids);
    memset(&p, 0, sizeof p);
    memset(&es, 0, sizeof es);
    op_error_clear(&err);
    w->status = 200;
    if (text) {
        w->type = "text/plain; charset=utf-8";
        snprintf(w->filename, sizeof w->filename, "optipipe-patches-%s.txt",
                 a.id);
        p.txt = w->f;
    } else {
        json_begin(w, &j, 200);
        p.j = &j;
        jw_obj(&j);
        jw_key(&j, "patches");
        jw_arr(&j);
    }
    if (st)
        rc = emit_changes_stored(st, run_ids, n, NULL, patch_cb, &p, &es, &err);
    if (!text) {
        jw_arr_end(&j);
        put_int(&j, "refused", (int64_t)es.nrefused);
        jw_obj_end(&j);
        json_end(w);
    }
    store_close(st);
    free(run_ids);
    cJSON_Delete(rep);
    if (rc) {
        /* what was written is dropped: the error replaces it */
        rewind(w->f);
        w->filename[0] = '\0';
        return srv_fail(r, w, 500, "%s", err.msg);
    }
    return 0;
}

/* ---- jobs and runs ------------------------------------------------------------------- */

typedef struct jobs_ctx {
    jw *j;
    const char *before;
    int passed, limit, n, more;
    char next[SRV_SEGMENT_MAX + 1];
} jobs_ctx;

static int job_cb(void *ud, const store_job *sj)
{
    jobs_ctx *c = ud;
    char *runs;

    if (!c->passed) {
        c->passed = strcmp(sj->job, c->before) == 0;
        return 0;
    }
    if (c->n == c->limit) {
        c->more = 1;
        return API_STOP;
    }
    jw_obj(c->j);
    put_str(c->j, "job", sj->job);
    put_str(c->j, "source", sj->source);
    put_int(c->j, "runs", sj->nruns);
    put_time(c->j, "last_started_at", sj->last_started);
    jw_key(c->j, "links");
    jw_obj(c->j);
    /* the job key percent-encoded as one segment */
    if ((runs = malloc(strlen(sj->job) * 3 + 32))) {
        char *o = runs + sprintf(runs, "/api/v1/jobs/");
        const char *s;
        for (s = sj->job; *s; s++) {
            unsigned char ch = (unsigned char)*s;
            if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                (ch >= '0' && ch <= '9') || strchr("-._~", ch))
                *o++ = (char)ch;
            else
                o += sprintf(o, "%%%02X", ch);
        }
        strcpy(o, "/runs");
    }
    put_str(c->j, "runs", runs);
    free(runs);
    jw_obj_end(c->j);
    jw_obj_end(c->j);
    c->n++;
    snprintf(c->next, sizeof c->next, "%s", sj->job);
    return 0;
}

/* Ends a JSON answer read from the store st (closed here): rc from its
 * reader, API_STOP being a stop on purpose; a failure replaces what was
 * written with a 500 naming err. */
static int store_answer(const srv_req *r, srv_resp *w, store *st, int rc,
                        const op_error *err)
{
    json_end(w);
    store_close(st);
    if (rc && rc != API_STOP) {
        rewind(w->f);
        return srv_fail(r, w, 500, "%s", err->msg);
    }
    return 0;
}

static int api_jobs(const srv_req *r, srv_resp *w)
{
    jobs_ctx c;
    store *st = NULL;
    op_error err;
    int have, rc = 0;
    jw j;

    memset(&c, 0, sizeof c);
    c.before = srv_arg(r, "before");
    c.passed = !c.before;
    if ((c.limit = arg_limit(r, w, API_LIMIT_MAX)) < 0 ||
        (have = open_store(r, w, 0, &st)) < 0)
        return 0;
    json_begin(w, &j, 200);
    c.j = &j;
    jw_obj(&j);
    jw_key(&j, "jobs");
    jw_arr(&j);
    if (have == 0)
        rc = store_each_job(st, job_cb, &c, &err);
    jw_arr_end(&j);
    put_next(&j, c.more, c.next);
    jw_obj_end(&j);
    return store_answer(r, w, st, rc, &err);
}

typedef struct run_ctx {
    jw *j;
    store *st;
    op_error *err;
    int limit, n, more, full;
    int64_t next;
} run_ctx;

static int finding_cb(void *ud, const store_finding *f)
{
    run_ctx *c = ud;
    jw *j = c->j;

    jw_obj(j);
    put_str(j, "rule", f->rule);
    put_str(j, "fingerprint", f->fingerprint);
    put_str(j, "node", f->node);
    put_str(j, "severity", f->severity);
    put_str(j, "message", f->message);
    if (c->full) {
        put_str(j, "legacy_fingerprint", f->legacy_fp);
        put_json_text(j, "changes", f->changes_json);
        put_json_text(j, "evidence", f->evidence_json);
        jw_key(j, "impact");
        if (f->impact_ms >= 0) {
            jw_obj(j);
            jw_key(j, "time_saved_ms");
            jw_num(j, f->impact_ms);
            jw_obj_end(j);
        } else {
            jw_null(j);
        }
    }
    jw_key(j, "decision");
    if (f->decision) {
        jw_obj(j);
        put_str(j, "status", f->decision);
        put_str(j, "comment", f->comment);
        jw_obj_end(j);
    } else {
        jw_null(j);
    }
    jw_obj_end(j);
    return 0;
}

static int node_cb(void *ud, const store_node *n)
{
    jw *j = ((run_ctx *)ud)->j;

    jw_obj(j);
    put_str(j, "id", n->id);
    put_str(j, "kind", n->kind);
    put_str(j, "name", n->name);
    put_str(j, "status", n->status);
    put_opt_int(j, "duration_ms", n->set, MSET_DURATION_MS, n->duration_ms);
    put_opt_int(j, "parallelism", n->set, MSET_PARALLELISM, n->parallelism);
    put_json_text(j, "metrics", n->metrics_json);
    jw_obj_end(j);
    return 0;
}

/* One stored run; c->full adds config, metrics, nodes and the findings'
 * changes and evidence (GET /api/v1/runs/{run}). */
static int run_cb(void *ud, const store_run *sr)
{
    run_ctx *c = ud;
    jw *j = c->j;
    int rc;

    if (c->n == c->limit) {
        c->more = 1;
        return API_STOP;
    }
    jw_obj(j);
    put_str(j, "id", sr->run_id);
    put_str(j, "job", sr->job);
    put_str(j, "source", sr->source);
    put_str(j, "name", sr->name);
    put_str(j, "status", sr->status);
    put_time(j, "started_at", sr->set & MSET_STARTED_AT ? sr->started_at : 0);
    put_time(j, "ended_at", sr->set & MSET_ENDED_AT ? sr->ended_at : 0);
    put_opt_int(j, "duration_ms", sr->set, MSET_DURATION_MS, sr->duration_ms);
    put_str(j, "engine_version", sr->engine_version);
    put_str(j, "origin", sr->origin);
    put_str(j, "content_hash", sr->content_hash);
    put_time(j, "recorded_at", sr->recorded_at);
    put_int(j, "nodes_count", sr->nnodes);
    if (c->full) {
        put_json_text(j, "config", sr->config_json);
        put_json_text(j, "metrics", sr->metrics_json);
        jw_key(j, "nodes");
        jw_arr(j);
        if ((rc = store_each_node(c->st, sr->pk, node_cb, c, c->err)))
            return rc;
        jw_arr_end(j);
    }
    jw_key(j, "findings");
    jw_arr(j);
    if ((rc = store_each_finding(c->st, sr->pk, finding_cb, c, c->err)))
        return rc;
    jw_arr_end(j);
    jw_obj_end(j);
    c->n++;
    c->next = sr->started_at;
    return c->full ? API_STOP : 0; /* one run when full */
}

/* ?before for runs: epoch ms; 0 when absent; -1 after answering 400. */
static int64_t arg_before_ms(const srv_req *r, srv_resp *w)
{
    const char *v = srv_arg(r, "before");
    char *end;
    long long n;

    if (!v)
        return 0;
    errno = 0;
    n = strtoll(v, &end, 10);
    if (errno || end == v || *end || n < 1) {
        srv_fail(r, w, 400, "before '%.40s': epoch milliseconds (the next of "
                 "the previous page)", v);
        return -1;
    }
    return n;
}

static int job_exists(void *ud, const store_run *sr)
{
    (void)sr;
    *(int *)ud = 1;
    return API_STOP;
}

static int api_runs(const srv_req *r, srv_resp *w)
{
    const char *job = r->nparam ? r->param[0] : "";
    run_ctx c;
    store *st = NULL;
    op_error err;
    int64_t before;
    int have, found = 0, rc;
    char cursor[JW_INT_TEXT];
    jw j;

    memset(&c, 0, sizeof c);
    if (!*job || strlen(job) > SRV_SEGMENT_MAX)
        return srv_fail(r, w, 400, "a job key is 1 to %d bytes",
                        SRV_SEGMENT_MAX);
    if ((c.limit = arg_limit(r, w, API_RUNS_MAX)) < 0 ||
        (before = arg_before_ms(r, w)) < 0 ||
        (have = open_store(r, w, 0, &st)) < 0)
        return 0;
    op_error_clear(&err);
    if (have == 0)
        store_each_run(st, job, NULL, NULL, 0, 1, job_exists, &found, &err);
    if (!found) {
        store_close(st);
        return srv_fail(r, w, 404, "no job '%.200s' in the run store", job);
    }
    json_begin(w, &j, 200);
    c.j = &j;
    c.st = st;
    c.err = &err;
    jw_obj(&j);
    put_str(&j, "job", job);
    jw_key(&j, "runs");
    jw_arr(&j);
    rc = store_each_run(st, job, NULL, NULL, before, c.limit + 1, run_cb, &c,
                        &err);
    jw_arr_end(&j);
    jw_int_text(cursor, c.next);
    put_next(&j, c.more && c.next > 0, cursor);
    jw_obj_end(&j);
    return store_answer(r, w, st, rc, &err);
}

static int api_run(const srv_req *r, srv_resp *w)
{
    const char *ref = r->nparam ? r->param[0] : "";
    run_ctx c;
    store *st = NULL;
    op_error err;
    int have, rc = 0;
    jw j;

    memset(&c, 0, sizeof c);
    if (!*ref || strlen(ref) > SRV_SEGMENT_MAX)
        return srv_fail(r, w, 400, "a run id is 1 to %d bytes",
                        SRV_SEGMENT_MAX);
    if ((have = open_store(r, w, 0, &st)) < 0)
        return 0;
    json_begin(w, &j, 200);
    c.j = &j;
    c.st = st;
    c.err = &err;
    c.limit = 1;
    c.full = 1;
    op_error_clear(&err);
    if (have == 0)
        rc = store_find_run(st, ref, run_cb, &c, &err);
    json_end(w);
    store_close(st);
    if ((rc && rc != API_STOP) || c.n == 0) {
        rewind(w->f);
        return rc && rc != API_STOP
                   ? srv_fail(r, w, 500, "%s", err.msg)
                   : srv_fail(r, w, 404, "no run '%.200s' in the run store",
                              ref);
    }
    return 0;
}

/* ---- the table ------------------------------------------------------------------------ */

const srv_route srv_routes_api[] = {
    {"POST", "/api/v1/analyses", SRV_API | SRV_UPLOAD, api_upload,
     "Upload files or URLs for analysis"},
    {"GET", "/api/v1/analyses", SRV_API, api_list, "List analyses"},
    {"GET", "/api/v1/analyses/{id}", SRV_API, api_get,
     "An analysis: status, then its JSON report"},
    {"GET", "/api/v1/analyses/{id}/patches", SRV_API, api_patches,
     "The config patches of the approved changes"},
    {"POST", "/api/v1/analyses/{id}/retry", SRV_API, api_retry,
     "Run a failed or record-failed analysis again"},
    {"GET", "/api/v1/jobs", SRV_API, api_jobs, "List jobs"},
    {"GET", "/api/v1/jobs/{job}/runs", SRV_API, api_runs,
     "The runs of a job, newest first"},
    {"GET", "/api/v1/runs/{run}", SRV_API, api_run, "One stored run"},
    {"POST", "/api/v1/decisions", SRV_API | SRV_BODY, api_decide,
     "Approve, dismiss or reopen a finding"},
    {"POST", "/api/v1/rules/lint", SRV_API | SRV_UPLOAD, srv_api_rules_lint,
     "Lint an uploaded rule pack"},
    {"GET", "/api/v1/me", SRV_API | SRV_LIGHT, srv_api_me,
     "Who this request is: user, role"},
    {"GET", "/api/v1/users", SRV_API | SRV_LIGHT, srv_api_users,
     "The users of --users and their roles (admin)"},
    {"GET", "/api/v1/findings/{fp}/history", SRV_API, srv_api_finding_history,
     "A finding's decision and every change of it, newest first"},
    {"GET", "/api/v1/notifications", SRV_API, srv_api_notifications,
     "The webhook delivery log, newest first"},
    {0},
};
