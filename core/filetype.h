/*
 * filetype.h - naming a file that no plugin reads, by its magic bytes
 * ("PNG image", "ZIP archive", "gzip of unrecognized text"), so a skipped
 * file is described in words a person knows instead of a codec's name.
 */
#ifndef OP_CORE_FILETYPE_H
#define OP_CORE_FILETYPE_H

#include <stddef.h>

/* The kind of data head[0..len) starts with: a name from the magic table,
 * else "unrecognized JSON", "unrecognized text" or "unrecognized binary
 * data" (an empty head: "empty file"). Static string. */
const char *filetype_name(const unsigned char *head, size_t len);

/* filetype_name() of the decoded head, prefixed by the compression when
 * codec is not "plain": "gzip of a PNG image" reads as the file is. Writes
 * into buf (cut to n) and returns buf. */
const char *filetype_describe(char *buf, size_t n, const char *codec,
                              const unsigned char *head, size_t len);

#endif
