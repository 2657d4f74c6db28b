/*
 * fuzz_multipart.c - libFuzzer target for the server's streaming
 * multipart/form-data parser (serve/serve_multipart.c). The input's first
 * line is the request's Content-Type (its boundary parameter), the rest
 * the body, fed in chunks of varying size chosen by the bytes themselves
 * so that delimiters fall across every kind of feed boundary. The
 * callbacks check the parser's promises: no empty data, begin and end in
 * pairs, a part name always given.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve_multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct fz {
    int in_part;
    uint64_t bytes;
} fz;

static int fz_begin(void *ud, const mp_part *p, op_error *err)
{
    fz *f = ud;

    (void)err;
    if (f->in_part || !p->name)
        abort();
    f->in_part = 1;
    return 0;
}

static int fz_data(void *ud, const char *buf, size_t len, op_error *err)
{
    fz *f = ud;

    (void)err;
    if (!f->in_part || !len || !buf)
        abort();
    f->bytes += len;
    return 0;
}

static int fz_end(void *ud, op_error *err)
{
    fz *f = ud;

    (void)err;
    if (!f->in_part)
        abort();
    f->in_part = 0;
    return 0;
}

static const mp_callbacks fz_cb = {fz_begin, fz_data, fz_end};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size < 256 ? size : 256);
    char ct[257], boundary[MP_BOUNDARY_MAX + 1];
    size_t at, step = 1;
    mp_parser *p = NULL;
    op_error err;
    fz f = {0, 0};
    int rc = 0;

    if (!nl)
        return 0;
    memcpy(ct, data, (size_t)(nl - data));
    ct[nl - data] = '\0';
    if (mp_boundary(ct, boundary, &err) || mp_new(boundary, &fz_cb, &f, &p, &err))
        return 0;
    for (at = (size_t)(nl - data) + 1; at < size && !rc; at += step) {
        step = 1 + (step * 31 + data[at]) % 97;
        if (step > size - at)
            step = size - at;
        rc = mp_feed(p, (const char *)data + at, step, &err);
    }
    if (!rc && mp_finish(p, &err) == 0 && f.in_part)
        abort(); /* a finished body has no open part */
    mp_free(p);
    return 0;
}
