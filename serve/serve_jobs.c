/*
 * serve_jobs.c - the analyses of `optipipe serve` (serve.h): their folders
 * in DATA/analyses, the bounded queue, and the worker slots that run each
 * analysis in its own process (`optipipe serve --worker ID`, serve_worker.c).
 *
 * What is on disk is the truth: every state change is written to the
 * analysis' meta.json (atomically: temp file, fsync, rename, fsync of the
 * folder) so that a server killed at any point (also kill -9) restarts on
 * the same DATA with every finished analysis as it was and every queued or
 * interrupted one queued again. Only this file writes meta.json.
 *
 * A worker is `s->self_exe serve --worker ID --data DATA` plus the options
 * the analysis needs, started with posix_spawn (the server has threads:
 * no fork without exec) in a process group of its own, stdin and stdout
 * /dev/null, stderr a pipe the slot copies into worker.log (at most
 * WORKER_LOG_MAX bytes); its slot waits on a pidfd with the wall-clock
 * limit --analysis-timeout, then kills the group with SIGKILL. The worker
 * sets its own rlimits and dies with the server (serve_worker.c).
 *
 * Locking: one mutex (srv_jobs.mu) guards every field of srv_jobs and of
 * its job records: the list, the counters, the durations and each job's
 * state and pid. It is held only to read or change them, never across
 * file I/O, a spawn or a wait (jobs_close sends its kills under it). A
 * slot that ends an analysis works out the end under the lock (job_end),
 * writes meta.json without it, then makes the end visible under it
 * (job_apply): a state a client sees is on disk already. A job's pid is
 * cleared under the lock before the worker is reaped, so no kill reaches
 * a process that reused the pid. Each
 * analysis' meta.json has one writer at a time: jobs_submit before the
 * job is listed, then the slot that runs it. The condition variable
 * srv_jobs.cv (with mu) wakes the slots when work is queued or the jobs
 * close. Callbacks of jobs_each run without the lock.
 *
 * With a PostgreSQL store (docs/serve.md "Several instances") the queue
 * is the store's analyses table instead of the list, which stays empty:
 * several instances share DATA and the table. A slot takes the oldest
 * queued row (store_queue_claim: FOR UPDATE SKIP LOCKED), beats its
 * heartbeat while the worker runs (every heartbeat_stale / 4) and writes
 * its end there; a slot whose row was taken over (its heartbeat went
 * stale: the instance hung or the store was away that long) kills its
 * worker and writes nothing. Every idle slot queues again the running
 * rows whose heartbeat is stale (an instance killed with kill -9) before
 * it looks for work: when any instance queued some (LISTEN/NOTIFY,
 * store_queue_wait), else every poll_ms.
 * meta.json is still written, as a mirror of the row by the instance
 * that ran it last: at a start the folders the table does not
 * know yet (a DATA of a server before schema 6) are imported from it,
 * but not one younger than heartbeat_stale (another instance is adding
 * it: an import first would make its insert fail).
 * On stop (SIGTERM) an instance hands its running analyses back (queued
 * again at once, for another instance) instead of waiting for them.
 */
#define _GNU_SOURCE /* renameat2, pidfd_open, posix_spawn_file_actions_addclosefrom_np */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "jsonw.h"
#include "serve.h"
#include "store.h"
#include "util.h"

extern char **environ;

#define META_MAX (64u * 1024) /* a meta.json larger than this is broken */
#define URL_MAX SRV_FIELD_MAX /* one URL input (urls.txt line) */
#define DURATIONS 16          /* recent durations behind jobs_retry_after */
#define LOG_TAIL 4096         /* last bytes of a worker's stderr kept for the reason */
#define WORKER_LOG_MAX (4u << 20) /* worker.log is cut beyond this */
#define DATA_MAX 3800          /* DATA/analyses/<id>/report.html.tmp fits 4096 */
#define WORKER_ARGS (16 + 2 * (2 * SRV_MAX_LIST))
#define WORKER_TMP "tmp"      /* a worker's TMPDIR, inside its analysis folder */
#define TMP_SHARED_AGE_S 86400 /* DATA/tmp leftovers removed when shared */

/* One analysis as the server keeps it (small: DATA may hold many). */
typedef struct job {
    char id[SRV_ID_LEN + 1];
    srv_state state;
    int64_t created_ms, started_ms, finished_ms;
    int exit_code;
    char *error;   /* SRV_FAILED, SRV_RECORD_FAILED: why; NULL otherwise */
    size_t nfiles;
    uint64_t bytes;
    pid_t pid;     /* the running worker (its process group); 0: none */
    int retrying;  /* jobs_retry is writing its meta.json */
} job;

struct srv_jobs {
    srv *s;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job **all;        /* oldest first: queued ones run in this order */
    size_t n, cap;
    size_t queued, running, reserved; /* reserved: submits under way */
    uint64_t done, failed, rejected;
    uint64_t dur_ms[DURATIONS];
    size_t ndur;
    int stopping;
    pthread_t *slots;
    size_t nslots;
    /* a PostgreSQL store: the analyses table is the queue (above) */
    int shared;
    store **dbs;           /* the HTTP threads' connections (ndbs) */
    int *db_busy;          /* dbs[i] is lent (dbmu) */
    size_t ndbs;
    pthread_mutex_t dbmu;
    pthread_cond_t dbcv;   /* a connection was given back */
    char instance[STORE_INSTANCE_MAX + 1];
    int64_t stale_ms, beat_ms, poll_ms;
    pid_t *slot_pid;       /* each slot's running worker (mu); 0: none */
    size_t kicks;          /* analyses this instance queued, for the slots */
    int stop_pipe[2];      /* shared: the write end closed when stopping
                            * (what wakes the slots waiting on the store) */
    struct slot_arg *args;
};

typedef struct slot_arg {
    srv_jobs *j;
    int slot;
} slot_arg;

/* ---- small pieces ------------------------------------------------------------ */

const char *srv_state_name(srv_state s)
{
    static const char *const names[] = {"queued", "running", "done", "failed",
                                        "record-failed"};

    return (unsigned)s < sizeof names / sizeof *names ? names[s] : "unknown";
}

static int state_parse(const char *name, srv_state *out)
{
    for (int i = SRV_QUEUED; i < SRV_STATES; i++)
        if (strcmp(name, srv_state_name((srv_state)i)) == 0) {
            *out = (srv_state)i;
            return 0;
        }
    return -1;
}

int srv_id_valid(const char *id)
{
    size_t i;

    if (!id)
        return 0;
    for (i = 0; i < SRV_ID_LEN; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f')))
            return 0;
    return id[i] == '\0';
}

static int64_t epoch_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int new_id(char id[SRV_ID_LEN + 1], op_error *err)
{
    static const char hex[] = "0123456789abcdef";
    unsigned char r[SRV_ID_LEN / 2];
    size_t got = 0;

    while (got < sizeof r) {
        ssize_t k = getrandom(r + got, sizeof r - got, 0);
        if (k < 0 && errno != EINTR)
            return op_error_set(err, OP_EIO, "getrandom: %s", strerror(errno));
        if (k > 0)
            got += (size_t)k;
    }
    for (size_t i = 0; i < sizeof r; i++) {
        id[2 * i] = hex[r[i] >> 4];
        id[2 * i + 1] = hex[r[i] & 15];
    }
    id[SRV_ID_LEN] = '\0';
    return 0;
}

static int path_of(char *buf, size_t cap, const char *a, const char *b,
                   const char *c, op_error *err)
{
    int n = c ? snprintf(buf, cap, "%s/%s/%s", a, b, c)
              : snprintf(buf, cap, "%s/%s", a, b);

    if (n < 0 || (size_t)n >= cap)
        return op_error_set(err, OP_ELIMIT, "%s/%s: path too long", a, b);
    return 0;
}

static int fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

    if (fd < 0)
        return -1;
    rc = fsync(fd);
    close(fd);
    return rc;
}

int srv_write_atomic(const char *dir, const char *name,
                     int (*fill)(FILE *f, void *ud), void *ud, op_error *err)
{
    char path[4096], tmp[4096 + 8];
    FILE *f = NULL;
    int fd, rc = 0, bad;

    if ((rc = path_of(path, sizeof path, dir, name, NULL, err)))
        return rc;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || !(f = fdopen(fd, "w"))) {
        rc = op_error_set(err, OP_EIO, "%s: %s", tmp, strerror(errno));
        if (fd >= 0)
            close(fd);
        goto out;
    }
    errno = 0;
    bad = fill(f, ud) != 0;
    bad |= fflush(f) != 0 || ferror(f) || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad)
        rc = op_error_set(err, OP_EIO, "%s: cannot write: %s", tmp,
                          errno ? strerror(errno) : "error");
    else if (rename(tmp, path) != 0 || fsync_dir(dir) != 0)
        rc = op_error_set(err, OP_EIO, "%s: %s", path, strerror(errno));
out:
    if (rc)
        unlink(tmp);
    return rc;
}

/* ---- meta.json ------------------------------------------------------------------ */

static int meta_fill(FILE *f, void *ud)
{
    const srv_analysis *a = ud;
    jw w;

    jw_init(&w, f, 1);
    jw_obj(&w);
    jw_key(&w, "id"), jw_str(&w, a->id);
    jw_key(&w, "state"), jw_str(&w, srv_state_name(a->state));
    jw_key(&w, "created_ms"), jw_int(&w, a->created_ms);
    jw_key(&w, "started_ms"), jw_int(&w, a->started_ms);
    jw_key(&w, "finished_ms"), jw_int(&w, a->finished_ms);
    jw_key(&w, "exit_code"), jw_int(&w, a->exit_code);
    jw_key(&w, "error"), jw_str(&w, a->error);
    jw_key(&w, "files"), jw_int(&w, (int64_t)a->nfiles);
    jw_key(&w, "bytes"), jw_int(&w, (int64_t)a->bytes);
    jw_obj_end(&w);
    fputc('\n', f);
    return 0;
}

static int meta_write(const srv_analysis *a, op_error *err)
{
    return srv_write_atomic(a->dir, SRV_META, meta_fill, (void *)a, err);
}

static int meta_int(const cJSON *root, const char *key, int64_t lo, int64_t hi,
                    int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);

    if (!cJSON_IsNumber(v) || v->valuedouble < (double)lo ||
        v->valuedouble > (double)hi || v->valuedouble != (double)(int64_t)v->valuedouble)
        return -1;
    *out = (int64_t)v->valuedouble;
    return 0;
}

/* Parses meta.json text of analysis id into a (a->dir is the caller's). */
static int meta_parse(const char *text, size_t len, const char *id,
                      srv_analysis *a, op_error *err)
{
    cJSON *root = cJSON_ParseWithLength(text, len);
    const cJSON *v;
    int64_t created, started, finished, code, files, bytes;
    int rc = 0;

    if (!root)
        return op_error_set(err, OP_EPARSE, "not JSON");
    v = cJSON_GetObjectItemCaseSensitive(root, "id");
    if (!cJSON_IsString(v) || strcmp(v->valuestring, id) != 0) {
        rc = op_error_set(err, OP_EPARSE, "$.id: not the folder's id");
        goto out;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "state");
    if (!cJSON_IsString(v) || state_parse(v->valuestring, &a->state)) {
        rc = op_error_set(err, OP_EPARSE, "$.state: not a state");
        goto out;
    }
    if (meta_int(root, "created_ms", 0, INT64_MAX / 2, &created) ||
        meta_int(root, "started_ms", 0, INT64_MAX / 2, &started) ||
        meta_int(root, "finished_ms", 0, INT64_MAX / 2, &finished) ||
        meta_int(root, "exit_code", -1, 255, &code) ||
        meta_int(root, "files", 0, INT32_MAX, &files) ||
        meta_int(root, "bytes", 0, INT64_MAX / 2, &bytes)) {
        rc = op_error_set(err, OP_EPARSE, "a time or count is missing or out of range");
        goto out;
    }
    v = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (!cJSON_IsString(v)) {
        rc = op_error_set(err, OP_EPARSE, "$.error: not a string");
        goto out;
    }
    memcpy(a->id, id, SRV_ID_LEN + 1); /* checked by the caller */
    snprintf(a->error, sizeof a->error, "%s", v->valuestring);
    a->created_ms = created, a->started_ms = started, a->finished_ms = finished;
    a->exit_code = (int)code;
    a->nfiles = (size_t)files;
    a->bytes = (uint64_t)bytes;
out:
    cJSON_Delete(root);
    return rc;
}

/* Reads a->dir/meta.json of analysis id into a. */
static int meta_read(const char *id, srv_analysis *a, op_error *err)
{
    struct stat st;
    char path[4096], *buf;
    ssize_t len = 0;
    int fd, rc;

    if ((rc = path_of(path, sizeof path, a->dir, SRV_META, NULL, err)))
        return rc;
    /* O_NONBLOCK: a FIFO put there must not stop the server's start */
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0)
        return op_error_set(err, OP_EIO, "%s", strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return op_error_set(err, OP_EIO, "not a regular file");
    }
    buf = malloc(META_MAX + 1);
    if (!buf) {
        close(fd);
        return op_error_set(err, OP_ENOMEM, "out of memory");
    }
    for (;;) {
        ssize_t k = read(fd, buf + len, META_MAX + 1 - (size_t)len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            if (k < 0)
                rc = op_error_set(err, OP_EIO, "%s", strerror(errno));
            break;
        }
        len += k;
        if (len > (ssize_t)META_MAX) {
            rc = op_error_set(err, OP_ELIMIT, "larger than %u bytes", META_MAX);
            break;
        }
    }
    close(fd);
    if (!rc)
        rc = meta_parse(buf, (size_t)len, id, a, err);
    free(buf);
    return rc;
}

/* ---- the list (every function here runs with j->mu held) -------------------- */

static void job_view(const srv_jobs *j, const job *jb, srv_analysis *a)
{
    memset(a, 0, sizeof *a);
    memcpy(a->id, jb->id, sizeof a->id);
    a->state = jb->state;
    a->created_ms = jb->created_ms;
    a->started_ms = jb->started_ms;
    a->finished_ms = jb->finished_ms;
    a->exit_code = jb->exit_code;
    snprintf(a->error, sizeof a->error, "%s", jb->error ? jb->error : "");
    if (snprintf(a->dir, sizeof a->dir, "%s/analyses/%s", j->s->data, jb->id) >=
        (int)sizeof a->dir)
        a->dir[0] = '\0'; /* never: jobs_open checked the length of DATA */
    a->nfiles = jb->nfiles;
    a->bytes = jb->bytes;
}

/* The state of a into jb (job_view's other way; not the id or error). */
static void job_set(job *jb, const srv_analysis *a)
{
    jb->state = a->state;
    jb->created_ms = a->created_ms;
    jb->started_ms = a->started_ms;
    jb->finished_ms = a->finished_ms;
    jb->exit_code = a->exit_code;
    jb->nfiles = a->nfiles;
    jb->bytes = a->bytes;
}

static job *job_from(const srv_analysis *a)
{
    job *jb = calloc(1, sizeof *jb);

    if (!jb)
        return NULL;
    memcpy(jb->id, a->id, sizeof jb->id);
    job_set(jb, a);
    if (a->error[0] && !(jb->error = strdup(a->error))) {
        free(jb);
        return NULL;
    }
    return jb;
}

static void job_free(job *jb)
{
    if (jb) {
        free(jb->error);
        free(jb);
    }
}

static int list_add(srv_jobs *j, job *jb)
{
    if (j->n == j->cap) {
        size_t cap = j->cap ? 2 * j->cap : 64;
        job **all = realloc(j->all, cap * sizeof *all);
        if (!all)
            return -1;
        j->all = all;
        j->cap = cap;
    }
    j->all[j->n++] = jb;
    if (jb->state == SRV_QUEUED)
        j->queued++;
    return 0;
}

static job *list_find(const srv_jobs *j, const char *id, size_t *ahead)
{
    size_t q = 0;

    for (size_t i = 0; i < j->n; i++) {
        if (strcmp(j->all[i]->id, id) == 0) {
            if (ahead)
                *ahead = q;
            return j->all[i];
        }
        q += j->all[i]->state == SRV_QUEUED;
    }
    return NULL;
}

static job *list_oldest_queued(const srv_jobs *j)
{
    for (size_t i = 0; i < j->n; i++)
        if (j->all[i]->state == SRV_QUEUED)
            return j->all[i];
    return NULL;
}

/* The reason of a failed job; on OOM meta.json still gets it (the view is
 * written from why) and the server says so. */
static void set_error(job *jb, const char *why)
{
    free(jb->error);
    jb->error = why && *why ? strdup(why) : NULL;
    if (why && *why && !jb->error)
        fprintf(stderr, "optipipe serve: %s: out of memory keeping the reason "
                "(in %s): %s\n", jb->id, SRV_META, why);
}

/* ---- recovery (jobs_open) ------------------------------------------------------ */

/* Empties DATA/tmp: uploads of an earlier server that never finished.
 * min_age_s > 0 (instances sharing DATA: another one may be receiving an
 * upload there): only what was not changed for that long. */
static void tmp_clean(const char *tmp, int64_t min_age_s)
{
    char path[4096 + 272];
    DIR *d = opendir(tmp);
    struct dirent *e;
    struct stat st;

    while (d && (e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", tmp, e->d_name);
        if (min_age_s > 0 && (lstat(path, &st) != 0 ||
                              (int64_t)st.st_mtime > (int64_t)time(NULL) - min_age_s))
            continue;
        if (util_remove_tree(path) != 0)
            fprintf(stderr, "optipipe serve: %s: cannot remove: %s\n", path,
                    strerror(errno));
    }
    if (d)
        closedir(d);
}

static int cmp_created(const void *pa, const void *pb)
{
    const job *a = *(job *const *)pa, *b = *(job *const *)pb;

    if (a->created_ms != b->created_ms)
        return a->created_ms < b->created_ms ? -1 : 1;
    return strcmp(a->id, b->id);
}

/* One folder of DATA/analyses: listed (queued again when it was queued or
 * running), or said on stderr and left alone. Fails only on OOM. */
static int recover_one(srv_jobs *j, const char *adir, const char *name)
{
    struct stat st;
    srv_analysis a;
    op_error err;
    job *jb;

    memset(&a, 0, sizeof a);
    op_error_clear(&err);
    if (!srv_id_valid(name)) {
        fprintf(stderr, "optipipe serve: %s/%s: not an analysis id: skipped\n",
                adir, name);
        return 0;
    }
    if (snprintf(a.dir, sizeof a.dir, "%s/%s", adir, name) >= (int)sizeof a.dir)
        return 0; /* never: jobs_open checked the length of DATA */
    if (lstat(a.dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        /* a symlink would make the server write and remove (worker.log,
         * meta.json, tmp/) where it points */
        fprintf(stderr, "optipipe serve: %s: not a folder: skipped, left in place\n",
                a.dir);
        return 0;
    }
    if (meta_read(name, &a, &err)) {
        fprintf(stderr, "optipipe serve: %s/%s: %s unreadable (%s): skipped, "
                "left in place\n", a.dir, SRV_META, SRV_META, err.msg);
        return 0;
    }
    if (a.state == SRV_RUNNING || a.state == SRV_QUEUED) {
        int was_running = a.state == SRV_RUNNING;
        a.state = SRV_QUEUED;
        a.started_ms = a.finished_ms = 0;
        /* shared: another instance may be running it (the row says) */
        if (was_running && !j->shared && meta_write(&a, &err))
            fprintf(stderr, "optipipe serve: %s: %s (queued again all the same)\n",
                    a.dir, err.msg);
    }
    if (!(jb = job_from(&a)) || list_add(j, jb)) {
        job_free(jb);
        return -1;
    }
    return 0;
}

static int recover(srv_jobs *j, op_error *err)
{
    char adir[4096 + 16], tmp[4096 + 16];
    DIR *d;
    struct dirent *e;
    int rc = 0;

    snprintf(adir, sizeof adir, "%s/analyses", j->s->data);
    snprintf(tmp, sizeof tmp, "%s/tmp", j->s->data);
    if ((mkdir(adir, 0700) != 0 && errno != EEXIST) ||
        (mkdir(tmp, 0700) != 0 && errno != EEXIST))
        return op_error_set(err, OP_EIO, "%s: %s", j->s->data, strerror(errno));
    /* shared: other instances' uploads may be under way there; one not
     * touched for a day is a killed instance's (--conn-timeout ends an
     * upload that stalls far sooner) */
    tmp_clean(tmp, j->shared ? TMP_SHARED_AGE_S : 0);
    if (!(d = opendir(adir)))
        return op_error_set(err, OP_EIO, "%s: %s", adir, strerror(errno));
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (recover_one(j, adir, e->d_name)) {
            rc = op_error_set(err, OP_ENOMEM, "%s: out of memory", adir);
            break;
        }
    }
    closedir(d);
    if (!rc && j->n)
        qsort(j->all, j->n, sizeof *j->all, cmp_created);
    return rc;
}

/* ---- running one analysis ----------------------------------------------------- */

/* The worker's command line: what the analysis needs of the server's
 * options (serve_worker.c reads them back). Numbers go into nums. */
static void worker_argv(const srv *s, const char *id, char nums[2][24],
                        char *argv[WORKER_ARGS])
{
    const serve_opts *o = s->o;
    size_t n = 0;

    argv[n++] = (char *)s->self_exe;
    argv[n++] = "serve";
    argv[n++] = "--worker";
    argv[n++] = (char *)id;
    argv[n++] = "--data";
    argv[n++] = (char *)s->data;
    if (o->store) {
        argv[n++] = "--store";
        argv[n++] = (char *)o->store;
    }
    for (size_t i = 0; i < o->nrules_dirs; i++) {
        argv[n++] = "--rules";
        argv[n++] = (char *)o->rules_dirs[i];
    }
    if (o->config_path) {
        argv[n++] = "--config";
        argv[n++] = (char *)o->config_path;
    }
    if (o->allow_rule_upload)
        argv[n++] = "--allow-rule-upload";
    for (size_t i = 0; i < o->nfetch_allow; i++) {
        argv[n++] = "--fetch-allow";
        argv[n++] = (char *)o->fetch_allow[i];
    }
    snprintf(nums[0], sizeof nums[0], "%" PRIu64, o->analysis_memory);
    snprintf(nums[1], sizeof nums[1], "%u", o->analysis_timeout_s);
    argv[n++] = "--analysis-memory";
    argv[n++] = nums[0];
    argv[n++] = "--analysis-timeout";
    argv[n++] = nums[1];
    argv[n] = NULL;
}

/* The environment of a worker: the server's, the server's pid in
 * SRV_PARENT_ENV so that the worker can tell it was orphaned at once, and
 * TMPDIR = tmpenv (its private folder). */
static char **worker_env(char parent[64], char *tmpenv)
{
    size_t n = 0, k = 0;
    char **env;

    while (environ[n])
        n++;
    if (!(env = calloc(n + 3, sizeof *env)))
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], SRV_PARENT_ENV "=", sizeof SRV_PARENT_ENV) != 0 &&
            strncmp(environ[i], "TMPDIR=", 7) != 0)
            env[k++] = environ[i];
    snprintf(parent, 64, "%s=%ld", SRV_PARENT_ENV, (long)getpid());
    env[k++] = parent;
    env[k++] = tmpenv;
    env[k] = NULL;
    return env;
}

/* The worker's TMPDIR (zip inputs are unpacked there): a->dir/WORKER_TMP,
 * made empty anew before it starts and removed after it ended, so that a
 * killed worker leaves no unpacked tree in the server's TMPDIR. */
static int worker_tmp(const srv_analysis *a, char *buf, size_t cap, int make,
                      op_error *err)
{
    int rc = path_of(buf, cap, a->dir, WORKER_TMP, NULL, err);

    if (rc)
        return rc;
    if (util_remove_tree(buf) != 0)
        return op_error_set(err, OP_EIO, "%s: cannot remove: %s", WORKER_TMP,
                            strerror(errno));
    if (make && mkdir(buf, 0700) != 0)
        return op_error_set(err, OP_EIO, "%s: %s", WORKER_TMP, strerror(errno));
    return 0;
}

/* A worker being run: its process and what it writes to stderr, which
 * the slot copies into worker.log up to WORKER_LOG_MAX bytes (a worker
 * cannot fill the disk with diagnostics) and whose last LOG_TAIL bytes it
 * keeps for the reason of a failure. */
typedef struct worker_run {
    pid_t pid;
    int out;           /* read end of the worker's stderr; -1 at its end */
    int log;           /* worker.log */
    uint64_t logged;   /* bytes written to it */
    int cut;           /* WORKER_LOG_MAX reached */
    char tail[LOG_TAIL + 1];
    size_t ntail;
} worker_run;

/* Starts the worker of analysis a in a process group of its own (so that
 * a kill reaches its rule workers too): stdin and stdout /dev/null,
 * stderr a pipe to w->out, no other descriptor of the server, default
 * signals and mask. */
static int worker_spawn(const srv *s, const srv_analysis *a, worker_run *w,
                        op_error *err)
{
    char log[4096], nums[2][24], parent[64], *argv[WORKER_ARGS], **env;
    char tmpenv[4096 + 8];
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    sigset_t none, all;
    int rc, pipefd[2];

    if ((rc = path_of(log, sizeof log, a->dir, SRV_WORKER_LOG, NULL, err)))
        return rc;
    w->log = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (w->log < 0)
        return op_error_set(err, OP_EIO, "%s: %s", SRV_WORKER_LOG, strerror(errno));
    memcpy(tmpenv, "TMPDIR=", 7);
    if ((rc = worker_tmp(a, tmpenv + 7, sizeof tmpenv - 7, 1, err)))
        return rc;
    if (pipe2(pipefd, O_CLOEXEC) != 0)
        return op_error_set(err, OP_EIO, "pipe: %s", strerror(errno));
    w->out = pipefd[0];
    fcntl(w->out, F_SETFL, O_NONBLOCK);
    worker_argv(s, a->id, nums, argv);
    if (!(env = worker_env(parent, tmpenv))) {
        close(pipefd[1]);
        return op_error_set(err, OP_ENOMEM, "out of memory");
    }
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&at);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);
    rc = posix_spawn(&w->pid, s->self_exe, &fa, &at, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    free(env);
    close(pipefd[1]);
    if (rc)
        return op_error_set(err, OP_EIO, "cannot start the worker %s: %s",
                            s->self_exe, strerror(rc));
    return 0;
}

static void worker_kill(pid_t pid)
{
    kill(-pid, SIGKILL); /* the group: the worker and its rule workers */
    kill(pid, SIGKILL);
}

/* Whether pid has ended, without reaping it (its pid stays taken until
 * the caller reaps it, so a kill cannot reach another process). */
static int worker_ended(pid_t pid, int block)
{
    siginfo_t si;

    memset(&si, 0, sizeof si);
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | (block ? 0 : WNOHANG)) != 0)
        if (errno != EINTR)
            return 1; /* not our child any more: nothing to wait for */
    return si.si_pid == pid;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return; /* a full disk: the log is only diagnostics */
        p += k, n -= (size_t)k;
    }
}

/* n more bytes of the worker's stderr: into worker.log while there is room
 * (then a line saying it was cut), and into the tail. */
static void log_put(worker_run *w, const char *p, size_t n)
{
    size_t room = w->logged < WORKER_LOG_MAX ? WORKER_LOG_MAX - w->logged : 0;
    size_t k = n < room ? n : room;

    write_all(w->log, p, k);
    w->logged += k;
    if (k < n && !w->cut) {
        char note[128];
        int len = snprintf(note, sizeof note, "\noptipipe serve: worker.log cut "
                           "here at %u bytes\n", WORKER_LOG_MAX);
        write_all(w->log, note, (size_t)len);
        w->cut = 1;
    }
    if (n >= LOG_TAIL) {
        memcpy(w->tail, p + n - LOG_TAIL, LOG_TAIL);
        w->ntail = LOG_TAIL;
    } else {
        size_t keep = w->ntail + n > LOG_TAIL ? LOG_TAIL - n : w->ntail;
        memmove(w->tail, w->tail + w->ntail - keep, keep);
        memcpy(w->tail + keep, p, n);
        w->ntail = keep + n;
    }
}

/* Copies what the worker wrote so far; closes w->out at its end. */
static void log_pump(worker_run *w)
{
    char buf[16384];

    while (w->out >= 0) {
        ssize_t n = read(w->out, buf, sizeof buf);
        if (n > 0) {
            log_put(w, buf, (size_t)n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            if (n == 0 || errno != EAGAIN) {
                close(w->out);
                w->out = -1;
            }
            return;
        }
    }
}

/* A running analysis' heartbeat (the shared queue): called every beat_ms
 * while its worker runs; nonzero when the analysis is not ours any more. */
typedef struct beat {
    int (*fn)(struct beat *b);
    int64_t every_ms;
    uint64_t next;
    srv_jobs *j;
    store *db;
    const char *id;
    int slot;
} beat;

/* Waits until the worker ended (not reaped), copying its stderr, killing
 * it after timeout_s (0: no limit); *timed_out says whether it was. With
 * hb, beats it and kills the worker when it was taken over (*lost). */
static void worker_wait(worker_run *w, unsigned timeout_s, beat *hb,
                        int *timed_out, int *lost)
{
    uint64_t deadline = util_now_ms() + (uint64_t)timeout_s * 1000;
    int pfd = (int)pidfd_open(w->pid, 0);

    *timed_out = *lost = 0;
    if (hb)
        hb->next = util_now_ms() + (uint64_t)hb->every_ms;
    for (;;) {
        uint64_t now = util_now_ms();
        int left = timeout_s == 0 ? 60000
                   : now >= deadline ? 0
                   : (int)(deadline - now > 60000 ? 60000 : deadline - now);
        struct pollfd p[2] = {{.fd = w->out, .events = POLLIN},
                              {.fd = pfd, .events = POLLIN}};

        if (pfd < 0 && left > 20)
            left = 20; /* no pidfd (old kernel): look every 20 ms */
        if (hb) {
            if (now >= hb->next) {
                hb->next = now + (uint64_t)hb->every_ms;
                if (hb->fn(hb)) {
                    worker_kill(w->pid);
                    *lost = 1;
                    break;
                }
            }
            if ((uint64_t)left > hb->next - now)
                left = (int)(hb->next - now);
        }
        if (poll(p, 2, left) < 0 && errno != EINTR)
            left = 0;
        if (p[0].revents)
            log_pump(w);
        if (pfd >= 0 ? p[1].revents != 0 : worker_ended(w->pid, 0))
            break;
        if (timeout_s && util_now_ms() >= deadline) {
            worker_kill(w->pid);
            *timed_out = 1;
            break;
        }
    }
    if (pfd >= 0)
        close(pfd);
    worker_ended(w->pid, 1);
    log_pump(w); /* what is left in the pipe (a rule worker may hold it) */
}

/* The worker's last error line (the last line naming an error, else the
 * last line), its analysis folder cut from paths. */
static void log_reason(worker_run *w, const srv_analysis *a, char *why, size_t cap)
{
    char *line = NULL, *p, *save = NULL;

    *why = '\0';
    w->tail[w->ntail] = '\0';
    for (p = strtok_r(w->tail, "\n", &save); p; p = strtok_r(NULL, "\n", &save))
        if (*p && (!line || strstr(p, "error") || !strstr(line, "error")))
            line = p;
    if (!line)
        return;
    for (char *q = line; *q; q++) /* a line for a JSON or HTML page: no controls */
        if ((unsigned char)*q < 0x20 || *q == 0x7f)
            *q = ' ';
    for (size_t dl = strlen(a->dir); (p = strstr(line, a->dir)) && p[dl] == '/';)
        memmove(p, p + dl + 1, strlen(p + dl + 1) + 1);
    snprintf(why, cap, "%s", line);
}

/* How a worker that ended with status ended: done (exit 0, 1: findings at
 * --fail-on, 5: a rule failed, listed in the report), record-failed (exit
 * 6 with its report: the run store did not take it) or failed, why. */
static srv_state worker_outcome(const srv *s, const srv_analysis *a, const char *line,
                                int status, int timed_out, int *code, char *why,
                                size_t cap)
{
    char report[4096 + 16];

    *code = -1;
    *why = '\0';
    if (timed_out) {
        snprintf(why, cap, "timed out after %u s (--analysis-timeout)",
                 s->o->analysis_timeout_s);
        return SRV_FAILED;
    }
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        snprintf(why, cap, "killed by signal %d (%s)%s%s", sig, strsignal(sig),
                 *line ? ": " : "", line);
        return SRV_FAILED;
    }
    *code = WEXITSTATUS(status);
    snprintf(report, sizeof report, "%s/%s", a->dir, SRV_REPORT_JSON);
    if ((*code == 0 || *code == 1 || *code == 5) && access(report, F_OK) == 0)
        return SRV_DONE;
    if (*code == 6 && access(report, F_OK) == 0) {
        snprintf(why, cap, "not recorded in the run store: %s",
                 *line ? line : "exit 6");
        return SRV_RECORD_FAILED;
    }
    if (strstr(line, "out of memory") || strstr(line, "Cannot allocate memory") ||
        strstr(line, "not enough memory"))
        snprintf(why, cap, "out of memory (--analysis-memory %" PRIu64 " bytes): %s",
                 s->o->analysis_memory, line);
    else if (*line)
        snprintf(why, cap, "exit %d: %s", *code, line);
    else
        snprintf(why, cap, "exit %d without a report", *code);
    return SRV_FAILED;
}

static void note_duration(srv_jobs *j, uint64_t ms)
{
    j->dur_ms[j->ndur++ % DURATIONS] = ms;
}

/* How the run of jb ends (mu held; jb is not changed): queued again when
 * the jobs are closing, else done or failed. */
static void job_end(const srv_jobs *j, const job *jb, srv_state end, int code,
                    const char *why, srv_analysis *view)
{
    job_view(j, jb, view);
    if (j->stopping && end != SRV_DONE) { /* killed by jobs_close: rerun later */
        view->state = SRV_QUEUED;
        view->started_ms = 0;
        return;
    }
    view->state = end;
    view->finished_ms = epoch_ms();
    view->exit_code = code;
    snprintf(view->error, sizeof view->error, "%s", end != SRV_DONE ? why : "");
}

/* Makes the end written to meta.json (view) the one everybody sees. */
static void job_apply(srv_jobs *j, job *jb, const srv_analysis *view)
{
    j->running--;
    job_set(jb, view);
    set_error(jb, view->error);
    if (view->state == SRV_QUEUED)
        j->queued++;
    else if (view->state == SRV_DONE)
        j->done++;
    else
        j->failed++;
    if (view->state != SRV_QUEUED)
        note_duration(j, (uint64_t)(view->finished_ms - view->started_ms));
}

/* Starts the worker of a and waits for it (its pid in *pidp meanwhile,
 * under mu, for jobs_close); what it ended as. hb, *lost: worker_wait. */
static srv_state run_worker(srv_jobs *j, pid_t *pidp, const srv_analysis *a,
                            beat *hb, int *lost, int *code, char *why, size_t cap)
{
    static worker_run zero = {.out = -1, .log = -1};
    worker_run *w = malloc(sizeof *w); /* the tail: not on a slot's stack */
    char line[900];
    op_error err;
    int status = 0, timed_out = 0;
    srv_state end = SRV_FAILED;

    *lost = 0;
    op_error_clear(&err);
    if (!w) {
        snprintf(why, cap, "out of memory");
        return SRV_FAILED;
    }
    *w = zero;
    if (worker_spawn(j->s, a, w, &err)) {
        snprintf(why, cap, "%s", err.msg);
        goto out;
    }
    pthread_mutex_lock(&j->mu);
    *pidp = w->pid;
    if (j->stopping)
        worker_kill(w->pid);
    pthread_mutex_unlock(&j->mu);
    worker_wait(w, j->s->o->analysis_timeout_s, hb, &timed_out, lost);
    pthread_mutex_lock(&j->mu);
    *pidp = 0; /* before it is reaped: jobs_close kills no other process */
    pthread_mutex_unlock(&j->mu);
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR)
        ;
    log_reason(w, a, line, sizeof line);
    end = worker_outcome(j->s, a, line, status, timed_out, code, why, cap);
out:
    if (worker_tmp(a, line, sizeof line, 0, &err))
        fprintf(stderr, "optipipe serve: %s/%s\n", a->dir, err.msg);
    if (w->out >= 0)
        close(w->out);
    if (w->log >= 0 && close(w->log) != 0)
        fprintf(stderr, "optipipe serve: %s/%s: %s\n", a->dir, SRV_WORKER_LOG,
                strerror(errno));
    free(w);
    return end;
}

/* One analysis, from queued (taken as running by the caller, mu held) to
 * done or failed: meta.json first, then the list. */
static void run_one(srv_jobs *j, job *jb)
{
    srv_analysis a;
    op_error err;
    int code = -1, lost;
    srv_state end;
    char why[sizeof a.error];

    op_error_clear(&err);
    why[0] = '\0';
    job_view(j, jb, &a);
    pthread_mutex_unlock(&j->mu);
    if (meta_write(&a, &err))
        fprintf(stderr, "optipipe serve: %s\n", err.msg);
    end = run_worker(j, &jb->pid, &a, NULL, &lost, &code, why, sizeof why);
    pthread_mutex_lock(&j->mu);
    job_end(j, jb, end, code, why, &a);
    pthread_mutex_unlock(&j->mu);
    if (meta_write(&a, &err))
        fprintf(stderr, "optipipe serve: %s\n", err.msg);
    if (a.state != SRV_QUEUED)
        srv_observe_analysis(j->s, a.state, (uint64_t)(a.finished_ms - a.started_ms));
    pthread_mutex_lock(&j->mu);
    job_apply(j, jb, &a);
    if (a.state == SRV_QUEUED)
        return;
    /* its webhooks: after the end is visible, queued without waiting */
    pthread_mutex_unlock(&j->mu);
    srv_notify_ended(j->s, &a);
    pthread_mutex_lock(&j->mu);
}

static void *slot_main(void *ud)
{
    srv_jobs *j = ud;

    pthread_mutex_lock(&j->mu);
    for (;;) {
        job *jb = NULL;

        while (!j->stopping && !(jb = list_oldest_queued(j)))
            pthread_cond_wait(&j->cv, &j->mu);
        if (j->stopping)
            break;
        jb->state = SRV_RUNNING;
        jb->started_ms = epoch_ms();
        jb->finished_ms = 0;
        j->queued--;
        j->running++;
        run_one(j, jb); /* unlocks while it runs */
    }
    pthread_mutex_unlock(&j->mu);
    return NULL;
}


/* ---- the shared queue (a PostgreSQL store) ------------------------------------ */

/* The row a of the table as the server's view (state names are the same;
 * one no optipipe wrote reads as failed). */
static void view_of(const srv_jobs *j, const store_analysis *r, srv_analysis *a)
{
    memset(a, 0, sizeof *a);
    memcpy(a->id, r->id, sizeof a->id);
    if (state_parse(r->state, &a->state))
        a->state = SRV_FAILED;
    a->created_ms = r->created_at;
    a->started_ms = r->started_at;
    a->finished_ms = r->finished_at;
    a->exit_code = r->exit_code;
    snprintf(a->error, sizeof a->error, "%s", r->error);
    if (snprintf(a->dir, sizeof a->dir, "%s/analyses/%s", j->s->data, r->id) >=
        (int)sizeof a->dir)
        a->dir[0] = '\0'; /* never: jobs_open checked the length of DATA */
    a->nfiles = r->files > 0 ? (size_t)r->files : 0;
    a->bytes = r->bytes > 0 ? (uint64_t)r->bytes : 0;
    a->queue_pos = a->state == SRV_QUEUED && r->ahead > 0 ? (size_t)r->ahead : 0;
}

/* The other way: the server's view a as a row. */
static void row_of(const srv_analysis *a, store_analysis *r)
{
    memset(r, 0, sizeof *r);
    memcpy(r->id, a->id, sizeof r->id);
    snprintf(r->state, sizeof r->state, "%s", srv_state_name(a->state));
    r->created_at = a->created_ms;
    r->started_at = a->started_ms;
    r->finished_at = a->finished_ms;
    r->exit_code = a->exit_code;
    snprintf(r->error, sizeof r->error, "%s", a->error);
    r->files = (int64_t)a->nfiles;
    r->bytes = (int64_t)a->bytes;
}

static int beat_store(beat *b)
{
    op_error err;
    int rc;

    op_error_clear(&err);
    rc = store_queue_beat(b->db, b->id, b->j->instance, b->slot, &err);
    if (rc == OP_ENOTFOUND)
        return 1;
    if (rc) /* the store away a moment: the next beat tries again; away
             * longer than the staleness, another instance takes it over
             * and the next beat that reaches the store says so */
        fprintf(stderr, "optipipe serve: %s: heartbeat: %s\n", b->id, err.msg);
    return 0;
}

/* Slot `slot` runs the analysis it took (row, running by it). */
static void run_shared(srv_jobs *j, store *db, int slot, const store_analysis *row)
{
    srv_analysis a;
    store_analysis end_row;
    struct stat st;
    beat hb = {beat_store, j->beat_ms, 0, j, db, row->id, slot};
    op_error err;
    int code = -1, lost = 0, rc;
    srv_state end;
    char why[sizeof a.error];

    op_error_clear(&err);
    why[0] = '\0';
    view_of(j, row, &a);
    a.queue_pos = 0;
    pthread_mutex_lock(&j->mu);
    j->running++;
    pthread_mutex_unlock(&j->mu);
    if (lstat(a.dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(why, sizeof why, "its folder is not in this instance's "
                 "DATA/analyses (do the instances share one DATA?)");
        end = SRV_FAILED;
    } else {
        if (meta_write(&a, &err))
            fprintf(stderr, "optipipe serve: %s\n", err.msg);
        end = run_worker(j, &j->slot_pid[slot], &a, &hb, &lost, &code, why,
                         sizeof why);
    }
    pthread_mutex_lock(&j->mu);
    j->running--;
    if (!lost && j->stopping && end != SRV_DONE) { /* handed back */
        a.state = SRV_QUEUED;
        a.started_ms = 0;
    } else if (!lost) {
        a.state = end;
        a.finished_ms = epoch_ms();
        a.exit_code = code;
        snprintf(a.error, sizeof a.error, "%s", end != SRV_DONE ? why : "");
        if (end == SRV_DONE)
            j->done++;
        else
            j->failed++;
        note_duration(j, (uint64_t)(a.finished_ms - a.started_ms));
    }
    pthread_mutex_unlock(&j->mu);
    if (lost) {
        fprintf(stderr, "optipipe serve: %s: taken over by another instance "
                "(its heartbeat was stale): this one stopped\n", a.id);
        return;
    }
    row_of(&a, &end_row);
    rc = store_queue_end(db, &end_row, j->instance, slot, &err);
    if (rc == OP_ENOTFOUND) {
        fprintf(stderr, "optipipe serve: %s: taken over by another instance "
                "while it ended: its end is the other's\n", a.id);
        return;
    }
    if (rc) /* the row stays running: its heartbeat goes stale, and an
             * instance queues it again */
        fprintf(stderr, "optipipe serve: %s: %s\n", a.id, err.msg);
    if (meta_write(&a, &err))
        fprintf(stderr, "optipipe serve: %s\n", err.msg);
    if (a.state == SRV_QUEUED)
        return;
    srv_observe_analysis(j->s, a.state, (uint64_t)(a.finished_ms - a.started_ms));
    /* its webhooks, by the instance that ended it (once: an end taken
     * over is the other's, above) */
    srv_notify_ended(j->s, &a);
}

/* Waits poll_ms, or less when this instance queued work or stops. */
static void wait_poll(srv_jobs *j)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += j->poll_ms / 1000;
    ts.tv_nsec += (long)(j->poll_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&j->mu);
    while (!j->stopping && !j->kicks)
        if (pthread_cond_timedwait(&j->cv, &j->mu, &ts) != 0)
            break;
    if (j->kicks)
        j->kicks--;
    pthread_mutex_unlock(&j->mu);
}

/* A store error of a slot, said once until the store answers again. */
static void slot_complain(int *said, const char *what, const op_error *err)
{
    if (!*said)
        fprintf(stderr, "optipipe serve: %s: %s (trying again)\n", what, err->msg);
    *said = 1;
}

static void *slot_shared(void *ud)
{
    slot_arg *arg = ud;
    srv_jobs *j = arg->j;
    store *db = NULL;
    store_analysis *row = malloc(sizeof *row);
    op_error err;
    int said = 0, stop;

    for (;;) {
        int rc;

        pthread_mutex_lock(&j->mu);
        stop = j->stopping;
        pthread_mutex_unlock(&j->mu);
        if (stop || !row)
            break;
        op_error_clear(&err);
        if (!db) {
            if (store_open(j->s->store_path, 1, &db, &err)) {
                slot_complain(&said, "the shared queue", &err);
                wait_poll(j);
                continue;
            }
            /* a beat must not wait longer than the next one is due */
            store_set_wait(db, j->beat_ms);
        }
        { /* every idle slot: a busy instance's slot 0 must not hold back a
           * dead one's analysis while another slot of it is free */
            size_t n = 0;
            int64_t q = 0, r = 0;
            if (store_queue_requeue_stale(db, j->stale_ms, &n, &err) == 0 && n)
                fprintf(stderr, "optipipe serve: %zu analys%s whose instance "
                        "gave no heartbeat for %" PRId64 " ms queued again\n",
                        n, n == 1 ? "is" : "es", j->stale_ms);
            if (store_queue_counts(db, &q, &r, &err) == 0) {
                pthread_mutex_lock(&j->mu);
                j->queued = (size_t)q;
                pthread_mutex_unlock(&j->mu);
            }
        }
        rc = store_queue_claim(db, j->instance, arg->slot, row, &err);
        if (rc == 0) {
            said = 0;
            run_shared(j, db, arg->slot, row);
            continue;
        }
        if (rc != OP_ENOTFOUND) {
            slot_complain(&said, "the shared queue", &err);
            wait_poll(j);
            continue;
        }
        said = 0;
        /* an analysis queued by any instance wakes it (NOTIFY); so does
         * the stop (the pipe's end) and, for stale heartbeats, poll_ms */
        if (store_queue_wait(db, j->stop_pipe[0], (int)j->poll_ms, NULL, &err)) {
            slot_complain(&said, "the shared queue", &err);
            wait_poll(j);
        }
    }
    store_close(db);
    free(row);
    return NULL;
}

/* This instance's name in the table: host, pid and a random part (a pid
 * reused after a restart is another instance). */
static void instance_name(char out[STORE_INSTANCE_MAX + 1])
{
    char host[64] = "host", rnd[SRV_ID_LEN + 1];
    op_error err;

    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    if (new_id(rnd, &err))
        snprintf(rnd, sizeof rnd, "0");
    snprintf(out, STORE_INSTANCE_MAX + 1, "%.60s:%ld:%.8s", host,
             (long)getpid(), rnd);
}

/* Opens the shared queue: the HTTP threads' connection, and the folders
 * of DATA/analyses the table does not know yet (read by recover) added
 * as they are; the list is emptied after. */
static int shared_open(srv_jobs *j, op_error *err)
{
    store_analysis *row = malloc(sizeof *row);
    srv_analysis a;
    op_error e;
    int rc;

    if (!row)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    instance_name(j->instance);
    j->stale_ms = (int64_t)(j->s->o->heartbeat_stale_s ? j->s->o->heartbeat_stale_s
                                                       : SRV_HEARTBEAT_STALE_DEFAULT) * 1000;
    j->beat_ms = j->stale_ms / 4 > 50 ? j->stale_ms / 4 : 50;
    j->poll_ms = j->stale_ms / 2 < 1000 ? j->stale_ms / 2 : 1000;
    /* one connection per HTTP thread (each request holds one) */
    j->ndbs = j->s->o->threads ? j->s->o->threads : 1;
    if (!(j->dbs = calloc(j->ndbs, sizeof *j->dbs)) ||
        !(j->db_busy = calloc(j->ndbs, sizeof *j->db_busy))) {
        free(row);
        return op_error_set(err, OP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < j->ndbs; i++) {
        if ((rc = store_open(j->s->store_path, 1, &j->dbs[i], err))) {
            free(row);
            return rc;
        }
        store_set_wait(j->dbs[i], SRV_STORE_WAIT_MS);
    }
    for (size_t i = 0; i < j->n; i++) {
        op_error_clear(&e);
        job_view(j, j->all[i], &a);
        /* a folder placed by another instance a moment ago is its to add
         * (adding it here would make that instance's insert fail) */
        if (a.created_ms > epoch_ms() - j->stale_ms)
            continue;
        row_of(&a, row);
        if (store_queue_import(j->dbs[0], row, &e))
            fprintf(stderr, "optipipe serve: %s: not added to the shared "
                    "queue: %s\n", a.dir, e.msg);
    }
    for (size_t i = 0; i < j->n; i++)
        job_free(j->all[i]);
    j->n = j->queued = 0;
    free(row);
    return 0;
}

/* A store failure of a request (PostgreSQL away, a privilege missing):
 * said on stderr in full, and to the client without naming the store (its
 * URI names the database host and role). Returns rc. */
static int shared_fail(int rc, op_error *err)
{
    if (rc == 0 || rc == OP_ENOTFOUND || rc == OP_EUSAGE || rc == OP_ELIMIT ||
        rc == OP_ENOMEM)
        return rc;
    fprintf(stderr, "optipipe serve: the shared queue: %s\n", err->msg);
    return op_error_set(err, rc, "the analyses queue (the run store) is "
                        "unreachable: try again later");
}

store *jobs_store_lock(srv_jobs *j)
{
    store *db = NULL;

    if (!j || !j->shared)
        return NULL;
    pthread_mutex_lock(&j->dbmu);
    while (!db) {
        for (size_t i = 0; !db && i < j->ndbs; i++)
            if (!j->db_busy[i]) {
                j->db_busy[i] = 1;
                db = j->dbs[i];
            }
        if (!db) /* all lent (HTTP and render threads together) */
            pthread_cond_wait(&j->dbcv, &j->dbmu);
    }
    pthread_mutex_unlock(&j->dbmu);
    return db;
}

void jobs_store_unlock(srv_jobs *j, store *db)
{
    if (!j || !j->shared || !db)
        return;
    pthread_mutex_lock(&j->dbmu);
    for (size_t i = 0; i < j->ndbs; i++)
        if (j->dbs[i] == db)
            j->db_busy[i] = 0;
    pthread_cond_signal(&j->dbcv);
    pthread_mutex_unlock(&j->dbmu);
}

/* ---- the interface --------------------------------------------------------------- */

static void jobs_free(srv_jobs *j)
{
    for (size_t i = 0; i < j->n; i++)
        job_free(j->all[i]);
    free(j->all);
    free(j->slots);
    free(j->slot_pid);
    free(j->args);
    for (size_t i = 0; j->dbs && i < j->ndbs; i++)
        store_close(j->dbs[i]);
    free(j->dbs);
    free(j->db_busy);
    if (j->stop_pipe[0] >= 0)
        close(j->stop_pipe[0]);
    if (j->stop_pipe[1] >= 0)
        close(j->stop_pipe[1]);
    pthread_cond_destroy(&j->cv);
    pthread_mutex_destroy(&j->mu);
    pthread_mutex_destroy(&j->dbmu);
    pthread_cond_destroy(&j->dbcv);
    free(j);
}

static size_t slot_count(const serve_opts *o)
{
    long n;

    if (o->workers)
        return o->workers;
    n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (size_t)n : 1;
}

int jobs_open(srv *s, srv_jobs **out, op_error *err)
{
    srv_jobs *j = calloc(1, sizeof *j);
    int rc;

    *out = NULL;
    if (strlen(s->data) > DATA_MAX) {
        free(j);
        return op_error_set(err, OP_EUSAGE, "%.64s...: DATA path longer than %d bytes",
                            s->data, DATA_MAX);
    }
    if (!j)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    j->s = s;
    j->shared = s->o->store && store_uri_is_pg(s->o->store);
    j->stop_pipe[0] = j->stop_pipe[1] = -1;
    if (j->shared && pipe2(j->stop_pipe, O_CLOEXEC) != 0) {
        free(j);
        return op_error_set(err, OP_EIO, "pipe: %s", strerror(errno));
    }
    pthread_mutex_init(&j->mu, NULL);
    pthread_mutex_init(&j->dbmu, NULL);
    pthread_cond_init(&j->dbcv, NULL);
    {
        pthread_condattr_t ca; /* wait_poll's deadline: the monotonic clock */
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&j->cv, &ca);
        pthread_condattr_destroy(&ca);
    }
    if ((rc = recover(j, err)) || (j->shared && (rc = shared_open(j, err)))) {
        jobs_free(j);
        return rc;
    }
    j->nslots = slot_count(s->o);
    if (!(j->slots = calloc(j->nslots, sizeof *j->slots)) ||
        !(j->slot_pid = calloc(j->nslots, sizeof *j->slot_pid)) ||
        !(j->args = calloc(j->nslots, sizeof *j->args))) {
        jobs_free(j);
        return op_error_set(err, OP_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < j->nslots; i++) {
        j->args[i].j = j;
        j->args[i].slot = (int)i;
    }
    for (size_t i = 0; i < j->nslots; i++)
        if ((rc = pthread_create(&j->slots[i], NULL,
                                 j->shared ? slot_shared : slot_main,
                                 j->shared ? (void *)&j->args[i] : (void *)j))) {
            j->nslots = i;
            jobs_close(j);
            return op_error_set(err, OP_EIO, "cannot start a worker slot: %s",
                                strerror(rc));
        }
    *out = j;
    return 0;
}

void jobs_close(srv_jobs *j)
{
    if (!j)
        return;
    pthread_mutex_lock(&j->mu);
    j->stopping = 1;
    for (size_t i = 0; i < j->n; i++)
        if (j->all[i]->pid > 0)
            worker_kill(j->all[i]->pid);
    for (size_t i = 0; j->slot_pid && i < j->nslots; i++)
        if (j->slot_pid[i] > 0) /* shared: its slot hands it back */
            worker_kill(j->slot_pid[i]);
    pthread_cond_broadcast(&j->cv);
    if (j->stop_pipe[1] >= 0) { /* readable for ever: no slot waits on */
        close(j->stop_pipe[1]);
        j->stop_pipe[1] = -1;
    }
    pthread_mutex_unlock(&j->mu);
    for (size_t i = 0; i < j->nslots; i++)
        pthread_join(j->slots[i], NULL);
    jobs_free(j);
}

typedef struct url_list {
    const char *const *urls;
    size_t n;
} url_list;

static int urls_fill(FILE *f, void *ud)
{
    const url_list *l = ud;

    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "%s\n", l->urls[i]);
    return 0;
}

/* urls.txt of the staged upload: one URL a line; each checked to be one
 * line of at most URL_MAX bytes, naming a host of --fetch-allow (whoever
 * submits has checked that already: this is the line no caller can skip). */
static int write_urls(const serve_opts *o, const char *dir, const char *const *urls,
                      size_t nurls, op_error *err)
{
    url_list l = {urls, nurls};

    if (nurls > SRV_FIELDS_MAX)
        return op_error_set(err, OP_EUSAGE, "more than %d URL inputs", SRV_FIELDS_MAX);
    for (size_t i = 0; i < nurls; i++) {
        size_t n = strlen(urls[i]);
        if (n == 0 || n > URL_MAX)
            return op_error_set(err, OP_EUSAGE, "URL %zu: empty or longer than %u bytes",
                                i + 1, URL_MAX);
        for (size_t k = 0; k < n; k++)
            if ((unsigned char)urls[i][k] < 0x20 || urls[i][k] == 0x7f)
                return op_error_set(err, OP_EUSAGE, "URL %zu: control character "
                                    "at byte %zu", i + 1, k + 1);
        if (!srv_url_allowed(o, urls[i]))
            return op_error_set(err, OP_EUSAGE, "URL %zu: not http(s) or its host "
                                "is not in --fetch-allow", i + 1);
    }
    return srv_write_atomic(dir, SRV_URLS, urls_fill, &l, err);
}

/* The staging folder of up (which must be DATA/tmp/<name>), or a fresh
 * one for URL inputs alone. */
static int staging_dir(const srv *s, const srv_upload *up, char *dir, size_t cap,
                       op_error *err)
{
    char tmp[4096 + 8];
    size_t tl;

    snprintf(tmp, sizeof tmp, "%s/tmp/", s->data);
    tl = strlen(tmp);
    if (up) {
        if (strncmp(up->dir, tmp, tl) != 0 || !up->dir[tl] ||
            strchr(up->dir + tl, '/') || up->dir[tl] == '.')
            return op_error_set(err, OP_EUSAGE, "%s: not a staging folder of %s/tmp",
                                up->dir, s->data);
        snprintf(dir, cap, "%s", up->dir);
        return 0;
    }
    if (snprintf(dir, cap, "%sXXXXXX", tmp) >= (int)cap || !mkdtemp(dir))
        return op_error_set(err, OP_EIO, "%s: %s", tmp, strerror(errno));
    return 0;
}

/* Puts the staged folder in place as DATA/analyses/<new id>, with urls.txt
 * and meta.json already inside (the folder appears complete or not at all). */
static int place(srv_jobs *j, const char *stage, const char *const *urls,
                 size_t nurls, srv_analysis *a, int *placed, op_error *err)
{
    char adir[4096 + 16];
    int rc;

    snprintf(adir, sizeof adir, "%s/analyses", j->s->data);
    if (nurls && (rc = write_urls(j->s->o, stage, urls, nurls, err)))
        return rc;
    for (int tries = 0;; tries++) {
        if ((rc = new_id(a->id, err)))
            return rc;
        snprintf(a->dir, sizeof a->dir, "%s", stage); /* meta first, in place */
        if ((rc = meta_write(a, err)))
            return rc;
        if ((rc = path_of(a->dir, sizeof a->dir, adir, a->id, NULL, err)))
            return rc;
        if (renameat2(AT_FDCWD, stage, AT_FDCWD, a->dir, RENAME_NOREPLACE) == 0) {
            *placed = 1;
            break;
        }
        if (errno != EEXIST || tries == 8)
            return op_error_set(err, OP_EIO, "%s: %s", a->dir, strerror(errno));
    }
    if (fsync_dir(adir) != 0)
        return op_error_set(err, OP_EIO, "%s: %s", adir, strerror(errno));
    return 0;
}

/* Takes a queue place for a submit under way; OP_ELIMIT when none is left. */
static int reserve(srv_jobs *j, op_error *err)
{
    int rc = 0;

    pthread_mutex_lock(&j->mu);
    if (j->queued + j->reserved >= j->s->o->queue) {
        j->rejected++;
        rc = op_error_set(err, OP_ELIMIT, "the queue is full (%u analyses waiting)",
                          j->s->o->queue);
    } else {
        j->reserved++;
    }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* Lists the placed analysis a (or, with rc set, gives its place back). */
static int enqueue(srv_jobs *j, const srv_analysis *a, int rc, op_error *err)
{
    job *jb = rc ? NULL : job_from(a);

    if (!rc && !jb)
        rc = op_error_set(err, OP_ENOMEM, "out of memory");
    pthread_mutex_lock(&j->mu);
    j->reserved--;
    if (jb && list_add(j, jb)) {
        job_free(jb);
        rc = op_error_set(err, OP_ENOMEM, "out of memory");
    }
    if (!rc)
        pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    return rc;
}

/* enqueue's shared twin: the placed analysis a into the table when the
 * queue has room (counted there, over every instance), then a slot of
 * this instance woken. */
static int shared_enqueue(srv_jobs *j, const srv_analysis *a, int rc,
                          op_error *err)
{
    store_analysis *row;
    store *db;

    if (rc)
        return rc;
    if (!(row = malloc(sizeof *row)))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    row_of(a, row);
    db = jobs_store_lock(j);
    rc = shared_fail(store_queue_add(db, row, j->s->o->queue, err), err);
    jobs_store_unlock(j, db);
    free(row);
    pthread_mutex_lock(&j->mu);
    if (rc == OP_ELIMIT) {
        j->rejected++;
        op_error_set(err, OP_ELIMIT, "the queue is full (%u analyses waiting)",
                     j->s->o->queue);
    } else if (!rc) {
        j->kicks++;
        pthread_cond_signal(&j->cv);
    }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int jobs_submit(srv_jobs *j, srv_upload *up, const char *const *urls,
                size_t nurls, char id[SRV_ID_LEN + 1], op_error *err)
{
    char stage[4096];
    srv_analysis a;
    int rc, placed = 0;

    memset(&a, 0, sizeof a);
    stage[0] = id[0] = '\0';
    if (!j->shared && (rc = reserve(j, err)))
        goto out;
    if (!(up && up->nfiles) && !nurls)
        rc = op_error_set(err, OP_EUSAGE, "nothing to analyze: no file and no URL");
    if (!rc && (rc = staging_dir(j->s, up, stage, sizeof stage, err)) && up)
        up->dir[0] = '\0'; /* not ours to remove */
    if (!rc) {
        a.state = SRV_QUEUED;
        a.created_ms = epoch_ms();
        a.nfiles = up ? up->nfiles : 0;
        a.bytes = up ? up->bytes : 0;
        rc = place(j, stage, urls, nurls, &a, &placed, err);
    }
    if (placed && up)
        up->dir[0] = '\0'; /* moved: nothing of it left to remove */
    if ((rc = j->shared ? shared_enqueue(j, &a, rc, err)
                        : enqueue(j, &a, rc, err)) == 0)
        memcpy(id, a.id, SRV_ID_LEN + 1);
    else if (placed) /* in DATA/analyses, not listed: gone, like a refused upload */
        util_remove_tree(a.dir);
out:
    if (!up && stage[0] && !placed)
        util_remove_tree(stage);
    srv_upload_free(up); /* its folder is gone when it was placed */
    return rc;
}

unsigned jobs_retry_after(const srv_jobs *j)
{
    srv_jobs *m = (srv_jobs *)j; /* the lock only: nothing changes */
    uint64_t sum = 0, est;
    size_t n;

    pthread_mutex_lock(&m->mu);
    n = j->ndur < DURATIONS ? j->ndur : DURATIONS;
    for (size_t i = 0; i < n; i++)
        sum += j->dur_ms[i];
    /* a queue place frees when the first of the running analyses ends */
    est = n ? sum / n / (j->nslots ? j->nslots : 1) / 1000 : 1;
    pthread_mutex_unlock(&m->mu);
    if (est < 1)
        est = 1;
    if (j->s->o->analysis_timeout_s && est > j->s->o->analysis_timeout_s)
        est = j->s->o->analysis_timeout_s;
    return (unsigned)est;
}

/* A retry is taken under the lock (the job is marked queued-to-be by
 * retrying, so no second retry and no slot touches it), written to
 * meta.json without it, then listed as queued under it. */
int jobs_retry(srv_jobs *j, const char *id, op_error *err)
{
    srv_analysis a;
    job *jb;
    int rc = 0;

    if (!srv_id_valid(id))
        return op_error_set(err, OP_ENOTFOUND, "no such analysis");
    if (j->shared) {
        store *db = jobs_store_lock(j);
        rc = shared_fail(store_queue_retry(db, id, j->s->o->queue, NULL, err),
                         err);
        jobs_store_unlock(j, db);
        pthread_mutex_lock(&j->mu);
        if (rc == OP_ELIMIT)
            op_error_set(err, OP_ELIMIT, "the queue is full (%u analyses "
                         "waiting)", j->s->o->queue);
        if (!rc) {
            j->kicks++;
            pthread_cond_signal(&j->cv);
        }
        pthread_mutex_unlock(&j->mu);
        return rc;
    }
    pthread_mutex_lock(&j->mu);
    if (!(jb = list_find(j, id, NULL)))
        rc = op_error_set(err, OP_ENOTFOUND, "no such analysis: %s", id);
    else if ((jb->state != SRV_FAILED && jb->state != SRV_RECORD_FAILED) ||
             jb->retrying)
        rc = op_error_set(err, OP_EUSAGE, "the analysis is %s: only a failed "
                          "or record-failed one is retried",
                          jb->retrying ? "being retried" : srv_state_name(jb->state));
    else if (j->stopping || j->queued + j->reserved >= j->s->o->queue)
        rc = op_error_set(err, OP_ELIMIT, "the queue is full (%u analyses waiting)",
                          j->s->o->queue);
    else {
        jb->retrying = 1;
        j->reserved++;
        job_view(j, jb, &a);
    }
    pthread_mutex_unlock(&j->mu);
    if (rc)
        return rc;
    a.state = SRV_QUEUED;
    a.started_ms = a.finished_ms = 0;
    a.exit_code = 0;
    a.error[0] = '\0';
    rc = meta_write(&a, err);
    pthread_mutex_lock(&j->mu);
    j->reserved--;
    jb->retrying = 0;
    if (!rc) {
        job_set(jb, &a);
        set_error(jb, NULL);
        j->queued++;
        pthread_cond_signal(&j->cv);
    }
    pthread_mutex_unlock(&j->mu);
    return rc;
}

int jobs_get(srv_jobs *j, const char *id, srv_analysis *out, op_error *err)
{
    job *jb;
    size_t ahead = 0;

    if (!srv_id_valid(id))
        return op_error_set(err, OP_ENOTFOUND, "no such analysis");
    if (j->shared) {
        store_analysis *row = malloc(sizeof *row);
        store *db;
        int rc;

        if (!row)
            return op_error_set(err, OP_ENOMEM, "out of memory");
        db = jobs_store_lock(j);
        rc = shared_fail(store_queue_get(db, id, row, err), err);
        jobs_store_unlock(j, db);
        if (!rc)
            view_of(j, row, out);
        else if (rc == OP_ENOTFOUND)
            op_error_set(err, OP_ENOTFOUND, "no such analysis: %s", id);
        free(row);
        return rc;
    }
    pthread_mutex_lock(&j->mu);
    if ((jb = list_find(j, id, &ahead))) {
        job_view(j, jb, out);
        out->queue_pos = jb->state == SRV_QUEUED ? ahead : 0;
    }
    pthread_mutex_unlock(&j->mu);
    return jb ? 0 : op_error_set(err, OP_ENOTFOUND, "no such analysis: %s", id);
}

/* jobs_each's copy of one analysis, taken under the lock. */
typedef struct job_copy {
    job jb;
    size_t ahead; /* queued analyses before it */
} job_copy;

static void copies_free(job_copy *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(c[i].jb.error);
    free(c);
}

static job_copy *copies_take(srv_jobs *j, size_t *n)
{
    job_copy *c;
    size_t q = 0;

    pthread_mutex_lock(&j->mu);
    *n = j->n;
    c = calloc(j->n ? j->n : 1, sizeof *c);
    for (size_t i = 0; c && i < j->n; i++) {
        c[i].jb = *j->all[i];
        c[i].ahead = q;
        q += c[i].jb.state == SRV_QUEUED;
        if (j->all[i]->error && !(c[i].jb.error = strdup(j->all[i]->error))) {
            copies_free(c, i);
            c = NULL;
        }
    }
    pthread_mutex_unlock(&j->mu);
    return c;
}

/* The table's rows, copied (jobs_each's callbacks run without dbmu). */
typedef struct row_list {
    store_analysis *r;
    size_t n, cap;
} row_list;

static int row_keep(void *ud, const store_analysis *a)
{
    row_list *l = ud;

    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        store_analysis *r = realloc(l->r, cap * sizeof *r);
        if (!r)
            return OP_ENOMEM;
        l->r = r, l->cap = cap;
    }
    l->r[l->n++] = *a;
    return 0;
}

static int each_shared(srv_jobs *j, int (*fn)(void *ud, const srv_analysis *a),
                       void *ud)
{
    row_list l = {NULL, 0, 0};
    srv_analysis a;
    op_error err;
    store *db = jobs_store_lock(j);
    int rc = store_queue_each(db, row_keep, &l, &err);

    jobs_store_unlock(j, db);
    if (rc && rc != OP_ENOMEM)
        fprintf(stderr, "optipipe serve: the shared queue: %s\n", err.msg);
    for (size_t i = 0; !rc && i < l.n; i++) {
        view_of(j, &l.r[i], &a);
        rc = fn(ud, &a);
    }
    free(l.r);
    return rc;
}

int jobs_each(srv_jobs *j, int (*fn)(void *ud, const srv_analysis *a), void *ud)
{
    size_t n;
    job_copy *c;

    if (j->shared)
        return each_shared(j, fn, ud);
    c = copies_take(j, &n);
    srv_analysis a;
    int rc = 0;

    if (!c)
        return OP_ENOMEM;
    for (size_t i = n; !rc && i-- > 0;) {
        job_view(j, &c[i].jb, &a);
        a.queue_pos = a.state == SRV_QUEUED ? c[i].ahead : 0;
        rc = fn(ud, &a);
    }
    copies_free(c, n);
    return rc;
}

void jobs_stats(srv_jobs *j, srv_jobs_stats *st)
{
    pthread_mutex_lock(&j->mu);
    st->queued = j->queued;
    st->running = j->running;
    st->done = j->done;
    st->failed = j->failed;
    st->rejected = j->rejected;
    pthread_mutex_unlock(&j->mu);
}
