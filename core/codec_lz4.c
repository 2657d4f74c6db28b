/*
 * codec_lz4.c - two lz4 containers.
 *
 * "lz4": lz4-java's LZ4BlockOutputStream, which Spark uses for .lz4 event
 * logs (docs/inputs.md, "Per codec"). Every block has a 21-byte header:
 *   "LZ4Block" | token (method 0x10 raw / 0x20 lz4, low nibble level) |
 *   int32 LE compressed length | int32 LE original length |
 *   int32 LE XXH32(original, seed 0x9747B28C) & 0x0FFFFFFF
 * followed by the payload. A header with both lengths 0 is an end mark;
 * reading goes on after it (concatenated streams), as Spark's reader does.
 * A file that stops at a block boundary without an end mark is a normal
 * in-progress log; one that stops inside a block is CODEC_TRUNC.
 *
 * "lz4-frame": the standard LZ4 frame format of the lz4 CLI, via lz4frame.
 */
#include "codec.h"

#include <lz4.h>
#include <lz4frame.h>
#include <stdlib.h>
#include <string.h>

#define LZ4B_MAGIC "LZ4Block"
#define LZ4B_MAGIC_LEN 8
#define LZ4B_HEADER 21
#define LZ4B_METHOD_RAW 0x10
#define LZ4B_METHOD_LZ4 0x20
#define LZ4B_LEVEL_BASE 10
#define LZ4B_SEED 0x9747B28Cu
#define LZ4B_CHECK_MASK 0x0FFFFFFFu

enum { LZ4B_HDR, LZ4B_PAYLOAD };

typedef struct lz4b_state {
    codec_units u; /* the block being read; unit_start: its header's offset */
    int phase;
    unsigned method;
    uint32_t clen, olen, check;
} lz4b_state;

static int lz4b_sniff(const unsigned char *h, size_t len)
{
    return len >= LZ4B_MAGIC_LEN && memcmp(h, LZ4B_MAGIC, LZ4B_MAGIC_LEN) == 0;
}

static int lz4b_init(void **state, const char *name, op_error *err)
{
    lz4b_state *st = calloc(1, sizeof *st);

    if (!st)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", name);
    *state = st;
    return OP_OK;
}

static int lz4b_bad(lz4b_state *st, codec_io *io, op_error *err,
                    const char *what)
{
    op_error_set(err, OP_EPARSE,
                 "%s: corrupt lz4 stream (lz4-java block format): %s in the "
                 "block at compressed byte %llu",
                 io->name, what, (unsigned long long)st->u.unit_start);
    return CODEC_ERR;
}

/* Validates a header the way LZ4BlockInputStream.refill does, plus a
 * bound on the compressed length. */
static int lz4b_header(lz4b_state *st, const unsigned char *h, codec_io *io,
                       op_error *err)
{
    int32_t clen, olen;
    unsigned level;

    if (memcmp(h, LZ4B_MAGIC, LZ4B_MAGIC_LEN) != 0)
        return lz4b_bad(st, io, err, "bad block magic (expected \"LZ4Block\")");
    st->method = h[8] & 0xF0u;
    level = h[8] & 0x0Fu;
    clen = (int32_t)codec_le32(h + 9);
    olen = (int32_t)codec_le32(h + 13);
    st->check = codec_le32(h + 17);
    if (st->method != LZ4B_METHOD_RAW && st->method != LZ4B_METHOD_LZ4)
        return lz4b_bad(st, io, err, "unknown compression method");
    if (clen < 0 || olen < 0 || (uint32_t)olen > 1u << (LZ4B_LEVEL_BASE + level))
        return lz4b_bad(st, io, err, "block length out of range");
    if ((clen == 0) != (olen == 0))
        return lz4b_bad(st, io, err, "inconsistent block lengths");
    if (st->method == LZ4B_METHOD_RAW && clen != olen)
        return lz4b_bad(st, io, err, "stored block with differing lengths");
    if (clen > LZ4_COMPRESSBOUND(olen))
        return lz4b_bad(st, io, err, "compressed length out of range");
    if (olen == 0) {
        if (st->check != 0)
            return lz4b_bad(st, io, err, "end mark with a checksum");
        return CODEC_OK; /* end mark: another stream may follow */
    }
    st->clen = (uint32_t)clen;
    st->olen = (uint32_t)olen;
    st->phase = LZ4B_PAYLOAD;
    return CODEC_OK;
}

static int lz4b_decode(lz4b_state *st, const unsigned char *p, codec_io *io,
                       op_error *err)
{
    int direct;
    unsigned char *dst = codec_units_dst(&st->u, io, st->olen, &direct, err);
    uint32_t sum;

    if (!dst)
        return CODEC_ERR;
    if (st->method == LZ4B_METHOD_RAW) {
        memcpy(dst, p, st->olen);
    } else if (LZ4_decompress_safe((const char *)p, (char *)dst, (int)st->clen,
                                   (int)st->olen) != (int)st->olen) {
        return lz4b_bad(st, io, err, "undecodable LZ4 data");
    }
    sum = codec_xxh32(dst, st->olen, LZ4B_SEED) & LZ4B_CHECK_MASK;
    if (sum != st->check) {
        char what[96];
        snprintf(what, sizeof what,
                 "checksum mismatch (stored 0x%07x, computed 0x%07x)",
                 (unsigned)st->check, (unsigned)sum);
        return lz4b_bad(st, io, err, what);
    }
    codec_units_put(&st->u, io, st->olen, direct);
    st->phase = LZ4B_HDR;
    return CODEC_OK;
}

static int lz4b_boundary(const void *state)
{
    return ((const lz4b_state *)state)->phase == LZ4B_HDR;
}

static size_t lz4b_need(const void *state)
{
    const lz4b_state *st = state;

    return st->phase == LZ4B_HDR ? LZ4B_HEADER : st->clen;
}

static int lz4b_unit(void *state, const unsigned char *p, codec_io *io,
                     op_error *err)
{
    lz4b_state *st = state;

    return st->phase == LZ4B_HDR ? lz4b_header(st, p, io, err)
                                 : lz4b_decode(st, p, io, err);
}

static const codec_unit_ops lz4b_ops = {lz4b_boundary, lz4b_need, lz4b_unit, NULL};

static int lz4b_step(void *state, codec_io *io, op_error *err)
{
    return codec_units_step(&((lz4b_state *)state)->u, &lz4b_ops, state, io, err);
}

static void lz4b_free(void *state)
{
    lz4b_state *st = state;

    if (st) {
        codec_units_free(&st->u);
        free(st);
    }
}

const codec_impl codec_lz4_block = {
    .name = "lz4",
    .unit = "block",
    .sniff = lz4b_sniff,
    .init = lz4b_init,
    .step = lz4b_step,
    .free = lz4b_free,
};

/* --- LZ4 frame format ---------------------------------------------------- */

typedef struct lz4f_state {
    LZ4F_dctx *dctx;
    size_t hint;          /* last LZ4F_decompress return; 0 = between frames */
    uint64_t frame_start; /* compressed offset of the current frame */
} lz4f_state;

static int lz4f_sniff(const unsigned char *h, size_t len)
{
    return len >= 4 && codec_le32(h) == 0x184D2204u;
}

static int lz4f_init(void **state, const char *name, op_error *err)
{
    lz4f_state *st = calloc(1, sizeof *st);

    if (!st || LZ4F_isError(LZ4F_createDecompressionContext(&st->dctx,
                                                            LZ4F_VERSION))) {
        free(st);
        return op_error_set(err, OP_ENOMEM, "%s: out of memory (lz4)", name);
    }
    st->hint = 1;
    *state = st;
    return OP_OK;
}

static int lz4f_step(void *state, codec_io *io, op_error *err)
{
    lz4f_state *st = state;
    size_t src_size = io->in_len - io->in_pos;
    size_t dst_size = io->out_cap - io->out_pos;
    size_t room = dst_size;
    size_t r;

    if (src_size == 0 && st->hint == 0) /* between frames, as in zstd */
        return io->in_eof ? CODEC_END : CODEC_OK;
    r = LZ4F_decompress(st->dctx, io->out + io->out_pos, &dst_size,
                        io->in + io->in_pos, &src_size, NULL);
    io->in_pos += src_size;
    io->out_pos += dst_size;
    if (LZ4F_isError(r)) {
        op_error_set(err, OP_EPARSE,
                     "%s: corrupt lz4 frame starting at compressed byte %llu: %s",
                     io->name, (unsigned long long)st->frame_start,
                     LZ4F_getErrorName(r));
        return CODEC_ERR;
    }
    st->hint = r;
    if (r == 0) {
        st->frame_start = io->in_base + io->in_pos;
        return io->in_eof && io->in_pos == io->in_len ? CODEC_END : CODEC_OK;
    }
    if (io->in_eof && io->in_pos == io->in_len && dst_size < room)
        return CODEC_TRUNC;
    return CODEC_OK;
}

static void lz4f_free(void *state)
{
    lz4f_state *st = state;

    if (st) {
        LZ4F_freeDecompressionContext(st->dctx);
        free(st);
    }
}

const codec_impl codec_lz4_frame = {
    .name = "lz4-frame",
    .unit = "frame",
    .sniff = lz4f_sniff,
    .init = lz4f_init,
    .step = lz4f_step,
    .free = lz4f_free,
};
