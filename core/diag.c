/*
 * diag.c - diagnostics on stderr (see diag.h): formatted into a bounded
 * buffer, then written through the terminal cleaner, one line each.
 */
#include "diag.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_util.h"

#define DIAG_MAX 8192 /* a message longer than this is cut */

static int quiet;
static FILE *stream;

void diag_set_quiet(int q)
{
    quiet = q;
}

void diag_set_stream(FILE *f)
{
    stream = f;
}

/* s cleaned, but its tabs kept: a rule's print() separates its values so. */
static void put_keep_tabs(FILE *f, const char *s)
{
    char part[DIAG_MAX];
    const char *tab;

    while ((tab = strchr(s, '\t')) && (size_t)(tab - s) < sizeof part) {
        memcpy(part, s, (size_t)(tab - s));
        part[tab - s] = '\0';
        report_term_put(f, part);
        fputc('\t', f);
        s = tab + 1;
    }
    report_term_put(f, s);
}

/* The one writer: prefix (already formatted, may be NULL) and body. */
static void emit(diag_level lv, const char *file, uint64_t line,
                 const char *prefix, const char *body)
{
    static const char *const word[] = {"note", "warning", "error", "output"};
    FILE *f = stream ? stream : stderr;

    if (quiet && (lv == DIAG_NOTE || lv == DIAG_WARNING))
        return;
    if (file) {
        report_term_put(f, file);
        if (line)
            fprintf(f, ":%llu", (unsigned long long)line);
        fprintf(f, ": %s: ", word[lv]);
    }
    if (prefix)
        fputs(prefix, f);
    if (lv == DIAG_OUTPUT)
        put_keep_tabs(f, body);
    else
        report_term_put(f, body);
    fputc('\n', f);
    fflush(f);
}

/* Formats fmt into a bounded buffer and emits it after prefix. */
static void vemit(diag_level lv, const char *prefix, const char *fmt,
                  va_list ap) OP_PRINTF(3, 0);

static void vemit(diag_level lv, const char *prefix, const char *fmt,
                  va_list ap)
{
    char msg[DIAG_MAX];

    vsnprintf(msg, sizeof msg, fmt, ap);
    emit(lv, NULL, 0, prefix, msg);
}

void diag_msg(diag_level lv, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vemit(lv, "optipipe: ", fmt, ap);
    va_end(ap);
}

void diag_line(diag_level lv, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vemit(lv, NULL, fmt, ap);
    va_end(ap);
}

void diag_part(const char *fmt, ...)
{
    char msg[DIAG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    report_term_put(stream ? stream : stderr, msg);
}

/* "line N: rest" -> N and rest; 0 when msg does not start so. */
static uint64_t line_prefix(const char *msg, const char **rest)
{
    uint64_t n = 0;
    size_t i = 5, digits = 0;

    if (strncmp(msg, "line ", 5) != 0)
        return 0;
    for (; msg[i] >= '0' && msg[i] <= '9' && digits < 19; i++, digits++)
        n = n * 10 + (uint64_t)(msg[i] - '0');
    if (!digits || msg[i] != ':' || msg[i + 1] != ' ' || !n)
        return 0;
    *rest = msg + i + 2;
    return n;
}

void diag_input(diag_level lv, const char *file, const char *msg)
{
    size_t n;
    uint64_t line;

    msg = msg ? msg : "";
    if (!file) {
        emit(lv, NULL, 0, "optipipe: ", msg);
        return;
    }
    n = strlen(file);
    if (strncmp(msg, file, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        msg += n + 2;
    line = line_prefix(msg, &msg);
    emit(lv, file, line, NULL, msg);
}
