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

#include "fuzz_file.h"

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    config c;
    op_error err;
    const char *path = fuzz_file(data, size);

    op_error_clear(&err);
    (void)config_load(path, &c, &err);
    config_free(&c); /* also after a failure: the load may have filled part */
    return 0;
}
