/*
 * fetch_http.h - the single HTTP client of the fetch commands and the
 * webhook notifications (notify.c): one libcurl
 * handle with the caps every request gets (connect and total timeouts,
 * bounded retries with backoff, a response size cap, bounded redirects
 * that keep the scheme, TLS verification unless --insecure), the budgets
 * of the whole fetch (a deadline, a number of requests) and secrets kept
 * out of every message.
 */
#ifndef OP_CORE_FETCH_HTTP_H
#define OP_CORE_FETCH_HTTP_H

#include "fetch.h"

typedef struct http_client http_client;

typedef struct http_resp {
    long status; /* HTTP status of the final answer */
    char *body;  /* NUL-terminated; owned (http_resp_free) */
    size_t len;
    int attempts; /* requests made, retries included */
} http_resp;

/* Creates a client for o (borrowed: must outlive the client). Reads the
 * token from the environment variable o->token_env; checks headers. The
 * fetch's deadline (fetch_deadline_s) starts now.
 * Returns 0 with *out, or OP_EUSAGE / OP_ENOMEM with err. */
int http_client_new(const fetch_opts *o, http_client **out, op_error *err);
void http_client_free(http_client *c);

/* Whether the fetch must stop: 0 while requests may still be made, else
 * OP_ELIMIT with why saying "not requested: ..." (the request budget is
 * spent or the deadline has passed). */
int http_stopped(const http_client *c, op_error *why);

/* Sleeps s seconds, or until the deadline when that comes first.
 * Returns 0, or OP_ELIMIT (with why) when the deadline ended the wait. */
int http_sleep(const http_client *c, double s, op_error *why);

/* GETs url into r, at most max bytes (after content decoding). Counts
 * against the request budget; --timeout and the connect timeout are cut
 * to what is left before the deadline. Retries connection errors,
 * timeouts and 5xx answers (o->retries times, with backoff, never past
 * the deadline). Returns 0 when an HTTP answer arrived (any status: check
 * r->status; 5xx only after the retries), else OP_EIO (unreachable,
 * timeout, TLS, redirect loop, a redirect to another scheme) or
 * OP_ELIMIT (larger than max, or http_stopped) with err naming the URL.
 * Free r with http_resp_free in every case. */
int http_get(http_client *c, const char *url, uint64_t max, http_resp *r,
             op_error *err);

/* The same into the file descriptor fd (truncated before each attempt).
 * Here not --timeout but the deadline bounds the whole transfer, so that
 * a large download may take its time, and the transfer fails when it
 * runs slower than o->min_rate bytes/s over o->min_rate_time_s. *status
 * receives the HTTP status, *bytes the body size. */
int http_get_fd(http_client *c, const char *url, int fd, uint64_t max,
                long *status, uint64_t *bytes, op_error *err);

/* POSTs body[0..len) to url (the client's headers say its type), the
 * answer into r as http_get does, with the same retries: a 5xx answer or
 * a connection error sends the same body again. */
int http_post(http_client *c, const char *url, const char *body, size_t len,
              uint64_t max, http_resp *r, op_error *err);

void http_resp_free(http_resp *r);

/* Checks a base URL (http or https, no credentials, query or fragment)
 * and returns it normalized without a trailing '/' in *base (malloc'd).
 * Returns 0, OP_EUSAGE or OP_ENOMEM with err. */
int http_base_url(const char *url, char **base, op_error *err);

/* "OK"-style reason for common statuses ("Not Found"), or "". */
const char *http_reason(long status);

#endif
