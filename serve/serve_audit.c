/*
 * serve_audit.c - who decided what (docs/serve.md "Who decided: the audit
 * trail"): a finding's page, /findings/{fp}, with its decision and every
 * change of it newest first (the run store's decision_log: people's
 * decisions, decisions files' and their conflicts), and the same as JSON
 * at GET /api/v1/findings/{fp}/history.
 */
#include <string.h>
#include <unistd.h>

#include "jsonw.h"
#include "report_html.h"
#include "serve_ui.h"
#include "store.h"

/* Changes shown or listed, newest first; older ones stay in the store. */
#define AUDIT_MAX 500
/* What a callback returns to stop at the first row (no op_status is < 0). */
#define AUDIT_STOP (-1)

/* The store read-only; *st NULL (and 0) when nothing was recorded yet, 1
 * when the answer (500) is in w. */
static int open_read(const srv_req *r, srv_resp *w, store **st)
{
    op_error err;

    *st = NULL;
    op_error_clear(&err);
    if (access(r->s->store_path, F_OK))
        return 0;
    if (store_open(r->s->store_path, 0, st, &err)) {
        srv_fail(r, w, 500, "run store: %s", err.msg);
        return 1;
    }
    return 0;
}

/* The fingerprint of the route, or 1 after a 400 in w. */
static int fp_of(const srv_req *r, srv_resp *w, const char **fp)
{
    *fp = r->nparam ? r->param[0] : NULL;
    if (!ui_is_hex(*fp, UI_FP_LEN))
        return srv_fail(r, w, 400, "a fingerprint is 16 lowercase hex digits"), 1;
    return 0;
}

/* ---- GET /api/v1/findings/{fp}/history ----------------------------------------- */

static void put_str(jw *j, const char *k, const char *v)
{
    jw_key(j, k);
    jw_str(j, v);
}

static int current_json(void *ud, const store_decision *d)
{
    jw *j = ud;

    jw_obj(j);
    put_str(j, "status", d->status);
    put_str(j, "comment", d->comment);
    put_str(j, "decided_at", d->decided_at);
    put_str(j, "decided_by", d->decided_by);
    put_str(j, "rule", d->rule);
    put_str(j, "job", d->job);
    put_str(j, "run", d->run_id);
    put_str(j, "node", d->node);
    jw_obj_end(j);
    return AUDIT_STOP; /* the fingerprint's own, first */
}

static void side(jw *j, const char *k, const char *status, const char *comment)
{
    jw_key(j, k);
    jw_obj(j);
    put_str(j, "status", status);
    put_str(j, "comment", comment);
    jw_obj_end(j);
}

static int change_json(void *ud, const store_decision_change *c)
{
    jw *j = ud;

    jw_obj(j);
    jw_key(j, "seq");
    jw_int(j, c->seq);
    put_str(j, "changed_at", c->changed_at);
    put_str(j, "changed_by", c->changed_by);
    put_str(j, "kind", c->kind);
    side(j, "from", c->old_status, c->old_comment);
    side(j, "to", c->new_status, c->new_comment);
    put_str(j, "detail", c->detail);
    jw_obj_end(j);
    return 0;
}

int srv_api_finding_history(const srv_req *r, srv_resp *w)
{
    const char *fp;
    store *st = NULL;
    op_error err;
    int rc = 0;
    jw j;

    if (fp_of(r, w, &fp) || open_read(r, w, &st))
        return 0;
    op_error_clear(&err);
    w->status = 200;
    w->type = "application/json";
    jw_init(&j, w->f, 1);
    jw_obj(&j);
    put_str(&j, "fingerprint", fp);
    jw_key(&j, "decision");
    if (!st || (rc = store_each_decision(st, fp, current_json, &j, &err)) == 0)
        jw_null(&j);
    jw_key(&j, "history");
    jw_arr(&j);
    if (st && rc <= 0)
        rc = store_each_decision_change(st, fp, AUDIT_MAX, change_json, &j, &err);
    jw_arr_end(&j);
    jw_obj_end(&j);
    fputc('\n', w->f);
    store_close(st);
    if (rc > 0)
        return srv_fail(r, w, 500, "run store: %s", err.msg);
    return 0;
}

/* ---- /findings/{fp} ---------------------------------------------------------------- */

typedef struct page {
    FILE *f;
    size_t n;
} page;

static void put_state(FILE *f, const char *status, const char *comment)
{
    fprintf(f, "<span class=\"state state-%s\">",
            status && (!strcmp(status, "approved") || !strcmp(status, "dismissed"))
                ? status : "open");
    html_put(f, status ? status : "open");
    fputs("</span>", f);
    if (comment && *comment) {
        fputs(" &ldquo;", f);
        html_put(f, comment);
        fputs("&rdquo;", f);
    }
}

static int current_html(void *ud, const store_decision *d)
{
    page *p = ud;
    FILE *f = p->f;

    fputs("<p>Decision: ", f);
    put_state(f, d->status, d->comment);
    fputs(" by <b>", f);
    html_put(f, d->decided_by ? d->decided_by : "a decisions file");
    fputs("</b> at ", f);
    html_put(f, d->decided_at);
    fputs("</p>\n<p class=\"meta\">Rule <code>", f);
    html_put(f, d->rule);
    fputs("</code>", f);
    if (d->job) {
        fputs(", job <a href=\"/jobs/", f);
        ui_put_url(f, d->job);
        fputs("\">", f);
        html_put(f, d->job);
        fputs("</a>", f);
    }
    if (d->run_id && ui_is_ref(d->run_id)) {
        fputs(", newest run <a href=\"/runs/", f);
        ui_put_url(f, d->run_id);
        fputs("\">", f);
        html_put(f, d->run_id);
        fputs("</a>", f);
    }
    fputs("</p>\n", f);
    p->n++;
    return AUDIT_STOP;
}

static const char *kind_text(const char *kind)
{
    return !strcmp(kind, "decided")    ? "decided"
           : !strcmp(kind, "file")     ? "from a decisions file"
           : !strcmp(kind, "conflict") ? "conflict"
                                       : kind;
}

static int change_html(void *ud, const store_decision_change *c)
{
    page *p = ud;
    FILE *f = p->f;
    int conflict = !strcmp(c->kind, "conflict");

    if (!p->n++)
        fputs("<table class=\"trail\"><thead><tr><th scope=\"col\">when</th>"
              "<th scope=\"col\">who</th><th scope=\"col\">what</th>"
              "<th scope=\"col\">change</th></tr></thead><tbody>\n", f);
    fprintf(f, "<tr class=\"%s\"><td>", conflict ? "conflict" : "change");
    html_put(f, c->changed_at);
    fputs("</td><td>", f);
    html_put(f, c->changed_by ? c->changed_by
                : conflict    ? "-" : "a decisions file");
    fputs("</td><td>", f);
    html_put(f, kind_text(c->kind));
    fputs("</td><td>", f);
    if (conflict) {
        /* old: the stored decision kept; new: the file's, not applied */
        fputs("the file ", f);
        html_put(f, c->detail ? c->detail : "");
        fputs(" said ", f);
        put_state(f, c->new_status, c->new_comment);
        fputs("; not applied: the run store's newer ", f);
        put_state(f, c->old_status, c->old_comment);
        fputs(" stays", f);
    } else {
        put_state(f, c->old_status, c->old_comment);
        fputs(" &rarr; ", f);
        put_state(f, c->new_status, c->new_comment);
    }
    fputs("</td></tr>\n", f);
    return 0;
}

int srv_page_finding(const srv_req *r, srv_resp *w)
{
    const char *fp;
    store *st = NULL;
    op_error err;
    page p;
    int rc = 0;
    FILE *f = w->f;

    if (fp_of(r, w, &fp) || open_read(r, w, &st))
        return 0;
    op_error_clear(&err);
    ui_open(r, w, "Finding", NULL);
    f = w->f;
    p.f = f;
    p.n = 0;
    fprintf(f, "<header>\n<h1>Finding <code>%s</code></h1>\n</header>\n", fp);
    if (st && (rc = store_each_decision(st, fp, current_html, &p, &err)) > 0)
        goto out;
    if (!p.n)
        fputs("<p>Decision: <span class=\"state state-open\">open</span> (no "
              "decision)</p>\n", f);
    fputs("<section aria-label=\"Decision history\">\n<h2>Decision history</h2>\n", f);
    p.n = 0;
    if (st && (rc = store_each_decision_change(st, fp, AUDIT_MAX, change_html,
                                               &p, &err)) != 0)
        goto out;
    fputs(p.n ? "</tbody></table>\n" : "<p>No decision was ever made.</p>\n", f);
    if (p.n >= AUDIT_MAX)
        fprintf(f, "<p class=\"meta\">The newest %d changes; the run store "
                "keeps every one.</p>\n", AUDIT_MAX);
    fputs("</section>\n", f);
    ui_close(w);
out:
    store_close(st);
    if (rc > 0)
        return srv_fail(r, w, 500, "run store: %s", err.msg);
    return 0;
}
