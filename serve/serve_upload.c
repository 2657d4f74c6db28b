/*
 * serve_upload.c - receiving an upload onto disk, safely: a fresh
 * DATA/tmp/<random> folder (0700) per request, every file created inside
 * it through openat with O_EXCL|O_NOFOLLOW under a name made from the
 * client's (sanitized, never a path), bodies written through a buffer as
 * they arrive (never whole in memory), the limits checked before a byte
 * lands, and everything removed again when the request fails or the
 * client goes away. See serve/serve.h for the contract, docs/serve.md for
 * the limits.
 */
#include "serve.h"
#include "serve_multipart.h"
#include "util.h"

#include <optipipe/grow.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define UP_WBUF (64u * 1024) /* bytes written at once */
#define UP_EXT_MAX 32        /* a kept extension (".json.gz") */

enum { UP_INPUTS = 0, UP_RULES = 1 };

typedef enum part_kind {
    PK_NONE = 0,
    PK_FILE,
    PK_FIELD,
    PK_UNCHOSEN /* filename="": a browser's empty file input, unless bytes come */
} part_kind;

struct srv_stage {
    srv *s;
    srv_upload *up;
    size_t files_cap;
    int dirfd;        /* DATA/tmp/<random> */
    int subfd[2];     /* inputs/, rules/ (-1 until needed) */
    mp_parser *mp;    /* NULL: a raw body, one file */
    part_kind kind;
    int unchosen;     /* PK_UNCHOSEN: UP_INPUTS or UP_RULES */
    int fd;           /* the file being written */
    char *wbuf;
    size_t wlen;
    char *fval;       /* the text field being read */
    size_t flen;
    char fname[64];
    int failed;       /* an error was returned: nothing more is taken */
    op_error ferr;
};

/* ---- names --------------------------------------------------------------------- */

static char name_byte(char c)
{
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
        (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-')
        return c;
    return '_';
}

/* Where the kept extension of body[0..n) starts: the last two dotted
 * suffixes (".json.gz") when they are short, else the last one, else none
 * (n). A leading dot is not an extension (leading dots are gone anyway). */
static size_t ext_start(const char *body, size_t n)
{
    size_t i, last = n, prev = n;

    for (i = n; i-- > 1;)
        if (body[i] == '.') {
            if (last == n) {
                last = i;
            } else {
                prev = i;
                break;
            }
        }
    if (prev < n && n - prev <= UP_EXT_MAX)
        return prev;
    return last < n && n - last <= UP_EXT_MAX ? last : n;
}

/* The client's name as a plain file name (serve.h: srv_file.name): the
 * part after the last '/' or '\\', bytes outside [A-Za-z0-9._-] as '_',
 * no leading dots, at most SRV_NAME_MAX bytes with the extension kept,
 * "upload" when nothing is left; then ".N" when n > 0 (uniqueness). */
static void sanitize(const char *client, unsigned n, char out[SRV_NAME_MAX + 1])
{
    const char *base = client ? client : "", *p;
    char suffix[16] = "";
    size_t blen, ext, stem, o = 0, i;

    for (p = base; *p; p++)
        if (*p == '/' || *p == '\\')
            base = p + 1;
    while (*base == '.')
        base++;
    blen = strlen(base);
    if (n)
        snprintf(suffix, sizeof suffix, ".%u", n);
    if (!blen)
        base = "upload", blen = 6;
    ext = ext_start(base, blen);
    stem = ext;
    if (stem > SRV_NAME_MAX - (blen - ext) - strlen(suffix))
        stem = SRV_NAME_MAX - (blen - ext) - strlen(suffix);
    for (i = 0; i < stem; i++)
        out[o++] = name_byte(base[i]);
    for (i = ext; i < blen; i++)
        out[o++] = name_byte(base[i]);
    memcpy(out + o, suffix, strlen(suffix) + 1);
}

/* A message-safe copy of a client's string: printable ASCII, cut short. */
static const char *shown(const char *s, char buf[48])
{
    size_t i;

    for (i = 0; s[i] && i < 40; i++)
        buf[i] = s[i] > 0x20 && s[i] < 0x7f ? s[i] : '?';
    if (s[i])
        memcpy(buf + i, "...", 3), i += 3;
    buf[i] = '\0';
    return buf;
}

/* ---- files ----------------------------------------------------------------------- */

static srv_file *cur_file(srv_stage *st)
{
    return &st->up->files[st->up->nfiles - 1];
}

/* The file's place as messages name it: "inputs/NAME". */
static const char *rel_name(srv_stage *st, char *buf, size_t n)
{
    srv_file *f = cur_file(st);
    snprintf(buf, n, "%s/%s",
             strcmp(f->field, "rules") ? SRV_INPUTS : SRV_RULES, f->name);
    return buf;
}

static int flush(srv_stage *st, op_error *err)
{
    char rel[SRV_NAME_MAX + 16];
    int e;

    if (!st->wlen || !util_write_all(st->fd, st->wbuf, st->wlen)) {
        st->wlen = 0;
        return 0;
    }
    e = errno;
    return op_error_set(err, OP_EIO, "upload: cannot write %s: %s",
                        rel_name(st, rel, sizeof rel), strerror(e));
}

static int sub_dir(srv_stage *st, int which, op_error *err)
{
    const char *name = which == UP_RULES ? SRV_RULES : SRV_INPUTS;

    if (st->subfd[which] >= 0)
        return 0;
    if (mkdirat(st->dirfd, name, 0700) && errno != EEXIST)
        return op_error_set(err, OP_EIO, "upload: cannot create %s/%s: %s",
                            st->up->dir, name, strerror(errno));
    st->subfd[which] = openat(st->dirfd, name,
                              O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (st->subfd[which] < 0)
        return op_error_set(err, OP_EIO, "upload: cannot open %s/%s: %s",
                            st->up->dir, name, strerror(errno));
    return 0;
}

static int name_taken(const srv_upload *up, const char *name)
{
    size_t i;

    for (i = 0; i < up->nfiles; i++)
        if (!strcmp(up->files[i].name, name))
            return 1;
    return 0;
}

/* Starts the next file of field (UP_INPUTS for "file", UP_RULES for
 * "rules") under a sanitized, unique form of the client's name. */
static int file_begin(srv_stage *st, int which, const char *client,
                      op_error *err)
{
    srv_upload *up = st->up;
    srv_file *f;
    unsigned n = 0;
    int rc, w;

    if (up->nfiles >= st->s->o->max_files)
        return op_error_set(err, OP_ELIMIT, "upload: more than %u files in "
                            "one upload (--max-files)", st->s->o->max_files);
    if ((rc = sub_dir(st, which, err)) != 0)
        return rc;
    if (OP_GROW(up->files, st->files_cap, up->nfiles + 1, 8))
        return op_error_set(err, OP_ENOMEM, "upload: out of memory");
    f = &up->files[up->nfiles];
    memset(f, 0, sizeof *f);
    snprintf(f->field, sizeof f->field, "%s",
             which == UP_RULES ? "rules" : "file");
    do
        sanitize(client, n++, f->name);
    while (name_taken(up, f->name));
    w = snprintf(f->path, sizeof f->path, "%s/%s/%s", up->dir,
                 which == UP_RULES ? SRV_RULES : SRV_INPUTS, f->name);
    if (w < 0 || (size_t)w >= sizeof f->path)
        return op_error_set(err, OP_EIO, "upload: %s: path too long", up->dir);
    st->fd = openat(st->subfd[which], f->name,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (st->fd < 0)
        return op_error_set(err, OP_EIO, "upload: cannot create %s: %s",
                            f->path, strerror(errno));
    up->nfiles++;
    st->kind = PK_FILE;
    st->wlen = 0;
    return 0;
}

static int file_data(srv_stage *st, const char *buf, size_t n, op_error *err)
{
    uint64_t max = st->s->o->max_upload_bytes;
    int rc;

    if (n > max - st->up->bytes) /* bytes <= max always */
        return op_error_set(err, OP_ELIMIT, "upload: over %llu bytes of files "
                            "(--max-upload-bytes)", (unsigned long long)max);
    st->up->bytes += n;
    cur_file(st)->size += n;
    while (n) {
        size_t k = UP_WBUF - st->wlen < n ? UP_WBUF - st->wlen : n;

        memcpy(st->wbuf + st->wlen, buf, k);
        st->wlen += k;
        buf += k;
        n -= k;
        if (st->wlen == UP_WBUF && (rc = flush(st, err)) != 0)
            return rc;
    }
    return 0;
}

static int file_end(srv_stage *st, op_error *err)
{
    char rel[SRV_NAME_MAX + 16];
    int rc = flush(st, err), fd = st->fd;

    st->fd = -1;
    st->kind = PK_NONE;
    if (close(fd) && !rc)
        rc = op_error_set(err, OP_EIO, "upload: cannot write %s: %s",
                          rel_name(st, rel, sizeof rel), strerror(errno));
    return rc;
}

/* ---- text fields ----------------------------------------------------------------- */

static int field_begin(srv_stage *st, const char *name, op_error *err)
{
    char b[48];

    if (st->up->nfields >= SRV_FIELDS_MAX)
        return op_error_set(err, OP_ELIMIT, "upload: more than %d text fields",
                            SRV_FIELDS_MAX);
    if (strlen(name) >= sizeof st->fname)
        return op_error_set(err, OP_ELIMIT, "upload: the field name '%s' is "
                            "over %zu bytes", shown(name, b),
                            sizeof st->fname - 1);
    if (!st->fval && !(st->fval = malloc(SRV_FIELD_MAX + 1)))
        return op_error_set(err, OP_ENOMEM, "upload: out of memory");
    if (!st->up->field_name) {
        st->up->field_name = calloc(SRV_FIELDS_MAX, sizeof(char *));
        st->up->field_value = calloc(SRV_FIELDS_MAX, sizeof(char *));
        if (!st->up->field_name || !st->up->field_value)
            return op_error_set(err, OP_ENOMEM, "upload: out of memory");
    }
    snprintf(st->fname, sizeof st->fname, "%s", name);
    st->flen = 0;
    st->kind = PK_FIELD;
    return 0;
}

static int field_data(srv_stage *st, const char *buf, size_t n, op_error *err)
{
    char b[48];

    if (n > SRV_FIELD_MAX - st->flen)
        return op_error_set(err, OP_ELIMIT, "upload: the field '%s' is over "
                            "%u bytes", shown(st->fname, b), SRV_FIELD_MAX);
    if (memchr(buf, '\0', n))
        return op_error_set(err, OP_EPARSE, "upload: the field '%s' holds a "
                            "NUL byte", shown(st->fname, b));
    memcpy(st->fval + st->flen, buf, n);
    st->flen += n;
    return 0;
}

static int field_end(srv_stage *st, op_error *err)
{
    srv_upload *up = st->up;
    char *name = strdup(st->fname), *val = malloc(st->flen + 1);

    st->kind = PK_NONE;
    if (!name || !val) {
        free(name);
        free(val);
        return op_error_set(err, OP_ENOMEM, "upload: out of memory");
    }
    memcpy(val, st->fval, st->flen);
    val[st->flen] = '\0';
    up->field_name[up->nfields] = name;
    up->field_value[up->nfields++] = val;
    return 0;
}

/* ---- the multipart callbacks -------------------------------------------------------- */

static int on_begin(void *ud, const mp_part *p, op_error *err)
{
    srv_stage *st = ud;
    int which = !strcmp(p->name, "rules") ? UP_RULES : UP_INPUTS;
    char b[48];

    if (strcmp(p->name, "file") && strcmp(p->name, "rules")) {
        if (p->filename)
            return op_error_set(err, OP_EPARSE, "upload: the field '%s' "
                                "carries a file; files go in the fields 'file' "
                                "and 'rules'", shown(p->name, b));
        return field_begin(st, p->name, err);
    }
    if (p->filename && !*p->filename) {
        /* a form whose file input was left empty sends this: no file */
        st->kind = PK_UNCHOSEN;
        st->unchosen = which;
        return 0;
    }
    return file_begin(st, which, p->filename, err);
}

static int on_data(void *ud, const char *buf, size_t n, op_error *err)
{
    srv_stage *st = ud;
    int rc;

    if (st->kind == PK_UNCHOSEN && (rc = file_begin(st, st->unchosen, "", err)))
        return rc;
    return st->kind == PK_FILE ? file_data(st, buf, n, err)
                               : field_data(st, buf, n, err);
}

static int on_end(void *ud, op_error *err)
{
    srv_stage *st = ud;

    if (st->kind == PK_UNCHOSEN) {
        st->kind = PK_NONE;
        return 0;
    }
    return st->kind == PK_FILE ? file_end(st, err) : field_end(st, err);
}

static const mp_callbacks callbacks = {on_begin, on_data, on_end};

/* ---- the stage ------------------------------------------------------------------------ */

/* What content_type says: 1 multipart/form-data (boundary into b), 0 a raw
 * body, -1 an error (OP_EPARSE in err). */
static int body_kind(const char *ct, char b[MP_BOUNDARY_MAX + 1], op_error *err)
{
    static const char mp[] = "multipart/form-data";
    size_t n = sizeof mp - 1;

    while (ct && (*ct == ' ' || *ct == '\t'))
        ct++;
    if (!ct || strncasecmp(ct, "multipart/", 10))
        return 0;
    if (strncasecmp(ct, mp, n) || (ct[n] && !strchr("; \t", ct[n]))) {
        op_error_set(err, OP_EPARSE, "upload: a multipart body must be "
                     "multipart/form-data");
        return -1;
    }
    return mp_boundary(ct, b, err) ? -1 : 1;
}

/* A fresh DATA/tmp/<16 random hex>, 0700. */
static int make_dir(srv_stage *st, op_error *err)
{
    char tmp[4096 + 8];
    int tries;

    snprintf(tmp, sizeof tmp, "%s/tmp", st->s->data);
    if (mkdir(tmp, 0700) && errno != EEXIST)
        return op_error_set(err, OP_EIO, "upload: cannot create %s: %s", tmp,
                            strerror(errno));
    for (tries = 0; tries < 8; tries++) {
        unsigned char r[8];
        char dir[sizeof st->up->dir];
        int i, w;

        if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
            return op_error_set(err, OP_EIO, "upload: no random bytes: %s",
                                strerror(errno));
        w = snprintf(dir, sizeof dir, "%s/", tmp);
        for (i = 0; w > 0 && i < 8; i++)
            w += snprintf(dir + w, sizeof dir - (size_t)w, "%02x", r[i]);
        if (w < 0 || (size_t)w >= sizeof dir - 1)
            return op_error_set(err, OP_EIO, "upload: %s: path too long", tmp);
        if (mkdir(dir, 0700) == 0) {
            /* only now is it ours to remove */
            memcpy(st->up->dir, dir, (size_t)w + 1);
            break;
        }
        if (errno != EEXIST)
            return op_error_set(err, OP_EIO, "upload: cannot create %s: %s",
                                dir, strerror(errno));
    }
    if (tries == 8)
        return op_error_set(err, OP_EIO, "upload: no free name in %s", tmp);
    st->dirfd = open(st->up->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (st->dirfd < 0)
        return op_error_set(err, OP_EIO, "upload: cannot open %s: %s",
                            st->up->dir, strerror(errno));
    return sub_dir(st, UP_INPUTS, err);
}

/* Closes what the stage holds open and frees it (the upload stays). */
static void stage_close(srv_stage *st)
{
    int i;

    if (st->fd >= 0)
        close(st->fd);
    for (i = 0; i < 2; i++)
        if (st->subfd[i] >= 0)
            close(st->subfd[i]);
    if (st->dirfd >= 0)
        close(st->dirfd);
    mp_free(st->mp);
    free(st->wbuf);
    free(st->fval);
    free(st);
}

int stage_begin(srv *s, const char *content_type, const char *raw_name,
                srv_stage **out, op_error *err)
{
    char boundary[MP_BOUNDARY_MAX + 1];
    srv_stage *st;
    int kind = body_kind(content_type, boundary, err), rc;

    *out = NULL;
    if (kind < 0)
        return OP_EPARSE;
    if (!(st = calloc(1, sizeof *st)))
        return op_error_set(err, OP_ENOMEM, "upload: out of memory");
    st->s = s;
    st->fd = st->dirfd = st->subfd[0] = st->subfd[1] = -1;
    st->up = calloc(1, sizeof *st->up);
    st->wbuf = malloc(UP_WBUF);
    if (!st->up || !st->wbuf) {
        rc = op_error_set(err, OP_ENOMEM, "upload: out of memory");
        goto fail;
    }
    if ((rc = make_dir(st, err)) != 0)
        goto fail;
    rc = kind ? mp_new(boundary, &callbacks, st, &st->mp, err)
              : file_begin(st, UP_INPUTS, raw_name ? raw_name : "upload", err);
    if (rc)
        goto fail;
    *out = st;
    return 0;
fail:
    stage_abort(st);
    return rc;
}

int stage_feed(srv_stage *st, const char *data, size_t len, op_error *err)
{
    int rc;

    if (st->failed) {
        if (err)
            *err = st->ferr;
        return st->ferr.code;
    }
    rc = st->mp ? mp_feed(st->mp, data, len, err)
                : file_data(st, data, len, err);
    if (rc) {
        st->failed = 1;
        op_error_set(&st->ferr, rc, "%s", err ? err->msg : "upload refused");
    }
    return rc;
}

int stage_end(srv_stage *st, srv_upload **out, op_error *err)
{
    int rc;

    *out = NULL;
    if (st->failed) {
        if (err)
            *err = st->ferr;
        rc = st->ferr.code;
    } else if (st->mp) {
        rc = mp_finish(st->mp, err);
    } else {
        rc = file_end(st, err);
    }
    if (rc) {
        stage_abort(st);
        return rc;
    }
    *out = st->up;
    st->up = NULL;
    stage_close(st);
    return 0;
}

void stage_abort(srv_stage *st)
{
    srv_upload *up;

    if (!st)
        return;
    up = st->up;
    stage_close(st);
    srv_upload_free(up);
}

const char *srv_upload_field(const srv_upload *up, const char *name)
{
    size_t i;

    for (i = 0; up && i < up->nfields; i++)
        if (!strcmp(up->field_name[i], name))
            return up->field_value[i];
    return NULL;
}

void srv_upload_free(srv_upload *up)
{
    size_t i;

    if (!up)
        return;
    if (up->dir[0])
        (void)util_remove_tree(up->dir);
    for (i = 0; i < up->nfields; i++) {
        free(up->field_name[i]);
        free(up->field_value[i]);
    }
    free(up->field_name);
    free(up->field_value);
    free(up->files);
    free(up);
}
