/*
 * notify.h - webhook notifications (docs/notify.md): the config's `notify`
 * endpoints, the events an analysis gives them (a new finding at or above
 * a severity, a regression, an approved change judged ineffective, a
 * failed analysis), the two payloads (Slack's incoming webhook and a
 * versioned JSON document signed with HMAC-SHA256), and their delivery:
 * after the analysis, bounded in time, retried with back-off, each event
 * told to an endpoint once until what it says changes (the run store
 * remembers), every delivery logged in the store.
 */
#ifndef OP_CORE_NOTIFY_H
#define OP_CORE_NOTIFY_H

#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>
#include <optipipe/common.h>

#include "findings.h"
#include "model.h"
#include "sha256.h"

struct store;
struct op_session;

#define NOTIFY_MAX_ENDPOINTS 16
#define NOTIFY_NAME_MAX 64
#define NOTIFY_URL_MAX 2048
#define NOTIFY_SECRET_MAX 4096
/* Events in one payload at most; the others wait for the next analysis
 * (they were not said, so they are still new then). */
#define NOTIFY_MAX_EVENTS 100
/* The longest answer of a receiver read (the rest is refused). */
#define NOTIFY_RESPONSE_MAX 65536
#define NOTIFY_PAYLOAD_VERSION 1
#define NOTIFY_SIG_HEADER "X-Optipipe-Signature"
/* "t=<unix seconds>,v1=<64 hex>" and a NUL. */
#define NOTIFY_SIG_MAX 96
/* Per endpoint, when the config does not say. */
#define NOTIFY_RETRIES 3
#define NOTIFY_TIMEOUT_MS 5000
#define NOTIFY_DEADLINE_MS 15000

typedef enum notify_kind {
    NOTIFY_FINDING = 0, /* a shown finding at or above min_severity */
    NOTIFY_REGRESSION,  /* a finding of a `*.regression` rule */
    NOTIFY_INEFFECTIVE, /* mixed.change-outcome judged a change ineffective */
    NOTIFY_FAILED,      /* the analysis failed: nothing was analyzed */
    NOTIFY_NKINDS
} notify_kind;

/* "finding", "regression", "ineffective", "failed"; NULL past the last. */
const char *notify_kind_name(size_t k);

/* One event. Strings are borrowed from the findings (or the list's own
 * failure text, or its parsed file); node, recommendation, job, source,
 * run_id may be NULL. analysis and link (NULL outside `optipipe serve`)
 * name the server's analysis and its page; they are not part of the
 * digest: the same failure of another analysis says the same thing. */
typedef struct notify_event {
    notify_kind kind;
    const char *rule, *severity, *job, *source, *run_id, *node;
    const char *message, *recommendation;
    const char *analysis, *link;
    char fingerprint[17];              /* the finding's, or the failure's */
    char digest[SHA256_HEX_LEN + 1];   /* of what the event says */
    severity sev;
} notify_event;

typedef struct notify_events {
    notify_event *ev;
    size_t n;
    char *failure; /* owned: a failed event's message */
    cJSON *doc;    /* owned: the events file the strings point into
                    * (notify_events_parse), NULL otherwise */
} notify_events;

/* The largest events file notify_events_parse reads, and its most events:
 * an analysis' shown findings (the server's worker writes them). */
#define NOTIFY_EVENTS_FILE_MAX (16u << 20)
#define NOTIFY_EVENTS_MAX 100000

/*
 * Checks the config value of `notify` (a list of endpoint tables, keys in
 * docs/notify.md). Returns 0, or -1 with "notify[i].key: why" in why.
 */
int notify_check(const cJSON *v, char *why, size_t n);

/*
 * The events of an analysis into out (initialised here; free with
 * notify_events_free whatever the result): one per shown finding of res
 * (m gives its job), or with failure (not NULL) a single failed event
 * carrying that text (copied). Returns 0 or OP_ENOMEM.
 */
int notify_collect(const model *m, const results *res, const char *failure,
                   notify_events *out, op_error *err);
void notify_events_free(notify_events *e);

/*
 * The events e as a document {"version": 1, "events": [...]} (each event
 * as in the json payload) into *text (malloc'd, NUL-terminated; the
 * caller frees it): how `optipipe serve --worker` hands an analysis'
 * events to the server, which delivers them after the analysis ended.
 * Returns 0 or OP_ENOMEM.
 */
int notify_events_json(const notify_events *e, char **text, op_error *err);

/*
 * Reads such a document (len bytes of text, at most NOTIFY_EVENTS_FILE_MAX,
 * at most NOTIFY_EVENTS_MAX events) into out (initialised here; free with
 * notify_events_free whatever the result; its strings point into out->doc).
 * Every field is checked (a known event, a 16-hex fingerprint, a severity,
 * texts of at most NOTIFY_TEXT_MAX bytes) and each digest is computed anew
 * from what the event says (a file cannot make an event look unchanged). Returns 0, or
 * OP_EPARSE with "$.events[i].key: why" in err (OP_ELIMIT when too large).
 */
#define NOTIFY_TEXT_MAX 65536
int notify_events_parse(const char *text, size_t len, notify_events *out,
                        op_error *err);

/*
 * The payload of kind ("slack" or "json") for endpoint name, telling the
 * n events ev (at most NOTIFY_MAX_EVENTS are listed; more counts them),
 * sent at now (unix seconds), into *body (malloc'd, NUL-terminated; the
 * caller frees it). Returns 0 or OP_ENOMEM.
 */
int notify_render(const char *kind, const char *name,
                  const notify_event *const *ev, size_t n, size_t more,
                  int64_t now, char **body, op_error *err);

/* The signature header's value: "t=<t>,v1=<hex HMAC-SHA256 under secret
 * of '<t>.<body>'>" into out. Returns 0 or OP_ENOMEM. */
int notify_sign(const char *secret, size_t slen, int64_t t, const char *body,
                size_t len, char out[NOTIFY_SIG_MAX]);

/* What one endpoint's delivery did: nothing to send (0), one POST that
 * went (1) or failed (-1), of events events. name is borrowed from cfg. */
typedef struct notify_ep_result {
    const char *name;
    int outcome;
    size_t events;
} notify_ep_result;

/* What a delivery round did. */
typedef struct notify_result {
    size_t sent;       /* events delivered */
    size_t failed;     /* events whose delivery failed */
    size_t unchanged;  /* events not sent: already said, unchanged */
    size_t endpoints_failed;
    notify_ep_result ep[NOTIFY_MAX_ENDPOINTS]; /* cfg's endpoints, in order */
    size_t nep;
} notify_result;

/*
 * Delivers e to every endpoint of cfg (a checked `notify` value,
 * borrowed): each gets the events its `events` and `min_severity` take
 * that st (may be NULL: all of them) has not already seen said the same
 * way, in one POST, with its retries and deadline. A `failed` event is
 * deduplicated like the others (its fingerprint is its reason's): the
 * same failure is told once, until an analysis succeeds: e without a
 * failed event makes st forget every failure it was told
 * (store_notify_forget), so the next one is news again. Every delivery is
 * logged into st (when it is open for writing) and a failure is said on
 * diag (may be NULL) naming the endpoint; the URL is shown without its
 * path (a Slack URL's path is its secret). Returns 0 when every delivery
 * went, else OP_EIO (how many failed is in *out, may be NULL).
 */
int notify_deliver(const cJSON *cfg, const notify_events *e,
                   struct store *st, FILE *diag, notify_result *out);

/*
 * notify_deliver of the session's events (its config's endpoints, its
 * store): failure NULL after an analysis, else what stopped it. Nothing
 * when the config has no `notify`. Returns notify_deliver's status.
 */
int notify_session(const struct op_session *s, const char *failure,
                   FILE *diag, notify_result *out);

#endif
