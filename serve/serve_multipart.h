/*
 * serve_multipart.h - a push-style streaming multipart/form-data parser
 * (RFC 7578 over RFC 2046) for serve_upload.c: bytes come in whatever
 * pieces the network delivers, part bodies leave in pieces through
 * callbacks, and nothing but one part's header block (MP_HEADER_MAX) is
 * ever held. No HTTP library is involved, so the fuzzer drives it alone.
 *
 * Line ends are CRLF only, as RFC 2046 requires and every browser, curl
 * and Python client sends: a bare LF in a boundary line or a header block
 * is an error that says so (a body with LF line ends therefore fails at
 * its first boundary line, not silently).
 */
#ifndef OP_SERVE_SERVE_MULTIPART_H
#define OP_SERVE_SERVE_MULTIPART_H

#include <stddef.h>
#include <stdint.h>

#include <optipipe/common.h>

#define MP_BOUNDARY_MAX 70         /* RFC 2046 */
#define MP_HEADER_MAX (8u * 1024)  /* one part's header block */
#define MP_HEADER_LINES 16         /* header lines of one part */
#define MP_PREAMBLE_MAX (64u * 1024)  /* before the first boundary */
#define MP_EPILOGUE_MAX (64u * 1024)  /* after the last one */
#define MP_PADDING_MAX 256         /* blanks after a boundary */

/* A part's headers, decoded. The strings live in the parser and are valid
 * during the begin callback only. */
typedef struct mp_part {
    const char *name;         /* Content-Disposition name (never NULL) */
    const char *filename;     /* filename (filename* wins); NULL: none */
    const char *content_type; /* NULL: none sent (text/plain) */
    uint64_t offset;          /* byte of the body where the part starts */
} mp_part;

/* Each returns 0, or an op_status with err set: the parser stops and
 * mp_feed returns that status (the message unchanged). */
typedef struct mp_callbacks {
    int (*begin)(void *ud, const mp_part *p, op_error *err);
    int (*data)(void *ud, const char *buf, size_t len, op_error *err);
    int (*end)(void *ud, op_error *err);
} mp_callbacks;

typedef struct mp_parser mp_parser;

/* The boundary parameter of a Content-Type (quoted or not; 1..70 of
 * RFC 2046's characters) into out. 0, or OP_EPARSE naming the problem. */
int mp_boundary(const char *content_type, char out[MP_BOUNDARY_MAX + 1],
                op_error *err);

/* A parser of a body with this boundary (as mp_boundary gives it). cb
 * and ud are borrowed for the parser's life. 0 with *out (mp_free it),
 * OP_EUSAGE on a bad boundary, OP_ENOMEM. */
int mp_new(const char *boundary, const mp_callbacks *cb, void *ud,
           mp_parser **out, op_error *err);
/* Parses the next len bytes. OP_EPARSE "multipart: byte N: ..." (N counts
 * from 0 at the body's first byte), OP_ELIMIT past a limit above, or a
 * callback's status. After an error every call returns it again. */
int mp_feed(mp_parser *p, const char *data, size_t len, op_error *err);
/* The body ended: 0 after the final boundary, else OP_EPARSE (cut). */
int mp_finish(mp_parser *p, op_error *err);
void mp_free(mp_parser *p);

#endif
