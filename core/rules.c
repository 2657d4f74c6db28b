/*
 * rules.c - the rule engine (rules.h): finding rule files, keeping their
 * metadata, and running them over a frozen model, either in-process (one
 * sandboxed Lua state per pack) or, for untrusted packs, in a fork()ed
 * worker that the parent can kill when a rule stalls inside a C function.
 *
 * Worker protocol (worker -> parent, one JSON object per line):
 *   {"t":"load","i":n}            starts loading rule file / rule n
 *   {"t":"meta","i":n,"meta":{}}  load phase: metadata of file n
 *   {"t":"lerr","i":n,"rule":r,"error":e}  load phase: file n failed
 *   {"t":"loaded","i":n} / {"t":"lfail","i":n,"error":e}  run phase reload
 *   {"t":"call","s":k}            step k's rule is running now
 *   {"t":"f","f":{finding}}       a finding of the running step
 *   {"t":"ok","s":k} / {"t":"fail","s":k,"kind":n,"error":e}
 *   {"t":"bye"}                   all done
 * The parent gives each load and call timeout_ms (+ a grace period) and
 * kills the worker with SIGKILL when it is exceeded; a new worker then
 * continues after the step that stalled. See docs/sandbox.md.
 */
#include "rules.h"

#include <lauxlib.h>
#include <lua.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lua_model.h"
#include "map_packs.h"
#include "luadata.h"
#include "lua_rule.h"
#include "sbx.h"
#include "testhook.h"
#include "util.h"

#define MAX_RULE_FILES 10000
#define WORKER_GRACE_MS 250        /* after timeout_ms, before SIGKILL */
#define WORKER_SETUP_MS 60000      /* worker start, model tables, between steps */
#define WORKER_LINE_MAX (64u << 20)

typedef struct pack {
    char *name, *dir, *sdk_dir;
    int trusted, isolated;
    sbx *sb; /* in-process packs only */
    uint64_t deadline; /* util_now_ms() at which the pack's budget for this
                          load or run ends; 0 = none. Workers inherit it. */
    uint64_t spent;    /* ms used by its loads and runs in this analysis */
    uint64_t began;    /* util_now_ms() when the current load or run began */
} pack;

typedef struct rule {
    rule_meta meta;
    pack *p;
    int fn_ref; /* in-process: the check function */
    int dead;   /* stopped by a limit during this ruleset_run */
    int ran;    /* executed during this ruleset_run */
} rule;

struct ruleset {
    rule_limits lim;
    pack **packs;
    size_t npacks, packs_cap;
    rule **rules;
    size_t nrules, rules_cap;
};

typedef struct step {
    rule *r;
    size_t run; /* SIZE_MAX: the bundle */
} step;

void rule_limits_default(rule_limits *l)
{
    l->mem_bytes = (size_t)64 << 20;
    l->instructions = 100000000u;
    l->timeout_ms = 2000;
    l->pack_timeout_ms = 30000;
    l->isolate = -1;
}

/* ---- the pack budget -------------------------------------------------------- */

/* The pack's budget is one per analysis: its files' loading and every
 * run of its rules over the model together (rules test: each case is an
 * analysis, and the loading counts in the first). A load or run gets
 * what is left of it. */
static void pack_begin(const ruleset *rs, pack *p)
{
    uint64_t budget = rs->lim.pack_timeout_ms;

    p->began = util_now_ms();
    p->deadline = !budget ? 0
                  : p->spent >= budget ? p->began /* spent: nothing left */
                                       : p->began + budget - p->spent;
}

/* What the load or run that pack_begin started used, counted. */
static void pack_end(pack *p)
{
    p->spent += util_now_ms() - p->began;
}

/* The limits of p's next load or call: rs's, with the time limit cut to
 * what is left of the pack's budget (*by_pack is then set, so that a
 * timeout is reported as the pack's). -1 when nothing is left. */
static int pack_limits(const ruleset *rs, const pack *p, rule_limits *lim,
                       int *by_pack)
{
    uint64_t now = util_now_ms(), left;

    *lim = rs->lim;
    *by_pack = 0;
    if (!p->deadline)
        return 0;
    if (now >= p->deadline)
        return -1;
    left = p->deadline - now;
    if (!lim->timeout_ms || left < lim->timeout_ms) {
        lim->timeout_ms = (unsigned)left;
        *by_pack = 1;
    }
    return 0;
}

static int pack_spent(const pack *p)
{
    return p->deadline && util_now_ms() >= p->deadline;
}

/* The reason to record for a failed load or call. */
static const char *pack_reason(int by_pack, const char *reason)
{
    if (by_pack && reason && strcmp(reason, SBX_REASON_TIME) == 0)
        return RULES_REASON_PACK_TIME;
    return reason ? reason : "out of memory";
}

/* ---- the set --------------------------------------------------------------- */

ruleset *ruleset_new(const rule_limits *limits)
{
    ruleset *rs = calloc(1, sizeof *rs);

    if (!rs)
        return NULL;
    if (limits)
        rs->lim = *limits;
    else
        rule_limits_default(&rs->lim);
    return rs;
}

static void pack_free(const ruleset *rs, pack *p)
{
    if (!p)
        return;
    sbx_free(p->sb, rs->lim.instructions, rs->lim.timeout_ms);
    free(p->name);
    free(p->dir);
    free(p->sdk_dir);
    free(p);
}

void ruleset_free(ruleset *rs)
{
    size_t i;

    if (!rs)
        return;
    for (i = 0; i < rs->nrules; i++) {
        rule_meta_clear(&rs->rules[i]->meta);
        free(rs->rules[i]);
    }
    for (i = 0; i < rs->npacks; i++)
        pack_free(rs, rs->packs[i]);
    free(rs->rules);
    free(rs->packs);
    free(rs);
}

size_t ruleset_count(const ruleset *rs)
{
    return rs->nrules;
}

rule_meta *ruleset_rule(ruleset *rs, size_t i)
{
    return i < rs->nrules ? &rs->rules[i]->meta : NULL;
}

static rule *find_rule(const ruleset *rs, const char *id)
{
    size_t i;

    for (i = 0; i < rs->nrules; i++)
        if (strcmp(rs->rules[i]->meta.id, id) == 0)
            return rs->rules[i];
    return NULL;
}

rule_meta *ruleset_find(ruleset *rs, const char *id)
{
    rule *r = find_rule(rs, id);
    return r ? &r->meta : NULL;
}

/* Takes meta (moved) as a rule of p, unless its id is already taken, in
 * which case the file is reported in errs. 0, or OP_ENOMEM. */
static int add_rule(ruleset *rs, pack *p, rule_meta *meta, int fn_ref,
                    results *errs)
{
    rule *dup = find_rule(rs, meta->id), *r;
    char msg[1200];
    int rc = 0;

    if (dup) {
        snprintf(msg, sizeof msg, "%s: duplicate rule id '%s' (already "
                 "defined in %s)", meta->file, meta->id, dup->meta.file);
        rc = results_add_error(errs, meta->id, msg);
        goto drop;
    }
    if (OP_GROW(rs->rules, rs->rules_cap, rs->nrules + 1, 16))
        goto oom;
    r = calloc(1, sizeof *r);
    if (!r)
        goto oom;
    r->meta = *meta;
    r->p = p;
    r->fn_ref = fn_ref;
    memset(meta, 0, sizeof *meta);
    rs->rules[rs->nrules++] = r;
    return 0;
oom:
    rc = OP_ENOMEM;
drop:
    lrule_unref(p->sb, fn_ref);
    rule_meta_clear(meta);
    return rc;
}

static int add_pack(ruleset *rs, pack *p)
{
    if (OP_GROW(rs->packs, rs->packs_cap, rs->npacks + 1, 4))
        return OP_ENOMEM;
    rs->packs[rs->npacks++] = p;
    return 0;
}

/* ---- finding the files ------------------------------------------------------- */

static int is_rule_file(const char *name)
{
    size_t n = strlen(name);

    if (name[0] == '.' || n < 5 || strcmp(name + n - 4, ".lua") != 0)
        return 0;
    return !(n >= 9 && strcmp(name + n - 9, "_test.lua") == 0);
}

static void free_list(char **v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Collects dir/<name> for every rule file of dir, sorted by name. */
static int list_rule_files(const char *dir, char ***out, size_t *n,
                           op_error *err)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **v = NULL;
    size_t cap = 0;
    size_t dlen = strlen(dir);
    int slash = dlen > 0 && dir[dlen - 1] == '/';

    *out = NULL;
    *n = 0;
    if (!d)
        return op_error_set(err, errno == ENOENT ? OP_ENOTFOUND : OP_EIO,
                            "cannot read rules folder '%s': %s", dir,
                            strerror(errno));
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        char *path;

        if (!is_rule_file(e->d_name))
            continue;
        if (*n >= MAX_RULE_FILES) {
            op_error_set(err, OP_ELIMIT, "rules folder '%s' has more than %d "
                         "rule files", dir, MAX_RULE_FILES);
            goto fail;
        }
        path = malloc(dlen + strlen(e->d_name) + 2);
        if (!path)
            goto oom;
        sprintf(path, "%s%s%s", dir, slash ? "" : "/", e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(path);
            continue;
        }
        if (OP_GROW(v, cap, *n + 1, 16)) {
            free(path);
            goto oom;
        }
        v[(*n)++] = path;
    }
    closedir(d);
    if (*n > 1)
        qsort(v, *n, sizeof *v, util_strp_cmp);
    *out = v;
    return 0;
oom:
    op_error_set(err, OP_ENOMEM, "out of memory listing '%s'", dir);
fail:
    closedir(d);
    free_list(v, *n);
    *n = 0;
    return err ? err->code : OP_ENOMEM;
}

/* ---- workers ------------------------------------------------------------------- */

typedef struct worker {
    pid_t pid;
    int fd;
    char *buf;
    size_t len, cap, used; /* used: bytes of buf already returned */
    int eof;
} worker;

static void write_all(int fd, const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            _exit(5); /* the parent is gone or gave up on us */
        s += w;
        n -= (size_t)w;
    }
}

/* Worker side: sends msg (consumed) as one line. */
static void emit(int fd, cJSON *msg)
{
    char *s = msg ? cJSON_PrintUnformatted(msg) : NULL;

    cJSON_Delete(msg);
    if (!s)
        _exit(4);
    write_all(fd, s, strlen(s));
    write_all(fd, "\n", 1);
    free(s);
}

static cJSON *msg_new(const char *type)
{
    cJSON *m = cJSON_CreateObject();
    if (m && !cJSON_AddStringToObject(m, "t", type)) {
        cJSON_Delete(m);
        m = NULL;
    }
    return m;
}

/* Adds a number / string / item (taken, freed on failure) to message m; on
 * failure frees m and returns NULL. A message missing a field would be
 * misread by the parent, so emit() of the NULL ends the worker instead. */
static cJSON *msg_num(cJSON *m, const char *key, double v)
{
    if (m && !cJSON_AddNumberToObject(m, key, v)) {
        cJSON_Delete(m);
        m = NULL;
    }
    return m;
}

static cJSON *msg_str(cJSON *m, const char *key, const char *v)
{
    if (m && !cJSON_AddStringToObject(m, key, v)) {
        cJSON_Delete(m);
        m = NULL;
    }
    return m;
}

static cJSON *msg_item(cJSON *m, const char *key, cJSON *v)
{
    if (m && v && cJSON_AddItemToObject(m, key, v))
        return m;
    cJSON_Delete(v);
    cJSON_Delete(m);
    return NULL;
}

static void emit_num(int fd, const char *type, const char *key, size_t v)
{
    emit(fd, msg_num(msg_new(type), key, (double)v));
}

/* A worker's state dies with the process: closing it would only make the
 * parent wait (for big models, longer than the rules took). No rule code
 * can run at close anyway (no __gc), and the process exits right away. */
static void worker_exit(sbx *s)
{
    (void)s;
    _exit(0);
}

typedef void (*worker_fn)(void *ctx, int fd);

/* A worker dies with the process that started it: rule code stuck in C
 * (a Lua pattern backtracking) runs no hook, and only its parent's kill
 * would stop it (serve: the analysis worker, killed with the server). */
static void worker_die_with(pid_t parent)
{
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(1);
#else
    (void)parent;
#endif
}

/* hook: the test hook point the worker passes first (testhook.h). */
static int worker_start(worker *w, worker_fn fn, void *ctx, const char *hook)
{
    pid_t parent = getpid();
    int fds[2];

    memset(w, 0, sizeof *w);
    w->fd = -1;
    if (pipe(fds) != 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    w->pid = fork();
    if (w->pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (w->pid == 0) {
        worker_die_with(parent);
        op_testhook(hook);
        close(fds[0]);
        signal(SIGPIPE, SIG_DFL);
        fn(ctx, fds[1]);
        _exit(0);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    w->fd = fds[0];
    return 0;
}

/* Next line from the worker: 1 (*line set, valid until the next call),
 * 0 at end of stream, -1 when deadline (ms, 0 = none) passed, -2 when the
 * worker sent a line longer than WORKER_LINE_MAX or reading failed. */
static int worker_line(worker *w, uint64_t deadline, char **line)
{
    for (;;) {
        char *nl;
        struct pollfd pfd;
        ssize_t r;
        int pr, wait_ms = -1;

        if (w->used) {
            memmove(w->buf, w->buf + w->used, w->len - w->used);
            w->len -= w->used;
            w->used = 0;
        }
        nl = w->len ? memchr(w->buf, '\n', w->len) : NULL;
        if (nl) {
            *nl = '\0';
            *line = w->buf;
            w->used = (size_t)(nl - w->buf) + 1;
            return 1;
        }
        if (w->eof)
            return 0;
        if (w->len >= WORKER_LINE_MAX)
            return -2;
        if (deadline) {
            uint64_t now = util_now_ms();
            if (now >= deadline)
                return -1;
            wait_ms = (int)(deadline - now);
        }
        pfd.fd = w->fd;
        pfd.events = POLLIN;
        pr = poll(&pfd, 1, wait_ms);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            return -2;
        if (pr == 0)
            return -1;
        if (OP_GROW(w->buf, w->cap, w->len + 65536, 131072))
            return -2;
        r = read(w->fd, w->buf + w->len, w->cap - w->len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -2;
        if (r == 0)
            w->eof = 1;
        w->len += (size_t)r;
    }
}

/* Ends the worker (killing it when kill_it) and describes how it ended. */
static void worker_end(worker *w, int kill_it, char *why, size_t cap)
{
    int status = 0;
    pid_t r;

    if (kill_it)
        kill(w->pid, SIGKILL);
    do
        r = waitpid(w->pid, &status, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        snprintf(why, cap, "worker lost");
    else if (WIFSIGNALED(status))
        snprintf(why, cap, "worker crashed (signal %d)", WTERMSIG(status));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        snprintf(why, cap, "worker failed (exit status %d)",
                 WEXITSTATUS(status));
    else
        snprintf(why, cap, "worker exited unexpectedly");
    close(w->fd);
    free(w->buf);
    w->buf = NULL;
}

static const char *jstr(const cJSON *j, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* A worker's index field; SIZE_MAX (never a valid index) for anything not
 * a whole number in range, since a crashed or hostile worker may send any
 * double and converting one out of range is undefined. */
static size_t jnum(const cJSON *j, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    double v;

    if (!cJSON_IsNumber(it))
        return SIZE_MAX;
    v = it->valuedouble;
    if (!(v >= 0 && v < 4294967296.0) || v != (double)(uint64_t)v)
        return SIZE_MAX;
    return (size_t)v;
}

/* When the parent kills a worker of p: a load or call (busy) gets
 * timeout_ms, the time between them WORKER_SETUP_MS, never beyond the
 * pack's budget; each plus the grace period (the worker's own hook
 * normally reports first). 0: no deadline. */
static uint64_t worker_deadline(const ruleset *rs, const pack *p, int busy)
{
    uint64_t dl = busy ? (rs->lim.timeout_ms
                              ? util_now_ms() + rs->lim.timeout_ms + WORKER_GRACE_MS
                              : 0)
                       : util_now_ms() + WORKER_SETUP_MS;

    if (p->deadline && (!dl || p->deadline + WORKER_GRACE_MS < dl))
        dl = p->deadline + WORKER_GRACE_MS;
    return dl;
}

/* How a parent reads one worker: handle() gets each message and returns 1
 * when the work is done, 0 to go on, -1 when the message is wrong, -2 when
 * it could not be kept (out of memory);
 * busy() says whether a rule call or load is under way (its deadline then
 * applies; between steps the worker gets WORKER_SETUP_MS). */
typedef struct worker_reader {
    int (*handle)(void *ctx, const cJSON *msg);
    int (*busy)(const void *ctx);
    void *ctx;
} worker_reader;

#define PUMP_DONE 2 /* handle() said the work is done */
#define PUMP_BAD 3  /* a message was not JSON or handle() refused it */
#define PUMP_NOMEM 4 /* handle() ran out of memory */

/* Reads messages until the work is done, a message is bad, or
 * worker_line() stops (0 end of stream, -1 deadline, -2 protocol). */
static int worker_pump(worker *w, const ruleset *rs, const pack *p,
                       const worker_reader *rd)
{
    char *line;

    for (;;) {
        uint64_t dl = worker_deadline(rs, p, rd->busy(rd->ctx));
        cJSON *msg;
        int rc = worker_line(w, dl, &line);

        if (rc != 1)
            return rc;
        msg = cJSON_Parse(line);
        rc = msg ? rd->handle(rd->ctx, msg) : -1;
        cJSON_Delete(msg);
        if (rc == 1)
            return PUMP_DONE;
        if (rc < 0)
            return rc == -2 ? PUMP_NOMEM : PUMP_BAD;
    }
}

static sbx *pack_sbx(const ruleset *rs, const pack *p, op_error *err)
{
    sbx_config cfg;

    cfg.mem_bytes = rs->lim.mem_bytes;
    cfg.sdk_lua_dir = p->sdk_dir;
    cfg.pack_dir = p->dir;
    return sbx_new(&cfg, err);
}

/* ---- data files ----------------------------------------------------------------- */

typedef struct data_job {
    const rule_limits *lim;
    const char *path;
} data_job;

static void data_child(void *ctx, int fd)
{
    const data_job *j = ctx;
    cJSON *doc = NULL, *m;
    op_error err;
    int rc;

    op_error_clear(&err);
    rc = luadata_eval_limited(j->path, j->lim->mem_bytes,
                              j->lim->instructions, j->lim->timeout_ms, &doc,
                              &err);
    if (rc == 0) {
        m = msg_item(msg_new("data"), "v", doc);
    } else {
        m = msg_num(msg_new("derr"), "code", rc);
        m = msg_str(m, "error", err.msg);
    }
    emit(fd, m);
    _exit(0);
}

/* Parent side: the one message of a data worker. */
static int data_msg(const cJSON *msg, const char *path, cJSON **out,
                    op_error *err)
{
    const char *t = jstr(msg, "t");
    cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, "v");
    size_t code = jnum(msg, "code");

    if (t && strcmp(t, "data") == 0 && v) {
        *out = cJSON_DetachItemViaPointer((cJSON *)msg, v);
        return 0;
    }
    if (t && strcmp(t, "derr") == 0 && jstr(msg, "error") && code > 0 &&
        code < 100)
        return op_error_set(err, (int)code, "%s", jstr(msg, "error"));
    return op_error_set(err, OP_EIO, "%s: worker protocol error", path);
}

int ruleset_eval_data(const rule_limits *lim, const char *path, cJSON **out,
                      op_error *err)
{
    data_job j = {lim, path};
    char why[128], *line;
    uint64_t dl;
    cJSON *msg;
    worker w;
    int rc;

    *out = NULL;
    if (lim->isolate == 0)
        return luadata_eval_limited(path, lim->mem_bytes, lim->instructions,
                                    lim->timeout_ms, out, err);
    if (worker_start(&w, data_child, &j, "rules.worker.data") != 0)
        return op_error_set(err, OP_EIO, "%s: cannot start a worker: %s",
                            path, strerror(errno));
    dl = lim->timeout_ms ? util_now_ms() + lim->timeout_ms + WORKER_GRACE_MS : 0;
    rc = worker_line(&w, dl, &line);
    if (rc == 1) {
        msg = cJSON_Parse(line);
        rc = msg ? data_msg(msg, path, out, err)
                 : op_error_set(err, OP_EIO, "%s: worker protocol error",
                                path);
        cJSON_Delete(msg);
        worker_end(&w, 1, why, sizeof why);
        return rc;
    }
    worker_end(&w, 1, why, sizeof why);
    return op_error_set(err, OP_ELIMIT, "%s: %s", path,
                        rc == -1 ? SBX_REASON_TIME
                        : rc == -2 ? "worker protocol error" : why);
}

/* ---- loading ----------------------------------------------------------------------- */

typedef struct load_job {
    ruleset *rs;
    pack *p;
    char **paths;
    size_t n, next;
} load_job;

/* Worker: loads paths[next..] and reports each file's metadata. */
static void load_child(void *ctx, int fd)
{
    load_job *j = ctx;
    op_error err;
    sbx *s = pack_sbx(j->rs, j->p, &err);
    size_t i;

    if (!s)
        _exit(3);
    for (i = j->next; i < j->n; i++) {
        rule_meta meta;
        char *reason = NULL;
        int ref, by_pack, rc = -1;
        rule_limits lim;
        cJSON *m;

        emit_num(fd, "load", "i", i);
        memset(&meta, 0, sizeof meta);
        if (pack_limits(j->rs, j->p, &lim, &by_pack))
            by_pack = 1, reason = strdup(SBX_REASON_TIME);
        else
            rc = lrule_load(s, j->paths[i], j->p->name, j->p->trusted, &lim,
                            &meta, &ref, &reason);
        if (rc == 0) {
            m = msg_num(msg_new("meta"), "i", (double)i);
            m = msg_item(m, "meta", rule_meta_to_json(&meta));
        } else {
            m = msg_num(msg_new("lerr"), "i", (double)i);
            m = msg_str(m, "rule", meta.id ? meta.id : j->paths[i]);
            m = msg_str(m, "error", pack_reason(by_pack, reason));
        }
        free(reason);
        rule_meta_clear(&meta);
        emit(fd, m);
    }
    emit(fd, msg_new("bye"));
    worker_exit(s);
}

/* Parent side of a load message; returns 1 on "bye", -1 on nonsense. */
static int load_msg(load_job *j, const cJSON *msg, size_t *cur,
                    results *errs)
{
    const char *t = jstr(msg, "t");
    size_t i = jnum(msg, "i");

    if (t && strcmp(t, "bye") == 0)
        return 1;
    if (!t || i >= j->n)
        return -1;
    if (strcmp(t, "load") == 0) {
        *cur = i;
    } else if (strcmp(t, "meta") == 0) {
        rule_meta meta;
        if (rule_meta_from_json(cJSON_GetObjectItemCaseSensitive(msg, "meta"),
                                &meta))
            return -1;
        meta.trusted = j->p->trusted;
        if (add_rule(j->rs, j->p, &meta, LUA_NOREF, errs))
            results_add_error(errs, j->paths[i], "out of memory");
        *cur = SIZE_MAX;
        j->next = i + 1;
    } else if (strcmp(t, "lerr") == 0) {
        const char *who = jstr(msg, "rule");
        results_add_error(errs, who ? who : j->paths[i], jstr(msg, "error"));
        *cur = SIZE_MAX;
        j->next = i + 1;
    } else {
        return -1;
    }
    return 0;
}

typedef struct load_reading {
    load_job *j;
    size_t *cur;
    results *errs;
} load_reading;

static int load_handle(void *ctx, const cJSON *msg)
{
    load_reading *lr = ctx;
    return load_msg(lr->j, msg, lr->cur, lr->errs);
}

static int load_busy(const void *ctx)
{
    return *((const load_reading *)ctx)->cur != SIZE_MAX;
}

static void load_isolated(load_job *j, results *errs)
{
    char why[128];

    while (j->next < j->n) {
        worker w;
        size_t cur = SIZE_MAX, victim;
        load_reading lr = {j, &cur, errs};
        worker_reader rd = {load_handle, load_busy, &lr};
        int rc, done, bad;

        if (pack_spent(j->p)) { /* no worker just to hear that */
            for (; j->next < j->n; j->next++)
                results_add_error(errs, j->paths[j->next],
                                  RULES_REASON_PACK_TIME);
            return;
        }
        if (worker_start(&w, load_child, j, "rules.worker.load") != 0) {
            snprintf(why, sizeof why, "cannot start a worker: %s",
                     strerror(errno));
            for (; j->next < j->n; j->next++)
                results_add_error(errs, j->paths[j->next], why);
            return;
        }
        rc = worker_pump(&w, j->rs, j->p, &rd);
        done = rc == PUMP_DONE;
        bad = rc == PUMP_BAD;
        worker_end(&w, !done, why, sizeof why);
        if (done)
            break;
        if (rc == -1 && !bad)
            snprintf(why, sizeof why, "%s", pack_spent(j->p)
                                                ? RULES_REASON_PACK_TIME
                                                : SBX_REASON_TIME);
        else if (rc == PUMP_NOMEM)
            snprintf(why, sizeof why, "out of memory");
        else if (bad || rc == -2)
            snprintf(why, sizeof why, "worker protocol error");
        victim = cur != SIZE_MAX ? cur : j->next;
        if (victim < j->n)
            results_add_error(errs, j->paths[victim], why);
        j->next = victim + 1;
    }
}

static void load_inproc(ruleset *rs, pack *p, const char *path, results *errs)
{
    rule_meta meta;
    rule_limits lim;
    char *reason = NULL;
    int ref, by_pack;

    if (pack_limits(rs, p, &lim, &by_pack)) {
        results_add_error(errs, path, RULES_REASON_PACK_TIME);
        return;
    }
    if (lrule_load(p->sb, path, p->name, p->trusted, &lim, &meta, &ref,
                   &reason) == 0) {
        /* Like a rule that failed to load: named, not dropped. */
        if (add_rule(rs, p, &meta, ref, errs))
            results_add_error(errs, path, "out of memory");
    } else {
        results_add_error(errs, meta.id ? meta.id : path,
                          pack_reason(by_pack, reason));
        rule_meta_clear(&meta);
    }
    free(reason);
}

/* An isolated pack's files read in the parent (no Lua code of theirs
 * runs here), so that its load and run workers, forked from it, run the
 * same texts without reading them again (lrule_read). A file that cannot
 * be read is left to the load worker, which says why. */
static void preload(const ruleset *rs, const pack *p, char **paths, size_t n)
{
    op_error err;
    sbx *s = pack_sbx(rs, p, &err);
    size_t i;

    for (i = 0; s && i < n; i++) {
        char *reason = NULL;
        lrule_read(s, paths[i], &reason);
        free(reason);
    }
    if (s)
        sbx_free(s, 1000, 100);
}

int ruleset_load_dir(ruleset *rs, const char *dir, const char *pack_name,
                     const char *sdk_lua_dir, int trusted, results *errs,
                     op_error *err)
{
    char **paths = NULL;
    size_t n = 0, i;
    pack *p;
    int rc;

    rc = list_rule_files(dir, &paths, &n, err);
    if (rc)
        return rc;
    p = calloc(1, sizeof *p);
    if (!p || !(p->name = strdup(pack_name ? pack_name : dir)) ||
        !(p->dir = strdup(dir)) ||
        (sdk_lua_dir && !(p->sdk_dir = strdup(sdk_lua_dir)))) {
        pack_free(rs, p);
        free_list(paths, n);
        return op_error_set(err, OP_ENOMEM, "out of memory");
    }
    p->trusted = trusted;
    p->isolated = rs->lim.isolate > 0 || (rs->lim.isolate < 0 && !trusted);
    if (!p->isolated && !(p->sb = pack_sbx(rs, p, err))) {
        pack_free(rs, p);
        free_list(paths, n);
        return err ? err->code : OP_ENOMEM;
    }
    if (add_pack(rs, p)) {
        pack_free(rs, p);
        free_list(paths, n);
        return op_error_set(err, OP_ENOMEM, "out of memory");
    }
    pack_begin(rs, p);
    if (p->isolated) {
        load_job j = {rs, p, paths, n, 0};
        preload(rs, p, paths, n);
        load_isolated(&j, errs);
    } else {
        for (i = 0; i < n; i++)
            load_inproc(rs, p, paths[i], errs);
    }
    pack_end(p);
    free_list(paths, n);
    return 0;
}

/* ---- running ---------------------------------------------------------------------- */

static int wants_source(const rule_meta *m, const char *source, int *bundle)
{
    size_t i;
    int hit = 0;

    *bundle = 0;
    for (i = 0; i < m->nsources; i++) {
        if (strcmp(m->sources[i], "*") == 0)
            *bundle = 1;
        else if (source && strcmp(m->sources[i], source) == 0)
            hit = 1;
    }
    return hit;
}

/* Steps of pack p in order: its rules as loaded, each over the runs of m
 * in model order (or once over the bundle). */
static int pack_steps(const ruleset *rs, const pack *p, const model *m,
                      step **out, size_t *n)
{
    size_t i, k, cap = 0;
    step *v = NULL;

    *n = 0;
    for (i = 0; i < rs->nrules; i++) {
        rule *r = rs->rules[i];
        int bundle;
        if (r->p != p || !r->meta.enabled)
            continue;
        wants_source(&r->meta, NULL, &bundle);
        for (k = 0; k < (bundle ? 1 : m->nruns); k++) {
            if (!bundle && (m->runs[k]->superseded ||
                            !wants_source(&r->meta, m->runs[k]->source,
                                          &bundle)))
                continue; /* a superseded run is seen in its successor's history */
            if (OP_GROW(v, cap, *n + 1, 16)) {
                free(v);
                return OP_ENOMEM;
            }
            v[*n].r = r;
            v[*n].run = bundle ? SIZE_MAX : k;
            (*n)++;
        }
    }
    *out = v;
    return 0;
}

/* Runs one step in sandbox s. On success the findings go to *findings
 * (caller frees); otherwise *reason. Returns an sbx_fail. */
static int exec_step(const rule_limits *lim, sbx *s, const step *st,
                     const model *m, void (*started)(void *), void *ud,
                     cJSON **findings, char **reason)
{
    lrule_call c;
    cJSON *opts = rule_meta_merged_options(&st->r->meta);
    int kind;

    *findings = NULL;
    if (!opts) {
        *reason = strdup("out of memory");
        return SBX_EHOST;
    }
    memset(&c, 0, sizeof c);
    c.meta = &st->r->meta;
    c.fn_ref = st->r->fn_ref;
    c.m = m;
    c.run_index = st->run;
    c.options = opts;
    kind = lrule_exec(s, &c, lim, started, ud, reason);
    cJSON_Delete(opts);
    if (kind == SBX_OK)
        *findings = c.findings;
    else
        cJSON_Delete(c.findings);
    return kind;
}

static void add_findings(results *out, const model *m, const rule *r,
                         const cJSON *findings)
{
    const cJSON *f;
    op_error e;

    cJSON_ArrayForEach(f, findings) {
        if (results_add_finding(out, m, f, &e))
            results_add_error(out, r->meta.id, e.msg);
        else if (r->meta.sev_configured) /* the team's word over the rule's */
            out->f[out->n - 1].sev = r->meta.sev;
    }
}

static void record_failure(results *out, rule *r, int kind,
                           const char *reason)
{
    results_add_error(out, r->meta.id, reason ? reason : "out of memory");
    if (kind != SBX_ELUA)
        r->dead = 1; /* a limit: the rule does not run again this time */
}

static int reset_step(lua_State *L)
{
    lmodel_reset(L);
    return 0;
}

static void run_inproc(const ruleset *rs, pack *p, const model *m,
                       step *steps, size_t n, results *out)
{
    size_t k;
    char *reason = NULL;

    sbx_cpcall(p->sb, reset_step, NULL, 0, 0, &reason);
    free(reason);
    for (k = 0; k < n; k++) {
        cJSON *findings;
        int kind;

        rule_limits lim;
        int by_pack;

        if (steps[k].r->dead)
            continue;
        if (pack_limits(rs, p, &lim, &by_pack)) {
            record_failure(out, steps[k].r, SBX_ETIME, RULES_REASON_PACK_TIME);
            continue;
        }
        steps[k].r->ran = 1;
        kind = exec_step(&lim, p->sb, &steps[k], m, NULL, NULL, &findings,
                         &reason);
        if (kind == SBX_OK)
            add_findings(out, m, steps[k].r, findings);
        else
            record_failure(out, steps[k].r, kind, pack_reason(by_pack, reason));
        cJSON_Delete(findings);
        free(reason);
        reason = NULL;
    }
}

typedef struct run_job {
    ruleset *rs;
    pack *p;
    const model *m;
    step *steps;
    size_t n, next;
    int fd; /* worker side */
    size_t cur_step;
} run_job;

static void started_call(void *ud)
{
    run_job *j = ud;

    emit_num(j->fd, "call", "s", j->cur_step);
    if (sbx_worker_test_hook)
        sbx_worker_test_hook(j->steps[j->cur_step].r->meta.id);
}

/* Whether r has a step in steps[next..]: only those rules are reloaded,
 * so a worker loads each file at most once, and only when it is needed. */
static int has_step(const run_job *j, const rule *r)
{
    size_t k;

    for (k = j->next; k < j->n; k++)
        if (j->steps[k].r == r)
            return 1;
    return 0;
}

/* Worker: reloads the pack's live rules that have steps left. */
static void reload_rules(run_job *j, sbx *s)
{
    size_t i;

    for (i = 0; i < j->rs->nrules; i++) {
        rule *r = j->rs->rules[i];
        rule_meta meta;
        rule_limits lim;
        char *reason = NULL;
        int ref, ok = 0, by_pack;

        if (r->p != j->p || r->dead || !r->meta.enabled || !has_step(j, r))
            continue;
        emit_num(j->fd, "load", "i", i);
        memset(&meta, 0, sizeof meta);
        /* By the return code: out of memory, reason may be NULL. */
        if (pack_limits(j->rs, j->p, &lim, &by_pack))
            by_pack = 1, reason = strdup(SBX_REASON_TIME);
        else
            ok = lrule_load(s, r->meta.file, j->p->name, j->p->trusted, &lim,
                            &meta, &ref, &reason) == 0;
        if (ok && strcmp(meta.id, r->meta.id) != 0) {
            lrule_unref(s, ref);
            ok = 0;
            free(reason);
            reason = strdup("the rule file changed since it was loaded");
        }
        if (!ok) {
            cJSON *m = msg_num(msg_new("lfail"), "i", (double)i);
            emit(j->fd, msg_str(m, "error", pack_reason(by_pack, reason)));
            r->dead = 1;
        } else {
            r->fn_ref = ref;
            emit_num(j->fd, "loaded", "i", i);
        }
        free(reason);
        rule_meta_clear(&meta);
    }
}

static void run_child(void *ctx, int fd)
{
    run_job *j = ctx;
    op_error err;
    sbx *s = pack_sbx(j->rs, j->p, &err);
    size_t k;

    if (!s)
        _exit(3);
    j->fd = fd;
    reload_rules(j, s);
    for (k = j->next; k < j->n; k++) {
        cJSON *findings = NULL, *f, *m;
        char *reason = NULL;
        rule_limits lim;
        int kind, by_pack;

        if (j->steps[k].r->dead)
            continue;
        j->cur_step = k;
        if (pack_limits(j->rs, j->p, &lim, &by_pack)) {
            kind = SBX_ETIME;
            by_pack = 1;
            reason = strdup(SBX_REASON_TIME);
        } else {
            kind = exec_step(&lim, s, &j->steps[k], j->m, started_call, j,
                             &findings, &reason);
        }
        if (kind == SBX_OK) {
            cJSON_ArrayForEach(f, findings) {
                /* A reference to its members: the finding stays in
                 * findings. */
                m = msg_item(msg_new("f"), "f",
                             cJSON_CreateObjectReference(f->child));
                emit(fd, m);
            }
            emit_num(fd, "ok", "s", k);
        } else {
            m = msg_num(msg_new("fail"), "s", (double)k);
            m = msg_num(m, "kind", kind);
            emit(fd, msg_str(m, "error", pack_reason(by_pack, reason)));
            if (kind != SBX_ELUA)
                j->steps[k].r->dead = 1;
        }
        cJSON_Delete(findings);
        free(reason);
    }
    emit(fd, msg_new("bye"));
    worker_exit(s);
}

typedef struct run_state {
    size_t load;   /* rule being reloaded, or SIZE_MAX */
    size_t call;   /* step running, or SIZE_MAX */
    cJSON *pending; /* findings of the running step */
} run_state;

/* Parent side of one run-phase message: 1 on "bye", -1 on nonsense. */
static int run_msg(run_job *j, const cJSON *msg, run_state *st,
                   results *out)
{
    const char *t = jstr(msg, "t");
    size_t i = jnum(msg, "i"), s = jnum(msg, "s");
    const ruleset *rs = j->rs;

    if (!t)
        return -1;
    if (strcmp(t, "bye") == 0)
        return 1;
    if (strcmp(t, "load") == 0 || strcmp(t, "loaded") == 0 ||
        strcmp(t, "lfail") == 0) {
        if (i >= rs->nrules)
            return -1;
        st->load = strcmp(t, "load") == 0 ? i : SIZE_MAX;
        if (strcmp(t, "lfail") == 0)
            record_failure(out, rs->rules[i], SBX_EHOST, jstr(msg, "error"));
        return 0;
    }
    if (strcmp(t, "f") == 0) {
        cJSON *f = cJSON_GetObjectItemCaseSensitive(msg, "f"), *copy;
        if (st->call == SIZE_MAX || !f || !st->pending)
            return -1;
        /* A finding that cannot be kept fails the rule: never drop one. */
        if (!(copy = cJSON_Duplicate(f, 1)))
            return -2;
        cJSON_AddItemToArray(st->pending, copy);
        return 0;
    }
    if (s >= j->n)
        return -1;
    if (strcmp(t, "call") == 0) {
        st->call = s;
        j->steps[s].r->ran = 1;
        cJSON_Delete(st->pending);
        st->pending = cJSON_CreateArray();
        return st->pending ? 0 : -2;
    }
    if (strcmp(t, "ok") == 0) {
        if (st->pending)
            add_findings(out, j->m, j->steps[s].r, st->pending);
    } else if (strcmp(t, "fail") == 0) {
        size_t kind = jnum(msg, "kind");
        j->steps[s].r->ran = 1;
        record_failure(out, j->steps[s].r,
                       kind == SIZE_MAX ? SBX_EHOST : (int)kind,
                       jstr(msg, "error"));
    } else {
        return -1;
    }
    cJSON_Delete(st->pending);
    st->pending = NULL;
    st->call = SIZE_MAX;
    j->next = s + 1;
    return 0;
}

typedef struct run_reading {
    run_job *j;
    run_state *st;
    results *out;
} run_reading;

static int run_handle(void *ctx, const cJSON *msg)
{
    run_reading *rr = ctx;
    return run_msg(rr->j, msg, rr->st, rr->out);
}

static int run_busy(const void *ctx)
{
    const run_state *st = ((const run_reading *)ctx)->st;
    return st->call != SIZE_MAX || st->load != SIZE_MAX;
}

static void run_isolated(run_job *j, results *out)
{
    char why[128];

    for (;;) {
        worker w;
        run_state st = {SIZE_MAX, SIZE_MAX, NULL};
        run_reading rr = {j, &st, out};
        worker_reader rd = {run_handle, run_busy, &rr};
        int rc, done, bad;
        rule *victim;

        while (j->next < j->n && j->steps[j->next].r->dead)
            j->next++;
        if (j->next >= j->n)
            return;
        if (pack_spent(j->p)) { /* no worker just to hear that */
            for (; j->next < j->n; j->next++)
                if (!j->steps[j->next].r->dead)
                    record_failure(out, j->steps[j->next].r, SBX_ETIME,
                                   RULES_REASON_PACK_TIME);
            return;
        }
        if (worker_start(&w, run_child, j, "rules.worker.run") != 0) {
            snprintf(why, sizeof why, "cannot start a worker: %s",
                     strerror(errno));
            for (; j->next < j->n; j->next++)
                if (!j->steps[j->next].r->dead)
                    record_failure(out, j->steps[j->next].r, SBX_EHOST, why);
            return;
        }
        rc = worker_pump(&w, j->rs, j->p, &rd);
        done = rc == PUMP_DONE;
        bad = rc == PUMP_BAD;
        cJSON_Delete(st.pending);
        worker_end(&w, !done, why, sizeof why);
        if (done)
            return;
        if (rc == -1 && !bad)
            snprintf(why, sizeof why, "%s", pack_spent(j->p)
                                                ? RULES_REASON_PACK_TIME
                                                : SBX_REASON_TIME);
        else if (rc == PUMP_NOMEM)
            snprintf(why, sizeof why, "out of memory");
        else if (bad || rc == -2)
            snprintf(why, sizeof why, "worker protocol error");
        if (st.call != SIZE_MAX) {
            victim = j->steps[st.call].r;
            j->next = st.call + 1;
        } else if (st.load != SIZE_MAX) {
            victim = j->rs->rules[st.load];
        } else {
            victim = j->steps[j->next].r; /* died between steps: blame next */
        }
        record_failure(out, victim, SBX_EHOST, why);
        victim->dead = 1;
    }
}

int ruleset_run(ruleset *rs, const model *m, results *out, op_error *err)
{
    size_t i, n;
    step *steps;

    for (i = 0; i < rs->nrules; i++)
        rs->rules[i]->dead = rs->rules[i]->ran = 0;
    for (i = 0; i < rs->npacks; i++) {
        pack *p = rs->packs[i];
        if (pack_steps(rs, p, m, &steps, &n))
            return op_error_set(err, OP_ENOMEM, "out of memory");
        pack_begin(rs, p);
        if (n && p->isolated) {
            run_job j;
            memset(&j, 0, sizeof j);
            j.rs = rs;
            j.p = p;
            j.m = m;
            j.steps = steps;
            j.n = n;
            run_isolated(&j, out);
        } else if (n) {
            run_inproc(rs, p, m, steps, n, out);
        }
        free(steps);
        p->spent = 0; /* the analysis is over: the next one has its budget */
    }
    for (i = 0; i < rs->nrules; i++)
        out->rules_run += rs->rules[i]->ran ? 1u : 0u;
    return 0;
}

int rules_pack_names(const char *root, char *names[RULES_MAX_PACKS],
                     size_t *n, op_error *err)
{
    char dir[PATH_MAX * 2];
    struct dirent *de;
    DIR *d = opendir(root);
    int rc = 0;

    *n = 0;
    if (!d)
        return op_error_set(err, OP_ENOTFOUND,
                            "%s: cannot open the bundled rule packs: %s "
                            "(set OPTIPIPE_HOME)", root, strerror(errno));
    while ((de = readdir(d)) && *n < RULES_MAX_PACKS) {
        struct stat st;
        if (de->d_name[0] == '.' || strcmp(de->d_name, MAPPING_DIR) == 0)
            continue; /* mappings/ holds mapping packs, not rules */
        snprintf(dir, sizeof dir, "%s/%s", root, de->d_name);
        if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        /* A pack left out would pass for a clean run with fewer rules. */
        if (!(names[*n] = strdup(de->d_name))) {
            rc = op_error_set(err, OP_ENOMEM, "out of memory");
            break;
        }
        (*n)++;
    }
    closedir(d);
    qsort(names, *n, sizeof *names, util_strp_cmp);
    return rc;
}
