/*
 * serve_ui_report.c - the content of a finished analysis' page: the
 * summary and every finding of its report.json with the decision the run
 * store holds for it and an approve / dismiss form, the patches download
 * and the full HTML report (charts) in a sandboxed frame.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <optipipe/grow.h>

#include "report_html.h"
#include "report_util.h"
#include "serve_ui.h"
#include "store.h"
#include "util.h"

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* ---- decisions from the store ---------------------------------------------- */

typedef struct dread {
    ui_decisions *out;
    const char *fp;
    op_error *err;
} dread;

static int add_decision(void *ud, const store_decision *sd)
{
    dread *dr = ud;
    ui_decisions *d = dr->out;
    ui_decision *e;
    int oom = 0;

    if (OP_GROW(d->d, d->cap, d->n + 1, 16))
        return op_error_set(dr->err, OP_ENOMEM, "out of memory");
    e = &d->d[d->n++];
    memcpy(e->fp, dr->fp, UI_FP_LEN + 1);
    e->status = util_strdup(sd->status, &oom);
    e->comment = util_strdup(sd->comment, &oom);
    return oom ? op_error_set(dr->err, OP_ENOMEM, "out of memory") : 0;
}

int ui_decisions_read(const char *path, const cJSON *report, ui_decisions *out,
                      op_error *err)
{
    const cJSON *f;
    dread dr = {out, NULL, err};
    store *st = NULL;
    int rc = 0;

    memset(out, 0, sizeof *out);
    if (!store_uri_is_pg(path) && access(path, F_OK))
        return 0; /* nothing recorded yet */
    if ((rc = store_open(path, 0, &st, err)))
        return rc;
    cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(report, "findings")) {
        dr.fp = jstr(f, "fingerprint");
        if (!ui_is_hex(dr.fp, UI_FP_LEN) || ui_decision_find(out, dr.fp))
            continue;
        if ((rc = store_each_decision(st, dr.fp, add_decision, &dr, err)))
            break;
    }
    store_close(st);
    return rc;
}

const ui_decision *ui_decision_find(const ui_decisions *d, const char *fp)
{
    size_t i;

    for (i = 0; fp && i < d->n; i++)
        if (!strcmp(d->d[i].fp, fp))
            return &d->d[i];
    return NULL;
}

void ui_decisions_free(ui_decisions *d)
{
    size_t i;

    for (i = 0; i < d->n; i++) {
        free(d->d[i].status);
        free(d->d[i].comment);
    }
    free(d->d);
    memset(d, 0, sizeof *d);
}

/* ---- the page ---------------------------------------------------------------- */

static void tile(FILE *f, const char *label, size_t n, const char *cls)
{
    fprintf(f, "<div class=\"tile\"><b>%zu</b>", n);
    if (cls)
        fprintf(f, "<span class=\"sev sev-%s\">", cls);
    fputs(label, f);
    fputs(cls ? "</span></div>\n" : "</div>\n", f);
}

static const char *state_of(const ui_decisions *d, const char *fp)
{
    const ui_decision *e = ui_decision_find(d, fp);
    return e && e->status ? e->status : "open";
}

static void put_tiles(FILE *f, const cJSON *findings, const ui_decisions *d)
{
    static const char *const sev[] = {"error", "warning", "info"};
    static const char *const st[] = {"open", "approved", "dismissed"};
    size_t ns[3] = {0}, nd[3] = {0}, i;
    const cJSON *e;

    cJSON_ArrayForEach(e, findings) {
        const char *s = jstr(e, "severity"), *dec = state_of(d, jstr(e, "fingerprint"));
        for (i = 0; i < 3; i++) {
            ns[i] += s && !strcmp(s, sev[i]);
            nd[i] += !strcmp(dec, st[i]);
        }
    }
    fputs("<div class=\"tiles\">\n", f);
    tile(f, "findings", (size_t)cJSON_GetArraySize(findings), NULL);
    for (i = 0; i < 3; i++)
        tile(f, sev[i], ns[i], sev[i]);
    for (i = 0; i < 3; i++)
        tile(f, st[i], nd[i], NULL);
    fputs("</div>\n", f);
}

static void put_runs(FILE *f, const cJSON *runs)
{
    const cJSON *r;
    char d[48];

    fputs("<table class=\"runs\"><thead><tr><th scope=\"col\">source</th>"
          "<th scope=\"col\">run</th><th scope=\"col\">status</th>"
          "<th scope=\"col\">duration</th></tr></thead><tbody>\n", f);
    cJSON_ArrayForEach(r, runs) {
        const cJSON *dur = cJSON_GetObjectItemCaseSensitive(r, "duration_ms");
        const char *id = jstr(r, "id"), *name = jstr(r, "name");
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "superseded")))
            continue;
        fputs("<tr><td>", f);
        html_put(f, jstr(r, "source"));
        fputs("</td><td>", f);
        if (ui_is_ref(id)) {
            fputs("<a href=\"/runs/", f);
            ui_put_url(f, id);
            fputs("\">", f);
        }
        html_put(f, name ? name : id);
        fputs(ui_is_ref(id) ? "</a>" : "", f);
        fputs("</td><td>", f);
        html_put(f, jstr(r, "status") ? jstr(r, "status") : "unknown");
        fprintf(f, "</td><td class=\"num\">%s</td></tr>\n", cJSON_IsNumber(dur)
                ? report_fmt_duration(d, sizeof d, dur->valuedouble) : "");
    }
    fputs("</tbody></table>\n", f);
}

/* The runs a page shows (those not superseded by a later part). */
static int shown_runs(const cJSON *runs)
{
    const cJSON *r;
    int n = 0;

    cJSON_ArrayForEach(r, runs)
        n += !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "superseded"));
    return n;
}

/* The name of the run of report.json whose source and id are these (NULL
 * when none has a name). */
static const char *run_name(const cJSON *runs, const char *source, const char *id)
{
    const cJSON *r;

    cJSON_ArrayForEach(r, runs) {
        const char *s = jstr(r, "source"), *i = jstr(r, "id");
        if (s && i && source && id && !strcmp(s, source) && !strcmp(i, id))
            return jstr(r, "name");
    }
    return NULL;
}

static void put_findings(FILE *f, const srv_req *r, const char *id,
                         const cJSON *findings, const cJSON *runs,
                         const ui_decisions *d)
{
    char action[64];
    const cJSON *e;
    int several = shown_runs(runs) > 1;

    snprintf(action, sizeof action, "/analyses/%s/decisions", id);
    fputs("<section aria-label=\"Findings\">\n<h2>Findings</h2>\n", f);
    if (!cJSON_GetArraySize(findings))
        fputs("<p>No findings.</p>\n", f);
    cJSON_ArrayForEach(e, findings) {
        const ui_decision *dec = ui_decision_find(d, jstr(e, "fingerprint"));
        ui_finding fi = {
            jstr(e, "rule"), jstr(e, "severity"), jstr(e, "fingerprint"),
            jstr(e, "node_name") ? jstr(e, "node_name") : jstr(e, "node"),
            jstr(e, "title"), jstr(e, "message"), jstr(e, "recommendation"),
            cJSON_GetObjectItemCaseSensitive(e, "changes"),
            cJSON_GetObjectItemCaseSensitive(e, "evidence"),
            dec ? dec->status : NULL, dec ? dec->comment : NULL, NULL, NULL};
        if (several) { /* a finding across runs has no "run" */
            fi.run_id = jstr(e, "run");
            fi.run_name = fi.run_id ? run_name(runs, jstr(e, "source"), fi.run_id)
                                    : "across runs";
        }
        ui_put_finding(f, r, &fi, action);
    }
    fputs("</section>\n", f);
}

/* Rule errors and input warnings, when there are any. */
static void put_problems(FILE *f, const cJSON *report)
{
    const cJSON *errs = cJSON_GetObjectItemCaseSensitive(report, "rule_errors"), *e, *w;
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(report, "inputs"), *in;
    int any = 0;

    if (cJSON_GetArraySize(errs)) {
        fputs("<section><h2>Rule errors</h2>\n<ul>\n", f);
        cJSON_ArrayForEach(e, errs) {
            fputs("<li><code>", f);
            html_put(f, jstr(e, "rule"));
            fputs("</code>: ", f);
            html_put(f, jstr(e, "error"));
            fputs("</li>\n", f);
        }
        fputs("</ul></section>\n", f);
    }
    cJSON_ArrayForEach(in, inputs)
        cJSON_ArrayForEach(w, cJSON_GetObjectItemCaseSensitive(in, "warnings")) {
            if (!cJSON_IsString(w))
                continue;
            if (!any++)
                fputs("<section><h2>Input warnings</h2>\n<ul>\n", f);
            fputs("<li>", f);
            html_put(f, jstr(in, "path"));
            fputs(": ", f);
            html_put(f, w->valuestring);
            fputs("</li>\n", f);
        }
    if (any)
        fputs("</ul></section>\n", f);
}

int ui_report_body(FILE *f, const srv_req *r, const char *id,
                   const cJSON *report, const ui_decisions *d)
{
    const cJSON *findings = cJSON_GetObjectItemCaseSensitive(report, "findings");
    const cJSON *runs = cJSON_GetObjectItemCaseSensitive(report, "runs");
    const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(report, "inputs");

    fprintf(f, "<header>\n<h1>Analysis <code>%s</code></h1>\n<p class=\"meta\">%d "
            "input%s, %d run%s, opti-pipe ", id, cJSON_GetArraySize(inputs),
            cJSON_GetArraySize(inputs) == 1 ? "" : "s", cJSON_GetArraySize(runs),
            cJSON_GetArraySize(runs) == 1 ? "" : "s");
    html_put(f, jstr(report, "optipipe_version"));
    fputs("</p>\n</header>\n", f);
    put_tiles(f, findings, d);
    fprintf(f, "<p class=\"actions\"><a class=\"button\" href=\"/analyses/%s/patches?format=text\" "
            "download>Download the config patches of the approved changes</a> "
            "<a href=\"/api/v1/analyses/%s\">JSON</a> "
            "<a href=\"/analyses/%s/report.html\">Full report</a></p>\n", id, id, id);
    put_runs(f, runs);
    put_findings(f, r, id, findings, runs, d);
    put_problems(f, report);
    fprintf(f, "<section aria-label=\"Report\">\n<h2>Report and charts</h2>\n"
            "<iframe class=\"report\" sandbox src=\"/analyses/%s/report.html\" "
            "title=\"The HTML report of this analysis\"></iframe>\n</section>\n", id);
    return ferror(f) ? OP_EIO : 0;
}
