/*
 * opts.h - options described once, like Fluent Bit's config_map: a table
 * of entries (name, short name, type, field offset or setter, default,
 * values, metavar, help), and from that one table the parser reads argv
 * (`--opt value` and `--opt=value`), the help writer prints `--help`, a
 * mistake gets "did you mean", and `optipipe --dump-options=json` (the
 * source of the man page, the completion and the docs' option tables)
 * describes it. The same rows describe the keys of optipipe.lua
 * (config.c) and the options an engine owns (engine.h).
 *
 * Generic: nothing here knows optipipe's commands (those are in
 * cli/cli_table.c); a table binds to any struct through offsetof.
 */
#ifndef OP_CLI_OPTS_H
#define OP_CLI_OPTS_H

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
    OPT_LIST,   /* repeatable string: a const char ** field, an array
                 * the parser grows (opts_free releases it), and the
                 * size_t count at count_off; more than max words is a
                 * usage error, never a silent drop */
    OPT_TABLE   /* config keys only: a value of the owner's form (a Lua
                 * table), read by the entry's `read` */
} opt_type;

#define OPT_PATH 1u /* flags: a config path, resolved against the file's
                     * folder */

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

/* Reads a value in the owner's form (config.c: a cJSON value from
 * optipipe.lua) into base; returns 0 or an op_status with err. */
typedef int (*opt_read_fn)(void *base, const opt_spec *o, const void *value,
                           op_error *err);

struct opt_spec {
    const char *name;    /* "--format"; NULL ends a table */
    const char *alias;   /* "-o", or NULL */
    opt_type type;
    size_t off;          /* the field, from the base of the struct */
    size_t width;        /* sizeof the field (OPT_INT, OPT_SIZE) */
    size_t count_off;    /* OPT_LIST: the count */
    size_t max;          /* OPT_LIST: most words taken (the documented
                          * limit) */
    double lo, hi;       /* OPT_INT, OPT_SIZE, OPT_DOUBLE; hi 0: no
                          * bound beyond the field's width */
    opt_choice_fn choice; /* OPT_ENUM */
    opt_setter set;      /* when set, called instead of storing at off */
    const char *metavar; /* "FILE"; NULL for flags */
    const char *def;     /* the default, for help; NULL: none said */
    const char *help;
    opt_read_fn read;    /* config keys: reads the value, else by type */
    unsigned flags;      /* OPT_PATH */
};

/* A titled part of a command's options; groups are shared by commands.
 * With bind, the group's offsets are into bind(base, ctx), not into the
 * command's struct: an engine's options (engine.h) live in a struct the
 * engine owns, inside the command's. */
typedef struct opt_group {
    const char *title; /* heading in --help: "Rules", ... */
    const opt_spec *specs;
    void *(*bind)(void *base, const void *ctx);
    const void *ctx;
} opt_group;

#define OPTS_MAX_GROUPS 12

struct opt_cmd;

/* Runs a command on the words after its name; returns the exit code. */
typedef int (*opt_run_fn)(const struct opt_cmd *cmd, int argc, char **argv);

/* One command: `name` may be two words ("rules list"). */
typedef struct opt_cmd {
    const char *name;
    const char *args;    /* after the name in the synopsis */
    const char *summary; /* one line, for `optipipe --help` */
    const char *about;   /* paragraphs before the options, or NULL */
    const opt_group *groups[OPTS_MAX_GROUPS]; /* NULL-terminated */
    const char *after;   /* paragraphs after the options, or NULL */
    opt_spec operands;   /* OPT_LIST receiving the other words ("INPUT") */
    opt_run_fn run;      /* what the command does (cli/cmd_*.c) */
    /* Groups after groups[] that another table owns (the engines' URL
     * options): the i-th, NULL past the last. NULL: none. */
    const opt_group *(*more)(size_t i);
} opt_cmd;

/* The i-th group of cmd (groups[], then more), NULL past the last. */
const opt_group *opts_group_at(const opt_cmd *cmd, size_t i);

/* What opts_parse returns besides 0 and OP_EUSAGE. */
#define OPTS_HELP (-1)

/* Parses argv[0..argc) (the words after the command's name) into base:
 * options of cmd's groups, `--` ending them, every other word (and "-")
 * into cmd->operands. Values are borrowed from argv; the arrays of the
 * OPT_LIST fields are allocated here and are the caller's, to release
 * with opts_free(cmd, base) whatever the result. Returns 0; OPTS_HELP
 * when --help or -h was given (nothing after it is read); OP_EUSAGE
 * with err saying what was wrong and, when close, which option or value
 * was meant; or OP_ENOMEM. */
int opts_parse(const opt_cmd *cmd, void *base, int argc, char **argv,
               op_error *err);

/* Frees the arrays opts_parse grew for the OPT_LIST fields of cmd's
 * groups and operands in base, and empties those lists (a list field two
 * groups share is freed once). base's other fields are left as they
 * are. */
void opts_free(const opt_cmd *cmd, void *base);

/* Writes cmd's --help to f: usage line, about, each group's options with
 * their metavars, values, defaults and help, wrapped to 79 columns. */
void opts_help(const opt_cmd *cmd, const char *prog, FILE *f);

/* Writes one help line for a word and its explanation, in the layout of
 * opts_help (for command lists). */
void opts_help_row(FILE *f, const char *left, const char *text);

/* The entry of cmd named name ("--format" or "-o"), or NULL. */
const opt_spec *opts_find(const opt_cmd *cmd, const char *name);

/* Stores the default of every entry of specs (NULL-terminated) whose def
 * is a value of its type ("60", "2048", an enum's name; a default that
 * says what happens, "the only running one", is left to the owner) into
 * base; the rest of base is left as it is. */
void opts_defaults(const opt_spec *specs, void *base);

/* The name of type t for --dump-options ("flag", "string", "int",
 * "size", "double", "enum", "list", "table"). */
const char *opts_type_name(opt_type t);

struct jw; /* jsonw.h */

/* Writes o as a JSON object (name, alias, type, metavar, default,
 * values, repeatable, help) into w: --dump-options' one form for every
 * command option and config key. */
void opts_dump_spec(struct jw *w, const opt_spec *o);

#endif
