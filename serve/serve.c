/*
 * serve.c - `optipipe serve` starts and stops here: the options checked,
 * the DATA folder made (0700) and locked (one server per DATA), the
 * tokens read, the jobs recovered, libmicrohttpd started (serve_http.c),
 * then the main thread waits for SIGINT or SIGTERM and shuts down in
 * order. `serve --worker ID` runs one analysis instead (serve_worker.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pthread.h>

#include "diag.h"
#include "serve.h"
#include "session.h"
#include "serve_http.h"
#include "store.h"
#include "testhook.h"

static int mkdir_0700(const char *path, op_error *err)
{
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return op_error_set(err, OP_EIO, "cannot create %s: %s", path,
                            strerror(errno));
    return 0;
}

/* DATA, DATA/tmp, DATA/analyses; s->data the absolute DATA. */
static int make_data(srv *s, const char *dir, op_error *err)
{
    char path[4096 + 16], real[PATH_MAX];
    int rc;

    if ((rc = mkdir_0700(dir, err)))
        return rc;
    if (!realpath(dir, real))
        return op_error_set(err, OP_EIO, "--data %s: %s", dir, strerror(errno));
    if (strlen(real) >= sizeof s->data - 32)
        return op_error_set(err, OP_EUSAGE, "--data %s: path too long", dir);
    snprintf(s->data, sizeof s->data, "%s", real);
    if (s->o->store) {
        if (snprintf(s->store_path, sizeof s->store_path, "%s", s->o->store) >=
            (int)sizeof s->store_path)
            return op_error_set(err, OP_EUSAGE, "--store: longer than %zu "
                                "bytes", sizeof s->store_path - 1);
    } else if (snprintf(s->store_path, sizeof s->store_path, "%s/history.db", real) >=
        (int)sizeof s->store_path) /* never (checked above): for gcc -O0/-Os */
        return op_error_set(err, OP_EUSAGE, "--data %s: path too long", dir);
    snprintf(path, sizeof path, "%s/tmp", real);
    if ((rc = mkdir_0700(path, err)))
        return rc;
    snprintf(path, sizeof path, "%s/analyses", real);
    return mkdir_0700(path, err);
}

/* --store: created or migrated now, so that a store the server cannot
 * reach (or write) stops it at the start, said once. */
static int open_store(const srv *s, op_error *err)
{
    store *st = NULL;
    int rc = store_open(s->store_path, 1, &st, err);

    store_close(st);
    return rc;
}

/* One server per DATA: the lock lives as long as the process (the fd is
 * close-on-exec, so workers never hold it). With a PostgreSQL store the
 * instances share DATA (their queue and sessions are in the store,
 * serve_jobs.c): each takes the lock shared, so several of them start,
 * and neither kind starts beside a server of the other kind (an SQLite
 * one holds it exclusive). Returns the fd or -1. */
static int lock_data(const srv *s, op_error *err)
{
    int shared = s->o->store && store_uri_is_pg(s->o->store);
    char path[4096 + 16];
    int fd;

    snprintf(path, sizeof path, "%s/serve.lock", s->data);
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) {
        op_error_set(err, OP_EIO, "cannot open %s: %s", path, strerror(errno));
        return -1;
    }
    if (flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
        op_error_set(err, OP_EUSAGE, shared
                     ? "a server with an SQLite store uses %s (%s is locked):"
                       " only servers of one PostgreSQL store share DATA"
                     : "another optipipe serve uses %s (%s is locked): one "
                       "server per DATA folder (servers share one only with "
                       "a PostgreSQL --store)", s->data, path);
        close(fd);
        return -1;
    }
    return fd;
}

static int self_exe(srv *s, op_error *err)
{
    ssize_t n = readlink("/proc/self/exe", s->self_exe, sizeof s->self_exe - 1);

    if (n <= 0 || (size_t)n >= sizeof s->self_exe - 1)
        return op_error_set(err, OP_EIO, "cannot find this program "
                            "(/proc/self/exe): %s", strerror(errno));
    s->self_exe[n] = '\0';
    return 0;
}

/* DATA/serve.port: the bound port, for scripts (written whole, 0600 like
 * everything in DATA, then renamed into place). The temporary file is
 * made anew (O_EXCL after removing a leftover, O_NOFOLLOW): nothing
 * planted under its name is written through. */
static int write_port(const srv *s, unsigned port, op_error *err)
{
    char tmp[4096 + 32], path[4096 + 32], text[16];
    int fd, n, ok;

    /* instances sharing DATA (a PostgreSQL store) write it each: the
     * last one wins, and no instance removes another's temporary file */
    if (s->o->store && store_uri_is_pg(s->o->store))
        snprintf(tmp, sizeof tmp, "%s/serve.port.%ld.tmp", s->data,
                 (long)getpid());
    else
        snprintf(tmp, sizeof tmp, "%s/serve.port.tmp", s->data);
    snprintf(path, sizeof path, "%s/serve.port", s->data);
    n = snprintf(text, sizeof text, "%u\n", port);
    if (unlink(tmp) != 0 && errno != ENOENT)
        return op_error_set(err, OP_EIO, "cannot remove %s: %s", tmp,
                            strerror(errno));
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return op_error_set(err, OP_EIO, "cannot write %s: %s", tmp,
                            strerror(errno));
    ok = write(fd, text, (size_t)n) == n;
    if (close(fd) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0) {
        op_error_set(err, OP_EIO, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        return err->code;
    }
    return 0;
}

/* What no option table can say. */
static int check_opts(const serve_opts *o, const srv_listen *l, op_error *err)
{
    char host[256];

    if (!o->data_dir || !*o->data_dir)
        return op_error_set(err, OP_EUSAGE, "serve needs --data DIR (the run "
                            "store and the uploads)");
    if (o->public_origin &&
        srv_parse_origin(o->public_origin, host, sizeof host, err))
        return err->code;
    if (!l->loopback && !o->token_file && !o->users_file && !o->auth_header)
        return op_error_set(err, OP_EUSAGE, "--listen %s is not a loopback "
                            "address: give --token-file FILE (Bearer tokens), "
                            "--users FILE or --auth-header with "
                            "--trusted-proxy to serve beyond this machine",
                            o->listen);
    return 0;
}

/* Blocks the stop signals (every thread started later inherits the mask,
 * so only sigwait sees them) and SIGPIPE (a client gone mid-answer is an
 * error return, not a death). */
static void block_signals(sigset_t *stop)
{
    sigset_t all;

    sigemptyset(stop);
    sigaddset(stop, SIGINT);
    sigaddset(stop, SIGTERM);
    all = *stop;
    sigaddset(&all, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
}

static int wait_stop(const sigset_t *stop)
{
    int sig = 0;

    while (sigwait(stop, &sig) != 0)
        ;
    return sig;
}

static int run(srv *s, const serve_opts *o, op_error *err)
{
    srv_tokens *tokens = NULL;
    srv_listen l;
    sigset_t stop;
    unsigned port = 0;
    int lock = -1, rc;

    if ((rc = srv_parse_listen(o->listen, &l, err)) ||
        (rc = check_opts(o, &l, err)))
        return rc;
    s->loopback = l.loopback;
    op_testhook_gate("optipipe serve", l.loopback, "the server listens beyond loopback");
    if (o->token_file) {
        if (!(tokens = malloc(sizeof *tokens)))
            return op_error_set(err, OP_ENOMEM, "out of memory (tokens)");
        if ((rc = srv_tokens_load(o->token_file, tokens, err)))
            goto out;
        s->tokens = 1;
    }
    if ((rc = srv_access_load(o, &s->access, err)))
        goto out;
    if (s->access && (o->users_file || o->auth_header))
        s->tokens = 1;
    if ((rc = make_data(s, o->data_dir, err)) ||
        (o->store && (rc = open_store(s, err))))
        goto out;
    if ((lock = lock_data(s, err)) < 0) {
        rc = err->code;
        goto out;
    }
    if ((rc = self_exe(s, err)))
        goto out;
    block_signals(&stop);
    if ((rc = metrics_new(&s->metrics, err)) || (rc = srv_notify_start(s, err)) ||
        (rc = jobs_open(s, &s->jobs, err)) ||
        (rc = srv_http_start(s, &l, tokens, &port, err)) ||
        (rc = write_port(s, port, err)))
        goto out;
    fprintf(stderr, "optipipe serve: listening on http://%s:%u\n", l.host, port);
    fflush(stderr);
    wait_stop(&stop);
    if (!o->quiet)
        diag_msg(DIAG_NOTE, "serve: stopping");
out:
    srv_http_stop(s);
    if (s->jobs)
        jobs_close(s->jobs);
    s->jobs = NULL;
    srv_notify_stop(s); /* after the jobs: no analysis ends any more */
    metrics_free(s->metrics);
    s->metrics = NULL;
    if (tokens)
        explicit_bzero(tokens, sizeof *tokens);
    free(tokens);
    srv_access_free(s->access);
    s->access = NULL;
    if (lock >= 0)
        close(lock);
    return rc;
}

int serve_main(const serve_opts *o)
{
    srv s;
    op_error err;
    int rc;

    if (o->worker)
        return serve_worker_main(o);
    memset(&s, 0, sizeof s);
    s.o = o;
    op_error_clear(&err);
    rc = run(&s, o, &err);
    if (rc) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return op_session_exit_failed(rc);
    }
    return OP_EXIT_DONE;
}

void serve_opts_default(serve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->listen = SRV_LISTEN_DEFAULT;
    o->max_upload_bytes = SRV_UPLOAD_DEFAULT;
    o->max_files = SRV_FILES_DEFAULT;
    o->threads = SRV_THREADS_DEFAULT;
    o->max_connections = SRV_CONNECTIONS_DEFAULT;
    o->conn_timeout_s = SRV_CONN_TIMEOUT_DEFAULT;
    o->queue = SRV_QUEUE_DEFAULT;
    o->analysis_timeout_s = SRV_ANALYSIS_TIMEOUT_DEFAULT;
    o->heartbeat_stale_s = SRV_HEARTBEAT_STALE_DEFAULT;
    o->analysis_memory = SRV_ANALYSIS_MEMORY_DEFAULT;
    o->server_memory = SRV_SERVER_MEMORY_DEFAULT;
}
