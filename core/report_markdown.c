/*
 * report_markdown.c - a summary to post as a pull-request comment
 * (GitHub/GitLab flavoured Markdown): counts by severity, a "start here"
 * list of the most severe findings, then the runs (worst first), each
 * with its findings folded in a <details> block: message, recommendation,
 * the exact config change as a diff block and the evidence table (folded
 * again). Stable and diff-friendly: no times, no absolute links, one fact
 * per line.
 *
 * GitHub refuses a comment over 65 536 characters: the report is written
 * to memory first and, when it is longer, cut after the last finding that
 * fits, with a note saying how many findings it shows.
 *
 * Nothing from inputs or rules is trusted as Markdown. Prose goes through
 * md_text(), which backslash-escapes everything that could start markup
 * (no raw HTML, no links or images, no emphasis, no $...$ math) and breaks
 * URL autolinks; "@" and "#<digit>" get an invisible word joiner so that
 * no e-mail link, @mention or issue reference is made. Identifiers go into
 * code spans whose fence is longer than any backtick run inside, changes
 * into fenced blocks likewise. Control characters never pass.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "report_util.h"

/* U+2060: invisible, but no e-mail autolink, @mention or #123 reference
 * can span it (escapes do not stop those: GitHub finds them in the text
 * after Markdown is parsed). */
#define WORD_JOINER "\xe2\x81\xa0"

#define MD_LIMIT 65536 /* GitHub's limit on a comment, in characters */
#define MD_BUDGET (MD_LIMIT - 1024) /* room for the closing tags and the note */

/* The report goes to f (in memory); cut and cut_open remember the last
 * place it may be cut within MD_BUDGET (bytes, so never more characters)
 * and whether a run's <details> is open there; shown counts the findings
 * written before it. */
typedef struct mctx {
    FILE *f;
    const report_ctx *ctx;
    int open;
    size_t written, cut, cut_open, cut_shown;
} mctx;

/* Notes a place where the report may be cut, while within the budget. */
static void md_mark(mctx *m)
{
    long off = ftell(m->f);

    if (off >= 0 && (size_t)off <= MD_BUDGET) {
        m->cut = (size_t)off;
        m->cut_open = (size_t)m->open;
        m->cut_shown = m->written;
    }
}

/* Characters that start or end Markdown syntax anywhere in a line. '_'
 * is special only at a word boundary: CommonMark never opens emphasis
 * with an intraword '_', so snake_case names stay readable. */
static int md_special(const char *start, const char *p)
{
    static const char set[] = "\\`*[]<|~&$";
    int before, after;

    if (*p == '_') {
        before = p > start && isalnum((unsigned char)p[-1]);
        after = isalnum((unsigned char)p[1]);
        return !(before && after);
    }
    return *p && strchr(set, *p) != NULL;
}

static int starts_with_ci(const char *s, const char *prefix)
{
    for (; *prefix; s++, prefix++)
        if (*s == '\0' || (*s | 0x20) != *prefix)
            return 0;
    return 1;
}

/* Whether the character at s (just before the rest of the text) would
 * complete an autolink: "://" after a scheme, or the dot of "www.". */
static int breaks_autolink(const char *start, const char *s)
{
    if (*s == ':' && s[1] == '/' && s[2] == '/')
        return 1;
    if (*s == '.' && s - start >= 3 && starts_with_ci(s - 3, "www"))
        return 1;
    return 0;
}

/* Writes prose: markup escaped, controls dropped, newlines folded. When
 * line_start, characters that would open a block (list, heading, quote,
 * thematic break) are escaped too. */
static void md_text(const mctx *m, const char *s, int line_start)
{
    const char *start = s ? s : "", *p = start;
    uint32_t cp;
    size_t k;

    if (line_start) {
        const char *d = p;
        while (*d >= '0' && *d <= '9')
            d++;
        if (d > p && (*d == '.' || *d == ')')) {
            fwrite(p, 1, (size_t)(d - p), m->f);
            fputc('\\', m->f);
            p = d;
        } else if (*p && strchr("-+=#>", *p)) {
            fputc('\\', m->f);
        }
    }
    while ((k = utf8_next(p, &cp, NULL))) {
        if (cp == '\n' || cp == '\t' || cp == '\r') {
            fputc(' ', m->f);
        } else if (utf8_is_control(cp)) {
            /* dropped */
        } else if (cp == 0xfffd && k == 1) {
            fputs("\xef\xbf\xbd", m->f);
        } else {
            if (md_special(start, p) || breaks_autolink(start, p))
                fputc('\\', m->f);
            fwrite(p, 1, k, m->f);
            if (*p == '@' || (*p == '#' && p[1] >= '0' && p[1] <= '9'))
                fputs(WORD_JOINER, m->f);
        }
        p += k;
    }
}

/* Only the first line of s, as md_text: a stack trace is whole in the
 * JSON and HTML reports, it would only crowd a comment. */
static void md_line(const mctx *m, const char *s, int line_start)
{
    size_t n = report_first_line(s);
    char *line;

    if (!s || !s[n]) {
        md_text(m, s, line_start);
        return;
    }
    line = strndup(s, n);
    md_text(m, line ? line : s, line_start);
    fputs(line ? " \\[\xe2\x80\xa6\\]" : "", m->f);
    free(line);
}

/* Longest run of backticks in s. */
static size_t max_backticks(const char *s)
{
    size_t run = 0, best = 0;

    for (; s && *s; s++) {
        run = *s == '`' ? run + 1 : 0;
        if (run > best)
            best = run;
    }
    return best;
}

static void put_ticks(FILE *f, size_t n)
{
    while (n--)
        fputc('`', f);
}

/* An identifier as a code span. in_table: '|' must be escaped even there
 * (GFM splits cells first). A space pads the span only where CommonMark
 * needs one: a backtick at an edge, or spaces at both ends (one of each
 * is stripped). */
static void md_code(const mctx *m, const char *s, int in_table)
{
    char *c = report_clean_dup(s, 0);
    size_t ticks, len, i;
    int pad;

    if (!c)
        return;
    ticks = max_backticks(c) + 1;
    len = strlen(c);
    pad = len && (c[0] == '`' || c[len - 1] == '`' || (c[0] == ' ' && c[len - 1] == ' '));
    put_ticks(m->f, ticks);
    if (pad)
        fputc(' ', m->f);
    for (i = 0; c[i]; i++) {
        if (c[i] == '|' && in_table)
            fputc('\\', m->f);
        fputc(c[i], m->f);
    }
    if (pad)
        fputc(' ', m->f);
    put_ticks(m->f, ticks);
    free(c);
}

static const char *sev_icon(severity s)
{
    return s == SEV_ERROR ? "\xf0\x9f\x94\xb4" /* red circle */
         : s == SEV_WARNING ? "\xf0\x9f\x9f\xa0" /* orange circle */
         : "\xf0\x9f\x94\xb5";                   /* blue circle */
}

static void put_summary(const mctx *m)
{
    const report_ctx *ctx = m->ctx;
    size_t count[3], total = report_counts(ctx, count);
    char applied[8600];
    int s;
    char w[3][48];

    fprintf(m->f, "# opti-pipe report\n\n");
    fprintf(m->f, "**%s** in %s from %s (opti-pipe %s)\n\n",
            fmt_count(w[0], 48, (double)total, "finding", NULL),
            fmt_count(w[1], 48, (double)ctx->an->m->nruns, "run", NULL),
            fmt_count(w[2], 48, (double)analysis_ninputs(ctx->an), "input", NULL), OP_VERSION);
    if (report_applied_text(applied, sizeof applied, &ctx->applied)) {
        md_text(m, applied, 1);
        fputs("\n\n", m->f);
    }
    fputs("| severity | findings |\n|---|---:|\n", m->f);
    for (s = SEV_ERROR; s >= SEV_INFO; s--)
        fprintf(m->f, "| %s %s | %zu |\n", sev_icon((severity)s),
                severity_name((severity)s), count[s]);
    if (ctx->res->ne)
        fprintf(m->f, "| rule errors | %zu |\n", ctx->res->ne);
    fputc('\n', m->f);
}

static void put_evidence(const mctx *m, const finding *f)
{
    const cJSON *e;
    char buf[512];

    if (!f->evidence || !f->evidence->child)
        return;
    fputs("<details><summary>Evidence</summary>\n\n| evidence | value |\n|---|---|\n", m->f);
    cJSON_ArrayForEach(e, f->evidence) {
        fputs("| ", m->f);
        md_code(m, e->string, 1);
        fputs(" | ", m->f);
        md_text(m, report_fmt_value(buf, sizeof buf, e), 0);
        fputs(" |\n", m->f);
    }
    fputs("\n</details>\n\n", m->f);
}

/* Writes s to f without control characters or newlines. */
static void put_clean(FILE *f, const char *s)
{
    char *c = report_clean_dup(s, 0);

    if (c)
        fputs(c, f);
    free(c);
}

/* The lines of the change block, before fencing (so the fence can be
 * chosen longer than any backtick run in them): "# target", "- key: from",
 * "+ key: to", every value on its own line whatever it contains. */
static char *change_lines(const finding *f)
{
    const cJSON *c;
    char *out = NULL, val[512];
    size_t len = 0;
    FILE *mf = open_memstream(&out, &len);

    if (!mf)
        return NULL;
    cJSON_ArrayForEach(c, f->changes) {
        const cJSON *target = cJSON_GetObjectItemCaseSensitive(c, "target");
        const cJSON *key = cJSON_GetObjectItemCaseSensitive(c, "key");
        const cJSON *from = cJSON_GetObjectItemCaseSensitive(c, "from");
        const char *k = cJSON_IsString(key) ? key->valuestring : "?";
        if (cJSON_IsString(target)) {
            fputs("# ", mf);
            put_clean(mf, target->valuestring);
            fputc('\n', mf);
        }
        if (from) {
            fputs("- ", mf);
            put_clean(mf, k);
            fputs(": ", mf);
            put_clean(mf, report_fmt_value(val, sizeof val, from));
            fputc('\n', mf);
        }
        fputs("+ ", mf);
        put_clean(mf, k);
        fputs(": ", mf);
        put_clean(mf, report_fmt_value(val, sizeof val,
                                       cJSON_GetObjectItemCaseSensitive(c, "to")));
        fputc('\n', mf);
    }
    fclose(mf);
    return out;
}

static void put_changes(const mctx *m, const finding *f)
{
    char *clean;
    size_t ticks;

    if (!f->changes || !f->changes->child)
        return;
    clean = change_lines(f);
    if (!clean)
        return;
    ticks = max_backticks(clean) + 1;
    if (ticks < 3)
        ticks = 3;
    fputs("**Change:**\n\n", m->f);
    put_ticks(m->f, ticks);
    fputs("diff\n", m->f);
    fputs(clean, m->f);
    put_ticks(m->f, ticks);
    fputs("\n\n", m->f);
    free(clean);
}

static void put_finding(const mctx *m, const finding *f)
{
    fprintf(m->f, "### %s %s: ", sev_icon(f->sev), severity_name(f->sev));
    md_code(m, f->rule, 0);
    if (f->node_name) {
        fputs(" on ", m->f);
        md_text(m, f->node_name, 0);
    }
    if (f->suppressed)
        fputs(" (suppressed by baseline)", m->f);
    fputs("\n\n", m->f);
    md_line(m, f->message, 1);
    fputs("\n\n", m->f);
    if (f->recommendation) {
        fputs("**Recommendation:** ", m->f);
        md_text(m, f->recommendation, 0);
        fputs("\n\n", m->f);
    }
    if (f->savings_basis) {
        char money[64];
        fprintf(m->f, "**Saves:** about %s a run (",
                report_money(money, sizeof money, m->ctx, f->savings));
        md_text(m, f->savings_basis, 0);
        fputs(")\n\n", m->f);
    }
    put_changes(m, f);
    put_evidence(m, f);
}

static void put_run(const mctx *m, const struct op_run *r)
{
    char dur[64];

    fputs("## ", m->f);
    md_text(m, r->source, 0);
    fputs(": ", m->f);
    md_text(m, report_run_name(r), 0);
    fputs("\n\n", m->f);
    md_code(m, r->id, 0);
    fputs(" \xc2\xb7 ", m->f);
    md_text(m, r->status ? r->status : "unknown", 0);
    if (r->set & MSET_DURATION_MS)
        fprintf(m->f, " \xc2\xb7 %s",
                report_fmt_duration(dur, sizeof dur, (double)r->duration_ms));
    if (r->nhistory)
        fprintf(m->f, " \xc2\xb7 newest of %zu runs in its history", r->nhistory + 1);
    fputs("\n\n", m->f);
}

/* Findings of one run (SIZE_MAX: across runs), folded under a summary of
 * their counts; "No findings." when there is none. */
static void put_group(mctx *m, size_t run)
{
    const results *res = m->ctx->res;
    size_t i, count[3] = {0, 0, 0}, shown = 0;
    int s, first = 1;

    for (i = 0; i < res->n; i++)
        if (res->f[i].run_index == run && report_visible(m->ctx, &res->f[i])) {
            count[res->f[i].sev]++;
            shown++;
        }
    if (!shown) {
        fputs("No findings.\n\n", m->f);
        return;
    }
    fprintf(m->f, "<details><summary>%zu finding%s:", shown, shown == 1 ? "" : "s");
    for (s = SEV_ERROR; s >= SEV_INFO; s--)
        if (count[s]) {
            fprintf(m->f, "%s %zu %s", first ? "" : ",", count[s], severity_name((severity)s));
            first = 0;
        }
    fputs("</summary>\n\n", m->f);
    m->open = 1;
    for (i = 0; i < res->n; i++)
        if (res->f[i].run_index == run && report_visible(m->ctx, &res->f[i])) {
            put_finding(m, &res->f[i]);
            m->written++;
            md_mark(m);
        }
    fputs("</details>\n\n", m->f);
    m->open = 0;
    if (run != SIZE_MAX) {
        char money[64];
        double sum;
        size_t k = report_savings(m->ctx, run, &sum);
        if (k)
            fprintf(m->f, "Estimated savings: %s a run across %zu finding%s.\n\n",
                    report_money(money, sizeof money, m->ctx, sum), k, k == 1 ? "" : "s");
    }
    md_mark(m);
}

/* The most severe findings first, each with what to do about it. */
static void put_start_here(mctx *m)
{
    const report_ctx *ctx = m->ctx;
    const finding *top[REPORT_START_HERE];
    size_t i, n = report_start_here(ctx, top, REPORT_START_HERE);

    if (!n)
        return;
    fputs("## Start here\n\n", m->f);
    for (i = 0; i < n; i++) {
        const finding *f = top[i];
        const struct op_run *r = report_finding_run(ctx, f);
        fprintf(m->f, "%zu. %s %s ", i + 1, sev_icon(f->sev), severity_name(f->sev));
        md_code(m, f->rule, 0);
        fputs(" in ", m->f);
        if (r) {
            md_text(m, r->source, 0);
            fputs(": ", m->f);
            md_text(m, report_run_name(r), 0);
        } else {
            fputs("all runs", m->f);
        }
        if (f->node_name) {
            fputs(", on ", m->f);
            md_text(m, f->node_name, 0);
        }
        if (f->savings_basis) {
            char money[64];
            fprintf(m->f, " (saves about %s)",
                    report_money(money, sizeof money, ctx, f->savings));
        }
        if (f->recommendation) {
            fputs(" \xe2\x80\x94 ", m->f);
            md_line(m, f->recommendation, 0);
        }
        fputc('\n', m->f);
    }
    fputc('\n', m->f);
}

static void put_rule_errors(const mctx *m)
{
    const results *res = m->ctx->res;
    size_t i;

    if (!res->ne)
        return;
    fprintf(m->f, "## Rule errors\n\n");
    for (i = 0; i < res->ne; i++) {
        fputs("- ", m->f);
        md_code(m, res->e[i].rule, 0);
        fputs(": ", m->f);
        md_text(m, res->e[i].error, 0);
        fputc('\n', m->f);
    }
    fputc('\n', m->f);
}

/* Writes the report of buf (len bytes) to out, cut at m's last mark with
 * a note when it is over GitHub's limit. */
static void md_flush(const mctx *m, const char *buf, size_t len, FILE *out)
{
    size_t total, count[3];

    if (len <= MD_LIMIT) {
        fwrite(buf, 1, len, out);
        return;
    }
    total = report_counts(m->ctx, count);
    fwrite(buf, 1, m->cut, out);
    if (m->cut_open)
        fputs("</details>\n\n", out);
    fprintf(out, "---\n\n**Truncated:** this report shows %zu of %zu findings to stay under "
            "GitHub's limit of %d characters for a comment", m->cut_shown, total, MD_LIMIT);
    if (m->ctx->res->ne)
        fprintf(out, " (the %zu rule error%s are left out too)", m->ctx->res->ne,
                m->ctx->res->ne == 1 ? "" : "s");
    fputs(". Every finding is in `optipipe analyze --format html` (or `--format json`).\n",
          out);
}

static void md_render(mctx *m)
{
    const report_ctx *ctx = m->ctx;
    const model *mo = ctx->an->m;
    size_t i, k, nord, *order = report_run_order(ctx, &nord);

    put_summary(m);
    put_start_here(m);
    md_mark(m);
    for (k = 0; k < (order ? nord : mo->nruns); k++) {
        i = report_run_at(order, k);
        if (mo->runs[i]->superseded)
            continue;
        put_run(m, mo->runs[i]);
        put_group(m, i);
    }
    free(order);
    for (i = 0; i < ctx->res->n; i++)
        if (ctx->res->f[i].run_index == SIZE_MAX && report_visible(ctx, &ctx->res->f[i])) {
            fputs("## Across runs\n\n", m->f);
            put_group(m, SIZE_MAX);
            break;
        }
    put_rule_errors(m);
}

int report_markdown(const report_ctx *ctx)
{
    mctx m = {NULL, ctx, 0, 0, 0, 0, 0};
    char *buf = NULL;
    size_t len = 0;
    int ok;

    if ((m.f = open_memstream(&buf, &len))) {
        md_render(&m);
        ok = !ferror(m.f);
        ok &= fclose(m.f) == 0 && buf;
        if (ok)
            md_flush(&m, buf, len, ctx->out);
        free(buf);
    } else {
        ok = 0;
    }
    if (!ok) { /* out of memory: the whole report, uncut, rather than none */
        mctx direct = {ctx->out, ctx, 0, 0, 0, 0, 0};
        md_render(&direct);
    }
    return ferror(ctx->out) ? OP_EIO : 0;
}
