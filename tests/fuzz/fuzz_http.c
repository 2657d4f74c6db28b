/*
 * fuzz_http.c - libFuzzer target for the request path of `optipipe serve`
 * (serve/serve_http.c and every handler behind it): the server runs in
 * this process (libmicrohttpd on 127.0.0.1, an ephemeral port, a scratch
 * DATA folder, one worker slot whose worker is /bin/false), and each input
 * is sent as the raw bytes of one connection: request line, headers and
 * body, whatever method, route, body and headers the fuzzer makes. The
 * write side is then shut and the answer read to its end (bounded), so
 * every request is answered or dropped before the next; ASan and UBSan
 * see the server's threads. Issue #24: a GET with a body crashed here.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "serve.h"
#include "serve_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static serve_opts fz_opts;
static srv fz_srv;
static unsigned fz_port;

static void fz_die(const char *what, const op_error *err)
{
    fprintf(stderr, "fuzz_http: %s: %s\n", what, err ? err->msg : strerror(errno));
    abort();
}

/* The server, once per process (never stopped: libFuzzer exits). */
static void fz_start(void)
{
    static char tmpl[] = "/tmp/fuzz_http.XXXXXX";
    char path[4096 + 16];
    srv_listen l;
    op_error err;
    char *dir = mkdtemp(tmpl);

    if (!dir)
        fz_die("mkdtemp", NULL);
    op_error_clear(&err);
    fz_opts.listen = "127.0.0.1:0";
    fz_opts.data_dir = dir;
    fz_opts.max_upload_bytes = 64 * 1024;
    fz_opts.max_files = 4;
    fz_opts.threads = 2;
    fz_opts.max_connections = 16;
    fz_opts.conn_timeout_s = 5;
    fz_opts.workers = 1;
    fz_opts.queue = 1;
    fz_opts.analysis_timeout_s = 5;
    fz_opts.analysis_memory = 1ull << 30;
    fz_opts.server_memory = 4ull << 20;
    fz_opts.quiet = 1;
    fz_srv.o = &fz_opts;
    fz_srv.loopback = 1;
    snprintf(fz_srv.data, sizeof fz_srv.data, "%s", dir);
    snprintf(fz_srv.store_path, sizeof fz_srv.store_path, "%s/history.db", dir);
    snprintf(fz_srv.self_exe, sizeof fz_srv.self_exe, "/bin/false");
    snprintf(path, sizeof path, "%s/tmp", dir);
    if (mkdir(path, 0700) != 0)
        fz_die("mkdir tmp", NULL);
    snprintf(path, sizeof path, "%s/analyses", dir);
    if (mkdir(path, 0700) != 0)
        fz_die("mkdir analyses", NULL);
    if (srv_parse_listen(fz_opts.listen, &l, &err))
        fz_die("listen", &err);
    if (metrics_new(&fz_srv.metrics, &err))
        fz_die("metrics", &err);
    if (jobs_open(&fz_srv, &fz_srv.jobs, &err))
        fz_die("jobs", &err);
    if (srv_http_start(&fz_srv, &l, NULL, &fz_port, &err))
        fz_die("http", &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct sockaddr_in a;
    struct timeval tv = {10, 0};
    char buf[65536];
    size_t sent = 0;
    int fd;

    if (!fz_port)
        fz_start();
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        fz_die("socket", NULL);
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)fz_port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        fz_die("connect (the server is gone?)", NULL);
    while (sent < size) {
        ssize_t k = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
        if (k <= 0)
            break; /* the server answered early and closed */
        sent += (size_t)k;
    }
    shutdown(fd, SHUT_WR);
    while (recv(fd, buf, sizeof buf, 0) > 0)
        ;
    close(fd);
    return 0;
}
