/*
 * csv.c - an example external optipipe input plugin: per-task timings in a
 * small CSV, one node per stage (see README.md next to this file).
 *
 * It is built the way a third party would build a plugin: against
 * sdk/include only, as a shared module exporting op_plugin_entry. Every
 * limit below bounds what a hostile file can make it allocate.
 */
#include <optipipe/plugin.h>
#include <optipipe/grow.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CSV_HEADER "stage,task,duration_ms"
#define CSV_BYTES_COLUMN ",input_bytes"
#define CSV_MAX_FIELDS 4
#define CSV_MAX_STAGE_LEN 128
#define CSV_MAX_STAGES 10000
#define CSV_HASH_SLOTS 32768 /* power of two, > 2 * CSV_MAX_STAGES */
#define CSV_MAX_ROWS 5000000
#define CSV_MAX_WARNINGS 20

typedef struct csv_stage {
    char *name;
    double *dur, *bytes; /* one per row; bytes NaN when the cell is empty */
    size_t n, cap;
} csv_stage;

typedef struct csv_state {
    const char *file; /* the stream's name, for messages */
    op_builder *b;
    op_run *run;
    int has_bytes;
    uint64_t line, rows, bad;
    csv_stage *stages;
    size_t nstages, cap;
    uint32_t *slots; /* hash of stage name -> index + 1; 0 = empty */
} csv_state;

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (strcmp(path, "-") == 0)
        return "stdin";
    return slash && slash[1] ? slash + 1 : path;
}

/* "stage,task,duration_ms" at the start, then the end of the line or of
 * the probe, a ',' or a line break. A UTF-8 byte order mark is skipped. */
static int header_at(const unsigned char *p, size_t len)
{
    size_t hl = strlen(CSV_HEADER);
    if (len >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf) {
        p += 3;
        len -= 3;
    }
    if (len < hl || memcmp(p, CSV_HEADER, hl) != 0)
        return 0;
    return len == hl || p[hl] == ',' || p[hl] == '\r' || p[hl] == '\n';
}

static int csv_detect(const op_probe *probe)
{
    return header_at(probe->head, probe->head_len) ? 90 : 0;
}

static uint32_t hash_name(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    while (*s)
        h = (h ^ (unsigned char)*s++) * 16777619u;
    return h;
}

static void warn(csv_state *st, const char *fmt, ...) OP_PRINTF(2, 3);

/* A skipped line becomes a run warning; after CSV_MAX_WARNINGS of them
 * only a count is kept (reported at the end). */
static void warn(csv_state *st, const char *fmt, ...)
{
    char msg[OP_ERROR_MAX];
    int used;
    va_list ap;

    if (++st->bad > CSV_MAX_WARNINGS)
        return;
    used = snprintf(msg, sizeof msg, "%s:%llu: ", st->file,
                    (unsigned long long)st->line);
    if (used < 0 || (size_t)used >= sizeof msg)
        used = 0;
    va_start(ap, fmt);
    vsnprintf(msg + used, sizeof msg - (size_t)used, fmt, ap);
    va_end(ap);
    op_run_warning(st->b, st->run, msg);
}

/* The stage named name, created on first sight; NULL on out of memory or
 * when the stage cap is reached (err set). */
static csv_stage *stage_for(csv_state *st, const char *name, op_error *err)
{
    uint32_t i = hash_name(name) & (CSV_HASH_SLOTS - 1);
    csv_stage *s;

    while (st->slots[i]) {
        s = &st->stages[st->slots[i] - 1];
        if (strcmp(s->name, name) == 0)
            return s;
        i = (i + 1) & (CSV_HASH_SLOTS - 1);
    }
    if (st->nstages == CSV_MAX_STAGES) {
        op_error_set(err, OP_ELIMIT, "%s:%llu: more than %d stages",
                     st->file, (unsigned long long)st->line, CSV_MAX_STAGES);
        return NULL;
    }
    if (OP_GROW(st->stages, st->cap, st->nstages + 1, 16))
        goto oom;
    s = &st->stages[st->nstages];
    memset(s, 0, sizeof *s);
    if (!(s->name = strdup(name)))
        goto oom;
    st->slots[i] = (uint32_t)++st->nstages;
    return s;
oom:
    op_error_set(err, OP_ENOMEM, "%s:%llu: out of memory", st->file,
                 (unsigned long long)st->line);
    return NULL;
}

static int stage_push(csv_stage *s, double dur, double bytes)
{
    /* two arrays, one capacity: s->cap moves only when both have grown */
    size_t dcap = s->cap, bcap = s->cap;

    if (OP_GROW(s->dur, dcap, s->n + 1, 64) ||
        OP_GROW(s->bytes, bcap, s->n + 1, 64))
        return OP_ENOMEM;
    s->cap = dcap;
    s->dur[s->n] = dur;
    s->bytes[s->n] = bytes;
    s->n++;
    return OP_OK;
}

/* A non-negative decimal number filling the whole field (no sign, no
 * spaces, no inf/nan). */
static int parse_number(const char *field, double *out)
{
    char *end;
    if (!((*field >= '0' && *field <= '9') || *field == '.'))
        return 0;
    *out = strtod(field, &end);
    return *end == '\0' && isfinite(*out);
}

/* Splits line in place at ','; returns the field count, or
 * CSV_MAX_FIELDS + 1 when there are more. */
static int split(char *line, char **fields)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == CSV_MAX_FIELDS)
            return CSV_MAX_FIELDS + 1;
        fields[n++] = p;
        p = strchr(p, ',');
        if (!p)
            return n;
        *p++ = '\0';
    }
}

static int stage_name_ok(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len > CSV_MAX_STAGE_LEN)
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}

/* One data line (already without '\r'). Bad lines become warnings; the
 * return value is only for fatal conditions (memory, caps). */
static int parse_row(csv_state *st, char *line, op_error *err)
{
    /* zeroed: gcc -O3 cannot see that split() set the n read below */
    char *f[CSV_MAX_FIELDS] = {0};
    int want = st->has_bytes ? 4 : 3;
    int n = split(line, f);
    double dur, bytes = NAN;
    csv_stage *s;

    if (n != want) {
        warn(st, "expected %d fields, got %s%d; line skipped", want,
             n > CSV_MAX_FIELDS ? "more than " : "",
             n > CSV_MAX_FIELDS ? CSV_MAX_FIELDS : n);
        return OP_OK;
    }
    if (!stage_name_ok(f[0])) {
        warn(st, "stage must be 1 to %d printable characters; line skipped",
             CSV_MAX_STAGE_LEN);
        return OP_OK;
    }
    if (!parse_number(f[2], &dur)) {
        warn(st, "duration_ms '%.40s' is not a non-negative number; line "
                 "skipped",
             f[2]);
        return OP_OK;
    }
    if (st->has_bytes && f[3][0] && !parse_number(f[3], &bytes)) {
        warn(st, "input_bytes '%.40s' is not a non-negative number; line "
                 "skipped",
             f[3]);
        return OP_OK;
    }
    if (st->rows == CSV_MAX_ROWS)
        return op_error_set(err, OP_ELIMIT,
                            "%s:%llu: more than %d task rows; the rest of "
                            "the file is ignored",
                            st->file, (unsigned long long)st->line,
                            CSV_MAX_ROWS);
    if (!(s = stage_for(st, f[0], err)))
        return err->code;
    if (stage_push(s, dur, bytes))
        return op_error_set(err, OP_ENOMEM, "%s:%llu: out of memory",
                            st->file, (unsigned long long)st->line);
    st->rows++;
    return OP_OK;
}

/* Puts every stage seen into the model, in order of first appearance. */
static void emit(csv_state *st)
{
    double task_time = 0;

    for (size_t i = 0; i < st->nstages; i++) {
        csv_stage *s = &st->stages[i];
        char id[sizeof "stage-" + CSV_MAX_STAGE_LEN];
        char name[sizeof "stage " + CSV_MAX_STAGE_LEN];
        double max = 0, sum = 0, bsum = 0;
        size_t nbytes = 0;
        op_node *node;

        snprintf(id, sizeof id, "stage-%s", s->name);
        snprintf(name, sizeof name, "stage %s", s->name);
        for (size_t k = 0; k < s->n; k++) {
            max = s->dur[k] > max ? s->dur[k] : max;
            sum += s->dur[k];
            if (!isnan(s->bytes[k])) {
                bsum += s->bytes[k];
                nbytes++;
            }
        }
        task_time += sum;
        node = op_node_get(st->b, st->run, id);
        op_node_str(st->b, node, OP_F_KIND, "stage");
        op_node_str(st->b, node, OP_F_NAME, name);
        op_node_int(st->b, node, OP_I_PARALLELISM, (int64_t)s->n);
        op_node_metric_int(st->b, node, "tasks", (int64_t)s->n);
        op_node_metric(st->b, node, "duration_ms", max);
        op_node_metric(st->b, node, "task_time_ms", sum);
        op_node_dist_values(st->b, node, "duration_ms", s->dur, s->n);
        if (nbytes) {
            op_node_metric(st->b, node, "input_bytes", bsum);
            op_node_dist_values(st->b, node, "input_bytes", s->bytes, s->n);
        }
    }
    op_run_metric_int(st->b, st->run, "stages", (int64_t)st->nstages);
    op_run_metric_int(st->b, st->run, "tasks", (int64_t)st->rows);
    op_run_metric(st->b, st->run, "task_time_ms", task_time);
    if (st->bad > CSV_MAX_WARNINGS) {
        char msg[OP_ERROR_MAX];
        snprintf(msg, sizeof msg, "%s: %llu more bad lines were skipped",
                 st->file,
                 (unsigned long long)(st->bad - CSV_MAX_WARNINGS));
        op_run_warning(st->b, st->run, msg);
    }
}

static int check_header(csv_state *st, const char *line, size_t len,
                        op_error *err)
{
    size_t hl = strlen(CSV_HEADER), bl = strlen(CSV_BYTES_COLUMN);

    if (len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0) {
        line += 3;
        len -= 3;
    }
    if (len == hl && memcmp(line, CSV_HEADER, hl) == 0)
        return OP_OK;
    if (len == hl + bl && memcmp(line, CSV_HEADER CSV_BYTES_COLUMN,
                                 hl + bl) == 0) {
        st->has_bytes = 1;
        return OP_OK;
    }
    return op_error_set(err, OP_EPARSE,
                        "%s:1: expected the header '" CSV_HEADER
                        "' or '" CSV_HEADER CSV_BYTES_COLUMN
                        "', got '%.80s'",
                        st->file, line);
}

static int csv_parse(op_stream *in, op_builder *b, op_error *err)
{
    csv_state st;
    const char *line;
    size_t len;
    char *copy = NULL;
    size_t copy_cap = 0;
    int r, rc = OP_OK;

    memset(&st, 0, sizeof st);
    st.file = op_stream_name(in);
    st.b = b;
    if (!(st.slots = calloc(CSV_HASH_SLOTS, sizeof *st.slots)))
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", st.file);
    while ((r = op_stream_read_line(in, &line, &len, err)) == 1) {
        st.line++;
        if (len && line[len - 1] == '\r')
            len--;
        if (st.line == 1) {
            if ((rc = check_header(&st, line, len, err)))
                goto out;
            st.run = op_run_get(b, "csv", base_name(st.file));
            op_run_str(b, st.run, OP_F_NAME, base_name(st.file));
            continue;
        }
        if (len == 0)
            continue;
        /* The line is borrowed and split in place, so work on a copy. */
        if (OP_GROW(copy, copy_cap, len + 1, 1)) {
            rc = op_error_set(err, OP_ENOMEM, "%s:%llu: out of memory",
                              st.file, (unsigned long long)st.line);
            goto out;
        }
        memcpy(copy, line, len);
        copy[len] = '\0';
        if ((rc = parse_row(&st, copy, err)))
            goto out;
    }
    if (r < 0)
        rc = err->code ? err->code : OP_EIO;
    else if (st.line == 0)
        rc = op_error_set(err, OP_EPARSE,
                          "%s: empty file; expected the header '" CSV_HEADER
                          "'",
                          st.file);
out:
    /* Whatever was read before an error still goes into the model. */
    if (st.run)
        emit(&st);
    if (!rc && op_builder_failed(b, err))
        rc = err->code ? err->code : OP_ENOMEM;
    for (size_t i = 0; i < st.nstages; i++) {
        free(st.stages[i].name);
        free(st.stages[i].dur);
        free(st.stages[i].bytes);
    }
    free(st.stages);
    free(st.slots);
    free(copy);
    return rc;
}

static const op_plugin csv_plugin = {
    OP_PLUGIN_HEADER,
    .name = "csv",
    .version = "1.0.0",
    .description = "per-task timings as CSV: stage,task,duration_ms"
                   "[,input_bytes] (SDK example)",
    .detect = csv_detect,
    .parse = csv_parse,
};

/* The one symbol optipipe looks up in this .so. */
OP_EXPORT const op_plugin *op_plugin_entry(void);

OP_EXPORT const op_plugin *op_plugin_entry(void)
{
    return &csv_plugin;
}
