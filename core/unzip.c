/*
 * unzip.c - unpacking a zip archive from outside into a folder (unzip.h):
 * what `fetch spark-history` downloads and what `analyze x.zip` reads.
 *
 * The archive may come from anywhere, so every member is checked before a
 * byte is written: relative names only, no "." / ".." components, regular
 * files and folders only (no symlinks), nothing written through an
 * existing symlink, and caps on the member count, the unpacked bytes and
 * the compression ratio (per member and for the whole archive, so that a
 * small archive cannot fill the disk). Real Spark logs deflate to 5:1 -
 * 29:1 (measured on real logs: plain JSON logs at level 9; already
 * compressed .zstd/.gz logs are stored about 1:1), so UNZIP_RATIO_MAX 100:1
 * is over three times the worst real one, far below deflate's ~1000:1.
 *
 * The archive is opened without libzip's ZIP_CHECKCONS: that check refuses
 * what unzip(1) reads, e.g. macOS Finder's archives (a data-descriptor
 * member whose local header carries the CRC but zero sizes: "local and
 * central headers do not match"). Nothing here trusts the local header:
 * sizes come from the central directory, and the bytes inflated are
 * counted against the caps as they come. Finder's metadata members
 * (__MACOSX/..., AppleDouble "._name" files) are not unpacked.
 */
#include "unzip.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zip.h>

#define UZ_PATH_MAX 4096
#define UZ_CHUNK 65536

typedef struct uz {
    const unzip_opts *o;
    const char *dir;
    unzip_result *res;
    int full; /* the archive's cap is reached: the rest is not unpacked */
} uz;


/* A relative name of plain components ("a/b/c", "a/" for a folder). */
static int name_ok(const char *name)
{
    size_t n = strlen(name), i, comp = 0;

    if (n == 0 || n > UNZIP_NAME_MAX || name[0] == '/')
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
static int make_parents(const uz *s, const char *rel, char *why, size_t n)
{
    char path[UZ_PATH_MAX];
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

/* What ratio x compressed allows, never less than the floor. */
static uint64_t ratio_cap(uint64_t compressed)
{
    if (compressed > UINT64_MAX / UNZIP_RATIO_MAX)
        return UINT64_MAX;
    return compressed * UNZIP_RATIO_MAX > UNZIP_RATIO_FLOOR
               ? compressed * UNZIP_RATIO_MAX
               : UNZIP_RATIO_FLOOR;
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
                 UNZIP_RATIO_MAX);
        return -1;
    }
    *cap = st->size;
    return 0;
}

/* Whether got more bytes fit the entry's cap (ecap, with done so far)
 * and the archive's; why says which cap they pass. */
static int fits(uz *s, uint64_t got, uint64_t done, uint64_t ecap, char *why,
                size_t n)
{
    uint64_t total = ratio_cap(s->o->archive_bytes);

    if (total > UNZIP_TOTAL_MAX)
        total = UNZIP_TOTAL_MAX;
    if (got > ecap - done) {
        snprintf(why, n, "it unpacks to more than its %llu bytes (declared "
                 "size or compression ratio cap of %d:1)",
                 (unsigned long long)ecap, UNZIP_RATIO_MAX);
        return 0;
    }
    if (got > total - s->res->unpacked) {
        s->full = 1;
        snprintf(why, n, "unpacking would pass the cap of %llu bytes for "
                 "the archive (%d:1 of its %llu bytes, at most %llu)",
                 (unsigned long long)total, UNZIP_RATIO_MAX,
                 (unsigned long long)s->o->archive_bytes,
                 (unsigned long long)UNZIP_TOTAL_MAX);
        return 0;
    }
    return 1;
}

static int copy_entry(uz *s, zip_t *z, const zip_stat_t *st, const char *rel,
                      char *why, size_t n)
{
    char path[UZ_PATH_MAX], *buf = NULL;
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
    /* a half-written member is as bad as a download: a signal removes it */
    slot = s->o->track ? s->o->track(path) : -1;
    if (s->o->track && slot < 0) {
        snprintf(why, n, "cannot register the file: %s", strerror(errno));
        return -1;
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
              0644);
    if (fd < 0) {
        snprintf(why, n, "cannot create the file: %s", strerror(errno));
        if (s->o->untrack)
            s->o->untrack(slot, 0);
        return -1;
    }
    zf = zip_fopen_index(z, st->index, 0);
    buf = malloc(UZ_CHUNK);
    if (!zf || !buf) {
        snprintf(why, n, "cannot read the entry: %s",
                 zf ? "out of memory" : zip_strerror(z));
        goto out;
    }
    while ((got = zip_fread(zf, buf, UZ_CHUNK)) > 0) {
        if (!fits(s, (uint64_t)got, done, ecap, why, n))
            goto out;
        done += (uint64_t)got;
        s->res->unpacked += (uint64_t)got;
        if (util_write_all(fd, buf, (size_t)got)) {
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
    if (s->o->untrack)
        s->o->untrack(slot, rc != 0);
    else if (rc != 0)
        unlink(path);
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

/* Whether name is macOS Finder metadata: under __MACOSX/, or an
 * AppleDouble "._name" (a resource fork, never a log). */
static int finder_metadata(const char *name)
{
    const char *base = strrchr(name, '/');

    base = base ? base + 1 : name;
    return strncmp(name, "__MACOSX/", 9) == 0 || strcmp(name, "__MACOSX") == 0 ||
           strncmp(base, "._", 2) == 0;
}

static void refuse(uz *s, const char *name, const char *why)
{
    s->res->refused++;
    if (s->o->refused)
        s->o->refused(s->o->ud, name, why);
}

static void unpack_entry(uz *s, zip_t *z, zip_uint64_t i)
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
    if (finder_metadata(name)) {
        s->res->skipped++;
        return;
    }
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
    s->res->files++;
}

int unzip_to_dir(const char *zip_path, const char *dir, const unzip_opts *o,
                 unzip_result *res, op_error *err)
{
    int zerr = 0;
    zip_t *z = zip_open(zip_path, ZIP_RDONLY, &zerr);
    zip_int64_t n, i;
    uz s;

    memset(res, 0, sizeof *res);
    if (!z) {
        zip_error_t ze;
        int rc;
        zip_error_init_with_code(&ze, zerr);
        rc = op_error_set(err, OP_EPARSE,
                          "%s: not a readable zip archive: %s", zip_path,
                          zip_error_strerror(&ze));
        zip_error_fini(&ze);
        return rc;
    }
    n = zip_get_num_entries(z, 0);
    if (n < 0 || n > UNZIP_MAX_MEMBERS) {
        zip_discard(z);
        return op_error_set(err, OP_ELIMIT,
                            "%s: a zip archive of more than %d members "
                            "(the cap); nothing unpacked",
                            zip_path, UNZIP_MAX_MEMBERS);
    }
    s.o = o;
    s.dir = dir;
    s.res = res;
    s.full = 0;
    for (i = 0; i < n && !s.full; i++)
        unpack_entry(&s, z, (zip_uint64_t)i);
    res->left = (size_t)(n - i);
    zip_discard(z);
    return OP_OK;
}

int unzip_is_zip(const char *path)
{
    unsigned char m[4];
    struct stat st;
    ssize_t got = 0;
    /* O_NONBLOCK and a regular file only: a FIFO must not block here */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

    if (fd < 0)
        return 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        got = read(fd, m, sizeof m);
    close(fd);
    return got == 4 && memcmp(m, "PK\3\4", 4) == 0;
}

size_t unzip_count(const char *path)
{
    zip_t *z = zip_open(path, ZIP_RDONLY, NULL);
    zip_int64_t n = z ? zip_get_num_entries(z, 0) : 0, i;
    size_t files = 0;

    for (i = 0; n <= UNZIP_MAX_MEMBERS && i < n; i++) {
        const char *name = zip_get_name(z, (zip_uint64_t)i, 0);
        if (name && *name && name[strlen(name) - 1] != '/' &&
            !finder_metadata(name))
            files++;
    }
    if (z)
        zip_discard(z);
    return files;
}
