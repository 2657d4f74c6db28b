/*
 * analyze.c - from paths to a model. Each file is opened as a bounded,
 * decompressed stream, offered to every plugin's detect(), parsed by the
 * winner, and recorded. A bad file costs a message naming it, never the
 * analysis of the others.
 */
#include "analyze.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int analysis_init(analysis *an, const char *plugin_path,
                  const input_limits *limits, FILE *diag, op_error *err)
{
    int rc;

    memset(an, 0, sizeof *an);
    an->diag = diag;
    if (limits)
        an->limits = *limits;
    else
        input_limits_default(&an->limits);
    an->m = model_new();
    an->reg = plugins_new();
    if (!an->m || !an->reg)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    rc = plugins_add_builtins(an->reg, err);
    if (rc)
        return rc;
    if (plugin_path && *plugin_path)
        plugins_load_path(an->reg, plugin_path, NULL, NULL);
    return 0;
}

void analysis_free(analysis *an)
{
    size_t i, j;

    for (i = 0; i < an->ninputs; i++) {
        for (j = 0; j < an->inputs[i].nwarnings; j++)
            free(an->inputs[i].warnings[j]);
        free(an->inputs[i].warnings);
        free(an->inputs[i].path);
    }
    free(an->inputs);
    model_free(an->m);
    plugins_free(an->reg); /* after the model: plugins may own nothing in it */
    memset(an, 0, sizeof *an);
}

static input_rec *rec_new(analysis *an, const char *path)
{
    input_rec *in;

    if (an->ninputs == an->cap) {
        size_t ncap = an->cap ? an->cap * 2 : 8;
        input_rec *p = realloc(an->inputs, ncap * sizeof *p);
        if (!p)
            return NULL;
        an->inputs = p;
        an->cap = ncap;
    }
    in = &an->inputs[an->ninputs];
    memset(in, 0, sizeof *in);
    in->path = strdup(path);
    if (!in->path)
        return NULL;
    an->ninputs++;
    return in;
}

/* Records a problem on the input and prints it as "optipipe: <msg>". */
static void rec_warn(analysis *an, input_rec *in, const char *fmt, ...)
    OP_PRINTF(3, 4);

static void rec_warn(analysis *an, input_rec *in, const char *fmt, ...)
{
    char msg[OP_ERROR_MAX + 256];
    va_list ap;
    char *copy;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (an->diag)
        fprintf(an->diag, "optipipe: %s\n", msg);
    if (!in)
        return;
    if (in->nwarnings == in->cap) {
        size_t ncap = in->cap ? in->cap * 2 : 4;
        char **p = realloc(in->warnings, ncap * sizeof *p);
        if (!p)
            return;
        in->warnings = p;
        in->cap = ncap;
    }
    copy = strdup(msg);
    if (copy)
        in->warnings[in->nwarnings++] = copy;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Names an error message's input unless the message already starts so. */
static const char *msg_body(const char *path, const char *msg)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        return msg + n + 2;
    return msg;
}

static int parse_file(analysis *an, input_rec *in)
{
    op_stream *s = NULL;
    op_builder *b = NULL;
    const op_plugin *p = NULL;
    const unsigned char *head;
    size_t head_len;
    op_probe probe;
    op_error err;
    int rc;

    op_error_clear(&err);
    rc = input_open(in->path, &an->limits, &s, &err);
    if (!rc)
        rc = input_peek(s, OP_PROBE_HEAD, &head, &head_len, &err);
    if (rc) {
        rec_warn(an, in, "%s: %s", in->path, msg_body(in->path, err.msg));
        goto out;
    }
    memset(&probe, 0, sizeof probe);
    probe.path = in->path;
    probe.basename = base_name(in->path);
    probe.head = head;
    probe.head_len = head_len;
    rc = plugins_detect(an->reg, &probe, &p, &err);
    if (rc == OP_ENOTFOUND) {
        rec_warn(an, in, "%s: not recognized by any plugin (%s); skipped",
                 in->path, op_stream_codec(s));
        goto out;
    }
    if (rc) {
        rec_warn(an, in, "%s: %s", in->path, err.msg);
        goto out;
    }
    in->plugin = p->name;
    b = model_builder_new(an->m, in->path);
    if (!b) {
        rc = OP_ENOMEM;
        rec_warn(an, in, "%s: out of memory", in->path);
        goto out;
    }
    rc = p->parse(s, b, &err);
    if (rc) {
        rec_warn(an, in, "%s: %s", in->path, msg_body(in->path, err.msg));
        goto out;
    }
    if (op_builder_failed(b, &err)) {
        rc = OP_ENOMEM;
        rec_warn(an, in, "%s: %s", in->path, err.msg);
        goto out;
    }
    in->ok = 1;
    an->nok++;
out:
    model_builder_free(b);
    input_close(s);
    return rc;
}

static int visit(const char *file, void *ud)
{
    analysis *an = ud;
    input_rec *in = rec_new(an, file);

    if (!in) {
        rec_warn(an, NULL, "%s: out of memory", file);
        return 0;
    }
    parse_file(an, in);
    return 0;
}

static void walk_error(const char *file, const char *msg, void *ud)
{
    analysis *an = ud;
    input_rec *in = rec_new(an, file);

    rec_warn(an, in, "%s: %s", file, msg);
}

size_t analysis_add(analysis *an, const char *path)
{
    size_t before = an->nok;
    op_error err;

    op_error_clear(&err);
    if (input_walk(path, visit, walk_error, an, &err)) {
        input_rec *in = rec_new(an, path);
        rec_warn(an, in, "%s: %s", path, msg_body(path, err.msg));
    }
    return an->nok - before;
}

void analysis_freeze(analysis *an)
{
    model_freeze(an->m);
}

int analysis_run_from(const struct op_run *r, const input_rec *in)
{
    size_t i;

    for (i = 0; i < r->norigins; i++)
        if (strcmp(r->origins[i], in->path) == 0)
            return 1;
    return 0;
}
