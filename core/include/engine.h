/*
 * engine.h - the engine table: what the host does for one engine beyond
 * parsing its traces (its plugin does that): the HTML charts of a run,
 * the --emit-changes patch writer, fetching from a live server, and the
 * folder layouts read as one input. Each engine's entry lives with its
 * plugin, in <engine>/host/ (plugins/<x>/host/, or a folder given to CMake
 * in OP_ENGINE_DIRS), as `const op_engine op_engine_<name> = {...}`; CMake
 * collects them into the table (engines_builtin.c.in), so core asks the
 * table instead of naming an engine and adding an engine is no core edit
 * (docs/architecture.md). Every hook may be NULL: the engine has none.
 */
#ifndef OP_CORE_ENGINE_H
#define OP_CORE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include <optipipe/stream.h>

#include "emit_changes.h"

struct hout;        /* report_html.h */
struct fetch_opts;  /* fetch.h */
struct input_limits; /* input.h */
struct opt_spec;    /* opts.h */

/* A folder layout that is one input (e.g. a log rolled over into files). */
typedef struct op_engine_layout {
    const char *name; /* what it is, for messages */
    /* Whether dir (a path; it may end in '/') is a folder of this layout. */
    int (*is_dir)(const char *dir);
    /* Opens the folder as one stream named dir. Returns 0 with *out (closed
     * by input_close) or an op_status with err naming the folder. */
    int (*open)(const char *dir, const struct input_limits *limits,
                op_stream **out, op_error *err);
} op_engine_layout;

/* Collecting from a live server: `optipipe fetch NAME URL`. The CLI
 * builds the command (its --help, its options, its docs) from this entry
 * and the engine's options: -o, -q, the engine's options, the connection
 * options (docs/fetch.md). eo is the engine's own options struct
 * (op_engine_options; NULL when the engine has none), borrowed. */
typedef struct op_engine_fetch {
    const char *name; /* the fetch subcommand */
    /* One document this engine's plugin reads, into *buf (malloc'd, owned
     * by the caller): also how `analyze URL` reads a URL. Returns a
     * fetch_result (fetch.h). NULL when the fetch writes a folder. */
    int (*to_memory)(const char *url, const struct fetch_opts *o,
                     const void *eo, char **buf, size_t *len, op_error *err);
    /* Files into the folder dir (created when missing; NULL: the engine's
     * default, output_def). A fetch_result; FETCH_EUSAGE with err when an
     * option it needs is missing. */
    int (*to_dir)(const char *url, const struct fetch_opts *o, const void *eo,
                  const char *dir, op_error *err);
    /* How sure (0..100) this engine is that url names one of its servers,
     * from the URL alone (no request); the highest to_memory fetch wins
     * `analyze URL`. NULL: 0. */
    int (*url_score)(const char *url);
    const char *summary;     /* one line for `optipipe --help` */
    const char *about;       /* the paragraph of its --help */
    const char *args;        /* after the name in the synopsis; NULL:
                              * "URL [options]" */
    const char *output_def;  /* -o's default as said in --help; NULL:
                              * stdout (to_memory) */
    const char *output_help; /* what -o names; NULL: "where to write the
                              * export" (to_memory) */
} op_engine_fetch;

/* The options an engine owns, as Fluent Bit's config_map: rows (opts.h:
 * name, type, default, offset into the engine's struct, help) bound to a
 * struct of the engine's. `optipipe fetch NAME` takes them, and so does
 * every command that reads URL inputs when the engine has a to_memory
 * fetch. The struct lives inside fetch_opts (engine_opts); fetch_opts_init
 * zeroes it, stores the rows' defaults (opts_defaults), then calls init
 * for what a row's default cannot say. */
typedef struct op_engine_options {
    const char *title;            /* the --help heading */
    const struct opt_spec *specs; /* NULL-terminated */
    size_t size;                  /* sizeof the engine's struct */
    void (*init)(void *eo);       /* may be NULL */
} op_engine_options;

/* The --emit-changes patch writer: files <source>-<run>.<ext>. */
typedef struct op_engine_patch {
    const char *ext;      /* file extension without the dot */
    emit_writer_fn write; /* emit_changes.h */
} op_engine_patch;

/* Logs split over several files that say so in their first line (e.g. a
 * log rolled over into parts): core finds the parts among the inputs by
 * content, groups them by key and reads each group in order as one input
 * (input_parts.c). */
typedef struct op_engine_parts {
    const char *name; /* what they are, for messages */
    /* Whether line (a file's first line, len bytes, no '\n') opens such a
     * part: then fills key (NUL-terminated, shorter than cap; the parts of
     * one log share it) and *order (their reading order) and returns 1,
     * else 0. line is text from outside: bounded by len, not NUL. */
    int (*probe)(const char *line, size_t len, char *key, size_t cap,
                 int64_t *order);
} op_engine_parts;

#define OP_ENGINE_DEFAULT_SOURCE 1u /* flags: the default `rules new --source` */

/* What a run's time costs (docs/costs.md): per_hour = the team's money per
 * hour of the time its findings save (impact.time_saved_ms), basis = how
 * it was computed, in words, for the reports. run_hours = the hours of
 * that rate the run paid for (its estimated_cost is per_hour x run_hours;
 * 0: not known, no cost kept); by_node_time = 1 when that cost is shared
 * among the run's nodes by their duration_ms (each node's
 * estimated_cost). */
typedef struct op_cost_rate {
    double per_hour;
    char basis[320];
    double run_hours;
    int by_node_time;
} op_cost_rate;

struct cJSON;

typedef struct op_engine {
    size_t size;        /* sizeof(op_engine) the entry was built with */
    const char *source; /* the runs' source this engine serves */
    unsigned flags;     /* OP_ENGINE_* */
    /* Draws the charts of run r (report_html.h); writes nothing without
     * data to draw. */
    void (*html_charts)(struct hout *h, const struct op_run *r);
    const op_engine_patch *patch;
    const op_engine_fetch *fetch;
    const op_engine_layout *layouts; /* nlayouts of them */
    size_t nlayouts;
    const op_engine_parts *parts;
    const op_engine_options *options; /* NULL: none */
    /* CSS rules of its charts' classes, appended to the report's
     * stylesheet (report_html.c) in table order; NULL: none. Name the
     * classes after the engine ("flink-", "csv-") to keep them apart. */
    const char *html_css;
    /* Whether a file whose first line opens no part (line, len bytes, no
     * '\n') is one by its base name (no folder): a part written without
     * the line that says so. Fills key and *order as parts->probe does
     * (core adds the folder to the key: only parts of one folder join);
     * NULL when the engine's parts always say so. */
    int (*part_name)(const char *base, const char *line, size_t len,
                     char *key, size_t cap, int64_t *order);
    /* Money (core/costs.h): the keys of the config's costs table this
     * engine reads, as "section.key" (NULL-terminated; core accepts only
     * the keys some engine reads), and the rate of run r under costs
     * (borrowed): 1 and *out filled when its rates apply to r, else 0. */
    const char *const *cost_keys;
    int (*cost_rate)(const struct op_run *r, const struct cJSON *costs,
                     op_cost_rate *out);
} op_engine;

/* Whether entry e was built with member m (entries built against an older
 * engine.h read later members as absent). */
#define ENGINE_HAS(e, m) \
    ((e)->size >= offsetof(op_engine, m) + sizeof((e)->m))

/* The table, in build order; NULL-terminated. */
extern const op_engine *const op_builtin_engines[];

/* The engine serving runs of source, or NULL. */
const op_engine *engine_find(const char *source);

/* The engine whose fetch is called name, or NULL. */
const op_engine *engine_find_fetch(const char *name);

/* The engine whose to_memory fetch scores url highest (> 0), or NULL. */
const op_engine *engine_for_url(const char *url);

/* The layout dir is a folder of (the first engine's that claims it), or
 * NULL. */
const op_engine_layout *engine_layout_of(const char *dir);

/* Whether line (a file's first line, len bytes) opens a part of a split
 * log of some engine (op_engine_parts): fills key ("<source>:<engine's
 * key>", shorter than cap) and *order and returns 1, else 0. */
int engine_part_of(const char *line, size_t len, char *key, size_t cap,
                   int64_t *order);

/* The same by base name for a file whose first line opens no part
 * (op_engine.part_name): key "<source>:<engine's key>", without the
 * folder. */
int engine_part_named(const char *base, const char *line, size_t len,
                      char *key, size_t cap, int64_t *order);

/* The source `rules new` writes a rule for when not told: the engine
 * flagged OP_ENGINE_DEFAULT_SOURCE, else the first, else "*". */
const char *engine_default_source(void);

/* "a, b or c": the fetch names, for usage messages. */
void engine_fetch_names(char *buf, size_t len);

/* e's options struct inside o (op_engine_options), or NULL when e has
 * none. Borrowed from o. */
void *engine_opts(struct fetch_opts *o, const op_engine *e);
const void *engine_opts_const(const struct fetch_opts *o, const op_engine *e);

/* Zeroes the engines' options area of o and fills each engine's struct
 * with its defaults. An engine table whose structs do not fit
 * FETCH_ENGINE_OPTS_BYTES is a build mistake: reported on stderr, then
 * abort(). Called by fetch_opts_init. */
void engine_opts_init(struct fetch_opts *o);

#endif
