/*
 * cmd_fetch.c - the `optipipe fetch` command line (its options, shared
 * with `analyze URL`, are in cli_table.c): `fetch flink` (an export written
 * atomically to -o FILE or stdout) and `fetch spark-history` (logs into
 * -o DIR), and the temporary files a SIGINT / SIGTERM removes. Exit codes
 * are the fetch_result values (docs/fetch.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "diag.h"
#include "fetch.h"

#define FETCH_TEMP_PATH_MAX 4096

void fetch_opts_init(fetch_opts *o)
{
    memset(o, 0, sizeof *o);
    o->connect_timeout_s = 10;
    o->timeout_s = 30;
    o->retries = 2;
    o->diag = stderr;
    o->interval_s = 60;
    o->bp_wait_s = -1;
    o->min_rate = FETCH_MIN_RATE;
    o->min_rate_time_s = FETCH_MIN_RATE_TIME_S;
    o->max_metric_names = FETCH_METRIC_NAMES;
}

double fetch_deadline_s(const fetch_opts *o)
{
    double s;

    if (o->max_time_s > 0)
        return o->max_time_s;
    s = FETCH_MAX_TIME_S + (o->samples > 0 ? o->samples : 0) * o->interval_s;
    return s < 86400.0 * 30 ? s : 86400.0 * 30;
}

uint64_t fetch_request_budget(const fetch_opts *o)
{
    if (o->max_requests)
        return o->max_requests;
    return (uint64_t)FETCH_REQUESTS_PER_POLL *
           (1 + (uint64_t)(o->samples > 0 ? o->samples : 0));
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

/* --- output ---------------------------------------------------------------- */

/* Writes buf to path atomically (a temporary file renamed over it), or
 * to stdout for NULL / "-". */
static int write_output(const char *path, const char *buf, size_t len)
{
    char tmp[FETCH_TEMP_PATH_MAX];
    FILE *f;
    int fd = -1, bad, slot;

    if (!path || !strcmp(path, "-")) {
        bad = fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0;
        if (bad)
            diag_msg(DIAG_ERROR, "fetch: stdout: write failed");
        return bad;
    }
    if (strlen(path) + 8 >= sizeof tmp) {
        diag_msg(DIAG_ERROR, "fetch: -o: the file name is too long");
        return 1;
    }
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", path);
    slot = fetch_temp_open(tmp, &fd);
    if (slot < 0 || !(f = fdopen(fd, "w"))) {
        diag_msg(DIAG_ERROR, "fetch: %s: cannot write: %s", path,
                strerror(errno));
        if (slot >= 0) {
            close(fd);
            fetch_temp_drop(slot, 1);
        }
        return 1;
    }
    bad = fwrite(buf, 1, len, f) != len;
    bad |= fclose(f) != 0;
    if (!bad && rename(fetch_temp_path(slot), path) != 0)
        bad = 1;
    if (bad)
        diag_msg(DIAG_ERROR, "fetch: %s: cannot write: %s", path,
                strerror(errno));
    fetch_temp_drop(slot, bad);
    return bad;
}

/* --- commands -------------------------------------------------------------- */

static int usage(const char *msg, const char *arg)
{
    char m[1024];
    snprintf(m, sizeof m, msg, arg);
    diag_msg(DIAG_ERROR, "fetch: %s", m);
    diag_line(DIAG_ERROR, "Try 'optipipe fetch --help'.");
    return FETCH_EUSAGE;
}

typedef struct fetch_args {
    fetch_opts o;
    const char *url, *output;
    int quiet;
} fetch_args;

/* Parses the arguments of a subcommand with its table (cli_table.c). */
static int parse_args(fetch_args *fa, int argc, char **argv,
                      const opt_cmd *cmd)
{
    cli_opts co;
    op_error err;
    int rc;

    cli_opts_default(&co);
    op_error_clear(&err);
    rc = opts_parse(cmd, &co, argc, argv, &err);
    if (rc == OPTS_HELP) {
        opts_help(cmd, "optipipe", stdout);
        exit(FETCH_OK);
    }
    if (rc)
        return usage("%s", err.msg);
    if (!co.ninputs)
        return usage("%s", "a URL is needed");
    fa->o = co.fetch;
    fa->url = co.inputs[0];
    fa->output = co.output;
    fa->quiet = co.quiet;
    fa->o.progress = !fa->quiet && isatty(STDERR_FILENO);
    fa->o.quiet = fa->quiet;
    return 0;
}

static int cmd_flink(int argc, char **argv)
{
    fetch_args fa;
    op_error err;
    char *buf = NULL;
    size_t len = 0;
    int rc;

    memset(&fa, 0, sizeof fa);
    if ((rc = parse_args(&fa, argc, argv, &cli_cmd_fetch_flink)))
        return rc;
    op_error_clear(&err);
    rc = fetch_flink_to_memory(fa.url, &fa.o, &buf, &len, &err);
    if (rc == FETCH_EUSAGE) {
        free(buf);
        return usage("%s", err.msg);
    }
    if (rc != FETCH_OK && rc != FETCH_INCOMPLETE) {
        diag_msg(DIAG_ERROR, "fetch: %s", err.msg);
        free(buf);
        return FETCH_ENOTHING;
    }
    if (write_output(fa.output, buf, len)) {
        free(buf);
        return FETCH_ENOTHING;
    }
    free(buf);
    if (rc == FETCH_INCOMPLETE)
        diag_msg(DIAG_ERROR, "fetch: %s: %s",
                fa.output ? fa.output : "stdout", err.msg);
    else if (!fa.quiet && fa.output && strcmp(fa.output, "-"))
        diag_msg(DIAG_NOTE, "fetch: wrote %s (%zu bytes)", fa.output,
                len);
    return rc;
}

static int cmd_spark(int argc, char **argv)
{
    fetch_args fa;
    op_error err;
    int rc;

    memset(&fa, 0, sizeof fa);
    if ((rc = parse_args(&fa, argc, argv, &cli_cmd_fetch_spark)))
        return rc;
    if (!fa.o.app)
        return usage("%s", "spark-history needs --app APP_ID");
    op_error_clear(&err);
    rc = fetch_spark_history(fa.url, &fa.o, fa.output ? fa.output : fa.o.app,
                             &err);
    if (rc == FETCH_EUSAGE)
        return usage("%s", err.msg);
    if (rc != FETCH_OK)
        diag_msg(DIAG_ERROR, "fetch: %s", err.msg);
    return rc;
}

int fetch_main(int argc, char **argv)
{
    fetch_signals_install();
    if (argc >= 1 && !strcmp(argv[0], "flink"))
        return cmd_flink(argc - 1, argv + 1);
    if (argc >= 1 && !strcmp(argv[0], "spark-history"))
        return cmd_spark(argc - 1, argv + 1);
    return cli_subcommand_help("fetch", argc, argv);
}
