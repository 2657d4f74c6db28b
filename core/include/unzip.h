/*
 * unzip.h - unpacking a zip archive from outside (a History Server
 * download, a .zip given to analyze) into a folder, with the defences an
 * archive from anywhere needs (unzip.c). One unpacker for every caller.
 */
#ifndef OP_CORE_UNZIP_H
#define OP_CORE_UNZIP_H

#include <stddef.h>
#include <stdint.h>

#include <optipipe/stream.h>

#define UNZIP_MAX_MEMBERS 100000
#define UNZIP_RATIO_MAX 100               /* unpacked bytes per zip byte */
#define UNZIP_RATIO_FLOOR (1ull << 20)    /* always allowed, per member and in all */
#define UNZIP_TOTAL_MAX (64ull << 30)     /* bytes unpacked from one archive */
#define UNZIP_NAME_MAX 1024               /* bytes of a member's name */

typedef struct unzip_opts {
    uint64_t archive_bytes; /* the zip's size: the whole archive's ratio cap */
    /* A member refused (not unpacked): its name (raw, from the archive:
     * sanitize before printing) and why. May be NULL. */
    void (*refused)(void *ud, const char *member, const char *why);
    /* Optional: registers a file about to be written so that a signal
     * removes it (returns a slot, -1 with errno), and drops it (removing
     * the file when remove). Both NULL: nothing registered. */
    int (*track)(const char *path);
    void (*untrack)(int slot, int remove);
    void *ud;
} unzip_opts;

typedef struct unzip_result {
    size_t files;      /* members written */
    size_t refused;    /* members refused (each told to o->refused) */
    size_t left;       /* members not looked at: the archive's cap was met */
    size_t skipped;    /* macOS Finder metadata (__MACOSX/, ._name): not
                        * unpacked, not refused */
    uint64_t unpacked; /* bytes written */
} unzip_result;

/* Unpacks the archive at zip_path into the existing folder dir. Every
 * member is checked before a byte is written: a relative name of plain
 * components (no "", ".", "..", no leading '/', no '\\' or control
 * characters, at most UNZIP_NAME_MAX bytes), a regular file or folder (no
 * symlink or device), not encrypted, never written through anything but a
 * real folder; its bytes within UNZIP_RATIO_MAX:1 of its compressed size
 * and its declared size, and all of them within UNZIP_RATIO_MAX:1 of
 * o->archive_bytes and UNZIP_TOTAL_MAX. A refused member is skipped (the
 * others still unpacked); once the archive's cap is met the rest is left.
 * Returns 0 with *res, or an op_status with err (zip_path not a readable
 * zip archive, or more than UNZIP_MAX_MEMBERS members: nothing unpacked;
 * the message starts with zip_path). */
int unzip_to_dir(const char *zip_path, const char *dir, const unzip_opts *o,
                 unzip_result *res, op_error *err);

/* Whether the file at path is a regular file that starts as a zip archive
 * with a member ("PK\3\4"; an empty one, "PK\5\6", holds nothing to
 * read); never blocks on a FIFO. */
int unzip_is_zip(const char *path);

/* The file members of the zip at path, 0 when it cannot be read or holds
 * more than UNZIP_MAX_MEMBERS: for counting only. */
size_t unzip_count(const char *path);

#endif
