/*
 * optipipe/common.h - what every part of the public SDK shares: the version,
 * the export macro, status codes and the error out-parameter.
 *
 * Everything here is header-only so that an external plugin never links
 * against the optipipe executable: it only needs these headers.
 */
#ifndef OPTIPIPE_COMMON_H
#define OPTIPIPE_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OP_VERSION "0.1.0"

#if defined(__GNUC__) || defined(__clang__)
#define OP_EXPORT __attribute__((visibility("default")))
#define OP_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define OP_EXPORT
#define OP_PRINTF(fmt, args)
#endif

/* Status codes. 0 is success; every failure is a positive code so that
 * "if (rc)" reads naturally. Append only: plugins built earlier compare
 * against these numbers. */
enum op_status {
    OP_OK = 0,
    OP_ENOMEM = 1,   /* an allocation failed */
    OP_EIO = 2,      /* reading or writing failed */
    OP_EPARSE = 3,   /* input is not what was expected */
    OP_ELIMIT = 4,   /* a configured cap was reached (line, size, depth) */
    OP_EUSAGE = 5,   /* caller passed something invalid */
    OP_EABI = 6,     /* plugin ABI mismatch */
    OP_ENOTFOUND = 7 /* a named thing does not exist */
};

#define OP_ERROR_MAX 512

/* An error out-parameter. The message is complete and readable on its own:
 * it names the file and the place (line, JSON path) where that is known. */
typedef struct op_error {
    int code;
    char msg[OP_ERROR_MAX];
} op_error;

/* Sets err (which may be NULL) and returns code, so callers can write
 * "return op_error_set(err, OP_EPARSE, "...")". Truncates silently. */
static inline int op_error_vset(op_error *err, int code, const char *fmt,
                                va_list ap)
{
    if (err) {
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    }
    return code;
}

static inline int op_error_set(op_error *err, int code, const char *fmt, ...)
    OP_PRINTF(3, 4);

static inline int op_error_set(op_error *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    op_error_vset(err, code, fmt, ap);
    va_end(ap);
    return code;
}

static inline void op_error_clear(op_error *err)
{
    if (err) {
        err->code = OP_OK;
        err->msg[0] = '\0';
    }
}

#endif
