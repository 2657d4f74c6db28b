/*
 * cmd_history.c - the run store from the command line (docs/history.md):
 * `optipipe history jobs | runs JOB | show RUN | prune | notifications`,
 * whose options are in cli_table.c. Which store an analysis uses and its recording are the
 * pipeline's (core/session.c).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "jsonw.h"
#include "report_html.h"
#include "report_util.h"
#include "store.h"

/* ---- output ---------------------------------------------------------------- */

static void fmt_time(int64_t ms, char *buf, size_t cap)
{
    time_t t = (time_t)(ms / 1000);
    struct tm tm;

    if (ms <= 0 || !gmtime_r(&t, &tm)) {
        snprintf(buf, cap, "-");
        return;
    }
    strftime(buf, cap, "%Y-%m-%d %H:%M", &tm);
}

#define HIST_LABEL 64

typedef struct out {
    FILE *f;
    jw w;
    int json, html;
    size_t n;
    store *s;
    op_error *err;
    const char *metric;
    const char *node; /* runs --node: the node whose metric is charted */
    double *vals; /* runs: the trend, newest first */
    char (*labels)[HIST_LABEL]; /* html: when each of vals started */
    size_t nvals, cap;
} out;

static int job_line(void *ud, const store_job *j)
{
    out *o = ud;
    char when[32];

    o->n++;
    if (o->json) {
        jw_obj(&o->w);
        jw_key(&o->w, "job");
        jw_str(&o->w, j->job);
        jw_key(&o->w, "source");
        jw_str(&o->w, j->source);
        jw_key(&o->w, "runs");
        jw_int(&o->w, j->nruns);
        jw_key(&o->w, "last_started_at");
        jw_int(&o->w, j->last_started);
        jw_obj_end(&o->w);
        return 0;
    }
    fmt_time(j->last_started, when, sizeof when);
    fprintf(o->f, "%-6s %5lld run%s  last %s  ", j->source,
            (long long)j->nruns, j->nruns == 1 ? " " : "s", when);
    report_term_put(o->f, j->job);
    fputc('\n', o->f);
    return 0;
}

/* One row of the webhooks' delivery log (history notifications). */
static int notification_line(void *ud, const store_notification *n)
{
    out *o = ud;

    o->n++;
    if (o->json) {
        jw_obj(&o->w);
        jw_key(&o->w, "at");
        jw_str(&o->w, n->at);
        jw_key(&o->w, "endpoint");
        jw_str(&o->w, n->endpoint);
        jw_key(&o->w, "event");
        jw_str(&o->w, n->event);
        jw_key(&o->w, "fingerprint");
        jw_str(&o->w, n->fingerprint);
        jw_key(&o->w, "status");
        jw_str(&o->w, n->status);
        jw_key(&o->w, "attempts");
        jw_int(&o->w, n->attempts);
        jw_key(&o->w, "error");
        jw_str(&o->w, n->error);
        jw_obj_end(&o->w);
        return 0;
    }
    fprintf(o->f, "%s  %-6s %-11s %.8s  %lld attempt%s  ", n->at, n->status,
            n->event, n->fingerprint, (long long)n->attempts,
            n->attempts == 1 ? " " : "s");
    report_term_put(o->f, n->endpoint);
    if (n->error) {
        fputs(": ", o->f);
        report_term_put(o->f, n->error);
    }
    fputc('\n', o->f);
    return 0;
}

typedef struct node_pick {
    const char *id;
    double v;
    int found;
} node_pick;

static int pick_node(void *ud, const char *node_id, double v)
{
    node_pick *p = ud;

    if (!p->found && node_id && !strcmp(node_id, p->id)) {
        p->v = v;
        p->found = 1;
    }
    return 0;
}

/* The value of o->metric for a run: duration_ms or a run metric; with
 * --node, that node's duration_ms or metric (store_each_node_value). */
static int run_metric(const out *o, const store_run *r, double *v)
{
    cJSON *m, *it;
    int ok = 0;

    if (o->node) {
        const char *names[1] = {o->metric};
        node_pick p = {o->node, 0, 0};
        if (store_each_node_value(o->s, r->pk, names, 1, NULL, pick_node, &p,
                                  o->err))
            return -1; /* a bad metric name, a store error: in o->err */
        *v = p.v;
        return p.found;
    }
    if (!strcmp(o->metric, "duration_ms")) {
        *v = (double)r->duration_ms;
        return (r->set & MSET_DURATION_MS) != 0;
    }
    m = r->metrics_json ? cJSON_Parse(r->metrics_json) : NULL;
    it = cJSON_GetObjectItemCaseSensitive(m, o->metric);
    if (cJSON_IsNumber(it)) {
        *v = it->valuedouble;
        ok = 1;
    }
    cJSON_Delete(m);
    return ok;
}

/* The run's estimated_cost (kept with it when the analysis that recorded
 * it had rates, docs/costs.md) and its currency; 0 when it has none. */
static int run_cost(const store_run *r, double *cost, char *cur, size_t cap)
{
    cJSON *m = r->metrics_json ? cJSON_Parse(r->metrics_json) : NULL;
    cJSON *c, *it = cJSON_GetObjectItemCaseSensitive(m, "estimated_cost");
    int ok = cJSON_IsNumber(it);

    if (ok) {
        *cost = it->valuedouble;
        c = r->config_json ? cJSON_Parse(r->config_json) : NULL;
        it = cJSON_GetObjectItemCaseSensitive(c, "optipipe.currency");
        snprintf(cur, cap, "%s", cJSON_IsString(it) ? it->valuestring : "USD");
        cJSON_Delete(c);
    }
    cJSON_Delete(m);
    return ok;
}

/* metric: the key the caller writes after (NULL: none); the run's
 * estimated_cost is left to it when it is that key. */
static void run_json(jw *w, const store_run *r, const char *metric)
{
    char cur[64];
    double cost;

    jw_key(w, "id");
    jw_str(w, r->run_id);
    jw_key(w, "job");
    jw_str(w, r->job);
    jw_key(w, "source");
    jw_str(w, r->source);
    jw_key(w, "name");
    jw_str(w, r->name);
    jw_key(w, "status");
    jw_str(w, r->status);
    jw_key(w, "started_at");
    if (r->set & MSET_STARTED_AT) jw_int(w, r->started_at); else jw_null(w);
    jw_key(w, "duration_ms");
    if (r->set & MSET_DURATION_MS) jw_int(w, r->duration_ms); else jw_null(w);
    jw_key(w, "engine_version");
    jw_str(w, r->engine_version);
    jw_key(w, "origin");
    jw_str(w, r->origin);
    jw_key(w, "content_hash");
    jw_str(w, r->content_hash);
    jw_key(w, "nodes");
    jw_int(w, r->nnodes);
    jw_key(w, "findings");
    jw_int(w, r->nfindings);
    if (run_cost(r, &cost, cur, sizeof cur)) {
        if (!metric || strcmp(metric, "estimated_cost")) {
            jw_key(w, "estimated_cost");
            jw_num(w, cost);
        }
        jw_key(w, "currency");
        jw_str(w, cur);
    }
}

/* The start of a run for the chart's axis and table, else its id. */
static void trend_label(char *buf, const store_run *r)
{
    char when[32];

    if (r->set & MSET_STARTED_AT) {
        fmt_time(r->started_at, when, sizeof when);
        snprintf(buf, HIST_LABEL, "%.20s %.40s", when, r->run_id ? r->run_id : "");
    } else {
        snprintf(buf, HIST_LABEL, "%.60s", r->run_id ? r->run_id : "?");
    }
}

/* A metric in milliseconds, by the model's naming (docs/model.md). */
static int is_ms(const char *metric)
{
    size_t n = strlen(metric);
    return n >= 3 && !strcmp(metric + n - 3, "_ms");
}

/* The page of `history runs --format html`: the trend of the metric,
 * oldest to newest, charted from the values collected newest first. */
static int trend_page(out *o, const char *job)
{
    const char **labels = malloc((o->nvals ? o->nvals : 1) * sizeof *labels);
    double *v = malloc((o->nvals ? o->nvals : 1) * sizeof *v);
    hout h = {o->f, NULL, 0, 0};
    char title[STORE_JOB_KEY_MAX + STORE_METRIC_MAX + 8];
    size_t i;
    int rc = 0;

    if (!labels || !v) {
        rc = op_error_set(o->err, OP_ENOMEM, "history: out of memory");
        goto out;
    }
    for (i = 0; i < o->nvals; i++) {
        labels[i] = o->labels[o->nvals - 1 - i];
        v[i] = o->vals[o->nvals - 1 - i];
    }
    snprintf(title, sizeof title, "%s of %s", o->metric, job);
    html_page_open(o->f, title);
    fputs("<h1>", o->f);
    html_put(o->f, title);
    fprintf(o->f, "</h1>\n<p>%zu stored run%s, %zu with a value", o->n,
            o->n == 1 ? "" : "s", o->nvals);
    fputs(" (the run store: ", o->f);
    html_put(o->f, store_path(o->s));
    fputs(").</p>\n", o->f);
    html_trend_chart(&h, title, o->metric, labels, v, o->nvals,
                     is_ms(o->metric));
    html_page_close(o->f);
out:
    free(labels);
    free(v);
    return rc;
}

static int run_line(void *ud, const store_run *r)
{
    out *o = ud;
    char when[32];
    double v = 0;
    int has = run_metric(o, r, &v);

    if (has < 0)
        return OP_EUSAGE;
    o->n++;
    if (has && o->nvals < o->cap) {
        if (o->labels)
            trend_label(o->labels[o->nvals], r);
        o->vals[o->nvals++] = v;
    }
    if (o->html)
        return 0;
    if (o->json) {
        jw_obj(&o->w);
        run_json(&o->w, r, o->metric);
        jw_key(&o->w, o->metric);
        if (has) jw_num(&o->w, v); else jw_null(&o->w);
        jw_obj_end(&o->w);
        return 0;
    }
    fmt_time(r->started_at, when, sizeof when);
    fprintf(o->f, "%s  %-10s ", when, r->status ? r->status : "unknown");
    if (has)
        fprintf(o->f, strcmp(o->metric, "estimated_cost") ? "%14.0f  " : "%14.2f  ", v);
    else
        fprintf(o->f, "%14s  ", "-");
    report_term_put(o->f, r->run_id);
    {
        char cur[64], money[64];
        double cost;
        if (run_cost(r, &cost, cur, sizeof cur)) {
            fputs("  cost ", o->f);
            report_term_put(o->f, report_amount(money, sizeof money, cost, cur));
        }
    }
    fputc('\n', o->f);
    return 0;
}

/* ▁▂▃▄▅▆▇█ of vals (newest first), drawn oldest to newest. */
static void sparkline(FILE *f, const double *v, size_t n, int money)
{
    static const char *const bars[] = {"\xe2\x96\x81", "\xe2\x96\x82",
        "\xe2\x96\x83", "\xe2\x96\x84", "\xe2\x96\x85", "\xe2\x96\x86",
        "\xe2\x96\x87", "\xe2\x96\x88"};
    double lo = v[0], hi = v[0];
    size_t i;

    for (i = 1; i < n; i++) {
        lo = v[i] < lo ? v[i] : lo;
        hi = v[i] > hi ? v[i] : hi;
    }
    for (i = n; i-- > 0;) {
        int k = hi > lo ? (int)((v[i] - lo) / (hi - lo) * 7 + 0.5) : 3;
        fputs(bars[k < 0 ? 0 : k > 7 ? 7 : k], f);
    }
    fprintf(f, money ? "  min %.2f  max %.2f  (oldest to newest)\n"
                     : "  min %.0f  max %.0f  (oldest to newest)\n", lo, hi);
}

static int finding_line(void *ud, const store_finding *fi)
{
    out *o = ud;

    o->n++;
    if (o->json) {
        jw_obj(&o->w);
        jw_key(&o->w, "rule");
        jw_str(&o->w, fi->rule);
        jw_key(&o->w, "fingerprint");
        jw_str(&o->w, fi->fingerprint);
        jw_key(&o->w, "node");
        jw_str(&o->w, fi->node);
        jw_key(&o->w, "severity");
        jw_str(&o->w, fi->severity);
        jw_key(&o->w, "message");
        jw_str(&o->w, fi->message);
        jw_key(&o->w, "decision");
        jw_str(&o->w, fi->decision);
        jw_obj_end(&o->w);
        return 0;
    }
    char fp[9];

    fprintf(o->f, "  ");
    report_term_put(o->f, fi->severity ? fi->severity : "?");
    fputc(' ', o->f);
    report_term_put(o->f, fi->rule);
    fprintf(o->f, " [%s]", report_term_copy(fp, sizeof fp, fi->fingerprint));
    if (fi->decision) {
        fputc(' ', o->f);
        report_term_put(o->f, fi->decision);
    }
    fprintf(o->f, "\n    ");
    report_term_put(o->f, fi->message ? fi->message : "");
    fputc('\n', o->f);
    return 0;
}

/* A stored JSON column as the value of key (null when unreadable). */
static void json_text(jw *w, const char *key, const char *text)
{
    jw_key(w, key);
    jw_json_text(w, text);
}

static int show_run(void *ud, const store_run *r)
{
    out *o = ud;
    char when[32];

    o->n++;
    if (o->json) {
        jw_obj(&o->w);
        run_json(&o->w, r, NULL);
        json_text(&o->w, "config", r->config_json);
        json_text(&o->w, "metrics", r->metrics_json);
        jw_key(&o->w, "findings");
        jw_arr(&o->w);
        if (store_each_finding(o->s, r->pk, finding_line, o, o->err))
            return 1;
        jw_arr_end(&o->w);
        jw_obj_end(&o->w);
        return 1;
    }
    fmt_time(r->started_at, when, sizeof when);
    fprintf(o->f, "%s ", r->source);
    report_term_put(o->f, r->job);
    fprintf(o->f, " (");
    report_term_put(o->f, r->run_id);
    fprintf(o->f, ") - %s, started %s, %lld nodes, %lld findings\n",
            r->status ? r->status : "unknown", when, (long long)r->nnodes,
            (long long)r->nfindings);
    fprintf(o->f, "  from ");
    report_term_put(o->f, r->origin ? r->origin : "-");
    fprintf(o->f, ", content %s\n", r->content_hash ? r->content_hash : "-");
    if (store_each_finding(o->s, r->pk, finding_line, o, o->err))
        return 1;
    return 1; /* one run */
}

/* ---- commands ------------------------------------------------------------------ */

static int open_store(const cli_opts *h, config *cfg, int writable,
                      store **st)
{
    op_error err;
    const char *path;

    op_error_clear(&err);
    if (!h->session.no_config && !h->session.history &&
        config_find(h->session.config_path, cfg, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return EXIT_USAGE;
    }
    path = cli_history_path(h->session.history, cfg);
    if (!path)
        return cli_usage_error("%s", "no run store: give --history FILE, set "
                               "OPTIPIPE_HISTORY or `history` in optipipe.lua");
    if (store_open(path, writable, st, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return EXIT_NOINPUT;
    }
    return 0;
}

/* jobs, runs JOB or show RUN (arg) into o. */
static int run_cmd(const char *sub, const char *arg, const cli_opts *h,
                   store *st, out *o, op_error *err)
{
    int rc;

    if (!strcmp(sub, "jobs")) {
        if (o->json)
            jw_arr(&o->w);
        rc = store_each_job(st, job_line, o, err);
        if (o->json)
            jw_arr_end(&o->w);
        return rc;
    }
    if (!strcmp(sub, "notifications")) {
        if (o->json)
            jw_arr(&o->w);
        rc = store_each_notification(st, (int)h->limit, notification_line, o,
                                     err);
        if (o->json)
            jw_arr_end(&o->w);
        return rc;
    }
    if (!strcmp(sub, "runs")) {
        char key[STORE_JOB_KEY_MAX], near[STORE_JOB_KEY_MAX];
        if ((rc = store_find_job(st, arg, key, sizeof key, near, sizeof near,
                                 err)))
            return rc;
        if (strcmp(key, arg) && !h->session.quiet) /* the shown name: the key */
            diag_msg(DIAG_NOTE, "'%s' is the job %s (its key in the run "
                     "store)", arg, key);
        arg = key;
        if (o->json) {
            jw_obj(&o->w);
            jw_key(&o->w, "job");
            jw_str(&o->w, arg);
            jw_key(&o->w, "metric");
            jw_str(&o->w, h->metric);
            if (h->node) {
                jw_key(&o->w, "node");
                jw_str(&o->w, h->node);
            }
            jw_key(&o->w, "runs");
            jw_arr(&o->w);
        }
        rc = store_each_run(st, arg, NULL, NULL, 0, (int)h->limit, run_line,
                            o, err);
        if (o->json) {
            jw_arr_end(&o->w);
            jw_obj_end(&o->w);
        } else if (o->html) {
            rc = rc ? rc : trend_page(o, arg);
        } else if (!rc && o->nvals) {
            if (h->node) {
                report_term_put(o->f, h->node);
                fputc(' ', o->f);
            }
            fprintf(o->f, "%s: ", h->metric);
            sparkline(o->f, o->vals, o->nvals, !strcmp(o->metric, "estimated_cost"));
        }
        return rc;
    }
    rc = store_find_run(st, arg, show_run, o, err);
    return rc == 1 ? 0 : rc;
}

static int prune_cmd(const cli_opts *h, store *st)
{
    size_t removed;
    op_error err;
    int64_t cutoff = h->older_than_ms
                         ? (int64_t)time(NULL) * 1000 - h->older_than_ms : 0;

    op_error_clear(&err);
    if (store_prune(st, h->keep, cutoff, &removed, &err)) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        return EXIT_NOINPUT;
    }
    printf("removed %zu run%s from %s\n", removed, removed == 1 ? "" : "s",
           store_path(st));
    return EXIT_DONE;
}

/* A usage error about a history command: msg, and where its help is. */
static int usage(const char *msg, const char *cmd_name)
{
    diag_msg(DIAG_ERROR, "%s", msg);
    diag_line(DIAG_ERROR, "Try 'optipipe %s --help'.", cmd_name);
    return EXIT_USAGE;
}

/* What the table cannot say: how many words each form takes, prune's
 * one-of. Returns 0 or EXIT_USAGE after a message. */
static int check_args(const opt_cmd *cmd, const char *sub, const cli_opts *h)
{
    int one = !strcmp(sub, "runs") || !strcmp(sub, "show");
    char msg[300];

    if (one && h->session.ninputs != 1) {
        snprintf(msg, sizeof msg, "%s needs one %s", cmd->name,
                 cmd->operands.metavar);
        return usage(msg, cmd->name);
    }
    if (!one && h->session.ninputs) {
        snprintf(msg, sizeof msg, "%s takes no arguments ('%.200s')",
                 cmd->name, h->session.inputs[0]);
        return usage(msg, cmd->name);
    }
    if (!strcmp(sub, "prune") && !h->keep && !h->older_than)
        return usage("prune needs --keep N or --older-than AGE", cmd->name);
    return 0;
}

static void history_preset(cli_opts *h)
{
    h->metric = "duration_ms";
    h->limit = STORE_HISTORY_DEFAULT;
}

static int history(cli_opts *h, const opt_cmd *cmd)
{
    const char *sub = cmd->name + strlen("history "), *arg;
    config cfg;
    store *st = NULL;
    op_error err;
    out o;
    int code = EXIT_USAGE, prune;
    double vals[STORE_HISTORY_MAX];

    memset(&o, 0, sizeof o);
    if ((code = check_args(cmd, sub, h)))
        return code;
    arg = h->session.ninputs ? h->session.inputs[0] : NULL;
    prune = !strcmp(sub, "prune");
    config_init(&cfg);
    if ((code = open_store(h, &cfg, prune, &st)))
        goto done;
    if (prune) {
        code = prune_cmd(h, st);
        goto done;
    }
    op_error_clear(&err);
    if (!(o.f = cli_open_output(h))) {
        code = EXIT_USAGE;
        goto done;
    }
    o.json = !strcmp(h->format, "json");
    o.html = !strcmp(h->format, "html");
    if (o.html && !(o.labels = malloc(sizeof vals / sizeof vals[0] *
                                      sizeof *o.labels))) {
        diag_msg(DIAG_ERROR, "history: out of memory");
        code = EXIT_NOINPUT;
        goto done;
    }
    o.s = st;
    o.err = &err;
    o.metric = h->metric;
    o.node = h->node;
    o.vals = vals;
    o.cap = sizeof vals / sizeof vals[0];
    jw_init(&o.w, o.f, 1);
    if ((code = run_cmd(sub, arg, h, st, &o, &err))) {
        diag_msg(DIAG_ERROR, "%s", err.msg);
        code = code == OP_ENOTFOUND ? EXIT_USAGE : EXIT_NOINPUT;
        goto done;
    }
    if (o.json)
        fputc('\n', o.f);
    if (!o.n && !strcmp(sub, "show")) {
        diag_msg(DIAG_ERROR, "%s: no stored run '%s'", store_path(st), arg);
        code = EXIT_NOINPUT;
    } else if (!o.n && !h->session.quiet && !o.json && !o.html) {
        diag_msg(DIAG_NOTE, "%s: nothing stored%s%s", store_path(st),
                 arg ? " for " : "", arg ? arg : "");
    }
done:
    if (o.f && cli_close_output(h, o.f) && !code)
        code = EXIT_NOINPUT;
    free(o.labels);
    store_close(st);
    config_free(&cfg);
    return code;
}

/* Every history command: cmd is "history jobs|runs|show|prune|
 * notifications", argv the
 * words around its name (cli_dispatch took it out). */
int cli_run_history(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, history_preset, history);
}
