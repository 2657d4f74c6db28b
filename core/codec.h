/*
 * codec.h - the internal decompressor interface behind input streams.
 *
 * A codec is recognised by its magic bytes (sniff) and then driven step by
 * step by core/input.c: each step consumes compressed bytes from io->in and
 * produces decompressed bytes into io->out. Keeping the interface this
 * small lets a new format plug in with one file and one table entry
 * (codec.c) without touching the line buffering in input.c.
 */
#ifndef OP_CORE_CODEC_H
#define OP_CORE_CODEC_H

#include <optipipe/common.h>

/* Bytes of the input head that are enough for every sniff. */
#define CODEC_SNIFF_LEN 16

/* Upper bound for any block/chunk size read from a header (compressed or
 * decompressed), so a hostile header never makes us allocate more. */
#define CODEC_MAX_BLOCK (64u * 1024u * 1024u)

typedef struct codec_io {
    const unsigned char *in; /* compressed bytes available */
    size_t in_len;
    size_t in_pos;           /* advanced by the step */
    unsigned char *out;      /* room for decompressed bytes */
    size_t out_cap;          /* > 0 */
    size_t out_pos;          /* advanced by the step */
    int in_eof;              /* no compressed byte follows in[in_len] */
    uint64_t in_base;        /* offset of in[0] in the compressed input */
    const char *name;        /* the input's display name, for messages */
} codec_io;

/* What a step returns. Output produced by the same call is always valid,
 * whatever the return value. */
enum codec_rc {
    CODEC_ERR = -1,  /* corrupt data or no memory; err is set */
    CODEC_OK = 0,    /* made progress, or needs more input (!in_eof) */
    CODEC_END = 1,   /* in_eof and the stream ended at a clean boundary */
    CODEC_TRUNC = 2  /* in_eof inside a frame/block: everything that could
                        be decoded has been delivered */
};

typedef struct codec_impl {
    const char *name; /* "gzip", "zstd", "lz4", ... as op_stream_codec() */
    const char *unit; /* "frame", "member", "block", "chunk" (for messages) */
    /* 1 when head (len bytes, len may be < CODEC_SNIFF_LEN for short
     * inputs) starts with this codec's magic. */
    int (*sniff)(const unsigned char *head, size_t len);
    /* Allocates the decoder state. Returns 0 or an op_status with err. */
    int (*init)(void **state, const char *name, op_error *err);
    /* One decoding step; see enum codec_rc. Must consume input or produce
     * output unless it returns CODEC_END/TRUNC/ERR or needs more input
     * (in_pos == in_len && !in_eof). */
    int (*step)(void *state, codec_io *io, op_error *err);
    void (*free)(void *state);
} codec_impl;

/* The pass-through codec for uncompressed input (step is NULL: input.c
 * reads plain bytes straight into its line buffer). */
extern const codec_impl codec_plain;

/* Picks the codec for an input whose first bytes are head[0..len): a
 * supported codec, or codec_plain when no magic matches. A known but
 * unsupported compression (bzip2, xz, zip, snappy framing) returns
 * OP_EPARSE with err naming the input and the format. */
int codec_detect(const unsigned char *head, size_t len, const char *name,
                 const codec_impl **out, op_error *err);

/* XXH32 of buf[0..len) with seed (the xxHash 32-bit algorithm, as used by
 * lz4-java block checksums and the LZ4 frame format). */
uint32_t codec_xxh32(const void *buf, size_t len, uint32_t seed);

/* Collects a unit (header or payload) of `need` contiguous bytes that may
 * arrive over several steps. Owns buf. */
typedef struct codec_gather {
    unsigned char *buf;
    size_t cap, have;
} codec_gather;

/* Makes need contiguous bytes available in *out, consuming them from io:
 * a pointer into io->in when they are all there (no copy; valid during
 * this step only), else into g->buf. Returns 1 when ready, 0 when all of
 * io's input was taken and more is needed, -1 on no memory (err set).
 * After using *out call codec_gather_reset. */
int codec_take(codec_gather *g, codec_io *io, size_t need,
               const unsigned char **out, op_error *err);

static inline void codec_gather_reset(codec_gather *g)
{
    g->have = 0;
}

void codec_gather_free(codec_gather *g);

/* Copies up to len bytes from src to io->out (as many as fit); returns the
 * number copied. */
size_t codec_emit(codec_io *io, const unsigned char *src, size_t len);

/* ---- codecs of units: lz4-java blocks, snappy-java chunks, LZF chunks ---- */

/* What such a codec's state starts with: the unit being gathered, where
 * it started (for messages) and a decoded unit that did not fit io->out. */
typedef struct codec_units {
    codec_gather g;
    uint64_t unit_start;   /* compressed offset of the current unit */
    unsigned char *dbuf;   /* owned */
    size_t dcap, dlen, dpos;
} codec_units;

/* The format's part of the one step loop (codec_units_step). */
typedef struct codec_unit_ops {
    /* Whether the stream is between units: it may end here cleanly, and
     * the next byte starts a unit. */
    int (*boundary)(const void *st);
    /* Bytes the next unit needs (a header or a payload). */
    size_t (*need)(const void *st);
    /* Reads the unit p (need bytes, valid for this call): sets the next
     * phase and writes decoded bytes (codec_units_dst/_put). Returns
     * CODEC_OK or CODEC_ERR with err. */
    int (*unit)(void *st, const unsigned char *p, codec_io *io, op_error *err);
    /* NULL, or bytes passed through without gathering (LZF's stored
     * chunks): returns 1 when it took this step's input, 0 when the
     * current phase is not one of those. */
    int (*pass)(void *st, codec_io *io);
} codec_unit_ops;

/* One decoding step of a codec whose state st starts with u: pending
 * decoded bytes first, then unit after unit while io has room. */
int codec_units_step(codec_units *u, const codec_unit_ops *ops, void *st,
                     codec_io *io, op_error *err);

/* Where a unit of olen decoded bytes goes: straight into io->out when it
 * fits (*direct = 1), else into u->dbuf (grown; NULL with err on no
 * memory). Then codec_units_put(u, io, olen, *direct) hands it out. */
unsigned char *codec_units_dst(codec_units *u, codec_io *io, size_t olen,
                               int *direct, op_error *err);
void codec_units_put(codec_units *u, codec_io *io, size_t olen, int direct);

void codec_units_free(codec_units *u);

/* Big- and little-endian loads. */
static inline uint32_t codec_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static inline uint32_t codec_be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
           (uint32_t)p[3];
}

static inline unsigned codec_be16(const unsigned char *p)
{
    return (unsigned)p[0] << 8 | (unsigned)p[1];
}

#endif
