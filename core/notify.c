/*
 * notify.c - webhook notifications (notify.h, docs/notify.md): checking
 * the config's endpoints, turning an analysis into events, rendering the
 * Slack and the signed JSON payloads, and delivering them through the one
 * HTTP client (fetch_http.c: timeouts, retries with back-off, a bounded
 * answer, http and https only, no redirect followed), remembering in the
 * run store what each endpoint was told.
 *
 * A delivery never changes what the analysis said: the caller runs it
 * after the report and the recording, its time is bounded per endpoint,
 * and its failures are logged and said, not returned as the exit code.
 */
#include "notify.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "baseline.h"
#include "fetch_http.h"
#include "session.h"
#include "store.h"

/* ---- the config --------------------------------------------------------- */

static const char *const kind_names[NOTIFY_NKINDS + 1] = {
    "finding", "regression", "ineffective", "failed", NULL};

const char *notify_kind_name(size_t k)
{
    return k < NOTIFY_NKINDS ? kind_names[k] : NULL;
}

/* One endpoint, as its table says, with the defaults filled in. The
 * strings are borrowed from the config's cJSON. */
typedef struct endpoint {
    const char *name, *url, *kind, *secret_env;
    severity min_sev;
    unsigned events; /* 1 << notify_kind */
    long long retries, timeout_ms, deadline_ms;
} endpoint;

static const char *const endpoint_keys[] = {
    "name", "url", "kind", "min_severity", "events", "secret_env", "retries",
    "timeout_ms", "deadline_ms", NULL};

static int is_list(const cJSON *v)
{
    return cJSON_IsArray(v) || (cJSON_IsObject(v) && !v->child);
}

static int name_ok(const char *s)
{
    size_t i;

    for (i = 0; s[i]; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("_.-", s[i]))
            return 0;
    return i > 0 && i <= NOTIFY_NAME_MAX;
}

static int env_name_ok(const char *s)
{
    size_t i;

    for (i = 0; s[i]; i++)
        if (!(isupper((unsigned char)s[i]) || s[i] == '_' ||
              (i > 0 && isdigit((unsigned char)s[i]))))
            return 0;
    return i > 0 && i <= 128;
}

/* http:// or https://, a host, no credentials, no line breaks or spaces. */
static int url_ok(const char *u)
{
    const char *host, *end;
    size_t i;

    if (strlen(u) > NOTIFY_URL_MAX)
        return 0;
    for (i = 0; u[i]; i++)
        if ((unsigned char)u[i] <= ' ' || u[i] == 0x7f)
            return 0;
    if (!strncmp(u, "http://", 7))
        host = u + 7;
    else if (!strncmp(u, "https://", 8))
        host = u + 8;
    else
        return 0;
    end = host + strcspn(host, "/?#");
    return end > host && !memchr(host, '@', (size_t)(end - host));
}

static long long int_of(const cJSON *t, const char *key, long long def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, key);

    return cJSON_IsNumber(v) ? (long long)v->valuedouble : def;
}

static const char *str_of(const cJSON *t, const char *key, const char *def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, key);

    return cJSON_IsString(v) ? v->valuestring : def;
}

/* The endpoint of table t, already checked (notify_check). */
static void endpoint_of(const cJSON *t, endpoint *ep)
{
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(t, "events"), *it;
    size_t k;

    memset(ep, 0, sizeof *ep);
    ep->name = str_of(t, "name", "");
    ep->url = str_of(t, "url", "");
    ep->kind = str_of(t, "kind", "json");
    ep->secret_env = str_of(t, "secret_env", NULL);
    ep->min_sev = (severity)severity_parse(str_of(t, "min_severity",
                                                  "warning"));
    ep->retries = int_of(t, "retries", NOTIFY_RETRIES);
    ep->timeout_ms = int_of(t, "timeout_ms", NOTIFY_TIMEOUT_MS);
    ep->deadline_ms = int_of(t, "deadline_ms", NOTIFY_DEADLINE_MS);
    if (!ev) {
        ep->events = (1u << NOTIFY_NKINDS) - 1;
        return;
    }
    cJSON_ArrayForEach(it, ev)
        for (k = 0; k < NOTIFY_NKINDS; k++)
            if (cJSON_IsString(it) && !strcmp(it->valuestring, kind_names[k]))
                ep->events |= 1u << k;
}

static int why_set(char *why, size_t n, size_t i, const char *key,
                   const char *what)
{
    snprintf(why, n, "notify[%zu]%s%s: %s", i + 1, *key ? "." : "", key,
             what);
    return -1;
}

static int check_int(const cJSON *t, const char *key, double lo, double hi,
                     size_t i, char *why, size_t n)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(t, key);
    char what[80];

    if (!v)
        return 0;
    if (cJSON_IsNumber(v) && v->valuedouble >= lo && v->valuedouble <= hi &&
        v->valuedouble == (double)(long long)v->valuedouble)
        return 0;
    snprintf(what, sizeof what, "expected a whole number from %.0f to %.0f",
             lo, hi);
    return why_set(why, n, i, key, what);
}

static int check_events(const cJSON *v, size_t i, char *why, size_t n)
{
    const cJSON *it;
    size_t k;

    if (!v)
        return 0;
    if (!is_list(v) || !v->child)
        return why_set(why, n, i, "events", "expected a list of "
                       "\"finding\", \"regression\", \"ineffective\", "
                       "\"failed\"");
    cJSON_ArrayForEach(it, v) {
        for (k = 0; k < NOTIFY_NKINDS; k++)
            if (cJSON_IsString(it) && !strcmp(it->valuestring, kind_names[k]))
                break;
        if (k == NOTIFY_NKINDS)
            return why_set(why, n, i, "events", "unknown event (known: "
                           "finding, regression, ineffective, failed)");
    }
    return 0;
}

/* One endpoint table, the i-th of list (whose earlier names it may not
 * take again). */
static int check_endpoint(const cJSON *t, size_t i, const cJSON *list,
                          char *why, size_t n)
{
    const cJSON *it, *prev;
    const char *s;
    size_t k;

    if (!cJSON_IsObject(t))
        return why_set(why, n, i, "", "expected a table { name = ..., url = "
                       "..., kind = ... }");
    cJSON_ArrayForEach(it, t) {
        for (k = 0; endpoint_keys[k]; k++)
            if (it->string && !strcmp(it->string, endpoint_keys[k]))
                break;
        if (!endpoint_keys[k])
            return why_set(why, n, i, it->string ? it->string : "?",
                           "unknown key (known: name, url, kind, "
                           "min_severity, events, secret_env, retries, "
                           "timeout_ms, deadline_ms)");
        if (k < 6 && k != 4 && !cJSON_IsString(it)) /* the strings */
            return why_set(why, n, i, it->string, "expected a string");
    }
    if (!(s = str_of(t, "name", NULL)) || !name_ok(s))
        return why_set(why, n, i, "name", "expected 1 to 64 letters, digits, "
                       "'_', '.' or '-'");
    for (prev = list->child; prev && prev != t; prev = prev->next)
        if (!strcmp(str_of(prev, "name", ""), s))
            return why_set(why, n, i, "name", "given twice");
    if (!(s = str_of(t, "url", NULL)) || !url_ok(s))
        return why_set(why, n, i, "url", "expected an http:// or https:// "
                       "URL with a host and no user or password");
    s = str_of(t, "kind", NULL);
    if (!s || (strcmp(s, "slack") && strcmp(s, "json")))
        return why_set(why, n, i, "kind", "expected \"slack\" or \"json\"");
    if (!strcmp(s, "json") && !str_of(t, "secret_env", NULL))
        return why_set(why, n, i, "secret_env", "a json endpoint is signed: "
                       "name the environment variable holding its secret "
                       "(the secret itself is never written in the file)");
    if ((s = str_of(t, "secret_env", NULL)) && !env_name_ok(s))
        return why_set(why, n, i, "secret_env", "expected the name of an "
                       "environment variable (A-Z, 0-9, _)");
    if ((s = str_of(t, "min_severity", NULL)) && severity_parse(s) < 0)
        return why_set(why, n, i, "min_severity", "expected \"info\", "
                       "\"warning\" or \"error\"");
    if (check_events(cJSON_GetObjectItemCaseSensitive(t, "events"), i, why, n)
        || check_int(t, "retries", 0, 10, i, why, n)
        || check_int(t, "timeout_ms", 100, 60000, i, why, n)
        || check_int(t, "deadline_ms", 100, 300000, i, why, n))
        return -1;
    return 0;
}

int notify_check(const cJSON *v, char *why, size_t n)
{
    const cJSON *it;
    size_t i = 0;

    if (!is_list(v)) {
        snprintf(why, n, "notify: expected a list of endpoint tables "
                 "{ { name = ..., url = ..., kind = ... }, ... }");
        return -1;
    }
    cJSON_ArrayForEach(it, v) {
        if (i == NOTIFY_MAX_ENDPOINTS) {
            snprintf(why, n, "notify: more than %d endpoints",
                     NOTIFY_MAX_ENDPOINTS);
            return -1;
        }
        if (check_endpoint(it, i++, v, why, n))
            return -1;
    }
    return 0;
}

/* ---- events ------------------------------------------------------------- */

/* What an event says, hashed: a change of any of it is a new event. */
static void digest_of(notify_event *e)
{
    sha256_ctx c;
    unsigned char d[SHA256_LEN];
    const char *part[5] = {kind_names[e->kind], e->rule, e->severity,
                           e->message, e->recommendation};
    size_t i;

    sha256_init(&c);
    for (i = 0; i < 5; i++) {
        sha256_update(&c, part[i] ? part[i] : "", part[i] ? strlen(part[i])
                                                          : 0);
        sha256_update(&c, "\n", 1);
    }
    sha256_final(&c, d);
    for (i = 0; i < SHA256_LEN; i++)
        snprintf(e->digest + 2 * i, 3, "%02x", d[i]);
}

static notify_kind kind_of(const finding *f)
{
    size_t n = strlen(f->rule);
    const cJSON *o;

    if (n > 11 && !strcmp(f->rule + n - 11, ".regression"))
        return NOTIFY_REGRESSION;
    if (!strcmp(f->rule, "mixed.change-outcome") &&
        (o = cJSON_GetObjectItemCaseSensitive(f->evidence, "outcome")) &&
        cJSON_IsString(o) && !strcmp(o->valuestring, "ineffective"))
        return NOTIFY_INEFFECTIVE;
    return NOTIFY_FINDING;
}

int notify_collect(const model *m, const results *res, const char *failure,
                   notify_events *out, op_error *err)
{
    size_t i;
    notify_event *e;

    memset(out, 0, sizeof *out);
    if (failure) {
        if (!(out->ev = calloc(1, sizeof *out->ev)) ||
            !(out->failure = strdup(failure)))
            return op_error_set(err, OP_ENOMEM, "out of memory");
        e = out->ev;
        e->kind = NOTIFY_FAILED;
        e->rule = "";
        e->severity = "error";
        e->sev = SEV_ERROR;
        e->message = out->failure;
        digest_of(e);
        memcpy(e->fingerprint, e->digest, 16); /* the failure's text */
        out->n = 1;
        return 0;
    }
    if (!res->n)
        return 0;
    if (!(out->ev = calloc(res->n, sizeof *out->ev)))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    for (i = 0; i < res->n; i++) {
        const finding *f = &res->f[i];
        if (f->suppressed != FINDING_SHOWN)
            continue; /* decided or ignored: nothing new to tell */
        e = &out->ev[out->n++];
        e->kind = kind_of(f);
        e->rule = f->rule;
        e->sev = f->sev;
        e->severity = severity_name(f->sev);
        e->source = f->source;
        e->run_id = f->run_id;
        e->node = f->node_name ? f->node_name : f->node_id;
        e->job = m && f->run_index < m->nruns
                     ? model_run_job(m->runs[f->run_index]) : NULL;
        e->message = f->message;
        e->recommendation = f->recommendation;
        memcpy(e->fingerprint, f->fingerprint, sizeof e->fingerprint);
        digest_of(e);
    }
    return 0;
}

void notify_events_free(notify_events *e)
{
    free(e->ev);
    free(e->failure);
    cJSON_Delete(e->doc);
    memset(e, 0, sizeof *e);
}

/* ---- payloads ----------------------------------------------------------- */

/* Slack's mrkdwn wants &, < and > escaped (its "control characters"). */
static int slack_escape(char **buf, size_t *len, size_t *cap, const char *s)
{
    for (; s && *s; s++) {
        const char *rep = *s == '&' ? "&amp;" : *s == '<' ? "&lt;"
                          : *s == '>' ? "&gt;" : NULL;
        size_t n = rep ? strlen(rep) : 1;
        if (*len + n + 1 > *cap) {
            size_t nc = (*cap ? *cap * 2 : 256) + n;
            char *q = realloc(*buf, nc);
            if (!q)
                return -1;
            *buf = q;
            *cap = nc;
        }
        memcpy(*buf + *len, rep ? rep : s, n);
        *len += n;
        (*buf)[*len] = '\0';
    }
    return 0;
}

/* "*warning* regression `rule` job (node): message" lines under a title. */
static char *slack_text(const notify_event *const *ev, size_t n, size_t more)
{
    char *buf = NULL, head[96];
    size_t len = 0, cap = 0, i, total = n + more;
    int bad;

    snprintf(head, sizeof head, "optipipe: %zu alert%s", total,
             total == 1 ? "" : "s");
    bad = slack_escape(&buf, &len, &cap, head);
    for (i = 0; i < n && !bad; i++) {
        const notify_event *e = ev[i];
        bad = slack_escape(&buf, &len, &cap, "\n\xe2\x80\xa2 *") ||
              slack_escape(&buf, &len, &cap, e->severity) ||
              slack_escape(&buf, &len, &cap, "* ") ||
              slack_escape(&buf, &len, &cap, kind_names[e->kind]);
        if (!bad && e->rule && *e->rule)
            bad = slack_escape(&buf, &len, &cap, " `") ||
                  slack_escape(&buf, &len, &cap, e->rule) ||
                  slack_escape(&buf, &len, &cap, "`");
        if (!bad && e->job)
            bad = slack_escape(&buf, &len, &cap, " ") ||
                  slack_escape(&buf, &len, &cap, e->job);
        if (!bad && e->node)
            bad = slack_escape(&buf, &len, &cap, " (") ||
                  slack_escape(&buf, &len, &cap, e->node) ||
                  slack_escape(&buf, &len, &cap, ")");
        if (!bad)
            bad = slack_escape(&buf, &len, &cap, ": ") ||
                  slack_escape(&buf, &len, &cap, e->message);
        if (!bad && e->recommendation)
            bad = slack_escape(&buf, &len, &cap, "\n    \xe2\x86\x92 ") ||
                  slack_escape(&buf, &len, &cap, e->recommendation);
        if (!bad && e->analysis)
            bad = slack_escape(&buf, &len, &cap, "\n    analysis ") ||
                  slack_escape(&buf, &len, &cap, e->analysis);
        if (!bad && e->link)
            bad = slack_escape(&buf, &len, &cap, " ") ||
                  slack_escape(&buf, &len, &cap, e->link);
    }
    if (!bad && more) {
        snprintf(head, sizeof head, "\n\xe2\x80\xa6 and %zu more (next "
                 "time)", more);
        bad = slack_escape(&buf, &len, &cap, head);
    }
    if (bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int add_str(cJSON *o, const char *key, const char *v)
{
    return (v ? cJSON_AddStringToObject(o, key, v)
              : cJSON_AddNullToObject(o, key)) ? 0 : -1;
}

static cJSON *json_event(const notify_event *e)
{
    cJSON *o = cJSON_CreateObject();

    if (!o || add_str(o, "event", kind_names[e->kind]) ||
        add_str(o, "rule", e->kind == NOTIFY_FAILED ? NULL : e->rule) ||
        add_str(o, "severity", e->severity) ||
        add_str(o, "fingerprint", e->fingerprint) ||
        add_str(o, "job", e->job) || add_str(o, "source", e->source) ||
        add_str(o, "run_id", e->run_id) || add_str(o, "node", e->node) ||
        add_str(o, "message", e->message) ||
        add_str(o, "recommendation", e->recommendation) ||
        add_str(o, "digest", e->digest) ||
        add_str(o, "analysis", e->analysis) || add_str(o, "link", e->link)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

static cJSON *json_doc(const char *name, const notify_event *const *ev,
                       size_t n, size_t more, int64_t now)
{
    cJSON *doc = cJSON_CreateObject(), *arr, *one;
    char at[32];
    time_t t = (time_t)now;
    struct tm tm;
    size_t i;

    strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
    if (!doc || !cJSON_AddNumberToObject(doc, "version",
                                         NOTIFY_PAYLOAD_VERSION) ||
        add_str(doc, "type", "optipipe.notification") ||
        add_str(doc, "endpoint", name) || add_str(doc, "sent_at", at) ||
        !cJSON_AddNumberToObject(doc, "more", (double)more) ||
        !(arr = cJSON_AddArrayToObject(doc, "events")))
        goto bad;
    for (i = 0; i < n; i++) {
        if (!(one = json_event(ev[i])))
            goto bad;
        cJSON_AddItemToArray(arr, one);
    }
    return doc;
bad:
    cJSON_Delete(doc);
    return NULL;
}

int notify_render(const char *kind, const char *name,
                  const notify_event *const *ev, size_t n, size_t more,
                  int64_t now, char **body, op_error *err)
{
    cJSON *doc = NULL;
    char *text = NULL;

    *body = NULL;
    if (!strcmp(kind, "slack")) {
        if ((text = slack_text(ev, n, more)) &&
            (doc = cJSON_CreateObject()) &&
            cJSON_AddStringToObject(doc, "text", text))
            *body = cJSON_PrintUnformatted(doc);
    } else if ((doc = json_doc(name, ev, n, more, now))) {
        *body = cJSON_PrintUnformatted(doc);
    }
    free(text);
    cJSON_Delete(doc);
    return *body ? 0 : op_error_set(err, OP_ENOMEM, "out of memory");
}

/* ---- the events file (serve: the worker to the server) ------------------ */

int notify_events_json(const notify_events *e, char **text, op_error *err)
{
    cJSON *doc = cJSON_CreateObject(), *arr = NULL, *one;
    size_t i;

    *text = NULL;
    if (doc && cJSON_AddNumberToObject(doc, "version", NOTIFY_PAYLOAD_VERSION)
        && (arr = cJSON_AddArrayToObject(doc, "events")))
        for (i = 0; arr && i < e->n; i++) {
            if (!(one = json_event(&e->ev[i])))
                arr = NULL;
            else
                cJSON_AddItemToArray(arr, one);
        }
    if (arr)
        *text = cJSON_PrintUnformatted(doc);
    cJSON_Delete(doc);
    return *text ? 0 : op_error_set(err, OP_ENOMEM, "out of memory");
}

static int is_hex(const char *s, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return s[n] == '\0';
}

/* Field key of event o: a string of at most NOTIFY_TEXT_MAX bytes, or
 * (nullable) null / absent as NULL. -1 when it is neither. */
static int field(const cJSON *o, const char *key, int nullable,
                 const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return nullable ? 0 : -1;
    if (!cJSON_IsString(v) || strlen(v->valuestring) > NOTIFY_TEXT_MAX)
        return -1;
    *out = v->valuestring;
    return 0;
}

/* Event i of the file (o) into e; 0 or OP_EPARSE naming the key. */
static int parse_event(const cJSON *o, size_t i, notify_event *e,
                       op_error *err)
{
    static const char *const nullable[] = {"job", "source", "run_id", "node",
                                           "recommendation", "analysis",
                                           "link"};
    const char **slot[] = {&e->job, &e->source, &e->run_id, &e->node,
                           &e->recommendation, &e->analysis, &e->link};
    const char *kind, *fp = NULL, *key = NULL;
    size_t k;
    int sev = 0;

    if (!cJSON_IsObject(o))
        return op_error_set(err, OP_EPARSE, "$.events[%zu]: not an object", i);
    if (field(o, "event", 0, &kind) || !kind)
        key = "event";
    for (k = 0; !key && k < NOTIFY_NKINDS; k++)
        if (!strcmp(kind, kind_names[k]))
            break;
    if (!key && k == NOTIFY_NKINDS)
        key = "event";
    if (!key) {
        e->kind = (notify_kind)k;
        if (field(o, "fingerprint", 0, &fp) || strlen(fp) != 16 ||
            !is_hex(fp, 16))
            key = "fingerprint";
        else if (field(o, "severity", 0, &e->severity) ||
                 (sev = severity_parse(e->severity)) < 0)
            key = "severity";
        else if (field(o, "message", 0, &e->message))
            key = "message";
        else if (field(o, "rule", e->kind == NOTIFY_FAILED, &e->rule) ||
                 (e->kind != NOTIFY_FAILED && !*e->rule))
            key = "rule";
    }
    for (k = 0; !key && k < sizeof nullable / sizeof *nullable; k++)
        if (field(o, nullable[k], 1, slot[k]))
            key = nullable[k];
    if (key)
        return op_error_set(err, OP_EPARSE, "$.events[%zu].%s: missing or "
                            "not what an event holds", i, key);
    memcpy(e->fingerprint, fp, 17);
    e->sev = (severity)sev;
    if (!e->rule)
        e->rule = ""; /* a failure's, as notify_collect makes it */
    digest_of(e); /* anew: the file's digest is not trusted */
    return 0;
}

int notify_events_parse(const char *text, size_t len, notify_events *out,
                        op_error *err)
{
    const cJSON *arr, *it;
    size_t n, i = 0;
    int rc = 0;

    memset(out, 0, sizeof *out);
    if (len > NOTIFY_EVENTS_FILE_MAX)
        return op_error_set(err, OP_ELIMIT, "larger than %u bytes",
                            NOTIFY_EVENTS_FILE_MAX);
    if (!(out->doc = cJSON_ParseWithLength(text, len)))
        return op_error_set(err, OP_EPARSE, "not JSON");
    it = cJSON_GetObjectItemCaseSensitive(out->doc, "version");
    if (!cJSON_IsNumber(it) || it->valuedouble != NOTIFY_PAYLOAD_VERSION)
        return op_error_set(err, OP_EPARSE, "$.version: not %d",
                            NOTIFY_PAYLOAD_VERSION);
    arr = cJSON_GetObjectItemCaseSensitive(out->doc, "events");
    if (!cJSON_IsArray(arr))
        return op_error_set(err, OP_EPARSE, "$.events: not a list");
    n = (size_t)cJSON_GetArraySize(arr);
    if (n > NOTIFY_EVENTS_MAX)
        return op_error_set(err, OP_ELIMIT, "$.events: more than %d",
                            NOTIFY_EVENTS_MAX);
    if (n && !(out->ev = calloc(n, sizeof *out->ev)))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    cJSON_ArrayForEach(it, arr) {
        if ((rc = parse_event(it, i, &out->ev[i], err)))
            return rc;
        out->n = ++i;
    }
    return 0;
}

int notify_sign(const char *secret, size_t slen, int64_t t, const char *body,
                size_t len, char out[NOTIFY_SIG_MAX])
{
    char ts[24];
    size_t tn = (size_t)snprintf(ts, sizeof ts, "%lld", (long long)t), i;
    unsigned char mac[SHA256_LEN];
    char *msg = malloc(tn + 1 + len), *p;

    if (!msg)
        return OP_ENOMEM;
    memcpy(msg, ts, tn);
    msg[tn] = '.';
    memcpy(msg + tn + 1, body, len);
    hmac_sha256(secret, slen, msg, tn + 1 + len, mac);
    free(msg);
    p = out + snprintf(out, NOTIFY_SIG_MAX, "t=%s,v1=", ts);
    for (i = 0; i < SHA256_LEN; i++, p += 2)
        snprintf(p, 3, "%02x", mac[i]);
    return 0;
}

/* ---- delivery ----------------------------------------------------------- */

/* "https://hooks.example.com/…": the URL without its path and query. */
static void shown_url(const char *url, char *out, size_t n)
{
    const char *host = strstr(url, "://");
    size_t k;

    host = host ? host + 3 : url;
    k = (size_t)(host - url) + strcspn(host, "/?#");
    snprintf(out, n, "%.*s%s", (int)k, url, url[k] ? "/\xe2\x80\xa6" : "");
}

/* msg with every copy of url replaced by shown (in place, bounded). */
static void redact(char *msg, size_t cap, const char *url, const char *shown)
{
    char buf[OP_ERROR_MAX];
    size_t ul = strlen(url), used = 0;
    const char *p = msg, *q;

    if (!ul)
        return;
    buf[0] = '\0';
    while ((q = strstr(p, url)) && used < sizeof buf)
        used += (size_t)snprintf(buf + used, sizeof buf - used, "%.*s%s",
                                 (int)(q - p), p, shown), p = q + ul;
    if (used < sizeof buf)
        snprintf(buf + used, sizeof buf - used, "%s", p);
    snprintf(msg, cap, "%s", buf);
}

/* Whether ep takes e, and has not been told it the same way (st). */
static int wanted(const endpoint *ep, const notify_event *e, struct store *st,
                  size_t *unchanged)
{
    char said[SHA256_HEX_LEN + 1];
    op_error err;

    if (!(ep->events & (1u << e->kind)))
        return 0;
    if (e->kind == NOTIFY_FINDING && e->sev < ep->min_sev)
        return 0;
    if (!st)
        return 1;
    op_error_clear(&err);
    if (store_notify_said(st, ep->name, e->fingerprint, said, sizeof said,
                          &err) == 0 && !strcmp(said, e->digest)) {
        ++*unchanged;
        return 0;
    }
    return 1; /* an unreadable table tells rather than hides */
}

/* The POST itself: headers, the client with ep's limits, the answer. */
static int post(const endpoint *ep, const char *body, int64_t now,
                int *attempts, op_error *err)
{
    fetch_opts fo;
    http_client *c = NULL;
    http_resp r;
    const char *hdrs[2];
    char sig[NOTIFY_SIG_MAX + sizeof NOTIFY_SIG_HEADER + 4];
    const char *secret = NULL;
    int rc;

    *attempts = 0;
    if (ep->secret_env) {
        secret = getenv(ep->secret_env);
        if (!secret || !*secret || strlen(secret) > NOTIFY_SECRET_MAX)
            return op_error_set(err, OP_EUSAGE, "the secret's environment "
                                "variable %s is not set (or longer than %d "
                                "bytes): nothing sent", ep->secret_env,
                                NOTIFY_SECRET_MAX);
    }
    hdrs[0] = "Content-Type: application/json";
    if (secret) {
        char v[NOTIFY_SIG_MAX];
        if (notify_sign(secret, strlen(secret), now, body, strlen(body), v))
            return op_error_set(err, OP_ENOMEM, "out of memory");
        snprintf(sig, sizeof sig, "%s: %s", NOTIFY_SIG_HEADER, v);
        hdrs[1] = sig;
    }
    fetch_opts_init(&fo);
    fo.diag = NULL;
    fo.quiet = 1;
    fo.headers = hdrs;
    fo.nheaders = secret ? 2 : 1;
    fo.retries = (int)ep->retries;
    fo.timeout_s = (double)ep->timeout_ms / 1000.0;
    fo.connect_timeout_s = fo.timeout_s;
    fo.max_time_s = (double)ep->deadline_ms / 1000.0;
    fo.no_redirects = 1; /* a receiver does not send its events elsewhere */
    if ((rc = http_client_new(&fo, &c, err)))
        return rc;
    rc = http_post(c, ep->url, body, strlen(body), NOTIFY_RESPONSE_MAX, &r,
                   err);
    *attempts = r.attempts;
    if (!rc && (r.status < 200 || r.status > 299))
        rc = op_error_set(err, OP_EIO, "POST %s: HTTP %ld%s%s%s", ep->url,
                          r.status, *http_reason(r.status) ? " " : "",
                          http_reason(r.status), r.attempts > 1
                          ? " (after every retry)" : "");
    http_resp_free(&r);
    http_client_free(c);
    return rc;
}

/* Logs the delivery of each event of ev into st; a log that cannot be
 * written is said once (the delivery itself went or failed already). */
static void log_all(struct store *st, const endpoint *ep,
                    const notify_event *const *ev, size_t n, int ok,
                    int attempts, const char *why, FILE *diag)
{
    store_notification row;
    op_error err;
    size_t i;

    if (!st)
        return;
    for (i = 0; i < n; i++) {
        memset(&row, 0, sizeof row);
        row.endpoint = ep->name;
        row.event = kind_names[ev[i]->kind];
        row.fingerprint = ev[i]->fingerprint;
        row.status = ok ? "sent" : "failed";
        row.attempts = attempts;
        row.error = ok ? NULL : why;
        row.digest = ok ? ev[i]->digest : NULL;
        op_error_clear(&err);
        if (store_notify_log(st, &row, &err)) {
            if (diag)
                fprintf(diag, "optipipe: notify: %s: warning: the delivery "
                        "was not logged: %s\n", ep->name, err.msg);
            return;
        }
    }
}

/* One endpoint: its events, one POST, the log (its outcome in *one).
 * 0 or OP_EIO. */
static int deliver_one(const endpoint *ep, const notify_events *e,
                       struct store *st, FILE *diag, notify_result *res,
                       notify_ep_result *one)
{
    const notify_event **pick = NULL;
    size_t n = 0, more = 0, i;
    char *body = NULL, shown[NOTIFY_URL_MAX + 8];
    op_error err;
    int attempts = 0, rc = 0;
    int64_t now = (int64_t)time(NULL);

    op_error_clear(&err);
    if (e->n && !(pick = malloc(e->n * sizeof *pick)))
        rc = op_error_set(&err, OP_ENOMEM, "out of memory");
    for (i = 0; !rc && i < e->n; i++)
        if (wanted(ep, &e->ev[i], st, &res->unchanged)) {
            if (n < NOTIFY_MAX_EVENTS)
                pick[n++] = &e->ev[i];
            else
                more++;
        }
    if (!rc && !n)
        goto out;
    if (!rc && !(rc = notify_render(ep->kind, ep->name, pick, n, more, now,
                                    &body, &err)))
        rc = post(ep, body, now, &attempts, &err);
    shown_url(ep->url, shown, sizeof shown);
    redact(err.msg, sizeof err.msg, ep->url, shown);
    log_all(st, ep, pick, n, rc == 0, attempts, rc ? err.msg : NULL, diag);
    one->events = n;
    one->outcome = rc ? -1 : 1;
    if (!rc) {
        res->sent += n;
        goto out;
    }
    res->failed += n;
    res->endpoints_failed++;
    if (diag)
        fprintf(diag, "optipipe: notify: %s (%s): %zu event%s not delivered: "
                "%s\n", ep->name, shown, n, n == 1 ? "" : "s", err.msg);
    rc = OP_EIO;
out:
    free(pick);
    free(body);
    return rc;
}

/* An analysis that succeeded (e has no failed event): st forgets the
 * failures it told, so the next failure is news again (docs/notify.md
 * "Once until it changes"). A read-only store keeps nothing anyway. */
static void forget_failures(const notify_events *e, struct store *st,
                            FILE *diag)
{
    op_error err;
    size_t i;

    for (i = 0; i < e->n; i++)
        if (e->ev[i].kind == NOTIFY_FAILED)
            return;
    op_error_clear(&err);
    if (st && store_notify_forget(st, kind_names[NOTIFY_FAILED], &err) &&
        err.code != OP_EUSAGE && diag)
        fprintf(diag, "optipipe: notify: warning: the failures told before "
                "stay remembered: %s\n", err.msg);
}

int notify_deliver(const cJSON *cfg, const notify_events *e,
                   struct store *st, FILE *diag, notify_result *out)
{
    notify_result res;
    const cJSON *t;
    endpoint ep;
    int rc = 0;

    memset(&res, 0, sizeof res);
    cJSON_ArrayForEach(t, cfg) {
        notify_ep_result *one = &res.ep[res.nep < NOTIFY_MAX_ENDPOINTS
                                            ? res.nep : NOTIFY_MAX_ENDPOINTS - 1];
        endpoint_of(t, &ep);
        one->name = ep.name;
        if (deliver_one(&ep, e, st, diag, &res, one))
            rc = OP_EIO;
        if (res.nep < NOTIFY_MAX_ENDPOINTS)
            res.nep++;
    }
    forget_failures(e, st, diag);
    if (out)
        *out = res;
    return rc;
}

int notify_session(const op_session *s, const char *failure, FILE *diag,
                   notify_result *out)
{
    notify_events e;
    op_error err;
    int rc;

    if (out)
        memset(out, 0, sizeof *out);
    if (!s->cfg.notify || !s->cfg.notify->child)
        return 0;
    op_error_clear(&err);
    if ((rc = notify_collect(s->an.m, &s->res, failure, &e, &err))) {
        if (diag)
            fprintf(diag, "optipipe: notify: %s\n", err.msg);
        notify_events_free(&e);
        return rc;
    }
    rc = notify_deliver(s->cfg.notify, &e, s->st, diag, out);
    notify_events_free(&e);
    return rc;
}
