/*
 * jsonw.h - a small streaming JSON writer for the reporters and normalize.
 *
 * Written instead of building a cJSON tree so that integers print exactly
 * (int64, not through a double), non-finite numbers become null, output
 * streams without holding the document, and indentation is stable for
 * golden-file tests.
 */
#ifndef OP_CORE_JSONW_H
#define OP_CORE_JSONW_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 64

typedef struct jw {
    FILE *f;
    int pretty;
    int depth;
    int count[JW_MAX_DEPTH]; /* items written at each depth */
    int after_key;
} jw;

/* Starts writing to f (borrowed). pretty: indent by two spaces. */
void jw_init(jw *w, FILE *f, int pretty);

void jw_obj(jw *w);
void jw_obj_end(jw *w);
void jw_arr(jw *w);
void jw_arr_end(jw *w);
void jw_key(jw *w, const char *key);
void jw_str(jw *w, const char *s);    /* NULL writes null */
void jw_int(jw *w, int64_t v);

/* v in decimal, as "%" PRId64 writes it, into buf (NUL-terminated);
 * returns its length. */
#define JW_INT_TEXT 24
size_t jw_int_text(char buf[JW_INT_TEXT], int64_t v);
void jw_num(jw *w, double v);         /* NaN and infinities write null */
void jw_bool(jw *w, int v);
void jw_null(jw *w);
void jw_cjson(jw *w, const cJSON *v); /* any cJSON value, recursively */
/* A JSON text (e.g. a run store column) as a value; null when text is
 * NULL or not JSON. */
void jw_json_text(jw *w, const char *text);

/* Writes s as a JSON string with quotes to f: always valid UTF-8 (a
 * broken sequence in s becomes U+FFFD, one per byte, see utf8.h), control
 * characters (C0, DEL, C1), '"' and '\\' escaped, and '<', '>', '&',
 * U+2028, U+2029 as \u escapes so output is safe inside HTML and
 * JavaScript. Keys (jw_key) and values (jw_str, jw_cjson) all pass here. */
void jw_write_string(FILE *f, const char *s);

#endif
