/*
 * cmd_history_copy.c - `optipipe history copy SRC DST` (docs/history.md
 * "Copying a store"): moves a run store from SQLite to PostgreSQL or back
 * (store_copy: one transaction of DST, verified by counts).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "store.h"

static int open_one(const char *path, int writable, store **st)
{
    op_error err;

    op_error_clear(&err);
    if (store_open(path, writable, st, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return EXIT_NOINPUT;
    }
    return 0;
}

static int history_copy(cli_opts *h, const opt_cmd *cmd)
{
    const char *const *in = h->session.inputs;
    store *src = NULL, *dst = NULL;
    store_counts n;
    op_error err;
    int code;

    if (h->session.ninputs != 2) {
        diag_msg(DIAG_ERROR, "%s needs SRC and DST", cmd->name);
        diag_line(DIAG_ERROR, "Try 'optipipe %s --help'.", cmd->name);
        return EXIT_USAGE;
    }
    if (!strcmp(in[0], in[1])) {
        diag_msg(DIAG_ERROR, "%s: SRC and DST are the same store", in[0]);
        return EXIT_USAGE;
    }
    op_error_clear(&err);
    if (!(code = open_one(in[0], 0, &src)) &&
        !(code = open_one(in[1], 1, &dst))) {
        if (store_copy(src, dst, &n, &err)) {
            diag_msg(DIAG_ERROR, "%s", err.msg);
            code = err.code == OP_EUSAGE ? EXIT_USAGE : EXIT_NOINPUT;
        } else
            printf("copied %lld runs, %lld nodes, %lld findings, %lld "
                   "decisions, %lld decision changes, %lld notifications "
                   "remembered and %lld deliveries logged from %s to %s "
                   "(counts verified)\n",
                   (long long)n.runs, (long long)n.nodes,
                   (long long)n.findings, (long long)n.decisions,
                   (long long)n.changes, (long long)n.said,
                   (long long)n.deliveries, store_path(src), store_path(dst));
    }
    store_close(dst);
    store_close(src);
    return code;
}

int cli_run_history_copy(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, history_copy);
}
