/*
 * input_zip.h - zip archives given as inputs (input_zip.c): each unpacked
 * by unzip.c into a private temporary folder, read as that folder, and its
 * paths shown as <zip>/<member>.
 */
#ifndef OP_CORE_INPUT_ZIP_H
#define OP_CORE_INPUT_ZIP_H

#include <stddef.h>

#include "unzip.h"

typedef struct input_zip {
    char *tmp;  /* the private folder it was unpacked into */
    char *name; /* the archive's path as given */
} input_zip;

typedef struct input_zips {
    input_zip *v;
    size_t n, cap;
} input_zips; /* zero-initialized: empty */

/* Unpacks the archive at path (o: its refusals; o->archive_bytes is set
 * here) into a new private folder under $TMPDIR (or /tmp), kept in z until
 * input_zips_free. Returns 0 with *tmp (z's) and *res, or an op_status with
 * err (naming path). */
int input_zips_add(input_zips *z, const char *path, unzip_opts *o,
                   const char **tmp, unzip_result *res, op_error *err);

/* Whether path lies in a folder of z. */
int input_zips_owns(const input_zips *z, const char *path);

/* How path is shown: <zip>/<member> for a path in a folder of z (the zip
 * itself for the folder), else path; malloc'd, NULL on no memory. */
char *input_zips_shown(const input_zips *z, const char *path);

/* Rewrites, in msg (cap bytes, NUL-terminated), every path in a folder of z
 * as input_zips_shown does (cut to fit). */
void input_zips_rewrite(const input_zips *z, char *msg, size_t cap);

/* Removes every folder of z and frees z's memory. */
void input_zips_free(input_zips *z);

#endif
