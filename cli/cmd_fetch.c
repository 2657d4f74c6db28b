/*
 * cmd_fetch.c - the `optipipe fetch` command line: option parsing shared
 * with `analyze URL` (fetch_opt_parse), `fetch flink` (an export written
 * atomically to -o FILE or stdout) and `fetch spark-history` (logs into
 * -o DIR); the temporary files a SIGINT / SIGTERM removes are core's
 * (core/fetch.c). Exit codes
 * are the fetch_result values (docs/fetch.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "diag.h"
#include "cli.h"
#include "engine.h"
#include "fetch.h"

#define FETCH_MAX_RETRIES 10

static const char usage_fetch[] =
    "Usage: optipipe fetch flink URL [options]\n"
    "       optipipe fetch spark-history URL --app APP_ID [options]\n"
    "\n"
    "Collects live data over HTTP(S) for a later `optipipe analyze`.\n"
    "\n"
    "fetch flink URL: every JobManager REST response the Flink rules use,\n"
    "written as a flink_rest_export (docs/flink.md) to -o FILE (default\n"
    "stdout).\n"
    "  --job ID             the job (default: the only running one)\n"
    "  --all-running        every running job\n"
    "  --samples N          poll the changing paths N more times (default 0)\n"
    "  --interval SECONDS   between polls (default 60)\n"
    "  --backpressure-wait SECONDS\n"
    "                       before re-asking a backpressure answer that is\n"
    "                       not ready (default: Flink's refresh interval)\n"
    "  --max-metric-names N metric names requested per vertex (default\n"
    "                       2048; those left out are named under \"errors\")\n"
    "\n"
    "fetch spark-history URL: the application's event logs from a Spark\n"
    "History Server, unpacked into -o DIR (default ./APP_ID).\n"
    "  --app ID             the application id (required)\n"
    "  --attempt ID         one attempt only (default: all)\n"
    "\n"
    "Both:\n"
    "  -o, --output PATH    where to write\n"
    "  -q, --quiet          no progress or notices on stderr (failures are\n"
    "                       still reported)\n"
    "%s"
    "\n"
    "Exit codes: 0 complete, 2 usage error, 3 nothing could be fetched,\n"
    "4 written but incomplete (the failed paths are named on stderr and\n"
    "listed in the export under \"errors\").\n";

const char fetch_opts_help[] =
    "  --timeout SECONDS    one request, whole (default 30; for the Spark\n"
    "                       zip: the longest stall)\n"
    "  --connect-timeout SECONDS  (default 10)\n"
    "  --retries N          after connection errors, timeouts, 5xx\n"
    "                       (default 2, with backoff)\n"
    "  --max-size BYTES     cap per response (default 64m; Spark zip 8g)\n"
    "  --max-time SECONDS   the whole fetch (default 600, plus --samples x\n"
    "                       --interval); what was fetched is still written\n"
    "  --max-requests N     requests of the whole fetch (default 5000 x\n"
    "                       (1 + --samples))\n"
    "  --min-rate BYTES     a download slower than this per second ...\n"
    "  --min-rate-time SECONDS  ... over this window fails (default 1k\n"
    "                       over 30 s)\n"
    "  --header 'Name: value'  extra request header (repeatable; not for\n"
    "                       secrets: use --token-env)\n"
    "  --token-env VAR      send the token in environment variable VAR as\n"
    "                       'Authorization: Bearer <token>' (a value with a\n"
    "                       space, e.g. 'Basic dXNlcjpw', is sent as is)\n"
    "  --cacert FILE        trust the CA certificates in FILE (PEM)\n"
    "  --insecure           do not verify TLS certificates\n";

/* --- option values --------------------------------------------------------- */

static int num_arg(const char *opt, const char *v, double lo, double hi,
                   double *out, op_error *err)
{
    char *end;
    double d;

    errno = 0;
    d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= lo && d <= hi))
        return op_error_set(err, OP_EUSAGE,
                            "%s: expected a number from %g to %g, not "
                            "'%.40s'",
                            opt, lo, hi, v);
    *out = d;
    return 0;
}

static int size_arg(const char *opt, const char *v, uint64_t *out,
                    op_error *err)
{
    char *end;
    unsigned long long n;
    uint64_t mult = 1;

    errno = 0;
    n = strtoull(v, &end, 10);
    if (!errno && end != v) {
        switch (*end) {
        case 'k': case 'K': mult = 1ull << 10; end++; break;
        case 'm': case 'M': mult = 1ull << 20; end++; break;
        case 'g': case 'G': mult = 1ull << 30; end++; break;
        default: break;
        }
        if (*end == 'i' || *end == 'I')
            end++;
        if (*end == 'b' || *end == 'B')
            end++;
    }
    if (errno || end == v || *end || n == 0 || n > UINT64_MAX / mult || v[0] == '-')
        return op_error_set(err, OP_EUSAGE,
                            "%s: expected a size such as 1048576 or 64m, "
                            "not '%.40s'",
                            opt, v);
    *out = n * mult;
    return 0;
}

static int env_name_ok(const char *s)
{
    size_t i;

    if (!s[0] || (s[0] >= '0' && s[0] <= '9'))
        return 0;
    for (i = 0; s[i]; i++)
        if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
            return 0;
    return 1;
}

/* 0 when a is one of the limits of the whole fetch (strcmp style). */
static int limit_opt(const char *a)
{
    return strcmp(a, "--max-time") && strcmp(a, "--max-requests") &&
           strcmp(a, "--min-rate") && strcmp(a, "--min-rate-time");
}

static int limit_arg(fetch_opts *o, const char *a, const char *v,
                     op_error *err)
{
    double d = 0;

    if (!strcmp(a, "--max-time"))
        return num_arg(a, v, 0.001, 86400.0 * 30, &o->max_time_s, err);
    if (!strcmp(a, "--min-rate-time"))
        return num_arg(a, v, 1, 86400, &o->min_rate_time_s, err);
    if (!strcmp(a, "--min-rate"))
        return size_arg(a, v, &o->min_rate, err);
    if (num_arg(a, v, 1, 1e9, &d, err) || d != (uint64_t)d)
        return op_error_set(err, OP_EUSAGE,
                            "--max-requests: expected a whole number from 1 "
                            "to 1000000000");
    o->max_requests = (uint64_t)d;
    return 0;
}

/* Connection options (every fetch). Returns 1 consumed, 0 not one, -1. */
static int conn_opt(fetch_opts *o, const char *a, const char *v, int *used,
                    op_error *err)
{
    double d = 0;

    *used = 1;
    if (!strcmp(a, "--insecure")) {
        o->insecure = 1;
        *used = 0;
        return 1;
    }
    if (strcmp(a, "--timeout") && strcmp(a, "--connect-timeout") &&
        strcmp(a, "--retries") && strcmp(a, "--max-size") &&
        strcmp(a, "--header") && strcmp(a, "--token-env") &&
        strcmp(a, "--cacert") && limit_opt(a))
        return 0;
    if (!v)
        return op_error_set(err, OP_EUSAGE, "option %s needs a value", a), -1;
    if (!strcmp(a, "--timeout")) {
        if (num_arg(a, v, 0.001, 86400, &o->timeout_s, err))
            return -1;
    } else if (!strcmp(a, "--connect-timeout")) {
        if (num_arg(a, v, 0.001, 86400, &o->connect_timeout_s, err))
            return -1;
    } else if (!strcmp(a, "--retries")) {
        if (num_arg(a, v, 0, FETCH_MAX_RETRIES, &d, err) || d != (int)d)
            return op_error_set(err, OP_EUSAGE,
                                "--retries: expected 0 to %d",
                                FETCH_MAX_RETRIES), -1;
        o->retries = (int)d;
    } else if (!strcmp(a, "--max-size")) {
        if (size_arg(a, v, &o->max_response, err))
            return -1;
    } else if (!limit_opt(a)) {
        if (limit_arg(o, a, v, err))
            return -1;
    } else if (!strcmp(a, "--header")) {
        if (o->nheaders >= FETCH_MAX_HEADERS)
            return op_error_set(err, OP_EUSAGE, "at most %d --header options",
                                FETCH_MAX_HEADERS), -1;
        o->headers[o->nheaders++] = v;
    } else if (!strcmp(a, "--token-env")) {
        if (!env_name_ok(v))
            return op_error_set(err, OP_EUSAGE,
                                "--token-env takes the NAME of an environment "
                                "variable (the token itself must not be on "
                                "the command line)"), -1;
        o->token_env = v;
    } else {
        if (access(v, R_OK) != 0)
            return op_error_set(err, OP_EUSAGE, "--cacert %.200s: %s", v,
                                strerror(errno)), -1;
        o->cacert = v;
    }
    return 1;
}

/* Flink options. Returns 1 consumed, 0 not one, -1 error. */
static int flink_opt(fetch_opts *o, const char *a, const char *v, int *used,
                     op_error *err)
{
    double d = 0;

    *used = 1;
    if (!strcmp(a, "--all-running")) {
        o->all_running = 1;
        *used = 0;
        return 1;
    }
    if (strcmp(a, "--job") && strcmp(a, "--samples") &&
        strcmp(a, "--interval") && strcmp(a, "--backpressure-wait") &&
        strcmp(a, "--max-metric-names"))
        return 0;
    if (!v)
        return op_error_set(err, OP_EUSAGE, "option %s needs a value", a), -1;
    if (!strcmp(a, "--job")) {
        o->job = v;
    } else if (!strcmp(a, "--samples")) {
        if (num_arg(a, v, 0, 10000, &d, err) || d != (int)d)
            return op_error_set(err, OP_EUSAGE,
                                "--samples: expected a whole number from 0 "
                                "to 10000"), -1;
        o->samples = (int)d;
    } else if (!strcmp(a, "--interval")) {
        if (num_arg(a, v, 0, 86400, &o->interval_s, err))
            return -1;
    } else if (!strcmp(a, "--max-metric-names")) {
        if (num_arg(a, v, 1, 1000000, &d, err) || d != (size_t)d)
            return op_error_set(err, OP_EUSAGE,
                                "--max-metric-names: expected a whole number "
                                "from 1 to 1000000"), -1;
        o->max_metric_names = (size_t)d;
    } else if (num_arg(a, v, 0, 600, &o->bp_wait_s, err)) {
        return -1;
    }
    return 1;
}

int fetch_opt_parse(fetch_opts *o, int argc, char **argv, int *i,
                    op_error *err)
{
    const char *a = argv[*i];
    const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    int used = 0, rc;

    rc = conn_opt(o, a, v, &used, err);
    if (rc == 0)
        rc = flink_opt(o, a, v, &used, err);
    if (rc == 1)
        *i += used;
    return rc;
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

static void help(void)
{
    printf(usage_fetch, fetch_opts_help);
}

typedef struct fetch_args {
    fetch_opts o;
    const char *url, *output;
    int quiet;
} fetch_args;

/* Parses the arguments of a subcommand; spark takes no Flink options. */
static int parse_args(fetch_args *fa, int argc, char **argv, int spark)
{
    op_error err;
    int i, rc, used;

    fetch_opts_init(&fa->o);
    for (i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        op_error_clear(&err);
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            exit(FETCH_OK);
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            fa->quiet = 1;
        } else if (!strcmp(a, "-o") || !strcmp(a, "--output") ||
                   (spark && (!strcmp(a, "--app") || !strcmp(a, "--attempt")))) {
            if (!v)
                return usage("option %s needs a value", a);
            if (!strcmp(a, "-o") || !strcmp(a, "--output"))
                fa->output = v;
            else if (!strcmp(a, "--app"))
                fa->o.app = v;
            else
                fa->o.attempt = v;
            i++;
        } else if (a[0] != '-') {
            if (fa->url)
                return usage("one URL only; '%s' is extra", a);
            fa->url = a;
        } else if ((rc = conn_opt(&fa->o, a, v, &used, &err)) != 0 ||
                   (!spark && (rc = flink_opt(&fa->o, a, v, &used, &err)) != 0)) {
            if (rc < 0)
                return usage("%s", err.msg);
            i += used;
        } else {
            return usage("unknown option '%s'", a);
        }
    }
    if (!fa->url)
        return usage("%s", "a URL is needed");
    fa->o.progress = !fa->quiet && isatty(STDERR_FILENO);
    fa->o.quiet = fa->quiet;
    return 0;
}

/* A fetch that gives one document, written to -o FILE or stdout. */
static int cmd_document(const op_engine_fetch *f, int argc, char **argv)
{
    fetch_args fa;
    op_error err;
    char *buf = NULL;
    size_t len = 0;
    int rc;

    memset(&fa, 0, sizeof fa);
    if ((rc = parse_args(&fa, argc, argv, 0)))
        return rc;
    op_error_clear(&err);
    rc = f->to_memory(fa.url, &fa.o, &buf, &len, &err);
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

/* A fetch that writes files into the folder -o DIR (default ./APP_ID). */
static int cmd_folder(const op_engine_fetch *f, int argc, char **argv)
{
    fetch_args fa;
    op_error err;
    int rc;

    memset(&fa, 0, sizeof fa);
    if ((rc = parse_args(&fa, argc, argv, 1)))
        return rc;
    if (!fa.o.app)
        return usage("%s needs --app APP_ID", f->name);
    op_error_clear(&err);
    rc = f->to_dir(fa.url, &fa.o, fa.output ? fa.output : fa.o.app, &err);
    if (rc == FETCH_EUSAGE)
        return usage("%s", err.msg);
    if (rc != FETCH_OK)
        diag_msg(DIAG_ERROR, "fetch: %s", err.msg);
    return rc;
}

int fetch_main(int argc, char **argv)
{
    const op_engine *e;
    char names[256];

    fetch_signals_install();
    engine_fetch_names(names, sizeof names);
    if (argc < 1) {
        diag_msg(DIAG_ERROR, "fetch: say what to fetch: %s. Try 'optipipe "
                 "fetch --help'.", names);
        return FETCH_EUSAGE;
    }
    if (!strcmp(argv[0], "--help") || !strcmp(argv[0], "-h") ||
        !strcmp(argv[0], "help")) {
        help();
        return FETCH_OK;
    }
    if ((e = engine_find_fetch(argv[0])) != NULL)
        return e->fetch->to_memory ? cmd_document(e->fetch, argc - 1, argv + 1)
                                   : cmd_folder(e->fetch, argc - 1, argv + 1);
    diag_msg(DIAG_ERROR, "fetch: unknown source '%s' (%s)", argv[0], names);
    diag_line(DIAG_ERROR, "Try 'optipipe fetch --help'.");
    return FETCH_EUSAGE;
}
