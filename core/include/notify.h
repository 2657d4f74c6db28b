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
 * failure text); node, recommendation, job, source, run_id may be NULL. */
typedef struct notify_event {
    notify_kind kind;
    const char *rule, *severity, *job, *source, *run_id, *node;
    const char *message, *recommendation;
    char fingerprint[17];              /* the finding's, or the failure's */
    char digest[SHA256_HEX_LEN + 1];   /* of what the event says */
    severity sev;
} notify_event;

typedef struct notify_events {
    notify_event *ev;
    size_t n;
    char *failure; /* owned: a failed event's message */
} notify_events;

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

/* What a delivery round did. */
typedef struct notify_result {
    size_t sent;       /* events delivered */
    size_t failed;     /* events whose delivery failed */
    size_t unchanged;  /* events not sent: already said, unchanged */
    size_t endpoints_failed;
} notify_result;

/*
 * Delivers e to every endpoint of cfg (a checked `notify` value,
 * borrowed): each gets the events its `events` and `min_severity` take
 * that st (may be NULL: all of them) has not already seen said the same
 * way, in one POST, with its retries and deadline. Every delivery is
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
