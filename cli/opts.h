/*
 * opts.h - command-line options described once, like Fluent Bit's
 * config_map: a command is a table of entries (name, short name, type,
 * field offset or setter, default, values, metavar, help), and from that
 * one table the parser reads argv (`--opt value` and `--opt=value`), the
 * help writer prints `--help`, and a mistake gets "did you mean".
 *
 * Generic: nothing here knows optipipe's commands (those are in
 * cli_table.c); a table binds to any struct through offsetof.
 */
#ifndef OP_CORE_OPTS_H
#define OP_CORE_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <optipipe/common.h>

typedef enum opt_type {
    OPT_FLAG,   /* no value: the int field becomes 1 */
    OPT_STRING, /* const char * field, borrowed from argv */
    OPT_INT,    /* a whole number in [lo, hi] into an unsigned field of
                 * `width` bytes (4 or 8; int fields take lo >= 0) */
    OPT_SIZE,   /* as OPT_INT, with a k, m, g or t suffix (x 1024^n) */
    OPT_DOUBLE, /* a number in [lo, hi] into a double field */
    OPT_ENUM,   /* one of the values: the const char * field gets the
                 * table's own string */
    OPT_LIST    /* repeatable string: const char *field[max] and the
                 * size_t count at count_off */
} opt_type;

/* A value as parsed, for setters: s is the text (for OPT_ENUM the table's
 * name), u the whole number, d the number. */
typedef struct opt_value {
    const char *s;
    uint64_t u;
    double d;
} opt_value;

typedef struct opt_spec opt_spec;

/* Stores v (already checked against the entry's type and range) into
 * base; returns 0 or OP_EUSAGE with err naming the option. */
typedef int (*opt_setter)(void *base, const opt_spec *o, const opt_value *v,
                          op_error *err);

/* The i-th allowed value of an OPT_ENUM, NULL past the last: lets the
 * values come from the table that owns them (the reporters, ...). */
typedef const char *(*opt_choice_fn)(size_t i);

struct opt_spec {
    const char *name;    /* "--format"; NULL ends a table */
    const char *alias;   /* "-o", or NULL */
    opt_type type;
    size_t off;          /* the field, from the base of the struct */
    size_t width;        /* sizeof the field (OPT_INT, OPT_SIZE) */
    size_t count_off;    /* OPT_LIST: the count */
    size_t max;          /* OPT_LIST: capacity of the array */
    double lo, hi;       /* OPT_INT, OPT_SIZE, OPT_DOUBLE; hi 0: no
                          * bound beyond the field's width */
    opt_choice_fn choice; /* OPT_ENUM */
    opt_setter set;      /* when set, called instead of storing at off */
    const char *metavar; /* "FILE"; NULL for flags */
    const char *def;     /* the default, for help; NULL: none said */
    const char *help;
};

/* A titled part of a command's options; groups are shared by commands. */
typedef struct opt_group {
    const char *title; /* heading in --help: "Rules", ... */
    const opt_spec *specs;
} opt_group;

#define OPTS_MAX_GROUPS 12

/* One command: `name` may be two words ("rules list"). */
typedef struct opt_cmd {
    const char *name;
    const char *args;    /* after the name in the synopsis */
    const char *summary; /* one line, for `optipipe --help` */
    const char *about;   /* paragraphs before the options, or NULL */
    const opt_group *groups[OPTS_MAX_GROUPS]; /* NULL-terminated */
    const char *after;   /* paragraphs after the options, or NULL */
    opt_spec operands;   /* OPT_LIST receiving the other words ("INPUT") */
} opt_cmd;

/* What opts_parse returns besides 0 and OP_EUSAGE. */
#define OPTS_HELP (-1)

/* Parses argv[0..argc) (the words after the command's name) into base:
 * options of cmd's groups, `--` ending them, every other word (and "-")
 * into cmd->operands. Values are borrowed from argv. Returns 0; OPTS_HELP
 * when --help or -h was given (nothing after it is read); or OP_EUSAGE
 * with err saying what was wrong and, when close, which option or value
 * was meant. */
int opts_parse(const opt_cmd *cmd, void *base, int argc, char **argv,
               op_error *err);

/* Writes cmd's --help to f: usage line, about, each group's options with
 * their metavars, values, defaults and help, wrapped to 79 columns. */
void opts_help(const opt_cmd *cmd, const char *prog, FILE *f);

/* Writes one help line for a word and its explanation, in the layout of
 * opts_help (for command lists). */
void opts_help_row(FILE *f, const char *left, const char *text);

/* The entry of cmd named name ("--format" or "-o"), or NULL. */
const opt_spec *opts_find(const opt_cmd *cmd, const char *name);

#endif
