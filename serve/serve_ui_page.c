/*
 * serve_ui_page.c - the frame of every HTML page of `optipipe serve` and
 * what the pages share (serve_ui.h): validation, URL and time output, one
 * finding with its approve / dismiss form.
 */
#include <string.h>

#include "report_html.h"
#include "serve_ui.h"
#include "utf8.h"

static const char *const nav_items[][3] = {
    {"upload", "/", "Upload"},
    {"analyses", "/analyses", "Analyses"},
    {"jobs", "/jobs", "Jobs"},
};

/* Who is signed in (a user's name and role, or a session of a
 * --token-file token), with the sign-out button; nothing without
 * sign-in. */
static void put_who(const srv_req *r, FILE *f)
{
    if (r->auth == SRV_AUTH_NONE || r->auth == SRV_AUTH_TOKEN)
        return;
    fputs(" <span class=\"who\">Signed in as <b>", f);
    html_put(f, r->user ? r->user : "a token's session");
    fprintf(f, "</b> (%s)", srv_role_name(r->role));
    if (r->auth == SRV_AUTH_COOKIE) {
        fputs(" <form class=\"inline\" method=\"post\" action=\"/logout\">", f);
        srv_csrf_input(r, f);
        fputs("<button type=\"submit\">Sign out</button></form>", f);
    }
    fputs("</span>", f);
}

void ui_open(const srv_req *r, srv_resp *w, const char *title,
             const char *nav)
{
    const char *tok = srv_csrf_token(r);
    FILE *f = w->f;
    size_t i;

    w->status = 200;
    w->type = "text/html; charset=utf-8";
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"csrf-token\" content=\"", f);
    html_put(f, tok ? tok : "");
    fputs("\">\n<title>", f);
    html_put(f, title);
    fputs(" - opti-pipe</title>\n<link rel=\"icon\" href=\"/favicon.ico\" type=\"image/svg+xml\">\n"
          "<link rel=\"stylesheet\" href=\"/static/app.css\">\n"
          "<script src=\"/static/app.js\" defer></script>\n</head>\n<body class=\"ui\">\n"
          "<nav class=\"top\" aria-label=\"Pages\"><b>opti-pipe</b>", f);
    for (i = 0; i < sizeof nav_items / sizeof *nav_items; i++)
        fprintf(f, " <a href=\"%s\"%s>%s</a>", nav_items[i][1],
                nav && !strcmp(nav, nav_items[i][0]) ? " aria-current=\"page\"" : "",
                nav_items[i][2]);
    put_who(r, f);
    fputs("</nav>\n<main>\n", f);
}

void ui_close(srv_resp *w)
{
    fprintf(w->f, "<footer>opti-pipe %s</footer>\n</main>\n</body>\n</html>\n",
            OP_VERSION);
}

int ui_is_hex(const char *s, size_t n)
{
    size_t i;

    if (!s || strlen(s) != n)
        return 0;
    for (i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return 0;
    return 1;
}

int ui_is_ref(const char *s)
{
    const char *p = s;
    uint32_t cp;
    size_t k;
    int bad = 0;

    if (!s || !*s || strlen(s) > SRV_SEGMENT_MAX)
        return 0;
    while ((k = utf8_next(p, &cp, &bad)))
        if (bad || utf8_is_control(cp))
            return 0;
        else
            p += k;
    return 1;
}

void ui_put_url(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");

    for (; *p; p++)
        if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
            (*p >= '0' && *p <= '9') || strchr("._~-", *p))
            fputc(*p, f);
        else
            fprintf(f, "%%%02X", *p);
}

const char *ui_time_text(char *buf, size_t n, int64_t ms)
{
    return report_fmt_time(buf, n, ms);
}

void ui_put_time(FILE *f, int64_t ms)
{
    char buf[40];

    fputs(ui_time_text(buf, sizeof buf, ms), f);
}

/* The CSS class of a severity: only the three known names reach it. */
static const char *sev_class(const char *sev)
{
    return sev && (!strcmp(sev, "error") || !strcmp(sev, "warning")) ? sev : "info";
}

/* The class of a decision state; anything else reads as open. */
static const char *state_class(const char *d)
{
    return d && (!strcmp(d, "approved") || !strcmp(d, "dismissed")) ? d : "open";
}

static void put_form(FILE *out, const srv_req *r, const ui_finding *f,
                     const char *action, const char *state)
{
    fputs("<form method=\"post\" class=\"decide\" action=\"", out);
    html_put(out, action);
    fputs("\">\n", out);
    srv_csrf_input(r, out);
    fprintf(out, "<input type=\"hidden\" name=\"fingerprint\" value=\"%s\">\n"
            "<label>Comment <input type=\"text\" name=\"comment\" maxlength=\"%u\" "
            "autocomplete=\"off\"></label>\n", f->fingerprint, UI_COMMENT_MAX);
    if (strcmp(state, "approved"))
        fputs("<button type=\"submit\" name=\"status\" value=\"approved\" "
              "class=\"approve\">Approve</button>\n", out);
    if (strcmp(state, "dismissed"))
        fputs("<button type=\"submit\" name=\"status\" value=\"dismissed\" "
              "class=\"dismiss\">Dismiss</button>\n", out);
    if (strcmp(state, "open"))
        fputs("<button type=\"submit\" name=\"status\" value=\"open\" "
              "class=\"reopen\">Reopen</button>\n", out);
    fputs("</form>\n", out);
}

/* The link to the finding's decision history (serve_audit.c): who
 * decided, when, every change. */
static void put_decided(FILE *out, const ui_finding *f, int fp_ok)
{
    if (fp_ok)
        fprintf(out, "<p class=\"meta decided\"><a href=\"/findings/%s\">"
                "Decision history</a></p>\n", f->fingerprint);
}

void ui_put_finding(FILE *out, const srv_req *r, const ui_finding *f,
                    const char *action)
{
    const char *sev = sev_class(f->severity), *state = state_class(f->decision);
    int fp_ok = ui_is_hex(f->fingerprint, UI_FP_LEN);

    fprintf(out, "<article class=\"finding %s\"", sev);
    if (fp_ok)
        fprintf(out, " id=\"f-%s\" data-fingerprint=\"%s\"", f->fingerprint,
                f->fingerprint);
    fprintf(out, ">\n<h4><span class=\"sev sev-%s\">", sev);
    html_put(out, f->severity ? f->severity : "info");
    fputs("</span> <code>", out);
    html_put(out, f->rule);
    fputs("</code>", out);
    if (f->node) {
        fputs(" <span class=\"node\">on ", out);
        html_put(out, f->node);
        fputs("</span>", out);
    }
    if (f->run_id || f->run_name) {
        int link = ui_is_ref(f->run_id);
        fputs(" <span class=\"run\">in ", out);
        if (link) {
            fputs("<a href=\"/runs/", out);
            ui_put_url(out, f->run_id);
            fputs("\">", out);
        }
        html_put(out, f->run_name ? f->run_name : f->run_id);
        fputs(link ? "</a></span>" : "</span>", out);
    }
    fprintf(out, " <span class=\"state state-%s\">%s</span></h4>\n", state, state);
    if (f->title) {
        fputs("<p class=\"meta\">", out);
        html_put(out, f->title);
        fputs("</p>\n", out);
    }
    fputs("<p class=\"msg\">", out);
    html_put(out, f->message);
    fputs("</p>\n", out);
    if (f->recommendation) {
        fputs("<p class=\"rec\"><strong>Recommendation:</strong> ", out);
        html_put(out, f->recommendation);
        fputs("</p>\n", out);
    }
    html_put_changes(out, f->changes);
    html_put_evidence(out, f->evidence);
    if (f->comment && *f->comment) {
        fputs("<p class=\"comment\"><strong>Comment:</strong> ", out);
        html_put(out, f->comment);
        fputs("</p>\n", out);
    }
    put_decided(out, f, fp_ok);
    if (action && fp_ok && r->auth != SRV_AUTH_NONE && r->role < SRV_ROLE_DECIDE)
        fprintf(out, "<p class=\"meta\">Your role (%s) may not decide.</p>\n",
                srv_role_name(r->role));
    else if (action && fp_ok)
        put_form(out, r, f, action, state);
    fputs("</article>\n", out);
}
