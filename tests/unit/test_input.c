/*
 * test_input.c - input streams, codecs and the directory walk (core/input.c,
 * core/codec*.c). Every compressed stream is produced here by the test
 * itself (zlib, zstd, liblz4, libsnappy, plus small writers for the Spark
 * framings), so the decoders are checked against the reference encoders.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lz4.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "codec.h"
#include "input.h"
#include "../../plugins/spark/host/spark_host.h" /* the rolling layout */
#include "support.h"

/* --- helpers ------------------------------------------------------------ */

static uint32_t rng_state = 12345;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

/* Spark-like JSON lines of varying length. */
static dbuf make_text(size_t nlines)
{
    dbuf b = {0};
    size_t i;
    char line[2048];

    rng_state = 12345;
    for (i = 0; i < nlines; i++) {
        int pad = (int)(rnd() % 600);
        int n = snprintf(line, sizeof line,
                         "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":%u,"
                         "\"Task Info\":{\"Task ID\":%zu,\"Host\":\"host-%u\"},"
                         "\"Pad\":\"%.*s\"}\n",
                         rnd() % 50, i, rnd() % 9, pad,
                         "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop"
                         "qrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz012345"
                         "6789abcdefghijklmnopqrstuvwxyz0123456789abcdefghijkl"
                         "mnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz01"
                         "23456789abcdefghijklmnopqrstuvwxyz0123456789abcdefgh"
                         "ijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwx"
                         "yz0123456789abcdefghijklmnopqrstuvwxyz0123456789abcd"
                         "efghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrst"
                         "uvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789"
                         "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop"
                         "qrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz012345"
                         "6789abcdefghijklmnopqrstuvwxyz0123456789");
        db_add(&b, line, (size_t)n);
    }
    return b;
}

/* Reads every line and rebuilds the bytes ('\n' after each line but a
 * truncated last one). Returns read_line's final status (0 or -1). */
static int slurp(op_stream *s, dbuf *out, op_error *err)
{
    const char *line;
    size_t len;
    int rc;

    while ((rc = op_stream_read_line(s, &line, &len, err)) == 1) {
        assert_int_equal(strlen(line), len); /* NUL-terminated, no NUL inside */
        db_add(out, line, len);
        if (!op_stream_truncated(s))
            db_add(out, "\n", 1);
    }
    return rc;
}

static char *tmp_path(const char *name);
static void write_file(const char *path, const void *buf, size_t len);

/* Opens buf in memory (file == 0) or as a file, reads all lines, checks
 * they equal want. */
static void check_one(const char *name, const void *buf, size_t len,
                      const dbuf *want, const char *codec, int file)
{
    op_stream *s = NULL;
    op_error err;
    dbuf got = {0};

    op_error_clear(&err);
    if (file) {
        write_file(tmp_path(name), buf, len);
        assert_int_equal(input_open(tmp_path(name), NULL, &s, &err), 0);
    } else {
        assert_int_equal(input_open_mem(name, buf, len, NULL, &s, &err), 0);
    }
    assert_string_equal(op_stream_codec(s), codec);
    assert_int_equal(slurp(s, &got, &err), 0);
    assert_int_equal(got.n, want->n);
    assert_memory_equal(got.p, want->p, want->n);
    assert_int_equal(op_stream_offset(s), want->n);
    assert_int_equal(op_stream_truncated(s), 0);
    assert_null(input_warning(s));
    input_close(s);
    free(got.p);
}

/* Both through memory and through a file (the fd path with its raw buffer
 * refills). */
static void check_mem(const char *name, const void *buf, size_t len,
                      const dbuf *want, const char *codec)
{
    check_one(name, buf, len, want, codec, 0);
    check_one(name, buf, len, want, codec, 1);
}

static char tmp_root[64];

static void make_tmp_root(void)
{
    if (tmp_root[0])
        return;
    strcpy(tmp_root, "/tmp/op-test-input-XXXXXX");
    assert_non_null(mkdtemp(tmp_root));
}

static void rm_rf(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;

    if (lstat(path, &st) != 0)
        return;
    if (!S_ISDIR(st.st_mode)) {
        unlink(path);
        return;
    }
    chmod(path, 0700);
    d = opendir(path);
    if (d) {
        while ((e = readdir(d)) != NULL) {
            char sub[4096];
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            rm_rf(sub);
        }
        closedir(d);
    }
    rmdir(path);
}

static void write_file(const char *path, const void *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(buf, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static char *tmp_path(const char *name)
{
    static char p[256];
    make_tmp_root();
    snprintf(p, sizeof p, "%s/%s", tmp_root, name);
    return p;
}

/* --- encoders (the test's own writers for the Spark framings) ---------- */

static dbuf gzip_encode(const unsigned char *d, size_t n)
{
    dbuf b = {0};
    z_stream z;
    uLong bound;

    memset(&z, 0, sizeof z);
    assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 31, 8,
                                  Z_DEFAULT_STRATEGY), Z_OK);
    bound = deflateBound(&z, (uLong)n) + 32;
    b.p = malloc(bound + 1);
    b.cap = bound + 1;
    z.next_in = (unsigned char *)(uintptr_t)d;
    z.avail_in = (uInt)n;
    z.next_out = b.p;
    z.avail_out = (uInt)bound;
    assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
    b.n = bound - z.avail_out;
    deflateEnd(&z);
    return b;
}

/* Spark-style zstd: one frame per `frame` input bytes. */
static dbuf zstd_frames(const unsigned char *d, size_t n, size_t frame)
{
    dbuf b = {0};
    size_t off;

    for (off = 0; off < n; off += frame) {
        size_t k = n - off < frame ? n - off : frame;
        size_t bound = ZSTD_compressBound(k);
        void *tmp = malloc(bound);
        size_t c = ZSTD_compress(tmp, bound, d + off, k, 1);
        assert_false(ZSTD_isError(c));
        db_add(&b, tmp, c);
        free(tmp);
    }
    return b;
}

/* CLI-style zstd: one frame with content size and checksum. */
static dbuf zstd_cli(const unsigned char *d, size_t n)
{
    dbuf b = {0};
    ZSTD_CCtx *c = ZSTD_createCCtx();
    size_t bound = ZSTD_compressBound(n), r;

    b.p = malloc(bound + 1);
    b.cap = bound + 1;
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 3);
    r = ZSTD_compress2(c, b.p, bound, d, n);
    assert_false(ZSTD_isError(r));
    b.n = r;
    ZSTD_freeCCtx(c);
    return b;
}

/* lz4-java LZ4BlockOutputStream framing. */
static void lz4b_encode(dbuf *b, const unsigned char *d, size_t n, size_t bs,
                        int end_mark)
{
    unsigned level = 0;
    size_t off;
    int bound = LZ4_compressBound((int)bs);
    char *tmp = malloc((size_t)bound);

    while ((1u << (10 + level)) < bs)
        level++;
    for (off = 0; off < n; off += bs) {
        size_t k = n - off < bs ? n - off : bs;
        int c = LZ4_compress_default((const char *)d + off, tmp, (int)k, bound);
        int raw = c <= 0 || (size_t)c >= k;
        db_add(b, "LZ4Block", 8);
        db_u8(b, (raw ? 0x10 : 0x20) | level);
        db_le32(b, raw ? (uint32_t)k : (uint32_t)c);
        db_le32(b, (uint32_t)k);
        db_le32(b, codec_xxh32(d + off, k, 0x9747B28Cu) & 0x0FFFFFFFu);
        if (raw)
            db_add(b, d + off, k);
        else
            db_add(b, tmp, (size_t)c);
    }
    if (end_mark) {
        db_add(b, "LZ4Block", 8);
        db_u8(b, 0x10 | level);
        db_le32(b, 0);
        db_le32(b, 0);
        db_le32(b, 0);
    }
    free(tmp);
}

/* snappy-java SnappyOutputStream framing. */
static void snappy_encode(dbuf *b, const unsigned char *d, size_t n, size_t bs)
{
    size_t off;
    size_t cap = snappy_max_compressed_length(bs);
    char *tmp = malloc(cap);

    db_add(b, "\x82SNAPPY\0", 8);
    db_be32(b, 1);
    db_be32(b, 1);
    for (off = 0; off < n; off += bs) {
        size_t k = n - off < bs ? n - off : bs;
        size_t c = cap;
        assert_int_equal(snappy_compress((const char *)d + off, k, tmp, &c),
                         SNAPPY_OK);
        db_be32(b, (uint32_t)c);
        db_add(b, tmp, c);
    }
    free(tmp);
}

/* ning LZF chunks, alternating stored and literal-only compressed. */
static void lzf_encode(dbuf *b, const unsigned char *d, size_t n)
{
    size_t off, chunk = 0;

    for (off = 0; off < n; chunk++) {
        size_t k = n - off < 60000 ? n - off : 60000;
        if (chunk % 2 == 0) {
            db_add(b, "ZV\0", 3);
            db_be16(b, (unsigned)k);
            db_add(b, d + off, k);
        } else {
            size_t i, clen = k + (k + 31) / 32;
            db_add(b, "ZV\1", 3);
            db_be16(b, (unsigned)clen);
            db_be16(b, (unsigned)k);
            for (i = 0; i < k; i += 32) {
                size_t run = k - i < 32 ? k - i : 32;
                db_u8(b, (unsigned)(run - 1));
                db_add(b, d + off + i, run);
            }
        }
        off += k;
    }
}

/* --- plain -------------------------------------------------------------- */

static void test_plain_lines(void **state)
{
    static const char text[] = "a\nbb\r\n\nccc";
    op_stream *s = NULL;
    op_error err;
    const char *line;
    size_t len;

    (void)state;
    assert_int_equal(input_open_mem("t.txt", text, sizeof text - 1, NULL, &s,
                                    &err), 0);
    assert_string_equal(op_stream_name(s), "t.txt");
    assert_string_equal(op_stream_codec(s), "plain");
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
    assert_string_equal(line, "a");
    assert_int_equal(op_stream_line_no(s), 1);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
    assert_string_equal(line, "bb\r"); /* CR is kept */
    assert_int_equal(len, 3);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
    assert_int_equal(len, 0);
    assert_int_equal(op_stream_truncated(s), 0);
    assert_int_equal(op_stream_offset(s), 7);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
    assert_string_equal(line, "ccc");
    assert_int_equal(op_stream_truncated(s), 1);
    assert_int_equal(op_stream_line_no(s), 4);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 0);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 0);
    assert_int_equal(op_stream_offset(s), sizeof text - 1);
    input_close(s);
}

static void test_empty(void **state)
{
    op_stream *s = NULL;
    op_error err;
    const char *line, *all;
    size_t len;

    (void)state;
    assert_int_equal(input_open_mem("empty", "", 0, NULL, &s, &err), 0);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 0);
    assert_int_equal(op_stream_truncated(s), 0);
    assert_int_equal(op_stream_line_no(s), 0);
    input_close(s);

    write_file(tmp_path("empty.log"), "", 0);
    assert_int_equal(input_open(tmp_path("empty.log"), NULL, &s, &err), 0);
    assert_string_equal(op_stream_codec(s), "plain");
    assert_int_equal(op_stream_read_all(s, &all, &len, &err), 0);
    assert_int_equal(len, 0);
    assert_string_equal(all, "");
    input_close(s);
}

static void test_plain_file_long_lines(void **state)
{
    dbuf want = make_text(3000);
    dbuf got = {0};
    size_t big = 3u * 1024 * 1024, i;
    op_stream *s = NULL;
    op_error err;
    char *line = malloc(big + 1);

    (void)state;
    for (i = 0; i < big; i++)
        line[i] = (char)('a' + i % 26);
    line[big] = '\n';
    db_add(&want, line, big + 1); /* longer than the initial buffer */
    db_add(&want, "tail\r\n", 6);
    write_file(tmp_path("plain.log"), want.p, want.n);
    assert_int_equal(input_open(tmp_path("plain.log"), NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), 0);
    assert_int_equal(got.n, want.n);
    assert_memory_equal(got.p, want.p, want.n);
    assert_int_equal(op_stream_line_no(s), 3002);
    input_close(s);
    check_mem("plain-mem", want.p, want.n, &want, "plain");
    free(line);
    free(want.p);
    free(got.p);
}

/* --- gzip --------------------------------------------------------------- */

static void test_gzip(void **state)
{
    dbuf text = make_text(4000);
    dbuf gz = gzip_encode(text.p, text.n);
    dbuf two = {0}, want2 = {0}, got = {0};
    dbuf a = gzip_encode(text.p, 1000);
    dbuf b = gzip_encode(text.p + 1000, text.n - 1000);
    op_stream *s = NULL;
    op_error err;

    (void)state;
    check_mem("log.gz", gz.p, gz.n, &text, "gzip");
    /* a file, so the fd path and raw buffer refills are used */
    write_file(tmp_path("log.gz"), gz.p, gz.n);
    assert_int_equal(input_open(tmp_path("log.gz"), NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), 0);
    assert_int_equal(got.n, text.n);
    assert_memory_equal(got.p, text.p, text.n);
    input_close(s);
    /* concatenated members, zero padding after the last one */
    db_add(&two, a.p, a.n);
    db_add(&two, b.p, b.n);
    db_add(&two, "\0\0\0\0", 4);
    check_mem("two.gz", two.p, two.n, &text, "gzip");
    /* and the same data twice */
    db_add(&want2, text.p, text.n);
    db_add(&want2, text.p, text.n);
    db_add(&gz, gz.p, gz.n);
    check_mem("twice.gz", gz.p, gz.n, &want2, "gzip");
    free(text.p);
    free(gz.p);
    free(two.p);
    free(want2.p);
    free(got.p);
    free(a.p);
    free(b.p);
}

/* Everything decoded is a prefix of want; the stream is flagged truncated
 * with a warning naming the codec; at least min bytes came through. */
static void check_truncated(const char *name, const void *buf, size_t len,
                            const dbuf *want, size_t min, const char *codec)
{
    op_stream *s = NULL;
    op_error err;
    dbuf got = {0};
    const char *w;

    op_error_clear(&err);
    assert_int_equal(input_open_mem(name, buf, len, NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), 0);
    assert_true(got.n >= min);
    assert_true(got.n <= want->n);
    if (got.n)
        assert_memory_equal(got.p, want->p, got.n);
    assert_int_equal(op_stream_truncated(s), 1);
    w = input_warning(s);
    assert_non_null(w);
    assert_non_null(strstr(w, name));
    assert_non_null(strstr(w, codec));
    input_close(s);
    free(got.p);
}

static void test_gzip_truncated_and_corrupt(void **state)
{
    dbuf text = make_text(4000);
    dbuf gz = gzip_encode(text.p, text.n);
    op_stream *s = NULL;
    op_error err;
    dbuf got = {0};

    (void)state;
    check_truncated("cut.gz", gz.p, gz.n / 2, &text, text.n / 4, "gzip");
    check_truncated("cut2.gz", gz.p, gz.n - 4, &text, text.n - 1000, "gzip");
    /* garbage after a member */
    db_add(&gz, "garbage!", 8);
    assert_int_equal(input_open_mem("trail.gz", gz.p, gz.n, NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_int_equal(err.code, OP_EPARSE);
    assert_non_null(strstr(err.msg, "trail.gz"));
    assert_non_null(strstr(err.msg, "after the gzip member"));
    input_close(s);
    /* corrupt deflate data in the middle */
    gz.n -= 8;
    memset(gz.p + gz.n / 2, 0xff, 64);
    got.n = 0;
    assert_int_equal(input_open_mem("bad.gz", gz.p, gz.n, NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_int_equal(err.code, OP_EPARSE);
    assert_non_null(strstr(err.msg, "bad.gz: corrupt gzip data"));
    assert_non_null(strstr(err.msg, "compressed byte"));
    input_close(s);
    free(text.p);
    free(gz.p);
    free(got.p);
}

/* --- zstd --------------------------------------------------------------- */

static void test_zstd(void **state)
{
    dbuf text = make_text(5000);
    dbuf frames = zstd_frames(text.p, text.n, 7000);
    dbuf cli = zstd_cli(text.p, text.n);
    dbuf got = {0};
    op_stream *s = NULL;
    op_error err;

    (void)state;
    check_mem("many.zstd", frames.p, frames.n, &text, "zstd");
    check_mem("cli.zst", cli.p, cli.n, &text, "zstd");
    write_file(tmp_path("many.zstd"), frames.p, frames.n);
    assert_int_equal(input_open(tmp_path("many.zstd"), NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), 0);
    assert_int_equal(got.n, text.n);
    assert_memory_equal(got.p, text.p, text.n);
    input_close(s);
    free(text.p);
    free(frames.p);
    free(cli.p);
    free(got.p);
}

static void test_zstd_truncated_and_corrupt(void **state)
{
    dbuf text = make_text(5000);
    dbuf frames = zstd_frames(text.p, text.n, 100000);
    dbuf cli = zstd_cli(text.p, text.n);
    dbuf got = {0};
    size_t last_start = 0, off = 0, whole = 0;
    op_stream *s = NULL;
    op_error err;

    (void)state;
    /* find where the last frame starts: the complete frames before it must
     * all come through, then part of the last one */
    while (off < frames.n) {
        size_t fs = ZSTD_findFrameCompressedSize(frames.p + off, frames.n - off);
        assert_false(ZSTD_isError(fs));
        last_start = off;
        off += fs;
        if (off < frames.n)
            whole += 100000;
    }
    check_truncated("mid.zstd", frames.p, last_start + (frames.n - last_start) / 2,
                    &text, whole, "zstd");
    check_truncated("cli-cut.zst", cli.p, cli.n - 10, &text, 0, "zstd");
    /* a header alone */
    check_truncated("hdr.zstd", frames.p, 6, &text, 0, "zstd");
    /* corrupt: unknown bytes after a frame */
    db_add(&frames, "not zstd at all", 15);
    assert_int_equal(input_open_mem("junk.zstd", frames.p, frames.n, NULL, &s,
                                    &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_int_equal(err.code, OP_EPARSE);
    assert_non_null(strstr(err.msg, "junk.zstd: corrupt zstd data"));
    assert_non_null(strstr(err.msg, "compressed byte"));
    /* sticky */
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_int_equal(err.code, OP_EPARSE);
    input_close(s);
    /* checksum of the CLI frame */
    cli.p[cli.n - 1] ^= 0x55;
    got.n = 0;
    assert_int_equal(input_open_mem("sum.zst", cli.p, cli.n, NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_int_equal(err.code, OP_EPARSE);
    assert_non_null(strstr(err.msg, "sum.zst"));
    input_close(s);
    free(text.p);
    free(frames.p);
    free(cli.p);
    free(got.p);
}

static void test_zstd_bomb(void **state)
{
    static unsigned char zeros[1 << 20];
    ZSTD_CCtx *c = ZSTD_createCCtx();
    dbuf z = {0};
    unsigned char out[1 << 16];
    input_limits lim;
    op_stream *s = NULL;
    op_error err;
    uint64_t total = 0;
    long n;
    int i;

    (void)state;
    for (i = 0; i <= 100; i++) { /* 100 MiB of zeros */
        ZSTD_inBuffer in = {zeros, i < 100 ? sizeof zeros : 0, 0};
        size_t r;
        do {
            ZSTD_outBuffer o = {out, sizeof out, 0};
            r = ZSTD_compressStream2(c, &o, &in,
                                     i < 100 ? ZSTD_e_continue : ZSTD_e_end);
            assert_false(ZSTD_isError(r));
            db_add(&z, out, o.pos);
        } while (in.pos < in.size || (i == 100 && r != 0));
    }
    ZSTD_freeCCtx(c);
    assert_true(z.n < 100000);
    input_limits_default(&lim);
    lim.max_bytes = 1 << 20;
    assert_int_equal(input_open_mem("bomb.zst", z.p, z.n, &lim, &s, &err), 0);
    while ((n = op_stream_read(s, out, sizeof out, &err)) > 0)
        total += (uint64_t)n;
    assert_int_equal(n, -1);
    assert_int_equal(err.code, OP_ELIMIT);
    assert_int_equal(total, 1 << 20);
    assert_non_null(strstr(err.msg, "bomb.zst: more than 1048576 bytes"));
    assert_non_null(strstr(err.msg, "--max-bytes"));
    input_close(s);
    free(z.p);
}

/* --- lz4 ---------------------------------------------------------------- */

static void test_xxh32(void **state)
{
    /* The LZ4 frame content checksum is XXH32(content, 0): check ours
     * against liblz4's. */
    dbuf text = make_text(300);
    size_t lens[] = {0, 1, 3, 4, 15, 16, 17, 31, 32, 33, 1000, text.n};
    size_t i;

    (void)state;
    assert_int_equal(codec_xxh32("", 0, 0), 0x02CC5D05u);
    for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        LZ4F_preferences_t p;
        size_t cap, n;
        unsigned char *f;
        memset(&p, 0, sizeof p);
        p.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
        cap = LZ4F_compressFrameBound(lens[i], &p);
        f = malloc(cap);
        n = LZ4F_compressFrame(f, cap, text.p, lens[i], &p);
        assert_false(LZ4F_isError(n));
        assert_int_equal(codec_le32(f + n - 4), codec_xxh32(text.p, lens[i], 0));
        free(f);
    }
    free(text.p);
}

static void test_lz4_block(void **state)
{
    dbuf text = make_text(4000);
    dbuf b = {0}, two = {0}, want2 = {0}, got = {0};
    unsigned char noise[5000];
    size_t i;
    op_stream *s = NULL;
    op_error err;

    (void)state;
    /* incompressible bytes make lz4-java store a RAW block */
    for (i = 0; i < sizeof noise; i++)
        noise[i] = (unsigned char)(rnd() % 26 + 'a');
    for (i = 79; i < sizeof noise; i += 80)
        noise[i] = '\n';
    noise[sizeof noise - 1] = '\n';
    db_add(&text, noise, sizeof noise);
    lz4b_encode(&b, text.p, text.n, 32 * 1024, 1);
    assert_non_null(memchr(b.p + 8, 0x25, 1)); /* Spark default token */
    check_mem("app.lz4", b.p, b.n, &text, "lz4");
    /* in-progress: no end mark */
    b.n = 0;
    lz4b_encode(&b, text.p, text.n, 64 * 1024, 0);
    check_mem("app.lz4.inprogress", b.p, b.n, &text, "lz4");
    /* concatenated streams, read through a file */
    lz4b_encode(&two, text.p, text.n, 32 * 1024, 1);
    lz4b_encode(&two, text.p, text.n, 1024, 1);
    db_add(&want2, text.p, text.n);
    db_add(&want2, text.p, text.n);
    write_file(tmp_path("two.lz4"), two.p, two.n);
    assert_int_equal(input_open(tmp_path("two.lz4"), NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), 0);
    assert_int_equal(got.n, want2.n);
    assert_memory_equal(got.p, want2.p, want2.n);
    input_close(s);
    free(text.p);
    free(b.p);
    free(two.p);
    free(want2.p);
    free(got.p);
}

static void test_lz4_truncated_and_corrupt(void **state)
{
    dbuf text = make_text(4000);
    dbuf b = {0}, got = {0};
    size_t second;
    op_stream *s = NULL;
    op_error err;
    char where[64];

    (void)state;
    lz4b_encode(&b, text.p, text.n, 32 * 1024, 1);
    /* cut inside the payload of the second-to-last block: all blocks before
     * it are delivered, that block is lost */
    check_truncated("cut.lz4", b.p, b.n - 21 - 100, &text,
                    (text.n - 1) / 32768 * 32768 - 32768, "lz4");
    check_truncated("hdr.lz4", b.p, 10, &text, 0, "lz4");
    /* corrupt checksum of the second block */
    second = 21 + codec_le32(b.p + 9);
    b.p[second + 17] ^= 1;
    assert_int_equal(input_open_mem("sum.lz4", b.p, b.n, NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_int_equal(err.code, OP_EPARSE);
    snprintf(where, sizeof where, "compressed byte %zu", second);
    assert_non_null(strstr(err.msg, "sum.lz4: corrupt lz4 stream"));
    assert_non_null(strstr(err.msg, "checksum mismatch"));
    assert_non_null(strstr(err.msg, where));
    assert_true(got.n >= 30000); /* the first block's lines came through */
    input_close(s);
    b.p[second + 17] ^= 1;
    /* bad magic on the second block */
    b.p[second] = 'X';
    got.n = 0;
    assert_int_equal(input_open_mem("magic.lz4", b.p, b.n, NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_int_equal(err.code, OP_EPARSE);
    assert_non_null(strstr(err.msg, "bad block magic"));
    assert_non_null(strstr(err.msg, where));
    input_close(s);
    b.p[second] = 'L';
    /* a header claiming more than its level allows */
    b.p[second + 8] = 0x20; /* level 0: at most 1 KiB */
    got.n = 0;
    assert_int_equal(input_open_mem("len.lz4", b.p, b.n, NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_non_null(strstr(err.msg, "out of range"));
    input_close(s);
    free(text.p);
    free(b.p);
    free(got.p);
}

static void test_lz4_frame(void **state)
{
    dbuf text = make_text(2000);
    LZ4F_preferences_t p;
    size_t cap, n;
    unsigned char *f;

    (void)state;
    memset(&p, 0, sizeof p);
    p.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
    cap = LZ4F_compressFrameBound(text.n, &p);
    f = malloc(cap);
    n = LZ4F_compressFrame(f, cap, text.p, text.n, &p);
    assert_false(LZ4F_isError(n));
    check_mem("cli.lz4", f, n, &text, "lz4-frame");
    check_truncated("cli-cut.lz4", f, n / 2, &text, 0, "lz4-frame");
    free(f);
    free(text.p);
}

/* --- snappy ------------------------------------------------------------- */

static void test_snappy(void **state)
{
    dbuf text = make_text(4000);
    dbuf b = {0}, two = {0}, want2 = {0}, got = {0};
    op_stream *s = NULL;
    op_error err;

    (void)state;
    snappy_encode(&b, text.p, text.n, 32 * 1024);
    check_mem("app.snappy", b.p, b.n, &text, "snappy");
    /* small flush-sized chunks, then a concatenated stream */
    snappy_encode(&two, text.p, text.n, 777);
    snappy_encode(&two, text.p, text.n, 1u << 20);
    db_add(&want2, text.p, text.n);
    db_add(&want2, text.p, text.n);
    check_mem("two.snappy", two.p, two.n, &want2, "snappy");
    /* cut inside a chunk */
    check_truncated("cut.snappy", b.p, b.n - 50, &text, text.n - 40000,
                    "snappy");
    check_truncated("hdr.snappy", b.p, 12, &text, 0, "snappy");
    /* corrupt chunk body */
    memset(b.p + 16 + 4 + 3, 0xff, 40); /* after the 3-byte length varint */
    assert_int_equal(input_open_mem("bad.snappy", b.p, b.n, NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_int_equal(err.code, OP_EPARSE);
    assert_non_null(strstr(err.msg, "bad.snappy: corrupt snappy stream"));
    assert_non_null(strstr(err.msg, "compressed byte 16"));
    input_close(s);
    /* a hostile chunk length */
    b.p[16] = 0x7f;
    assert_int_equal(input_open_mem("len.snappy", b.p, b.n, NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_non_null(strstr(err.msg, "chunk length out of range"));
    input_close(s);
    /* 5 bytes claiming 60 MiB of output: refused before allocating */
    memcpy(b.p + 16, "\0\0\0\5\x80\x80\x80\x1e\0", 9);
    assert_int_equal(input_open_mem("ratio.snappy", b.p, 25, NULL, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_non_null(strstr(err.msg, "bad chunk length prefix"));
    input_close(s);
    free(text.p);
    free(b.p);
    free(two.p);
    free(want2.p);
    free(got.p);
}

/* --- lzf ---------------------------------------------------------------- */

static void test_lzf_handmade(void **state)
{
    /* stored "hi\n", then literal "abc" + back-reference of 9 at distance 3
     * (extended length), then "x" + short back-reference of 5 at distance 1 */
    static const unsigned char chunks[] = {
        'Z', 'V', 0, 0, 3, 'h', 'i', '\n',
        'Z', 'V', 1, 0, 7, 0, 12, 2, 'a', 'b', 'c', 0xE0, 0x00, 0x02,
        'Z', 'V', 1, 0, 4, 0, 6, 0, 'x', 0x60, 0x00,
        'Z', 'V', 0, 0, 1, '\n'};
    static const char want[] = "hi\nabcabcabcabcxxxxxx\n";
    dbuf w = {0};
    unsigned char bad[sizeof chunks];
    op_stream *s = NULL;
    op_error err;
    dbuf got = {0};

    (void)state;
    db_add(&w, want, sizeof want - 1);
    check_mem("hand.lzf", chunks, sizeof chunks, &w, "lzf");
    check_truncated("cut.lzf", chunks, 20, &w, 3, "lzf");
    /* a back-reference before the start of the chunk */
    memcpy(bad, chunks, sizeof bad);
    bad[21] = 0x09;
    assert_int_equal(input_open_mem("bad.lzf", bad, sizeof bad, NULL, &s, &err),
                     0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_int_equal(err.code, OP_EPARSE);
    assert_non_null(strstr(err.msg, "bad.lzf: corrupt lzf stream"));
    assert_non_null(strstr(err.msg, "compressed byte 8"));
    input_close(s);
    /* a wrong signature on the second chunk */
    memcpy(bad, chunks, sizeof bad);
    bad[9] = 'W';
    got.n = 0;
    assert_int_equal(input_open_mem("sig.lzf", bad, sizeof bad, NULL, &s, &err),
                     0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_non_null(strstr(err.msg, "bad chunk signature"));
    assert_int_equal(got.n, 3); /* "hi\n" decoded before the bad chunk */
    input_close(s);
    free(w.p);
    free(got.p);
}

static void test_lzf_stream(void **state)
{
    dbuf text = make_text(3000);
    dbuf b = {0};

    (void)state;
    lzf_encode(&b, text.p, text.n);
    check_mem("app.lzf", b.p, b.n, &text, "lzf");
    check_truncated("cut.lzf", b.p, b.n - 1000, &text, text.n - 62000, "lzf");
    free(text.p);
    free(b.p);
}

/* --- caps --------------------------------------------------------------- */

static void test_line_cap(void **state)
{
    static const char text[] = "short\n0123456789\n01234567890\nafter\n";
    input_limits lim;
    op_stream *s = NULL;
    op_error err;
    const char *line;
    size_t len;

    (void)state;
    input_limits_default(&lim);
    assert_int_equal(lim.max_line, 256u * 1024 * 1024);
    assert_int_equal(lim.max_bytes, 64ull * 1024 * 1024 * 1024);
    assert_int_equal(lim.max_doc, 1024u * 1024 * 1024);
    lim.max_line = 10;
    assert_int_equal(input_open_mem("cap.log", text, sizeof text - 1, &lim, &s,
                                    &err), 0);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
    assert_int_equal(len, 10); /* exactly at the cap is fine */
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), -1);
    assert_int_equal(err.code, OP_ELIMIT);
    assert_string_equal(err.msg, "cap.log: line 3 is longer than the limit of "
                                 "10 bytes (--max-line)");
    input_close(s);
    /* a long last line without '\n', and one longer than the buffer */
    {
        size_t big = 2u * 1024 * 1024;
        char *p = malloc(big);
        memset(p, 'x', big);
        lim.max_line = big - 1;
        assert_int_equal(input_open_mem("big.log", p, big, &lim, &s, &err), 0);
        assert_int_equal(op_stream_read_line(s, &line, &len, &err), -1);
        assert_int_equal(err.code, OP_ELIMIT);
        assert_non_null(strstr(err.msg, "line 1 is longer"));
        input_close(s);
        lim.max_line = big;
        assert_int_equal(input_open_mem("big.log", p, big, &lim, &s, &err), 0);
        assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
        assert_int_equal(len, big);
        assert_int_equal(op_stream_truncated(s), 1);
        input_close(s);
        free(p);
    }
}

static void test_total_cap(void **state)
{
    dbuf text = make_text(100);
    dbuf gz = gzip_encode(text.p, text.n);
    input_limits lim;
    op_stream *s = NULL;
    op_error err;
    dbuf got = {0};

    (void)state;
    memset(&lim, 0, sizeof lim); /* zero fields keep the defaults */
    lim.max_bytes = text.n;
    assert_int_equal(input_open_mem("exact.gz", gz.p, gz.n, &lim, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), 0);
    assert_int_equal(got.n, text.n);
    input_close(s);
    lim.max_bytes = text.n - 1;
    got.n = 0;
    assert_int_equal(input_open(tmp_path("over.log"), &lim, &s, &err),
                     OP_ENOTFOUND);
    write_file(tmp_path("over.log"), text.p, text.n);
    assert_int_equal(input_open(tmp_path("over.log"), &lim, &s, &err), 0);
    assert_int_equal(slurp(s, &got, &err), -1);
    assert_int_equal(err.code, OP_ELIMIT);
    assert_non_null(strstr(err.msg, "over.log: more than"));
    input_close(s);
    free(text.p);
    free(gz.p);
    free(got.p);
}

static void test_read_all(void **state)
{
    dbuf text = make_text(500);
    dbuf z = zstd_frames(text.p, text.n, 5000);
    input_limits lim;
    op_stream *s = NULL;
    op_error err;
    const char *all, *line;
    size_t len;

    (void)state;
    input_limits_default(&lim);
    assert_int_equal(input_open_mem("doc.zst", z.p, z.n, &lim, &s, &err), 0);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
    assert_int_equal(op_stream_read_all(s, &all, &len, &err), 0);
    assert_int_equal(len, text.n - strlen(line) - 1);
    assert_memory_equal(all, text.p + strlen(line) + 1, len);
    assert_int_equal(all[len], '\0');
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 0);
    input_close(s);
    lim.max_doc = text.n - 1;
    assert_int_equal(input_open_mem("doc.zst", z.p, z.n, &lim, &s, &err), 0);
    assert_int_equal(op_stream_read_all(s, &all, &len, &err), OP_ELIMIT);
    assert_non_null(strstr(err.msg, "doc.zst: larger than the limit"));
    input_close(s);
    lim.max_doc = text.n;
    assert_int_equal(input_open_mem("doc.zst", z.p, z.n, &lim, &s, &err), 0);
    assert_int_equal(op_stream_read_all(s, &all, &len, &err), 0);
    assert_int_equal(len, text.n);
    input_close(s);
    free(text.p);
    free(z.p);
}

/* --- peek, read, offsets ------------------------------------------------ */

static void test_peek_then_read(void **state)
{
    dbuf text = make_text(3000);
    dbuf gz = gzip_encode(text.p, text.n);
    dbuf got = {0};
    op_stream *s = NULL;
    op_error err;
    const unsigned char *head;
    size_t len;
    unsigned char small[100];
    long n;

    (void)state;
    write_file(tmp_path("peek.gz"), gz.p, gz.n);
    assert_int_equal(input_open(tmp_path("peek.gz"), NULL, &s, &err), 0);
    assert_int_equal(input_peek(s, 4096, &head, &len, &err), 0);
    assert_int_equal(len, 4096);
    assert_memory_equal(head, text.p, 4096);
    assert_int_equal(op_stream_offset(s), 0);
    assert_int_equal(input_peek(s, 10, &head, &len, &err), 0);
    assert_int_equal(len, 10);
    assert_int_equal(slurp(s, &got, &err), 0);
    assert_int_equal(got.n, text.n);
    assert_memory_equal(got.p, text.p, text.n);
    input_close(s);
    /* a peek larger than the input, then read() in small pieces */
    assert_int_equal(input_open_mem("p", text.p, 1000, NULL, &s, &err), 0);
    assert_int_equal(input_peek(s, 4u << 20, &head, &len, &err), 0);
    assert_int_equal(len, 1000);
    got.n = 0;
    while ((n = op_stream_read(s, small, sizeof small, &err)) > 0)
        db_add(&got, small, (size_t)n);
    assert_int_equal(n, 0);
    assert_int_equal(got.n, 1000);
    assert_memory_equal(got.p, text.p, 1000);
    assert_int_equal(op_stream_offset(s), 1000);
    input_close(s);
    free(text.p);
    free(gz.p);
    free(got.p);
}

static void test_read_mixed(void **state)
{
    static const char text[] = "first\nsecond\nthird\n";
    op_stream *s = NULL;
    op_error err;
    const char *line;
    size_t len;
    char buf[4];

    (void)state;
    assert_int_equal(input_open_mem("m", text, sizeof text - 1, NULL, &s, &err),
                     0);
    assert_int_equal(op_stream_read(s, buf, 3, &err), 3);
    assert_memory_equal(buf, "fir", 3);
    assert_int_equal(op_stream_offset(s), 3);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
    assert_string_equal(line, "st");
    assert_int_equal(op_stream_read(s, buf, 4, &err), 4);
    assert_memory_equal(buf, "seco", 4);
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
    assert_string_equal(line, "nd");
    assert_int_equal(op_stream_read_line(s, &line, &len, &err), 1);
    assert_string_equal(line, "third");
    assert_int_equal(op_stream_read(s, buf, 4, &err), 0);
    input_close(s);
}

/* --- opening errors, stdin ---------------------------------------------- */

static void test_open_errors(void **state)
{
    op_stream *s = (op_stream *)1;
    op_error err;

    (void)state;
    assert_int_equal(input_open("/nonexistent/x.log", NULL, &s, &err),
                     OP_ENOTFOUND);
    assert_null(s);
    assert_non_null(strstr(err.msg, "/nonexistent/x.log: cannot open"));
    make_tmp_root();
    assert_int_equal(input_open(tmp_root, NULL, &s, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "is a directory"));
    assert_int_equal(input_open_mem("x.bz2", "BZh91AY&SY", 10, NULL, &s, &err),
                     OP_EPARSE);
    assert_non_null(strstr(err.msg, "x.bz2: compressed as bzip2"));
    assert_int_equal(input_open_mem("x.xz", "\xFD" "7zXZ\0\0\0", 8, NULL, &s,
                                    &err), OP_EPARSE);
    assert_non_null(strstr(err.msg, "xz"));
    /* nothing decodable: the peek reports it */
    assert_int_equal(input_open_mem("bad.lzf", "ZV\1\0\2\0\5\xff\xff", 9, NULL,
                                    &s, &err), 0);
    {
        const unsigned char *head;
        size_t len;
        assert_int_equal(input_peek(s, 4096, &head, &len, &err), OP_EPARSE);
        assert_non_null(strstr(err.msg, "bad.lzf: corrupt lzf stream"));
    }
    input_close(s);
    input_close(NULL);
}

static void test_stdin(void **state)
{
    dbuf text = make_text(40);
    dbuf gz = gzip_encode(text.p, text.n);
    dbuf got = {0};
    int fds[2], saved;
    op_stream *s = NULL;
    op_error err;

    (void)state;
    if (gz.n > 60000) {
        puts("test_stdin: data too large for a pipe buffer; skipped");
        skip();
    }
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(write(fds[1], gz.p, gz.n), (ssize_t)gz.n);
    close(fds[1]);
    saved = dup(STDIN_FILENO); /* -1 when the runner closed stdin */
    assert_int_equal(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
    close(fds[0]);
    assert_int_equal(input_open("-", NULL, &s, &err), 0);
    assert_string_equal(op_stream_name(s), "-");
    assert_string_equal(op_stream_codec(s), "gzip");
    assert_int_equal(slurp(s, &got, &err), 0);
    input_close(s);
    if (saved >= 0) {
        assert_int_equal(dup2(saved, STDIN_FILENO), STDIN_FILENO);
        close(saved);
    } else {
        close(STDIN_FILENO);
    }
    assert_int_equal(got.n, text.n);
    assert_memory_equal(got.p, text.p, text.n);
    free(text.p);
    free(gz.p);
    free(got.p);
}

/* --- hostile input: random damage never crashes ------------------------- */

static void damage_and_read(const char *name, const dbuf *clean, int rounds)
{
    input_limits lim;
    unsigned char *copy = malloc(clean->n);
    int r;

    input_limits_default(&lim);
    lim.max_bytes = 8u << 20;
    lim.max_line = 1u << 20;
    for (r = 0; r < rounds; r++) {
        size_t len = clean->n, k;
        int flips = (int)(rnd() % 4) + 1, i, rc;
        op_stream *s = NULL;
        op_error err;
        dbuf got = {0};
        memcpy(copy, clean->p, len);
        for (i = 0; i < flips; i++) {
            k = 8 + rnd() % (len - 8); /* keep the magic */
            copy[k] ^= (unsigned char)(1u << (rnd() % 8));
        }
        if (rnd() % 3 == 0)
            len = 8 + rnd() % (len - 8);
        op_error_clear(&err);
        if (input_open_mem(name, copy, len, &lim, &s, &err) != 0) {
            assert_non_null(strstr(err.msg, name));
            continue;
        }
        {
            const char *line;
            size_t n;
            while ((rc = op_stream_read_line(s, &line, &n, &err)) == 1)
                db_add(&got, line, n); /* may hold NUL bytes: no strlen */
        }
        if (rc < 0) {
            assert_true(err.code == OP_EPARSE || err.code == OP_ELIMIT);
            assert_non_null(strstr(err.msg, name));
        }
        input_close(s);
        free(got.p);
    }
    free(copy);
}

static void test_damaged_streams(void **state)
{
    dbuf text = make_text(300);
    dbuf gz = gzip_encode(text.p, text.n);
    dbuf zs = zstd_frames(text.p, text.n, 8000);
    dbuf l4 = {0}, sn = {0}, lf = {0};

    (void)state;
    lz4b_encode(&l4, text.p, text.n, 4096, 1);
    snappy_encode(&sn, text.p, text.n, 4096);
    lzf_encode(&lf, text.p, text.n);
    rng_state = 777;
    damage_and_read("d.gz", &gz, 300);
    damage_and_read("d.zstd", &zs, 300);
    damage_and_read("d.lz4", &l4, 300);
    damage_and_read("d.snappy", &sn, 300);
    damage_and_read("d.lzf", &lf, 300);
    free(text.p);
    free(gz.p);
    free(zs.p);
    free(l4.p);
    free(sn.p);
    free(lf.p);
}

/* --- the codec contract, byte by byte ----------------------------------- */

/* Drives a codec directly, handing it in_step more input bytes only when
 * it asks (no progress) and out_step bytes of room, so every header,
 * length and payload is split at every possible place. */
static void drip(const char *name, const dbuf *enc, const dbuf *want,
                 size_t in_step, size_t out_step)
{
    const codec_impl *c;
    void *st = NULL;
    op_error err;
    dbuf got = {0};
    unsigned char out[64];
    size_t fed = 0, pos = 0;
    int rc;

    assert_int_equal(codec_detect(enc->p, enc->n, name, &c, &err), 0);
    assert_int_equal(c->init(&st, name, &err), 0);
    for (;;) {
        codec_io io;
        memset(&io, 0, sizeof io);
        io.in = enc->p + pos;
        io.in_len = fed - pos;
        io.in_eof = fed == enc->n;
        io.in_base = pos;
        io.out = out;
        io.out_cap = out_step;
        io.name = name;
        rc = c->step(st, &io, &err);
        pos += io.in_pos;
        db_add(&got, out, io.out_pos);
        assert_int_not_equal(rc, CODEC_ERR);
        assert_int_not_equal(rc, CODEC_TRUNC);
        if (rc == CODEC_END)
            break;
        if (io.in_pos == 0 && io.out_pos == 0) {
            assert_true(fed < enc->n); /* asking for more: there is more */
            fed = enc->n - fed < in_step ? enc->n : fed + in_step;
        }
    }
    assert_int_equal(pos, enc->n);
    assert_int_equal(got.n, want->n);
    assert_memory_equal(got.p, want->p, want->n);
    c->free(st);
    free(got.p);
}

static void test_codec_drip(void **state)
{
    dbuf text = make_text(60);
    dbuf gz = gzip_encode(text.p, text.n);
    dbuf zs = zstd_frames(text.p, text.n, 3000);
    dbuf l4 = {0}, sn = {0}, lf = {0};
    static const size_t steps[][2] = {{1, 1}, {1, 64}, {7, 13}, {100, 64}};
    size_t i;

    (void)state;
    lz4b_encode(&l4, text.p, text.n, 2048, 1);
    lz4b_encode(&l4, text.p, 100, 2048, 0);
    snappy_encode(&sn, text.p, text.n, 2048);
    snappy_encode(&sn, text.p, 100, 2048);
    lzf_encode(&lf, text.p, text.n);
    for (i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        dbuf w2 = {0};
        db_add(&w2, text.p, text.n);
        db_add(&w2, text.p, 100);
        drip("d.gz", &gz, &text, steps[i][0], steps[i][1]);
        drip("d.zstd", &zs, &text, steps[i][0], steps[i][1]);
        drip("d.lz4", &l4, &w2, steps[i][0], steps[i][1]);
        drip("d.snappy", &sn, &w2, steps[i][0], steps[i][1]);
        drip("d.lzf", &lf, &text, steps[i][0], steps[i][1]);
        free(w2.p);
    }
    free(text.p);
    free(gz.p);
    free(zs.p);
    free(l4.p);
    free(sn.p);
    free(lf.p);
}

/* --- walk --------------------------------------------------------------- */

typedef struct walk_log {
    char seen[64][256];
    int n;
    char errs[8][256];
    int nerr;
    int stop_at;
} walk_log;

static int on_file(const char *file, void *ud)
{
    walk_log *w = ud;
    const char *rel = file + strlen(tmp_root) + 1;

    assert_true(w->n < 64);
    snprintf(w->seen[w->n++], 256, "%s", rel);
    return w->stop_at && w->n == w->stop_at ? 42 : 0;
}

static void on_walk_error(const char *file, const char *msg, void *ud)
{
    walk_log *w = ud;

    assert_true(w->nerr < 8);
    snprintf(w->errs[w->nerr++], 256, "%s|%s", file + strlen(tmp_root) + 1,
             msg);
}

static void mk(const char *rel)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", tmp_root, rel);
    if (rel[strlen(rel) - 1] == '/') {
        p[strlen(p) - 1] = 0;
        assert_int_equal(mkdir(p, 0755), 0);
    } else {
        write_file(p, "x\n", 2);
    }
}

static void test_walk(void **state)
{
    walk_log w;
    op_error err;
    char p[512], q[512];
    static const char *want[] = {
        "walk/B.log", "walk/a/1.log", "walk/a/10.log", "walk/a/2.log",
        "walk/b.log", "walk/c/d/deep.log", "walk/link-file",
    };
    size_t i;

    (void)state;
    make_tmp_root();
    mk("walk/");
    mk("walk/a/");
    mk("walk/a/2.log");
    mk("walk/a/10.log");
    mk("walk/a/1.log");
    mk("walk/b.log");
    mk("walk/B.log");
    mk("walk/.hidden");
    mk("walk/.git/");
    mk("walk/.git/config");
    mk("walk/c/");
    mk("walk/c/d/");
    mk("walk/c/d/deep.log");
    snprintf(p, sizeof p, "%s/walk/c/d/loop", tmp_root);
    assert_int_equal(symlink("../..", p), 0); /* back to walk/: a loop */
    snprintf(p, sizeof p, "%s/walk/dangling", tmp_root);
    assert_int_equal(symlink("nowhere", p), 0);
    snprintf(p, sizeof p, "%s/walk/link-file", tmp_root);
    snprintf(q, sizeof q, "%s/walk/b.log", tmp_root);
    assert_int_equal(symlink(q, p), 0);

    memset(&w, 0, sizeof w);
    snprintf(p, sizeof p, "%s/walk", tmp_root);
    assert_int_equal(input_walk(p, on_file, on_walk_error, &w, &err), 0);
    assert_int_equal(w.n, (int)(sizeof want / sizeof want[0]));
    for (i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_string_equal(w.seen[i], want[i]);
    assert_int_equal(w.nerr, 1);
    assert_non_null(strstr(w.errs[0], "walk/dangling|cannot read"));

    /* a trailing slash, no error callback, and stopping early */
    memset(&w, 0, sizeof w);
    w.stop_at = 2;
    snprintf(p, sizeof p, "%s/walk/", tmp_root);
    assert_int_equal(input_walk(p, on_file, NULL, &w, &err), 42);
    assert_int_equal(w.n, 2);
    assert_string_equal(w.seen[1], "walk/a/1.log");

    /* a file is visited as itself, even a hidden one given explicitly */
    memset(&w, 0, sizeof w);
    snprintf(p, sizeof p, "%s/walk/.hidden", tmp_root);
    assert_int_equal(input_walk(p, on_file, NULL, &w, &err), 0);
    assert_int_equal(w.n, 1);

    snprintf(p, sizeof p, "%s/walk/missing", tmp_root);
    assert_int_equal(input_walk(p, on_file, NULL, &w, &err), OP_ENOTFOUND);
    assert_non_null(strstr(err.msg, "walk/missing"));

    /* an unreadable directory inside is reported and skipped (root reads
     * everything, so only check it as a normal user) */
    if (geteuid() != 0) {
        mk("walk/locked/");
        mk("walk/locked/x.log");
        snprintf(p, sizeof p, "%s/walk/locked", tmp_root);
        assert_int_equal(chmod(p, 0), 0);
        memset(&w, 0, sizeof w);
        snprintf(p, sizeof p, "%s/walk", tmp_root);
        assert_int_equal(input_walk(p, on_file, on_walk_error, &w, &err), 0);
        assert_int_equal(w.nerr, 2);
        assert_non_null(strstr(w.errs[1], "walk/locked|cannot read directory"));
    }
}

/* Only regular files are inputs: a FIFO (which would block an open until
 * a writer comes), a device or a socket is refused by name, in a walk, in
 * a rolling folder and given directly. alarm(): a regression fails the
 * test instead of hanging it. */
static void test_special_files(void **state)
{
    walk_log w;
    op_error err;
    op_stream *s = (op_stream *)1;
    char p[512];
    size_t n;

    (void)state;
    make_tmp_root();
    alarm(30);
    mk("special/");
    mk("special/a.log");
    snprintf(p, sizeof p, "%s/special/fifo", tmp_root);
    assert_int_equal(mkfifo(p, 0600), 0);

    assert_int_equal(input_open(p, NULL, &s, &err), OP_EUSAGE);
    assert_null(s);
    assert_non_null(strstr(err.msg, "special/fifo: a FIFO, not a regular file"));
    assert_null(input_read_file(p, 1024, &n, &err));
    assert_non_null(strstr(err.msg, "special/fifo: a FIFO, not a regular file"));
    assert_int_equal(input_open("/dev/null", NULL, &s, &err), OP_EUSAGE);
    assert_non_null(strstr(err.msg, "/dev/null: a character device, not a regular file"));

    memset(&w, 0, sizeof w);
    snprintf(p, sizeof p, "%s/special", tmp_root);
    assert_int_equal(input_walk(p, on_file, on_walk_error, &w, &err), 0);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.seen[0], "special/a.log");
    assert_int_equal(w.nerr, 1);
    assert_string_equal(w.errs[0],
                        "special/fifo|a FIFO, not a regular file (skipped)");

    /* a FIFO where Spark writes its events files */
    mk("special/eventlog_v2_app-1/");
    mk("special/eventlog_v2_app-1/appstatus_app-1");
    snprintf(p, sizeof p, "%s/special/eventlog_v2_app-1/events_1_app-1", tmp_root);
    assert_int_equal(mkfifo(p, 0600), 0);
    snprintf(p, sizeof p, "%s/special/eventlog_v2_app-1", tmp_root);
    if (input_open_rolling(p, NULL, &s, &err) == 0) {
        const char *line;
        size_t len;
        assert_int_not_equal(op_stream_read_line(s, &line, &len, &err), 1);
        input_close(s);
    }
    assert_non_null(strstr(err.msg, "events_1_app-1: a FIFO, not a regular file"));
    alarm(0);
}

/* An empty folder: nothing to sort (qsort(NULL, 0) is undefined, and the
 * UBSan build aborts on it), no file, no error. */
static void test_walk_empty(void **state)
{
    walk_log w;
    op_error err;
    char p[512];

    (void)state;
    make_tmp_root();
    mk("empty/");
    memset(&w, 0, sizeof w);
    snprintf(p, sizeof p, "%s/empty", tmp_root);
    assert_int_equal(input_walk(p, on_file, on_walk_error, &w, &err), 0);
    assert_int_equal(w.n, 0);
    assert_int_equal(w.nerr, 0);
}

/* --- real Spark logs ---------------------------------------------------- */

typedef struct real_ctx {
    int files;
    int failures;
    int checked;
    dbuf sample; /* decoded spark2-eventlog.zstd */
} real_ctx;

/* Decoded sizes and line counts from shared/real/spark/SOURCES.md. */
static const struct {
    const char *suffix;
    uint64_t bytes, lines;
} known[] = {
    {"/spark2-eventlog.zstd", 109645, 58},
    {"/aqeshuffle_eventlog.zstd", 356025, 85},
    {"/eventlog_4nodes_8cores_dynamic_alloc.zstd", 2107243, 665},
    {"/malformed_json_eventlog.zstd", 1763951, 477},
    {"/tasks_executors_fail_compressed_eventlog.zstd", 36555789, 17717},
    {"/events_1_local-1623876083964.zstd", 10480446, 5370},
    {"/events_2_local-1623876083964.zstd", 951074, 251},
    {"/local-1422981780767", 68182, 82},
    {"/events_1_local-1766844910796", 112993, 15},
};

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && strcmp(s + a - b, suf) == 0;
}

static int on_real(const char *file, void *ud)
{
    real_ctx *rc = ud;
    op_stream *s = NULL;
    op_error err;
    const char *line;
    size_t len, i;
    int r;

    rc->files++;
    op_error_clear(&err);
    if (input_open(file, NULL, &s, &err)) {
        printf("  %s\n", err.msg);
        rc->failures++;
        return 0;
    }
    while ((r = op_stream_read_line(s, &line, &len, &err)) == 1) {
        if (ends_with(file, "/spark2-eventlog.zstd")) {
            db_add(&rc->sample, line, len);
            db_add(&rc->sample, "\n", 1);
        }
    }
    if (r < 0) {
        printf("  %s\n", err.msg);
        rc->failures++;
    }
    for (i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (!ends_with(file, known[i].suffix))
            continue;
        assert_int_equal(op_stream_offset(s), known[i].bytes);
        assert_int_equal(op_stream_line_no(s), known[i].lines);
        assert_int_equal(op_stream_truncated(s), 0);
        rc->checked++;
    }
    if (ends_with(file, ".zstd"))
        assert_string_equal(op_stream_codec(s), "zstd");
    input_close(s);
    return 0;
}

static void test_real_spark(void **state)
{
    char dir[1024];
    struct stat st;
    real_ctx rc;
    op_error err;
    dbuf l4 = {0}, sn = {0}, lf = {0}, gz, zs;

    (void)state;
    snprintf(dir, sizeof dir, "%s/spark", OP_REAL_DIR);
    if (stat(dir, &st) != 0) {
        printf("NOTICE: %s is absent; real Spark logs not tested\n", dir);
        skip();
    }
    memset(&rc, 0, sizeof rc);
    assert_int_equal(input_walk(dir, on_real, NULL, &rc, &err), 0);
    printf("  real: %d files read, %d checked against SOURCES.md\n", rc.files,
           rc.checked);
    assert_int_equal(rc.failures, 0);
    assert_true(rc.files >= 20);
    assert_int_equal(rc.checked, (int)(sizeof known / sizeof known[0]));
    /* the real Spark 2 log re-encoded in every Spark framing */
    assert_int_equal(rc.sample.n, 109645);
    lz4b_encode(&l4, rc.sample.p, rc.sample.n, 32 * 1024, 0);
    snappy_encode(&sn, rc.sample.p, rc.sample.n, 32 * 1024);
    lzf_encode(&lf, rc.sample.p, rc.sample.n);
    gz = gzip_encode(rc.sample.p, rc.sample.n);
    zs = zstd_frames(rc.sample.p, rc.sample.n, 3000);
    check_mem("real.lz4", l4.p, l4.n, &rc.sample, "lz4");
    check_mem("real.snappy", sn.p, sn.n, &rc.sample, "snappy");
    check_mem("real.lzf", lf.p, lf.n, &rc.sample, "lzf");
    check_mem("real.gz", gz.p, gz.n, &rc.sample, "gzip");
    check_mem("real.zstd", zs.p, zs.n, &rc.sample, "zstd");
    free(l4.p);
    free(sn.p);
    free(lf.p);
    free(gz.p);
    free(zs.p);
    free(rc.sample.p);
}

static int teardown_all(void **state)
{
    (void)state;
    if (tmp_root[0])
        rm_rf(tmp_root);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_lines),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_plain_file_long_lines),
        cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_gzip_truncated_and_corrupt),
        cmocka_unit_test(test_zstd),
        cmocka_unit_test(test_zstd_truncated_and_corrupt),
        cmocka_unit_test(test_zstd_bomb),
        cmocka_unit_test(test_xxh32),
        cmocka_unit_test(test_lz4_block),
        cmocka_unit_test(test_lz4_truncated_and_corrupt),
        cmocka_unit_test(test_lz4_frame),
        cmocka_unit_test(test_snappy),
        cmocka_unit_test(test_lzf_handmade),
        cmocka_unit_test(test_lzf_stream),
        cmocka_unit_test(test_line_cap),
        cmocka_unit_test(test_total_cap),
        cmocka_unit_test(test_read_all),
        cmocka_unit_test(test_peek_then_read),
        cmocka_unit_test(test_read_mixed),
        cmocka_unit_test(test_open_errors),
        cmocka_unit_test(test_stdin),
        cmocka_unit_test(test_damaged_streams),
        cmocka_unit_test(test_codec_drip),
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_special_files),
        cmocka_unit_test(test_walk_empty),
        cmocka_unit_test(test_real_spark),
    };

    return cmocka_run_group_tests(tests, NULL, teardown_all);
}
