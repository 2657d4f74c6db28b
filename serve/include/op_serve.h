/*
 * op_serve.h - the serve layer's public API: what the command line may
 * know of `optipipe serve` (docs/serve.md). cli/cmd_serve.c parses the
 * options (their table rows are in cli/cli_table.c) into a serve_opts and
 * calls serve_main; everything else of the server is serve/'s own
 * (serve/serve.h, not on the command line's include path).
 */
#ifndef OP_SERVE_OP_SERVE_H
#define OP_SERVE_OP_SERVE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#define SRV_MAX_LIST 64

typedef struct serve_opts {
    const char *listen;        /* ADDR:PORT, [V6]:PORT; default
                                * SRV_LISTEN_DEFAULT; port 0: any free one
                                * (the bound one is printed, see serve.c) */
    const char *data_dir;      /* required */
    const char *store;         /* --store: the run store (a file or a
                                * postgresql:// URI); NULL: DATA/history.db */
    const char *token_file;    /* Bearer tokens, one a line; required when
                                * listen is not loopback */
    const char **rules_dirs;   /* rule folders every analysis runs
                                * (--rules), at most SRV_MAX_LIST */
    size_t nrules_dirs;
    const char *config_path;   /* an optipipe.lua for every analysis;
                                * NULL: none (uploads never bring one) */
    int allow_rule_upload;     /* uploaded .lua rules run, isolated */
    const char **fetch_allow;  /* hosts URL inputs may name, at most
                                * SRV_MAX_LIST; none: URL inputs refused */
    size_t nfetch_allow;
    uint64_t max_upload_bytes; /* one upload, all files: SRV_UPLOAD_DEFAULT */
    unsigned max_files;        /* files per upload: SRV_FILES_DEFAULT */
    unsigned threads;          /* HTTP thread pool */
    unsigned max_connections;
    unsigned conn_timeout_s;   /* an idle or slow connection is closed */
    unsigned workers;          /* analyses at once (0: number of CPUs) */
    unsigned queue;            /* analyses waiting; more: 429 */
    unsigned analysis_timeout_s; /* wall clock per analysis, then SIGKILL */
    unsigned heartbeat_stale_s; /* a PostgreSQL store's shared queue: a
                                 * running analysis whose heartbeat is
                                 * older is queued again (its instance
                                 * died): SRV_HEARTBEAT_STALE_DEFAULT */
    uint64_t analysis_memory;  /* RLIMIT_AS per worker (bytes) */
    uint64_t server_memory;    /* the server's own budget (serve_budget.c) */
    const char *public_origin; /* --public-origin URL: the scheme://host[:port]
                                * browsers reach us by through a proxy; its
                                * Host and Origin are accepted as ours */
    const char *users_file;    /* --users: NAME ROLE sha256:HEX a line */
    const char *auth_header;   /* --auth-header: a proxy's user header */
    const char **trusted_proxies; /* --trusted-proxy CIDRs, at most SRV_MAX_LIST */
    size_t ntrusted_proxies;
    const char *proxy_role;    /* --proxy-role: a proxy user not in --users
                                * (read, upload, decide, admin or none) */
    const char *worker;        /* internal: --worker ID runs one analysis */
    int quiet;
} serve_opts;

#define SRV_LISTEN_DEFAULT "127.0.0.1:8080"
#define SRV_UPLOAD_DEFAULT (1ull << 30)      /* 1 GiB */
#define SRV_FILES_DEFAULT 256
#define SRV_THREADS_DEFAULT 4
#define SRV_CONNECTIONS_DEFAULT 64
#define SRV_CONN_TIMEOUT_DEFAULT 30
#define SRV_QUEUE_DEFAULT 16
#define SRV_ANALYSIS_TIMEOUT_DEFAULT 600
#define SRV_HEARTBEAT_STALE_DEFAULT 60
#define SRV_ANALYSIS_MEMORY_DEFAULT (4ull << 30) /* 4 GiB */
#define SRV_SERVER_MEMORY_DEFAULT (512ull << 20) /* 512 MiB */

/* The defaults above into o (every other field zero). */
void serve_opts_default(serve_opts *o);

/* `optipipe serve`: serves until SIGINT or SIGTERM; `--worker ID`
 * (o->worker) runs that one analysis instead. o is borrowed for the
 * call. Returns the process exit code: 0 stopped, 2 could not start
 * (OP_EXIT_USAGE), 3 DATA not usable; a worker returns the exit code of
 * `optipipe analyze` (session.h). */
int serve_main(const serve_opts *o);

/* `optipipe serve user add NAME --role ROLE --users FILE`: appends NAME
 * with ROLE and the SHA-256 of a new random token to FILE (made 0600 when
 * missing) and prints the token once to out. Refuses a bad or taken name,
 * an unknown role. Returns an exit code: 0, 2 (usage), 3 (FILE not
 * readable or writable); says why on stderr. */
int serve_user_add(const char *users_file, const char *name,
                   const char *role, FILE *out);

#endif
