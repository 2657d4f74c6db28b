/*
 * codec_zstd.c - zstd (RFC 8878) through ZSTD_decompressStream. Spark
 * closes a frame on every flush, so an event log is many concatenated
 * frames; an in-progress log ends inside the last one, which is reported
 * as CODEC_TRUNC after everything decodable was delivered.
 */
#include "codec.h"

#include <stdlib.h>
#include <zstd.h>

/* 2^27 = 128 MiB, zstd's default decoder window limit, stated explicitly:
 * it bounds the memory a hostile frame header can ask for. */
#define ZS_WINDOW_LOG_MAX 27

typedef struct zs_state {
    ZSTD_DStream *ds;
    size_t hint;          /* last return of ZSTD_decompressStream; 0 = between frames */
    uint64_t frame_start; /* compressed offset of the current frame */
} zs_state;

static int zs_sniff(const unsigned char *h, size_t len)
{
    if (len < 4)
        return 0;
    if (codec_le32(h) == 0xFD2FB528u)
        return 1;
    /* A stream may start with a skippable frame (0x184D2A50..5F). */
    return (codec_le32(h) & 0xFFFFFFF0u) == 0x184D2A50u;
}

static int zs_init(void **state, const char *name, op_error *err)
{
    zs_state *st = calloc(1, sizeof *st);

    if (st)
        st->ds = ZSTD_createDStream();
    if (!st || !st->ds) {
        free(st);
        return op_error_set(err, OP_ENOMEM, "%s: out of memory (zstd)", name);
    }
    ZSTD_DCtx_setParameter(st->ds, ZSTD_d_windowLogMax, ZS_WINDOW_LOG_MAX);
    *state = st;
    return OP_OK;
}

static int zs_step(void *state, codec_io *io, op_error *err)
{
    zs_state *st = state;
    ZSTD_inBuffer in;
    ZSTD_outBuffer out;
    size_t r;

    /* Between frames with no input: done, or wait. (Calling zstd here
     * would make it expect a frame header, i.e. look mid-frame.) */
    if (io->in_pos == io->in_len && st->hint == 0)
        return io->in_eof ? CODEC_END : CODEC_OK;
    in.src = io->in + io->in_pos;
    in.size = io->in_len - io->in_pos;
    in.pos = 0;
    out.dst = io->out + io->out_pos;
    out.size = io->out_cap - io->out_pos;
    out.pos = 0;
    r = ZSTD_decompressStream(st->ds, &out, &in);
    io->in_pos += in.pos;
    io->out_pos += out.pos;
    if (ZSTD_isError(r)) {
        op_error_set(err, OP_EPARSE,
                     "%s: corrupt zstd data in the frame starting at "
                     "compressed byte %llu: %s",
                     io->name, (unsigned long long)st->frame_start,
                     ZSTD_getErrorName(r));
        return CODEC_ERR;
    }
    st->hint = r;
    if (r == 0) {
        st->frame_start = io->in_base + io->in_pos;
        if (io->in_eof && io->in_pos == io->in_len)
            return CODEC_END;
        return CODEC_OK;
    }
    /* Output room left over with all input used: nothing more to come. */
    if (io->in_eof && io->in_pos == io->in_len && out.pos < out.size)
        return CODEC_TRUNC;
    return CODEC_OK;
}

static void zs_free(void *state)
{
    zs_state *st = state;

    if (st) {
        ZSTD_freeDStream(st->ds);
        free(st);
    }
}

const codec_impl codec_zstd = {
    .name = "zstd",
    .unit = "frame",
    .sniff = zs_sniff,
    .init = zs_init,
    .step = zs_step,
    .free = zs_free,
};
