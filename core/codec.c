/*
 * codec.c - the codec table, sniffing by magic bytes, and the small helpers
 * every block codec shares (gathering a unit, emitting output, XXH32).
 */
#include "codec.h"

#include <stdlib.h>
#include <string.h>

extern const codec_impl codec_gzip;
extern const codec_impl codec_zstd;
extern const codec_impl codec_lz4_block;
extern const codec_impl codec_lz4_frame;
extern const codec_impl codec_snappy;
extern const codec_impl codec_lzf;

/* Tried in order; the first whose magic matches wins. */
static const codec_impl *const codecs[] = {
    &codec_gzip,  &codec_zstd,   &codec_lz4_block,
    &codec_lz4_frame, &codec_snappy, &codec_lzf,
};

const codec_impl codec_plain = {
    .name = "plain",
    .unit = "line",
};

/* Compressions we recognise but do not decode: naming them beats letting a
 * plugin choke on binary bytes. */
struct foreign {
    const char *what;
    const unsigned char *magic;
    size_t len;
};

static const struct foreign foreign[] = {
    {"bzip2", (const unsigned char *)"BZh", 3},
    {"xz", (const unsigned char *)"\xFD" "7zXZ\0", 6},
    {"zip", (const unsigned char *)"PK\x03\x04", 4},
    {"snappy framing format (sNaPpY)",
     (const unsigned char *)"\xFF\x06\0\0sNaPpY", 10},
};

int codec_detect(const unsigned char *head, size_t len, const char *name,
                 const codec_impl **out, op_error *err)
{
    size_t i;

    for (i = 0; i < sizeof codecs / sizeof codecs[0]; i++) {
        if (codecs[i]->sniff(head, len)) {
            *out = codecs[i];
            return OP_OK;
        }
    }
    for (i = 0; i < sizeof foreign / sizeof foreign[0]; i++) {
        if (len >= foreign[i].len &&
            memcmp(head, foreign[i].magic, foreign[i].len) == 0)
            return op_error_set(err, OP_EPARSE,
                                "%s: compressed as %s, which is not supported "
                                "(supported: gzip, zstd, lz4, snappy, lzf); "
                                "decompress it first",
                                name, foreign[i].what);
    }
    *out = &codec_plain;
    return OP_OK;
}

int codec_take(codec_gather *g, codec_io *io, size_t need,
               const unsigned char **out, op_error *err)
{
    size_t avail = io->in_len - io->in_pos;
    size_t take;

    if (g->have == 0 && avail >= need) {
        *out = io->in + io->in_pos;
        io->in_pos += need;
        return 1;
    }
    take = need - g->have;
    if (take > avail)
        take = avail;
    if (take == 0)
        return 0;
    if (g->have + take > g->cap) {
        /* Grow with the data actually present, so a header that promises
         * a large unit costs memory only once the bytes arrive. */
        size_t ncap = g->cap ? g->cap : 256;
        unsigned char *nb;
        while (ncap < g->have + take)
            ncap *= 2;
        if (ncap > need)
            ncap = need;
        nb = realloc(g->buf, ncap);
        if (!nb) {
            op_error_set(err, OP_ENOMEM, "%s: out of memory", io->name);
            return -1;
        }
        g->buf = nb;
        g->cap = ncap;
    }
    memcpy(g->buf + g->have, io->in + io->in_pos, take);
    g->have += take;
    io->in_pos += take;
    if (g->have < need)
        return 0;
    *out = g->buf;
    return 1;
}

void codec_gather_free(codec_gather *g)
{
    free(g->buf);
    g->buf = NULL;
    g->cap = g->have = 0;
}

size_t codec_emit(codec_io *io, const unsigned char *src, size_t len)
{
    size_t room = io->out_cap - io->out_pos;

    if (len > room)
        len = room;
    memcpy(io->out + io->out_pos, src, len);
    io->out_pos += len;
    return len;
}

/* --- codecs of units (lz4-java, snappy-java, LZF) ------------------------ */

int codec_units_step(codec_units *u, const codec_unit_ops *ops, void *st,
                     codec_io *io, op_error *err)
{
    const unsigned char *p;
    int r;

    for (;;) {
        if (u->dpos < u->dlen)
            u->dpos += codec_emit(io, u->dbuf + u->dpos, u->dlen - u->dpos);
        if (u->dpos < u->dlen || io->out_pos == io->out_cap)
            return CODEC_OK;
        if (u->g.have == 0 && io->in_pos == io->in_len) {
            if (!io->in_eof)
                return CODEC_OK;
            return ops->boundary(st) ? CODEC_END : CODEC_TRUNC;
        }
        if (ops->pass && ops->pass(st, io))
            continue;
        if (u->g.have == 0 && ops->boundary(st))
            u->unit_start = io->in_base + io->in_pos;
        r = codec_take(&u->g, io, ops->need(st), &p, err);
        if (r < 0)
            return CODEC_ERR;
        if (r == 0)
            return io->in_eof ? CODEC_TRUNC : CODEC_OK;
        r = ops->unit(st, p, io, err);
        codec_gather_reset(&u->g);
        if (r != CODEC_OK)
            return r;
    }
}

unsigned char *codec_units_dst(codec_units *u, codec_io *io, size_t olen,
                               int *direct, op_error *err)
{
    *direct = io->out_cap - io->out_pos >= olen;
    if (*direct)
        return io->out + io->out_pos;
    if (u->dcap < olen) {
        unsigned char *nb = realloc(u->dbuf, olen);
        if (!nb) {
            op_error_set(err, OP_ENOMEM, "%s: out of memory", io->name);
            return NULL;
        }
        u->dbuf = nb;
        u->dcap = olen;
    }
    return u->dbuf;
}

void codec_units_put(codec_units *u, codec_io *io, size_t olen, int direct)
{
    if (direct) {
        io->out_pos += olen;
    } else {
        u->dlen = olen;
        u->dpos = 0;
    }
}

void codec_units_free(codec_units *u)
{
    codec_gather_free(&u->g);
    free(u->dbuf);
    u->dbuf = NULL;
    u->dcap = u->dlen = u->dpos = 0;
}

/* --- XXH32 (xxHash specification, 32-bit variant) ---------------------- */

#define XXH_P1 0x9E3779B1u
#define XXH_P2 0x85EBCA77u
#define XXH_P3 0xC2B2AE3Du
#define XXH_P4 0x27D4EB2Fu
#define XXH_P5 0x165667B1u

static uint32_t rotl32(uint32_t x, int r)
{
    return (x << r) | (x >> (32 - r));
}

static uint32_t xxh_round(uint32_t acc, uint32_t lane)
{
    acc += lane * XXH_P2;
    return rotl32(acc, 13) * XXH_P1;
}

uint32_t codec_xxh32(const void *buf, size_t len, uint32_t seed)
{
    const unsigned char *p = buf;
    const unsigned char *end = p + len;
    uint32_t h;

    if (len >= 16) {
        uint32_t v1 = seed + XXH_P1 + XXH_P2;
        uint32_t v2 = seed + XXH_P2;
        uint32_t v3 = seed;
        uint32_t v4 = seed - XXH_P1;
        const unsigned char *limit = end - 16;
        do {
            v1 = xxh_round(v1, codec_le32(p));
            v2 = xxh_round(v2, codec_le32(p + 4));
            v3 = xxh_round(v3, codec_le32(p + 8));
            v4 = xxh_round(v4, codec_le32(p + 12));
            p += 16;
        } while (p <= limit);
        h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
    } else {
        h = seed + XXH_P5;
    }
    h += (uint32_t)len;
    while (end - p >= 4) {
        h += codec_le32(p) * XXH_P3;
        h = rotl32(h, 17) * XXH_P4;
        p += 4;
    }
    while (p < end) {
        h += (uint32_t)*p * XXH_P5;
        h = rotl32(h, 11) * XXH_P1;
        p++;
    }
    h ^= h >> 15;
    h *= XXH_P2;
    h ^= h >> 13;
    h *= XXH_P3;
    h ^= h >> 16;
    return h;
}
