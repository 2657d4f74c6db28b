/*
 * fuzz_common.h - shared helpers of the libFuzzer targets: small input
 * limits, and feeding one fuzz input (possibly several files joined by a
 * separator line) through one plugin into a model the way the analysis
 * does (detect, parse, every plugin's finish, freeze).
 *
 * Header-only (static inline functions) so each target stays a single .c file.
 */
#ifndef OP_FUZZ_COMMON_H
#define OP_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "model.h"
#include "plugins.h"

/* Separates files inside one fuzz input (multi-file formats: dbt joins a
 * manifest with run results). Seeds use it; the fuzzer may invent more. */
#define FUZZ_SEP "\n%%optipipe-fuzz-file%%\n"
#define FUZZ_MAX_FILES 4

/* Caps far below the defaults so a bomb ends fast instead of timing out. */
static inline void fuzz_limits(input_limits *l)
{
    input_limits_default(l);
    l->max_line = (size_t)1 << 20;
    l->max_bytes = (uint64_t)64 << 20;
    l->max_doc = (size_t)16 << 20;
}

/* Detects and parses one in-memory file with plugin p into m. Errors are
 * expected and ignored: the target only looks for crashes and leaks. */
static inline void fuzz_parse_one(model *m, const op_plugin *p, const char *name,
                           const uint8_t *data, size_t size)
{
    input_limits lim;
    op_stream *s = NULL;
    op_builder *b = NULL;
    const unsigned char *head;
    size_t head_len;
    op_probe probe;
    op_error err;

    fuzz_limits(&lim);
    op_error_clear(&err);
    if (input_open_mem(name, data, size, &lim, &s, &err))
        goto out;
    if (input_peek(s, OP_PROBE_HEAD, &head, &head_len, &err))
        goto out;
    memset(&probe, 0, sizeof probe);
    probe.path = name;
    probe.basename = name;
    probe.head = head;
    probe.head_len = head_len;
    if (p->detect(&probe) <= 0)
        goto out;
    b = model_builder_new(m, name);
    if (!b)
        goto out;
    model_builder_set_plugin(b, p->name);
    (void)p->parse(s, b, &err);
    (void)op_builder_failed(b, &err);
out:
    model_builder_free(b);
    input_close(s);
}

/* Runs every plugin's finish() (which frees what it kept) and freezes m. */
static inline void fuzz_finish(model *m, const plugin_reg *reg)
{
    size_t i;

    for (i = 0; i < plugins_count(reg); i++) {
        const op_plugin *p = plugins_get(reg, i, NULL);
        op_builder *b;
        op_error err;

        if (!p->finish)
            continue;
        b = model_builder_new(m, NULL);
        if (!b)
            continue;
        model_builder_set_plugin(b, p->name);
        op_error_clear(&err);
        (void)p->finish(b, &err);
        model_builder_free(b);
    }
    model_freeze(m);
}

/* Splits data at FUZZ_SEP into up to FUZZ_MAX_FILES files named
 * names[i], parses each with the plugin called plugin_name and returns
 * the frozen model (model_free it), or NULL on out of memory. *reg_out
 * receives the registry, to be freed after the model. */
/* The mapping packs the model's builders ask (map_packs.h); a target that
 * reads metric exports sets it once. NULL: none. */
static const struct mapping_set *fuzz_mappings;

static inline model *fuzz_model(const char *plugin_name, const char *const *names,
                         const uint8_t *data, size_t size,
                         plugin_reg **reg_out)
{
    plugin_reg *reg = plugins_new();
    const op_plugin *p;
    model *m = NULL;
    op_error err;
    size_t seplen = strlen(FUZZ_SEP), i, start = 0, nfiles = 0;

    *reg_out = reg;
    if (!reg || plugins_add_builtins(reg, &err))
        return NULL;
    p = plugins_find(reg, plugin_name);
    if (!p)
        abort(); /* the build lost a plugin: a harness bug, not a finding */
    m = model_new();
    if (!m)
        return NULL;
    m->mappings = fuzz_mappings;
    for (i = 0; i <= size; i++) {
        int last = i == size || nfiles + 1 == FUZZ_MAX_FILES;
        int at_sep = !last && size - i >= seplen &&
                     memcmp(data + i, FUZZ_SEP, seplen) == 0;

        if (last) {
            fuzz_parse_one(m, p, names[nfiles], data + start, size - start);
            break;
        }
        if (at_sep) {
            fuzz_parse_one(m, p, names[nfiles], data + start, i - start);
            nfiles++;
            start = i + seplen;
            i = start - 1;
        }
    }
    fuzz_finish(m, reg);
    return m;
}

#endif
