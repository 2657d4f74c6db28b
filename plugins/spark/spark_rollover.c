/*
 * spark_rollover.c - Databricks' DBCEventLoggingListenerMetadata lines: the
 * first line of each rollover part of one app's log (the host reads the
 * parts in Rollover Number order as one stream: core/input_parts.c; a file
 * may also hold several parts concatenated). What they give: the Spark
 * version (Databricks writes no SparkListenerLogStart), and gaps: a part
 * missing from the inputs is a hole in the numbers, named in a warning.
 *
 * The SparkContext Id is beyond a double's exact range, so the line is
 * read as text here, never through the number sanitizer.
 */
#include <stdlib.h>
#include <string.h>

#include "spark_internal.h"

/* The digits of the number after "key": in line, into out; 0 if none. */
static size_t raw_digits(const char *line, const char *key, char *out,
                         size_t cap)
{
    const char *p = strstr(line, key);
    size_t n = 0;

    out[0] = '\0';
    if (!p)
        return 0;
    p += strlen(key);
    while (*p == ' ' || *p == ':')
        p++;
    while (*p >= '0' && *p <= '9' && n + 1 < cap)
        out[n++] = *p++;
    out[n] = '\0';
    return n;
}

int sp_on_rollover_line(sp_app *a, const char *line, size_t len,
                        uint64_t line_no)
{
    cJSON *o = cJSON_ParseWithLength(line, len);
    char ctx[sizeof a->dbc_context], num[24];
    long long part;
    const char *v = sp_jstr(o, "Spark Version");

    if (!cJSON_IsObject(o)) { /* malformed (or cut): the caller says so */
        cJSON_Delete(o);
        return -1;
    }
    a->events++;
    a->dbc_seen = 1;
    if (v && !a->dbc_version) {
        a->dbc_version = sp_strdup_max(v, SP_TEXT_MAX);
        if (!a->dbc_version)
            a->oom = 1;
    }
    cJSON_Delete(o);
    raw_digits(line, "\"SparkContext Id\"", ctx, sizeof ctx);
    /* more than 9 digits is no rollover count (and would overflow) */
    if (raw_digits(line, "\"Rollover Number\"", num, sizeof num) - 1 > 8)
        return 0;
    part = strtoll(num, NULL, 10);
    if (a->dbc_parts && ctx[0] && a->dbc_context[0] &&
        strcmp(ctx, a->dbc_context) != 0)
        sp_warn(a, "line %llu: a rollover part of another SparkContext "
                   "(%s, not %s) follows: two apps' logs are mixed here",
                (unsigned long long)line_no, ctx, a->dbc_context);
    else if (!a->dbc_parts && part > 0)
        sp_warn(a, "line %llu: the log starts at Databricks rollover part "
                   "%lld: part%s 0%s%lld %s missing, so the app's start and "
                   "the events before are not in the model",
                (unsigned long long)line_no, part, part > 1 ? "s" : "",
                part > 1 ? "-" : "", part > 1 ? part - 1 : 0,
                part > 1 ? "are" : "is");
    else if (a->dbc_parts && part > a->dbc_last + 2)
        sp_warn(a, "line %llu: Databricks rollover parts %lld-%lld are "
                   "missing (part %lld follows part %lld), so the totals "
                   "miss their events",
                (unsigned long long)line_no, a->dbc_last + 1, part - 1, part,
                a->dbc_last);
    else if (a->dbc_parts && part == a->dbc_last + 2)
        sp_warn(a, "line %llu: Databricks rollover part %lld is missing "
                   "(part %lld follows part %lld), so the totals miss its "
                   "events",
                (unsigned long long)line_no, part - 1, part, a->dbc_last);
    else if (a->dbc_parts && part != a->dbc_last + 1)
        sp_warn(a, "line %llu: Databricks rollover part %lld follows part "
                   "%lld: the parts are out of order (or repeated), so "
                   "Spark's bookkeeping of stages and tasks may be off",
                (unsigned long long)line_no, part, a->dbc_last);
    if (!a->dbc_parts)
        snprintf(a->dbc_context, sizeof a->dbc_context, "%s", ctx);
    a->dbc_last = part;
    a->dbc_parts++;
    return 0;
}
