/*
 * report_text.c - the default, human report: findings grouped by run,
 * most severe first, each with its evidence and exact changes.
 *
 * Everything taken from inputs (names, ids, config values) and from rules
 * (messages) goes through term_put(), which removes terminal control
 * characters so a crafted operator name cannot move the cursor, retitle
 * the window or hide text.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "report.h"
#include "report_util.h"

#define CUT_MARK "[...]" /* after the first line of a multi-line text */
#define WIDTH_PLAIN 100 /* not a terminal: logs and CI */
#define WIDTH_MIN 40
#define WIDTH_MAX 500

/* A pen that wraps at word boundaries: col counts the characters of the
 * current line (styles take none), indent is where a continuation line
 * starts, space is how many spaces are pending before the next word, bol
 * that nothing was written since the line's indent (no space there). */
typedef struct tctx {
    FILE *f;
    int color;
    size_t width, col, indent;
    int space, bol;
} tctx;

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_DIM "\033[2m"
#define C_RED "\033[31m"
#define C_YELLOW "\033[33m"
#define C_CYAN "\033[36m"

/* The width to wrap at: on a terminal $COLUMNS, else the window size,
 * else 100; otherwise (a file, a pipe, CI) 100. */
static size_t text_width(FILE *f)
{
    const char *env = getenv("COLUMNS");
    struct winsize ws;
    long w = 0;

    if (!isatty(fileno(f)))
        return WIDTH_PLAIN;
    if (env && *env)
        w = strtol(env, NULL, 10);
    if (w <= 0 && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0)
        w = ws.ws_col;
    if (w <= 0)
        w = WIDTH_PLAIN;
    return w < WIDTH_MIN ? WIDTH_MIN : w > WIDTH_MAX ? WIDTH_MAX : (size_t)w;
}

static void style(const tctx *t, const char *code)
{
    if (t->color)
        fputs(code, t->f);
}

static void pen_newline(tctx *t)
{
    fputc('\n', t->f);
    t->col = 0;
    t->space = 0;
}

/* Starts a paragraph at column at (ending the current line), whose
 * continuation lines start at column indent. */
static void pen_para(tctx *t, size_t at, size_t indent)
{
    if (t->col)
        pen_newline(t);
    for (; t->col < at; t->col++)
        fputc(' ', t->f);
    t->indent = indent;
    t->bol = 1;
}

/* Columns a character takes on a terminal: 2 for the East Asian wide
 * and fullwidth ranges (and emoji), else 1. */
static size_t cp_cols(uint32_t cp)
{
    return (cp >= 0x1100 && cp <= 0x115f) || (cp >= 0x2e80 && cp <= 0xa4cf) ||
                   (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0xf900 && cp <= 0xfaff) ||
                   (cp >= 0xfe30 && cp <= 0xfe4f) || (cp >= 0xff00 && cp <= 0xff60) ||
                   (cp >= 0xffe0 && cp <= 0xffe6) || (cp >= 0x1f300 && cp <= 0x1f64f) ||
                   (cp >= 0x1f900 && cp <= 0x1f9ff) || (cp >= 0x20000 && cp <= 0x3fffd)
               ? 2 : 1;
}

/* Writes one word of cols characters, on a new line when it does not fit;
 * a word wider than a whole line is broken at a character boundary. */
static void pen_word(tctx *t, const char *w, size_t len, size_t cols)
{
    uint32_t cp;
    size_t k;

    if (!t->bol && t->col + (size_t)t->space + cols > t->width &&
        t->indent + cols <= t->width)
        pen_para(t, t->indent, t->indent);
    else if (!t->bol)
        for (; t->space > 0; t->space--, t->col++)
            fputc(' ', t->f);
    t->space = 0;
    while (len) {
        k = utf8_next(w, &cp, NULL);
        if (t->col + cp_cols(cp) > t->width && !t->bol)
            pen_para(t, t->indent, t->indent);
        fwrite(w, 1, k, t->f);
        t->bol = 0;
        w += k;
        len -= k;
        t->col += cp_cols(cp);
    }
}

/* The length of " unit" at p when a short unit word (s, ms, GiB, a
 * punctuation after it allowed) follows a number there, else 0. */
static size_t unit_after(const char *p)
{
    size_t n = 0;

    if (*p != ' ')
        return 0;
    while (isalpha((unsigned char)p[1 + n]))
        n++;
    if (n == 0 || n > 3)
        return 0;
    while (p[1 + n] && p[1 + n] != ' ' && strchr(",;:.)", p[1 + n]))
        n++;
    return p[1 + n] == '\0' || p[1 + n] == ' ' ? n + 1 : 0;
}

/* Writes text from inputs or rules (see report_term_copy: no control
 * character reaches the terminal), n bytes of it, wrapped at spaces. */
static void term_put_n(tctx *t, const char *s, size_t n)
{
    char *raw = malloc(2 * n + 2), *c, *p, *w;
    uint32_t cp;
    size_t k, cols;

    if (!raw) { /* out of memory: unwrapped, but whole */
        report_term_put(t->f, s);
        return;
    }
    memcpy(raw, s, n);
    raw[n] = '\0';
    c = raw + n + 1; /* the terminal form is never longer */
    report_term_copy(c, n + 1, raw);
    for (p = c; *p;) {
        if (*p == ' ') {
            t->space = 1;
            p++;
            continue;
        }
        for (w = p, cols = 0; *p && *p != ' '; p += k)
            k = utf8_next(p, &cp, NULL), cols += cp_cols(cp);
        if (p > w && isdigit((unsigned char)p[-1]) && (k = unit_after(p)))
            p += k, cols += k; /* "2.1 s" stays on one line */
        if (strncmp(p, " " CUT_MARK, sizeof CUT_MARK) == 0)
            p += sizeof CUT_MARK, cols += sizeof CUT_MARK; /* and so does the cut */
        pen_word(t, w, (size_t)(p - w), cols);
    }
    free(raw);
}

static void term_put(tctx *t, const char *s)
{
    term_put_n(t, s ? s : "", strlen(s ? s : ""));
}

/* Only the first line of s, then the cut mark on the same line: a stack
 * trace is whole in JSON and HTML. */
static void term_put_line(tctx *t, const char *s)
{
    size_t n = report_first_line(s);
    char *line;

    if (!s || !s[n]) {
        term_put(t, s);
        return;
    }
    if (!(line = malloc(n + sizeof CUT_MARK + 1))) {
        term_put(t, s); /* out of memory: whole */
        return;
    }
    memcpy(line, s, n);
    memcpy(line + n, " " CUT_MARK, sizeof CUT_MARK + 1);
    term_put_n(t, line, n + sizeof CUT_MARK);
    free(line);
}

/* Fixed text of the report itself, wrapped like the rest. */
#define lit(t, s) term_put((t), (s))

static void value_put(tctx *t, const cJSON *v)
{
    char buf[64];

    if (cJSON_IsNumber(v)) {
        lit(t, fmt_number(buf, sizeof buf, v->valuedouble));
    } else if (cJSON_IsString(v)) {
        term_put_line(t, v->valuestring);
    } else if (cJSON_IsBool(v)) {
        lit(t, cJSON_IsTrue(v) ? "true" : "false");
    } else if (!v || cJSON_IsNull(v)) {
        lit(t, "(unset)");
    } else {
        char *s = cJSON_PrintUnformatted(v);
        term_put(t, s ? s : "?");
        cJSON_free(s);
    }
}

static const char *sev_color(severity s)
{
    return s == SEV_ERROR ? C_RED : s == SEV_WARNING ? C_YELLOW : C_CYAN;
}

static void put_changes(tctx *t, const finding *f)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, f->changes) {
        const cJSON *target = cJSON_GetObjectItemCaseSensitive(c, "target");
        pen_para(t, 4, 6);
        lit(t, "change: ");
        style(t, C_BOLD);
        term_put(t, cJSON_GetObjectItemCaseSensitive(c, "key")->valuestring);
        style(t, C_RESET);
        if (cJSON_IsString(target)) {
            lit(t, " of ");
            term_put(t, target->valuestring);
        }
        lit(t, ": ");
        value_put(t, cJSON_GetObjectItemCaseSensitive(c, "from"));
        lit(t, " -> ");
        value_put(t, cJSON_GetObjectItemCaseSensitive(c, "to"));
    }
}

/* Only with -v: the numbers back the message, they rarely change what to
 * do (every format but text always has them). */
static void put_evidence(tctx *t, const finding *f)
{
    const cJSON *e;
    int first = 1;

    if (!f->evidence || !f->evidence->child)
        return;
    pen_para(t, 4, 6);
    style(t, C_DIM);
    lit(t, "evidence: ");
    cJSON_ArrayForEach(e, f->evidence) {
        if (!first)
            lit(t, ", ");
        first = 0;
        term_put(t, e->string);
        lit(t, "=");
        t->space = 0;
        value_put(t, e);
    }
    style(t, C_RESET);
}

static void put_finding(const report_ctx *ctx, tctx *t, const finding *f)
{
    char sev[16], fp[16];

    pen_para(t, 2, 10);
    style(t, sev_color(f->sev));
    style(t, C_BOLD);
    snprintf(sev, sizeof sev, "%-7s", severity_name(f->sev));
    fputs(sev, t->f);
    t->col += strlen(sev);
    t->bol = 0;
    style(t, C_RESET);
    t->space = 1;
    term_put(t, f->rule);
    if (f->node_name) {
        t->space = 2;
        term_put(t, f->node_name);
    }
    /* the short fingerprint: what `baseline --fingerprint` takes */
    snprintf(fp, sizeof fp, "[%.8s]", f->fingerprint);
    style(t, C_DIM);
    t->space = 2;
    lit(t, fp);
    style(t, C_RESET);
    if (f->suppressed)
        lit(t, f->suppressed == FINDING_IGNORED ? " (ignored by config)" : " (suppressed by baseline)");
    pen_para(t, 4, 4);
    term_put_line(t, f->message);
    if (f->recommendation) {
        pen_para(t, 4, 7);
        lit(t, "-> ");
        term_put_line(t, f->recommendation);
    }
    put_changes(t, f);
    if (f->savings_basis) {
        char money[64];
        pen_para(t, 4, 4);
        lit(t, "saves: about ");
        lit(t, report_money(money, sizeof money, ctx, f->savings));
        lit(t, " a run");
        if (ctx->verbose) {
            lit(t, " (");
            term_put(t, f->savings_basis);
            t->space = 0;
            lit(t, ")");
        }
    }
    if (ctx->verbose)
        put_evidence(t, f);
    pen_newline(t);
}

/* What the priced findings save, per run and per job (docs/costs.md). */
static void put_savings(const report_ctx *ctx, tctx *t, size_t run)
{
    char money[64], line[160];
    double sum;
    size_t n = report_savings(ctx, run, &sum);

    if (!n)
        return;
    snprintf(line, sizeof line, "  estimated savings: %s a run across %zu finding%s\n",
             report_money(money, sizeof money, ctx, sum), n, n == 1 ? "" : "s");
    fputs(line, t->f);
}

static void put_job_savings(const report_ctx *ctx, tctx *t)
{
    const char *jobs[REPORT_MAX_JOBS];
    size_t i, n = report_jobs_priced(ctx, jobs, REPORT_MAX_JOBS);
    char money[64];
    double sum;

    if (!n)
        return;
    fputs("\nEstimated savings by job (the config's costs, docs/costs.md):\n", t->f);
    for (i = 0; i < n; i++) {
        size_t k = report_job_savings(ctx, jobs[i], &sum);
        pen_para(t, 2, 4);
        lit(t, report_money(money, sizeof money, ctx, sum));
        lit(t, k == 1 ? " (1 finding)" : "");
        if (k != 1) {
            snprintf(money, sizeof money, " (%zu findings)", k);
            lit(t, money);
        }
        lit(t, " ");
        term_put(t, jobs[i]);
        pen_newline(t);
    }
}

static void put_run_header(tctx *t, const struct op_run *r)
{
    char buf[96];

    pen_para(t, 0, 2);
    pen_newline(t);
    style(t, C_BOLD);
    term_put(t, r->source);
    t->space = 1;
    term_put(t, r->name ? r->name : r->id);
    style(t, C_RESET);
    if (r->name) {
        lit(t, " (");
        t->space = 0;
        term_put(t, r->id);
        t->space = 0;
        lit(t, ")");
    }
    lit(t, " - ");
    term_put(t, r->status ? r->status : "unknown");
    if (r->set & MSET_DURATION_MS) {
        char d[48];

        snprintf(buf, sizeof buf, ", %s",
                 fmt_duration_ms(d, sizeof d, (double)r->duration_ms));
        t->space = 0;
        lit(t, buf);
    }
    if (r->nhistory) {
        snprintf(buf, sizeof buf, " (newest of %zu runs in its history)", r->nhistory + 1);
        lit(t, buf);
    }
    pen_newline(t);
}

static void put_group(const report_ctx *ctx, tctx *t, size_t run)
{
    const results *res = ctx->res;
    size_t i, shown = 0;

    for (i = 0; i < res->n; i++) {
        if (res->f[i].run_index != run || !report_visible(ctx, &res->f[i]))
            continue;
        put_finding(ctx, t, &res->f[i]);
        shown++;
    }
    if (!shown && run != SIZE_MAX)
        fputs("  no findings\n", t->f);
}

/* The first lines: the most severe findings and what to do about them,
 * each with the run it is in. */
static void put_start_here(const report_ctx *ctx, tctx *t)
{
    const finding *top[REPORT_START_HERE];
    size_t i, n = report_start_here(ctx, top, REPORT_START_HERE);
    char num[16];

    if (!n)
        return;
    pen_newline(t);
    style(t, C_BOLD);
    lit(t, "Start here:");
    style(t, C_RESET);
    for (i = 0; i < n; i++) {
        const finding *f = top[i];
        const struct op_run *r = report_finding_run(ctx, f);
        pen_para(t, 2, 5);
        snprintf(num, sizeof num, "%zu.", i + 1);
        lit(t, num);
        style(t, sev_color(f->sev));
        lit(t, " ");
        lit(t, severity_name(f->sev));
        style(t, C_RESET);
        lit(t, " ");
        term_put(t, f->rule);
        lit(t, " in ");
        if (r) {
            term_put(t, r->source);
            t->space = 1;
            term_put(t, report_run_name(r));
        } else {
            lit(t, "all runs");
        }
        if (f->node_name) {
            lit(t, " on ");
            term_put(t, f->node_name);
        }
        if (f->savings_basis) {
            char money[64];
            lit(t, " (saves about");
            t->space = 1;
            lit(t, report_money(money, sizeof money, ctx, f->savings));
            t->space = 0;
            lit(t, ")");
        }
        if (f->recommendation) {
            pen_para(t, 5, 8);
            lit(t, "-> ");
            term_put_line(t, f->recommendation);
        }
    }
    pen_newline(t);
}

int report_text(const report_ctx *ctx)
{
    const results *res = ctx->res;
    const model *m = ctx->an->m;
    tctx t = {ctx->out, ctx->color, text_width(ctx->out), 0, 0, 0, 1};
    size_t i, k, nord, count[3], total = report_counts(ctx, count);
    size_t *order = report_run_order(ctx, &nord);
    char head[512], w[5][48], applied[8600];

    style(&t, C_BOLD);
    snprintf(head, sizeof head, "opti-pipe %s", OP_VERSION);
    lit(&t, head);
    style(&t, C_RESET);
    snprintf(head, sizeof head, ": %s, %s, %s (%s, %s, %zu info)",
             fmt_count(w[0], 48, (double)analysis_ninputs(ctx->an), "input", NULL),
             fmt_count(w[1], 48, (double)m->nruns, "run", NULL),
             fmt_count(w[2], 48, (double)total, "finding", NULL),
             fmt_count(w[3], 48, (double)count[2], "error", NULL),
             fmt_count(w[4], 48, (double)count[1], "warning", NULL), count[0]);
    t.space = 0;
    lit(&t, head); /* the header: one wrapped paragraph */
    if (res->ne) { /* up front: "0 findings" alone would read as all clear */
        snprintf(head, sizeof head, ", %s",
                 fmt_count(w[0], 48, (double)res->ne, "rule error", NULL));
        style(&t, C_RED);
        t.space = 0;
        lit(&t, head);
        style(&t, C_RESET);
    }
    pen_newline(&t);
    if (report_applied_text(applied, sizeof applied, &ctx->applied)) {
        term_put(&t, applied);
        pen_newline(&t);
    }
    put_start_here(ctx, &t);
    /* Runs superseded by a newer run of their history are only context:
     * rules checked the newest, which names how many came before. Runs
     * with the worst findings come first. */
    for (k = 0; k < (order ? nord : m->nruns); k++) {
        i = report_run_at(order, k);
        if (m->runs[i]->superseded)
            continue;
        put_run_header(&t, m->runs[i]);
        put_group(ctx, &t, i);
        put_savings(ctx, &t, i);
    }
    free(order);
    for (i = 0; i < res->n; i++)
        if (res->f[i].run_index == SIZE_MAX && report_visible(ctx, &res->f[i])) {
            fputs("\nacross runs\n", t.f);
            put_group(ctx, &t, SIZE_MAX);
            break;
        }
    put_job_savings(ctx, &t);
    if (res->ne) {
        fputc('\n', t.f);
        style(&t, C_RED);
        fprintf(t.f, "%s:\n", fmt_count(w[0], 48, (double)res->ne, "rule error", NULL));
        style(&t, C_RESET);
        for (i = 0; i < res->ne; i++) {
            pen_para(&t, 2, 4);
            term_put(&t, res->e[i].rule);
            lit(&t, ": ");
            term_put_line(&t, res->e[i].error);
            pen_newline(&t);
        }
    }
    return ferror(t.f) ? OP_EIO : 0;
}
