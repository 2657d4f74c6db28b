/*
 * fetch.c - what a fetch needs from its caller's side, shared by
 * `optipipe fetch` and `analyze URL` (cli/cmd_fetch.c parses the options
 * into a fetch_opts): the defaults and budgets of fetch_opts, the URL
 * test, and the registry of temporary files a SIGINT / SIGTERM removes.
 *
 * Process-global state: the temporary-file registry and the signal
 * handler (a signal has one handler per process); everything else here
 * is a pure function of its arguments.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "engine.h"
#include "fetch.h"


void fetch_opts_init(fetch_opts *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_s = 10;
    o->timeout_s = 30;
    o->retries = 2;
    o->diag = stderr;
    o->min_rate = FETCH_MIN_RATE;
    o->min_rate_time_s = FETCH_MIN_RATE_TIME_S;
    engine_opts_init(o);
}

double fetch_deadline_s(const fetch_opts *o)
{
    double s;

    if (o->max_time_s > 0)
        return o->max_time_s;
    s = FETCH_MAX_TIME_S + (o->polls > 0 ? o->polls : 0) * o->poll_interval_s;
    return s < 86400.0 * 30 ? s : 86400.0 * 30;
}

uint64_t fetch_request_budget(const fetch_opts *o)
{
    if (o->max_requests)
        return o->max_requests;
    return (uint64_t)FETCH_REQUESTS_PER_POLL *
           (1 + (uint64_t)(o->polls > 0 ? o->polls : 0));
}

int fetch_is_url(const char *s)
{
    return s && (strncasecmp(s, "http://", 7) == 0 ||
                 strncasecmp(s, "https://", 8) == 0);
}

/* --- temporary files and signals ------------------------------------------ */

/* The handler reads these: a slot's path is complete before its flag is
 * set, and the flag is cleared before the path changes. */
static char temp_paths[FETCH_TEMP_SLOTS][FETCH_TEMP_PATH_MAX];
static volatile sig_atomic_t temp_used[FETCH_TEMP_SLOTS];
static volatile sig_atomic_t signals_installed;

int fetch_temp_add(const char *path)
{
    size_t n = strlen(path);
    int i;

    if (n >= FETCH_TEMP_PATH_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (i = 0; i < FETCH_TEMP_SLOTS; i++)
        if (!temp_used[i]) {
            memcpy(temp_paths[i], path, n + 1);
            atomic_signal_fence(memory_order_seq_cst); /* path, then flag */
            temp_used[i] = 1;
            return i;
        }
    errno = ENOSPC;
    return -1;
}

int fetch_temp_open(const char *tmpl, int *fd)
{
    int slot = fetch_temp_add(tmpl);

    /* mkstemp fills in the registered name itself, so that a signal
     * arriving while the file is created still finds it */
    if (slot < 0)
        return -1;
    *fd = mkstemp(temp_paths[slot]);
    if (*fd >= 0)
        fcntl(*fd, F_SETFD, FD_CLOEXEC);
    if (*fd < 0) {
        int e = errno;
        temp_used[slot] = 0;
        errno = e;
        return -1;
    }
    return slot;
}

const char *fetch_temp_path(int slot)
{
    return slot >= 0 && slot < FETCH_TEMP_SLOTS ? temp_paths[slot] : "";
}

void fetch_temp_drop(int slot, int unlink_it)
{
    if (slot < 0 || slot >= FETCH_TEMP_SLOTS || !temp_used[slot])
        return;
    temp_used[slot] = 0;
    atomic_signal_fence(memory_order_seq_cst);
    if (unlink_it)
        unlink(temp_paths[slot]);
}

/* Async-signal-safe calls only: unlink, sigaction, raise. */
static void on_signal(int sig)
{
    struct sigaction dfl;
    int i;

    for (i = 0; i < FETCH_TEMP_SLOTS; i++)
        if (temp_used[i])
            unlink(temp_paths[i]);
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* delivered on return: the exit status names the signal */
}

void fetch_signals_install(void)
{
    static const int sigs[] = {SIGINT, SIGTERM};
    struct sigaction sa, old;
    size_t i;

    if (signals_installed)
        return;
    signals_installed = 1;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    for (i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
}
