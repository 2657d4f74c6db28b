/*
 * fuzz_stream.c - libFuzzer target for core/input.c and every codec
 * (gzip, zstd, lz4 frame and lz4-java block, snappy framed and
 * snappy-java, lzf): the codec is sniffed from the raw bytes, then the
 * stream is drained by lines, as one document, or by small reads (chosen
 * by the first byte, which stays part of the input).
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input_limits lim;
    op_stream *s = NULL;
    op_error err;
    const unsigned char *head;
    const char *line;
    size_t len;
    char buf[257];
    unsigned mode = size ? data[0] % 3 : 0;

    fuzz_limits(&lim);
    op_error_clear(&err);
    if (input_open_mem("fuzz.in", data, size, &lim, &s, &err))
        return 0;
    if (input_peek(s, OP_PROBE_HEAD, &head, &len, &err))
        goto out;
    if (mode == 0) {
        while (op_stream_read_line(s, &line, &len, &err) > 0)
            ;
    } else if (mode == 1) {
        (void)op_stream_read_all(s, &line, &len, &err);
    } else {
        while (op_stream_read(s, buf, sizeof buf, &err) > 0)
            ;
    }
    (void)input_warning(s);
    (void)op_stream_truncated(s);
out:
    input_close(s);
    return 0;
}
