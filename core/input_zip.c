/*
 * input_zip.c - zip archives given as inputs (a Databricks rollover folder,
 * a Spark rolling event-log folder or a dbt target/ zipped): unpacked with
 * core's checked unpacker (unzip.c) into a private temporary folder (mode
 * 0700, mkdtemp) and read as that folder, so every layout and every part
 * grouping works inside as outside. The folders live until the analysis
 * ends (parts are read at its freeze); paths in them are shown as
 * <zip>/<member> so that messages name the archive and the member.
 */
#include "input_zip.h"
#include "testhook.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define ZIP_TMP_MAX 4096

static int make_tmp(char **out, const char *zip, op_error *err)
{
    const char *base = getenv("TMPDIR");
    char *t;
    size_t n;

    if (!base || !*base)
        base = "/tmp";
    n = strlen(base) + sizeof "/optipipe-zip-XXXXXX";
    if (n > ZIP_TMP_MAX)
        return op_error_set(err, OP_EUSAGE, "%s: TMPDIR is too long", zip);
    t = malloc(n);
    if (!t)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", zip);
    snprintf(t, n, "%s/optipipe-zip-XXXXXX", base);
    if (!mkdtemp(t)) {
        int e = errno;
        free(t);
        return op_error_set(err, OP_EIO,
                            "%s: cannot create a temporary folder in %s to "
                            "unpack it: %s",
                            zip, base, strerror(e));
    }
    *out = t;
    return OP_OK;
}

int input_zips_add(input_zips *z, const char *path, unzip_opts *o,
                   const char **tmp, unzip_result *res, op_error *err)
{
    input_zip zp = {NULL, NULL};
    struct stat st;
    int rc;

    if (z->n == z->cap) {
        size_t ncap = z->cap ? z->cap * 2 : 4;
        input_zip *nv = realloc(z->v, ncap * sizeof *nv);
        if (!nv)
            return op_error_set(err, OP_ENOMEM, "%s: out of memory", path);
        z->v = nv;
        z->cap = ncap;
    }
    if (stat(path, &st) != 0)
        return op_error_set(err, OP_EIO, "%s: %s", path, strerror(errno));
    o->archive_bytes = (uint64_t)st.st_size;
    zp.name = strdup(path);
    if (!zp.name)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", path);
    if ((rc = make_tmp(&zp.tmp, path, err)) != 0) {
        free(zp.name);
        return rc;
    }
    z->v[z->n++] = zp; /* from here on removed by input_zips_free */
    *tmp = zp.tmp;
    if ((rc = unzip_to_dir(path, zp.tmp, o, res, err)) == 0)
        op_testhook("zip.unpacked");
    return rc;
}

/* The folder of z that path lies in (its length in *n), or NULL. */
static const input_zip *owner(const input_zips *z, const char *path,
                              size_t *n)
{
    size_t i;

    for (i = 0; i < z->n; i++) {
        *n = strlen(z->v[i].tmp);
        if (strncmp(path, z->v[i].tmp, *n) == 0 &&
            (path[*n] == '/' || path[*n] == '\0'))
            return &z->v[i];
    }
    return NULL;
}

int input_zips_owns(const input_zips *z, const char *path)
{
    size_t n;

    return owner(z, path, &n) != NULL;
}

char *input_zips_shown(const input_zips *z, const char *path)
{
    size_t n;
    const input_zip *zp = owner(z, path, &n);
    char *s;

    if (!zp)
        return strdup(path);
    s = malloc(strlen(zp->name) + strlen(path + n) + 1);
    if (s) {
        strcpy(s, zp->name);
        strcat(s, path + n);
    }
    return s;
}

void input_zips_rewrite(const input_zips *z, char *msg, size_t cap)
{
    size_t i;

    for (i = 0; i < z->n; i++) {
        const char *tmp = z->v[i].tmp, *name = z->v[i].name;
        size_t tn = strlen(tmp), nn = strlen(name);
        char *at = msg;
        while ((at = strstr(at, tmp)) != NULL) {
            size_t rest = strlen(at + tn), off = (size_t)(at - msg);
            if (off + nn + rest + 1 > cap) { /* cut the tail to fit */
                if (off + nn + 1 > cap)
                    return;
                rest = cap - 1 - off - nn;
                at[tn + rest] = '\0';
            }
            memmove(at + nn, at + tn, rest + 1);
            memcpy(at, name, nn);
            at += nn;
        }
    }
}

void input_zips_free(input_zips *z)
{
    size_t i;

    for (i = 0; i < z->n; i++) {
        util_remove_tree(z->v[i].tmp);
        free(z->v[i].tmp);
        free(z->v[i].name);
    }
    free(z->v);
    memset(z, 0, sizeof *z);
}
