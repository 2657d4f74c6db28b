/*
 * report_sarif.c - SARIF 2.1.0 for code-scanning dashboards (GitHub code
 * scanning, Azure DevOps, SonarQube import): one run of the tool
 * "opti-pipe", the loaded rules as reportingDescriptors (help from each
 * bundled rule's docs/rules/<id>.md), one result per finding with our
 * fingerprint as partialFingerprints, the node as a logical location and,
 * when one exists, a physical location: the dbt model's file from the
 * manifest, else the input file the run came from.
 *
 * Strings pass report_clean_dup() (no control characters: dashboards show
 * them raw) before the JSON writer, which escapes the rest and, like for
 * every JSON output, replaces broken UTF-8 by U+FFFD (jw_write_string).
 * helpUri needs an absolute URI: it is written only when OPTIPIPE_DOCS_URL
 * names where docs/ is published.
 */
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "report_util.h"
#include "util.h"

#define SARIF_SCHEMA "https://json.schemastore.org/sarif-2.1.0.json"
#define SARIF_FP_KEY "optipipe/v1"
#define SARIF_MAX_RULES 4096

typedef struct sctx {
    jw w;
    const report_ctx *ctx;
    const char *ids[SARIF_MAX_RULES]; /* rule ids in driver.rules order */
    rule_meta *meta[SARIF_MAX_RULES]; /* NULL for ids only seen in findings */
    size_t nids;
} sctx;

/* A string value without control characters (newlines kept on request). */
static void put_str(sctx *s, const char *v, int keep_newlines)
{
    char *c = report_clean_dup(v, keep_newlines);

    jw_str(&s->w, c ? c : "");
    free(c);
}

static void key_str(sctx *s, const char *key, const char *v)
{
    jw_key(&s->w, key);
    put_str(s, v, 0);
}

static const char *level(severity sev)
{
    return sev == SEV_ERROR ? "error" : sev == SEV_WARNING ? "warning" : "note";
}

static size_t rule_index(const sctx *s, const char *id)
{
    const char **hit = bsearch(&id, s->ids, s->nids, sizeof *s->ids, util_strp_cmp);
    return hit ? (size_t)(hit - s->ids) : SIZE_MAX;
}

static void add_id(sctx *s, const char *id)
{
    size_t i;

    for (i = 0; i < s->nids; i++)
        if (strcmp(s->ids[i], id) == 0)
            return;
    if (s->nids < SARIF_MAX_RULES)
        s->ids[s->nids++] = id;
}

/* Every loaded rule plus any rule id a finding names, sorted by id. */
static void collect_rules(sctx *s)
{
    ruleset *rs = s->ctx->rs;
    size_t i;

    for (i = 0; rs && i < ruleset_count(rs); i++)
        add_id(s, ruleset_rule(rs, i)->id);
    for (i = 0; i < s->ctx->res->n; i++)
        add_id(s, s->ctx->res->f[i].rule);
    qsort(s->ids, s->nids, sizeof *s->ids, util_strp_cmp);
    for (i = 0; i < s->nids; i++)
        s->meta[i] = rs ? ruleset_find(rs, s->ids[i]) : NULL;
}

static void put_help(sctx *s, const rule_meta *rm)
{
    char *doc = rm->trusted ? report_rule_doc(rm->id) : NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&text, &len);

    if (mf) {
        fprintf(mf, "%s", rm->description ? rm->description : rm->title);
        if (rm->trusted)
            fprintf(mf, "\n\nDocumentation: docs/rules/%s.md", rm->id);
        fclose(mf);
    }
    jw_key(&s->w, "help");
    jw_obj(&s->w);
    jw_key(&s->w, "text");
    put_str(s, text ? text : rm->title, 1);
    if (doc) {
        jw_key(&s->w, "markdown");
        put_str(s, doc, 1);
    }
    jw_obj_end(&s->w);
    free(text);
    free(doc);
}

static void put_help_uri(sctx *s, const rule_meta *rm)
{
    const char *base = getenv("OPTIPIPE_DOCS_URL");
    char uri[1024];
    size_t n;

    if (!rm->trusted || !base || !*base || strlen(base) > 800 || !strstr(base, "://"))
        return;
    n = strlen(base);
    snprintf(uri, sizeof uri, "%s%srules/%s.md", base,
             base[n - 1] == '/' ? "" : "/", rm->id);
    key_str(s, "helpUri", uri);
}

static void put_rule(sctx *s, size_t i)
{
    const rule_meta *rm = s->meta[i];
    size_t t;

    jw_obj(&s->w);
    key_str(s, "id", s->ids[i]);
    if (!rm) {
        jw_obj_end(&s->w);
        return;
    }
    jw_key(&s->w, "shortDescription");
    jw_obj(&s->w);
    key_str(s, "text", rm->title);
    jw_obj_end(&s->w);
    jw_key(&s->w, "fullDescription");
    jw_obj(&s->w);
    key_str(s, "text", rm->description ? rm->description : rm->title);
    jw_obj_end(&s->w);
    put_help_uri(s, rm);
    put_help(s, rm);
    jw_key(&s->w, "defaultConfiguration");
    jw_obj(&s->w);
    jw_key(&s->w, "enabled");
    jw_bool(&s->w, rm->enabled);
    jw_key(&s->w, "level");
    jw_str(&s->w, level(rm->sev));
    jw_obj_end(&s->w);
    jw_key(&s->w, "properties");
    jw_obj(&s->w);
    key_str(s, "pack", rm->pack);
    jw_key(&s->w, "tags");
    jw_arr(&s->w);
    for (t = 0; t < rm->ntags; t++)
        put_str(s, rm->tags[t], 0);
    jw_arr_end(&s->w);
    jw_obj_end(&s->w);
    jw_obj_end(&s->w);
}

static void put_driver(sctx *s)
{
    size_t i;

    jw_key(&s->w, "tool");
    jw_obj(&s->w);
    jw_key(&s->w, "driver");
    jw_obj(&s->w);
    jw_key(&s->w, "name");
    jw_str(&s->w, "opti-pipe");
    jw_key(&s->w, "version");
    jw_str(&s->w, OP_VERSION);
    jw_key(&s->w, "semanticVersion");
    jw_str(&s->w, OP_VERSION);
    jw_key(&s->w, "rules");
    jw_arr(&s->w);
    for (i = 0; i < s->nids; i++)
        put_rule(s, i);
    jw_arr_end(&s->w);
    jw_obj_end(&s->w);
    jw_obj_end(&s->w);
}

/* Percent-encodes a path into a URI reference (RFC 3986 unreserved and
 * '/' stay; everything else, spaces and non-ASCII included, is %XX). */
static void put_uri(sctx *s, const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(path), o = 0, i;
    char *u = malloc(n * 3 + 1);

    if (!u)
        return;
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)path[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || strchr("-._~/", c)) {
            u[o++] = (char)c;
        } else {
            u[o++] = '%';
            u[o++] = hex[c >> 4];
            u[o++] = hex[c & 15];
        }
    }
    u[o] = '\0';
    jw_str(&s->w, u);
    free(u);
}

/* The file behind a finding: a dbt node's source file, else the run's
 * first input; NULL when neither is known (bundle-wide findings, stdin). */
static const char *physical_path(const finding *f, const struct op_run *r)
{
    const struct op_node *n = r && f->node_id ? model_find_node(r, f->node_id) : NULL;
    const mentry *file = n ? mmap_get(&n->attrs, "file") : NULL;

    if (file && mentry_type(file) == MV_STR && *file->u.s)
        return file->u.s;
    if (r && r->norigins && strcmp(r->origins[0], "-") != 0)
        return r->origins[0];
    return NULL;
}

static void put_logical(sctx *s, const finding *f, const struct op_run *r)
{
    const struct op_node *n = f->node_id ? model_find_node(r, f->node_id) : NULL;
    char *fq = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&fq, &len);

    if (!mf)
        return;
    fprintf(mf, "%s/%s", r->source, r->id);
    if (f->node_id)
        fprintf(mf, "/%s", f->node_id);
    fclose(mf);
    jw_key(&s->w, "logicalLocations");
    jw_arr(&s->w);
    jw_obj(&s->w);
    key_str(s, "name", f->node_id ? (f->node_name ? f->node_name : f->node_id)
                                  : report_run_name(r));
    key_str(s, "fullyQualifiedName", fq);
    key_str(s, "kind", n && n->kind ? n->kind : f->node_id ? "node" : "run");
    jw_obj_end(&s->w);
    jw_arr_end(&s->w);
    free(fq);
}

static void put_locations(sctx *s, const finding *f)
{
    const model *m = s->ctx->an->m;
    const struct op_run *r = f->run_index < m->nruns ? m->runs[f->run_index] : NULL;
    const char *path = physical_path(f, r);

    if (!r && !path)
        return;
    jw_key(&s->w, "locations");
    jw_arr(&s->w);
    jw_obj(&s->w);
    if (path) {
        jw_key(&s->w, "physicalLocation");
        jw_obj(&s->w);
        jw_key(&s->w, "artifactLocation");
        jw_obj(&s->w);
        jw_key(&s->w, "uri");
        put_uri(s, path);
        jw_obj_end(&s->w);
        jw_obj_end(&s->w);
    }
    if (r)
        put_logical(s, f, r);
    jw_obj_end(&s->w);
    jw_arr_end(&s->w);
}

/* Writes v like jw_cjson, every string (keys too) without controls. */
static void put_clean_json(sctx *s, const cJSON *v, int depth)
{
    const cJSON *c;

    if (!v || depth > 32) {
        jw_null(&s->w);
    } else if (cJSON_IsObject(v)) {
        jw_obj(&s->w);
        cJSON_ArrayForEach(c, v) {
            char *k = report_clean_dup(c->string, 0);
            jw_key(&s->w, k ? k : "");
            free(k);
            put_clean_json(s, c, depth + 1);
        }
        jw_obj_end(&s->w);
    } else if (cJSON_IsArray(v)) {
        jw_arr(&s->w);
        cJSON_ArrayForEach(c, v)
            put_clean_json(s, c, depth + 1);
        jw_arr_end(&s->w);
    } else if (cJSON_IsString(v)) {
        put_str(s, v->valuestring, 0);
    } else {
        jw_cjson(&s->w, v);
    }
}

/* Our own fields, for tools that read more than SARIF standardizes. */
static void put_result_props(sctx *s, const finding *f)
{
    jw_key(&s->w, "properties");
    jw_obj(&s->w);
    if (f->recommendation)
        key_str(s, "recommendation", f->recommendation);
    jw_key(&s->w, "evidence");
    put_clean_json(s, f->evidence, 0);
    jw_key(&s->w, "changes");
    put_clean_json(s, f->changes, 0);
    if (f->impact_ms >= 0) {
        jw_key(&s->w, "timeSavedMs");
        jw_num(&s->w, f->impact_ms);
    }
    if (f->run_id)
        key_str(s, "run", f->run_id);
    if (f->source)
        key_str(s, "source", f->source);
    jw_obj_end(&s->w);
}

static void put_message(sctx *s, const finding *f)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&text, &len);

    if (!mf)
        return;
    fputs(f->message, mf);
    if (f->recommendation)
        fprintf(mf, "\n\nRecommendation: %s", f->recommendation);
    fclose(mf);
    jw_key(&s->w, "message");
    jw_obj(&s->w);
    jw_key(&s->w, "text");
    put_str(s, text, 1);
    jw_obj_end(&s->w);
    free(text);
}

static void put_result(sctx *s, const finding *f)
{
    size_t idx = rule_index(s, f->rule);

    jw_obj(&s->w);
    key_str(s, "ruleId", f->rule);
    if (idx != SIZE_MAX) {
        jw_key(&s->w, "ruleIndex");
        jw_int(&s->w, (int64_t)idx);
    }
    jw_key(&s->w, "level");
    jw_str(&s->w, level(f->sev));
    put_message(s, f);
    put_locations(s, f);
    jw_key(&s->w, "partialFingerprints");
    jw_obj(&s->w);
    jw_key(&s->w, SARIF_FP_KEY);
    jw_str(&s->w, f->fingerprint);
    jw_obj_end(&s->w);
    if (f->suppressed) {
        jw_key(&s->w, "suppressions");
        jw_arr(&s->w);
        jw_obj(&s->w);
        jw_key(&s->w, "kind");
        jw_str(&s->w, "external");
        jw_key(&s->w, "justification");
        jw_str(&s->w, "accepted in the baseline file");
        jw_obj_end(&s->w);
        jw_arr_end(&s->w);
    }
    put_result_props(s, f);
    jw_obj_end(&s->w);
}

/* Rule errors as tool notifications of the invocation. */
static void put_invocation(sctx *s)
{
    const results *res = s->ctx->res;
    size_t i;

    jw_key(&s->w, "invocations");
    jw_arr(&s->w);
    jw_obj(&s->w);
    jw_key(&s->w, "executionSuccessful");
    jw_bool(&s->w, res->ne == 0);
    jw_key(&s->w, "toolExecutionNotifications");
    jw_arr(&s->w);
    for (i = 0; i < res->ne; i++) {
        size_t idx = rule_index(s, res->e[i].rule);
        jw_obj(&s->w);
        jw_key(&s->w, "level");
        jw_str(&s->w, "error");
        jw_key(&s->w, "message");
        jw_obj(&s->w);
        key_str(s, "text", res->e[i].error);
        jw_obj_end(&s->w);
        if (idx != SIZE_MAX) {
            jw_key(&s->w, "associatedRule");
            jw_obj(&s->w);
            key_str(s, "id", res->e[i].rule);
            jw_key(&s->w, "index");
            jw_int(&s->w, (int64_t)idx);
            jw_obj_end(&s->w);
        }
        jw_obj_end(&s->w);
    }
    jw_arr_end(&s->w);
    jw_obj_end(&s->w);
    jw_arr_end(&s->w);
}

int report_sarif(const report_ctx *ctx)
{
    sctx *s = calloc(1, sizeof *s);
    size_t i;

    if (!s)
        return OP_ENOMEM;
    s->ctx = ctx;
    collect_rules(s);
    jw_init(&s->w, ctx->out, 1);
    jw_obj(&s->w);
    jw_key(&s->w, "$schema");
    jw_str(&s->w, SARIF_SCHEMA);
    jw_key(&s->w, "version");
    jw_str(&s->w, "2.1.0");
    jw_key(&s->w, "runs");
    jw_arr(&s->w);
    jw_obj(&s->w);
    put_driver(s);
    put_invocation(s);
    jw_key(&s->w, "results");
    jw_arr(&s->w);
    for (i = 0; i < ctx->res->n; i++)
        if (report_visible(ctx, &ctx->res->f[i]))
            put_result(s, &ctx->res->f[i]);
    jw_arr_end(&s->w);
    jw_key(&s->w, "columnKind");
    jw_str(&s->w, "unicodeCodePoints");
    jw_obj_end(&s->w);
    jw_arr_end(&s->w);
    jw_obj_end(&s->w);
    fputc('\n', ctx->out);
    free(s);
    return ferror(ctx->out) ? OP_EIO : 0;
}
