/*
 * parts_spark.c - Databricks' rollover parts, for the engine table's parts
 * probe (core/engine.h, read by core/input_parts.c). Databricks rolls one
 * app's event log over into eventlog-<date>--<time>[.gz] files plus the
 * current eventlog, each starting with
 *   {"Event":"DBCEventLoggingListenerMetadata",...,"Rollover Number":N,
 *    "SparkContext Id":ID}
 * The parts of one app share the SparkContext Id (the key) and are read in
 * Rollover Number order (the order). The numbers are taken as raw text:
 * the SparkContext Id is beyond a double's exact range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "spark_host.h"

static const char part_head[] = "{\"Event\":\"DBCEventLoggingListenerMetadata\"";

/* The digits (an optional '-' first) of the number after "key": in
 * line[0..len), into out (cap > 0). Returns their count, 0 when absent or
 * longer than cap - 1 (then it is no part). */
static size_t raw_number(const char *line, size_t len, const char *key,
                         char *out, size_t cap)
{
    size_t klen = strlen(key), i, n = 0;
    const char *p = NULL, *end = line + len;

    for (i = 0; !p && i + klen <= len; i++)
        if (memcmp(line + i, key, klen) == 0)
            p = line + i + klen;
    out[0] = '\0';
    if (!p)
        return 0;
    while (p < end && (*p == ' ' || *p == ':'))
        p++;
    if (p < end && *p == '-' && n + 1 < cap)
        out[n++] = *p++;
    while (p < end && *p >= '0' && *p <= '9' && n + 1 < cap)
        out[n++] = *p++;
    out[n] = '\0';
    return p < end && *p >= '0' && *p <= '9' ? 0 : n;
}

int spark_part_probe(const char *line, size_t len, char *key, size_t cap,
                     int64_t *order)
{
    char num[24];

    /* the event name first, as Databricks writes it */
    if (len < sizeof part_head - 1 ||
        memcmp(line, part_head, sizeof part_head - 1) != 0)
        return 0;
    if (!raw_number(line, len, "\"SparkContext Id\"", key, cap) ||
        !raw_number(line, len, "\"Rollover Number\"", num, sizeof num))
        return 0;
    *order = strtoll(num, NULL, 10);
    return 1;
}

/* Databricks' names, for parts written without the metadata line (as
 * NVIDIA's spark-rapids-tools reads them: by name): eventlog-YYYY-MM-DD--
 * HH-MM[.codec] in the order of that time, then the current eventlog. */
int spark_part_name(const char *base, const char *line, size_t len,
                    char *key, size_t cap, int64_t *order)
{
    static const char pre[] = "eventlog";
    static const char shape[] = "-dddd-dd-dd--dd-dd";
    static const char ev[] = "{\"Event\":\"";
    int64_t t = 0;
    size_t i;

    if (len < sizeof ev - 1 || memcmp(line, ev, sizeof ev - 1) != 0 ||
        strncmp(base, pre, sizeof pre - 1) != 0 || cap < sizeof "databricks-eventlog")
        return 0;
    base += sizeof pre - 1;
    if (*base == '\0') {
        *order = INT64_MAX; /* the current file comes last */
    } else {
        for (i = 0; i < sizeof shape - 1; i++) {
            if (shape[i] == 'd' ? (base[i] < '0' || base[i] > '9') : base[i] != shape[i])
                return 0;
            if (shape[i] == 'd')
                t = t * 10 + (base[i] - '0');
        }
        if (base[i] != '\0' && base[i] != '.')
            return 0;
        *order = t;
    }
    memcpy(key, "databricks-eventlog", sizeof "databricks-eventlog");
    return 1;
}
