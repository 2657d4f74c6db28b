/*
 * spark_scan.c - the allocation-free scanner for SparkListenerTaskStart and
 * SparkListenerTaskEnd lines, which are nearly every line of a big log.
 *
 * It walks the JSON object strictly enough to find the members it needs,
 * whatever their order, and skips everything else (the Accumulables array
 * is most of a TaskEnd line) with a table-driven loop. It never allocates
 * and never reads past the line's NUL. Any surprise (a wrong type, a nesting
 * deeper than 64, trailing bytes) makes it give up: the caller then hands
 * the line to cJSON, which either reads it or names it malformed, so the
 * scanner only has to be fast on the lines Spark writes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "spark_internal.h"

/* Character classes inside strings. */
enum { S_PLAIN = 0, S_QUOTE, S_ESC, S_END };

static const unsigned char str_cls[256] = {
    ['"'] = S_QUOTE, ['\\'] = S_ESC, [0] = S_END,
};

static const char *ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* p just after an opening quote; returns just after the closing one. */
static const char *str_end(const char *p)
{
    for (;;) {
        const unsigned char *u = (const unsigned char *)p;
        while (str_cls[*u] == S_PLAIN)
            u++;
        p = (const char *)u;
        switch (str_cls[*u]) {
        case S_QUOTE:
            return p + 1;
        case S_ESC:
            if (!p[1])
                return NULL;
            p += 2;
            break;
        default:
            return NULL;
        }
    }
}

/* Masks of one 64-byte block: bit i set when blk[i] is that byte. */
typedef struct block_masks {
    uint64_t quote, bslash, open, close;
} block_masks;

static void block_scan(const char *blk, block_masks *m)
{
#if defined(__SSE2__)
    int k;

    memset(m, 0, sizeof *m);
    for (k = 0; k < 4; k++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(blk + 16 * k));
        __m128i t = _mm_or_si128(v, _mm_set1_epi8(0x20)); /* [ -> {, ] -> } */
        int sh = 16 * k;
        m->quote |= (uint64_t)(unsigned)_mm_movemask_epi8(
                        _mm_cmpeq_epi8(v, _mm_set1_epi8('"')))
                    << sh;
        m->bslash |= (uint64_t)(unsigned)_mm_movemask_epi8(
                         _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')))
                     << sh;
        m->open |= (uint64_t)(unsigned)_mm_movemask_epi8(
                       _mm_cmpeq_epi8(t, _mm_set1_epi8('{')))
                   << sh;
        m->close |= (uint64_t)(unsigned)_mm_movemask_epi8(
                        _mm_cmpeq_epi8(t, _mm_set1_epi8('}')))
                    << sh;
    }
#else
    int i;

    memset(m, 0, sizeof *m);
    for (i = 0; i < 64; i++) {
        unsigned char c = (unsigned char)blk[i];
        uint64_t bit = (uint64_t)1 << i;
        if (c == '"')
            m->quote |= bit;
        else if (c == '\\')
            m->bslash |= bit;
        else if ((c | 0x20) == '{')
            m->open |= bit;
        else if ((c | 0x20) == '}')
            m->close |= bit;
    }
#endif
}

static int popcount64(uint64_t x)
{
#if defined(__POPCNT__)
    return __builtin_popcountll(x);
#else
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((x * 0x0101010101010101ULL) >> 56);
#endif
}

/* Bit i = parity of the set bits at positions <= i. */
static uint64_t prefix_xor(uint64_t x)
{
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
}

/* Skips an object or array starting at p ('{' or '['): finds the bracket
 * that closes it outside strings. Blocks of 64 bytes without a backslash
 * are classified at once (quote parity by prefix XOR, then only bracket
 * counts); other bytes go one by one. This is most of the speed of a
 * TaskEnd line, whose Accumulables array is skipped here. Bracket kinds
 * are not matched against each other: the content is skipped, not used. */
static const char *skip_nested(const char *p, const char *end)
{
    long depth = 0;
    int in_str = 0;
    const char *q = p;

    while (q < end) {
        if (end - q >= 64) {
            block_masks m;
            uint64_t inside, br, op, cl;
            block_scan(q, &m);
            if (!m.bslash) {
                inside = prefix_xor(m.quote);
                if (in_str)
                    inside = ~inside;
                op = m.open & ~inside;
                cl = m.close & ~inside;
                if (inside >> 63)
                    in_str = 1;
                else
                    in_str = 0;
                if (!cl || popcount64(cl) < depth) {
                    depth += popcount64(op) - popcount64(cl);
                    q += 64;
                    continue;
                }
                for (br = op | cl; br; br &= br - 1) {
                    int i = __builtin_ctzll(br);
                    depth += (op >> i) & 1 ? 1 : -1;
                    if (depth == 0)
                        return q + i + 1;
                }
                q += 64;
                continue;
            }
        }
        /* one byte at a time up to the next block boundary */
        {
            const char *stop = end - q >= 64 ? q + 64 : end;
            for (; q < stop; q++) {
                char c = *q;
                if (in_str) {
                    if (c == '"')
                        in_str = 0;
                    else if (c == '\\') {
                        if (++q >= end)
                            return NULL;
                    }
                    continue;
                }
                if (c == '"') {
                    in_str = 1;
                } else if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    if (--depth == 0)
                        return q + 1;
                    if (depth < 0)
                        return NULL;
                } else if (c == '\\' || c == '\0') {
                    return NULL;
                }
            }
        }
    }
    return NULL;
}

static const char *skip_value(const char *p, const char *end)
{
    switch (*p) {
    case '"':
        return str_end(p + 1);
    case '{':
    case '[':
        return skip_nested(p, end);
    case 't':
        return strncmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f':
        return strncmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n':
        return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default: {
        const char *q = p;
        if (*q == '-')
            q++;
        if (*q < '0' || *q > '9')
            return NULL;
        while ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' ||
               *q == 'E' || *q == '+' || *q == '-')
            q++;
        return q;
    }
    }
}

/* Reads a JSON number as int64 (fractions truncated). null reads as 0, as
 * Spark's reader would default it. A number beyond +-SP_NUM_LIMIT fails:
 * the line then goes to cJSON, whose sanitizer warns about it. */
static const char *read_int(const char *p, int64_t *v)
{
    const char *q = p;
    uint64_t acc = 0;
    int neg = 0, digits = 0;

    if (*q == 'n')
        return strncmp(q, "null", 4) == 0 ? (*v = 0, q + 4) : NULL;
    if (*q == '-') {
        neg = 1;
        q++;
    }
    while (*q >= '0' && *q <= '9' && digits < 18) {
        acc = acc * 10 + (uint64_t)(*q - '0');
        q++;
        digits++;
    }
    if (!digits)
        return NULL;
    if ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' || *q == 'E') {
        char *end;
        double d = strtod(p, &end);
        if (end == p || !(fabs(d) <= SP_NUM_LIMIT))
            return NULL;
        *v = (int64_t)d;
        return end;
    }
    if (acc > (uint64_t)SP_NUM_LIMIT)
        return NULL;
    *v = neg ? -(int64_t)acc : (int64_t)acc;
    return q;
}

static const char *read_str(const char *p, sp_span *out)
{
    const char *e;

    if (*p != '"')
        return NULL;
    e = str_end(p + 1);
    if (!e)
        return NULL;
    out->s = p + 1;
    out->n = (size_t)(e - p - 2);
    return e;
}

static const char *read_bool(const char *p, int *v)
{
    if (strncmp(p, "true", 4) == 0) {
        *v = 1;
        return p + 4;
    }
    if (strncmp(p, "false", 5) == 0) {
        *v = 0;
        return p + 5;
    }
    if (strncmp(p, "null", 4) == 0) {
        *v = 0;
        return p + 4;
    }
    return NULL;
}

/* Object iteration: p at '{'. obj_next() moves to the next member and
 * returns its key span; the member value starts at *val. Returns 1 for a
 * member, 0 at the closing brace (*after set past it), -1 on error. */
typedef struct obj_it {
    const char *p, *end;
    int first;
} obj_it;

static int obj_begin(obj_it *it, const char *p, const char *end)
{
    p = ws(p);
    if (*p != '{')
        return -1;
    it->p = p + 1;
    it->end = end;
    it->first = 1;
    return 0;
}

static int obj_next(obj_it *it, sp_span *key, const char **val)
{
    const char *p = ws(it->p);

    if (*p == '}') {
        it->p = p + 1;
        return 0;
    }
    if (!it->first) {
        if (*p != ',')
            return -1;
        p = ws(p + 1);
    }
    it->first = 0;
    p = read_str(p, key);
    if (!p)
        return -1;
    p = ws(p);
    if (*p != ':')
        return -1;
    *val = ws(p + 1);
    return 1;
}

#define KEY_IS(k, lit)                                                     \
    ((k).n == sizeof(lit) - 1 && memcmp((k).s, lit, sizeof(lit) - 1) == 0)

/* Whether bit i of *seen was set already (then the key is duplicated and
 * the line goes to cJSON, which warns and keeps the last value); sets it. */
static int seen_twice(uint32_t *seen, size_t i)
{
    uint32_t bit = (uint32_t)1 << i;

    if (*seen & bit)
        return 1;
    *seen |= bit;
    return 0;
}

/* Reads the members of an object whose values are all numbers we may want,
 * through a table of (key, destination). Unknown members are skipped. */
typedef struct int_field {
    const char *key;
    size_t len;
    int64_t *dst;
} int_field;

static const char *read_int_obj(const char *p, const char *end,
                                const int_field *f, size_t nf)
{
    obj_it it;
    sp_span k;
    const char *v;
    uint32_t seen = 0;
    int r;

    if (*p == 'n')
        return strncmp(p, "null", 4) == 0 ? p + 4 : NULL;
    if (obj_begin(&it, p, end))
        return NULL;
    while ((r = obj_next(&it, &k, &v)) == 1) {
        size_t i;
        const char *e = NULL;
        for (i = 0; i < nf; i++)
            if (k.n == f[i].len && memcmp(k.s, f[i].key, k.n) == 0) {
                e = seen_twice(&seen, i) ? NULL : read_int(v, f[i].dst);
                break;
            }
        if (i == nf)
            e = skip_value(v, it.end);
        if (!e)
            return NULL;
        it.p = e;
    }
    return r == 0 ? it.p : NULL;
}

#define F(lit, dst) {lit, sizeof(lit) - 1, dst}

static const char *read_shuffle_read(const char *p, const char *end,
                                     sp_metrics *m)
{
    int64_t ignore;
    const int_field f[] = {
        F("Remote Blocks Fetched", &m->sr_remote_blocks),
        F("Local Blocks Fetched", &m->sr_local_blocks),
        F("Fetch Wait Time", &m->sr_fetch_wait_ms),
        F("Remote Bytes Read", &m->sr_remote_bytes),
        F("Remote Bytes Read To Disk", &m->sr_remote_disk_bytes),
        F("Local Bytes Read", &m->sr_local_bytes),
        F("Total Records Read", &m->sr_records),
        F("Remote Requests Duration", &ignore),
    };
    return read_int_obj(p, end, f, sizeof f / sizeof f[0]);
}

static const char *read_metrics(const char *p, const char *end,
                                sp_metrics *m)
{
    obj_it it;
    sp_span k;
    const char *v;
    int r;
    const int_field top[] = {
        F("Executor Deserialize Time", &m->deser_ms),
        F("Executor Deserialize CPU Time", &m->deser_cpu_ns),
        F("Executor Run Time", &m->run_ms),
        F("Executor CPU Time", &m->cpu_ns),
        F("Peak Execution Memory", &m->peak_mem),
        F("Result Size", &m->result_size),
        F("JVM GC Time", &m->gc_ms),
        F("Result Serialization Time", &m->ser_ms),
        F("Memory Bytes Spilled", &m->mem_spill),
        F("Disk Bytes Spilled", &m->disk_spill),
    };
    const int_field sw[] = {
        F("Shuffle Bytes Written", &m->sw_bytes),
        F("Shuffle Write Time", &m->sw_time_ns),
        F("Shuffle Records Written", &m->sw_records),
    };
    const int_field in[] = {
        F("Bytes Read", &m->in_bytes),
        F("Records Read", &m->in_records),
    };
    const int_field out[] = {
        F("Bytes Written", &m->out_bytes),
        F("Records Written", &m->out_records),
    };

    const size_t ntop = sizeof top / sizeof top[0];
    uint32_t seen = 0;

    if (obj_begin(&it, p, end))
        return NULL;
    while ((r = obj_next(&it, &k, &v)) == 1) {
        const char *e = NULL;
        size_t i;
        for (i = 0; i < ntop; i++)
            if (k.n == top[i].len && memcmp(k.s, top[i].key, k.n) == 0)
                break;
        if (i < ntop)
            e = seen_twice(&seen, i) ? NULL : read_int(v, top[i].dst);
        else if (KEY_IS(k, "Shuffle Read Metrics"))
            e = seen_twice(&seen, ntop) ? NULL : read_shuffle_read(v, end, m);
        else if (KEY_IS(k, "Shuffle Write Metrics"))
            e = seen_twice(&seen, ntop + 1)
                    ? NULL
                    : read_int_obj(v, end, sw, sizeof sw / sizeof sw[0]);
        else if (KEY_IS(k, "Input Metrics"))
            e = seen_twice(&seen, ntop + 2)
                    ? NULL
                    : read_int_obj(v, end, in, sizeof in / sizeof in[0]);
        else if (KEY_IS(k, "Output Metrics"))
            e = seen_twice(&seen, ntop + 3)
                    ? NULL
                    : read_int_obj(v, end, out, sizeof out / sizeof out[0]);
        else
            e = skip_value(v, it.end);
        if (!e)
            return NULL;
        it.p = e;
    }
    return r == 0 ? it.p : NULL;
}

/* "Task Executor Metrics" (Spark 3.0+): the executor's peaks while the
 * task ran, names from sp_peak_keys. */
static const char *read_peaks(const char *p, const char *end, sp_task *t)
{
    int_field f[SP_PK_COUNT];
    int i;

    for (i = 0; i < SP_PK_COUNT; i++) {
        f[i].key = sp_peak_keys[i].spark;
        f[i].len = sp_peak_keys[i].len;
        f[i].dst = &t->peak[i];
    }
    t->has_peak = *p == '{';
    return read_int_obj(p, end, f, SP_PK_COUNT);
}

static const char *read_task_info(const char *p, const char *end,
                                  sp_task *t)
{
    /* lengths known at compile time: this runs for every task line */
#define K(lit) {lit, sizeof(lit) - 1}
    static const struct { const char *s; size_t n; } keys[] = {
        K("Task ID"),     K("Index"),       K("Attempt"),     K("Partition ID"),
        K("Launch Time"), K("Finish Time"), K("Executor ID"), K("Host"),
        K("Speculative"),
    };
#undef K
    const size_t nk = sizeof keys / sizeof keys[0];
    obj_it it;
    sp_span k;
    const char *v;
    uint32_t seen = 0;
    int r;

    if (obj_begin(&it, p, end))
        return NULL;
    while ((r = obj_next(&it, &k, &v)) == 1) {
        const char *e;
        size_t i;
        for (i = 0; i < nk; i++)
            if (k.n == keys[i].n && memcmp(k.s, keys[i].s, k.n) == 0)
                break;
        if (i < nk && seen_twice(&seen, i))
            return NULL;
        switch (i) {
        case 0: e = read_int(v, &t->task_id); break;
        case 1: e = read_int(v, &t->index); break;
        case 2: e = read_int(v, &t->attempt); break;
        case 3: e = read_int(v, &t->partition); break;
        case 4: e = read_int(v, &t->launch); break;
        case 5: e = read_int(v, &t->finish); break;
        case 6: e = read_str(v, &t->executor); break;
        case 7: e = read_str(v, &t->host); break;
        case 8: e = read_bool(v, &t->speculative); break;
        default: e = skip_value(v, it.end); break;
        }
        if (!e)
            return NULL;
        it.p = e;
    }
    return r == 0 ? it.p : NULL;
}

static int classify_reason(sp_span r)
{
    if (KEY_IS(r, "Success"))
        return SP_R_SUCCESS;
    if (KEY_IS(r, "TaskKilled"))
        return SP_R_KILLED;
    if (KEY_IS(r, "TaskCommitDenied"))
        return SP_R_COMMIT_DENIED;
    return SP_R_FAILED;
}

static const char *read_reason(const char *p, const char *end,
                               sp_task *t)
{
    obj_it it;
    sp_span k;
    const char *v, *start = p;
    uint32_t seen = 0;
    int r;

    if (obj_begin(&it, p, end))
        return NULL;
    while ((r = obj_next(&it, &k, &v)) == 1) {
        const char *e;
        if (KEY_IS(k, "Reason"))
            e = seen_twice(&seen, 0) ? NULL : read_str(v, &t->reason_name);
        else
            e = skip_value(v, it.end);
        if (!e)
            return NULL;
        it.p = e;
    }
    if (r != 0)
        return NULL;
    t->reason_obj.s = start;
    t->reason_obj.n = (size_t)(it.p - start);
    return it.p;
}

int sp_scan_event(const char *line, sp_span *name)
{
    static const char pre[] = "{\"Event\":\"";
    const char *e;

    name->s = "";
    name->n = 0;
    if (strncmp(line, pre, sizeof pre - 1) != 0)
        return SP_EV_OTHER;
    e = str_end(line + sizeof pre - 1);
    if (!e)
        return SP_EV_OTHER;
    name->s = line + sizeof pre - 1;
    name->n = (size_t)(e - name->s - 1);
    if (KEY_IS(*name, "SparkListenerTaskEnd"))
        return SP_EV_TASK_END;
    if (KEY_IS(*name, "SparkListenerTaskStart"))
        return SP_EV_TASK_START;
    return SP_EV_OTHER;
}

int sp_scan_task(const char *line, size_t len, int end_event, sp_task *t)
{
    obj_it it;
    sp_span k;
    const char *v;
    uint32_t seen = 0;
    int r, have_info = 0;

    memset(t, 0, sizeof *t);
    t->partition = -1;
    t->index = -1;
    t->reason_name.s = "Success";
    t->reason_name.n = 7;
    if (obj_begin(&it, line, line + len))
        return -1;
    while ((r = obj_next(&it, &k, &v)) == 1) {
        const char *e;
        if (KEY_IS(k, "Stage ID"))
            e = seen_twice(&seen, 0) ? NULL : read_int(v, &t->stage_id);
        else if (KEY_IS(k, "Stage Attempt ID"))
            e = seen_twice(&seen, 1) ? NULL : read_int(v, &t->stage_attempt);
        else if (KEY_IS(k, "Task Info")) {
            e = seen_twice(&seen, 2) ? NULL : read_task_info(v, it.end, t);
            have_info = 1;
        } else if (end_event && KEY_IS(k, "Task Metrics")) {
            if (seen_twice(&seen, 3)) {
                e = NULL;
            } else if (*v == 'n') {
                e = skip_value(v, it.end);
            } else {
                e = read_metrics(v, it.end, &t->m);
                t->has_metrics = 1;
            }
        } else if (end_event && KEY_IS(k, "Task Executor Metrics")) {
            e = seen_twice(&seen, 6) ? NULL : read_peaks(v, it.end, t);
        } else if (end_event && KEY_IS(k, "Task End Reason"))
            e = seen_twice(&seen, 4) ? NULL : read_reason(v, it.end, t);
        else if (KEY_IS(k, "Event")) /* a second one would win in Spark */
            e = seen_twice(&seen, 5) ? NULL : skip_value(v, it.end);
        else
            e = skip_value(v, it.end);
        if (!e)
            return -1;
        it.p = e;
    }
    if (r != 0 || !have_info)
        return -1;
    v = ws(it.p);
    if (*v)
        return -1;
    t->reason = classify_reason(t->reason_name);
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static size_t put_utf8(char *out, size_t room, unsigned cp)
{
    char b[4];
    size_t n;

    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    }
    if (n > room)
        return 0;
    memcpy(out, b, n);
    return n;
}

size_t sp_unescape(sp_span in, char *out, size_t cap)
{
    size_t i = 0, o = 0;

    while (i < in.n && o + 1 < cap) {
        char c = in.s[i++];
        if (c != '\\' || i >= in.n) {
            out[o++] = c;
            continue;
        }
        c = in.s[i++];
        switch (c) {
        case 'n':
            out[o++] = '\n';
            break;
        case 't':
            out[o++] = '\t';
            break;
        case 'r':
            out[o++] = '\r';
            break;
        case 'b':
            out[o++] = '\b';
            break;
        case 'f':
            out[o++] = '\f';
            break;
        case 'u': {
            unsigned cp = 0;
            int j, ok = i + 4 <= in.n;
            for (j = 0; ok && j < 4; j++) {
                int h = hexval((unsigned char)in.s[i + (size_t)j]);
                if (h < 0)
                    ok = 0;
                else
                    cp = cp * 16 + (unsigned)h;
            }
            if (!ok) {
                out[o++] = '?';
                break;
            }
            i += 4;
            if (cp >= 0xD800 && cp <= 0xDFFF)
                cp = 0xFFFD; /* surrogates: not worth pairing here */
            {
                size_t w = put_utf8(out + o, cap - 1 - o, cp);
                if (!w)
                    goto done;
                o += w;
            }
            break;
        }
        default: /* \" \\ \/ and anything else: the character itself */
            out[o++] = c;
            break;
        }
    }
done:
    out[o] = '\0';
    return o;
}
