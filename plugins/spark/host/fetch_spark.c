/*
 * fetch_spark.c - `optipipe fetch spark-history`: downloads an
 * application's event logs from a Spark History Server
 * (/api/v1/applications/<id>/[<attempt>/]logs, a zip) and unpacks them
 * with libzip into a folder that `optipipe analyze DIR` reads (single log
 * files and rolling eventlog_v2_* folders alike).
 *
 * The archive comes from the network, so every entry is checked before a
 * byte is written: relative names only, no "." / ".." components, regular
 * files and folders only (no symlinks), nothing written through an
 * existing symlink, and caps on the entry count, the unpacked bytes and
 * the compression ratio (per entry and for the whole archive, so that a
 * small download cannot fill the disk). The download and the entry being
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

#define FS_JSON_MAX (16ull << 20)
#define FS_DEFAULT_MAX (8ull << 30)   /* the zip as downloaded */
#define FS_UNPACK_MAX (64ull << 30)   /* bytes unpacked in total */
#define FS_MAX_ENTRIES 100000
/* Unpacked bytes per compressed byte. Real Spark logs deflate to 5:1 -
 * 29:1 (measured on /work/shared/real/spark: plain JSON logs at level 9;
 * already compressed .zstd/.gz logs are stored about 1:1), so 100:1 is
 * over three times the worst real one, far below deflate's ~1000:1. */
#define FS_RATIO_MAX 100
#define FS_RATIO_FLOOR (1ull << 20) /* always allowed per entry and in all */
#define FS_NAME_MAX 1024
#define FS_PATH_MAX 4096
#define FS_CHUNK 65536

typedef struct fs {
    const fetch_opts *o;
    http_client *http;
    char *base;
    const char *dir;
    uint64_t unpacked, zip_bytes;
    size_t files, refused;
    int full; /* the archive's cap is reached: the rest is not unpacked */
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

    snprintf(path, sizeof path, "/api/v1/applications/%s", s->o->app);
    op_error_clear(&why);
    if (get_json(s, path, &app, &status, &why))
        return op_error_set(err, FETCH_ENOTHING, "cannot fetch from %s: %s",
                            s->base, why.msg);
    if (status == 404)
        rc = op_error_set(err, FETCH_ENOTHING,
                          "application %s not found on %s (GET %s: HTTP 404)",
                          s->o->app, s->base, path);
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
    else if (s->o->attempt && !has_attempt(app, s->o->attempt))
        rc = op_error_set(err, FETCH_ENOTHING,
                          "application %s has no attempt '%s'", s->o->app,
                          s->o->attempt);
    cJSON_Delete(app);
    return rc;
}

/* --- unpacking ------------------------------------------------------------- */

/* A relative name of plain components ("a/b/c", "a/" for a folder). */
static int name_ok(const char *name)
{
    size_t n = strlen(name), i, comp = 0;

    if (n == 0 || n > FS_NAME_MAX || name[0] == '/')
        return 0;
    for (i = 0; i <= n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c == '/' || c == '\0') {
            const char *start = name + i - comp;
            if ((comp == 0 && !(c == '\0' && i == n && i > 0 &&
                                name[i - 1] == '/')) ||
                (comp == 1 && start[0] == '.') ||
                (comp == 2 && start[0] == '.' && start[1] == '.') ||
                comp > 255)
                return 0;
            comp = 0;
            continue;
        }
        if (c < 0x20 || c == 0x7f || c == '\\')
            return 0;
        comp++;
    }
    return 1;
}

/* Creates the folders of rel (up to its last '/') under s->dir, refusing
 * to pass through anything that is not a real folder. */
static int make_parents(const fs *s, const char *rel, char *why, size_t n)
{
    char path[FS_PATH_MAX];
    size_t base = strlen(s->dir), i;
    struct stat st;
    int w = snprintf(path, sizeof path, "%s/%s", s->dir, rel);

    if (w < 0 || (size_t)w >= sizeof path) {
        snprintf(why, n, "the path is too long");
        return -1;
    }
    for (i = base + 1; path[i]; i++) {
        if (path[i] != '/')
            continue;
        path[i] = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            snprintf(why, n, "cannot create a folder: %s", strerror(errno));
            return -1;
        }
        if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
            snprintf(why, n, "a part of the path is not a folder");
            return -1;
        }
        path[i] = '/';
    }
    return 0;
}

static int write_all(int fd, const char *buf, size_t n)
{
    size_t off = 0;

    while (off < n) {
        ssize_t w = write(fd, buf + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

/* What ratio x compressed allows, never less than the floor. */
static uint64_t ratio_cap(uint64_t compressed)
{
    if (compressed > UINT64_MAX / FS_RATIO_MAX)
        return UINT64_MAX;
    return compressed * FS_RATIO_MAX > FS_RATIO_FLOOR
               ? compressed * FS_RATIO_MAX
               : FS_RATIO_FLOOR;
}

/* *cap: the bytes the entry may unpack to (its declared size, within the
 * ratio). Returns -1 with why when it claims more than the ratio allows. */
static int entry_cap(const zip_stat_t *st, uint64_t *cap, char *why,
                     size_t n)
{
    uint64_t comp = (st->valid & ZIP_STAT_COMP_SIZE) ? st->comp_size : 0;

    *cap = ratio_cap(comp);
    if (!(st->valid & ZIP_STAT_SIZE))
        return 0;
    if (st->size > *cap) {
        snprintf(why, n, "it claims %llu bytes from %llu compressed, more "
                 "than the compression ratio cap of %d:1",
                 (unsigned long long)st->size, (unsigned long long)comp,
                 FS_RATIO_MAX);
        return -1;
    }
    *cap = st->size;
    return 0;
}

/* Whether got more bytes fit the entry's cap (ecap, with done so far)
 * and the archive's; why says which cap they pass. */
static int fits(fs *s, uint64_t got, uint64_t done, uint64_t ecap, char *why,
                size_t n)
{
    uint64_t total = ratio_cap(s->zip_bytes);

    if (total > FS_UNPACK_MAX)
        total = FS_UNPACK_MAX;
    if (got > ecap - done) {
        snprintf(why, n, "it unpacks to more than its %llu bytes (declared "
                 "size or compression ratio cap of %d:1)",
                 (unsigned long long)ecap, FS_RATIO_MAX);
        return 0;
    }
    if (got > total - s->unpacked) {
        s->full = 1;
        snprintf(why, n, "unpacking would pass the cap of %llu bytes for "
                 "the archive (%d:1 of its %llu bytes, at most %llu)",
                 (unsigned long long)total, FS_RATIO_MAX,
                 (unsigned long long)s->zip_bytes,
                 (unsigned long long)FS_UNPACK_MAX);
        return 0;
    }
    return 1;
}

static int copy_entry(fs *s, zip_t *z, const zip_stat_t *st, const char *rel,
                      char *why, size_t n)
{
    char path[FS_PATH_MAX], *buf = NULL;
    zip_file_t *zf = NULL;
    int fd = -1, rc = -1, slot;
    zip_int64_t got;
    uint64_t ecap = 0, done = 0;
    int w = snprintf(path, sizeof path, "%s/%s", s->dir, rel);

    if (entry_cap(st, &ecap, why, n))
        return -1;
    if (w < 0 || (size_t)w >= sizeof path) {
        snprintf(why, n, "the path is too long");
        return -1;
    }
    /* a half-written entry is as bad as the download: a signal removes it */
    slot = fetch_temp_add(path);
    if (slot < 0) {
        snprintf(why, n, "cannot register the file: %s", strerror(errno));
        return -1;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
              0644);
    if (fd < 0) {
        snprintf(why, n, "cannot create the file: %s", strerror(errno));
        fetch_temp_drop(slot, 0);
        return -1;
    }
    zf = zip_fopen_index(z, st->index, 0);
    buf = malloc(FS_CHUNK);
    if (!zf || !buf) {
        snprintf(why, n, "cannot read the entry: %s",
                 zf ? "out of memory" : zip_strerror(z));
        goto out;
    }
    while ((got = zip_fread(zf, buf, FS_CHUNK)) > 0) {
        if (!fits(s, (uint64_t)got, done, ecap, why, n))
            goto out;
        done += (uint64_t)got;
        s->unpacked += (uint64_t)got;
        if (write_all(fd, buf, (size_t)got)) {
            snprintf(why, n, "cannot write: %s", strerror(errno));
            goto out;
        }
    }
    if (got < 0) {
        snprintf(why, n, "the entry is damaged: %s", zip_file_strerror(zf));
        goto out;
    }
    rc = 0;
out:
    free(buf);
    if (zf)
        zip_fclose(zf);
    if (close(fd) != 0 && rc == 0) {
        snprintf(why, n, "cannot write: %s", strerror(errno));
        rc = -1;
    }
    fetch_temp_drop(slot, rc != 0);
    return rc;
}

/* Symlinks, devices and the like carry their type in the Unix mode of the
 * external attributes; only files and folders are unpacked. */
static int regular_or_dir(zip_t *z, zip_uint64_t i)
{
    zip_uint8_t opsys = 0;
    zip_uint32_t attr = 0;
    unsigned type;

    if (zip_file_get_external_attributes(z, i, 0, &opsys, &attr) != 0 ||
        opsys != ZIP_OPSYS_UNIX)
        return 1;
    type = (attr >> 16) & S_IFMT;
    return type == 0 || type == S_IFREG || type == S_IFDIR;
}

static void refuse(fs *s, const char *name, const char *why)
{
    s->refused++;
    if (s->refused == 1)
        report_term_copy(s->first_refused, sizeof s->first_refused, name);
    say(s, "archive entry '%s' skipped: %s", name, why);
}

static void unpack_entry(fs *s, zip_t *z, zip_uint64_t i)
{
    char why[200];
    const char *name;
    zip_stat_t st;
    size_t n;

    zip_stat_init(&st);
    if (zip_stat_index(z, i, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME)) {
        refuse(s, "?", zip_strerror(z));
        return;
    }
    name = st.name;
    if (!name_ok(name)) {
        refuse(s, name, "not a plain relative path");
        return;
    }
    if (!regular_or_dir(z, i)) {
        refuse(s, name, "not a regular file (a symlink?)");
        return;
    }
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
        st.encryption_method != ZIP_EM_NONE) {
        refuse(s, name, "encrypted");
        return;
    }
    n = strlen(name);
    if (make_parents(s, name, why, sizeof why)) {
        refuse(s, name, why);
        return;
    }
    if (name[n - 1] == '/')
        return; /* a folder: made above */
    if (copy_entry(s, z, &st, name, why, sizeof why)) {
        refuse(s, name, why);
        return;
    }
    s->files++;
}

static int unpack(fs *s, const char *zip_path, op_error *err)
{
    int zerr = 0;
    zip_t *z = zip_open(zip_path, ZIP_RDONLY | ZIP_CHECKCONS, &zerr);
    zip_int64_t n, i;

    if (!z) {
        zip_error_t ze;
        int rc;
        zip_error_init_with_code(&ze, zerr);
        rc = op_error_set(err, FETCH_ENOTHING,
                          "the logs of %s from %s are not a readable zip "
                          "archive: %s",
                          s->o->app, s->base, zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return rc;
    }
    n = zip_get_num_entries(z, 0);
    if (n < 0 || n > FS_MAX_ENTRIES) {
        zip_discard(z);
        return op_error_set(err, FETCH_ENOTHING,
                            "the logs archive of %s has more than %d entries",
                            s->o->app, FS_MAX_ENTRIES);
    }
    for (i = 0; i < n && !s->full; i++)
        unpack_entry(s, z, (zip_uint64_t)i);
    if (i < n) {
        char left[80];
        snprintf(left, sizeof left, "%lld", (long long)(n - i));
        s->refused += (size_t)(n - i);
        say(s, "%s further archive entries not unpacked: the cap%s for the "
            "archive is reached", left, "");
    }
    zip_discard(z);
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

    if (s->o->attempt)
        snprintf(path, sizeof path, "/api/v1/applications/%s/%s/logs",
                 s->o->app, s->o->attempt);
    else
        snprintf(path, sizeof path, "/api/v1/applications/%s/logs",
                 s->o->app);
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
                            s->o->app, s->base, path);
    if (status < 200 || status > 299)
        return op_error_set(err, FETCH_ENOTHING, "GET %s: HTTP %ld %s", url,
                            status, http_reason(status));
    return 0;
}

int fetch_spark_history(const char *url, const fetch_opts *o,
                        const char *dir, op_error *err)
{
    fs s;
    char tmp[FS_PATH_MAX];
    int rc, fd = -1, slot = -1;

    memset(&s, 0, sizeof s);
    s.o = o;
    s.dir = dir;
    tmp[0] = '\0';
    if (!app_id_ok(o->app))
        return op_error_set(err, FETCH_EUSAGE,
                            "--app: '%.80s' is not a Spark application id",
                            o->app ? o->app : "");
    if (o->attempt && !app_id_ok(o->attempt))
        return op_error_set(err, FETCH_EUSAGE,
                            "--attempt: '%.80s' is not an attempt id",
                            o->attempt);
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
    if (s.files == 0)
        rc = op_error_set(err, FETCH_ENOTHING,
                          "the logs archive of %s held no usable file%s%s",
                          o->app, s.refused ? "; first refused: " : "",
                          s.first_refused);
    else if (s.refused)
        rc = op_error_set(err, FETCH_INCOMPLETE,
                          "incomplete: %zu archive entries skipped (first: "
                          "%s); %zu file(s) written to %s",
                          s.refused, s.first_refused, s.files, dir);
    else
        rc = FETCH_OK;
    if (s.files && o->diag && !o->quiet)
        fprintf(o->diag, "optipipe: fetch: %zu file%s (%llu bytes) unpacked "
                "into %s\n", s.files, s.files == 1 ? "" : "s",
                (unsigned long long)s.unpacked, dir);
out:
    if (fd >= 0)
        close(fd);
    fetch_temp_drop(slot, 1);
    http_client_free(s.http);
    free(s.base);
    return rc;
}
