/*
 * prom_internal.h - the Prometheus plugin's parts (docs/inputs.md
 * "Prometheus"): the text/OpenMetrics line parser and the query_range
 * reader turn their input into samples; the store keeps one time series
 * per (name, labels, target), maps each through the host's mapping packs
 * (optipipe/mapping.h) and, in finish(), builds the runs.
 */
#ifndef OP_PROM_INTERNAL_H
#define OP_PROM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <optipipe/builder.h>
#include <optipipe/mapping.h>
#include <optipipe/stream.h>

#define PROM_MAX_LABELS 64          /* per sample */
#define PROM_MAX_SERIES 500000      /* distinct series per analysis */
#define PROM_MAX_POINTS 8000000     /* samples kept per analysis (16 B each) */
#define PROM_MAX_NAME 1024          /* metric and label names */
#define PROM_MAX_BAD_SHOWN 1        /* bad lines described per input */

/* Where a scrape's time came from, weakest last. */
enum prom_time {
    PROM_T_SAMPLE = 0, /* the samples' own timestamps */
    PROM_T_NAME,       /* a time in the file name */
    PROM_T_MTIME,      /* the file's modification time */
    PROM_T_NONE        /* unknown: no rates */
};

/* One sample as parsed: strings borrowed until the callback returns. */
typedef struct prom_sample {
    const char *name;
    const char *type; /* the family's # TYPE, NULL when none */
    op_label labels[PROM_MAX_LABELS];
    size_t nlabels;
    double value;
    int has_ts;
    int64_t ts_ms;
} prom_sample;

/* Receives each sample; returns 0, or an op_status to stop the input. */
typedef int (*prom_sample_fn)(void *ud, const prom_sample *s);

/* Text exposition (0.0.4) and OpenMetrics 1.0 line parser state. */
typedef struct prom_text {
    char *buf;         /* the line being parsed, unescaped in place */
    size_t cap;
    char *fam;         /* the family of the last # TYPE */
    char type[16];
    int eof;           /* saw OpenMetrics "# EOF" */
    uint64_t after_eof; /* lines after it (an error) */
} prom_text;

void prom_text_init(prom_text *t);
void prom_text_free(prom_text *t);
/* Parses one line (len bytes, no '\n'): 0 and maybe a call of fn, or
 * OP_EPARSE with why (a static message) for a malformed line, or the
 * callback's status. */
int prom_text_line(prom_text *t, const char *line, size_t len,
                   prom_sample_fn fn, void *ud, const char **why);

/* A query_range (or query) response: {"status":"success","data":
 * {"resultType":"matrix"|"vector","result":[...]}}. 0, or an op_status
 * with err naming the JSON path (in names the file). */
int prom_range_parse(const char *json, size_t len, const char *in,
                     prom_sample_fn fn, void *ud, op_error *err);

/* ---- the store (prom_store.c) ---- */
typedef struct prom_state prom_state;

prom_state *prom_state_new(void);
void prom_state_free(prom_state *st);

/* Starts an input: its target (folder or instance label is per sample),
 * its default time (ms) and where that time came from. */
int prom_input_begin(prom_state *st, const char *name, const char *target,
                     int64_t default_ms, enum prom_time src);
/* Adds one sample of the current input (mapping it through b the first
 * time its series is seen). 0, or OP_ELIMIT when a cap was reached (the
 * sample is refused and counted), or OP_ENOMEM. */
int prom_add(prom_state *st, op_builder *b, const prom_sample *s,
             op_error *err);
/* How many samples of the current input the caps refused, and read. */
uint64_t prom_input_refused(const prom_state *st);
uint64_t prom_input_samples(const prom_state *st);
/* A warning about the current input (copied), given to every run its
 * target's series feed when the runs are built. 0 or OP_ENOMEM. */
int prom_warn(prom_state *st, const char *msg);
/* Builds every run from what the inputs gave. */
int prom_emit(prom_state *st, op_builder *b, op_error *err);

#endif
