/*
 * codec_snappy.c - snappy-java's SnappyOutputStream, which Spark uses for
 * .snappy event logs (docs/inputs.md, "Per codec"; NOT the sNaPpY framing
 * format). A 16-byte header
 *   82 53 4E 41 50 50 59 00 | int32 BE version | int32 BE compatible version
 * is followed by chunks "int32 BE length + one raw snappy block". A length
 * equal to the first four magic bytes starts a concatenated stream (its
 * remaining 12 header bytes follow). No checksum, no end mark: a file that
 * stops between chunks ended cleanly, one that stops inside a chunk is
 * CODEC_TRUNC.
 */
#include "codec.h"

#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>

#define SN_MAGIC "\x82SNAPPY\0"
#define SN_MAGIC_LEN 8
#define SN_HEADER 16
#define SN_MAGIC_HEAD 0x82534E41u /* the magic's first four bytes, BE */
/* A snappy copy of 64 bytes costs 3 input bytes, so no valid chunk
 * expands more than ~21x: a larger claimed size is rejected before any
 * memory is set aside for it. */
#define SN_MAX_RATIO 22

enum { SN_HEADER_FULL, SN_HEADER_REST, SN_LEN, SN_CHUNK };

typedef struct sn_state {
    codec_units u; /* unit_start: the current header's or length's offset */
    int phase;
    uint32_t clen;
} sn_state;

static int sn_sniff(const unsigned char *h, size_t len)
{
    return len >= SN_MAGIC_LEN && memcmp(h, SN_MAGIC, SN_MAGIC_LEN) == 0;
}

static int sn_init(void **state, const char *name, op_error *err)
{
    sn_state *st = calloc(1, sizeof *st);

    if (!st)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
    st->phase = SN_HEADER_FULL;
    *state = st;
    return OP_OK;
}

static int sn_bad(sn_state *st, codec_io *io, op_error *err, const char *what)
{
    op_error_set(err, OP_EPARSE,
                 "%s: corrupt snappy stream (snappy-java format): %s at "
                 "compressed byte %llu",
                 io->name, what, (unsigned long long)st->u.unit_start);
    return CODEC_ERR;
}

static size_t sn_need(const void *state)
{
    const sn_state *st = state;

    switch (st->phase) {
    case SN_HEADER_FULL:
        return SN_HEADER;
    case SN_HEADER_REST:
        return SN_HEADER - 4;
    case SN_LEN:
        return 4;
    default:
        return st->clen;
    }
}

static int sn_length(sn_state *st, const unsigned char *p, codec_io *io,
                     op_error *err)
{
    uint32_t len = codec_be32(p);

    if (len == SN_MAGIC_HEAD) {
        st->phase = SN_HEADER_REST;
        return CODEC_OK;
    }
    if (len > CODEC_MAX_BLOCK)
        return sn_bad(st, io, err, "chunk length out of range");
    st->clen = len;
    /* An empty chunk carries nothing; snappy-java never writes one. */
    st->phase = len ? SN_CHUNK : SN_LEN;
    return CODEC_OK;
}

static int sn_decode(sn_state *st, const unsigned char *p, codec_io *io,
                     op_error *err)
{
    size_t olen;
    unsigned char *dst;
    int direct;

    if (snappy_uncompressed_length((const char *)p, st->clen, &olen) !=
            SNAPPY_OK ||
        olen > CODEC_MAX_BLOCK || olen > (size_t)st->clen * SN_MAX_RATIO + 64)
        return sn_bad(st, io, err, "bad chunk length prefix");
    if (!(dst = codec_units_dst(&st->u, io, olen, &direct, err)))
        return CODEC_ERR;
    if (olen && snappy_uncompress((const char *)p, st->clen, (char *)dst,
                                  &olen) != SNAPPY_OK)
        return sn_bad(st, io, err, "undecodable chunk");
    codec_units_put(&st->u, io, olen, direct);
    st->phase = SN_LEN;
    return CODEC_OK;
}

static int sn_unit(void *state, const unsigned char *p, codec_io *io,
                   op_error *err)
{
    sn_state *st = state;

    switch (st->phase) {
    case SN_HEADER_FULL:
        if (memcmp(p, SN_MAGIC, SN_MAGIC_LEN) != 0)
            return sn_bad(st, io, err, "bad stream header");
        st->phase = SN_LEN;
        return CODEC_OK;
    case SN_HEADER_REST:
        if (memcmp(p, &SN_MAGIC[4], SN_MAGIC_LEN - 4) != 0)
            return sn_bad(st, io, err, "bad concatenated stream header");
        st->phase = SN_LEN;
        return CODEC_OK;
    case SN_LEN:
        return sn_length(st, p, io, err);
    default:
        return sn_decode(st, p, io, err);
    }
}

/* Between chunks: the stream may end, and (for messages) a unit starts.
 * The header at the start is at offset 0 (unit_start's first value). */
static int sn_boundary(const void *state)
{
    return ((const sn_state *)state)->phase == SN_LEN;
}

static const codec_unit_ops sn_ops = {sn_boundary, sn_need, sn_unit, NULL};

static int sn_step(void *state, codec_io *io, op_error *err)
{
    return codec_units_step(&((sn_state *)state)->u, &sn_ops, state, io, err);
}

static void sn_free(void *state)
{
    sn_state *st = state;

    if (st) {
        codec_units_free(&st->u);
        free(st);
    }
}

const codec_impl codec_snappy = {
    .name = "snappy",
    .unit = "chunk",
    .sniff = sn_sniff,
    .init = sn_init,
    .step = sn_step,
    .free = sn_free,
};
