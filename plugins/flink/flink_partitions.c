/*
 * flink_partitions.c - the partition count of a Kafka source, derived from
 * metric names: Flink's KafkaSourceReader registers, per subtask and
 * assigned partition, "...KafkaSourceReader.topic.<t>.partition.<n>.
 * currentOffset" (and committedOffset); the REST API tells the partitions
 * no other way. The distinct (topic, partition) pairs are counted in a
 * bounded hash set (FL_MAX_PARTITIONS; past it the count is unknown).
 */
#include <stdlib.h>
#include <string.h>

#include "flink_internal.h"

#define FL_TOPIC_MAX 249 /* Kafka's longest topic name */

static const char topic_tag[] = "KafkaSourceReader.topic.";
static const char part_tag[] = ".partition.";

/* The suffix of an offset metric ending name (n bytes), or 0. */
static size_t offset_suffix(const char *name, size_t n)
{
    static const char *const sfx[] = {".currentOffset", ".committedOffset"};
    size_t i, k;

    for (i = 0; i < 2; i++) {
        k = strlen(sfx[i]);
        if (n > k && !memcmp(name + n - k, sfx[i], k))
            return k;
    }
    return 0;
}

/* The last ".partition." in [from, to), or NULL. */
static const char *last_part_tag(const char *from, const char *to)
{
    size_t k = sizeof part_tag - 1;
    const char *p;

    if ((size_t)(to - from) < k)
        return NULL;
    for (p = to - k; p >= from; p--)
        if (!memcmp(p, part_tag, k))
            return p;
    return NULL;
}

int fl_partition_name(const char *name, const char **topic, size_t *tlen,
                      int32_t *part)
{
    const char *t = strstr(name, topic_tag), *pt, *d, *end;
    size_t n = strlen(name), sfx = offset_suffix(name, n);
    int64_t v = 0;

    if (!t || !sfx)
        return 0;
    t += sizeof topic_tag - 1;
    end = name + n - sfx;
    pt = end > t ? last_part_tag(t, end) : NULL;
    if (!pt)
        return 0;
    d = pt + sizeof part_tag - 1;
    if (d == end || end - d > 10 || pt == t || pt - t > FL_TOPIC_MAX)
        return -1;
    for (; d < end; d++) {
        if (*d < '0' || *d > '9')
            return -1;
        v = v * 10 + (*d - '0');
    }
    if (v > INT32_MAX)
        return -1;
    *topic = t;
    *tlen = (size_t)(pt - t);
    *part = (int32_t)v;
    return 1;
}

static size_t slot_of(const char *t, size_t tlen, int32_t part, size_t mask)
{
    size_t h = 1469598103934665603u, i;

    for (i = 0; i < tlen; i++)
        h = (h ^ (unsigned char)t[i]) * 1099511628211u;
    h = (h ^ (size_t)(uint32_t)part) * 1099511628211u;
    return h & mask;
}

static int parts_has(const fl_parts *p, const char *t, size_t tlen,
                     int32_t part, size_t *at)
{
    size_t i = slot_of(t, tlen, part, p->cap - 1);

    for (; p->slot[i].topic; i = (i + 1) & (p->cap - 1))
        if (p->slot[i].part == part && p->slot[i].tlen == tlen &&
            !memcmp(p->slot[i].topic, t, tlen)) {
            *at = i;
            return 1;
        }
    *at = i;
    return 0;
}

static int parts_grow(fl_parts *p)
{
    size_t ncap = p->cap ? p->cap * 2 : 64, i, at;
    fl_parts np = *p;

    np.slot = calloc(ncap, sizeof *np.slot);
    if (!np.slot)
        return p->oom = 1;
    np.cap = ncap;
    for (i = 0; i < p->cap; i++)
        if (p->slot[i].topic) {
            parts_has(&np, p->slot[i].topic, p->slot[i].tlen,
                      p->slot[i].part, &at);
            np.slot[at] = p->slot[i];
        }
    free(p->slot);
    *p = np;
    return 0;
}

/* Counts t among the topics (the first FL_MAX_TOPICS are kept: a source
 * reads few topics, so a scan). */
static void count_topic(fl_parts *p, const char *t, size_t tlen)
{
    size_t i;

    for (i = 0; i < p->topics && i < FL_MAX_TOPICS; i++)
        if (p->tlen[i] == tlen && !memcmp(p->topic[i], t, tlen))
            return;
    if (p->topics < FL_MAX_TOPICS) {
        p->topic[p->topics] = t;
        p->tlen[p->topics] = tlen;
    }
    if (p->topics <= FL_MAX_TOPICS)
        p->topics++;
}

void fl_parts_add(fl_parts *p, const char *name)
{
    const char *t;
    size_t tlen, at;
    int32_t part;
    int rc = fl_partition_name(name, &t, &tlen, &part);

    if (rc == 0)
        return;
    if (rc < 0) {
        p->bad++;
        return;
    }
    p->names++;
    if (p->over || p->oom)
        return;
    if (p->cap && parts_has(p, t, tlen, part, &at))
        return;
    if (p->n == FL_MAX_PARTITIONS) {
        p->over = 1;
        return;
    }
    if ((p->n + 1) * 2 > p->cap && parts_grow(p))
        return;
    parts_has(p, t, tlen, part, &at);
    count_topic(p, t, tlen);
    p->slot[at].topic = t;
    p->slot[at].tlen = tlen;
    p->slot[at].part = part;
    p->n++;
}

void fl_parts_free(fl_parts *p)
{
    free(p->slot);
    memset(p, 0, sizeof *p);
}
