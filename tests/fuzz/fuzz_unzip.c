/*
 * fuzz_unzip.c - libFuzzer target for the zip unpacker (core/unzip.c), the
 * one every zip from outside goes through (a .zip input, an upload to
 * `serve`, a History Server download): the bytes are an archive, unpacked
 * into a fresh private folder that is removed again after each input.
 * Whatever the archive says, nothing may be written outside that folder:
 * the target checks that the folder's parent holds only the folder.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unzip.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[] = "/tmp/optipipe-fuzz-unzip-XXXXXX";
static char zip_path[4200], out_dir[4200];

static void cleanup(void)
{
    util_remove_tree(root);
}

/* The parent of out_dir must hold the archive and out_dir alone. */
static void check_nothing_outside(void)
{
    DIR *d = opendir(root);
    struct dirent *e;

    if (!d)
        abort();
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
            strcmp(e->d_name, "a.zip") && strcmp(e->d_name, "out"))
            abort(); /* a member escaped its folder */
    closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    unzip_opts o = {0};
    unzip_result res;
    op_error err;
    FILE *f;

    if (!ready) {
        if (!mkdtemp(root))
            abort();
        snprintf(zip_path, sizeof zip_path, "%s/a.zip", root);
        snprintf(out_dir, sizeof out_dir, "%s/out", root);
        atexit(cleanup);
        ready = 1;
    }
    if (!(f = fopen(zip_path, "wb")) || fwrite(data, 1, size, f) != size ||
        fclose(f))
        abort();
    if (mkdir(out_dir, 0700))
        abort();
    o.archive_bytes = size;
    op_error_clear(&err);
    (void)unzip_to_dir(zip_path, out_dir, &o, &res, &err);
    check_nothing_outside();
    if (util_remove_tree(out_dir))
        abort();
    return 0;
}
