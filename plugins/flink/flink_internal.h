/*
 * flink_internal.h - what the files of the Flink input plugin share: the
 * parse context, REST path classification, version-tolerant JSON readers
 * and the config merger. Private to plugins/flink/ (never installed).
 *
 * The plugin reads one JSON document (a `flink_rest_export`, a HistoryServer
 * archive or one raw REST response) into "polls": poll 0 holds the main
 * responses, polls 1..n the export's later `samples`. Each poll is a JSON
 * object mapping a REST path to the response Flink returned for it.
 */
#ifndef FLINK_INTERNAL_H
#define FLINK_INTERNAL_H

#include <cjson/cJSON.h>
#include <optipipe/json.h>
#include <optipipe/plugin.h>

#define FL_ID_MAX 64           /* ids are 32 hex digits; a little slack */
#define FL_MAX_SUBTASKS 32768  /* Flink's upper bound for max parallelism */
#define FL_MAX_POLLS 100000    /* samples kept from one export */
#define FL_TEXT_MAX 4096       /* longest description / message kept */
#define FL_MSG_MAX 300         /* longest failure message kept in a record */

/* The endpoints the plugin understands (docs/flink.md). */
enum fl_ep {
    EP_UNKNOWN = 0,
    EP_DASH_CONFIG,       /* /config */
    EP_JM_CONFIG,         /* /jobmanager/config */
    EP_JOBS_OVERVIEW,     /* /jobs/overview */
    EP_JOB,               /* /jobs/<jid> */
    EP_PLAN,              /* /jobs/<jid>/plan */
    EP_JOB_CONFIG,        /* /jobs/<jid>/config */
    EP_JOB_JM_CONFIG,     /* /jobs/<jid>/jobmanager/config */
    EP_CKPTS,             /* /jobs/<jid>/checkpoints */
    EP_CKPT_CONFIG,       /* /jobs/<jid>/checkpoints/config */
    EP_CKPT_DETAIL,       /* /jobs/<jid>/checkpoints/details/<id> */
    EP_CKPT_SUBTASKS,     /* /jobs/<jid>/checkpoints/details/<id>/subtasks/<vid> */
    EP_EXCEPTIONS,        /* /jobs/<jid>/exceptions */
    EP_JOB_METRICS,       /* /jobs/<jid>/metrics?get= */
    EP_VERTEX,            /* /jobs/<jid>/vertices/<vid> */
    EP_BACKPRESSURE,      /* /jobs/<jid>/vertices/<vid>/backpressure */
    EP_WATERMARKS,        /* /jobs/<jid>/vertices/<vid>/watermarks */
    EP_SUBTASKS_METRICS,  /* /jobs/<jid>/vertices/<vid>/subtasks/metrics */
    EP_SUBTASK_METRICS,   /* /jobs/<jid>/vertices/<vid>/subtasks/<n>/metrics */
    EP_VERTEX_METRICS,    /* /jobs/<jid>/vertices/<vid>/metrics */
    EP_OTHER_JOB          /* another /jobs/<jid>/... path: not used */
};

typedef struct fl_path {
    enum fl_ep ep;
    char jid[FL_ID_MAX + 1];
    char vid[FL_ID_MAX + 1];
    int64_t num; /* checkpoint id or subtask index; -1 when none */
} fl_path;

/* Classifies a REST path ("http://jm:8081/v1/jobs/<jid>/plan?x" works too).
 * Never fails: unknown paths get EP_UNKNOWN. */
void fl_path_parse(const char *raw, fl_path *out);

typedef struct fl_poll {
    const cJSON *responses; /* object: path -> response */
    int64_t captured_at;    /* epoch ms; 0 when unknown */
} fl_poll;

/* A string -> string list kept by the plugin before emitting run config
 * (later sets win; keys are canonical Flink keys). */
typedef struct fl_kv {
    char *key, *value;
} fl_kv;

typedef struct fl_config {
    fl_kv *items;
    size_t n, cap;
    /* Open-addressing hash of the keys (item index + 1; 0 empty,
     * FL_TOMB removed) so that merging k keys costs O(k), not O(k^2). */
    size_t *tab;
    size_t tabcap, used; /* used: slots not empty (tombstones count) */
    int oom;
} fl_config;

/* One classified response of a poll. */
typedef struct fl_entry {
    fl_path path;
    const cJSON *resp;
    size_t poll; /* index of its poll */
    size_t pos;  /* position in its poll's responses */
    int err;     /* resp is a Flink error body */
} fl_entry;

/* Objects of a JSON array looked up by a string member: an open-addressing
 * hash of id -> first and last object with it, so that n lookups cost O(n)
 * rather than a scan each. */
typedef struct fl_byid_slot {
    const char *id; /* NULL: empty slot */
    const cJSON *first, *last;
} fl_byid_slot;

typedef struct fl_byid {
    fl_byid_slot *slot;
    size_t cap; /* a power of two, twice the items at least; 0: empty */
} fl_byid;

/* Every poll keeps its classified entries (flink.c); fl_find looks them
 * up through the sorted index fl_ctx.idx (flink_polls.c). */
typedef struct fl_pollx {
    fl_entry *e;
    size_t n;
} fl_pollx;

typedef struct fl_ctx {
    op_builder *b;
    const char *input; /* display name of the input, for messages */
    fl_poll *polls;
    size_t npolls;
    const struct fl_pollx *px; /* one per poll */
    /* Every entry of every poll, sorted by (endpoint, jid, vid, poll,
     * pos): fl_find and friends binary-search it (flink_polls.c). */
    const fl_entry **idx;
    size_t nidx;
    int lone; /* the input was one raw response */
    /* The newest /jobs/overview jobs[] by jid, built on first use by
     * flink_job.c (every job looks itself up); freed with the parse. */
    fl_byid overview;
    int overview_built;
} fl_ctx;

/* --- JSON readers (flink_json.c) --------------------------------------- */

/* Reads a number, a numeric string or "NaN"/"Infinity" (Jackson writes
 * non-finite doubles as strings). Returns 1 and sets *out (possibly NaN),
 * 0 when absent, null or not numeric. */
int fl_num(const cJSON *it, double *out);

/* Reads a 64-bit integer exactly: strings through strtoll, numbers through
 * the double with Long.MIN/MAX_VALUE recognized as sentinels (a double
 * cannot hold them, and only they reach that magnitude). Returns 1 and sets
 * *out, 0 when absent, non-numeric or NaN. */
int fl_i64(const cJSON *it, int64_t *out);

/* Member lookups that treat JSON null as absent. fl_get2 returns the first
 * of two spellings that is present (camelCase vs hyphenated fields). */
const cJSON *fl_get(const cJSON *obj, const char *key);
const cJSON *fl_get2(const cJSON *obj, const char *a, const char *b);
const char *fl_str(const cJSON *obj, const char *key);
int fl_getnum(const cJSON *obj, const char *key, double *out);
int fl_geti64(const cJSON *obj, const char *key, int64_t *out);
/* Returns 1 and sets *out for true/false (or "true"/"false"), else 0. */
int fl_getbool(const cJSON *obj, const char *key, int *out);

/* A Flink error body ({"errors": [...]}): returns its first message or
 * "error" when it is one, NULL otherwise. */
const char *fl_error_body(const cJSON *resp);

/* Copies src into dst (size n), replacing HTML entities of plan
 * descriptions (&gt; &lt; &amp; &quot; &#39;) and "<br/>" with "\n", and
 * dropping control characters other than '\n'. Always terminates. */
void fl_unescape_html(const char *src, char *dst, size_t n);

/* Copies at most n-1 bytes of the first line of src into dst. */
void fl_first_line(const char *src, char *dst, size_t n);

/* FNV-1a hash of a string (for the plugin's small hash tables). */
size_t fl_hash(const char *s);

/* Indexes the members of arr (cJSON_ArrayForEach order) by their string
 * member key; with missing_as_empty, members without one are indexed
 * under "" (else skipped). ix is overwritten; free it with fl_byid_free.
 * Returns 0 or OP_ENOMEM (ix then empty). */
int fl_byid_build(fl_byid *ix, const cJSON *arr, const char *key,
                  int missing_as_empty);
/* The first / last member (in array order) indexed under id, or NULL. */
const cJSON *fl_byid_first(const fl_byid *ix, const char *id);
const cJSON *fl_byid_last(const fl_byid *ix, const char *id);
void fl_byid_free(fl_byid *ix);

/* --- unusable values (flink_bad.c) ------------------------------------ */

#define FL_BAD_NAMED 10 /* unusable values named per export, then counts */

typedef struct fl_bad {
    const cJSON *root, *owned; /* where paths are searched */
    size_t *named_in_export;   /* the export's named values so far */
    char msg[FL_BAD_NAMED][OP_JSON_PATH_MAX + 120];
    size_t n, unnamed; /* this job's named (msg) and counted values */
} fl_bad;

/* Between fl_bad_begin and fl_bad_end (one job, one thread) the readers
 * note into b; fl_bad_flush then writes its warnings to run r. b and
 * *named (0 before an export's first job) are the caller's; the trees
 * must outlive fl_bad_end. */
void fl_bad_begin(fl_bad *b, const cJSON *root, const cJSON *owned,
                  size_t *named);
void fl_bad_end(void);
void fl_bad_flush(fl_bad *b, op_builder *bl, op_run *r);
/* Notes value it as unusable: why, e.g. "null where a number is
 * expected" (the warning is "PATH: why: ignored"). A value is noted once. */
void fl_bad_note(const cJSON *it, const char *why);
/* Notes obj[key] when it is present but no number (fl_getnum said 0). */
void fl_bad_type(const cJSON *obj, const char *key);
/* fl_geti64 / fl_getnum that refuse (note, return 0) a value outside
 * lo..hi: one the engine cannot report. */
int fl_geti64_in(const cJSON *obj, const char *key, int64_t lo, int64_t hi,
                 int64_t *out);
int fl_getnum_in(const cJSON *obj, const char *key, double lo, double hi,
                 double *out);

/* --- config (flink_json.c) --------------------------------------------- */

void fl_config_init(fl_config *c);
void fl_config_free(fl_config *c);
/* Sets key (mapped to its canonical name, docs/flink.md) to value. */
void fl_config_set(fl_config *c, const char *key, const char *value);
/* Removes key (canonical). */
void fl_config_unset(fl_config *c, const char *key);
const char *fl_config_get(const fl_config *c, const char *key);
/* Maps an old (<= 1.19) key to its 1.20/2.x name; returns key itself when
 * it has no other name. */
const char *fl_canonical_key(const char *key);
/* Merges a [{"key","value"}] list (/jobmanager/config) into c: old keys
 * first, then canonical ones, so a new key beats its deprecated alias.
 * Returns the number of keys read. */
size_t fl_config_merge_list(fl_config *c, const cJSON *list);

/* --- responses (flink_polls.c) ----------------------------------------- */

/* Numbers the entries of every poll (px[0..c->npolls)) and sorts them into
 * c->idx (owned by the parse). Returns 0 or OP_ENOMEM with err. */
int fl_index_build(fl_ctx *c, fl_pollx *px, op_error *err);
/* Whether a response is null (not one op_json_tidy made so): absent, like
 * an error body. */
int fl_null_resp(const cJSON *resp);

/* The response for endpoint ep of job jid (and vertex vid / number num when
 * not NULL / >= 0) in poll p, or NULL. Error bodies count as absent. */
const cJSON *fl_find(const fl_ctx *c, size_t p, enum fl_ep ep,
                     const char *jid, const char *vid, int64_t num);
/* The same in the newest poll that has it; *poll receives its index. */
const cJSON *fl_find_newest(const fl_ctx *c, enum fl_ep ep, const char *jid,
                            const char *vid, size_t *poll);
/* The same in the oldest poll that has it. */
const cJSON *fl_find_oldest(const fl_ctx *c, enum fl_ep ep, const char *jid,
                            const char *vid, size_t *poll);
/* The entries of endpoint ep, job jid and vertex vid ("" for none) over
 * every poll, error bodies included, ordered by poll then position in the
 * poll. *out points into the index (valid until the parse ends). */
size_t fl_entries(const fl_ctx *c, enum fl_ep ep, const char *jid,
                  const char *vid, const fl_entry *const **out);
/* The i-th entry of poll p, in the poll's order. Returns 0 past the end.
 * (fl_entries is the indexed way to all entries of one endpoint.) */
int fl_entry_at(const fl_ctx *c, size_t p, size_t i, const fl_path **path,
                const cJSON **resp);

/* --- source partitions (flink_partitions.c) ----------------------------- */

#define FL_MAX_PARTITIONS 32768 /* distinct pairs counted; past it: unknown */
#define FL_MAX_TOPICS 64        /* topics told apart; past it: "more" */

typedef struct fl_part_slot {
    const char *topic; /* into the metric name (NULL: empty slot) */
    size_t tlen;
    int32_t part;
} fl_part_slot;

/* The distinct (topic, partition) pairs the metric names of one vertex
 * name. Zero-initialize; topic strings point into the names added, which
 * must outlive it. */
typedef struct fl_parts {
    fl_part_slot *slot;
    size_t cap, n;  /* cap: a power of two, at least twice n */
    size_t names;   /* partition offset names seen (duplicates included) */
    size_t bad;     /* offset names whose topic or partition is unusable */
    int over;       /* more than FL_MAX_PARTITIONS pairs */
    int oom;
    const char *topic[FL_MAX_TOPICS];
    size_t tlen[FL_MAX_TOPICS];
    size_t topics;  /* distinct topics; FL_MAX_TOPICS + 1: more */
} fl_parts;

/* Splits a Kafka source reader's offset metric name ("[<subtask>.]<op>.
 * KafkaSourceReader.topic.<t>.partition.<n>.currentOffset" or
 * ".committedOffset"): 1 with *topic (pointing into name, *tlen bytes) and
 * *part set; 0 when name is no such metric; -1 when it is one whose topic
 * is empty or longer than Kafka allows (249) or whose partition is not a
 * number 0..2147483647. */
int fl_partition_name(const char *name, const char **topic, size_t *tlen,
                      int32_t *part);
/* Counts the pair name names, if any (bounded: see fl_parts). */
void fl_parts_add(fl_parts *p, const char *name);
void fl_parts_free(fl_parts *p);

/* --- per job (flink_job.c, flink_checkpoints.c) ------------------------ */

/* Builds the run of job jid from every poll. Returns 0 or OP_ENOMEM. */
int fl_job(fl_ctx *c, const char *jid, op_error *err);

/* Checkpoint statistics, checkpoint config, details and exceptions of job
 * jid into run r; cfg collects the config keys they imply. fl_checkpoints
 * returns 0 or OP_ENOMEM. */
int fl_checkpoints(fl_ctx *c, op_run *r, const char *jid, fl_config *cfg);
void fl_exceptions(fl_ctx *c, op_run *r, const char *jid);

/* Flink job state -> model status (docs/model.md). */
const char *fl_status(const char *state);

/* RocksDB / ForSt native metrics of one vertex (flink_rocksdb.c). */
typedef struct fl_rdb fl_rdb;

/* Takes metric name (without the "<subtask>." prefix) of subtask idx
 * from entry e into *r (allocated on first use; the caller frees it
 * with fl_rdb_free) when it is a RocksDB native metric: returns 1 then,
 * also when its value is unusable; 0 for any other metric. */
int fl_rdb_metric(fl_rdb **r, const char *name, const cJSON *e, int64_t idx);

/* Adds the vertex's dists, metrics and attrs for what r holds (nothing
 * when r is NULL) to node n of run, and a run warning naming vertex vid
 * when values were over the bounds. r stays the caller's. */
void fl_rdb_emit(op_builder *b, op_run *run, op_node *n, const char *vid,
                 const fl_rdb *r);

void fl_rdb_free(fl_rdb *r);

#endif
