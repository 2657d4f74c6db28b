/*
 * baseline.c - reading, changing and writing the decisions file
 * (baseline.h). Kept sorted by fingerprint in memory as on disk.
 */
#include "baseline.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <optipipe/json.h>

#include "config.h"
#include "wfile.h"
#include "input.h"
#include "jsonw.h"
#include "util.h"

#define BASELINE_FILE_MAX ((size_t)64 << 20)
#define BASELINE_MAX_DECISIONS 1000000

void baseline_init(baseline *b)
{
    memset(b, 0, sizeof *b);
}

static void decision_free(decision *d)
{
    free(d->rule);
    free(d->run);
    free(d->node);
    free(d->reason);
    free(d->decided_at);
}

void baseline_free(baseline *b)
{
    size_t i;

    for (i = 0; i < b->n; i++)
        decision_free(&b->d[i]);
    free(b->d);
    baseline_init(b);
}

static int fp_cmp(const void *a, const void *b)
{
    return strcmp(((const decision *)a)->fingerprint,
                  ((const decision *)b)->fingerprint);
}

static int valid_fp(const char *s)
{
    size_t i;

    for (i = 0; i < 16; i++)
        if (!isxdigit((unsigned char)s[i]))
            return 0;
    return s[16] == '\0';
}

static int grow(baseline *b)
{
    return OP_GROW(b->d, b->cap, b->n + 1, 16);
}

/* ---- reading ------------------------------------------------------------- */

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static char *dup_or_null(const char *s, int *oom)
{
    char *d;

    if (!s)
        return NULL;
    if (!(d = strdup(s)))
        *oom = 1;
    return d;
}

static int read_decision(baseline *b, const cJSON *o, const char *path, int i,
                         op_error *err)
{
    const char *fp = jstr(o, "fingerprint"), *rule = jstr(o, "rule");
    int st = decision_status_parse(jstr(o, "status"));
    decision *d;
    int oom = 0;

    if (!cJSON_IsObject(o) || !fp || !valid_fp(fp))
        return op_error_set(err, OP_EPARSE,
                            "%s: decisions[%d]: needs a 16-hex-digit 'fingerprint'",
                            path, i);
    if (!rule || st < 0)
        return op_error_set(err, OP_EPARSE,
                            "%s: decisions[%d] (%s): needs 'rule' and 'status' "
                            "(approved or dismissed)", path, i, fp);
    if (grow(b))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    d = &b->d[b->n];
    memset(d, 0, sizeof *d);
    memcpy(d->fingerprint, fp, 17);
    d->status = (decision_status)st;
    d->rule = dup_or_null(rule, &oom);
    d->run = dup_or_null(jstr(o, "run"), &oom);
    d->node = dup_or_null(jstr(o, "node"), &oom);
    d->reason = dup_or_null(jstr(o, "reason"), &oom);
    d->decided_at = dup_or_null(jstr(o, "decided_at"), &oom);
    b->n++;
    return oom ? op_error_set(err, OP_ENOMEM, "out of memory") : 0;
}

int baseline_load(const char *path, baseline *b, int missing_ok,
                  op_error *err)
{
    cJSON *root = NULL, *list, *o;
    const cJSON *ver;
    size_t len = 0, i;
    int rc = 0, k = 0;
    char *buf;

    baseline_init(b);
    buf = input_read_file(path, BASELINE_FILE_MAX, &len, err);
    if (!buf)
        return err->code == OP_ENOTFOUND && missing_ok ? 0 : err->code;
    /* the tree bound of every JSON input (optipipe/json.h): checked
     * before cJSON allocates it, not after */
    if ((rc = op_json_check_cost(path, len, op_json_cost(buf, len), err)))
        goto out;
    root = cJSON_ParseWithLength(buf, len);
    if (!root) {
        rc = op_error_set(err, OP_EPARSE, "%s: not valid JSON", path);
        goto out;
    }
    ver = cJSON_GetObjectItemCaseSensitive(root, "optipipe_baseline");
    list = cJSON_GetObjectItemCaseSensitive(root, "decisions");
    if (!cJSON_IsNumber(ver) || !cJSON_IsArray(list)) {
        rc = op_error_set(err, OP_EPARSE,
                          "%s: not an optipipe decisions file (needs "
                          "\"optipipe_baseline\": 1 and \"decisions\": [...])",
                          path);
        goto out;
    }
    if (ver->valuedouble != BASELINE_FORMAT) {
        rc = op_error_set(err, OP_EPARSE,
                          "%s: decisions file format %g; this optipipe reads %d",
                          path, ver->valuedouble, BASELINE_FORMAT);
        goto out;
    }
    if (cJSON_GetArraySize(list) > BASELINE_MAX_DECISIONS) {
        rc = op_error_set(err, OP_ELIMIT, "%s: too many decisions", path);
        goto out;
    }
    cJSON_ArrayForEach(o, list)
        if ((rc = read_decision(b, o, path, ++k, err)))
            goto out;
    if (b->n > 1)
        qsort(b->d, b->n, sizeof *b->d, fp_cmp);
    for (i = 1; i < b->n; i++)
        if (strcmp(b->d[i - 1].fingerprint, b->d[i].fingerprint) == 0) {
            rc = op_error_set(err, OP_EPARSE,
                              "%s: fingerprint %s is decided twice (a merge "
                              "conflict?); keep one of them", path,
                              b->d[i].fingerprint);
            goto out;
        }
out:
    if (rc)
        baseline_free(b);
    cJSON_Delete(root);
    free(buf);
    return rc;
}

/* ---- writing ------------------------------------------------------------- */

static void write_decision(jw *w, const decision *d)
{
    jw_obj(w);
    jw_key(w, "fingerprint");
    jw_str(w, d->fingerprint);
    jw_key(w, "rule");
    jw_str(w, d->rule);
    jw_key(w, "run");
    jw_str(w, d->run);
    if (d->node) {
        jw_key(w, "node");
        jw_str(w, d->node);
    }
    jw_key(w, "status");
    jw_str(w, decision_status_name(d->status));
    if (d->reason) {
        jw_key(w, "reason");
        jw_str(w, d->reason);
    }
    jw_key(w, "decided_at");
    jw_str(w, d->decided_at);
    jw_obj_end(w);
}

int baseline_save(baseline *b, const char *path, op_error *err)
{
    wfile out;
    FILE *f;
    jw w;
    size_t i;
    int rc;

    if (b->n > 1)
        qsort(b->d, b->n, sizeof *b->d, fp_cmp);
    if ((rc = wfile_open(&out, path, err)))
        return rc;
    f = out.f;
    jw_init(&w, f, 1);
    jw_obj(&w);
    jw_key(&w, "optipipe_baseline");
    jw_int(&w, BASELINE_FORMAT);
    jw_key(&w, "decisions");
    jw_arr(&w);
    for (i = 0; i < b->n; i++)
        write_decision(&w, &b->d[i]);
    jw_arr_end(&w);
    jw_obj_end(&w);
    fputc('\n', f);
    return wfile_commit(&out, err);
}

/* ---- changing ------------------------------------------------------------ */

const decision *baseline_find(const baseline *b, const char *fingerprint)
{
    decision key;

    if (!b->n || strlen(fingerprint) != 16)
        return NULL;
    memcpy(key.fingerprint, fingerprint, 17);
    return bsearch(&key, b->d, b->n, sizeof *b->d, fp_cmp);
}

const decision *baseline_decision_for(const baseline *b, const char *fp,
                                      const char *legacy_fp)
{
    const decision *d = fp ? baseline_find(b, fp) : NULL;

    if (!d && legacy_fp && legacy_fp[0] && (!fp || strcmp(legacy_fp, fp)))
        d = baseline_find(b, legacy_fp);
    return d;
}

const decision *baseline_decision_of(const baseline *b, const finding *f)
{
    return baseline_decision_for(b, f->fingerprint, f->legacy_fp);
}

/* Removes the decision at d (one of b's). */
static void baseline_remove(baseline *b, decision *d)
{
    size_t i = (size_t)(d - b->d);

    decision_free(d);
    memmove(&b->d[i], &b->d[i + 1], (b->n - i - 1) * sizeof *b->d);
    b->n--;
}

void baseline_now(char *buf, size_t len)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    time_t t = time(NULL);
    struct tm tm;

    if (sde && *sde) {
        char *end;
        long long v = strtoll(sde, &end, 10);
        if (!*end && v >= 0)
            t = (time_t)v;
    }
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int baseline_put(baseline *b, const char *fingerprint, const char *rule,
                 const char *run, const char *node, decision_status status,
                 const char *reason, const char *when)
{
    decision *d;
    decision nd;
    char now[32];
    int oom = 0;

    if (!fingerprint || !valid_fp(fingerprint))
        return OP_EUSAGE;
    if (!when) {
        baseline_now(now, sizeof now);
        when = now;
    }
    memset(&nd, 0, sizeof nd);
    memcpy(nd.fingerprint, fingerprint, 17);
    nd.status = status;
    nd.rule = dup_or_null(rule ? rule : "", &oom);
    nd.run = dup_or_null(run ? run : "", &oom);
    nd.node = dup_or_null(node, &oom);
    nd.reason = dup_or_null(reason && *reason ? reason : NULL, &oom);
    nd.decided_at = dup_or_null(when, &oom);
    d = (decision *)baseline_find(b, fingerprint);
    if (oom || (!d && grow(b))) {
        decision_free(&nd);
        return OP_ENOMEM;
    }
    if (d) {
        decision_free(d);
        *d = nd;
        return 0;
    }
    b->d[b->n++] = nd;
    /* in order already when added by fingerprint (the store reads so) */
    if (b->n > 1 && fp_cmp(&b->d[b->n - 2], &b->d[b->n - 1]) > 0)
        qsort(b->d, b->n, sizeof *b->d, fp_cmp);
    return 0;
}

int baseline_set(baseline *b, const finding *f, decision_status status,
                 const char *reason, const char *when)
{
    /* A decision kept under the legacy fingerprint is rewritten under the
     * new one (read both, write the new). */
    if (!baseline_find(b, f->fingerprint) && baseline_decision_of(b, f))
        baseline_remove(b, (decision *)baseline_decision_of(b, f));
    return baseline_put(b, f->fingerprint, f->rule, f->run_id, f->node_id,
                        status, reason, when);
}

static int has_fingerprint(const results *res, const char *fp)
{
    size_t i;

    for (i = 0; i < res->n; i++)
        if (strcmp(res->f[i].fingerprint, fp) == 0 ||
            strcmp(res->f[i].legacy_fp, fp) == 0)
            return 1;
    return 0;
}

size_t baseline_prune(baseline *b, const results *res)
{
    size_t i, kept = 0, removed = 0;

    for (i = 0; i < b->n; i++) {
        if (has_fingerprint(res, b->d[i].fingerprint)) {
            b->d[kept++] = b->d[i];
        } else {
            decision_free(&b->d[i]);
            removed++;
        }
    }
    b->n = kept;
    return removed;
}

size_t baseline_apply(const baseline *b, results *res)
{
    size_t i, n = 0;

    for (i = 0; i < res->n; i++)
        if (!res->f[i].suppressed && baseline_decision_of(b, &res->f[i])) {
            res->f[i].suppressed = FINDING_BASELINE;
            n++;
        }
    return n;
}
