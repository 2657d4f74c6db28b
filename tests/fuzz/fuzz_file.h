/*
 * fuzz_file.h - for libFuzzer targets whose loader reads a path, not
 * bytes (config_load, srv_users_load): each input is written over one
 * private temporary file, made on the first call and removed at exit.
 * Header-only, like fuzz_common.h.
 */
#ifndef OP_FUZZ_FILE_H
#define OP_FUZZ_FILE_H

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static char fuzz_file_path[] = "/tmp/optipipe-fuzz-XXXXXX";

static void fuzz_file_remove(void)
{
    unlink(fuzz_file_path);
}

/* The path of the file now holding data[0..size) (aborts when it cannot
 * be written: the fuzz run is broken, not the input). */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;

    if (fd < 0) {
        fd = mkstemp(fuzz_file_path);
        if (fd < 0)
            abort();
        atexit(fuzz_file_remove);
    }
    if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    return fuzz_file_path;
}

#endif
