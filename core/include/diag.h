/*
 * diag.h - the one path of every diagnostic the program prints on
 * standard error. A message about an input reads like a compiler's,
 *     FILE[:LINE]: warning: MESSAGE      FILE[:LINE]: error: MESSAGE
 * and one about the program itself (usage, config, rules, output files)
 * keeps its "optipipe: MESSAGE" form. File names and messages pass the
 * terminal cleaner (report_term_put) so an ESC, OSC, BEL or CR in a file
 * name or in a parsed value cannot drive the terminal. -q (diag_set_quiet)
 * drops notes and warnings, never errors.
 */
#ifndef OP_CORE_DIAG_H
#define OP_CORE_DIAG_H

#include <stdio.h>

#include <optipipe/common.h>

/* DIAG_OUTPUT: what a rule prints (print(), warn()); never dropped, and
 * its tabs are kept (print() separates values with them). */
typedef enum diag_level {
    DIAG_NOTE, DIAG_WARNING, DIAG_ERROR, DIAG_OUTPUT
} diag_level;

/* -q: from now on notes and warnings are dropped (process-wide, like
 * stderr itself). */
void diag_set_quiet(int quiet);

/* Where diagnostics go; NULL: back to stderr. For tests. Borrowed. */
void diag_set_stream(FILE *f);

/* "optipipe: MESSAGE". */
void diag_msg(diag_level lv, const char *fmt, ...) OP_PRINTF(2, 3);

/* MESSAGE as it is, no prefix (the output of a rule's print()). */
void diag_line(diag_level lv, const char *fmt, ...) OP_PRINTF(2, 3);

/* A piece of a line (no newline, never dropped): for Lua's warn(), whose
 * message may come in parts. */
void diag_part(const char *fmt, ...) OP_PRINTF(1, 2);

/* "FILE[:LINE]: warning|error|note: MESSAGE" about input file. A leading
 * "FILE: " in msg is not repeated, and a leading "line N: " (the plugin
 * warning convention) becomes the LINE. file NULL: as diag_msg. */
void diag_input(diag_level lv, const char *file, const char *msg);

#endif
