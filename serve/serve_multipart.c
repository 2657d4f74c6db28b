/*
 * serve_multipart.c - the streaming multipart/form-data parser of
 * serve_multipart.h. The body is read as if it began with CRLF, so the
 * first boundary needs no special case: every delimiter is
 * CRLF "--" boundary. Part bodies are searched for it with memchr on CR;
 * since a boundary holds neither CR nor LF, a partial match that fails
 * can only restart at the failing byte, so the held-back bytes (a prefix
 * of the delimiter) are plain data and a delimiter split across any two
 * feeds is still found.
 */
#include "serve_multipart.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum mp_state {
    MP_PREAMBLE, /* before the first delimiter: discarded */
    MP_BODY,     /* a part's body: delivered */
    MP_DELIM,    /* just after a delimiter */
    MP_DASH,     /* after "-": a second one ends the body */
    MP_PAD,      /* blanks after a delimiter */
    MP_CR,       /* CR of the boundary line: LF next */
    MP_HEADERS,  /* a part's header block */
    MP_EPILOGUE, /* after the final delimiter: ignored */
    MP_ERROR
};

struct mp_parser {
    const mp_callbacks *cb;
    void *ud;
    char delim[4 + MP_BOUNDARY_MAX + 1]; /* CRLF "--" boundary */
    size_t dlen, match;   /* delim[0..match) seen and held back */
    enum mp_state state;
    uint64_t off;         /* bytes consumed so far */
    uint64_t skipped;     /* preamble, padding or epilogue bytes */
    uint64_t part_off;    /* where the current header block began */
    char hbuf[MP_HEADER_MAX + 1];
    size_t hlen, line_start, nlines;
    char vals[MP_HEADER_MAX + 4]; /* decoded name, filename, type */
    size_t vlen;
    char part[64];        /* the current part's name, for messages */
    op_error err;         /* the error, repeated after MP_ERROR */
};

/* ---- errors ----------------------------------------------------------------- */

static int fail_at(mp_parser *p, op_error *err, int code, uint64_t at,
                   const char *fmt, ...) OP_PRINTF(5, 6);

static int fail_at(mp_parser *p, op_error *err, int code, uint64_t at,
                   const char *fmt, ...)
{
    char what[OP_ERROR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    p->state = MP_ERROR;
    op_error_set(&p->err, code, "multipart: byte %" PRIu64 ": %s", at, what);
    if (err)
        *err = p->err;
    return code;
}

/* A callback failed: its message stands as it is. */
static int fail_cb(mp_parser *p, op_error *err, int code)
{
    p->state = MP_ERROR;
    if (err) {
        err->code = code;
        p->err = *err;
    } else {
        op_error_set(&p->err, code, "multipart: upload refused");
    }
    return code;
}

/* A byte as a message shows it: 'x' or 0x0a. */
static const char *show_byte(unsigned char c, char buf[8])
{
    if (c > 0x20 && c < 0x7f)
        snprintf(buf, 8, "'%c'", c);
    else
        snprintf(buf, 8, "0x%02x", c);
    return buf;
}

/* ---- the boundary ------------------------------------------------------------ */

/* RFC 2046 bchars: a boundary holds no CR, LF or quote (the search above
 * depends on it), and a space is allowed but not last. */
static int bchar(unsigned char c)
{
    return isalnum(c) || (c && strchr("'()+_,-./:=? ", c));
}

static int boundary_ok(const char *b, size_t n)
{
    size_t i;

    if (n < 1 || n > MP_BOUNDARY_MAX || b[n - 1] == ' ')
        return 0;
    for (i = 0; i < n; i++)
        if (!bchar((unsigned char)b[i]))
            return 0;
    return 1;
}

static const char *skip_ows(const char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

int mp_boundary(const char *ct, char out[MP_BOUNDARY_MAX + 1], op_error *err)
{
    const char *s = ct ? strchr(ct, ';') : NULL;
    size_t n = 0;
    int found = 0;

    while (s && *s == ';') {
        const char *name = skip_ows(s + 1), *eq = name + strcspn(name, "=;");
        const char *v;
        char val[MP_BOUNDARY_MAX + 2];

        if (*eq != '=') {
            s = strchr(eq, ';');
            continue;
        }
        v = skip_ows(eq + 1);
        n = 0;
        if (*v == '"') {
            for (v++; *v && *v != '"'; v++) {
                if (*v == '\\' && v[1])
                    v++;
                if (n <= MP_BOUNDARY_MAX)
                    val[n++] = *v;
            }
            if (*v != '"')
                return op_error_set(err, OP_EPARSE, "multipart: the boundary's "
                                    "quoted string is not closed");
            v++;
        } else {
            for (; *v && *v != ';' && *v != ' ' && *v != '\t'; v++)
                if (n <= MP_BOUNDARY_MAX)
                    val[n++] = *v;
        }
        val[n] = '\0';
        if ((size_t)(eq - name) == 8 && !strncasecmp(name, "boundary", 8)) {
            if (found)
                return op_error_set(err, OP_EPARSE,
                                    "multipart: two boundary parameters");
            if (!boundary_ok(val, n))
                return op_error_set(err, OP_EPARSE, "multipart: the boundary "
                                    "must be 1 to %d of RFC 2046's characters "
                                    "(letters, digits, '()+_,-./:=? and inner "
                                    "spaces)", MP_BOUNDARY_MAX);
            memcpy(out, val, n + 1);
            found = 1;
        }
        s = strchr(v, ';');
    }
    if (!found)
        return op_error_set(err, OP_EPARSE, "multipart: the Content-Type "
                            "names no boundary parameter");
    return 0;
}

int mp_new(const char *boundary, const mp_callbacks *cb, void *ud,
           mp_parser **out, op_error *err)
{
    size_t n = boundary ? strlen(boundary) : 0;
    mp_parser *p;

    *out = NULL;
    if (!boundary_ok(boundary ? boundary : "", n))
        return op_error_set(err, OP_EUSAGE, "multipart: bad boundary");
    p = calloc(1, sizeof *p);
    if (!p)
        return op_error_set(err, OP_ENOMEM, "multipart: out of memory");
    p->cb = cb;
    p->ud = ud;
    memcpy(p->delim, "\r\n--", 4);
    memcpy(p->delim + 4, boundary, n + 1);
    p->dlen = 4 + n;
    p->match = 2; /* the body reads as if it began with CRLF */
    p->state = MP_PREAMBLE;
    *out = p;
    return 0;
}

void mp_free(mp_parser *p)
{
    free(p);
}

/* ---- part headers --------------------------------------------------------------- */

static int tchar(unsigned char c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* Copies a decoded value into p->vals; returns it. Decoded values are no
 * longer than the header block they come from, so it always fits. */
static char *val_begin(mp_parser *p)
{
    return p->vals + p->vlen;
}

static void val_put(mp_parser *p, char c)
{
    if (p->vlen < sizeof p->vals - 1)
        p->vals[p->vlen++] = c;
}

static char *val_end(mp_parser *p, char *start)
{
    val_put(p, '\0');
    return start;
}

/* A parameter value at *sp: a quoted string (\" and \\ are escapes; a
 * backslash before anything else is kept, as browsers send Windows paths
 * unescaped) or a token. NULL with *why on error. */
static char *param_value(mp_parser *p, const char **sp, const char **why)
{
    const char *s = *sp;
    char *v = val_begin(p);

    if (*s == '"') {
        for (s++; *s && *s != '"'; s++) {
            if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
                s++;
            val_put(p, *s);
        }
        if (*s != '"') {
            *why = "a quoted string is not closed";
            return NULL;
        }
        s++;
    } else {
        for (; *s && *s != ';' && *s != ' ' && *s != '\t'; s++)
            val_put(p, *s);
        if (s == *sp) {
            *why = "a parameter has no value";
            return NULL;
        }
    }
    *sp = s;
    return val_end(p, v);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = (char)tolower((unsigned char)c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* RFC 8187 ext-value in place: UTF-8'lang'percent-encoded. */
static int ext_value(char *v, const char **why)
{
    char *q = strchr(v, '\''), *r, *o = v;

    if (!q || !(r = strchr(q + 1, '\''))) {
        *why = "filename* is not charset'language'value";
        return -1;
    }
    if ((size_t)(q - v) != 5 || strncasecmp(v, "utf-8", 5)) {
        *why = "filename* has a charset other than UTF-8";
        return -1;
    }
    for (r++; *r; r++) {
        if (*r == '%') {
            int h = hexval(r[1]), l = h < 0 ? -1 : hexval(r[2]);
            if (l < 0 || (h == 0 && l == 0)) {
                *why = "filename* has a bad or NUL %-escape";
                return -1;
            }
            *o++ = (char)(h * 16 + l);
            r += 2;
        } else {
            *o++ = *r;
        }
    }
    *o = '\0';
    return 0;
}

/* Content-Disposition: form-data; name=...; filename=...; filename*=... */
static const char *disposition(mp_parser *p, const char *s, mp_part *part)
{
    const char *why = NULL, *t = s, *fstar = NULL;

    while (tchar((unsigned char)*t))
        t++;
    if (t - s != 9 || strncasecmp(s, "form-data", 9))
        return "Content-Disposition is not form-data";
    for (s = skip_ows(t); *s; s = skip_ows(s)) {
        const char *name;
        size_t nlen;
        char *v;

        if (*s != ';')
            return "Content-Disposition parameters must be separated by ';'";
        name = s = skip_ows(s + 1);
        if (!*s)
            break;
        while (tchar((unsigned char)*s))
            s++;
        nlen = (size_t)(s - name);
        s = skip_ows(s);
        if (!nlen || *s != '=')
            return "a Content-Disposition parameter is not name=value";
        s = skip_ows(s + 1);
        if (!(v = param_value(p, &s, &why)))
            return why;
        if (nlen == 4 && !strncasecmp(name, "name", 4)) {
            if (part->name)
                return "two name parameters";
            part->name = v;
        } else if (nlen == 8 && !strncasecmp(name, "filename", 8)) {
            if (part->filename)
                return "two filename parameters";
            part->filename = v;
        } else if (nlen == 9 && !strncasecmp(name, "filename*", 9)) {
            if (fstar)
                return "two filename* parameters";
            if (ext_value(v, &why))
                return why;
            fstar = v;
        }
    }
    if (fstar)
        part->filename = fstar; /* RFC 6266: the extended form wins */
    if (!part->name)
        return "Content-Disposition has no name parameter";
    return NULL;
}

/* A part name as messages show it: printable ASCII, no quote, cut. */
static void shown_name(const char *name, char *out, size_t n)
{
    size_t i;

    for (i = 0; name[i] && i + 1 < n; i++)
        out[i] = name[i] > 0x20 && name[i] < 0x7f && name[i] != '\''
                     ? name[i]
                     : '?';
    out[i] = '\0';
}

/* Parses the complete header block (lines NUL-terminated in place) and
 * starts the part. */
static int headers_done(mp_parser *p, op_error *err)
{
    mp_part part = {0};
    size_t at = 0;
    int have_cd = 0;

    p->vlen = 0;
    part.offset = p->part_off;
    while (at < p->hlen) {
        char *line = p->hbuf + at, *colon, *v, *e;
        const char *why = NULL;
        uint64_t where = p->part_off + at;
        size_t len = strlen(line);

        at += len + 2; /* the line and its CRLF (CR made NUL) */
        if (!len)
            break;
        if (*line == ' ' || *line == '\t')
            return fail_at(p, err, OP_EPARSE, where,
                           "a folded (continued) header line");
        for (colon = line; tchar((unsigned char)*colon); colon++)
            ;
        if (colon == line || *colon != ':')
            return fail_at(p, err, OP_EPARSE, where,
                           "a part header line is not 'Name: value'");
        *colon = '\0';
        v = (char *)skip_ows(colon + 1);
        for (e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t'); e--)
            ;
        *e = '\0';
        if (!strcasecmp(line, "Content-Disposition")) {
            if (have_cd++)
                why = "two Content-Disposition headers";
            else
                why = disposition(p, v, &part);
        } else if (!strcasecmp(line, "Content-Type")) {
            if (part.content_type)
                why = "two Content-Type headers";
            part.content_type = v;
        }
        if (why)
            return fail_at(p, err, OP_EPARSE, where, "%s", why);
    }
    if (!have_cd)
        return fail_at(p, err, OP_EPARSE, p->part_off,
                       "a part without a Content-Disposition header");
    shown_name(part.name, p->part, sizeof p->part);
    p->state = MP_BODY;
    p->match = 0;
    if (p->cb->begin) {
        int rc = p->cb->begin(p->ud, &part, err);
        if (rc)
            return fail_cb(p, err, rc);
    }
    return 0;
}

/* One byte of a header block. */
static int header_byte(mp_parser *p, unsigned char c, op_error *err)
{
    char b[8];
    int after_cr = p->hlen && p->hbuf[p->hlen - 1] == '\0';

    if (p->hlen >= MP_HEADER_MAX)
        return fail_at(p, err, OP_ELIMIT, p->off, "part headers over %u bytes",
                       MP_HEADER_MAX);
    if (after_cr && c != '\n')
        return fail_at(p, err, OP_EPARSE, p->off, "CR not followed by LF in "
                       "the part headers");
    if (c == '\n') {
        if (!after_cr)
            return fail_at(p, err, OP_EPARSE, p->off, "a bare LF in the part "
                           "headers (lines end in CRLF)");
        p->hbuf[p->hlen++] = '\n'; /* the CR before it is the NUL */
        if (p->hlen - 2 == p->line_start)
            return headers_done(p, err);
        if (++p->nlines > MP_HEADER_LINES)
            return fail_at(p, err, OP_ELIMIT, p->off, "a part has more than %d "
                           "header lines", MP_HEADER_LINES);
        p->line_start = p->hlen;
        return 0;
    }
    if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
        return fail_at(p, err, OP_EPARSE, p->off, "control byte %s in the part "
                       "headers", show_byte(c, b));
    p->hbuf[p->hlen++] = c == '\r' ? '\0' : (char)c;
    return 0;
}

/* ---- the byte stream ------------------------------------------------------------ */

/* Bytes before a delimiter: a part's data, or preamble to skip. */
static int emit(mp_parser *p, const char *buf, size_t n, op_error *err)
{
    int rc;

    if (!n)
        return 0;
    if (p->state == MP_PREAMBLE) {
        p->skipped += n;
        if (p->skipped > MP_PREAMBLE_MAX)
            return fail_at(p, err, OP_ELIMIT, p->off, "no boundary in the first "
                           "%u bytes (preamble limit)", MP_PREAMBLE_MAX);
        return 0;
    }
    if (p->cb->data && (rc = p->cb->data(p->ud, buf, n, err)) != 0)
        return fail_cb(p, err, rc);
    return 0;
}

/* A delimiter was matched: the part before it (if any) ends. */
static int delimiter(mp_parser *p, op_error *err)
{
    int in_part = p->state == MP_BODY, rc;

    p->state = MP_DELIM;
    p->match = 0;
    p->skipped = 0;
    if (in_part && p->cb->end && (rc = p->cb->end(p->ud, err)) != 0)
        return fail_cb(p, err, rc);
    return 0;
}

/* Searches data[*i..len) for the delimiter, emitting what precedes it. */
static int scan(mp_parser *p, const char *data, size_t len, size_t *i,
                op_error *err)
{
    const char *d = data + *i;
    int rc;

    if (p->match == 0) {
        const char *cr = memchr(d, '\r', len - *i);
        size_t n = cr ? (size_t)(cr - d) : len - *i;

        p->off += n;
        *i += n;
        if ((rc = emit(p, d, n, err)) != 0 || !cr)
            return rc;
        p->match = 1;
        p->off++;
        (*i)++;
        return 0;
    }
    if (*d == p->delim[p->match]) {
        p->match++;
        p->off++;
        (*i)++;
        return p->match == p->dlen ? delimiter(p, err) : 0;
    }
    /* no restart inside the held prefix: only delim[0] is a CR */
    rc = emit(p, p->delim, p->match, err);
    p->match = 0;
    return rc;
}

/* One byte of the boundary line after a delimiter, or of the epilogue. */
static int line_byte(mp_parser *p, unsigned char c, op_error *err)
{
    char b[8];

    switch (p->state) {
    case MP_DELIM:
        if (c == '-') {
            p->state = MP_DASH;
            return 0;
        }
        /* fall through */
    case MP_PAD:
        if (c == ' ' || c == '\t') {
            p->state = MP_PAD;
            if (++p->skipped > MP_PADDING_MAX)
                return fail_at(p, err, OP_ELIMIT, p->off, "more than %d blanks "
                               "after a boundary", MP_PADDING_MAX);
            return 0;
        }
        if (c == '\r') {
            p->state = MP_CR;
            return 0;
        }
        return fail_at(p, err, OP_EPARSE, p->off, "a boundary is followed by "
                       "%s, not CRLF or \"--\"", show_byte(c, b));
    case MP_DASH:
        if (c != '-')
            return fail_at(p, err, OP_EPARSE, p->off, "a boundary is followed "
                           "by '-' and %s, not \"--\"", show_byte(c, b));
        p->state = MP_EPILOGUE;
        p->skipped = 0;
        return 0;
    case MP_CR:
        if (c != '\n')
            return fail_at(p, err, OP_EPARSE, p->off, "a boundary line ends in "
                           "CR and %s, not CRLF", show_byte(c, b));
        p->state = MP_HEADERS;
        p->hlen = p->line_start = p->nlines = 0;
        p->part_off = p->off + 1;
        return 0;
    default: /* MP_EPILOGUE */
        if (++p->skipped > MP_EPILOGUE_MAX)
            return fail_at(p, err, OP_ELIMIT, p->off, "more than %u bytes after "
                           "the final boundary (epilogue limit)",
                           MP_EPILOGUE_MAX);
        return 0;
    }
}

int mp_feed(mp_parser *p, const char *data, size_t len, op_error *err)
{
    size_t i = 0;
    int rc = 0;

    while (i < len && !rc) {
        switch (p->state) {
        case MP_ERROR:
            if (err)
                *err = p->err;
            return p->err.code;
        case MP_PREAMBLE:
        case MP_BODY:
            rc = scan(p, data, len, &i, err);
            continue;
        case MP_EPILOGUE:
            if (len - i > MP_EPILOGUE_MAX - p->skipped) {
                p->off += MP_EPILOGUE_MAX - p->skipped;
                p->skipped = MP_EPILOGUE_MAX;
                return line_byte(p, 0, err);
            }
            p->skipped += len - i;
            p->off += len - i;
            return 0;
        case MP_HEADERS:
            rc = header_byte(p, (unsigned char)data[i], err);
            break;
        default:
            rc = line_byte(p, (unsigned char)data[i], err);
            break;
        }
        p->off++;
        i++;
    }
    if (p->state == MP_ERROR && err)
        *err = p->err;
    return rc;
}

int mp_finish(mp_parser *p, op_error *err)
{
    switch (p->state) {
    case MP_EPILOGUE:
        return 0;
    case MP_ERROR:
        if (err)
            *err = p->err;
        return p->err.code;
    case MP_PREAMBLE:
        return fail_at(p, err, OP_EPARSE, p->off, "the body ends before the "
                       "first boundary");
    case MP_BODY:
        return fail_at(p, err, OP_EPARSE, p->off, "the body ends inside part "
                       "'%s', before the final boundary", p->part);
    default:
        return fail_at(p, err, OP_EPARSE, p->off, "the body ends before the "
                       "final boundary");
    }
}
