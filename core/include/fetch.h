/*
 * fetch.h - collecting live data over HTTP: what every fetch shares (the
 * options and limits, the outcomes, the temporary files a signal removes).
 * The fetches themselves belong to the engines (op_engine_fetch, engine.h,
 * in <engine>/host/): `optipipe fetch NAME` (cli/cmd_fetch.c) and `optipipe
 * analyze http(s)://...` find them in the engine table; every request goes
 * through the one libcurl wrapper in fetch_http.c. The options struct, its
 * defaults and the temporary-file registry are in fetch.c; parsing them
 * from a command line is the CLI's. See docs/fetch.md.
 */
#ifndef OP_CORE_FETCH_H
#define OP_CORE_FETCH_H

#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <optipipe/common.h>

#define FETCH_MAX_HEADERS 32

/* Defaults of the limits on what a server can make a fetch do
 * (docs/fetch.md, "Limits"). */
#define FETCH_MAX_TIME_S 600         /* --max-time, plus the sampling waits */
#define FETCH_MIN_RATE 1024          /* --min-rate, bytes per second ... */
#define FETCH_MIN_RATE_TIME_S 30     /* ... averaged over this window */
#define FETCH_REQUESTS_PER_POLL 5000 /* --max-requests: this x (1 + polls) */

/* Room for the engines' own options structs (engine.h), all of them. */
#define FETCH_ENGINE_OPTS_BYTES 2048

/* Outcomes, equal to the process exit codes of `optipipe fetch`. */
enum fetch_result {
    FETCH_OK = 0,         /* everything fetched */
    FETCH_EUSAGE = 2,     /* bad URL, option or ambiguous job choice */
    FETCH_ENOTHING = 3,   /* nothing could be fetched */
    FETCH_INCOMPLETE = 4  /* written, but some requests failed */
};

typedef struct fetch_opts {
    /* connection: every request (fetch_http.c) */
    double connect_timeout_s; /* default 10 */
    double timeout_s;         /* one request, whole; default 30 */
    int retries;              /* after connection errors, timeouts, 5xx: 2 */
    uint64_t max_response;    /* bytes per response; 0 = command default */
    const char *cacert;       /* PEM file of CAs to trust, or NULL */
    int insecure;             /* skip TLS verification (explicit only) */
    const char *token_env;    /* environment variable holding the token */
    const char **headers;     /* "Name: value", borrowed; at most
                               * FETCH_MAX_HEADERS (the array is the
                               * filler's: the CLI's opts_free) */
    size_t nheaders;
    double max_time_s;        /* whole fetch; 0: FETCH_MAX_TIME_S plus
                                 samples x interval (fetch_deadline_s) */
    uint64_t min_rate;        /* download: slowest bytes/s ... */
    double min_rate_time_s;   /* ... over this window, else it fails */
    uint64_t max_requests;    /* whole fetch; 0: FETCH_REQUESTS_PER_POLL x
                                 (1 + samples) (fetch_request_budget) */
    int progress;             /* progress line on diag (a TTY) */
    int quiet;                /* no notices; failures are still reported */
    FILE *diag;               /* diagnostics (stderr); NULL = silent */
    int no_redirects;         /* a redirect is an error, not followed (serve's
                                 workers: a --fetch-allow host must not lead
                                 the fetch to a host that is not allowed) */
    /* set by an engine's fetch from its own options before it makes its
     * client: the later polls and the wait between them, which the
     * default deadline and request budget grow with */
    int polls;
    double poll_interval_s;
    /* each engine's own options (op_engine_options, engine.h): read them
     * with engine_opts */
    alignas(max_align_t) unsigned char engines[FETCH_ENGINE_OPTS_BYTES];
} fetch_opts;

/* Fills o with the defaults above (diag = stderr, no progress) and each
 * engine's options with theirs (engine_opts_init). */
void fetch_opts_init(fetch_opts *o);

/* The overall deadline (seconds) and request budget o stands for, with
 * the defaults above filled in. */
double fetch_deadline_s(const fetch_opts *o);
uint64_t fetch_request_budget(const fetch_opts *o);

/* Whether s is an http:// or https:// URL (case-insensitive scheme). */
int fetch_is_url(const char *s);

/* The fetches themselves are the engines' (op_engine_fetch, engine.h:
 * a document into memory, or files into a folder), in <engine>/host/. */

/* Temporary files that a SIGINT or SIGTERM must not leave behind. The
 * handler (installed by fetch_main; a signal ignored at start stays
 * ignored) unlinks every registered path, then dies of the signal.
 * fetch_temp_open creates a file from tmpl (ending in "XXXXXX", as for
 * mkstemp) and registers it; fetch_temp_add registers a path the caller
 * creates. Both return a slot (>= 0; its path: fetch_temp_path) or -1
 * with errno set (ENOSPC: all FETCH_TEMP_SLOTS in use). fetch_temp_drop
 * unregisters the slot, unlinking the file when unlink_it. *fd receives
 * the open file (O_CLOEXEC), owned by the caller. */
#define FETCH_TEMP_SLOTS 4
#define FETCH_TEMP_PATH_MAX 4096 /* longest registered path, NUL included */
int fetch_temp_open(const char *tmpl, int *fd);
int fetch_temp_add(const char *path);
const char *fetch_temp_path(int slot);
void fetch_temp_drop(int slot, int unlink_it);

/* Installs the SIGINT / SIGTERM handler of fetch_temp_* (idempotent;
 * process-wide: a program that keeps its own handlers does not call it). */
void fetch_signals_install(void);

#endif
