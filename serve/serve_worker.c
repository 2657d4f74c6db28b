/*
 * serve_worker.c - `optipipe serve --worker ID --data DATA ...`: one
 * analysis of the server in a process of its own (started by
 * serve_jobs.c), so that a crash, a memory blow-up or a stall costs that
 * analysis alone. It dies with the server (PR_SET_PDEATHSIG), runs under
 * the per-analysis limits, and is the same pipeline as `optipipe analyze
 * --history DATA/history.db` (the same op_session_opts) over the analysis'
 * inputs/, its URL inputs and, when the server allows rule uploads, its
 * rules/ as one more user pack (isolated like every --rules pack). It
 * writes report.json and report.html atomically; diagnostics go to stderr
 * (worker.log). The server alone writes meta.json.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <curl/curl.h>

#include "diag.h"
#include "fetch.h"
#include "jsonw.h"
#include "model.h"
#include "notify.h"
#include "serve.h"
#include "session.h"
#include "testhook.h"
#include "util.h"

#if defined(__SANITIZE_ADDRESS__)
#define WORKER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WORKER_ASAN 1
#endif
#endif

#define CPU_SLACK_S 10 /* RLIMIT_CPU: the wall-clock limit plus this */
/* urls.txt: as many URLs as text fields, each a line of SRV_FIELD_MAX */
#define URLS_MAX ((SRV_FIELD_MAX + 1u) * SRV_FIELDS_MAX)
/* the inputs: inputs/ and the URLs */
#define WORKER_INPUTS (1 + SRV_FIELDS_MAX)

int srv_url_allowed(const serve_opts *o, const char *url)
{
    CURLU *u;
    char *host = NULL;
    int ok = 0;

    if (!url || !fetch_is_url(url) || !o->nfetch_allow || !(u = curl_url()))
        return 0;
    if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
        size_t hl = strlen(host);
        int v6 = hl > 2 && host[0] == '[' && host[hl - 1] == ']';
        for (size_t i = 0; !ok && i < o->nfetch_allow; i++) {
            const char *a = o->fetch_allow[i];
            ok = strcasecmp(a, host) == 0 ||
                 (v6 && strlen(a) == hl - 2 && strncasecmp(a, host + 1, hl - 2) == 0);
        }
    }
    curl_free(host);
    curl_url_cleanup(u);
    return ok;
}

/* ---- the process ------------------------------------------------------------ */

/* Whether the server that started this worker is gone already (it died
 * before PR_SET_PDEATHSIG took effect). */
static int orphaned(void)
{
    const char *p = getenv(SRV_PARENT_ENV);

    if (!p || !*p)
        return getppid() == 1;
    return strtol(p, NULL, 10) != (long)getppid();
}

static int set_limit(int res, rlim_t soft, rlim_t hard, const char *what)
{
    struct rlimit r = {soft, hard};

    if (setrlimit(res, &r) == 0)
        return 0;
    fprintf(stderr, "optipipe serve: error: cannot limit %s: %s\n", what,
            strerror(errno));
    return -1;
}

/* Memory (address space), CPU time and no core files. */
static int set_limits(const serve_opts *o)
{
    int bad = set_limit(RLIMIT_CORE, 0, 0, "core files");

    if (o->analysis_timeout_s) {
        rlim_t t = o->analysis_timeout_s;
        bad |= set_limit(RLIMIT_CPU, t + CPU_SLACK_S / 2, t + CPU_SLACK_S, "CPU time");
    }
#ifdef WORKER_ASAN
    /* ASan reserves terabytes of address space for its shadow memory */
    fprintf(stderr, "optipipe serve: note: AddressSanitizer build: "
            "--analysis-memory not applied\n");
#else
    if (o->analysis_memory)
        bad |= set_limit(RLIMIT_AS, o->analysis_memory, o->analysis_memory,
                         "memory (--analysis-memory)");
#endif
    return bad;
}

/* Whether dir is a folder with at least one entry. */
static int has_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int any = 0;

    if (!d)
        return 0;
    while (!any && (e = readdir(d)))
        any = strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return any;
}

/* Everything of the worker that lives as long as the analysis. */
typedef struct worker {
    const serve_opts *o;
    char dir[4096], inputs[4096], rules[4096], store[4096];
    char packs[SRV_MAX_LIST][PATH_MAX], config[PATH_MAX]; /* made absolute */
    char *urls;      /* urls.txt, its lines cut in place */
    const char *inputs_v[WORKER_INPUTS];          /* so.inputs */
    const char *rules_v[SRV_MAX_LIST + 1];        /* so.rules_dirs */
    fetch_opts fetch;                             /* so.fetch */
    op_session_opts so;
} worker;

/* The URL inputs of urls.txt, each checked again against --fetch-allow
 * (the server's options may have changed since the upload). */
static int add_urls(worker *w)
{
    char path[4096 + 16], *line, *save = NULL;
    FILE *f;
    long len;
    int rc = 0;

    snprintf(path, sizeof path, "%s/%s", w->dir, SRV_URLS);
    if (!(f = fopen(path, "re")))
        return errno == ENOENT ? 0 : -1;
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
        len > (long)URLS_MAX || fseek(f, 0, SEEK_SET) != 0 ||
        !(w->urls = calloc(1, (size_t)len + 1)) ||
        fread(w->urls, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "optipipe serve: error: %s: cannot read (at most %u bytes)\n",
                SRV_URLS, URLS_MAX);
        rc = -1;
    }
    fclose(f);
    for (line = rc ? NULL : strtok_r(w->urls, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (!srv_url_allowed(w->o, line)) {
            fprintf(stderr, "optipipe serve: error: %s: host not in --fetch-allow\n",
                    line);
            return -1;
        }
        if (w->so.ninputs == WORKER_INPUTS)
            return -1;
        w->inputs_v[w->so.ninputs++] = line;
    }
    return rc;
}

/* The server's path p as an absolute one into out (the worker leaves the
 * server's folder). */
static int absolute(const char *p, char out[PATH_MAX])
{
    if (realpath(p, out))
        return 0;
    fprintf(stderr, "optipipe serve: error: %s: %s\n", p, strerror(errno));
    return -1;
}

/* Runs the analysis from inside its folder, every path of it relative
 * ("inputs/x.json", "tmp/optipipe-zip-...", "../../history.db"), so that
 * no report, warning or page names the server's DATA. */
static int in_analysis(worker *w)
{
    const serve_opts *o = w->o;
    struct stat st;

    for (size_t i = 0; i < o->nrules_dirs && i < SRV_MAX_LIST; i++)
        if (absolute(o->rules_dirs[i], w->packs[i]))
            return -1;
    if (o->config_path && absolute(o->config_path, w->config))
        return -1;
    if (chdir(w->dir) != 0) {
        fprintf(stderr, "optipipe serve: error: %s: %s\n", w->dir, strerror(errno));
        return -1;
    }
    snprintf(w->dir, sizeof w->dir, ".");
    snprintf(w->inputs, sizeof w->inputs, "%s", SRV_INPUTS);
    snprintf(w->rules, sizeof w->rules, "%s", SRV_RULES);
    snprintf(w->store, sizeof w->store, "%s", o->store ? o->store : "../../history.db");
    /* the server's a->dir/tmp (absent when run by hand: TMPDIR kept) */
    if (lstat("tmp", &st) == 0 && S_ISDIR(st.st_mode) && setenv("TMPDIR", "tmp", 1) != 0) {
        fprintf(stderr, "optipipe serve: error: TMPDIR: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* The analysis' request, as `optipipe analyze --history DATA/history.db`
 * would make it from the same files. */
static int build(worker *w)
{
    op_session_opts *so = &w->so;
    const serve_opts *o = w->o;
    size_t nrules = 0;
    struct stat st;

    if (!srv_id_valid(o->worker)) {
        fprintf(stderr, "optipipe serve: error: --worker: not an analysis id\n");
        return -1;
    }
    if (snprintf(w->dir, sizeof w->dir, "%s/analyses/%s", o->data_dir, o->worker) >=
            (int)sizeof w->dir ||
        lstat(w->dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "optipipe serve: error: %s: no such analysis\n", w->dir);
        return -1;
    }
    if (in_analysis(w))
        return -1;
    op_session_opts_default(so);
    so->mode = OP_SESSION_ALL;
    so->plugin_path = getenv("OPTIPIPE_PLUGIN_PATH");
    so->diag = stderr;
    fetch_opts_init(&w->fetch);
    w->fetch.diag = stderr;
    w->fetch.no_redirects = 1; /* --fetch-allow names the final hosts */
    so->fetch = &w->fetch;
    so->inputs = w->inputs_v;
    if (has_entries(w->inputs))
        w->inputs_v[so->ninputs++] = w->inputs;
    if (add_urls(w))
        return -1;
    for (size_t i = 0; i < o->nrules_dirs && i < SRV_MAX_LIST; i++)
        w->rules_v[nrules++] = w->packs[i];
    if (o->allow_rule_upload && has_entries(w->rules))
        w->rules_v[nrules++] = w->rules;
    so->rules_dirs = w->rules_v;
    so->nrules_dirs = nrules;
    so->config_path = o->config_path ? w->config : NULL;
    so->no_config = !o->config_path;
    so->no_baseline = 1;
    so->history = w->store;
    so->record = 1;
    so->decisions_from_store = 1; /* approved or dismissed before: shown so */
    if (!so->ninputs) {
        fprintf(stderr, "optipipe serve: error: the analysis has no input\n");
        return -1;
    }
    return 0;
}

/* summary.json (SRV_SUMMARY_JSON): the runs' engines, jobs and statuses
 * and the findings by severity, what /analyses lists without reading
 * each report. */
static int summary_fill(FILE *f, void *ud)
{
    const op_session *s = ud;
    const model *m = s->an.m;
    size_t i, n = 0, sev[3] = {0, 0, 0};
    jw w;

    jw_init(&w, f, 0);
    jw_obj(&w);
    jw_key(&w, "runs");
    jw_arr(&w);
    for (i = 0; m && i < m->nruns; i++) {
        const struct op_run *r = m->runs[i];
        if (r->superseded || n++ >= SRV_SUMMARY_RUNS)
            continue;
        jw_obj(&w);
        jw_key(&w, "source");
        jw_str(&w, r->source);
        jw_key(&w, "job");
        jw_str(&w, model_run_job(r));
        jw_key(&w, "name");
        jw_str(&w, r->name);
        jw_key(&w, "status");
        jw_str(&w, r->status ? r->status : "unknown");
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_key(&w, "nruns");
    jw_int(&w, (int64_t)n);
    for (i = 0; i < s->res.n; i++)
        if ((unsigned)s->res.f[i].sev < 3)
            sev[s->res.f[i].sev]++;
    jw_key(&w, "findings");
    jw_obj(&w);
    jw_key(&w, "error");
    jw_int(&w, (int64_t)sev[SEV_ERROR]);
    jw_key(&w, "warning");
    jw_int(&w, (int64_t)sev[SEV_WARNING]);
    jw_key(&w, "info");
    jw_int(&w, (int64_t)sev[SEV_INFO]);
    jw_obj_end(&w);
    jw_obj_end(&w);
    fputc('\n', f);
    return ferror(f) ? OP_EIO : 0;
}

/* One report being written: its reporter and context. */
typedef struct report_job {
    report_fn fn;
    report_ctx rc;
} report_job;

static int report_fill(FILE *f, void *ud)
{
    report_job *r = ud;

    r->rc.out = f;
    return r->fn(&r->rc);
}

/* report.json, report.html and summary.json of session s, each through a
 * temp file. */
static int write_reports(const worker *w, const op_session *s, unsigned long t0)
{
    static const char *const formats[][2] = {{"json", SRV_REPORT_JSON},
                                             {"html", SRV_REPORT_HTML}};
    report_job r;
    op_error err;

    for (size_t i = 0; i < 2; i++) {
        memset(&r, 0, sizeof r);
        r.fn = report_find(formats[i][0]);
        r.rc.an = &s->an;
        r.rc.res = &s->res;
        r.rc.rs = s->rs;
        r.rc.show_suppressed = 1;
        r.rc.elapsed_ms = util_now_ms() - t0;
        r.rc.read_ms = s->t_read;
        r.rc.rules_ms = s->t_rules;
        r.rc.fail_on = s->o.fail_on;
        op_session_applied(s, &r.rc.applied);
        op_error_clear(&err);
        if (!r.fn || srv_write_atomic(w->dir, formats[i][1], report_fill, &r, &err)) {
            fprintf(stderr, "optipipe serve: error: %s\n",
                    r.fn ? err.msg : "no such report format");
            return -1;
        }
    }
    op_error_clear(&err);
    if (srv_write_atomic(w->dir, SRV_SUMMARY_JSON, summary_fill, (void *)s, &err)) {
        fprintf(stderr, "optipipe serve: error: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static int text_fill(FILE *f, void *ud)
{
    return fputs(ud, f) < 0 ? OP_EIO : 0;
}

/* notify.json (SRV_NOTIFY_JSON): the analysis' webhook events, which the
 * server delivers after it made the analysis done (serve_notify.c), so
 * that no receiver delays it. Written only when the config has `notify`.
 * A failure to write it is said (worker.log) and leaves the analysis as
 * it was: a notification never changes what the analysis said. */
static void write_events(const worker *w, const op_session *s)
{
    notify_events e;
    op_error err;
    char *text = NULL;

    size_t all;

    if (!s->cfg.notify || !s->cfg.notify->child)
        return;
    op_error_clear(&err);
    if (notify_collect(s->an.m, &s->res, NULL, &e, &err) == 0) {
        /* what the server reads at most; the rest was not said, so it is
         * still news to the next analysis (as past a POST's 100 events) */
        all = e.n;
        if (e.n > NOTIFY_EVENTS_MAX)
            e.n = NOTIFY_EVENTS_MAX;
        while (!notify_events_json(&e, &text, &err) &&
               strlen(text) > NOTIFY_EVENTS_FILE_MAX && e.n) {
            free(text);
            text = NULL;
            e.n /= 2;
        }
        if (text)
            srv_write_atomic(w->dir, SRV_NOTIFY_JSON, text_fill, text, &err);
        if (!err.code && e.n < all)
            fprintf(stderr, "optipipe serve: note: %s: the first %zu of %zu "
                    "events (at most %d, %u bytes); the others wait for the "
                    "next analysis\n", SRV_NOTIFY_JSON, e.n, all,
                    NOTIFY_EVENTS_MAX, NOTIFY_EVENTS_FILE_MAX);
        e.n = all; /* all of them freed */
    }
    if (err.code)
        fprintf(stderr, "optipipe serve: error: %s: %s (nothing of this "
                "analysis will be notified)\n", SRV_NOTIFY_JSON, err.msg);
    free(text);
    notify_events_free(&e);
}

/* The exit code of `optipipe analyze` for a session that ran (main.c);
 * not recorded in the run store beats a rule error here: the server must
 * not call such an analysis done (serve_jobs.c: record-failed). */
static int exit_code(const op_session *s)
{
    if (s->record_err.code) {
        fprintf(stderr, "optipipe serve: error: %s\n", s->record_err.msg);
        return OP_EXIT_NOT_RECORDED;
    }
    if (s->res.ne && !s->o.allow_rule_errors) {
        fprintf(stderr, "optipipe serve: %zu rule error%s (listed in the report)\n",
                s->res.ne, s->res.ne == 1 ? "" : "s");
        return OP_EXIT_RULE_ERROR;
    }
    if (s->o.fail_on &&
        results_count_shown_at_least(&s->res, (severity)severity_parse(s->o.fail_on)))
        return OP_EXIT_FINDINGS;
    return OP_EXIT_DONE;
}

int serve_worker_main(const serve_opts *o)
{
    static worker w; /* large (its paths): not on the stack */
    op_session s;
    op_error err;
    unsigned long t0 = (unsigned long)util_now_ms();
    int code, rc;

    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || orphaned())
        return OP_EXIT_NOINPUT; /* no server to report to: nothing to do */
    op_testhook("serve.worker");
    if (set_limits(o))
        return OP_EXIT_NOINPUT;
    memset(&w, 0, sizeof w);
    w.o = o;
    if (build(&w)) {
        free(w.urls);
        return OP_EXIT_USAGE;
    }
    op_error_clear(&err);
    rc = op_session_run(&s, &w.so, &err);
    if (rc) {
        diag_msg(DIAG_ERROR, "%s%s", s.failed == OP_STAGE_RUN ? "rule engine: " : "",
                 err.msg);
        code = op_session_exit_failed(rc);
    } else if (write_reports(&w, &s, t0))
        code = OP_EXIT_NOINPUT;
    else {
        write_events(&w, &s);
        code = exit_code(&s);
    }
    /* recorded and reported, not yet ended: where a test kills the
     * server under it (tests/e2e/serve_multi_pg.sh: a takeover records
     * the runs once) */
    op_testhook("serve.worker.recorded");
    op_session_free(&s);
    free(w.urls);
    return code;
}
