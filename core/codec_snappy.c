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
    int phase;
    codec_gather g;
    uint64_t unit_start; /* compressed offset of the current header/chunk */
    uint32_t clen;
    unsigned char *dbuf; /* decoded chunk when it does not fit io->out */
    size_t dcap, dlen, dpos;
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
                 io->name, what, (unsigned long long)st->unit_start);
    return CODEC_ERR;
}

static size_t sn_need(const sn_state *st)
{
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
    direct = io->out_cap - io->out_pos >= olen;
    dst = io->out + io->out_pos;
    if (!direct) {
        if (st->dcap < olen) {
            unsigned char *nb = realloc(st->dbuf, olen);
            if (!nb) {
                op_error_set(err, OP_ENOMEM, "%s: out of memory", io->name);
                return CODEC_ERR;
            }
            st->dbuf = nb;
            st->dcap = olen;
        }
        dst = st->dbuf;
    }
    if (olen && snappy_uncompress((const char *)p, st->clen, (char *)dst,
                                  &olen) != SNAPPY_OK)
        return sn_bad(st, io, err, "undecodable chunk");
    if (direct) {
        io->out_pos += olen;
    } else {
        st->dlen = olen;
        st->dpos = 0;
    }
    st->phase = SN_LEN;
    return CODEC_OK;
}

static int sn_unit(sn_state *st, const unsigned char *p, codec_io *io,
                   op_error *err)
{
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

static int sn_step(void *state, codec_io *io, op_error *err)
{
    sn_state *st = state;
    const unsigned char *p;
    int r;

    for (;;) {
        if (st->dpos < st->dlen)
            st->dpos += codec_emit(io, st->dbuf + st->dpos, st->dlen - st->dpos);
        if (st->dpos < st->dlen || io->out_pos == io->out_cap)
            return CODEC_OK;
        if (st->g.have == 0) {
            if (io->in_pos == io->in_len) {
                if (!io->in_eof)
                    return CODEC_OK;
                return st->phase == SN_LEN ? CODEC_END : CODEC_TRUNC;
            }
            if (st->phase != SN_CHUNK && st->phase != SN_HEADER_REST)
                st->unit_start = io->in_base + io->in_pos;
        }
        r = codec_take(&st->g, io, sn_need(st), &p, err);
        if (r < 0)
            return CODEC_ERR;
        if (r == 0)
            return io->in_eof ? CODEC_TRUNC : CODEC_OK;
        r = sn_unit(st, p, io, err);
        codec_gather_reset(&st->g);
        if (r != CODEC_OK)
            return r;
    }
}

static void sn_free(void *state)
{
    sn_state *st = state;

    if (st) {
        codec_gather_free(&st->g);
        free(st->dbuf);
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
