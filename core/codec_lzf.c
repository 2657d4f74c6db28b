/*
 * codec_lzf.c - ning compress LZF chunks, which Spark uses for .lzf event
 * logs (docs/inputs.md, "Per codec"). No stream header; chunks of at most
 * 65535 decoded bytes:
 *   'Z' 'V' 0x00 len(BE16)              + len stored bytes
 *   'Z' 'V' 0x01 clen(BE16) ulen(BE16)  + clen LZF-compressed bytes
 * No checksum and no end mark: a file that stops between chunks ended
 * cleanly, one that stops inside a chunk is CODEC_TRUNC.
 */
#include "codec.h"

#include <stdlib.h>
#include <string.h>


enum { LZF_HDR, LZF_ULEN, LZF_STORED, LZF_PACKED };

typedef struct lzf_state {
    codec_units u;        /* unit_start: the current chunk's offset */
    int phase;
    size_t len;           /* stored bytes left, or compressed length */
    size_t ulen;          /* decoded length of a compressed chunk */
} lzf_state;

static int lzf_sniff(const unsigned char *h, size_t len)
{
    return len >= 3 && h[0] == 'Z' && h[1] == 'V' && (h[2] == 0 || h[2] == 1);
}

static int lzf_init(void **state, const char *name, op_error *err)
{
    lzf_state *st = calloc(1, sizeof *st);

    if (!st)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
    *state = st;
    return OP_OK;
}

static int lzf_bad(lzf_state *st, codec_io *io, op_error *err, const char *what)
{
    op_error_set(err, OP_EPARSE,
                 "%s: corrupt lzf stream: %s in the chunk at compressed byte "
                 "%llu",
                 io->name, what, (unsigned long long)st->u.unit_start);
    return CODEC_ERR;
}

/* The classic liblzf format: ctrl < 32 is a literal run of ctrl+1 bytes;
 * otherwise a back-reference of (ctrl>>5 [+ next byte when 7]) + 2 bytes at
 * distance ((ctrl & 31) << 8 | next byte) + 1. Returns 0 when in decodes to
 * exactly out_len bytes, -1 otherwise; never reads or writes out of bounds. */
static int lzf_decode(const unsigned char *in, size_t in_len,
                      unsigned char *out, size_t out_len)
{
    size_t ip = 0, op = 0;

    while (ip < in_len) {
        unsigned ctrl = in[ip++];
        if (ctrl < 32) {
            size_t run = (size_t)ctrl + 1;
            if (run > in_len - ip || run > out_len - op)
                return -1;
            memcpy(out + op, in + ip, run);
            ip += run;
            op += run;
        } else {
            size_t len = ctrl >> 5, dist, i;
            if (len == 7) {
                if (ip >= in_len)
                    return -1;
                len += in[ip++];
            }
            if (ip >= in_len)
                return -1;
            dist = ((size_t)(ctrl & 31) << 8 | in[ip++]) + 1;
            len += 2;
            if (dist > op || len > out_len - op)
                return -1;
            for (i = 0; i < len; i++, op++) /* may overlap: byte by byte */
                out[op] = out[op - dist];
        }
    }
    return op == out_len ? 0 : -1;
}

static int lzf_header(lzf_state *st, const unsigned char *h, codec_io *io,
                      op_error *err)
{
    if (h[0] != 'Z' || h[1] != 'V')
        return lzf_bad(st, io, err, "bad chunk signature (expected \"ZV\")");
    st->len = codec_be16(h + 3);
    if (h[2] == 0) {
        st->phase = st->len ? LZF_STORED : LZF_HDR;
        return CODEC_OK;
    }
    if (h[2] != 1)
        return lzf_bad(st, io, err, "unknown chunk type");
    if (st->len == 0)
        return lzf_bad(st, io, err, "empty compressed chunk");
    st->phase = LZF_ULEN;
    return CODEC_OK;
}

static int lzf_unpack(lzf_state *st, const unsigned char *p, codec_io *io,
                      op_error *err)
{
    int direct;
    unsigned char *dst = codec_units_dst(&st->u, io, st->ulen, &direct, err);

    if (!dst)
        return CODEC_ERR;
    if (lzf_decode(p, st->len, dst, st->ulen) != 0)
        return lzf_bad(st, io, err, "undecodable LZF data");
    codec_units_put(&st->u, io, st->ulen, direct);
    st->phase = LZF_HDR;
    return CODEC_OK;
}

/* Stored bytes go straight through, without gathering the chunk. */
static int lzf_stored(void *state, codec_io *io)
{
    lzf_state *st = state;
    size_t n = io->in_len - io->in_pos;

    if (st->phase != LZF_STORED)
        return 0;
    if (n > st->len)
        n = st->len;
    n = codec_emit(io, io->in + io->in_pos, n);
    io->in_pos += n;
    st->len -= n;
    if (st->len == 0)
        st->phase = LZF_HDR;
    return 1;
}

static int lzf_boundary(const void *state)
{
    return ((const lzf_state *)state)->phase == LZF_HDR;
}

static size_t lzf_need(const void *state)
{
    const lzf_state *st = state;

    return st->phase == LZF_HDR ? 5 : st->phase == LZF_ULEN ? 2 : st->len;
}

static int lzf_unit(void *state, const unsigned char *p, codec_io *io,
                    op_error *err)
{
    lzf_state *st = state;

    if (st->phase == LZF_HDR)
        return lzf_header(st, p, io, err);
    if (st->phase == LZF_PACKED)
        return lzf_unpack(st, p, io, err);
    st->ulen = codec_be16(p);
    st->phase = LZF_PACKED;
    return CODEC_OK;
}

static const codec_unit_ops lzf_ops = {lzf_boundary, lzf_need, lzf_unit, lzf_stored};

static int lzf_step(void *state, codec_io *io, op_error *err)
{
    return codec_units_step(&((lzf_state *)state)->u, &lzf_ops, state, io, err);
}

static void lzf_free(void *state)
{
    lzf_state *st = state;

    if (st) {
        codec_units_free(&st->u);
        free(st);
    }
}

const codec_impl codec_lzf = {
    .name = "lzf",
    .unit = "chunk",
    .sniff = lzf_sniff,
    .init = lzf_init,
    .step = lzf_step,
    .free = lzf_free,
};
