/*
 * fetch_spark.c - `optipipe fetch spark-history`: downloads an
 * application's event logs from a Spark History Server
 * (/api/v1/applications/<id>/[<attempt>/]logs, a zip) and unpacks them
 * with libzip into a folder that `optipipe analyze DIR` reads (single log
 * files and rolling eventlog_v2_* folders alike).
 *
 * The archive comes from the network: core's unpacker (unzip.c) checks
 * every entry before a byte is written (names, types, the entry count, the
 * unpacked bytes, the compression ratio). The download and the entry being
 * written are registered temporary files: a SIGINT / SIGTERM removes them.
 */
#include "fetch.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <zip.h>

#include "fetch_http.h"
#include "spark_host.h"
#include "report_util.h"
#include "unzip.h"

#define FS_JSON_MAX (16ull << 20)
#define FS_DEFAULT_MAX (8ull << 30)   /* the zip as downloaded */
#define FS_PATH_MAX 4096

typedef struct fs {
    const fetch_opts *o;
    const spark_fetch_opts *so;
    http_client *http;
    char *base;
    const char *dir;
    uint64_t zip_bytes;
    unzip_result res;
    char first_refused[160];
} fs;

static void say(const fs *s, const char *fmt, const char *a, const char *b)
{
    char ca[300], cb[300];

    if (!s->o->diag)
        return;
    report_term_copy(ca, sizeof ca, a);
    report_term_copy(cb, sizeof cb, b ? b : "");
    fputs("optipipe: fetch: ", s->o->diag);
    fprintf(s->o->diag, fmt, ca, cb);
    fputc('\n', s->o->diag);
}

/* Application and attempt ids go into a URL path: plain characters only. */
static int app_id_ok(const char *s)
{
    size_t i;

    if (!s || !*s || s[0] == '.' || strlen(s) > 255)
        return 0;
    for (i = 0; s[i]; i++)
        if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
            return 0;
    return 1;
}

/* --- the History Server ---------------------------------------------------- */

static int get_json(fs *s, const char *path, cJSON **doc, long *status,
                    op_error *err)
{
    char url[FS_PATH_MAX];
    http_resp r;
    int rc;

    *doc = NULL;
    snprintf(url, sizeof url, "%s%s", s->base, path);
    rc = http_get(s->http, url, FS_JSON_MAX, &r, err);
    *status = r.status;
    if (!rc && r.status >= 200 && r.status <= 299)
        *doc = cJSON_ParseWithLength(r.body, r.len);
    http_resp_free(&r);
    return rc;
}

static int has_attempt(const cJSON *app, const char *attempt)
{
    const cJSON *a;

    cJSON_ArrayForEach(a, cJSON_GetObjectItem(app, "attempts"))
    {
        const char *id =
            cJSON_GetStringValue(cJSON_GetObjectItem(a, "attemptId"));
        if (id && !strcmp(id, attempt))
            return 1;
    }
    return 0;
}

/* GET /api/v1/applications/<app>: is it there, is this a History Server. */
static int check_app(fs *s, op_error *err)
{
    char path[FS_PATH_MAX];
    cJSON *app = NULL;
    long status = 0;
    int rc = FETCH_OK;
    op_error why;

    snprintf(path, sizeof path, "/api/v1/applications/%s", s->so->app);
    op_error_clear(&why);
    if (get_json(s, path, &app, &status, &why))
        return op_error_set(err, FETCH_ENOTHING, "cannot fetch from %s: %s",
                            s->base, why.msg);
    if (status == 404)
        rc = op_error_set(err, FETCH_ENOTHING,
                          "application %s not found on %s (GET %s: HTTP 404)",
                          s->so->app, s->base, path);
    else if (status < 200 || status > 299)
        rc = op_error_set(err, FETCH_ENOTHING, "GET %s%s: HTTP %ld %s%s",
                          s->base, path, status, http_reason(status),
                          (status == 401 || status == 403)
                              ? "; pass credentials with --token-env VAR"
                              : "");
    else if (!cJSON_IsString(cJSON_GetObjectItem(app, "id")) ||
             !cJSON_IsArray(cJSON_GetObjectItem(app, "attempts")))
        rc = op_error_set(err, FETCH_ENOTHING,
                          "%s does not look like a Spark History Server: GET "
                          "%s did not answer an application",
                          s->base, path);
    else if (s->so->attempt && !has_attempt(app, s->so->attempt))
        rc = op_error_set(err, FETCH_ENOTHING,
                          "application %s has no attempt '%s'", s->so->app,
                          s->so->attempt);
    cJSON_Delete(app);
    return rc;
}

/* --- unpacking ------------------------------------------------------------- */

static void refused(void *ud, const char *name, const char *why)
{
    fs *s = ud;

    if (s->res.refused == 0) /* the count goes up after this call */
        report_term_copy(s->first_refused, sizeof s->first_refused, name);
    say(s, "archive entry '%s' skipped: %s", name, why);
}

static int unpack(fs *s, const char *zip_path, op_error *err)
{
    unzip_opts uo = {s->zip_bytes, refused, fetch_temp_add, fetch_temp_drop,
                     s};
    size_t skip = strlen(zip_path);
    op_error why;

    op_error_clear(&why);
    if (unzip_to_dir(zip_path, s->dir, &uo, &s->res, &why)) {
        /* the temporary file's name says nothing to the user */
        if (strncmp(why.msg, zip_path, skip) != 0 || why.msg[skip] != ':')
            skip = 0;
        else
            skip += 2;
        return op_error_set(err, FETCH_ENOTHING, "the logs of %s from %s: %s",
                            s->so->app, s->base, why.msg + skip);
    }
    if (s->res.left) {
        char left[80];
        snprintf(left, sizeof left, "%zu", s->res.left);
        s->res.refused += s->res.left;
        say(s, "%s further archive entries not unpacked: the cap%s for the "
            "archive is reached", left, "");
    }
    return 0;
}

/* --- the download ---------------------------------------------------------- */

static int make_dir(const char *dir, op_error *err)
{
    char path[FS_PATH_MAX];
    size_t i, n = strlen(dir);
    struct stat st;

    if (n == 0 || n >= sizeof path)
        return op_error_set(err, FETCH_EUSAGE, "-o: bad folder name");
    memcpy(path, dir, n + 1);
    for (i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        path[i] = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return op_error_set(err, FETCH_ENOTHING,
                                "%s: cannot create the folder: %s", path,
                                strerror(errno));
        if (i < n)
            path[i] = '/';
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return op_error_set(err, FETCH_ENOTHING, "%s: not a folder", dir);
    return 0;
}

static int download(fs *s, int fd, op_error *err)
{
    char path[FS_PATH_MAX], url[FS_PATH_MAX];
    uint64_t max = s->o->max_response ? s->o->max_response : FS_DEFAULT_MAX;
    uint64_t bytes = 0;
    long status = 0;

    if (s->so->attempt)
        snprintf(path, sizeof path, "/api/v1/applications/%s/%s/logs",
                 s->so->app, s->so->attempt);
    else
        snprintf(path, sizeof path, "/api/v1/applications/%s/logs",
                 s->so->app);
    snprintf(url, sizeof url, "%s%s", s->base, path);
    if (s->o->progress && s->o->diag)
        fprintf(s->o->diag, "fetch: GET %s ...\n", path);
    if (http_get_fd(s->http, url, fd, max, &status, &bytes, err)) {
        err->code = FETCH_ENOTHING;
        return FETCH_ENOTHING;
    }
    s->zip_bytes = bytes;
    if (status == 404)
        return op_error_set(err, FETCH_ENOTHING,
                            "no event logs for %s on %s (GET %s: HTTP 404)",
                            s->so->app, s->base, path);
    if (status < 200 || status > 299)
        return op_error_set(err, FETCH_ENOTHING, "GET %s: HTTP %ld %s", url,
                            status, http_reason(status));
    return 0;
}

int fetch_spark_history(const char *url, const fetch_opts *o, const void *eo,
                        const char *dir, op_error *err)
{
    const spark_fetch_opts *so = eo;
    fs s;
    char tmp[FS_PATH_MAX];
    int rc, fd = -1, slot = -1;

    memset(&s, 0, sizeof s);
    s.o = o;
    s.so = so;
    tmp[0] = '\0';
    if (!so || !so->app)
        return op_error_set(err, FETCH_EUSAGE,
                            "spark-history needs --app APP_ID");
    if (!dir)
        dir = so->app;
    s.dir = dir;
    if (!app_id_ok(so->app))
        return op_error_set(err, FETCH_EUSAGE,
                            "--app: '%.80s' is not a Spark application id",
                            so->app);
    if (so->attempt && !app_id_ok(so->attempt))
        return op_error_set(err, FETCH_EUSAGE,
                            "--attempt: '%.80s' is not an attempt id",
                            so->attempt);
    if ((rc = http_base_url(url, &s.base, err)) ||
        (rc = http_client_new(o, &s.http, err))) {
        rc = rc == OP_ENOMEM ? FETCH_ENOTHING : FETCH_EUSAGE;
        goto out;
    }
    if ((rc = check_app(&s, err)) || (rc = make_dir(dir, err)))
        goto out;
    if (strlen(dir) + 32 >= sizeof tmp) {
        rc = op_error_set(err, FETCH_EUSAGE, "-o: the folder name is too long");
        goto out;
    }
    snprintf(tmp, sizeof tmp, "%s/.optipipe-logs-XXXXXX", dir);
    slot = fetch_temp_open(tmp, &fd);
    if (slot < 0) {
        rc = op_error_set(err, FETCH_ENOTHING, "%s: cannot create a file: %s",
                          dir, strerror(errno));
        goto out;
    }
    if ((rc = download(&s, fd, err)) ||
        (rc = unpack(&s, fetch_temp_path(slot), err)))
        goto out;
    if (s.res.files == 0)
        rc = op_error_set(err, FETCH_ENOTHING,
                          "the logs archive of %s held no usable file%s%s",
                          so->app, s.res.refused ? "; first refused: " : "",
                          s.first_refused);
    else if (s.res.refused)
        rc = op_error_set(err, FETCH_INCOMPLETE,
                          "incomplete: %zu archive entries skipped (first: "
                          "%s); %zu file(s) written to %s",
                          s.res.refused, s.first_refused, s.res.files, dir);
    else
        rc = FETCH_OK;
    if (s.res.files && o->diag && !o->quiet)
        fprintf(o->diag, "optipipe: fetch: %zu file%s (%llu bytes) unpacked "
                "into %s\n", s.res.files, s.res.files == 1 ? "" : "s",
                (unsigned long long)s.res.unpacked, dir);
out:
    if (fd >= 0)
        close(fd);
    fetch_temp_drop(slot, 1);
    http_client_free(s.http);
    free(s.base);
    return rc;
}
