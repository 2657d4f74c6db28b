/*
 * engine.c - lookups in the engine table (engine.h). The table is small
 * (one entry per engine) and asked a few times per analysis: linear scans.
 */
#include "engine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fetch.h"
#include "opts.h"

#define EACH(e, i) for (i = 0; (e = op_builtin_engines[i]) != NULL; i++)

const op_engine *engine_find(const char *source)
{
    const op_engine *e;
    size_t i;

    if (!source)
        return NULL;
    EACH(e, i)
        if (e->source && strcmp(e->source, source) == 0)
            return e;
    return NULL;
}

static const op_engine_fetch *fetch_of(const op_engine *e)
{
    return ENGINE_HAS(e, fetch) ? e->fetch : NULL;
}

const op_engine *engine_find_fetch(const char *name)
{
    const op_engine *e;
    size_t i;

    EACH(e, i)
        if (fetch_of(e) && strcmp(fetch_of(e)->name, name) == 0)
            return e;
    return NULL;
}

const op_engine *engine_for_url(const char *url)
{
    const op_engine *e, *best = NULL;
    int top = 0;
    size_t i;

    EACH(e, i) {
        const op_engine_fetch *f = fetch_of(e);
        int s = f && f->to_memory && f->url_score ? f->url_score(url) : 0;
        if (s > top) {
            top = s;
            best = e;
        }
    }
    return best;
}

const op_engine_layout *engine_layout_of(const char *dir)
{
    const op_engine *e;
    size_t i, k;

    EACH(e, i) {
        if (!ENGINE_HAS(e, nlayouts))
            continue;
        for (k = 0; k < e->nlayouts; k++)
            if (e->layouts[k].is_dir(dir))
                return &e->layouts[k];
    }
    return NULL;
}

int engine_part_of(const char *line, size_t len, char *key, size_t cap,
                   int64_t *order)
{
    const op_engine *e;
    char own[64]; /* an engine's key: longer ones are no part */
    size_t i;

    EACH(e, i) {
        const op_engine_parts *p = ENGINE_HAS(e, parts) ? e->parts : NULL;
        int n;
        if (!p || !p->probe(line, len, own, sizeof own, order))
            continue;
        /* the source keeps two engines' keys apart */
        n = snprintf(key, cap, "%s:%s", e->source, own);
        return n > 0 && (size_t)n < cap;
    }
    return 0;
}

int engine_part_named(const char *base, const char *line, size_t len,
                      char *key, size_t cap, int64_t *order)
{
    const op_engine *e;
    char own[64];
    size_t i;

    EACH(e, i) {
        int n;
        if (!ENGINE_HAS(e, part_name) || !e->part_name ||
            !e->part_name(base, line, len, own, sizeof own, order))
            continue;
        n = snprintf(key, cap, "%s:%s", e->source, own);
        return n > 0 && (size_t)n < cap;
    }
    return 0;
}

const char *engine_default_source(void)
{
    const op_engine *e;
    size_t i;

    EACH(e, i)
        if (e->flags & OP_ENGINE_DEFAULT_SOURCE)
            return e->source;
    return op_builtin_engines[0] ? op_builtin_engines[0]->source : "*";
}

void engine_fetch_names(char *buf, size_t len)
{
    const op_engine *e;
    size_t i, n = 0, used = 0;

    buf[0] = '\0';
    EACH(e, i)
        n += fetch_of(e) != NULL;
    EACH(e, i) {
        int w;
        if (!fetch_of(e))
            continue;
        w = snprintf(buf + used, len - used, "%s%s",
                     !used ? "" : --n == 1 ? " or " : ", ", fetch_of(e)->name);
        if (w < 0 || (size_t)w >= len - used)
            return;
        used += (size_t)w;
    }
}

/* ---- the engines' own options ------------------------------------------- */

static const op_engine_options *options_of(const op_engine *e)
{
    return ENGINE_HAS(e, options) ? e->options : NULL;
}

/* Where e's struct starts in fetch_opts.engines: the aligned sizes of the
 * engines before it; (size_t)-1 when e has none. */
static size_t opts_offset(const op_engine *e, size_t *end)
{
    const size_t a = alignof(max_align_t);
    const op_engine *x;
    size_t i, at = 0;

    EACH(x, i) {
        const op_engine_options *eo = options_of(x);
        if (!eo || !eo->size)
            continue;
        if (x == e) {
            *end = at + eo->size;
            return at;
        }
        at += (eo->size + a - 1) / a * a;
    }
    *end = at;
    return (size_t)-1;
}

void *engine_opts(fetch_opts *o, const op_engine *e)
{
    size_t end, at = e ? opts_offset(e, &end) : (size_t)-1;

    return at == (size_t)-1 || end > sizeof o->engines ? NULL
                                                       : o->engines + at;
}

const void *engine_opts_const(const fetch_opts *o, const op_engine *e)
{
    return engine_opts((fetch_opts *)(uintptr_t)o, e);
}

void engine_opts_init(fetch_opts *o)
{
    const op_engine *e;
    size_t i, end;

    memset(o->engines, 0, sizeof o->engines);
    EACH(e, i) {
        const op_engine_options *eo = options_of(e);
        void *base;
        if (!eo || !eo->size)
            continue;
        opts_offset(e, &end);
        if (end > sizeof o->engines) {
            fprintf(stderr, "optipipe: the options of engine '%s' need %zu "
                    "bytes of fetch_opts; FETCH_ENGINE_OPTS_BYTES is %zu\n",
                    e->source ? e->source : "?", end, sizeof o->engines);
            abort(); /* a build mistake, found by every run */
        }
        base = engine_opts(o, e);
        if (eo->specs)
            opts_defaults(eo->specs, base);
        if (eo->init)
            eo->init(base);
    }
}
