/*
 * cmd_fetch.c - the `optipipe fetch` command line (its options, shared
 * with `analyze URL`, are in cli_table.c): `fetch flink` (an export written
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

#include "cli.h"
#include "diag.h"
#include "engine.h"
#include "fetch.h"

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

/* A fetch that gives one document, written to -o FILE or stdout. */
static int cmd_document(const op_engine_fetch *f, int argc, char **argv)
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
    if ((rc = parse_args(&fa, argc, argv, &cli_cmd_fetch_spark)))
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
    const char *hint;
    char names[256];

    fetch_signals_install();
    if (argc >= 1 && (e = engine_find_fetch(argv[0])) != NULL)
        return e->fetch->to_memory ? cmd_document(e->fetch, argc - 1, argv + 1)
                                   : cmd_folder(e->fetch, argc - 1, argv + 1);
    if (argc < 1 || argv[0][0] == '-' || !strcmp(argv[0], "help"))
        return cli_subcommand_help("fetch", argc, argv);
    /* the engines' fetches are the valid words: name them all */
    engine_fetch_names(names, sizeof names);
    hint = cli_suggest_sub("fetch", argv[0]);
    if (hint)
        diag_msg(DIAG_ERROR, "unknown fetch command '%s' (did you mean '%s'?)",
                 argv[0], hint);
    else
        diag_msg(DIAG_ERROR, "unknown fetch command '%s' (%s)", argv[0], names);
    diag_line(DIAG_ERROR, "Try 'optipipe fetch --help'.");
    return EXIT_USAGE;
}
