/*
 * report_junit.c - JUnit XML for CI test views (Jenkins, GitLab, Azure,
 * GitHub test-report actions): one <testsuite> per run, one <testcase> per
 * rule that applies to that run. A testcase fails when the rule found
 * something at or above --fail-on, so the report fails exactly what the
 * exit code fails; findings below that level are listed in the testcase's
 * <system-out>. Rule errors become testcases with an <error>.
 *
 * Everything is XML-escaped by xml_put(); characters XML 1.0 cannot carry
 * (control characters, broken UTF-8, U+FFFE/U+FFFF) never pass.
 */
#include <stdlib.h>
#include <string.h>

#include "report_util.h"
#include "util.h"

#define JU_MAX_RULES 4096

typedef struct jctx {
    FILE *f;
    const report_ctx *ctx;
    int fail_level; /* -1: nothing fails */
    const char *rules[JU_MAX_RULES]; /* rule ids, sorted */
    size_t nrules;
} jctx;

/* Writes s escaped for XML text (attr: for an attribute value, where
 * newlines become spaces as well). */
static void xml_put(FILE *f, const char *s, int attr)
{
    const char *p = s ? s : "";
    uint32_t cp;
    size_t k;

    while ((k = utf8_next(p, &cp, NULL))) {
        if (cp == '&')
            fputs("&amp;", f);
        else if (cp == '<')
            fputs("&lt;", f);
        else if (cp == '>')
            fputs("&gt;", f);
        else if (cp == '"')
            fputs("&quot;", f);
        else if (cp == '\'')
            fputs("&apos;", f);
        else if (cp == '\n' || cp == '\t' || cp == '\r')
            fputc(attr || cp == '\r' ? ' ' : (int)cp, f);
        else if (utf8_is_control(cp))
            ; /* not allowed in XML 1.0 */
        else if ((cp == 0xfffd && k == 1) || cp == 0xfffe || cp == 0xffff)
            fputs("\xef\xbf\xbd", f);
        else
            fwrite(p, 1, k, f);
        p += k;
    }
}

static void add_rule(jctx *j, const char *id)
{
    size_t i;

    for (i = 0; i < j->nrules; i++)
        if (strcmp(j->rules[i], id) == 0)
            return;
    if (j->nrules < JU_MAX_RULES)
        j->rules[j->nrules++] = id;
}

static int rule_applies(const rule_meta *rm, const char *source)
{
    size_t i;

    for (i = 0; i < rm->nsources; i++)
        if (strcmp(rm->sources[i], source) == 0 ||
            (strcmp(rm->sources[i], "*") == 0 && source[0] == '*'))
            return 1;
    return 0;
}

/* The rules that ran for a source ("*": the bundle-wide ones), plus every
 * rule with a finding in that group, sorted by id. */
static void collect_rules(jctx *j, const char *source, size_t run)
{
    size_t i;

    j->nrules = 0;
    for (i = 0; j->ctx->rs && i < ruleset_count(j->ctx->rs); i++) {
        rule_meta *rm = ruleset_rule(j->ctx->rs, i);
        if (rm->enabled && rule_applies(rm, source))
            add_rule(j, rm->id);
    }
    for (i = 0; i < j->ctx->res->n; i++) {
        const finding *f = &j->ctx->res->f[i];
        if (f->run_index == run && report_visible(j->ctx, f))
            add_rule(j, f->rule);
    }
    qsort(j->rules, j->nrules, sizeof *j->rules, util_strp_cmp);
}

static int fails(const jctx *j, const finding *f)
{
    return j->fail_level >= 0 && (int)f->sev >= j->fail_level && !f->suppressed;
}

/* Counts the findings of rule in run: all of them and the failing ones. */
static size_t count_findings(const jctx *j, const char *rule, size_t run,
                             size_t *nfail)
{
    size_t i, n = 0;

    *nfail = 0;
    for (i = 0; i < j->ctx->res->n; i++) {
        const finding *f = &j->ctx->res->f[i];
        if (f->run_index != run || strcmp(f->rule, rule) != 0 ||
            !report_visible(j->ctx, f))
            continue;
        n++;
        if (fails(j, f))
            (*nfail)++;
    }
    return n;
}

static void put_finding_text(const jctx *j, const finding *f)
{
    const cJSON *e;
    char buf[512];

    fputs("[", j->f);
    fputs(severity_name(f->sev), j->f);
    fputs("] ", j->f);
    if (f->node_name) {
        xml_put(j->f, f->node_name, 0);
        fputs(": ", j->f);
    }
    xml_put(j->f, f->message, 0);
    fputc('\n', j->f);
    if (f->recommendation) {
        fputs("Recommendation: ", j->f);
        xml_put(j->f, f->recommendation, 0);
        fputc('\n', j->f);
    }
    cJSON_ArrayForEach(e, f->changes) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "target");
        fputs("Change: ", j->f);
        xml_put(j->f, cJSON_GetObjectItemCaseSensitive(e, "key")->valuestring, 0);
        if (cJSON_IsString(t)) {
            fputs(" of ", j->f);
            xml_put(j->f, t->valuestring, 0);
        }
        fputs(": ", j->f);
        xml_put(j->f, report_fmt_value(buf, sizeof buf,
                                       cJSON_GetObjectItemCaseSensitive(e, "from")), 0);
        fputs(" -> ", j->f);
        xml_put(j->f, report_fmt_value(buf, sizeof buf,
                                       cJSON_GetObjectItemCaseSensitive(e, "to")), 0);
        fputc('\n', j->f);
    }
    fputs("Fingerprint: ", j->f);
    fputs(f->fingerprint, j->f);
    fputs("\n\n", j->f);
}

/* Writes the findings of rule in run that do (failing = 1) or do not fail. */
static void put_findings(const jctx *j, const char *rule, size_t run, int failing)
{
    size_t i;

    for (i = 0; i < j->ctx->res->n; i++) {
        const finding *f = &j->ctx->res->f[i];
        if (f->run_index == run && strcmp(f->rule, rule) == 0 &&
            report_visible(j->ctx, f) && fails(j, f) == failing)
            put_finding_text(j, f);
    }
}

/* The first failing finding: the <failure> message and type. */
static const finding *first_failing(const jctx *j, const char *rule, size_t run)
{
    size_t i;

    for (i = 0; i < j->ctx->res->n; i++) {
        const finding *f = &j->ctx->res->f[i];
        if (f->run_index == run && strcmp(f->rule, rule) == 0 &&
            report_visible(j->ctx, f) && fails(j, f))
            return f;
    }
    return NULL;
}

static void put_testcase(const jctx *j, const char *suite, const char *rule,
                         size_t run)
{
    size_t nfail, n = count_findings(j, rule, run, &nfail);
    const finding *first = first_failing(j, rule, run);

    fputs("    <testcase name=\"", j->f);
    xml_put(j->f, rule, 1);
    fputs("\" classname=\"", j->f);
    xml_put(j->f, suite, 1);
    fputs("\" time=\"0\"", j->f);
    if (!n) {
        fputs("/>\n", j->f);
        return;
    }
    fputs(">\n", j->f);
    if (first) {
        fputs("      <failure message=\"", j->f);
        xml_put(j->f, first->message, 1);
        fprintf(j->f, "\" type=\"%s\">", severity_name(first->sev));
        put_findings(j, rule, run, 1);
        fputs("</failure>\n", j->f);
    }
    if (n > nfail) {
        fputs("      <system-out>", j->f);
        put_findings(j, rule, run, 0);
        fputs("</system-out>\n", j->f);
    }
    fputs("    </testcase>\n", j->f);
}

static size_t suite_failures(const jctx *j, size_t run)
{
    size_t i, n = 0, nfail;

    for (i = 0; i < j->nrules; i++) {
        count_findings(j, j->rules[i], run, &nfail);
        n += nfail > 0;
    }
    return n;
}

static void put_suite(jctx *j, const struct op_run *r, size_t run)
{
    char *name = NULL;
    size_t len = 0, i;
    FILE *mf = open_memstream(&name, &len);

    if (!mf)
        return;
    if (r)
        fprintf(mf, "%s: %s", r->source, report_run_name(r));
    else
        fputs("across runs", mf);
    fclose(mf);
    collect_rules(j, r ? r->source : "*", run);
    if (!r && !j->nrules) {
        free(name);
        return;
    }
    fputs("  <testsuite name=\"", j->f);
    xml_put(j->f, name, 1);
    fprintf(j->f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" time=\"0\">\n",
            j->nrules, suite_failures(j, run));
    if (r) {
        fputs("    <properties>\n      <property name=\"source\" value=\"", j->f);
        xml_put(j->f, r->source, 1);
        fputs("\"/>\n      <property name=\"run\" value=\"", j->f);
        xml_put(j->f, r->id, 1);
        fputs("\"/>\n    </properties>\n", j->f);
    }
    for (i = 0; i < j->nrules; i++)
        put_testcase(j, name, j->rules[i], run);
    fputs("  </testsuite>\n", j->f);
    free(name);
}

static void put_rule_errors(const jctx *j)
{
    const results *res = j->ctx->res;
    size_t i;

    if (!res->ne)
        return;
    fprintf(j->f, "  <testsuite name=\"rule errors\" tests=\"%zu\" failures=\"0\" "
            "errors=\"%zu\" skipped=\"0\" time=\"0\">\n", res->ne, res->ne);
    for (i = 0; i < res->ne; i++) {
        fputs("    <testcase name=\"", j->f);
        xml_put(j->f, res->e[i].rule, 1);
        fputs("\" classname=\"rule errors\" time=\"0\">\n      <error message=\"", j->f);
        xml_put(j->f, res->e[i].error, 1);
        fputs("\">", j->f);
        xml_put(j->f, res->e[i].error, 0);
        fputs("</error>\n    </testcase>\n", j->f);
    }
    fputs("  </testsuite>\n", j->f);
}

/* Totals over every suite, for the <testsuites> element. */
static void totals(jctx *j, size_t *tests, size_t *failures)
{
    const model *m = j->ctx->an->m;
    size_t i;

    *tests = *failures = 0;
    for (i = 0; i < m->nruns; i++) {
        if (m->runs[i]->superseded)
            continue;
        collect_rules(j, m->runs[i]->source, i);
        *tests += j->nrules;
        *failures += suite_failures(j, i);
    }
    collect_rules(j, "*", SIZE_MAX);
    *tests += j->nrules + j->ctx->res->ne;
    *failures += suite_failures(j, SIZE_MAX);
}

int report_junit(const report_ctx *ctx)
{
    const model *m = ctx->an->m;
    jctx *j = calloc(1, sizeof *j);
    size_t i, tests, failures;

    if (!j)
        return OP_ENOMEM;
    j->f = ctx->out;
    j->ctx = ctx;
    j->fail_level = report_fail_level(ctx);
    totals(j, &tests, &failures);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", j->f);
    fprintf(j->f, "<testsuites name=\"opti-pipe\" tests=\"%zu\" failures=\"%zu\" "
            "errors=\"%zu\" time=\"0\">\n", tests, failures, ctx->res->ne);
    for (i = 0; i < m->nruns; i++)
        if (!m->runs[i]->superseded)
            put_suite(j, m->runs[i], i);
    put_suite(j, NULL, SIZE_MAX);
    put_rule_errors(j);
    fputs("</testsuites>\n", j->f);
    free(j);
    return ferror(ctx->out) ? OP_EIO : 0;
}
