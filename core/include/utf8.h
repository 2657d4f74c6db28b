/*
 * utf8.h - the one UTF-8 decoder of the core. Inputs are bytes from
 * outside: every writer that must emit valid UTF-8 (the JSON writer behind
 * the JSON report, SARIF and normalize; the text, Markdown and JUnit
 * escapers) and every check for control characters (ids in the builder,
 * keys and values of emitted patches) decodes through here, so a broken
 * sequence is treated the same everywhere: as U+FFFD, one byte at a time.
 */
#ifndef OP_CORE_UTF8_H
#define OP_CORE_UTF8_H

#include <stddef.h>
#include <stdint.h>

#define UTF8_REPLACEMENT 0xfffdu

/* Decodes the character at s (NUL-terminated). Returns its length in
 * bytes (0 at the end) and its code point in *cp; an invalid, overlong,
 * surrogate or truncated sequence yields length 1 and U+FFFD (*bad, when
 * not NULL, is set to 1 then and to 0 otherwise). */
size_t utf8_next(const char *s, uint32_t *cp, int *bad);

/* Whether cp is a control character: C0, DEL or C1 (U+0080..U+009F). */
int utf8_is_control(uint32_t cp);

/* Writes cp as UTF-8 into out (room for 4 bytes); returns the length. */
size_t utf8_put(char *out, uint32_t cp);

/* The byte offset in s of its first control character (see
 * utf8_is_control), or with broken_too of its first control character or
 * broken sequence, whichever comes first; -1 when there is none. *cp gets
 * that character (U+FFFD for a broken sequence). */
long utf8_find_control(const char *s, int broken_too, uint32_t *cp);

/* Writes s into buf (len bytes, always terminated) for a message: in
 * double quotes, with '"', '\\', control characters and broken bytes as
 * C escapes (\n, \t, \r, \xNN, \u0085; also U+2028 and U+2029), so the
 * text shows what s holds on one line; after max bytes of s it ends with "...". Returns buf. */
char *utf8_quote(char *buf, size_t len, const char *s, size_t max);

#endif
