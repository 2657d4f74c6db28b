/*
 * filetype.c - the one table of magic bytes that names files no plugin
 * reads (filetype.h). Compressions are codec.c's business; this names
 * what is inside them.
 */
#include "filetype.h"

#include <stdio.h>
#include <string.h>

static const struct magic {
    const char *name;
    const char *bytes;
    size_t len;
    size_t at; /* offset of the magic in the file */
} magic[] = { /* magics under 4 bytes name only binary data */
    {"PNG image", "\x89PNG\r\n\x1a\n", 8, 0},
    {"JPEG image", "\xff\xd8\xff", 3, 0},
    {"GIF image", "GIF8", 4, 0},
    {"WebP image", "WEBP", 4, 8},
    {"PDF document", "%PDF-", 5, 0},
    {"ZIP archive", "PK\x03\x04", 4, 0},
    {"ZIP archive", "PK\x05\x06", 4, 0},
    {"tar archive", "ustar", 5, 257},
    {"7-Zip archive", "7z\xbc\xaf\x27\x1c", 6, 0},
    {"ELF binary", "\x7f" "ELF", 4, 0},
    {"Mach-O binary", "\xcf\xfa\xed\xfe", 4, 0},
    {"Windows executable", "MZ", 2, 0},
    {"Java class file", "\xca\xfe\xba\xbe", 4, 0},
    {"Parquet file", "PAR1", 4, 0},
    {"Avro file", "Obj\x01", 4, 0},
    {"ORC file", "ORC", 3, 0},
    {"SQLite database", "SQLite format 3", 15, 0},
    {"gzip data", "\x1f\x8b", 2, 0},
    {"bzip2 data", "BZh", 3, 0},
    {"xz data", "\xfd" "7zXZ", 5, 0},
    {"zstd data", "\x28\xb5\x2f\xfd", 4, 0},
};

/* Whether head looks like text: no NUL and few other control bytes. */
static int is_text(const unsigned char *head, size_t len)
{
    size_t i, odd = 0;

    for (i = 0; i < len; i++) {
        if (!head[i])
            return 0;
        odd += head[i] < 0x20 && head[i] != '\n' && head[i] != '\r' &&
               head[i] != '\t' && head[i] != '\f';
    }
    return odd * 20 <= len;
}

const char *filetype_name(const unsigned char *head, size_t len)
{
    size_t i;

    if (!len)
        return "empty file";
    for (i = 0; i < sizeof magic / sizeof magic[0]; i++) {
        const struct magic *m = &magic[i];
        if (m->at + m->len <= len &&
            memcmp(head + m->at, m->bytes, m->len) == 0 &&
            (m->len >= 4 || !is_text(head, len)))
            return m->name;
    }
    if (!is_text(head, len))
        return "unrecognized binary data";
    for (i = 0; i < len && strchr(" \t\r\n", head[i]); i++)
        ;
    if (i < len && (head[i] == '{' || head[i] == '['))
        return "unrecognized JSON";
    return "unrecognized text";
}

const char *filetype_describe(char *buf, size_t n, const char *codec,
                              const unsigned char *head, size_t len)
{
    const char *what = filetype_name(head, len);

    if (!codec || strcmp(codec, "plain") == 0)
        snprintf(buf, n, "%s", what);
    else
        snprintf(buf, n, "%s of %s", codec, what);
    return buf;
}
