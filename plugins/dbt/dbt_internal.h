/*
 * dbt_internal.h - what the files of the dbt input plugin share: caps,
 * JSON and time helpers, the compact records kept across inputs in the
 * plugin slot (parsed manifests, the timeline of each run) and the entry
 * points of each artifact reader. Private to plugins/dbt/ (never installed).
 *
 * Flow: parse() reads one artifact. run_results.json and sources.json
 * become runs right away (dbt_results.c); a manifest.json is reduced to
 * what the joins need (dbt_manifest.c). Both leave a record in the slot;
 * finish() (dbt_join.c) joins each run to its manifest, adds parents,
 * materializations and the critical path, sets the history keys and frees
 * the slot. See docs/dbt.md and docs/model-dbt.md.
 */
#ifndef DBT_INTERNAL_H
#define DBT_INTERNAL_H

#include <stdint.h>

#include <cjson/cJSON.h>
#include <optipipe/json.h>
#include <optipipe/plugin.h>
#include <optipipe/strmap.h>

#define DBT_MAX_DOC ((size_t)512 << 20) /* largest artifact parsed */
#define DBT_MAX_RESULTS 500000          /* results[] entries read */
#define DBT_MAX_MNODES 1000000          /* manifest entries kept */
#define DBT_MAX_DEPS 100000             /* depends_on.nodes of one node */
#define DBT_MAX_RUNS 100000             /* runs kept for joining */
#define DBT_MAX_MANIFESTS 256           /* manifests kept for joining */
#define DBT_MAX_EPHEMERAL_DEPTH 64      /* ephemeral chains walked */
#define DBT_MSG_MAX 480                 /* longest message attr kept */
#define DBT_CONFIG_MAX 1024             /* longest args value kept */
#define DBT_ID_MAX 1024                 /* longest unique_id accepted */
/* No count, size or time of a dbt artifact reaches 2^63: beyond it a
 * number is out of range (optipipe/json.h reads it as absent). */
#define DBT_MAX_ABS 9223372036854775808.0

/* --- small helpers (dbt_util.c) ---------------------------------------- */

/* The string at key of obj, or NULL when absent or not a string. */
const char *dbt_jstr(const cJSON *obj, const char *key);

/* Stores the number at key of obj in *out; returns 1 when it is a finite
 * number, 0 otherwise (absent, null, string, NaN). */
int dbt_jnum(const cJSON *obj, const char *key, double *out);

/* The object / array at key, or NULL when absent or of another type. */
const cJSON *dbt_jobj(const cJSON *obj, const char *key);
const cJSON *dbt_jarr(const cJSON *obj, const char *key);

/* Parses an ISO-8601 UTC timestamp as dbt writes it
 * ("2021-08-12T09:11:56.136770Z", 0-9 fractional digits, 'T' or ' ',
 * an optional 'Z' or +HH:MM / -HH:MM offset) into microseconds since the
 * epoch, without locale or timezone state. Returns 1 on success. */
int dbt_parse_time(const char *s, int64_t *us);

/* Floor division of microseconds to milliseconds. */
int64_t dbt_us_to_ms(int64_t us);

/* strdup that accepts NULL (returns NULL) and sets *oom on failure. */
char *dbt_strdup(const char *s, int *oom);



/* The resource type of a unique_id ("model" of "model.pkg.name"), copied
 * into buf (cap bytes); "" when the id has no dot. */
void dbt_id_type(const char *id, char *buf, size_t cap);
/* The package segment ("pkg"); "" when absent. */
void dbt_id_package(const char *id, char *buf, size_t cap);
/* A readable name: the part after "<type>.<package>.", without the hash
 * suffix dbt appends to tests. */
void dbt_id_name(const char *id, char *buf, size_t cap);

/* The warnings of an artifact found before its run exists (duplicated
 * keys, out-of-range numbers), each "FILE: PATH: ...". */
typedef op_json_notes dbt_notes;

/* --- state kept across inputs (the plugin slot) ------------------------ */

/* One node of a run as the joins need it. */
typedef struct dbt_rnode {
    char *id;
    int64_t start_us, end_us; /* valid when timed */
    int timed;       /* has a usable place on the run's timeline */
    int main_thread; /* ran on thread "main" (hooks) */
    size_t thread;   /* index of its worker thread (parse time only) */
    int64_t loaded_us; /* sources.json: max_loaded_at; valid when has_loaded */
    int has_loaded;
} dbt_rnode;

enum dbt_run_kind { DBT_RUN_RESULTS = 1, DBT_RUN_FRESHNESS };

/* A run built from a run_results.json or a sources.json. */
typedef struct dbt_rrun {
    int kind;
    char *run_id;     /* = invocation_id (the model's run id) */
    char *which;      /* args.which; NULL when unknown */
    char *select;     /* args.select joined by spaces; NULL when none */
    char *origin;     /* the input's display name */
    char *packages;   /* sorted distinct packages joined by '+' */
    char *project_dir; /* basename of args.project_dir when a package */
    int64_t generated_us;
    int has_generated;
    int64_t t0_us;    /* earliest timed start; valid when ntimed > 0 */
    int64_t span_us;  /* latest end - earliest start */
    int64_t busy_us;  /* sum of worker-thread busy time */
    int threads;      /* args, invocation_command or inferred */
    int executing;    /* metric executing: timings measure execution */
    size_t ntimed;
    dbt_rnode *nodes;
    size_t n, cap;
    op_strmap index; /* node id -> position in nodes */
} dbt_rrun;

/* One manifest entry (nodes, sources, exposures, unit_tests). */
typedef struct dbt_mnode {
    char *id;
    char *resource_type, *name, *package, *materialized, *file, *tags;
    char *unique_key, *incremental_strategy, *full_refresh, *attached_node;
    char *test_name, *severity, *on_schema_change;
    char *relation_name; /* also in run_results from v5: older ones lack it */
    char *checksum;   /* checksum.checksum (sha256 of the file) */
    char *macros;     /* depends_on.macros without "macro.", ','-joined */
    char **deps;
    size_t ndeps;
    uint64_t digest;  /* state digest: own definition + every upstream */
} dbt_mnode;

typedef struct dbt_manifest {
    char *project;    /* metadata.project_name, else the main package */
    char *invocation; /* metadata.invocation_id */
    char *dbt_version; /* metadata.dbt_version */
    char *adapter;    /* metadata.adapter_type (bigquery, snowflake, ...) */
    char *origin;
    int64_t generated_us;
    int has_generated;
    int used;
    dbt_notes *notes; /* given to the runs joined to it; NULL: none */
    dbt_mnode *nodes;
    size_t n, cap;
    op_strmap index; /* id -> position in nodes */
} dbt_manifest;

typedef struct dbt_state {
    dbt_rrun **runs;
    size_t nruns, runs_cap;
    dbt_manifest **manifests;
    size_t nmanifests, manifests_cap;
    int dropped_manifests; /* beyond DBT_MAX_MANIFESTS */
} dbt_state;

/* The state in b's slot, created on first use; NULL on out of memory. */
dbt_state *dbt_state_get(op_builder *b);
void dbt_state_free(dbt_state *st);
void dbt_rrun_free(dbt_rrun *r);
void dbt_manifest_free(dbt_manifest *m);

/* Schema version number of metadata.dbt_schema_version ("…/v6.json" → 6),
 * 0 when unknown (dbt_util.c). */
int dbt_schema_number(const char *url);

/* --- readers ---------------------------------------------------------- */

/* run_results.json: builds the run and its nodes and keeps the timeline in
 * the slot. `name` is the input's display name (for messages). */
int dbt_read_results(const cJSON *root, const char *name,
                     const dbt_notes *notes, op_builder *b, op_error *err);

/* sources.json: one run of kind "source-freshness" with a node per source. */
int dbt_read_sources(const cJSON *root, const char *name,
                     const dbt_notes *notes, op_builder *b, op_error *err);

/* manifest.json: keeps what the joins need (and a copy of notes) in the
 * slot. */
int dbt_read_manifest(const cJSON *root, const char *name,
                      const dbt_notes *notes, op_builder *b, op_error *err);

/* The plugin's finish(): joins, critical path, history keys; frees the
 * slot whatever happens. */
int dbt_finish(op_builder *b, op_error *err);

/* dbt_join.c: a node's attrs from its manifest entry (model-dbt.md). */
void dbt_node_attrs(op_builder *b, op_node *n, const dbt_mnode *mn);
/* dbt_join.c: its state_digest metric; only from the manifest of the
 * node's own invocation (or a manifest alone). */
void dbt_node_digest(op_builder *b, op_node *n, const dbt_mnode *mn);
/* dbt_digest.c: FNV-1a over n bytes of p, continuing from h (start at
 * DBT_FNV_OFFSET): the digests' and the freshness join's one hash. */
#define DBT_FNV_OFFSET UINT64_C(14695981039346656037)
uint64_t dbt_fnv(uint64_t h, const void *p, size_t n);
/* dbt_digest.c: sets every entry's digest: a hash of its own definition
 * (checksum, materialization, configs) and of its parents' digests, so
 * that it changes when the node or anything upstream changed (dbt's
 * state:modified+). Iterative (no recursion on deep DAGs); an entry on a
 * cycle gets its own hash only. Returns 0, or OP_ENOMEM. */
int dbt_digest_manifest(dbt_manifest *m);
/* dbt_digest.c: every entry of m in an order where a node comes after
 * its parents (Kahn's), then the entries on or below a cycle in file
 * order; *out (m->n positions, the caller frees) or OP_ENOMEM. */
int dbt_topo_order(const dbt_manifest *m, size_t **out);
/* dbt_fresh.c: gives the models of executing run r (record rr, joined to
 * manifest m) what their sources held, from the newest sources.json of
 * the same project taken before the run started (st's runs): metrics
 * sources_digest, sources_max_loaded_at_ms and sources_n
 * (docs/model-dbt.md). Returns 0, or OP_ENOMEM. Nothing is kept. */
int dbt_join_freshness(op_builder *b, op_run *r, const dbt_rrun *rr,
                       const dbt_manifest *m, const dbt_state *st);
/* A manifest joins a run of another invocation (and a sources.json a
 * build) only when it knows at least this share of the run's unique_ids
 * (same project, same state). */
#define DBT_MIN_COVERAGE 0.5
/* The share of run r's ids that manifest m knows (dbt_join.c). */
double dbt_coverage(const dbt_rrun *r, const dbt_manifest *m);
/* The digest as a node metric: 52 bits, exact in a double. */
#define DBT_DIGEST_MASK ((UINT64_C(1) << 52) - 1)
/* dbt_static.c: writes manifest m, which no run matched, as a run of its
 * own (nodes, parents, attrs; no timings). Returns 0, -1 on no memory.
 * m stays the caller's. */
int dbt_static_run(op_builder *b, const dbt_manifest *m);
/* dbt_static.c: adds to run r every entry of m that is not already one of
 * its nodes (index: the run's ids; NULL: none), as dbt_static_run does,
 * and gives every node of m in r its parents from depends_on.nodes. How
 * a non-executing run (compile, docs generate, ls) is checked as a static
 * DAG. */
void dbt_static_nodes(op_builder *b, op_run *r, const dbt_manifest *m,
                      const op_strmap *have, int digest);

#endif
