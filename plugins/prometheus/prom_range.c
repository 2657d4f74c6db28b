/*
 * prom_range.c - Prometheus HTTP API responses: query_range ("matrix":
 * each series with its [[seconds, "value"], ...]) and instant queries
 * ("vector": one [seconds, "value"] each), as `curl .../api/v1/query_range`
 * or Grafana's query inspector save them. Values are strings in the API
 * ("NaN", "+Inf" included); the series' __name__ label is its name.
 */
#include "prom_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <optipipe/json.h>

/* One [seconds, "value"] pair into s. 0, or a static reason. */
static const char *point(const cJSON *pair, prom_sample *s)
{
    const cJSON *t = cJSON_GetArrayItem(pair, 0), *v = cJSON_GetArrayItem(pair, 1);
    char *end;

    if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 ||
        !cJSON_IsNumber(t) || !cJSON_IsString(v))
        return "a [seconds, \"value\"] pair was expected";
    if (!isfinite(t->valuedouble) || fabs(t->valuedouble) > 9.2e12)
        return "the time is out of range";
    s->value = strtod(v->valuestring, &end);
    if (end == v->valuestring || *end || strchr(v->valuestring, '('))
        return "the value is not a number";
    s->has_ts = 1;
    s->ts_ms = (int64_t)llround(t->valuedouble * 1000.0);
    return NULL;
}

/* The labels of one result's "metric" object into s. */
static const char *metric_labels(const cJSON *metric, prom_sample *s)
{
    const cJSON *l;

    if (!cJSON_IsObject(metric))
        return "\"metric\" (an object of labels) was expected";
    s->name = NULL;
    s->nlabels = 0;
    cJSON_ArrayForEach(l, metric) {
        if (!cJSON_IsString(l))
            return "a label value is not a string";
        if (strcmp(l->string, "__name__") == 0) {
            s->name = l->valuestring;
            continue;
        }
        if (s->nlabels == PROM_MAX_LABELS)
            return "more labels than the limit (64) on one series";
        s->labels[s->nlabels].name = l->string;
        s->labels[s->nlabels++].value = l->valuestring;
    }
    if (!s->name || !*s->name)
        return "the series has no __name__ label (a query that keeps the "
               "metric name, not an expression of several)";
    return NULL;
}

static int one_result(const cJSON *r, int matrix, size_t i, const char *in,
                      prom_sample_fn fn, void *ud, op_error *err)
{
    prom_sample s;
    const cJSON *pts = cJSON_GetObjectItemCaseSensitive(r, matrix ? "values"
                                                                  : "value");
    const cJSON *pair;
    const char *why;
    size_t k = 0;
    int rc;

    memset(&s, 0, sizeof s);
    if ((why = metric_labels(cJSON_GetObjectItemCaseSensitive(r, "metric"), &s)))
        return op_error_set(err, OP_EPARSE, "%s: data.result[%zu].metric: %s",
                            in, i, why);
    if (!matrix) {
        if ((why = point(pts, &s)))
            return op_error_set(err, OP_EPARSE, "%s: data.result[%zu].value: "
                                "%s", in, i, why);
        return fn(ud, &s);
    }
    if (!cJSON_IsArray(pts))
        return op_error_set(err, OP_EPARSE, "%s: data.result[%zu].values: a "
                            "list of [seconds, \"value\"] was expected", in, i);
    cJSON_ArrayForEach(pair, pts) {
        if ((why = point(pair, &s)))
            return op_error_set(err, OP_EPARSE, "%s: data.result[%zu]."
                                "values[%zu]: %s", in, i, k, why);
        if ((rc = fn(ud, &s)))
            return rc;
        k++;
    }
    return 0;
}

int prom_range_parse(const char *json, size_t len, const char *in,
                     prom_sample_fn fn, void *ud, op_error *err)
{
    cJSON *root, *data, *res, *r;
    const char *type, *status;
    size_t i = 0;
    int rc = 0, bad = 0;
    op_error first;

    if ((rc = op_json_check_cost(in, len, op_json_cost(json, len), err)))
        return rc;
    if (!(root = cJSON_ParseWithLength(json, len)))
        return op_error_set(err, OP_EPARSE, "%s: not a JSON document (near "
                            "byte %zu)", in,
                            cJSON_GetErrorPtr() ? (size_t)(cJSON_GetErrorPtr() - json) : 0);
    status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root, "status"));
    data = cJSON_GetObjectItemCaseSensitive(root, "data");
    type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "resultType"));
    res = cJSON_GetObjectItemCaseSensitive(data, "result");
    if (status && strcmp(status, "success") != 0) {
        const char *why = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(root, "error"));
        rc = op_error_set(err, OP_EPARSE, "%s: status: the query failed "
                          "(\"%s\": %s)", in, status,
                          why ? why : "no error given");
    }
    else if (!type || (strcmp(type, "matrix") && strcmp(type, "vector")))
        rc = op_error_set(err, OP_EPARSE, "%s: data.resultType: \"matrix\" "
                          "(query_range) or \"vector\" (query) was expected",
                          in);
    else if (!cJSON_IsArray(res))
        rc = op_error_set(err, OP_EPARSE, "%s: data.result: a list was "
                          "expected", in);
    op_error_clear(&first);
    /* a bad series costs that series, not the file */
    cJSON_ArrayForEach(r, (rc ? NULL : res)) {
        int one = one_result(r, strcmp(type, "matrix") == 0, i++, in, fn, ud,
                             bad ? NULL : &first);
        if (one == OP_ENOMEM || one == OP_ELIMIT) {
            rc = one == OP_ELIMIT ? 0 : one;
            if (one == OP_ENOMEM)
                op_error_set(err, OP_ENOMEM, "out of memory");
            break;
        }
        if (one)
            bad++;
    }
    if (!rc && bad)
        rc = op_error_set(err, first.code ? first.code : OP_EPARSE,
                          "%s%s", first.msg, bad > 1 ? " (and more series "
                          "like it; every other series was read)" : "");
    cJSON_Delete(root);
    return rc;
}
