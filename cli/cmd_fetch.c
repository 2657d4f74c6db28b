/*
 * cmd_fetch.c - `optipipe fetch NAME`, one command per engine fetch of the
 * engine table (core/engine.h; cli_table.c builds the commands and their
 * options: -o, -q, the engine's own, the connection options shared with
 * `analyze URL`): a document fetch writes its export atomically to -o FILE
 * or stdout, a folder fetch writes into -o DIR. The temporary files a
 * SIGINT / SIGTERM removes are core's (core/fetch.c). Exit codes are the
 * fetch_result values (docs/fetch.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "diag.h"
#include "engine.h"
#include "fetch.h"
#include "wfile.h"

/* --- output ---------------------------------------------------------------- */

/* Writes buf to path atomically (a temporary file renamed over it), or
 * to stdout for NULL / "-". */
static int write_output(const char *path, const char *buf, size_t len)
{
    char tmp[FETCH_TEMP_PATH_MAX];
    op_error err;
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
    op_error_clear(&err);
    if (wfile_check(path, &err)) {
        diag_msg(DIAG_ERROR, "fetch: %s", err.msg);
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
    cli_opts co; /* co.fetch holds the engine's options too */
    const op_engine *e;
    const char *url, *output;
    int quiet;
} fetch_args;

/* Parses the arguments of cmd (a `fetch NAME` of cli_table.c). */
static int parse_args(fetch_args *fa, int argc, char **argv,
                      const opt_cmd *cmd)
{
    op_error err;
    int rc;

    cli_opts_default(&fa->co);
    op_error_clear(&err);
    rc = opts_parse(cmd, &fa->co, argc, argv, &err);
    if (rc == OPTS_HELP) {
        opts_help(cmd, "optipipe", stdout);
        exit(FETCH_OK);
    }
    if (rc)
        return usage("%s", err.msg);
    if (!fa->co.session.ninputs)
        return usage("%s", "a URL is needed");
    fa->url = fa->co.session.inputs[0];
    fa->output = fa->co.output;
    fa->quiet = fa->co.session.quiet;
    fa->co.fetch.progress = !fa->quiet && isatty(STDERR_FILENO);
    fa->co.fetch.quiet = fa->quiet;
    return 0;
}

/* A fetch that gives one document, written to -o FILE or stdout. */
static int cmd_document(fetch_args *fa)
{
    const op_engine_fetch *f = fa->e->fetch;
    op_error err;
    char *buf = NULL;
    size_t len = 0;
    int rc;

    op_error_clear(&err);
    rc = f->to_memory(fa->url, &fa->co.fetch, engine_opts(&fa->co.fetch, fa->e),
                      &buf, &len, &err);
    if (rc == FETCH_EUSAGE) {
        free(buf);
        return usage("%s", err.msg);
    }
    if (rc != FETCH_OK && rc != FETCH_INCOMPLETE) {
        diag_msg(DIAG_ERROR, "fetch: %s", err.msg);
        free(buf);
        return FETCH_ENOTHING;
    }
    if (write_output(fa->output, buf, len)) {
        free(buf);
        return FETCH_ENOTHING;
    }
    free(buf);
    if (rc == FETCH_INCOMPLETE)
        diag_msg(DIAG_ERROR, "fetch: %s: %s",
                fa->output ? fa->output : "stdout", err.msg);
    else if (!fa->quiet && fa->output && strcmp(fa->output, "-"))
        diag_msg(DIAG_NOTE, "fetch: wrote %s (%zu bytes)", fa->output, len);
    return rc;
}

/* A fetch that writes files into the folder -o DIR (else the engine's
 * default). */
static int cmd_folder(fetch_args *fa)
{
    op_error err;
    int rc;

    op_error_clear(&err);
    rc = fa->e->fetch->to_dir(fa->url, &fa->co.fetch,
                              engine_opts(&fa->co.fetch, fa->e), fa->output,
                              &err);
    if (rc == FETCH_EUSAGE)
        return usage("%s", err.msg);
    if (rc != FETCH_OK)
        diag_msg(DIAG_ERROR, "fetch: %s", err.msg);
    return rc;
}

int cli_run_fetch(const opt_cmd *cmd, int argc, char **argv)
{
    fetch_args *fa = calloc(1, sizeof *fa); /* cli_opts is large */
    int rc;

    if (!fa) {
        diag_msg(DIAG_ERROR, "fetch: out of memory");
        return FETCH_ENOTHING;
    }
    fetch_signals_install();
    fa->e = engine_find_fetch(cmd->name + strlen("fetch "));
    if (!fa->e) /* the table was built from the engines: cannot happen */
        rc = usage("no engine fetches '%s'", cmd->name);
    else if (!(rc = parse_args(fa, argc, argv, cmd)))
        rc = fa->e->fetch->to_memory ? cmd_document(fa) : cmd_folder(fa);
    opts_free(cmd, &fa->co);
    free(fa);
    return rc;
}
