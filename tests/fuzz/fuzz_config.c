/*
 * fuzz_config.c - libFuzzer target for the config loader (core/config.c
 * over core/luadata.c): the bytes are an optipipe.lua evaluated in the
 * data sandbox and checked for shape. config_load reads a path, so each
 * input is written to one private temporary file first.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char tmp_path[] = "/tmp/optipipe-fuzz-config-XXXXXX";

static void remove_tmp(void)
{
    unlink(tmp_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    config c;
    op_error err;

    if (fd < 0) {
        fd = mkstemp(tmp_path);
        if (fd < 0)
            abort();
        atexit(remove_tmp);
    }
    if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    op_error_clear(&err);
    (void)config_load(tmp_path, &c, &err);
    config_free(&c); /* also after a failure: the load may have filled part */
    return 0;
}
