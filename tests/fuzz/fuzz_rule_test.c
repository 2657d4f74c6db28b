/*
 * fuzz_rule_test.c - libFuzzer target for the rule-test harness
 * (core/rule_test.c, what `optipipe rules test` runs): the input is a rule
 * file, its test file and a data file (fz.json, which the cases may name
 * as an input or a history run) joined by FUZZ_SEP, written into a pack
 * folder of their own; the harness loads the rule, evaluates the test
 * file in the sandbox and runs each case through the pipeline (inline
 * runs through the "model" plugin, history cases through a private run
 * store), under small limits. Whatever the files hold must end as passed or failed
 * cases, never as a crash, a hang or a leak of the host.
 *
 * The pack folder holds the bundled packs' lib/ modules (copied once), so
 * a bundled rule and its test (the seeds, seeds.py) load as in their own
 * pack. The sandbox runs in this process (isolate never): a fork per input
 * would hide crashes from the fuzzer. A case's input files are confined to
 * the pack folder (rule_test_opts.confine_inputs), so no mutation reads
 * the machine's files or waits on a device.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "rule_test.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The files the input is split into, in its order. */
static const char *const part_names[] = {"fz.lua", "fz_test.lua", "fz.json"};
#define NPARTS (sizeof part_names / sizeof part_names[0])

static char root[PATH_MAX];      /* the private folder, removed at exit */
static char pack[PATH_MAX + 8];  /* <root>/pack: the rule and its test */
static char test_path[PATH_MAX + 32];
static FILE *sink;               /* the harness's report: discarded */

static void die(const char *what)
{
    perror(what);
    abort(); /* the harness's set-up failed: no finding */
}

static void write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");

    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        die(path);
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    char buf[8192];
    size_t got;

    if (!in)
        die(from);
    if (!out)
        die(to);
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, got, out) != got)
            die(to);
    fclose(in);
    if (fclose(out) != 0)
        die(to);
}

/* Copies every rules/<pack>/lib/<name>.lua of the source tree into lib. */
static void copy_libs(const char *lib)
{
    char dir[PATH_MAX], from[PATH_MAX * 2], to[PATH_MAX * 2];
    DIR *packs, *d;
    struct dirent *p, *e;

    snprintf(dir, sizeof dir, "%s/rules", OP_SOURCE_DIR);
    if (!(packs = opendir(dir)))
        die(dir);
    while ((p = readdir(packs))) {
        char libdir[PATH_MAX + 300];
        if (p->d_name[0] == '.')
            continue;
        snprintf(libdir, sizeof libdir, "%s/%s/lib", dir, p->d_name);
        if (!(d = opendir(libdir)))
            continue;
        while ((e = readdir(d))) {
            size_t n = strlen(e->d_name);
            if (n < 5 || strcmp(e->d_name + n - 4, ".lua") != 0)
                continue;
            snprintf(from, sizeof from, "%s/%s", libdir, e->d_name);
            snprintf(to, sizeof to, "%s/%s", lib, e->d_name);
            copy_file(from, to);
        }
        closedir(d);
    }
    closedir(packs);
}

static int remove_one(const char *path, const struct stat *st, int flag,
                      struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void tear_down(void)
{
    nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A private folder: pack/ (with lib/) and home/lua (the SDK modules, as
 * op_home() names them for the harness). */
static void set_up(void)
{
    const char *tmp = getenv("TMPDIR");
    char path[PATH_MAX + 32];

    snprintf(root, sizeof root, "%s/optipipe-fuzz-rt-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root))
        die(root);
    atexit(tear_down);
    snprintf(pack, sizeof pack, "%s/pack", root);
    snprintf(path, sizeof path, "%s/lib", pack);
    if (mkdir(pack, 0700) || mkdir(path, 0700))
        die(pack);
    copy_libs(path);
    snprintf(path, sizeof path, "%s/home", root);
    if (mkdir(path, 0700))
        die(path);
    setenv("OPTIPIPE_HOME", path, 1);
    snprintf(path, sizeof path, "%s/home/lua", root);
    if (symlink(OP_SOURCE_DIR "/sdk/lua", path))
        die(path);
    snprintf(test_path, sizeof test_path, "%s/%s", pack, part_names[1]);
    if (!(sink = fopen("/dev/null", "w")))
        die("/dev/null");
}

/* Writes the i-th part of data (up to the i-th FUZZ_SEP; the last part
 * takes the rest, a missing one is empty) into the pack folder. */
static void write_parts(const uint8_t *data, size_t size)
{
    size_t seplen = strlen(FUZZ_SEP), start = 0, end, k, i;
    char path[PATH_MAX + 32];

    for (k = 0; k < NPARTS; k++) {
        end = size;
        for (i = start; k + 1 < NPARTS && i + seplen <= size; i++)
            if (memcmp(data + i, FUZZ_SEP, seplen) == 0) {
                end = i;
                break;
            }
        snprintf(path, sizeof path, "%s/%s", pack, part_names[k]);
        write_file(path, data + start, end - start);
        start = end < size ? end + seplen : size;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    rule_test_opts o;
    rule_test t;

    if (!ready) {
        set_up();
        ready = 1;
    }
    write_parts(data, size);
    memset(&o, 0, sizeof o);
    fuzz_limits(&o.limits);
    rule_limits_default(&o.rlimits);
    o.rlimits.mem_bytes = (size_t)32 << 20;
    o.rlimits.instructions = 2000000;
    o.rlimits.timeout_ms = 2000;
    o.rlimits.pack_timeout_ms = 4000;
    o.rlimits.isolate = 0;
    o.out = sink;
    o.confine_inputs = 1;
    rule_test_init(&t, &o);
    rule_test_path(&t, test_path);
    rule_test_free(&t);
    return 0;
}
