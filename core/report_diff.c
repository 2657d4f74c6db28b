/*
 * report_diff.c - the output of `optipipe diff` (docs/cli.md#diff): the
 * object diff_runs() made, as text, json, markdown or html. Every string
 * from an input goes through the escaping of its format (terminal control
 * characters removed, Markdown code spans, HTML escaping).
 */
#include <math.h>
#include <string.h>

#include "diff.h"
#include "fmt.h"
#include "jsonw.h"
#include "report_html.h"
#include "report_util.h"

static const char *const formats[] = {"text", "json", "markdown", "html"};

const char *diff_format_name(size_t i)
{
    return i < sizeof formats / sizeof *formats ? formats[i] : NULL;
}

/* ---- values ------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* A metric value as people read it: durations for *_ms, sizes for
 * *_bytes, else the number; "-" when absent. */
static const char *metric_text(char *buf, size_t n, const char *key,
                               const cJSON *v)
{
    if (!cJSON_IsNumber(v))
        snprintf(buf, n, "-");
    else if (ends_with(key, "_ms"))
        report_fmt_duration(buf, n, v->valuedouble);
    else if (ends_with(key, "_bytes"))
        report_fmt_bytes(buf, n, v->valuedouble);
    else
        fmt_number(buf, n, v->valuedouble);
    return buf;
}

/* "+12.5 s" / "-3" for a delta, "" when absent. */
static const char *delta_text(char *buf, size_t n, const char *key,
                              const cJSON *v)
{
    char num[64];
    cJSON abs;

    if (!cJSON_IsNumber(v)) {
        snprintf(buf, n, "%s", "");
        return buf;
    }
    memset(&abs, 0, sizeof abs);
    abs.type = cJSON_Number;
    abs.valuedouble = fabs(v->valuedouble);
    metric_text(num, sizeof num, key, &abs);
    snprintf(buf, n, "%s%s", v->valuedouble < 0 ? "-" : "+", num);
    return buf;
}

static const char *ratio_text(char *buf, size_t n, const cJSON *v)
{
    if (cJSON_IsNumber(v))
        fmt_ratio(buf, n, v->valuedouble);
    else
        snprintf(buf, n, "%s", "");
    return buf;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(o, key);
}

static const char *gets(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* One row of any of the tables: its cells as display strings. */
typedef struct row {
    char c[6][256];
} row;

static void config_row(row *r, const cJSON *e)
{
    const char *ch = gets(e, "change");

    snprintf(r->c[0], sizeof r->c[0], "%s", ch ? ch : "");
    snprintf(r->c[1], sizeof r->c[1], "%s", gets(e, "key") ? gets(e, "key") : "");
    report_fmt_value(r->c[2], sizeof r->c[2], get(e, "a"));
    report_fmt_value(r->c[3], sizeof r->c[3], get(e, "b"));
}

/* name, a, b, delta, ratio (and share for nodes) of a numeric entry. */
static void pair_row(row *r, const cJSON *e, const char *name, const char *unit)
{
    snprintf(r->c[0], sizeof r->c[0], "%s", name ? name : "");
    metric_text(r->c[1], sizeof r->c[1], unit, get(e, "a"));
    metric_text(r->c[2], sizeof r->c[2], unit, get(e, "b"));
    delta_text(r->c[3], sizeof r->c[3], unit, get(e, "delta"));
    ratio_text(r->c[4], sizeof r->c[4], get(e, "ratio"));
    if (cJSON_IsNumber(get(e, "share")))
        fmt_percent(r->c[5], sizeof r->c[5],
                    fabs(get(e, "share")->valuedouble) < 0.005 ? 0.0
                    : get(e, "share")->valuedouble, 0);
    else
        r->c[5][0] = 0;
}

/* "parallelism 4 -> 32" of a node entry, "" when it has none or the
 * same on both sides. */
static void par_text(char *buf, size_t n, const cJSON *e)
{
    const cJSON *p = get(e, "parallelism");
    char a[32], b[32];

    buf[0] = 0;
    if (p && !cJSON_Compare(get(p, "a"), get(p, "b"), 1)) {
        metric_text(a, sizeof a, "", get(p, "a"));
        metric_text(b, sizeof b, "", get(p, "b"));
        snprintf(buf, n, "parallelism %s -> %s", a, b);
    }
}

static void node_name(char *buf, size_t n, const cJSON *e)
{
    const char *ch = gets(e, "change");

    snprintf(buf, n, "%s%s", gets(e, "key") ? gets(e, "key") : "",
             ch && strcmp(ch, "matched") ? (!strcmp(ch, "added") ? " (only in B)"
                                                                 : " (only in A)")
                                         : "");
}

static void side_line(char *buf, size_t n, const cJSON *s)
{
    char d[48];
    const cJSON *dur = get(s, "duration_ms");

    snprintf(buf, n, "%s %s (%s), %s, %s", gets(s, "source") ? gets(s, "source") : "?",
             gets(s, "job") ? gets(s, "job") : "?", gets(s, "id") ? gets(s, "id") : "?",
             gets(s, "status") ? gets(s, "status") : "unknown",
             cJSON_IsNumber(dur) ? report_fmt_duration(d, sizeof d, dur->valuedouble)
                                 : "no duration");
}

static size_t count_change(const cJSON *cfg, const char *what)
{
    const cJSON *e;
    size_t n = 0;

    cJSON_ArrayForEach(e, cfg) {
        const char *c = gets(e, "change");
        n += c && !strcmp(c, what);
    }
    return n;
}

/* ", 2 ignored (--ignore-key)" when keys that differ were left out. */
static const char *ignored_text(char *buf, size_t n, const cJSON *d)
{
    const cJSON *v = get(d, "config_ignored");

    if (cJSON_IsNumber(v) && v->valuedouble > 0)
        snprintf(buf, n, ", %.0f ignored (--ignore-key)", v->valuedouble);
    else
        snprintf(buf, n, "%s", "");
    return buf;
}

static void engine_line(char *buf, size_t n, const cJSON *ev)
{
    char a[128], b[128];

    report_fmt_value(a, sizeof a, get(ev, "a"));
    report_fmt_value(b, sizeof b, get(ev, "b"));
    if (cJSON_IsTrue(get(ev, "changed")))
        snprintf(buf, n, "%s -> %s", a, b);
    else
        snprintf(buf, n, "%s (same)", a);
}

static void nodes_heading(char *buf, size_t n, const cJSON *d)
{
    const cJSON *c = get(d, "node_counts");
    double v[5];
    const char *k[] = {"a", "b", "matched", "added", "removed"};
    size_t i;

    for (i = 0; i < 5; i++)
        v[i] = cJSON_IsNumber(get(c, k[i])) ? get(c, k[i])->valuedouble : 0;
    snprintf(buf, n, "%d listed; A has %.0f, B %.0f: %.0f matched, %.0f only in B, "
             "%.0f only in A", cJSON_GetArraySize(get(d, "nodes")), v[0], v[1],
             v[2], v[3], v[4]);
}


/* ---- findings (diff_findings.c) ------------------------------------------------ */

/* "2 new, 1 resolved, 3 changed, 4 unchanged (A has 6, B 9)" and the
 * rules that failed on a side ("; incomplete, rules failed: B x.y
 * (timeout)"), or why there is nothing to say. */
static void findings_heading(char *buf, size_t n, const cJSON *fs)
{
    double v[2];
    const char *k[] = {"a", "b"};
    size_t i, len;
    int first = 1;

    if (!cJSON_IsObject(fs)) {
        snprintf(buf, n, "not compared (a side carries no findings)");
        return;
    }
    for (i = 0; i < 2; i++)
        v[i] = cJSON_IsNumber(get(fs, k[i])) ? get(fs, k[i])->valuedouble : 0;
    len = (size_t)snprintf(buf, n, "%d new, %d resolved, %d changed, %.0f unchanged "
             "(A has %.0f, B %.0f)", cJSON_GetArraySize(get(fs, "new")),
             cJSON_GetArraySize(get(fs, "resolved")),
             cJSON_GetArraySize(get(fs, "changed")),
             cJSON_IsNumber(get(fs, "unchanged")) ? get(fs, "unchanged")->valuedouble
                                                   : 0, v[0], v[1]);
    for (i = 0; i < 2; i++) {
        const cJSON *e;
        cJSON_ArrayForEach(e, get(get(fs, "rule_errors"), k[i])) {
            if (len >= n)
                return;
            const char *why = gets(e, "error") ? gets(e, "error") : "?";
            len += (size_t)snprintf(buf + len, n - len, "%s%s %s (%.*s)",
                                    first ? "; incomplete, rules failed: " : ", ",
                                    i ? "B" : "A", gets(e, "rule") ? gets(e, "rule") : "?",
                                    (int)report_first_line(why), why); /* not the traceback */
            first = 0;
        }
    }
}

/* Evidence changes listed per changed finding, at most. */
#define DIFF_EVIDENCE_SHOWN 4

/* What changed in a changed finding: "severity info -> warning; evidence
 * bytes_per_task 4146 -> 4119, tasks 600 -> 610; message". */
static void changed_text(char *buf, size_t n, const cJSON *e)
{
    const cJSON *sev = get(e, "severity"), *ev;
    char a[64], b[64];
    size_t len = 0, k = 0;

    buf[0] = 0;
    if (gets(sev, "a") && gets(sev, "b") && strcmp(gets(sev, "a"), gets(sev, "b")))
        len += (size_t)snprintf(buf, n, "severity %s -> %s", gets(sev, "a"),
                                gets(sev, "b"));
    cJSON_ArrayForEach(ev, get(e, "evidence_changes")) {
        if (len >= n)
            break;
        if (k++ == DIFF_EVIDENCE_SHOWN) {
            len += (size_t)snprintf(buf + len, n - len, ", ...");
            break;
        }
        report_fmt_value(a, sizeof a, get(ev, "a"));
        report_fmt_value(b, sizeof b, get(ev, "b"));
        len += (size_t)snprintf(buf + len, n - len, "%s%s %s -> %s",
                                k > 1 ? ", " : len ? "; evidence " : "evidence ",
                                gets(ev, "key") ? gets(ev, "key") : "", a, b);
    }
    if (len < n) {
        const cJSON *m = get(e, "message");
        if (gets(m, "a") && gets(m, "b") && strcmp(gets(m, "a"), gets(m, "b")))
            snprintf(buf + len, n - len, "%smessage", len ? "; " : "");
    }
}

/* The cells of a listed finding: mark, severity, rule, node, what (the
 * message; for a changed one what changed), message. */
static void finding_row(row *r, const cJSON *e, char mark)
{
    const cJSON *sev = get(e, "severity");
    const char *sv = cJSON_IsObject(sev) ? gets(sev, "b") : gets(e, "severity");
    const char *msg = cJSON_IsObject(get(e, "message")) ? gets(get(e, "message"), "b")
                                                        : gets(e, "message");

    snprintf(r->c[0], sizeof r->c[0], "%c", mark);
    /* a store optipipe did not write may hold anything there */
    snprintf(r->c[1], sizeof r->c[1], "%s", sv && severity_parse(sv) >= 0 ? sv : "?");
    snprintf(r->c[2], sizeof r->c[2], "%s", gets(e, "rule") ? gets(e, "rule") : "");
    snprintf(r->c[3], sizeof r->c[3], "%s", gets(e, "node") ? gets(e, "node") : "");
    if (mark == '~')
        changed_text(r->c[4], sizeof r->c[4], e);
    else
        r->c[4][0] = 0;
    snprintf(r->c[5], sizeof r->c[5], "%.*s", (int)report_first_line(msg ? msg : ""),
             msg ? msg : "");
}

static const char *change_word(char mark)
{
    return mark == '+' ? "new" : mark == '-' ? "resolved" : "changed";
}

/* Calls fn for each listed finding: new (+), resolved (-), changed (~). */
static void each_listed(const cJSON *fs, void (*fn)(void *, const row *), void *ud)
{
    static const char *const keys[] = {"new", "resolved", "changed"};
    static const char marks[] = "+-~";
    const cJSON *e;
    size_t i;
    row r;

    for (i = 0; i < 3; i++)
        cJSON_ArrayForEach(e, get(fs, keys[i])) {
            finding_row(&r, e, marks[i]);
            fn(ud, &r);
        }
}

/* ---- text --------------------------------------------------------------------- */

static void tput(FILE *f, const char *s, int width)
{
    char buf[256];
    int n;

    report_term_copy(buf, sizeof buf, s);
    n = (int)strlen(buf);
    fputs(buf, f);
    for (; n < width; n++)
        fputc(' ', f);
}

/* The row of entry e of a pairs table (a node's row names it with its
 * identity and says when it ran on one side only). */
static void entry_row(row *r, const cJSON *e, const char *name_key, int node)
{
    const char *name = gets(e, name_key);
    char label[320];

    if (node) {
        node_name(label, sizeof label, e);
        pair_row(r, e, label, "duration_ms");
    } else {
        pair_row(r, e, name, name ? name : "");
    }
}

static void text_pairs(FILE *f, const cJSON *arr, const char *name_key, int share)
{
    const cJSON *e;
    row r;
    int width = 24;

    cJSON_ArrayForEach(e, arr) {
        entry_row(&r, e, name_key, share);
        if ((int)strlen(r.c[0]) > width)
            width = strlen(r.c[0]) > 72 ? 72 : (int)strlen(r.c[0]);
    }
    cJSON_ArrayForEach(e, arr) {
        entry_row(&r, e, name_key, share);
        fputs("  ", f);
        tput(f, r.c[0], width);
        fprintf(f, " %12s -> %-12s %12s %8s", r.c[1], r.c[2], r.c[3], r.c[4]);
        if (share && r.c[5][0])
            fprintf(f, " %5s", r.c[5]);
        if (share && (par_text(r.c[5], sizeof r.c[5], e), r.c[5][0]))
            fprintf(f, "  %s", r.c[5]);
        fputc('\n', f);
    }
}

static void text_finding(void *ud, const row *r)
{
    FILE *f = ud;

    fprintf(f, "  %s %-8s ", r->c[0], r->c[1]);
    tput(f, r->c[2], 0);
    if (r->c[3][0]) {
        fputs("  ", f);
        tput(f, r->c[3], 0);
    }
    if (r->c[4][0]) {
        fputs(": ", f);
        tput(f, r->c[4], 0);
    }
    fputs("\n      ", f);
    tput(f, r->c[5], 0);
    fputc('\n', f);
}

static void text_report(FILE *f, const cJSON *d)
{
    const cJSON *cfg = get(d, "config"), *e;
    char buf[1024];
    row r;

    fputs("A  ", f);
    side_line(buf, sizeof buf, get(d, "a"));
    tput(f, buf, 0);
    fputs("\n   ", f);
    tput(f, gets(get(d, "a"), "ref") ? gets(get(d, "a"), "ref") : "", 0);
    fputs("\nB  ", f);
    side_line(buf, sizeof buf, get(d, "b"));
    tput(f, buf, 0);
    fputs("\n   ", f);
    tput(f, gets(get(d, "b"), "ref") ? gets(get(d, "b"), "ref") : "", 0);
    pair_row(&r, get(d, "duration_ms"), "duration", "duration_ms");
    fprintf(f, "\n\nduration        %s -> %s  %s %s\n", r.c[1], r.c[2], r.c[3], r.c[4]);
    engine_line(buf, sizeof buf, get(d, "engine_version"));
    fputs("engine version  ", f);
    tput(f, buf, 0);
    fputs("\n\nresources\n", f);
    text_pairs(f, get(d, "resources"), "name", 0);
    fprintf(f, "\nconfig: %zu changed, %zu added, %zu removed%s\n",
            count_change(cfg, "changed"), count_change(cfg, "added"),
            count_change(cfg, "removed"), ignored_text(buf, sizeof buf, d));
    cJSON_ArrayForEach(e, cfg) {
        config_row(&r, e);
        fprintf(f, "  %c ", r.c[0][0] == 'a' ? '+' : r.c[0][0] == 'r' ? '-' : '~');
        tput(f, r.c[1], 32);
        fputc(' ', f);
        tput(f, r.c[2], 0);
        fputs(" -> ", f);
        tput(f, r.c[3], 0);
        fputc('\n', f);
    }
    fprintf(f, "\nrun metrics: %d differ\n", cJSON_GetArraySize(get(d, "metrics")));
    text_pairs(f, get(d, "metrics"), "key", 0);
    nodes_heading(buf, sizeof buf, d);
    fprintf(f, "\nnodes by |duration change| (%s)\n", buf);
    text_pairs(f, get(d, "nodes"), "key", 1);
    findings_heading(buf, sizeof buf, get(d, "findings"));
    fputs("\nfindings: ", f);
    tput(f, buf, 0);
    fputc('\n', f);
    each_listed(get(d, "findings"), text_finding, f);
}

/* ---- markdown ----------------------------------------------------------------- */

/* A table cell as a code span: no control characters or newlines, '|'
 * escaped (GFM splits cells on it even in code), a fence longer than
 * any run of backticks inside. */
static void md_cell(FILE *f, const char *s)
{
    size_t run = 0, most = 0, i;
    const char *p;

    if (!s || !*s)
        return;
    for (p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        most = run > most ? run : most;
    }
    for (i = 0; i <= most; i++)
        fputc('`', f);
    fputc(' ', f);
    for (p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '|')
            fputs("\\|", f);
        else if (c < 0x20 || c == 0x7f)
            fputc(' ', f);
        else
            fputc(c, f);
    }
    fputc(' ', f);
    for (i = 0; i <= most; i++)
        fputc('`', f);
}

static void md_row(FILE *f, const row *r, size_t ncols, size_t ncode)
{
    size_t i;

    for (i = 0; i < ncols; i++) {
        fputs("| ", f);
        if (i < ncode)
            md_cell(f, r->c[i]);
        else
            fputs(r->c[i], f); /* numbers we formatted */
        fputc(' ', f);
    }
    fputs("|\n", f);
}

static void md_pairs(FILE *f, const cJSON *arr, const char *name_key, int share)
{
    const cJSON *e;
    row r;

    fprintf(f, "| %s | A | B | change | ratio |%s\n|---|---:|---:|---:|---:|%s\n",
            share ? "node" : "name", share ? " share |" : "", share ? "---:|" : "");
    cJSON_ArrayForEach(e, arr) {
        entry_row(&r, e, name_key, share);
        md_row(f, &r, share ? 6 : 5, 1);
    }
}

/* "| + | warning | `rule` | `node` | `what` |": input text only in code
 * spans; what: for a changed finding what changed, then its message. */
static void md_finding(void *ud, const row *r)
{
    FILE *f = ud;
    char what[520];

    snprintf(what, sizeof what, "%s%s%s", r->c[4], r->c[4][0] ? " - " : "", r->c[5]);
    fprintf(f, "| %s | %s | ", change_word(r->c[0][0]), r->c[1]);
    md_cell(f, r->c[2]);
    fputs(" | ", f);
    md_cell(f, r->c[3]);
    fputs(" | ", f);
    md_cell(f, what);
    fputs(" |\n", f);
}

static void markdown_report(FILE *f, const cJSON *d)
{
    const cJSON *cfg = get(d, "config"), *e;
    char buf[1024];
    row r;

    fputs("### optipipe diff\n\n| | run |\n|---|---|\n", f);
    memset(&r, 0, sizeof r);
    snprintf(r.c[0], sizeof r.c[0], "A");
    side_line(r.c[1], sizeof r.c[1], get(d, "a"));
    md_row(f, &r, 2, 2);
    snprintf(r.c[0], sizeof r.c[0], "B");
    side_line(r.c[1], sizeof r.c[1], get(d, "b"));
    md_row(f, &r, 2, 2);
    pair_row(&r, get(d, "duration_ms"), "duration", "duration_ms");
    fprintf(f, "\n**Duration** %s → %s (%s, %s)\n\n", r.c[1], r.c[2], r.c[3], r.c[4]);
    engine_line(buf, sizeof buf, get(d, "engine_version"));
    fputs("**Engine version** ", f);
    md_cell(f, buf);
    fputs("\n\n#### Resources\n\n", f);
    md_pairs(f, get(d, "resources"), "name", 0);
    fprintf(f, "\n#### Config: %zu changed, %zu added, %zu removed%s\n\n",
            count_change(cfg, "changed"), count_change(cfg, "added"),
            count_change(cfg, "removed"), ignored_text(buf, sizeof buf, d));
    if (cJSON_GetArraySize(cfg)) {
        fputs("| change | key | A | B |\n|---|---|---|---|\n", f);
        cJSON_ArrayForEach(e, cfg) {
            config_row(&r, e);
            md_row(f, &r, 4, 4);
        }
    }
    fprintf(f, "\n#### Run metrics: %d differ\n\n", cJSON_GetArraySize(get(d, "metrics")));
    md_pairs(f, get(d, "metrics"), "key", 0);
    nodes_heading(buf, sizeof buf, d);
    fprintf(f, "\n#### Nodes by duration change\n\n%s\n\n", buf);
    md_pairs(f, get(d, "nodes"), "key", 1);
    findings_heading(buf, sizeof buf, get(d, "findings"));
    fputs("\n#### Findings\n\n", f);
    md_cell(f, buf);
    fputs("\n\n", f);
    if (cJSON_GetArraySize(get(get(d, "findings"), "new")) +
        cJSON_GetArraySize(get(get(d, "findings"), "resolved")) +
        cJSON_GetArraySize(get(get(d, "findings"), "changed"))) {
        fputs("| change | severity | rule | node | what |\n|---|---|---|---|---|\n", f);
        each_listed(get(d, "findings"), md_finding, f);
    }
}

/* ---- html --------------------------------------------------------------------- */

/* "<tr>" and the first ncols cells of r (the first a row header). */
static void h_row_open(FILE *f, const row *r, size_t ncols)
{
    size_t i;

    fputs("<tr>", f);
    for (i = 0; i < ncols; i++) {
        fputs(i ? "<td>" : "<th scope=\"row\">", f);
        html_put(f, r->c[i]);
        fputs(i ? "</td>" : "</th>", f);
    }
}

static void h_row(FILE *f, const row *r, size_t ncols)
{
    h_row_open(f, r, ncols);
    fputs("</tr>\n", f);
}

static void h_pairs(FILE *f, const char *title, const cJSON *arr,
                    const char *name_key, int share)
{
    const cJSON *e;
    row r;

    fputs("<h2>", f);
    html_put(f, title);
    fprintf(f, "</h2>\n<table><thead><tr><th scope=\"col\">%s</th><th scope=\"col\">A"
            "</th><th scope=\"col\">B</th><th scope=\"col\">change</th>"
            "<th scope=\"col\">ratio</th>%s</tr></thead><tbody>\n",
            share ? "node" : "name", share ? "<th scope=\"col\">share</th>" : "");
    cJSON_ArrayForEach(e, arr) {
        entry_row(&r, e, name_key, share);
        h_row(f, &r, share ? 6 : 5);
    }
    fputs("</tbody></table>\n", f);
}

/* The listed nodes' duration change as bars around zero. */
static void node_bars(FILE *f, const cJSON *nodes, int strict)
{
    enum { W = 720, BH = 18, L = 260, R = 20, T = 10 };
    int n = cJSON_GetArraySize(nodes), i = 0, hgt = T + n * BH + 30;
    double lo = 0, hi = 0;
    hout h = {f, NULL, 0, strict};
    const cJSON *e;
    hscale x;

    if (!n)
        return;
    cJSON_ArrayForEach(e, nodes) {
        double v = cJSON_IsNumber(get(e, "delta")) ? get(e, "delta")->valuedouble : 0;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    if (hi <= lo)
        hi = lo + 1;
    fig_open(&h, "diff-nodes", W, hgt, "Duration change by node",
             "Each bar is a node's duration in B minus its duration in A");
    x = hs_make(lo, hi, L, W - R);
    svg_x_axis(&h, &x, T + n * BH + 4, T, 1);
    cJSON_ArrayForEach(e, nodes) {
        double v = cJSON_IsNumber(get(e, "delta")) ? get(e, "delta")->valuedouble : 0;
        double x0 = hs_map(&x, v < 0 ? v : 0), x1 = hs_map(&x, v < 0 ? 0 : v);
        char label[320];
        node_name(label, sizeof label, e);
        fprintf(f, "<rect fill=\"%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\"/>\n",
                v > 0 ? "#c04a00" : "#0072b2", x0, T + i * BH + 2,
                x1 - x0 < 1 ? 1 : x1 - x0, BH - 4);
        svg_text(&h, L - 6, T + i * BH + BH - 5, "end", NULL, label);
        i++;
    }
    fig_svg_end(&h, "Nodes ranked by the absolute change of their duration");
    fig_end(&h);
}

/* A row of the findings table: what changed (for a changed finding),
 * then the message. */
static void h_finding(void *ud, const row *r)
{
    FILE *f = ud;
    row c = *r;

    snprintf(c.c[0], sizeof c.c[0], "%s", change_word(r->c[0][0]));
    h_row_open(f, &c, 4);
    fputs("<td>", f);
    if (r->c[4][0]) {
        html_put(f, r->c[4]);
        fputs("<br>", f);
    }
    html_put(f, r->c[5]);
    fputs("</td></tr>\n", f);
}

static void html_body(FILE *f, const cJSON *d, int strict)
{
    const cJSON *cfg = get(d, "config"), *e;
    char buf[1024];
    row r;

    fputs("<h1>optipipe diff</h1>\n<table><tbody>\n", f);
    memset(&r, 0, sizeof r);
    snprintf(r.c[0], sizeof r.c[0], "A");
    side_line(r.c[1], sizeof r.c[1], get(d, "a"));
    snprintf(r.c[2], sizeof r.c[2], "%s", gets(get(d, "a"), "ref") ? gets(get(d, "a"), "ref") : "");
    h_row(f, &r, 3);
    snprintf(r.c[0], sizeof r.c[0], "B");
    side_line(r.c[1], sizeof r.c[1], get(d, "b"));
    snprintf(r.c[2], sizeof r.c[2], "%s", gets(get(d, "b"), "ref") ? gets(get(d, "b"), "ref") : "");
    h_row(f, &r, 3);
    pair_row(&r, get(d, "duration_ms"), "duration", "duration_ms");
    h_row(f, &r, 5);
    snprintf(r.c[0], sizeof r.c[0], "engine version");
    engine_line(r.c[1], sizeof r.c[1], get(d, "engine_version"));
    h_row(f, &r, 2);
    fputs("</tbody></table>\n", f);
    h_pairs(f, "Resources", get(d, "resources"), "name", 0);
    {
        char ign[64];
        snprintf(buf, sizeof buf, "Config: %zu changed, %zu added, %zu removed%s",
                 count_change(cfg, "changed"), count_change(cfg, "added"),
                 count_change(cfg, "removed"), ignored_text(ign, sizeof ign, d));
    }
    fputs("<h2>", f);
    html_put(f, buf);
    fputs("</h2>\n<table><thead><tr><th scope=\"col\">change</th><th scope=\"col\">key"
          "</th><th scope=\"col\">A</th><th scope=\"col\">B</th></tr></thead><tbody>\n", f);
    cJSON_ArrayForEach(e, cfg) {
        config_row(&r, e);
        h_row(f, &r, 4);
    }
    fputs("</tbody></table>\n", f);
    h_pairs(f, "Run metrics that differ", get(d, "metrics"), "key", 0);
    nodes_heading(buf, sizeof buf, d);
    fputs("<h2>Nodes by duration change</h2>\n<p>", f);
    html_put(f, buf);
    fputs("</p>\n", f);
    node_bars(f, get(d, "nodes"), strict);
    h_pairs(f, "Nodes", get(d, "nodes"), "key", 1);
    findings_heading(buf, sizeof buf, get(d, "findings"));
    fputs("<h2>Findings</h2>\n<p>", f);
    html_put(f, buf);
    fputs("</p>\n<table><thead><tr><th scope=\"col\">change</th><th scope=\"col\">"
          "severity</th><th scope=\"col\">rule</th><th scope=\"col\">node</th>"
          "<th scope=\"col\">what</th></tr></thead><tbody>\n", f);
    each_listed(get(d, "findings"), h_finding, f);
    fputs("</tbody></table>\n", f);
}

int report_diff_html_body(FILE *f, const cJSON *d, int strict)
{
    html_body(f, d, strict);
    return ferror(f) ? OP_EIO : 0;
}

static void html_report(FILE *f, const cJSON *d)
{
    html_page_open(f, "opti-pipe diff");
    html_body(f, d, 0);
    html_page_close(f);
}

int report_diff(FILE *f, const char *format, const cJSON *d)
{
    if (!strcmp(format, "json")) {
        jw w;
        jw_init(&w, f, 1);
        jw_cjson(&w, d);
        fputc('\n', f);
    } else if (!strcmp(format, "markdown")) {
        markdown_report(f, d);
    } else if (!strcmp(format, "html")) {
        html_report(f, d);
    } else {
        text_report(f, d);
    }
    return ferror(f) ? OP_EIO : 0;
}
