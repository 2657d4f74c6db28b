/*
 * spark_internal.h - what the files of the Spark event-log plugin share:
 * the fast TaskStart/TaskEnd scanner, the bounded per-stage distributions
 * and the application state that mirrors Spark's AppStatusListener.
 * Private to plugins/spark/ (never installed).
 *
 * Memory: everything here grows with the number of stages, jobs, SQL
 * executions and executors, never with tasks or lines. The only per-task
 * state is the set of running task ids (bounded, SP_LIVE_TASKS_MAX) and the
 * exact values of a stage's distributions (bounded, SP_DIST_EXACT_MAX, then
 * a fixed-size sketch).
 */
#ifndef SPARK_INTERNAL_H
#define SPARK_INTERNAL_H

#include <cjson/cJSON.h>
#include <optipipe/plugin.h>

#define SP_DIST_EXACT_MAX 65536   /* exact values kept per stage and metric */
#define SP_LIVE_TASKS_MAX (1u << 21) /* running task ids remembered */
#define SP_TEXT_MAX 512           /* longest message/name text kept */
#define SP_COMMAND_MAX 8192       /* longest sun.java.command kept */
#define SP_ID_MAX 128             /* longest executor id / host kept */
#define SP_MAX_BAD_REPORTED 5     /* malformed lines named one by one */
#define SP_MAX_FAILURE_KINDS 256  /* distinct (stage, reason) failure records */
#define SP_MAX_WARNINGS 64        /* run warnings kept */
/* What a log can claim without bound is capped (docs/spark.md "Limits"):
 * past a cap, new stage attempts, jobs, SQL executions or executors are
 * left out of the model, with a warning at the line where it hit. */
#define SP_MAX_STAGES 50000       /* stage attempts */
#define SP_MAX_JOBS 50000         /* jobs */
#define SP_MAX_SQLS 50000         /* SQL executions */
#define SP_MAX_EXECS 50000        /* executors */
#define SP_MAX_NUM_WARNED 3       /* out-of-range values named per field */
#define SP_MAX_NUM_FIELDS 64      /* fields counted for out-of-range values */
/* Event numbers beyond +-2^53 are out of range: no Spark field comes
 * near it (2^53 ms is 285 000 years, 2^53 bytes 8 PiB), and doubles stop
 * being exact there. */
#define SP_NUM_LIMIT 9007199254740992.0

/* --- the fast scanner (spark_scan.c) ----------------------------------- */

enum sp_reason {
    SP_R_SUCCESS = 0,
    SP_R_KILLED,        /* TaskKilled: counted as killed */
    SP_R_COMMIT_DENIED, /* TaskCommitDenied: counted as killed too */
    SP_R_FAILED         /* every other reason: counted as failed */
};

/* Sums of Spark's TaskMetrics that the History Server adds per stage. */
typedef struct sp_metrics {
    int64_t run_ms, cpu_ns, deser_ms, deser_cpu_ns, gc_ms, result_size,
        ser_ms, mem_spill, disk_spill, peak_mem;
    int64_t sr_remote_blocks, sr_local_blocks, sr_fetch_wait_ms,
        sr_remote_bytes, sr_remote_disk_bytes, sr_local_bytes, sr_records;
    int64_t sw_bytes, sw_time_ns, sw_records;
    int64_t in_bytes, in_records, out_bytes, out_records;
} sp_metrics;

/* Peak executor metrics (Spark's ExecutorMetricType names) read from
 * "Task Executor Metrics" (TaskEnd), StageExecutorMetrics and heartbeat
 * events: memory peaks and the cumulative GC counters. Names of both
 * sides in sp_peak_keys (spark_detect.c), docs/model-spark.md. */
enum sp_peak_id {
    SP_PK_JVM_HEAP = 0,
    SP_PK_JVM_OFFHEAP,
    SP_PK_ONHEAP_EXEC,
    SP_PK_OFFHEAP_EXEC,
    SP_PK_ONHEAP_STORAGE,
    SP_PK_OFFHEAP_STORAGE,
    SP_PK_DIRECT_POOL,
    SP_PK_JVM_RSS,
    SP_PK_PYTHON_RSS,
    SP_PK_OTHER_RSS,
    SP_PK_MINOR_GC_MS,
    SP_PK_MAJOR_GC_MS,
    SP_PK_TOTAL_GC_MS,
    SP_PK_COUNT
};

typedef struct sp_peak_key {
    const char *spark; /* the key in the event */
    size_t len;        /* strlen(spark), at compile time */
    const char *model; /* the name in the model */
} sp_peak_key;

extern const sp_peak_key sp_peak_keys[SP_PK_COUNT];

/* A borrowed span of the line (raw JSON string contents, still escaped). */
typedef struct sp_span {
    const char *s;
    size_t n;
} sp_span;

typedef struct sp_task {
    int64_t stage_id, stage_attempt;
    int64_t task_id, index, attempt, partition, launch, finish;
    int speculative;
    sp_span executor, host;
    int reason;         /* enum sp_reason (TaskEnd only) */
    sp_span reason_obj; /* the whole "Task End Reason" object (TaskEnd) */
    sp_span reason_name;
    int has_metrics;
    sp_metrics m;
    unsigned absent; /* 1 << enum sp_dist_id: out of range in this task */
    int has_peak;    /* "Task Executor Metrics" were read */
    int64_t peak[SP_PK_COUNT];
} sp_task;

/* Which fast path a line takes, from its "Event" value. */
enum sp_event {
    SP_EV_OTHER = 0,
    SP_EV_TASK_START,
    SP_EV_TASK_END
};

/* Classifies the line by its "Event" value when the line starts in the
 * form Spark writes ({"Event":"...). *name gets the event name span
 * (empty when the line has another shape). */
int sp_scan_event(const char *line, sp_span *name);

/* Fills t from a TaskStart/TaskEnd line (line[len] is NUL). Returns 0, or -1
 * when the line is not in the expected shape (the caller then tries the
 * full JSON parser, which also decides whether the line is malformed). */
int sp_scan_task(const char *line, size_t len, int end_event, sp_task *t);

/* Copies a JSON string body (escaped) into out (cap > 0), unescaping and
 * truncating; always NUL-terminates. Returns the length written. */
size_t sp_unescape(sp_span in, char *out, size_t cap);

/* --- distributions (spark_dist.c) -------------------------------------- */

/* Exact values up to SP_DIST_EXACT_MAX, then a DDSketch-style log-bucket
 * histogram with SP_SKETCH_ALPHA relative accuracy. count, min, max, sum
 * and mean stay exact in both modes. */
/* acc += x, saturating at the bounds of int64_t: sums of values a log
 * controls (task metrics, durations, stage totals) must not overflow. */
#define SP_SAT_ADD(acc, x)                                                  \
    do {                                                                    \
        int64_t sp_x_ = (x);                                                \
        if (__builtin_add_overflow((acc), sp_x_, &(acc)))                   \
            (acc) = sp_x_ < 0 ? INT64_MIN : INT64_MAX;                      \
    } while (0)

#define SP_SKETCH_ALPHA 0.005

typedef struct sp_dist {
    uint64_t n;
    double min, max, sum;
    double *vals; /* exact mode: n values (NULL while all were zero) */
    size_t cap;
    uint32_t *bins; /* sketch mode when non-NULL */
    uint64_t zeros; /* sketch mode: values <= 0 */
} sp_dist;

void sp_dist_add(sp_dist *d, double v);
/* Summarizes (exact: linear interpolation between closest ranks, as the
 * host does; sketch: bucket midpoints) and frees the values. Returns 0 on
 * success, -1 when d is empty. */
int sp_dist_finish(sp_dist *d, op_dist *out);
void sp_dist_free(sp_dist *d);

/* --- application state (spark_app.c) ----------------------------------- */

enum sp_stage_status {
    SP_ST_PENDING = 0,
    SP_ST_ACTIVE,
    SP_ST_COMPLETE,
    SP_ST_FAILED,
    SP_ST_SKIPPED
};

enum sp_dist_id {
    SP_D_RUN = 0,
    SP_D_DURATION,
    SP_D_GC,
    SP_D_MEM_SPILL,
    SP_D_DISK_SPILL,
    SP_D_SR_BYTES,
    SP_D_SW_BYTES,
    SP_D_IN_BYTES,
    SP_D_COUNT
};

typedef struct sp_stage {
    int64_t id, attempt;
    char *name;
    char *failure; /* Failure Reason, when the attempt failed */
    int64_t num_tasks;
    int64_t submitted_at, completed_at, first_launch;
    int64_t *parents;
    size_t nparents;
    int64_t job_id; /* -1 when unknown */
    int status;     /* enum sp_stage_status */
    int live;       /* in Spark's liveStages */
    int seen_submit;
    int64_t active, completed, failed, killed;
    sp_metrics sum;
    int64_t task_time_ms; /* sum of finish - launch */
    /* Allocated lazily, so a stage costs little once closed: the values
     * while tasks can add some (NULL before the first), then only the
     * summaries of the metrics that had values (has_summary bits). */
    sp_dist *dist;    /* SP_D_COUNT */
    op_dist *summary; /* SP_D_COUNT */
    unsigned has_summary; /* 1 << enum sp_dist_id */
    int dists_done;
    /* the slowest successful task (run time), for skew evidence */
    int64_t slow_run, slow_index, slow_partition, slow_in, slow_sr,
        slow_duration;
    char slow_exec[SP_ID_MAX], slow_host[SP_ID_MAX];
    int has_slow;
    char *scan;    /* what the stage reads from outside (spark_detect.c) */
    int persisted; /* an RDD of the stage has a storage level */
    int sql_exchange; /* an RDD of the stage is in a SQL Exchange scope */
} sp_stage;

typedef struct sp_job {
    int64_t id;
    int64_t submitted_at, completed_at;
    int64_t *stages;
    size_t nstages;
    int64_t sql_id; /* -1 when none */
    char *name, *group, *description, *failure;
    int ended, succeeded;
    int derived; /* times taken from the stages */
} sp_job;

typedef struct sp_sql {
    int64_t id;
    int64_t started_at, ended_at;
    char *description;
    char *error;
    int ended;
    int64_t jobs; /* jobs of the execution (counted at emission) */
    struct sp_plan *plan; /* its latest physical plan (spark_detect.c) */
} sp_sql;

typedef struct sp_exec {
    char *id, *host, *reason;
    int64_t cores, added_at, removed_at; /* removed_at -1 while alive */
} sp_exec;

typedef struct sp_failure {
    int64_t stage_id, stage_attempt;
    char *reason, *detail; /* reason name, first message */
    char *executor;
    int64_t count, first_at;
} sp_failure;

/* Open-addressing index over an array its caller owns: a slot holds a
 * position + 1 (0 is empty). The caller hashes and compares. */
typedef struct sp_index {
    size_t *slot;
    size_t cap;
} sp_index;

typedef uint64_t (*sp_hash_fn)(const void *ctx, size_t i);
typedef int (*sp_eq_fn)(const void *ctx, size_t i, const void *key);

/* The position + 1 of the item equal to key (hash h), or 0. */
size_t sp_index_find(const sp_index *x, uint64_t h, sp_eq_fn eq,
                     const void *ctx, const void *key);
/* Indexes position i of an array of n items (i included), rehashing all
 * through hash when the table is half full. Returns 0, -1 on no memory. */
int sp_index_put(sp_index *x, size_t n, size_t i, sp_hash_fn hash,
                 const void *ctx);
uint64_t sp_mix(uint64_t x);
uint64_t sp_hash_str(const char *s);

/* One of the caps above: how often it was hit and where first. */
enum sp_cap_id { SP_CAP_STAGES = 0, SP_CAP_JOBS, SP_CAP_SQLS, SP_CAP_EXECS,
                 SP_CAP_COUNT };

typedef struct sp_cap {
    int64_t over;        /* events that would have created one more */
    uint64_t first_line; /* where the cap was first hit */
} sp_cap;

/* Out-of-range numbers of one field (its path in the event). */
typedef struct sp_num_field {
    char path[96];
    int64_t count;
} sp_num_field;

/* Open-addressing set of running task ids (Spark's liveTasks). */
typedef struct sp_idset {
    int64_t *keys; /* INT64_MIN marks an empty slot */
    size_t cap, n;
    int full_warned;
} sp_idset;

typedef struct sp_app {
    op_builder *b;
    const char *input; /* display name of the stream */
    char *app_id, *app_name, *user, *attempt_id, *version;
    /* Databricks' DBCEventLoggingListenerMetadata, one per rollover part:
     * its Spark Version stands in when there is no LogStart */
    char *dbc_version;
    int dbc_seen;
    char dbc_context[32]; /* SparkContext Id of the first part (digits) */
    long long dbc_last;   /* Rollover Number of the last part read */
    int64_t dbc_parts;    /* parts read */
    int64_t app_start, app_end;
    int has_start, has_env; /* ApplicationStart, EnvironmentUpdate read */
    int has_end;
    int64_t exit_code;
    int has_exit_code;
    cJSON *props; /* Spark Properties (owned) */
    char *java_command; /* the driver's sun.java.command (System Properties) */
    int64_t last_time; /* latest event time seen */
    sp_stage **stages;
    size_t nstages, cap_stages;
    sp_index stage_ix; /* (id, attempt) */
    sp_job *jobs;
    size_t njobs, cap_jobs;
    sp_index job_ix;
    sp_sql *sqls;
    size_t nsqls, cap_sqls;
    sp_index sql_ix;
    sp_exec *execs;
    size_t nexecs, cap_execs;
    sp_index exec_ix;
    sp_cap caps[SP_CAP_COUNT];
    sp_num_field num_fields[SP_MAX_NUM_FIELDS];
    int nnum_fields;
    int64_t num_other;  /* out-of-range values of fields past the table */
    int64_t dup_keys;   /* duplicated keys in all */
    sp_failure *fails;
    size_t nfails, cap_fails;
    int64_t fail_overflow;
    sp_idset live;
    int64_t lines, events, bad_lines, orphan_task_ends, unknown_events;
    int64_t sql_adaptive_updates, blacklist_events;
    char bad_report[SP_MAX_BAD_REPORTED][160];
    int nbad_report;
    int compact; /* a .compact file was read */
    int in_progress; /* the name or the stream says so */
    int cut_last_line;
    uint64_t last_line_no;
    char *warnings[SP_MAX_WARNINGS];
    int nwarnings;
    int64_t warnings_dropped;
    struct sp_detect *det; /* peaks and SQL metric values (spark_detect.c) */
    int oom;
} sp_app;

void sp_app_init(sp_app *a, op_builder *b, const char *input);
void sp_app_free(sp_app *a);

/* The handlers: the scanned task events and the parsed rare events. */
void sp_on_task_start(sp_app *a, const sp_task *t);
void sp_on_task_end(sp_app *a, const sp_task *t);
/* Handles a parsed event of name ev (fully-qualified names allowed).
 * Returns 1 when the event was known, 0 when ignored. */
int sp_on_event(sp_app *a, const char *ev, const cJSON *o);
/* Converts a TaskStart/TaskEnd object parsed by cJSON (the slow path).
 * t's spans borrow from o (and from buf, where the end reason is printed
 * for the failure details; cap <= INT_MAX); both must outlive t's use.
 * Returns 0, or -1 when o has no "Task Info" object. */
int sp_task_from_json(const cJSON *o, int end_event, sp_task *t,
                      char *buf, size_t cap);

/* Makes room for one more item (sz bytes) in *arr of n items and *cap
 * slots. Returns 0, or -1 with a->oom set. */
int sp_grow(sp_app *a, void **arr, size_t n, size_t *cap, size_t sz);

/* A run warning (kept until the run is written). */
void sp_warn(sp_app *a, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Frees the stage's distributions and summaries (a resubmitted stage
 * starts again from none). */
void sp_stage_drop_dists(sp_stage *s);

/* StageCompleted hook: retires the stage when no task of it runs. */
void sp_stage_completed(sp_app *a, sp_stage *s);
/* Summarizes the distributions of every stage (end of the log). */
void sp_app_close_all(sp_app *a);

/* Writes the run, its nodes and series into the builder. */
void sp_app_emit(sp_app *a);

/* An app with an App Attempt ID (spark_attempts.c): kept in the plugin
 * slot instead of written, as a summary and, when it is the latest attempt
 * of its app read so far, whole (then moved out of a, which is left
 * empty). origin names the input. Returns 0, 1 (an older attempt: only its
 * summary kept; a is the caller's), -1 on no memory. */
int sp_attempt_defer(sp_app *a, const char *origin);
/* finish(): writes every kept app, one run each, with its attempts. */
int sp_attempts_finish(op_builder *b, op_error *err);

/* A DBCEventLoggingListenerMetadata line (spark_rollover.c). Returns 0,
 * or -1 when the line is not a JSON object (malformed or cut). */
int sp_on_rollover_line(sp_app *a, const char *line, size_t len,
                        uint64_t line_no);

/* Job keys of apps whose name says nothing (spark_jobkey.c): whether
 * name is one ("Spark shell", "PySparkShell", "Databricks Shell", a
 * UUID, ...: the one list), and the key of such an app: its name and
 * " [main=..., user=..., cluster=...]" of what the log gives, into buf
 * (cap bytes; returned). */
int sp_generic_name(const char *name);
const char *sp_generic_key(const sp_app *a, char *buf, size_t cap);

/* The run attrs saying where and on what the app ran (spark_platform.c):
 * platform, cluster_manager, accelerator, photon. */
void sp_platform_emit(sp_app *a, op_run *r);

/* Stage lookup / creation (NULL on out of memory, a->oom set, or past
 * SP_MAX_STAGES, counted in a->caps). */
sp_stage *sp_stage_find(sp_app *a, int64_t id, int64_t attempt);
sp_stage *sp_stage_get(sp_app *a, int64_t id, int64_t attempt);

/* Whether one more item of cap c may be created (n exist now); counts and
 * warns (once, naming the line) when not. */
int sp_cap_allows(sp_app *a, int c, size_t n);
/* The final warnings of the caps, out-of-range values and duplicate keys. */
void sp_limit_warnings(sp_app *a);

/* Makes a parsed event consistent with Spark's reader and safe to use:
 * of duplicated keys the last one wins (Jackson's readTree), with a
 * warning; numbers beyond SP_NUM_LIMIT are turned into SP_OUT_OF_RANGE
 * markers (read as absent), with a warning naming the line and field.
 * Returns 0, -1 on no memory (a->oom set). */
int sp_json_sanitize(sp_app *a, cJSON *o);
/* A value the sanitizer took out: reads as absent everywhere, but task
 * metrics tell it from a field the log never had. */
int sp_out_of_range(const cJSON *v);

/* JSON helpers over cJSON (missing or mistyped fields give the default). */
int64_t sp_jint(const cJSON *o, const char *key, int64_t def);
/* v as an integer, or def when v is not a number (an out-of-range value
 * was made a marker by sp_json_sanitize, so it reads as def; the clamp to
 * +-2^53 is only a last guard for trees that were not sanitized). */
int64_t sp_jnum(const cJSON *v, int64_t def);
const char *sp_jstr(const cJSON *o, const char *key);
char *sp_strdup_max(const char *s, size_t max);

/* --- what detection rules need (spark_detect.c) ------------------------ */

int sp_stage_emitted(const sp_stage *s);
/* Reads the executor metrics object o (either path) into peak[]; returns
 * 1 when it had any of them. */
int sp_peaks_from_json(const cJSON *o, int64_t peak[SP_PK_COUNT]);
/* Folds one executor's peaks into its record (max per metric). */
void sp_peaks_add(sp_app *a, sp_span executor, const int64_t *peak);
/* StageExecutorMetrics / ExecutorMetricsUpdate events. */
void sp_on_exec_metrics(sp_app *a, const cJSON *o, int heartbeat);
/* What a StageInfo's "RDD Info" says the stage reads and persists. */
void sp_stage_rdds(sp_app *a, sp_stage *s, const cJSON *info);
/* The physical plan of an execution (start or adaptive update). */
void sp_sql_plan(sp_app *a, sp_sql *q, const cJSON *o);
/* SQL metric values: a StageInfo's Accumulables, DriverAccumUpdates. */
void sp_accum_stage(sp_app *a, const cJSON *info);
void sp_accum_driver(sp_app *a, const cJSON *o);
/* Writes peaks, stage scans and SQL plans into run r (nodes exist). */
void sp_detect_emit(sp_app *a, op_run *r);
void sp_plan_free(struct sp_plan *p);
void sp_detect_free(sp_app *a);

#endif
