/*
 * lua_rule.c - loading one rule file into a sandbox and running its check
 * function with a ctx (see lua_rule.h and docs/rules-engine.md).
 *
 * Rule tables are read raw (no metamethod of the rule runs in the host),
 * and everything that touches Lua values runs in a protected call.
 */
#include "lua_rule.h"
#include "lua_history.h"

#include <lauxlib.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lua_json.h"
#include "lua_model.h"
#include "util.h"

#define META_ERR_MAX 512
#define ID_MAX 100
#define OPTIONS_MAX_BYTES (1u << 20)
#define TEXT_FIELD_MAX (64u << 10)

static lua_Integer next_serial = 0;

static void free_strings(char **v, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void rule_meta_clear(rule_meta *m)
{
    free(m->id);
    free(m->title);
    free(m->description);
    free(m->file);
    free(m->pack);
    free_strings(m->sources, m->nsources);
    free_strings(m->tags, m->ntags);
    cJSON_Delete(m->options);
    cJSON_Delete(m->overrides);
    memset(m, 0, sizeof *m);
}

/* ---- loading ------------------------------------------------------------- */

typedef struct load_state {
    char *buf; /* the process' text of the file (rule_text_of) */
    size_t n;
    const char *chunkname;
} load_state;

static int load_step(lua_State *L)
{
    load_state *ls = lua_touserdata(L, 1);

    sbx_push_env(L);
    if (sbx_load_text(L, ls->buf, ls->n, ls->chunkname))
        return lua_error(L);
    return 1;
}

typedef struct validate_state {
    rule_meta *meta;
    const char *path;
    int fn_ref;
    char err[META_ERR_MAX];
} validate_state;

static int meta_fail(validate_state *vs, const char *fmt, const char *a)
{
    char what[300];

    snprintf(what, sizeof what, fmt, a ? a : "");
    snprintf(vs->err, sizeof vs->err, "%s: %s", vs->path, what);
    return 0;
}

/* Pushes t[key] (raw). */
static int raw_field(lua_State *L, int t, const char *key)
{
    lua_pushstring(L, key);
    return lua_rawget(L, t);
}

static int valid_id(const char *s, size_t len)
{
    size_t i;

    if (len == 0 || len > ID_MAX)
        return 0;
    for (i = 0; i < len; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-' ||
              c == ':' || c == '/'))
            return 0;
    }
    return 1;
}

/* Reads t[key], an array of non-empty strings, into *out / *n. Returns 0
 * when absent and allowed, 1 when read, -1 on error (vs->err set). */
static int read_strings(lua_State *L, validate_state *vs, int t,
                        const char *key, int required, char ***out,
                        size_t *n)
{
    lua_Integer i, len;
    size_t count = 0;
    int ty = raw_field(L, t, key);

    if (ty == LUA_TNIL && !required) {
        lua_pop(L, 1);
        return 0;
    }
    if (ty != LUA_TTABLE || sbx_is_proxy(L, -1)) {
        meta_fail(vs, "'%s' must be a list of strings, e.g. { \"a\", \"b\" }",
                  key);
        return -1;
    }
    len = (lua_Integer)lua_rawlen(L, -1);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        count++;
        lua_pop(L, 1);
    }
    if ((required && len == 0) || (size_t)len != count || len > 1000) {
        meta_fail(vs, required ? "'%s' must be a non-empty list of strings"
                               : "'%s' must be a list of strings",
                  key);
        return -1;
    }
    *out = calloc((size_t)len + 1, sizeof **out);
    if (!*out) {
        meta_fail(vs, "out of memory%s", NULL);
        return -1;
    }
    for (i = 1; i <= len; i++) {
        size_t sl;
        const char *s;
        if (lua_rawgeti(L, -1, i) != LUA_TSTRING ||
            (s = lua_tolstring(L, -1, &sl), sl == 0) || sl > 200) {
            meta_fail(vs, "'%s' must hold non-empty strings", key);
            return -1;
        }
        (*out)[*n] = strdup(s);
        if (!(*out)[*n]) {
            meta_fail(vs, "out of memory%s", NULL);
            return -1;
        }
        (*n)++;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 1;
}

/* Reads an optional (or required) string field into *out. */
static int read_string(lua_State *L, validate_state *vs, int t,
                       const char *key, int required, char **out)
{
    int ty = raw_field(L, t, key);
    size_t len = 0;
    const char *s;

    if (ty == LUA_TNIL && !required) {
        lua_pop(L, 1);
        return 0;
    }
    s = ty == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
    if (!s || len == 0 || len > TEXT_FIELD_MAX) {
        meta_fail(vs, "'%s' must be a non-empty string", key);
        return -1;
    }
    *out = strdup(s);
    lua_pop(L, 1);
    if (!*out) {
        meta_fail(vs, "out of memory%s", NULL);
        return -1;
    }
    return 1;
}

static int read_options(lua_State *L, validate_state *vs, int t)
{
    rule_meta *m = vs->meta;
    size_t budget = OPTIONS_MAX_BYTES;
    char err[256];
    int ty = raw_field(L, t, "options");

    if (ty == LUA_TNIL) {
        lua_pop(L, 1);
        m->options = cJSON_CreateObject();
        if (!m->options)
            meta_fail(vs, "out of memory%s", NULL);
        return m->options ? 0 : -1;
    }
    if (ty != LUA_TTABLE) {
        meta_fail(vs, "'options' must be a table of defaults, e.g. "
                      "{ threshold = 0.8 }%s", NULL);
        return -1;
    }
    if (ljson_from_lua(L, -1, "options", &budget, &m->options, err,
                       sizeof err)) {
        meta_fail(vs, "%s", err);
        return -1;
    }
    lua_pop(L, 1);
    if (!cJSON_IsObject(m->options)) {
        meta_fail(vs, "'options' must be a table of named defaults, not a "
                      "list%s", NULL);
        return -1;
    }
    return 0;
}

static int validate_fields(lua_State *L, validate_state *vs)
{
    rule_meta *m = vs->meta;
    const char *s;
    size_t len;
    int sev;

    if (raw_field(L, 2, "id") != LUA_TSTRING) {
        meta_fail(vs, "'id' must be a string such as \"pack.rule-name\"%s",
                  NULL);
        return -1;
    }
    s = lua_tolstring(L, -1, &len);
    if (!valid_id(s, len)) {
        meta_fail(vs, "'id' must be 1-100 characters of letters, digits and "
                      "_ . - : / (got \"%.60s\")", s);
        return -1;
    }
    m->id = strdup(s);
    lua_pop(L, 1);
    if (!m->id || read_string(L, vs, 2, "title", 1, &m->title) < 0 ||
        read_string(L, vs, 2, "description", 0, &m->description) < 0) {
        if (!vs->err[0])
            meta_fail(vs, "out of memory%s", NULL);
        return -1;
    }
    raw_field(L, 2, "severity");
    s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    sev = severity_parse(s);
    if (sev < 0) {
        meta_fail(vs, "'severity' must be \"info\", \"warning\" or \"error\""
                      " (got %s)", s ? s : luaL_typename(L, -1));
        return -1;
    }
    lua_pop(L, 1);
    m->sev = m->default_sev = (severity)sev;
    if (read_strings(L, vs, 2, "sources", 1, &m->sources, &m->nsources) < 0 ||
        read_strings(L, vs, 2, "tags", 0, &m->tags, &m->ntags) < 0 ||
        read_options(L, vs, 2) < 0)
        return -1;
    if (raw_field(L, 2, "check") != LUA_TFUNCTION) {
        meta_fail(vs, "'check' must be a function(run, ctx)%s", NULL);
        return -1;
    }
    vs->fn_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    return 0;
}

/* validate(vs, value): fills vs->meta from the table the chunk returned;
 * metadata problems go to vs->err (only memory errors raise). */
static int validate_step(lua_State *L)
{
    validate_state *vs = lua_touserdata(L, 1);

    luaL_checkstack(L, 8, "rule metadata");
    if (lua_type(L, 2) != LUA_TTABLE || sbx_is_proxy(L, 2)) {
        meta_fail(vs, "the file must return a rule table (got %s)",
                  luaL_typename(L, 2));
        return 0;
    }
    validate_fields(L, vs);
    return 0;
}

/* Reads a rule file (inside the pack: sbx_open_file) into a new buffer
 * (*buf, *n). 0 or -1 with *reason. */
static int read_rule_file(const sbx *s, const char *path, char **buf,
                          size_t *n, char **reason)
{
    char msg[600];
    FILE *f = NULL;
    size_t size = 0;
    char *b = NULL;

    if (sbx_open_file(s, path, LRULE_FILE_MAX, &f, &size, msg, sizeof msg))
        goto fail;
    b = malloc(size + 1);
    if (!b) {
        snprintf(msg, sizeof msg, "%s: out of memory", path);
        goto fail;
    }
    if (fread(b, 1, size, f) != size || ferror(f)) {
        snprintf(msg, sizeof msg, "%s: read error", path);
        goto fail;
    }
    fclose(f);
    *buf = b;
    *n = size;
    return 0;
fail:
    if (f)
        fclose(f);
    free(b);
    *reason = strdup(msg);
    return -1;
}

/* The rule files read so far, by path: each is read from disk once per
 * process, so that a worker forked later (rules.c: an isolated pack's
 * load and run workers) runs the very text the parent read, and a file
 * changed or swapped after it was read changes nothing until the next
 * process. Grows with the files loaded (at most MAX_RULE_FILES per pack,
 * LRULE_FILE_MAX each); never freed (reachable until exit). */
typedef struct rule_text {
    char *path, *buf;
    size_t n;
} rule_text;
static rule_text *texts;
static size_t ntexts, texts_cap;

/* *buf: the text, owned by the table (sbx_load_text may turn a "#!"
 * line into a comment in place: the same text each time). */
static int rule_text_of(const sbx *s, const char *path, char **buf,
                        size_t *n, char **reason)
{
    char *b = NULL, *p = NULL;
    size_t i, len = 0;

    for (i = 0; i < ntexts; i++)
        if (strcmp(texts[i].path, path) == 0) {
            *buf = texts[i].buf;
            *n = texts[i].n;
            return 0;
        }
    if (read_rule_file(s, path, &b, &len, reason))
        return -1;
    if (!(p = strdup(path)) || OP_GROW(texts, texts_cap, ntexts + 1, 16)) {
        free(p);
        free(b);
        *reason = strdup("out of memory");
        return -1;
    }
    texts[ntexts].path = p;
    texts[ntexts].buf = b;
    texts[ntexts].n = len;
    ntexts++;
    *buf = b;
    *n = len;
    return 0;
}

int lrule_read(const sbx *s, const char *path, char **reason)
{
    char *buf;
    size_t n;

    *reason = NULL;
    return rule_text_of(s, path, &buf, &n, reason);
}

int lrule_load(sbx *s, const char *path, const char *pack, int trusted,
               const rule_limits *lim, rule_meta *meta, int *fn_ref,
               char **reason)
{
    validate_state vs;
    load_state ls;
    char *chunkname = NULL;
    int rc = -1, st, oom = 0;

    memset(meta, 0, sizeof *meta);
    memset(&ls, 0, sizeof ls);
    *fn_ref = LUA_NOREF;
    *reason = NULL;
    if (rule_text_of(s, path, &ls.buf, &ls.n, reason))
        return -1;
    chunkname = malloc(strlen(path) + 2);
    if (!chunkname)
        goto out;
    sprintf(chunkname, "@%s", path);
    ls.chunkname = chunkname;
    if (sbx_cpcall(s, load_step, &ls, 0, 1, reason) != SBX_OK)
        goto out;
    sbx_set_label(s, path);
    sbx_arm(s, lim->instructions, lim->timeout_ms);
    st = sbx_pcall(s, 0, 1, reason);
    sbx_disarm(s);
    sbx_set_label(s, NULL);
    if (st != SBX_OK)
        goto out;
    memset(&vs, 0, sizeof vs);
    vs.meta = meta;
    vs.path = path;
    vs.fn_ref = LUA_NOREF;
    if (sbx_cpcall(s, validate_step, &vs, 1, 0, reason) != SBX_OK) {
        lrule_unref(s, vs.fn_ref);
        goto out;
    }
    if (vs.err[0]) {
        lrule_unref(s, vs.fn_ref);
        *reason = strdup(vs.err);
        goto out;
    }
    meta->file = util_strdup(path, &oom);
    meta->pack = util_strdup(pack, &oom);
    meta->enabled = 1;
    meta->trusted = trusted;
    if (!meta->file || oom) {
        lrule_unref(s, vs.fn_ref);
        *reason = strdup("out of memory");
        goto out;
    }
    *fn_ref = vs.fn_ref;
    rc = 0;
out:
    free(chunkname);
    return rc;
}

void lrule_unref(sbx *s, int fn_ref)
{
    if (s && fn_ref != LUA_NOREF && fn_ref != LUA_REFNIL)
        luaL_unref(sbx_lua(s), LUA_REGISTRYINDEX, fn_ref);
}

/* ---- metadata as JSON ------------------------------------------------------ */

static cJSON *strings_json(char **v, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    size_t i;

    for (i = 0; a && i < n; i++) {
        cJSON *s = cJSON_CreateString(v[i]);
        if (!s) {
            cJSON_Delete(a);
            return NULL;
        }
        cJSON_AddItemToArray(a, s);
    }
    return a;
}

cJSON *rule_meta_to_json(const rule_meta *m)
{
    cJSON *j = cJSON_CreateObject();
    cJSON *src = strings_json(m->sources, m->nsources);
    cJSON *tags = strings_json(m->tags, m->ntags);
    cJSON *opt = m->options ? cJSON_Duplicate(m->options, 1)
                            : cJSON_CreateObject();
    int ok = j && src && tags && opt;

    /* An item stays ours until it is attached: a failed key copy leaves
     * it detached, and the cleanup below frees it. */
    if (ok && (ok = cJSON_AddItemToObject(j, "sources", src)))
        src = NULL;
    if (ok && (ok = cJSON_AddItemToObject(j, "tags", tags)))
        tags = NULL;
    if (ok && (ok = cJSON_AddItemToObject(j, "options", opt)))
        opt = NULL;
    if (ok)
        ok = cJSON_AddStringToObject(j, "id", m->id) &&
             cJSON_AddStringToObject(j, "title", m->title) &&
             cJSON_AddStringToObject(j, "severity",
                                     severity_name(m->default_sev)) &&
             cJSON_AddStringToObject(j, "file", m->file ? m->file : "") &&
             cJSON_AddStringToObject(j, "pack", m->pack ? m->pack : "") &&
             (!m->description ||
              cJSON_AddStringToObject(j, "description", m->description));
    cJSON_Delete(src);
    cJSON_Delete(tags);
    cJSON_Delete(opt);
    if (!ok) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

static int json_strings(const cJSON *a, char ***out, size_t *n)
{
    const cJSON *it;
    int count = cJSON_GetArraySize(a);

    if (!cJSON_IsArray(a))
        return -1;
    *out = calloc((size_t)count + 1, sizeof **out);
    if (!*out)
        return -1;
    cJSON_ArrayForEach(it, a) {
        if (!cJSON_IsString(it) || !((*out)[*n] = strdup(it->valuestring)))
            return -1;
        (*n)++;
    }
    return 0;
}

static char *json_str(const cJSON *j, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(j, key);
    return cJSON_IsString(it) ? strdup(it->valuestring) : NULL;
}

int rule_meta_from_json(const cJSON *j, rule_meta *m)
{
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(j, "options");
    const cJSON *sev = cJSON_GetObjectItemCaseSensitive(j, "severity");
    int s = severity_parse(cJSON_IsString(sev) ? sev->valuestring : NULL);

    memset(m, 0, sizeof *m);
    m->id = json_str(j, "id");
    m->title = json_str(j, "title");
    m->file = json_str(j, "file");
    m->pack = json_str(j, "pack");
    if (cJSON_GetObjectItemCaseSensitive(j, "description"))
        m->description = json_str(j, "description");
    m->options = cJSON_IsObject(opt) ? cJSON_Duplicate(opt, 1) : NULL;
    if (!m->id || !m->title || !m->file || !m->pack || !m->options || s < 0 ||
        json_strings(cJSON_GetObjectItemCaseSensitive(j, "sources"),
                     &m->sources, &m->nsources) ||
        json_strings(cJSON_GetObjectItemCaseSensitive(j, "tags"), &m->tags,
                     &m->ntags)) {
        rule_meta_clear(m);
        return -1;
    }
    m->sev = m->default_sev = (severity)s;
    m->enabled = 1;
    return 0;
}

/* Puts v under key in obj, in the place of have when there is one (keeps
 * the order of the defaults). Takes v in every case: frees it on failure.
 * cJSON_ReplaceItemInObject does not check its copy of the key, so the copy
 * is made here. */
static int put_option(cJSON *obj, cJSON *have, const char *key, cJSON *v)
{
    size_t len = strlen(key) + 1;
    char *copy;

    if (!have) {
        if (cJSON_AddItemToObject(obj, key, v))
            return 0;
        cJSON_Delete(v);
        return -1;
    }
    if (!(copy = cJSON_malloc(len))) {
        cJSON_Delete(v);
        return -1;
    }
    memcpy(copy, key, len);
    if (v->string && !(v->type & cJSON_StringIsConst))
        cJSON_free(v->string);
    v->string = copy;
    v->type &= ~cJSON_StringIsConst;
    /* Cannot fail: have is an item of obj and v is not NULL. */
    cJSON_ReplaceItemViaPointer(obj, have, v);
    return 0;
}

static cJSON *merge(const cJSON *base, const cJSON *over)
{
    const cJSON *it;
    cJSON *out;

    if (!over)
        return base ? cJSON_Duplicate(base, 1) : cJSON_CreateObject();
    if (!cJSON_IsObject(base) || !cJSON_IsObject(over))
        return cJSON_Duplicate(over, 1);
    if (!(out = cJSON_Duplicate(base, 1)))
        return NULL;
    cJSON_ArrayForEach(it, over) {
        cJSON *have, *v;
        if (!it->string)
            continue;
        have = cJSON_GetObjectItemCaseSensitive(out, it->string);
        if (!(v = merge(have, it)) || put_option(out, have, it->string, v)) {
            cJSON_Delete(out);
            return NULL;
        }
    }
    return out;
}

cJSON *rule_meta_merged_options(const rule_meta *m)
{
    return merge(m->options, m->overrides);
}

/* ---- ctx.report ------------------------------------------------------------ */

enum { F_NODE, F_RUN, F_MESSAGE, F_RECOMMENDATION, F_SEVERITY, F_EVIDENCE,
       F_CHANGES, F_IMPACT, F_COUNT };

static const char *const report_fields[F_COUNT] = {
    "node", "run", "message", "recommendation", "severity", "evidence",
    "changes", "impact"};

static int known_field(const char *k)
{
    int i;

    for (i = 0; i < F_COUNT; i++)
        if (strcmp(k, report_fields[i]) == 0)
            return 1;
    return 0;
}

/* Resolves the "run" field at idx to a run index (SIZE_MAX: none). */
static size_t resolve_run(lua_State *L, const lrule_call *c, int idx)
{
    size_t i;

    switch (lua_type(L, idx)) {
    case LUA_TNIL:
        return c->run_index;
    case LUA_TSTRING:
        for (i = 0; i < c->m->nruns; i++)
            if (strcmp(c->m->runs[i]->id, lua_tostring(L, idx)) == 0)
                return i;
        luaL_error(L, "ctx.report: no run with id '%s'", lua_tostring(L, idx));
        break;
    case LUA_TTABLE:
        i = lmodel_run_index(L, idx);
        if (i != SIZE_MAX)
            return i;
        /* fall through */
    default:
        luaL_error(L, "ctx.report: 'run' must be a run table or a run id");
    }
    return SIZE_MAX;
}

/* Leaves the node id (string or nil) on top for the "node" field at idx. */
static void resolve_node(lua_State *L, int idx)
{
    switch (lua_type(L, idx)) {
    case LUA_TNIL:
    case LUA_TSTRING:
        lua_pushvalue(L, idx);
        return;
    case LUA_TTABLE:
        sbx_unproxy(L, idx);
        lua_pushliteral(L, "id");
        if (lua_rawget(L, -2) == LUA_TSTRING) {
            lua_remove(L, -2);
            return;
        }
        /* fall through */
    default:
        luaL_error(L, "ctx.report: 'node' must be a node id or a node table");
    }
}

static int check_type(lua_State *L, int idx, int type, const char *field)
{
    int t = lua_type(L, idx);

    if (t != LUA_TNIL && t != type)
        return luaL_error(L, "ctx.report: '%s' must be a %s (got %s)", field,
                          lua_typename(L, type), lua_typename(L, t));
    return t != LUA_TNIL;
}

/* Adds field f (at idx) converted to JSON; kind 1: object, 2: array. */
static int add_table(lua_State *L, cJSON *obj, int idx, const char *field,
                     int kind, size_t *budget, char *err, size_t errlen)
{
    cJSON *v = NULL;

    if (lua_isnil(L, idx))
        return 0;
    if (ljson_from_lua(L, idx, field, budget, &v, err, errlen))
        return -1;
    if (kind == 2 && cJSON_IsObject(v) && !v->child) {
        cJSON_Delete(v); /* {} is an empty list of changes */
        v = cJSON_CreateArray();
    }
    if (!v || (kind == 1 && !cJSON_IsObject(v)) ||
        (kind == 2 && !cJSON_IsArray(v))) {
        snprintf(err, errlen, "'%s' must be %s", field,
                 kind == 1 ? "a table of named values"
                           : "a list of { key = ..., to = ... } tables");
        cJSON_Delete(v);
        return -1;
    }
    if (!cJSON_AddItemToObject(obj, field, v)) { /* the key copy failed */
        snprintf(err, errlen, "out of memory");
        cJSON_Delete(v);
        return -1;
    }
    return 0;
}

static int add_str(cJSON *obj, const char *key, const char *v)
{
    return v && !cJSON_AddStringToObject(obj, key, v) ? -1 : 0;
}

/* Builds the finding object from the fields on the stack (base + F_*).
 * Never raises; returns NULL with err set. */
static cJSON *build_finding(lua_State *L, lrule_call *c, int base, size_t ri,
                            const char *sev, char *err, size_t errlen)
{
    cJSON *obj = cJSON_CreateObject();
    size_t budget = LRULE_MAX_BYTES - c->bytes, len = 0;
    const char *node = lua_tostring(L, -1); /* resolved node id */

    if (!obj)
        goto oom;
    if (lua_isstring(L, base + F_MESSAGE))
        lua_tolstring(L, base + F_MESSAGE, &len);
    if (len > TEXT_FIELD_MAX || len > budget) {
        snprintf(err, errlen, "'message' is longer than %u bytes",
                 (unsigned)TEXT_FIELD_MAX);
        goto fail;
    }
    budget -= len;
    if (add_str(obj, "rule", c->meta->id) ||
        add_str(obj, "title", c->meta->title) ||
        add_str(obj, "severity", sev) ||
        (ri != SIZE_MAX && !cJSON_AddNumberToObject(obj, "run", (double)ri)) ||
        add_str(obj, "node", node) ||
        add_str(obj, "message", lua_tostring(L, base + F_MESSAGE)))
        goto oom;
    len = 0;
    if (lua_isstring(L, base + F_RECOMMENDATION))
        lua_tolstring(L, base + F_RECOMMENDATION, &len);
    if (len > TEXT_FIELD_MAX || len > budget) {
        snprintf(err, errlen, "'recommendation' is longer than %u bytes",
                 (unsigned)TEXT_FIELD_MAX);
        goto fail;
    }
    budget -= len;
    if (add_str(obj, "recommendation", lua_tostring(L, base + F_RECOMMENDATION)))
        goto oom;
    if (add_table(L, obj, base + F_EVIDENCE, "evidence", 1, &budget, err,
                  errlen) ||
        add_table(L, obj, base + F_CHANGES, "changes", 2, &budget, err,
                  errlen) ||
        add_table(L, obj, base + F_IMPACT, "impact", 1, &budget, err, errlen))
        goto fail;
    c->bytes = LRULE_MAX_BYTES - budget;
    return obj;
oom:
    snprintf(err, errlen, "out of memory");
fail:
    cJSON_Delete(obj);
    return NULL;
}

static int l_report(lua_State *L)
{
    lrule_call *c = sbx_user(sbx_of(L));
    int f = lua_gettop(L) >= 2 && lua_istable(L, 1) && lua_istable(L, 2) ? 2 : 1;
    const char *sev;
    char err[512];
    op_error oe;
    cJSON *obj;
    size_t ri;
    int base, i;

    if (!c || lua_tointeger(L, lua_upvalueindex(1)) != c->serial)
        return luaL_error(L, "ctx.report: called outside the rule call that "
                             "received this ctx");
    luaL_checktype(L, f, LUA_TTABLE);
    if ((size_t)cJSON_GetArraySize(c->findings) >= LRULE_MAX_FINDINGS)
        return luaL_error(L, "ctx.report: more than %d findings in one call",
                          LRULE_MAX_FINDINGS);
    luaL_checkstack(L, F_COUNT + 8, "ctx.report");
    sbx_unproxy(L, f);
    lua_replace(L, f);
    lua_pushnil(L);
    while (lua_next(L, f)) {
        lua_pop(L, 1);
        if (lua_type(L, -1) != LUA_TSTRING)
            return luaL_error(L, "ctx.report: field names must be strings");
        if (!known_field(lua_tostring(L, -1)))
            return luaL_error(L, "ctx.report: unknown field '%s' (fields: "
                                 "node, run, message, recommendation, "
                                 "severity, evidence, changes, impact)",
                              lua_tostring(L, -1));
    }
    base = lua_gettop(L) + 1;
    for (i = 0; i < F_COUNT; i++) {
        lua_pushstring(L, report_fields[i]);
        lua_rawget(L, f);
    }
    check_type(L, base + F_MESSAGE, LUA_TSTRING, "message");
    check_type(L, base + F_RECOMMENDATION, LUA_TSTRING, "recommendation");
    check_type(L, base + F_EVIDENCE, LUA_TTABLE, "evidence");
    check_type(L, base + F_CHANGES, LUA_TTABLE, "changes");
    check_type(L, base + F_IMPACT, LUA_TTABLE, "impact");
    sev = severity_name(c->meta->sev);
    if (check_type(L, base + F_SEVERITY, LUA_TSTRING, "severity")) {
        sev = lua_tostring(L, base + F_SEVERITY);
        if (severity_parse(sev) < 0)
            return luaL_error(L, "ctx.report: severity must be \"info\", "
                                 "\"warning\" or \"error\" (got \"%s\")", sev);
    }
    ri = resolve_run(L, c, base + F_RUN);
    resolve_node(L, base + F_NODE);
    /* From here nothing raises until the object is either kept or freed. */
    obj = build_finding(L, c, base, ri, sev, err, sizeof err);
    if (!obj)
        return luaL_error(L, "ctx.report: %s", err);
    if (finding_check(c->m, obj, &oe)) {
        cJSON_Delete(obj);
        return luaL_error(L, "ctx.report: %s", oe.msg);
    }
    cJSON_AddItemToArray(c->findings, obj);
    return 0;
}

static int l_log(lua_State *L)
{
    int i = lua_gettop(L) >= 2 && lua_istable(L, 1) ? 2 : 1;
    size_t len;
    const char *msg = luaL_tolstring(L, i, &len);

    sbx_log(sbx_of(L), msg, len);
    return 0;
}

/* ---- one call -------------------------------------------------------------- */

/* __index of ctx.options: reading an option the rule did not declare is
 * a typo or a missing default, never a silent nil. Upvalues: the rule id
 * and its declared names. */
static int l_option_missing(lua_State *L)
{
    const char *names = lua_tostring(L, lua_upvalueindex(2));

    return luaL_error(L, "ctx.options.%s: not an option of rule %s "
                         "(declared: %s)", luaL_tolstring(L, 2, NULL),
                      lua_tostring(L, lua_upvalueindex(1)),
                      names && *names ? names : "none");
}

/* Pushes the options table with the strict __index above. */
static void push_options(lua_State *L, const lrule_call *c)
{
    const cJSON *o;
    luaL_Buffer b;
    int first = 1;

    luaL_checkstack(L, 4, "ctx.options"); /* table, metatable, id, buffer */
    if (c->options)
        ljson_push(L, c->options);
    else
        lua_newtable(L);
    lua_createtable(L, 0, 1);
    lua_pushstring(L, c->meta->id);
    luaL_buffinit(L, &b);
    if (c->options)
        cJSON_ArrayForEach(o, c->options) {
            if (!first)
                luaL_addstring(&b, ", ");
            first = 0;
            luaL_addstring(&b, o->string ? o->string : "?");
        }
    luaL_pushresult(&b);
    lua_pushcclosure(L, l_option_missing, 2);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
}

/* ctx.history(run [, opts]) (lua_history.c); only inside its own call. */
static int l_history(lua_State *L)
{
    lrule_call *c = sbx_user(sbx_of(L));

    if (!c || lua_tointeger(L, lua_upvalueindex(1)) != c->serial)
        return luaL_error(L, "ctx.history: called outside the rule call "
                             "that received this ctx");
    return lhist_call(L, c->m);
}

/* ctx.node_history(run [, opts]) (lua_history.c); the same guard. */
static int l_node_history(lua_State *L)
{
    lrule_call *c = sbx_user(sbx_of(L));

    if (!c || lua_tointeger(L, lua_upvalueindex(1)) != c->serial)
        return luaL_error(L, "ctx.node_history: called outside the rule call "
                             "that received this ctx");
    return lhist_node_history(L, c->m);
}

/* The functions of ctx; each gets the call's serial as upvalue 1. */
static const luaL_Reg ctx_fns[] = {
    {"report", l_report},
    {"log", l_log},
    {"history", l_history},
    {"node_history", l_node_history},
    {NULL, NULL}};

static void push_ctx(lua_State *L, lrule_call *c)
{
    lua_createtable(L, 0, 5);
    push_options(L, c);
    lua_setfield(L, -2, "options");
    lua_createtable(L, 0, 2);
    lua_pushstring(L, c->meta->id);
    lua_setfield(L, -2, "id");
    lua_pushstring(L, severity_name(c->meta->sev));
    lua_setfield(L, -2, "severity");
    lua_setfield(L, -2, "rule");
    lua_pushinteger(L, c->serial); /* the guard's upvalue */
    luaL_setfuncs(L, ctx_fns, 1);
}

static int prep_step(lua_State *L)
{
    lrule_call *c = lua_touserdata(L, 1);

    luaL_checkstack(L, 6, "rule call");
    if (lua_rawgeti(L, LUA_REGISTRYINDEX, c->fn_ref) != LUA_TFUNCTION)
        return luaL_error(L, "rule %s is not loaded", c->meta->id);
    if (c->run_index == SIZE_MAX)
        lmodel_push_bundle(L, c->m);
    else
        lmodel_push_run(L, c->m, c->run_index);
    push_ctx(L, c);
    return 3;
}

int lrule_exec(sbx *s, lrule_call *c, const rule_limits *lim,
               void (*started)(void *), void *ud, char **reason)
{
    int st;

    *reason = NULL;
    c->findings = cJSON_CreateArray();
    if (!c->findings) {
        *reason = strdup("out of memory");
        return SBX_EHOST;
    }
    c->bytes = 0;
    c->serial = ++next_serial;
    sbx_set_user(s, c);
    sbx_set_label(s, c->meta->id);
    st = sbx_cpcall(s, prep_step, c, 0, 3, reason);
    sbx_exempt(s, 0); /* in case building the run failed halfway */
    if (st == SBX_OK) {
        if (started)
            started(ud);
        sbx_arm(s, lim->instructions, lim->timeout_ms);
        st = sbx_pcall(s, 2, 0, reason);
        sbx_disarm(s);
    } else if (st == SBX_ELUA) {
        st = SBX_EHOST;
    }
    sbx_set_user(s, NULL);
    sbx_set_label(s, NULL);
    return st;
}
