/*
 * mapping.c - mapping packs (map_packs.h, docs/mapping-packs.md): loading the
 * Lua data files in the sandbox, checking their shape once, and resolving
 * an exported series (name + labels) to an engine, a job, a node chain and
 * a model metric by the packs' name groups and label templates.
 *
 * A compiled pack keeps its cJSON document and points into it: the
 * strings live as long as the set. Templates are expanded into fixed
 * buffers; a result that does not fit is an error, never cut short.
 */
#include "map_packs.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <optipipe/grow.h>

#include "diag.h"
#include "util.h"

#define MAP_MAX_FILES 256   /* packs read from one folder */
#define MAP_MAX_ALTS 8      /* alternatives of one template field */
#define MAP_MAX_WHEN 8      /* label conditions of one group */
#define MAP_FORMAT 1        /* the `mapping` field packs declare */

typedef struct tmpl {
    const char *alt[MAP_MAX_ALTS]; /* tried in order; the first that resolves */
    size_t n;
} tmpl;

typedef struct m_attr {
    const char *key;
    tmpl t;
} m_attr;

typedef struct m_node {
    const char *kind;
    tmpl id, dist;
    int parent; /* index into the pack's nodes, -1: outermost */
    m_attr attrs[OP_MAP_ATTRS];
    size_t nattrs;
    const char *inherit;
} m_node;

typedef struct m_kv {
    const char *key, *value;
} m_kv;

typedef struct m_metric {
    const char *key;  /* the exported name after the group's prefix */
    const char *name; /* the model name */
    double scale;
    int counter; /* 1 counter, 0 gauge, -1 by the exported # TYPE */
    const char *rate;
    int has_sentinel;
    double sentinel;
    m_kv sentinel_attr, value_attr, set;
    const char *sentinel_flag;
    int info;
} m_metric;

typedef struct m_when {
    const char *label, *glob;
} m_when;

typedef struct m_group {
    const char *pre, *post; /* prefix split at its one '*' (post NULL: none) */
    int node;               /* index into nodes, -1: run level */
    m_when when[MAP_MAX_WHEN];
    size_t nwhen;
    m_metric *metrics;
    size_t nmetrics;
} m_group;

typedef struct m_verattr {
    const char *key, *below, *value, *otherwise, *unknown;
} m_verattr;

typedef struct m_pack {
    cJSON *doc;
    char *file;
    const char *name, *engine;
    tmpl job, id, version, instance;
    m_verattr vattrs[OP_MAP_RUN_ATTRS];
    size_t nvattrs;
    m_node *nodes;
    size_t nnodes;
    m_group *groups;
    size_t ngroups;
} m_pack;

struct mapping_set {
    m_pack *packs;
    size_t n, cap;
};

mapping_set *mapping_set_new(void)
{
    return calloc(1, sizeof(mapping_set));
}

static void pack_free(m_pack *p)
{
    size_t i;

    for (i = 0; i < p->ngroups; i++)
        free(p->groups[i].metrics);
    free(p->groups);
    free(p->nodes);
    free(p->file);
    cJSON_Delete(p->doc);
}

void mapping_set_free(mapping_set *ms)
{
    size_t i;

    if (!ms)
        return;
    for (i = 0; i < ms->n; i++)
        pack_free(&ms->packs[i]);
    free(ms->packs);
    free(ms);
}

size_t mapping_set_count(const mapping_set *ms)
{
    return ms ? ms->n : 0;
}

/* ---- compiling a pack ------------------------------------------------------- */

static const char *jstr(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int filter_known(const char *f, size_t n)
{
    return (n > 7 && memcmp(f, "before=", 7) == 0) ||
           (n > 6 && memcmp(f, "after=", 6) == 0) ||
           (n == 9 && memcmp(f, "drop_uuid", 9) == 0) ||
           (n == 4 && memcmp(f, "drop", 4) == 0) ||
           (n == 5 && memcmp(f, "snake", 5) == 0);
}

/* Whether every "{...}" of t closes, names something and uses known
 * filters: checked once, so a typo is an error at load, not a silent miss. */
static int tmpl_ok(const char *t)
{
    while ((t = strchr(t, '{'))) {
        const char *end = strchr(t, '}'), *p;
        if (!end || end == t + 1 || memchr(t + 1, '{', (size_t)(end - t - 1)))
            return 0;
        for (p = memchr(t, ':', (size_t)(end - t)); p && p < end;) {
            const char *next = memchr(p + 1, ':', (size_t)(end - p - 1));
            const char *e = next ? next : end;
            if (!filter_known(p + 1, (size_t)(e - p - 1)))
                return 0;
            p = next;
        }
        t = end + 1;
    }
    return 1;
}

/* A template field: a string or a list of strings. */
static int read_tmpl(const cJSON *v, tmpl *t, const char *file,
                     const char *where, op_error *err)
{
    const cJSON *e;

    memset(t, 0, sizeof *t);
    if (!v)
        return 0;
    if (cJSON_IsString(v)) {
        t->alt[t->n++] = v->valuestring;
        goto check;
    }
    if (!cJSON_IsArray(v))
        return op_error_set(err, OP_EPARSE, "%s: %s: a template string or a "
                            "list of them expected", file, where);
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsString(e) || t->n == MAP_MAX_ALTS)
            return op_error_set(err, OP_EPARSE, "%s: %s: at most %d template "
                                "strings expected", file, where, MAP_MAX_ALTS);
        t->alt[t->n++] = e->valuestring;
    }
check:
    for (size_t i = 0; i < t->n; i++)
        if (!tmpl_ok(t->alt[i]))
            return op_error_set(err, OP_EPARSE, "%s: %s: bad template \"%.100s\" "
                                "(placeholders are {label|other:filter}, "
                                "filters before=S, after=S, drop_uuid, drop, "
                                "snake)", file, where, t->alt[i]);
    return 0;
}

/* "key=value" into kv (pointers into s, which is split in place). */
static int read_kv(const cJSON *o, const char *field, m_kv *kv,
                   const char *file, const char *where, op_error *err)
{
    const char *s = jstr(o, field);
    char *eq;

    kv->key = kv->value = NULL;
    if (!s)
        return 0;
    eq = strchr(s, '=');
    if (!eq || eq == s || (size_t)(eq - s) >= OP_MAP_KEY)
        return op_error_set(err, OP_EPARSE, "%s: %s.%s: \"attr=value\" "
                            "expected", file, where, field);
    *eq = '\0';
    kv->key = s;
    kv->value = eq + 1;
    return 0;
}

static int node_index(const m_pack *p, const char *kind)
{
    size_t i;

    for (i = 0; i < p->nnodes; i++)
        if (strcmp(p->nodes[i].kind, kind) == 0)
            return (int)i;
    return -1;
}

static int read_node(m_pack *p, m_node *n, const cJSON *spec, op_error *err)
{
    const cJSON *attrs = cJSON_GetObjectItemCaseSensitive(spec, "attrs"), *a;
    char where[160];
    int rc;

    snprintf(where, sizeof where, "nodes.%s", n->kind);
    if (strlen(n->kind) >= OP_MAP_KEY)
        return op_error_set(err, OP_EPARSE, "%s: %s: kind too long", p->file,
                            where);
    if ((rc = read_tmpl(cJSON_GetObjectItemCaseSensitive(spec, "id"), &n->id,
                        p->file, where, err)) ||
        (rc = read_tmpl(cJSON_GetObjectItemCaseSensitive(spec, "dist"),
                        &n->dist, p->file, where, err)))
        return rc;
    if (!n->id.n)
        return op_error_set(err, OP_EPARSE, "%s: %s.id: missing", p->file,
                            where);
    n->inherit = jstr(spec, "inherit");
    cJSON_ArrayForEach(a, attrs) {
        if (n->nattrs == OP_MAP_ATTRS || strlen(a->string) >= OP_MAP_KEY)
            return op_error_set(err, OP_EPARSE, "%s: %s.attrs: at most %d "
                                "attributes, keys under %d bytes", p->file,
                                where, OP_MAP_ATTRS, OP_MAP_KEY);
        n->attrs[n->nattrs].key = a->string;
        if ((rc = read_tmpl(a, &n->attrs[n->nattrs].t, p->file, where, err)))
            return rc;
        n->nattrs++;
    }
    return 0;
}

/* nodes = { kind = { id = ..., parent = "kind", attrs = {...} } }: two
 * passes, so a parent may be declared after its child. */
static int read_nodes(m_pack *p, const cJSON *nodes, op_error *err)
{
    const cJSON *spec;
    size_t n = (size_t)cJSON_GetArraySize(nodes), i = 0;
    int rc;

    if (nodes && !cJSON_IsObject(nodes))
        return op_error_set(err, OP_EPARSE, "%s: nodes: a table of node kinds "
                            "expected", p->file);
    if (n && !(p->nodes = calloc(n, sizeof *p->nodes)))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    cJSON_ArrayForEach(spec, nodes)
        p->nodes[p->nnodes++].kind = spec->string;
    cJSON_ArrayForEach(spec, nodes) {
        const char *parent = jstr(spec, "parent");
        m_node *nd = &p->nodes[i++];
        if ((rc = read_node(p, nd, spec, err)))
            return rc;
        nd->parent = parent ? node_index(p, parent) : -1;
        if (parent && nd->parent < 0)
            return op_error_set(err, OP_EPARSE, "%s: nodes.%s.parent: no node "
                                "kind '%s'", p->file, nd->kind, parent);
    }
    /* a parent chain longer than the result holds is a loop or too deep */
    for (i = 0; i < p->nnodes; i++) {
        int k = (int)i, depth = 0;
        while (k >= 0 && depth <= OP_MAP_NODES) {
            k = p->nodes[k].parent;
            depth++;
        }
        if (depth > OP_MAP_NODES)
            return op_error_set(err, OP_EPARSE, "%s: nodes.%s: parents loop or "
                                "nest deeper than %d", p->file,
                                p->nodes[i].kind, OP_MAP_NODES);
    }
    return 0;
}

static int read_metric(const m_pack *p, m_metric *m, const cJSON *v,
                       const char *where, op_error *err)
{
    const cJSON *x;
    int rc;

    m->key = v->string;
    m->scale = 1;
    m->counter = -1;
    if (cJSON_IsString(v)) {
        m->name = v->valuestring;
    } else if (cJSON_IsObject(v)) {
        m->name = jstr(v, "name");
        if ((x = cJSON_GetObjectItemCaseSensitive(v, "scale"))) {
            if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) ||
                x->valuedouble == 0)
                return op_error_set(err, OP_EPARSE, "%s: %s.scale: a nonzero "
                                    "number expected", p->file, where);
            m->scale = x->valuedouble;
        }
        if ((x = cJSON_GetObjectItemCaseSensitive(v, "counter")))
            m->counter = cJSON_IsTrue(x) ? 1 : 0;
        m->rate = jstr(v, "rate");
        m->info = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "info"));
        if ((x = cJSON_GetObjectItemCaseSensitive(v, "sentinel"))) {
            if (!cJSON_IsNumber(x))
                return op_error_set(err, OP_EPARSE, "%s: %s.sentinel: a number "
                                    "expected", p->file, where);
            m->has_sentinel = 1;
            m->sentinel = x->valuedouble;
        }
        m->sentinel_flag = jstr(v, "sentinel_flag");
        if ((rc = read_kv(v, "sentinel_attr", &m->sentinel_attr, p->file,
                          where, err)) ||
            (rc = read_kv(v, "value_attr", &m->value_attr, p->file, where,
                          err)) ||
            (rc = read_kv(v, "set", &m->set, p->file, where, err)))
            return rc;
    }
    if (!m->name || !*m->name || strlen(m->name) >= OP_MAP_NAME ||
        (m->rate && strlen(m->rate) >= OP_MAP_NAME) ||
        (m->sentinel_flag && strlen(m->sentinel_flag) >= OP_MAP_KEY))
        return op_error_set(err, OP_EPARSE, "%s: %s: a model name (or a table "
                            "with `name`) under %d bytes expected", p->file,
                            where, OP_MAP_NAME);
    return 0;
}

static int read_group(m_pack *p, m_group *g, const cJSON *spec, size_t gi,
                      op_error *err)
{
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(spec, "metrics");
    const cJSON *when = cJSON_GetObjectItemCaseSensitive(spec, "when"), *v;
    const char *prefix = jstr(spec, "prefix"), *node = jstr(spec, "node");
    char where[200], *star;
    int rc;

    snprintf(where, sizeof where, "groups[%zu]", gi + 1);
    if (!prefix || !cJSON_IsObject(metrics))
        return op_error_set(err, OP_EPARSE, "%s: %s: `prefix` (a string) and "
                            "`metrics` (a table) expected", p->file, where);
    star = strchr(prefix, '*');
    if (star && strchr(star + 1, '*'))
        return op_error_set(err, OP_EPARSE, "%s: %s.prefix: at most one '*'",
                            p->file, where);
    if (star)
        *star = '\0';
    g->pre = prefix;
    g->post = star ? star + 1 : NULL;
    g->node = node ? node_index(p, node) : -1;
    if (node && g->node < 0)
        return op_error_set(err, OP_EPARSE, "%s: %s.node: no node kind '%s'",
                            p->file, where, node);
    cJSON_ArrayForEach(v, when) {
        if (g->nwhen == MAP_MAX_WHEN || !cJSON_IsString(v))
            return op_error_set(err, OP_EPARSE, "%s: %s.when: at most %d "
                                "label = \"glob\" pairs", p->file, where,
                                MAP_MAX_WHEN);
        g->when[g->nwhen].label = v->string;
        g->when[g->nwhen++].glob = v->valuestring;
    }
    g->nmetrics = (size_t)cJSON_GetArraySize(metrics);
    if (g->nmetrics && !(g->metrics = calloc(g->nmetrics, sizeof *g->metrics)))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    gi = 0;
    cJSON_ArrayForEach(v, metrics) {
        char mwhere[sizeof where + 128];
        snprintf(mwhere, sizeof mwhere, "%s.metrics.%.100s", where, v->string);
        if ((rc = read_metric(p, &g->metrics[gi++], v, mwhere, err)))
            return rc;
    }
    return 0;
}

static int read_vattrs(m_pack *p, const cJSON *list, op_error *err)
{
    const cJSON *v;

    cJSON_ArrayForEach(v, list) {
        m_verattr *a = &p->vattrs[p->nvattrs];
        if (p->nvattrs == OP_MAP_RUN_ATTRS || !cJSON_IsObject(v))
            return op_error_set(err, OP_EPARSE, "%s: run.version_attrs: at "
                                "most %d tables", p->file, OP_MAP_RUN_ATTRS);
        a->key = jstr(v, "attr");
        a->below = jstr(v, "below");
        a->value = jstr(v, "value");
        a->otherwise = jstr(v, "otherwise");
        a->unknown = jstr(v, "unknown");
        if (!a->key || strlen(a->key) >= OP_MAP_KEY || !a->below || !a->value)
            return op_error_set(err, OP_EPARSE, "%s: run.version_attrs[%zu]: "
                                "`attr`, `below` and `value` expected",
                                p->file, p->nvattrs + 1);
        p->nvattrs++;
    }
    return 0;
}

static int read_run(m_pack *p, const cJSON *run, op_error *err)
{
    int rc;

    if (!cJSON_IsObject(run))
        return op_error_set(err, OP_EPARSE, "%s: run: a table with `job` "
                            "expected", p->file);
    if ((rc = read_tmpl(cJSON_GetObjectItemCaseSensitive(run, "job"), &p->job,
                        p->file, "run.job", err)) ||
        (rc = read_tmpl(cJSON_GetObjectItemCaseSensitive(run, "id"), &p->id,
                        p->file, "run.id", err)) ||
        (rc = read_tmpl(cJSON_GetObjectItemCaseSensitive(run, "version"),
                        &p->version, p->file, "run.version", err)) ||
        (rc = read_tmpl(cJSON_GetObjectItemCaseSensitive(run, "instance"),
                        &p->instance, p->file, "run.instance", err)) ||
        (rc = read_vattrs(p, cJSON_GetObjectItemCaseSensitive(
                                 run, "version_attrs"), err)))
        return rc;
    if (!p->job.n)
        return op_error_set(err, OP_EPARSE, "%s: run.job: missing", p->file);
    return 0;
}

static int compile(m_pack *p, op_error *err)
{
    const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(p->doc, "mapping");
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(p->doc, "groups");
    const cJSON *g;
    size_t i = 0;
    int rc;

    if (!cJSON_IsObject(p->doc) || !cJSON_IsNumber(fmt) ||
        fmt->valuedouble != MAP_FORMAT)
        return op_error_set(err, OP_EPARSE, "%s: not a mapping pack (a table "
                            "with mapping = %d expected)", p->file, MAP_FORMAT);
    p->name = jstr(p->doc, "name");
    p->engine = jstr(p->doc, "engine");
    if (!p->name || !*p->name || strlen(p->name) >= OP_MAP_KEY || !p->engine ||
        !*p->engine || strlen(p->engine) >= OP_MAP_KEY)
        return op_error_set(err, OP_EPARSE, "%s: `name` and `engine` (strings "
                            "under %d bytes) expected", p->file, OP_MAP_KEY);
    if ((rc = read_run(p, cJSON_GetObjectItemCaseSensitive(p->doc, "run"),
                       err)) ||
        (rc = read_nodes(p, cJSON_GetObjectItemCaseSensitive(p->doc, "nodes"),
                         err)))
        return rc;
    if (!cJSON_IsArray(groups) || !cJSON_GetArraySize(groups))
        return op_error_set(err, OP_EPARSE, "%s: groups: a list of name groups "
                            "expected", p->file);
    /* ngroups counts what groups holds, so pack_free of a failed calloc
     * walks nothing */
    if (!(p->groups = calloc((size_t)cJSON_GetArraySize(groups),
                             sizeof *p->groups)))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    p->ngroups = (size_t)cJSON_GetArraySize(groups);
    cJSON_ArrayForEach(g, groups) {
        if ((rc = read_group(p, &p->groups[i], g, i, err)))
            return rc;
        i++;
    }
    return 0;
}

int mapping_set_add(mapping_set *ms, cJSON *doc, const char *file,
                    op_error *err)
{
    m_pack *p;
    int rc;

    if (OP_GROW(ms->packs, ms->cap, ms->n + 1, 8)) {
        cJSON_Delete(doc);
        return op_error_set(err, OP_ENOMEM, "out of memory");
    }
    p = &ms->packs[ms->n];
    memset(p, 0, sizeof *p);
    p->doc = doc;
    if (!(p->file = strdup(file))) {
        cJSON_Delete(doc);
        return op_error_set(err, OP_ENOMEM, "out of memory");
    }
    if ((rc = compile(p, err))) {
        pack_free(p);
        return rc;
    }
    ms->n++;
    return 0;
}

/* ---- loading -------------------------------------------------------------- */

static int is_pack_file(const char *name)
{
    size_t n = strlen(name);

    return name[0] != '.' && n > 4 && strcmp(name + n - 4, ".lua") == 0 &&
           !(n > 9 && strcmp(name + n - 9, "_test.lua") == 0);
}

/* A file returns one pack, or a list of packs (dialects sharing tables). */
static void add_doc(mapping_set *ms, cJSON *doc, const char *path,
                    op_error *e)
{
    cJSON *item;

    if (!cJSON_IsArray(doc)) {
        mapping_set_add(ms, doc, path, e);
        return;
    }
    while ((item = cJSON_DetachItemFromArray(doc, 0)) && !e->code)
        mapping_set_add(ms, item, path, e);
    cJSON_Delete(item);
    cJSON_Delete(doc);
}

static int load_dir(mapping_set *ms, const char *dir, const rule_limits *lim,
                    FILE *diag, int must_exist, op_error *err)
{
    char *names[MAP_MAX_FILES], path[PATH_MAX];
    struct dirent *de;
    size_t n = 0, i;
    DIR *d = opendir(dir);
    int rc = 0;

    if (!d)
        return must_exist ? op_error_set(err, OP_ENOTFOUND, "%s: cannot open "
                                         "the mapping folder: %s", dir,
                                         strerror(errno))
                          : 0;
    while ((de = readdir(d)) && n < MAP_MAX_FILES)
        if (is_pack_file(de->d_name) && (names[n] = strdup(de->d_name)))
            n++;
    closedir(d);
    qsort(names, n, sizeof *names, util_strp_cmp);
    for (i = 0; i < n; i++) {
        cJSON *doc = NULL;
        op_error e;
        op_error_clear(&e);
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (ruleset_eval_data(lim, path, &doc, &e) == 0)
            add_doc(ms, doc, path, &e);
        if (e.code == OP_ENOMEM && !rc)
            rc = op_error_set(err, OP_ENOMEM, "out of memory");
        else if (e.code && diag)
            fprintf(diag, "optipipe: error: mapping pack %s\n", e.msg);
        free(names[i]);
    }
    return rc;
}

int mapping_set_load(const char *const *dirs, size_t ndirs,
                     const char *bundled_dir, const rule_limits *lim,
                     FILE *diag, mapping_set **out, op_error *err)
{
    mapping_set *ms = mapping_set_new();
    rule_limits trusted;
    size_t i;
    int rc = 0;

    *out = ms;
    if (!ms)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    for (i = 0; i < ndirs && !rc; i++)
        rc = load_dir(ms, dirs[i], lim, diag, 1, err);
    trusted = *lim;
    trusted.isolate = 0; /* bundled: no worker process needed */
    if (!rc && bundled_dir)
        rc = load_dir(ms, bundled_dir, &trusted, diag, 0, err);
    return rc;
}

/* ---- templates ------------------------------------------------------------ */

typedef struct expand_ctx {
    const op_series_ref *s;
    const char *instance; /* "@instance"; NULL before it is known */
    const char *suffix;   /* "@suffix": the name after the group's prefix */
} expand_ctx;

static const char *label_of(const expand_ctx *c, const char *name, size_t len)
{
    size_t i;

#define PSEUDO(lit) (len == sizeof lit - 1 && memcmp(name, lit, len) == 0)
    if (PSEUDO("@target"))
        return c->s->target;
    if (PSEUDO("@instance"))
        return c->instance;
    if (PSEUDO("@name"))
        return c->s->name;
    if (PSEUDO("@suffix"))
        return c->suffix;
#undef PSEUDO
    for (i = 0; i < c->s->nlabels; i++) {
        const op_label *l = &c->s->labels[i];
        if (strlen(l->name) == len && memcmp(l->name, name, len) == 0)
            return l->value;
    }
    return NULL;
}

static int is_hex(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') ||
           (c >= 'A' && c <= 'F');
}

/* Whether s ends in "-" and a UUID (8-4-4-4-12 hex digits). */
static size_t uuid_tail(const char *s, size_t n)
{
    static const char shape[] = "-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    size_t k = sizeof shape - 1, i;

    if (n < k)
        return 0;
    for (i = 0; i < k; i++) {
        char c = s[n - k + i];
        if (shape[i] == '-' ? c != '-' : !is_hex(c))
            return 0;
    }
    return k;
}

/* Applies one filter to val[0..*n) in place (cap bytes). 0 ok, 1 the
 * filter does not apply (the alternative fails). */
static int apply_filter(char *val, size_t *n, const char *f, size_t flen)
{
    size_t i;

    if (flen > 7 && memcmp(f, "before=", 7) == 0) {
        for (i = 0; i + (flen - 7) <= *n; i++)
            if (memcmp(val + i, f + 7, flen - 7) == 0) {
                *n = i;
                return 0;
            }
        return 1;
    }
    if (flen > 6 && memcmp(f, "after=", 6) == 0) {
        size_t k = flen - 6;
        for (i = *n >= k ? *n - k + 1 : 0; i-- > 0;)
            if (memcmp(val + i, f + 6, k) == 0) {
                memmove(val, val + i + k, *n - i - k);
                *n -= i + k;
                return 0;
            }
        return 1;
    }
    if (flen == 9 && memcmp(f, "drop_uuid", 9) == 0) {
        *n -= uuid_tail(val, *n);
        return 0;
    }
    if (flen == 4 && memcmp(f, "drop", 4) == 0) {
        *n = 0;
        return 0;
    }
    if (flen == 5 && memcmp(f, "snake", 5) == 0) {
        for (i = 0; i < *n; i++)
            val[i] = val[i] == '-' || val[i] == '.' || val[i] == ' '
                         ? '_'
                         : (val[i] >= 'A' && val[i] <= 'Z') ? (char)(val[i] + 32)
                                                            : val[i];
        return 0;
    }
    return 1; /* not reached: tmpl_ok refused unknown filters at load */
}

/* Expands one "{a|b:filter:filter}" placeholder (spec..end, braces
 * excluded) onto out at *o. 0 ok, 1 unresolved, -1 too long. */
static int expand_one(const expand_ctx *c, const char *spec, const char *end,
                      char *out, size_t cap, size_t *o)
{
    const char *colon = memchr(spec, ':', (size_t)(end - spec));
    const char *names_end = colon ? colon : end, *p = spec, *v = NULL;
    char val[OP_MAP_STR];
    size_t n;

    while (p < names_end && !v) {
        const char *bar = memchr(p, '|', (size_t)(names_end - p));
        const char *e = bar ? bar : names_end;
        v = label_of(c, p, (size_t)(e - p));
        if (v && !*v)
            v = NULL; /* an empty label is no value */
        p = e + 1;
    }
    if (!v)
        return 1;
    n = strlen(v);
    if (n >= sizeof val)
        return -1;
    memcpy(val, v, n);
    for (p = colon; p && p < end;) {
        const char *next = memchr(p + 1, ':', (size_t)(end - p - 1));
        const char *e = next ? next : end;
        if (apply_filter(val, &n, p + 1, (size_t)(e - p - 1)))
            return 1;
        p = next;
    }
    if (*o + n >= cap)
        return -1;
    memcpy(out + *o, val, n);
    *o += n;
    return 0;
}

/* One template string: 0 ok, 1 unresolved, -1 too long. */
static int expand_str(const expand_ctx *c, const char *t, char *out,
                      size_t cap)
{
    size_t o = 0;
    int rc;

    while (*t) {
        if (*t == '{') {
            const char *end = strchr(t, '}');
            if (!end)
                return 1;
            if ((rc = expand_one(c, t + 1, end, out, cap, &o)))
                return rc;
            t = end + 1;
            continue;
        }
        if (o + 1 >= cap)
            return -1;
        out[o++] = *t++;
    }
    out[o] = '\0';
    return 0;
}

/* The first alternative that resolves: 0 ok, 1 none did, -1 too long. */
static int expand(const expand_ctx *c, const tmpl *t, char *out, size_t cap)
{
    size_t i;
    int rc;

    out[0] = '\0';
    for (i = 0; i < t->n; i++) {
        rc = expand_str(c, t->alt[i], out, cap);
        if (rc <= 0)
            return rc;
    }
    return 1;
}

/* ---- resolving ------------------------------------------------------------ */

static int glob_match(const char *g, const char *s)
{
    if (*g == '\0')
        return *s == '\0';
    if (*g == '*') {
        for (;; s++) {
            if (glob_match(g + 1, s))
                return 1;
            if (!*s)
                return 0;
        }
    }
    return *s && *g == *s && glob_match(g + 1, s + 1);
}

/* The metric of group g that name is, with the key's place in *suffix. */
static const m_metric *group_metric(const m_group *g, const char *name,
                                    const char **suffix)
{
    size_t lp = strlen(g->pre), i;
    const char *rest;

    if (strncmp(name, g->pre, lp) != 0)
        return NULL;
    rest = name + lp;
    if (g->post) {
        rest = *g->post ? strstr(rest, g->post) : rest;
        if (!rest)
            return NULL;
        rest += strlen(g->post);
    }
    for (i = 0; i < g->nmetrics; i++)
        if (strcmp(g->metrics[i].key, rest) == 0) {
            *suffix = rest;
            return &g->metrics[i];
        }
    return NULL;
}

static int when_ok(const m_group *g, const expand_ctx *c)
{
    size_t i;

    for (i = 0; i < g->nwhen; i++) {
        const char *v = label_of(c, g->when[i].label, strlen(g->when[i].label));
        if (!v || !glob_match(g->when[i].glob, v))
            return 0;
    }
    return 1;
}

/* Compares dotted versions numerically: <0, 0, >0. */
static int version_cmp(const char *a, const char *b)
{
    while (*a || *b) {
        long x = strtol(a, (char **)&a, 10), y = strtol(b, (char **)&b, 10);
        if (x != y)
            return x < y ? -1 : 1;
        while (*a && *a != '.')
            a++;
        while (*b && *b != '.')
            b++;
        if (*a == '.')
            a++;
        if (*b == '.')
            b++;
    }
    return 0;
}

static void put(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

static void run_attrs(const m_pack *p, op_map *out)
{
    size_t i;

    for (i = 0; i < p->nvattrs; i++) {
        const m_verattr *a = &p->vattrs[i];
        const char *v = !*out->version ? (a->unknown ? a->unknown : "unknown")
                        : version_cmp(out->version, a->below) < 0 ? a->value
                        : a->otherwise ? a->otherwise : "unknown";
        op_map_kv *kv = &out->run_attrs[out->nrun_attrs++];
        put(kv->key, sizeof kv->key, a->key);
        put(kv->value, sizeof kv->value, v);
    }
}

static void copy_kv(op_map_kv *dst, const m_kv *src)
{
    put(dst->key, sizeof dst->key, src->key);
    put(dst->value, sizeof dst->value, src->value);
}

static void metric_fields(const m_metric *m, const op_series_ref *s,
                          op_map *out)
{
    put(out->metric, sizeof out->metric, m->name);
    out->scale = m->scale;
    out->kind = m->counter == 1 || (m->counter < 0 && s->type &&
                                    strcmp(s->type, "counter") == 0)
                    ? OP_MAP_COUNTER
                    : OP_MAP_GAUGE;
    put(out->rate, sizeof out->rate, m->rate);
    out->has_sentinel = m->has_sentinel;
    out->sentinel = m->sentinel;
    copy_kv(&out->sentinel_attr, &m->sentinel_attr);
    copy_kv(&out->value_attr, &m->value_attr);
    copy_kv(&out->set_attr, &m->set);
    put(out->sentinel_flag, sizeof out->sentinel_flag, m->sentinel_flag);
    out->info = m->info;
}

/* The node chain of leaf, outermost first: 0, 1 an id did not resolve
 * (not mapped), -1 too long. */
static int node_chain(const m_pack *p, int leaf, const expand_ctx *c,
                      op_map *out)
{
    int chain[OP_MAP_NODES], n = 0, k, i;

    for (k = leaf; k >= 0 && n < OP_MAP_NODES; k = p->nodes[k].parent)
        chain[n++] = k;
    out->nnodes = 0;
    for (i = n - 1; i >= 0; i--) {
        const m_node *spec = &p->nodes[chain[i]];
        op_map_node *nd = &out->nodes[out->nnodes++];
        size_t a;
        int rc = expand(c, &spec->id, nd->id, sizeof nd->id);
        if (rc)
            return rc;
        put(nd->kind, sizeof nd->kind, spec->kind);
        put(nd->inherit, sizeof nd->inherit, spec->inherit);
        nd->nattrs = 0;
        for (a = 0; a < spec->nattrs; a++) {
            op_map_kv *kv = &nd->attrs[nd->nattrs];
            rc = expand(c, &spec->attrs[a].t, kv->value, sizeof kv->value);
            if (rc < 0)
                return rc;
            if (rc == 0) {
                put(kv->key, sizeof kv->key, spec->attrs[a].key);
                nd->nattrs++;
            }
        }
        if (i == 0 && spec->dist.n &&
            expand(c, &spec->dist, out->dist_key, sizeof out->dist_key) < 0)
            return -1;
    }
    return 0;
}

/* Fills out from pack p for a series that matched metric m: 1, 0 (a
 * required field did not resolve), -1 too long. */
static int resolve_in(const m_pack *p, const m_group *g, const m_metric *m,
                      expand_ctx *c, op_map *out)
{
    int rc;

    memset(out, 0, sizeof *out);
    put(out->pack, sizeof out->pack, p->name);
    put(out->source, sizeof out->source, p->engine);
    if ((rc = expand(c, &p->job, out->job, sizeof out->job)))
        return rc < 0 ? -1 : 0;
    if (p->id.n && (rc = expand(c, &p->id, out->run_id, sizeof out->run_id)) < 0)
        return -1;
    if (p->version.n &&
        expand(c, &p->version, out->version, sizeof out->version) < 0)
        return -1;
    rc = p->instance.n ? expand(c, &p->instance, out->instance,
                                sizeof out->instance)
                       : 1;
    if (rc < 0)
        return -1;
    if (rc)
        put(out->instance, sizeof out->instance, c->s->target);
    c->instance = out->instance;
    if (g->node >= 0 && (rc = node_chain(p, g->node, c, out)))
        return rc < 0 ? -1 : 0;
    metric_fields(m, c->s, out);
    run_attrs(p, out);
    return 1;
}

int mapping_resolve(const mapping_set *ms, const op_series_ref *s,
                    op_map *out, op_error *err)
{
    size_t i, j;

    if (!ms || !s || !s->name)
        return 0;
    for (i = 0; i < ms->n; i++) {
        const m_pack *p = &ms->packs[i];
        for (j = 0; j < p->ngroups; j++) {
            expand_ctx c = {s, NULL, NULL};
            const m_metric *m = group_metric(&p->groups[j], s->name, &c.suffix);
            int rc;
            if (!m || !when_ok(&p->groups[j], &c))
                continue;
            rc = resolve_in(p, &p->groups[j], m, &c, out);
            if (rc < 0) {
                op_error_set(err, OP_ELIMIT, "mapping pack %s (%s): series %.200s: "
                             "a template made a value longer than %d bytes",
                             p->name, p->file, s->name, OP_MAP_STR - 1);
                return -OP_ELIMIT;
            }
            if (rc)
                return 1;
        }
    }
    return 0;
}
