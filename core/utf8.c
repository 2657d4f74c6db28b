/*
 * utf8.c - UTF-8 decoding shared by every writer and check (utf8.h).
 */
#include "utf8.h"

#include <stdio.h>
#include <string.h>

size_t utf8_next(const char *s, uint32_t *cp, int *bad)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t len, i;
    uint32_t c, min;

    if (bad)
        *bad = 0;
    if (!*p)
        return 0;
    if (*p < 0x80) {
        *cp = *p;
        return 1;
    }
    if ((*p & 0xe0) == 0xc0)
        len = 2, c = *p & 0x1f, min = 0x80;
    else if ((*p & 0xf0) == 0xe0)
        len = 3, c = *p & 0x0f, min = 0x800;
    else if ((*p & 0xf8) == 0xf0)
        len = 4, c = *p & 0x07, min = 0x10000;
    else
        goto broken;
    for (i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            goto broken;
        c = (c << 6) | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        goto broken;
    *cp = c;
    return len;
broken:
    if (bad)
        *bad = 1;
    *cp = UTF8_REPLACEMENT;
    return 1;
}

int utf8_is_control(uint32_t cp)
{
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

size_t utf8_put(char *out, uint32_t cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

long utf8_find_control(const char *s, int broken_too, uint32_t *cp)
{
    const char *p = s;
    size_t k;
    int bad;

    for (; (k = utf8_next(p, cp, &bad)); p += k)
        if (bad ? broken_too : utf8_is_control(*cp))
            return (long)(p - s);
    return -1;
}

/* The escape for cp (a control or a broken byte b), or its UTF-8. */
static size_t quote_one(char *out, uint32_t cp, int bad, unsigned char b)
{
    if (bad)
        return (size_t)snprintf(out, 8, "\\x%02x", b);
    switch (cp) {
    case '\n': return (size_t)snprintf(out, 8, "\\n");
    case '\t': return (size_t)snprintf(out, 8, "\\t");
    case '\r': return (size_t)snprintf(out, 8, "\\r");
    case '"': return (size_t)snprintf(out, 8, "\\\"");
    case '\\': return (size_t)snprintf(out, 8, "\\\\");
    }
    if (cp < 0x80 && utf8_is_control(cp))
        return (size_t)snprintf(out, 8, "\\x%02x", (unsigned)cp);
    if (utf8_is_control(cp) || cp == 0x2028 || cp == 0x2029)
        return (size_t)snprintf(out, 8, "\\u%04x", (unsigned)cp);
    return utf8_put(out, cp);
}

char *utf8_quote(char *buf, size_t len, const char *s, size_t max)
{
    const char *start = s ? s : "", *p = start;
    size_t o = 0, k, n;
    char one[8];
    uint32_t cp;
    int bad;

    if (!len)
        return buf;
    if (len < 6) { /* no room for quotes and "..." */
        buf[0] = '\0';
        return buf;
    }
    buf[o++] = '"';
    while ((k = utf8_next(p, &cp, &bad))) {
        if ((size_t)(p - start) >= max)
            break;
        n = quote_one(one, cp, bad, (unsigned char)*p);
        if (o + n + 5 > len) /* '"', "..." and NUL must still fit */
            break;
        memcpy(buf + o, one, n);
        o += n;
        p += k;
    }
    buf[o++] = '"';
    if (*p) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}
