/*
 * codec_gzip.c - gzip (RFC 1952) through zlib's inflate, including several
 * concatenated members (what `cat a.gz b.gz` and many log shippers make).
 */
#include "codec.h"

#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

typedef struct gz_state {
    z_stream z;
    int between;           /* a member ended; the next byte starts another */
    uint64_t member_start; /* compressed offset of the current member */
} gz_state;

static int gz_sniff(const unsigned char *h, size_t len)
{
    return len >= 3 && h[0] == 0x1f && h[1] == 0x8b && h[2] == 8;
}

static int gz_init(void **state, const char *name, op_error *err)
{
    gz_state *st = calloc(1, sizeof *st);

    if (!st || inflateInit2(&st->z, 16 + MAX_WBITS) != Z_OK) {
        free(st);
        return op_error_set(err, OP_ENOMEM, "%s: out of memory (zlib)", name);
    }
    *state = st;
    return OP_OK;
}

static int gz_corrupt(gz_state *st, codec_io *io, op_error *err)
{
    op_error_set(err, OP_EPARSE,
                 "%s: corrupt gzip data in the member starting at compressed "
                 "byte %llu (near byte %llu): %s",
                 io->name, (unsigned long long)st->member_start,
                 (unsigned long long)(io->in_base + io->in_pos),
                 st->z.msg ? st->z.msg : "invalid data");
    return CODEC_ERR;
}

/* After a member: zero padding is skipped (gzip(1) does the same), a new
 * member must start with the gzip magic. */
static int gz_next_member(gz_state *st, codec_io *io, op_error *err)
{
    while (io->in_pos < io->in_len && io->in[io->in_pos] == 0)
        io->in_pos++;
    if (io->in_pos == io->in_len)
        return io->in_eof ? CODEC_END : CODEC_OK;
    if (io->in[io->in_pos] != 0x1f) {
        op_error_set(err, OP_EPARSE,
                     "%s: unexpected bytes after the gzip member ending at "
                     "compressed byte %llu",
                     io->name, (unsigned long long)(io->in_base + io->in_pos));
        return CODEC_ERR;
    }
    if (inflateReset(&st->z) != Z_OK)
        return gz_corrupt(st, io, err);
    st->between = 0;
    st->member_start = io->in_base + io->in_pos;
    return CODEC_OK;
}

static int gz_step(void *state, codec_io *io, op_error *err)
{
    gz_state *st = state;
    size_t in_avail, out_avail;
    int zr;

    if (st->between) {
        int rc = gz_next_member(st, io, err);
        if (rc != CODEC_OK || st->between)
            return rc;
    }
    in_avail = io->in_len - io->in_pos;
    out_avail = io->out_cap - io->out_pos;
    if (in_avail > UINT_MAX)
        in_avail = UINT_MAX;
    if (out_avail > UINT_MAX)
        out_avail = UINT_MAX;
    st->z.next_in = (unsigned char *)(uintptr_t)(io->in + io->in_pos);
    st->z.avail_in = (uInt)in_avail;
    st->z.next_out = io->out + io->out_pos;
    st->z.avail_out = (uInt)out_avail;
    zr = inflate(&st->z, Z_NO_FLUSH);
    io->in_pos += in_avail - st->z.avail_in;
    io->out_pos += out_avail - st->z.avail_out;
    switch (zr) {
    case Z_STREAM_END:
        st->between = 1;
        if (io->in_eof && io->in_pos == io->in_len)
            return CODEC_END;
        return CODEC_OK;
    case Z_OK:
        return CODEC_OK;
    case Z_BUF_ERROR: /* no progress possible: input ran out mid-member */
        if (io->in_eof && io->in_pos == io->in_len)
            return CODEC_TRUNC;
        return CODEC_OK;
    case Z_MEM_ERROR:
        op_error_set(err, OP_ENOMEM, "%s: out of memory (zlib)", io->name);
        return CODEC_ERR;
    default:
        return gz_corrupt(st, io, err);
    }
}

static void gz_free(void *state)
{
    gz_state *st = state;

    if (st) {
        inflateEnd(&st->z);
        free(st);
    }
}

const codec_impl codec_gzip = {
    .name = "gzip",
    .unit = "member",
    .sniff = gz_sniff,
    .init = gz_init,
    .step = gz_step,
    .free = gz_free,
};
