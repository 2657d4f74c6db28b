/*
 * config.c - optipipe.lua (config.h, docs/config.md): reading the table,
 * checking its shape, and applying it to a loaded ruleset and to findings.
 *
 * Every mistake is an error that names the file and the key, because a
 * typo in a config file that silently does nothing is the worst outcome:
 * the user believes a rule is off (or tuned) when it is not.
 */
#include "config.h"
#include "costs.h"
#include "notify.h"

#include <errno.h>
#include <stddef.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "luadata.h"
#include "opts.h"
#include "util.h"

#define CONFIG_MAX_ENTRIES 4096

void config_init(config *c)
{
    memset(c, 0, sizeof *c);
    c->rule_pack_timeout_ms = -1;
}

void config_free(config *c)
{
    size_t i;

    for (i = 0; i < c->nrules; i++) {
        free(c->rules[i].pattern);
        cJSON_Delete(c->rules[i].options);
    }
    for (i = 0; i < c->npacks; i++)
        free(c->packs[i].name);
    for (i = 0; i < c->nignore; i++) {
        free(c->ignore[i].rule);
        free(c->ignore[i].source);
        free(c->ignore[i].run);
        free(c->ignore[i].node);
        free(c->ignore[i].reason);
    }
    for (i = 0; i < c->nrules_dirs; i++)
        free(c->rules_dirs[i]);
    free(c->rules);
    free(c->packs);
    free(c->ignore);
    free(c->rules_dirs);
    for (i = 0; i < c->nmapping_dirs; i++)
        free(c->mapping_dirs[i]);
    free(c->mapping_dirs);
    free(c->plugin_path);
    free(c->baseline);
    free(c->history);
    cJSON_Delete(c->costs);
    cJSON_Delete(c->notify);
    free(c->fail_on);
    free(c->path);
    free(c->dir);
    config_init(c);
}

/* ---- reading --------------------------------------------------------------- */

typedef struct rd {
    config *c;
    op_error *err;
} rd;

static int bad(rd *r, const char *key, const char *what)
{
    return op_error_set(r->err, OP_EUSAGE, "%s: %s: %s", r->c->path, key, what);
}

static int oom(rd *r)
{
    return op_error_set(r->err, OP_ENOMEM, "out of memory");
}

/* An empty Lua table converts to {}: it is also an empty list. */
static int is_list(const cJSON *v)
{
    return cJSON_IsArray(v) || (cJSON_IsObject(v) && !v->child);
}

static int is_glob(const char *s)
{
    return strpbrk(s, "*?[") != NULL;
}

/* Resolves p against the config's folder unless it is absolute. */
static char *resolve(const config *c, const char *p)
{
    char buf[PATH_MAX * 2];

    if (p[0] == '/' || !c->dir || strcmp(c->dir, ".") == 0)
        return strdup(p);
    snprintf(buf, sizeof buf, "%s/%s", c->dir, p);
    return strdup(buf);
}

static int read_rule_value(rd *r, config_rule *cr, const cJSON *v,
                           const char *key)
{
    const cJSON *it;

    if (cJSON_IsBool(v)) {
        cr->enabled = cJSON_IsTrue(v);
        return 0;
    }
    if (cJSON_IsString(v)) {
        if (strcmp(v->valuestring, "off") == 0)
            cr->enabled = 0;
        else if (strcmp(v->valuestring, "on") == 0)
            cr->enabled = 1;
        else if ((cr->sev = severity_parse(v->valuestring)) >= 0)
            cr->enabled = 1;
        else
            return bad(r, key, "expected true, false, \"off\", \"on\", "
                               "\"info\", \"warning\", \"error\" or a table");
        return 0;
    }
    if (!cJSON_IsObject(v))
        return bad(r, key, "expected a boolean, a string or a table");
    cJSON_ArrayForEach(it, v) {
        char at[700];
        snprintf(at, sizeof at, "%.512s.%.100s", key, it->string);
        if (strcmp(it->string, "enabled") == 0) {
            if (!cJSON_IsBool(it))
                return bad(r, at, "expected true or false");
            cr->enabled = cJSON_IsTrue(it);
        } else if (strcmp(it->string, "severity") == 0) {
            if ((cr->sev = severity_parse(cJSON_IsString(it) ? it->valuestring
                                                            : NULL)) < 0)
                return bad(r, at, "expected \"info\", \"warning\" or \"error\"");
        } else if (strcmp(it->string, "options") == 0) {
            if (!cJSON_IsObject(it))
                return bad(r, at, "expected a table of option values");
            if (cr->is_glob && it->child)
                return bad(r, at, "options need an exact rule id, not a pattern");
            if (!(cr->options = cJSON_Duplicate(it, 1)))
                return oom(r);
        } else {
            return bad(r, at, "unknown key (known: enabled, severity, options)");
        }
    }
    return 0;
}

static int read_rules(rd *r, const cJSON *v)
{
    config *c = r->c;
    const cJSON *it;
    int n;

    if (!cJSON_IsObject(v) && !is_list(v))
        return bad(r, "rules", "expected a table: { [\"rule.id\"] = ... }");
    if (cJSON_IsArray(v))
        return 0;
    n = cJSON_GetArraySize(v);
    if (n > CONFIG_MAX_ENTRIES)
        return bad(r, "rules", "too many entries");
    c->rules = calloc((size_t)n + 1, sizeof *c->rules);
    if (!c->rules)
        return oom(r);
    cJSON_ArrayForEach(it, v) {
        config_rule *cr = &c->rules[c->nrules];
        char key[512];
        int rc;
        snprintf(key, sizeof key, "rules[\"%s\"]", it->string);
        if (!(cr->pattern = strdup(it->string)))
            return oom(r);
        c->nrules++;
        cr->is_glob = is_glob(it->string);
        cr->enabled = -1;
        cr->sev = -1;
        if ((rc = read_rule_value(r, cr, it, key)))
            return rc;
    }
    return 0;
}

static int add_pack(rd *r, const char *name, int on)
{
    config *c = r->c;
    config_pack *p;

    if (c->npacks >= CONFIG_MAX_ENTRIES)
        return bad(r, "packs", "too many entries");
    p = realloc(c->packs, (c->npacks + 1) * sizeof *p);
    if (!p)
        return oom(r);
    c->packs = p;
    if (!(p[c->npacks].name = strdup(name)))
        return oom(r);
    p[c->npacks++].enabled = on;
    return 0;
}

static int read_packs(rd *r, const cJSON *v)
{
    const cJSON *it;
    int rc;

    if (cJSON_IsArray(v)) {
        r->c->packs_only = 1;
        cJSON_ArrayForEach(it, v) {
            if (!cJSON_IsString(it))
                return bad(r, "packs", "a list of pack names is strings");
            if ((rc = add_pack(r, it->valuestring, 1)))
                return rc;
        }
        return 0;
    }
    if (!cJSON_IsObject(v))
        return bad(r, "packs", "expected { \"PACK\", ... } or { PACK = false, ... }");
    cJSON_ArrayForEach(it, v) {
        char key[512];
        snprintf(key, sizeof key, "packs.%s", it->string);
        if (!cJSON_IsBool(it))
            return bad(r, key, "expected true or false");
        if ((rc = add_pack(r, it->string, cJSON_IsTrue(it))))
            return rc;
    }
    return 0;
}

static int ignore_field(rd *r, const cJSON *o, const char *k, char **out,
                        const char *at)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    char key[512];

    if (!v)
        return 0;
    snprintf(key, sizeof key, "%s.%s", at, k);
    if (!cJSON_IsString(v) || !*v->valuestring)
        return bad(r, key, "expected a non-empty string");
    if (!(*out = strdup(v->valuestring)))
        return oom(r);
    return 0;
}

static int read_ignore(rd *r, const cJSON *v)
{
    static const char *const known[] = {"rule", "source", "run", "node",
                                        "reason", NULL};
    config *c = r->c;
    const cJSON *it, *k;
    int n, i = 0, rc;

    if (!is_list(v))
        return bad(r, "ignore", "expected a list of patterns or tables");
    n = cJSON_GetArraySize(v);
    if (n > CONFIG_MAX_ENTRIES)
        return bad(r, "ignore", "too many entries");
    c->ignore = calloc((size_t)n + 1, sizeof *c->ignore);
    if (!c->ignore)
        return oom(r);
    cJSON_ArrayForEach(it, v) {
        config_ignore *ig = &c->ignore[c->nignore++];
        char at[64];
        snprintf(at, sizeof at, "ignore[%d]", ++i);
        if (cJSON_IsString(it) && *it->valuestring) {
            if (!(ig->node = strdup(it->valuestring)))
                return oom(r);
            continue;
        }
        if (!cJSON_IsObject(it))
            return bad(r, at, "expected a node pattern or a table");
        cJSON_ArrayForEach(k, it) {
            size_t j;
            for (j = 0; known[j] && strcmp(known[j], k->string); j++)
                ;
            if (!known[j]) {
                char key[512];
                snprintf(key, sizeof key, "%s.%s", at, k->string);
                return bad(r, key, "unknown key (known: rule, source, run, node, reason)");
            }
        }
        if ((rc = ignore_field(r, it, "rule", &ig->rule, at)) ||
            (rc = ignore_field(r, it, "source", &ig->source, at)) ||
            (rc = ignore_field(r, it, "run", &ig->run, at)) ||
            (rc = ignore_field(r, it, "node", &ig->node, at)) ||
            (rc = ignore_field(r, it, "reason", &ig->reason, at)))
            return rc;
        if (!ig->rule && !ig->source && !ig->run && !ig->node)
            return bad(r, at, "needs at least one of rule, source, run, node");
    }
    return 0;
}

/* A string or a list of strings, each resolved against the config dir. */
static int read_paths(rd *r, const cJSON *v, const char *key, char ***out,
                      size_t *n)
{
    const cJSON *it;
    char **list;
    int count = cJSON_IsString(v) ? 1 : cJSON_GetArraySize(v);

    if (!cJSON_IsString(v) && !is_list(v))
        return bad(r, key, "expected a path or a list of paths");
    if (count > 64)
        return bad(r, key, "at most 64 paths");
    list = calloc((size_t)count + 1, sizeof *list);
    if (!list)
        return oom(r);
    *out = list;
    if (cJSON_IsString(v)) {
        if (!(list[(*n)++] = resolve(r->c, v->valuestring)))
            return oom(r);
        return 0;
    }
    cJSON_ArrayForEach(it, v) {
        if (!cJSON_IsString(it) || !*it->valuestring)
            return bad(r, key, "paths are non-empty strings");
        if (!(list[(*n)++] = resolve(r->c, it->valuestring)))
            return oom(r);
    }
    return 0;
}

static int read_plugin_paths(rd *r, const cJSON *v)
{
    char **list = NULL;
    size_t n = 0, i, len = 1;
    int rc = read_paths(r, v, "plugin_paths", &list, &n);

    for (i = 0; i < n && !rc; i++)
        len += strlen(list[i]) + 1;
    if (!rc && n && !(r->c->plugin_path = calloc(1, len)))
        rc = oom(r);
    for (i = 0; i < n; i++) {
        if (!rc) {
            if (i)
                strcat(r->c->plugin_path, ":");
            strcat(r->c->plugin_path, list[i]);
        }
        free(list[i]);
    }
    free(list);
    return rc;
}

static int read_string(rd *r, const cJSON *v, const char *key, char **out,
                       int path)
{
    if (!cJSON_IsString(v) || !*v->valuestring)
        return bad(r, key, "expected a non-empty string");
    *out = path ? resolve(r->c, v->valuestring) : strdup(v->valuestring);
    return *out ? 0 : oom(r);
}

/* ---- the keys: one row each (opts.h's model), read_top looks them up ---- */

static int key_rules(void *r, const opt_spec *k, const void *v, op_error *e)
{
    (void)k, (void)e;
    return read_rules(r, v);
}

static int key_packs(void *r, const opt_spec *k, const void *v, op_error *e)
{
    (void)k, (void)e;
    return read_packs(r, v);
}

static int key_ignore(void *r, const opt_spec *k, const void *v, op_error *e)
{
    (void)k, (void)e;
    return read_ignore(r, v);
}

/* costs: the team's own rates, checked against the keys the engines read
 * (core/costs.c), kept as given for costs_apply. */
static int key_costs(void *ud, const opt_spec *k, const void *v, op_error *e)
{
    rd *r = ud;
    char why[1400];

    (void)k, (void)e;
    if (costs_check(v, why, sizeof why))
        return op_error_set(r->err, OP_EUSAGE, "%s: %s", r->c->path, why);
    cJSON_Delete(r->c->costs);
    if (!(r->c->costs = cJSON_Duplicate(v, 1)))
        return oom(r);
    return 0;
}

/* notify: webhook endpoints, checked by core/notify.c, kept as given
 * for notify_deliver. */
static int key_notify(void *ud, const opt_spec *k, const void *v, op_error *e)
{
    rd *r = ud;
    char why[512];

    (void)k, (void)e;
    if (notify_check(v, why, sizeof why))
        return op_error_set(r->err, OP_EUSAGE, "%s: %s", r->c->path, why);
    cJSON_Delete(r->c->notify);
    if (!(r->c->notify = cJSON_Duplicate(v, 1)))
        return oom(r);
    return 0;
}

static int key_rules_dirs(void *r, const opt_spec *k, const void *v,
                          op_error *e)
{
    config *c = ((rd *)r)->c;

    (void)e;
    return read_paths(r, v, k->name, &c->rules_dirs, &c->nrules_dirs);
}

static int key_mapping_dirs(void *r, const opt_spec *k, const void *v,
                            op_error *e)
{
    config *c = ((rd *)r)->c;

    (void)e;
    return read_paths(r, v, k->name, &c->mapping_dirs, &c->nmapping_dirs);
}

static int key_plugin_paths(void *r, const opt_spec *k, const void *v,
                            op_error *e)
{
    (void)k, (void)e;
    return read_plugin_paths(r, v);
}

static const char *severity_at(size_t i)
{
    return i <= SEV_ERROR ? severity_name((severity)i) : NULL;
}

#define CFIELD(f)                                                             \
    .off = offsetof(config, f), .width = sizeof(((config *)0)->f)

/* Every key of optipipe.lua: name, type, field or reader, value (metavar),
 * default and meaning (the rows of docs/config.md's "Every setting",
 * generated by scripts/gen-docs from `optipipe --dump-options=json`).
 * A new key is one row here (and its field in config.h). */
static const opt_spec config_key_rows[] = {
    {"rules", NULL, .type = OPT_TABLE, .read = key_rules,
     .metavar = "`{ [id or pattern] = setting }`",
     .help = "per-rule switches, severities, options (below)"},
    {"packs", NULL, .type = OPT_TABLE, .read = key_packs,
     .metavar = "`{ name = true/false, ... }` or `{ \"name\", ... }`",
     .help = "a map turns packs off (or on again); a list runs only those "
             "bundled packs (rule folders from `rules_dirs`/`--rules` always "
             "run)"},
    {"ignore", NULL, .type = OPT_TABLE, .read = key_ignore,
     .metavar = "list of patterns or tables",
     .help = "findings to hide (below)"},
    {"rules_dirs", NULL, .type = OPT_LIST, .read = key_rules_dirs,
     .flags = OPT_PATH, .metavar = "path or list of paths",
     .help = "rule folders added after `--rules` ones; each is a pack named "
             "after its path"},
    {"mapping_dirs", NULL, .type = OPT_LIST, .read = key_mapping_dirs,
     .flags = OPT_PATH, .metavar = "path or list of paths",
     .help = "mapping pack folders (docs/mapping-packs.md) added after "
             "`--mappings` ones, before the bundled packs"},
    {"plugin_paths", NULL, .type = OPT_LIST, .read = key_plugin_paths,
     .flags = OPT_PATH, .metavar = "path or list of paths",
     .help = "added after `--plugin-path` / `OPTIPIPE_PLUGIN_PATH`"},
    {"baseline", NULL, .type = OPT_STRING, CFIELD(baseline), .flags = OPT_PATH,
     .metavar = "path",
     .help = "the decisions file ([baselines.md](baselines.md)); "
             "`--baseline` wins, `--no-baseline` reads none; without it the "
             "nearest `.optipipe-baseline.json` is used"},
    {"history", NULL, .type = OPT_STRING, CFIELD(history), .flags = OPT_PATH,
     .metavar = "path",
     .help = "the SQLite run store `analyze` records into and rules read "
             "earlier runs from ([history.md](history.md)); `--history` and "
             "`OPTIPIPE_HISTORY` win"},
    {"fail_on", NULL, .type = OPT_ENUM, CFIELD(fail_on), .choice = severity_at,
     .metavar = "`\"info\"`, `\"warning\"`, `\"error\"`",
     .help = "exit 1 at or above it; `--fail-on` wins"},
    {"allow_rule_errors", NULL, .type = OPT_FLAG, CFIELD(allow_rule_errors),
     .metavar = "`true` / `false`", .def = "false",
     .help = "`true`: a rule that failed does not make `analyze` exit 5 "
             "(`--allow-rule-errors` also turns it on; "
             "[cli.md](cli.md#exit-codes))"},
    {"rule_pack_timeout_ms", NULL, .type = OPT_INT,
     CFIELD(rule_pack_timeout_ms), .lo = 0, .hi = 4294967295.0,
     .metavar = "whole number ≥ 0", .def = "30000",
     .help = "wall-clock budget of each rule pack per analysis, its files' "
             "loading and all its rule calls together (0: none; "
             "[sandbox.md](sandbox.md#limits)); `--rule-pack-timeout-ms` wins"},
    {"costs", NULL, .type = OPT_TABLE, .read = key_costs,
     .metavar = "`{ platform = { rate = number or text }, currency = \"USD\" }`",
     .help = "the team's own rates (no price ships): findings with an "
             "estimated time saved then carry `estimated_savings`, reports "
             "total it per run and job, and \"Start here\" ranks by it; keys "
             "and how each figure is computed: [costs.md](costs.md). An "
             "unknown platform or rate is an error naming the known ones"},
    {"notify", NULL, .type = OPT_TABLE, .read = key_notify,
     .metavar = "`{ { name = ..., url = ..., kind = \"slack\" or \"json\", "
                "... }, ... }`",
     .help = "webhooks told of new findings, regressions, ineffective "
             "changes and failed analyses after `analyze` (each event once "
             "until it changes, with a run store); keys, payloads and the "
             "signature: [notify.md](notify.md)"},
    {.name = NULL}};

const opt_spec *config_keys(void)
{
    return config_key_rows;
}

/* "a, b, c": the names of the rows, for the unknown-key message. */
static void key_names(char *buf, size_t len)
{
    const opt_spec *k;
    size_t used = 0;

    buf[0] = '\0';
    for (k = config_key_rows; k->name && used < len; k++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                 k == config_key_rows ? "" : ", ", k->name);
}

/* A value of a row without a reader, by its type, into its field of c. */
static int read_typed(rd *r, const opt_spec *k, const cJSON *v)
{
    char *field = (char *)r->c + k->off;
    size_t i;

    switch (k->type) {
    case OPT_FLAG: {
        int on = cJSON_IsTrue(v);
        if (!cJSON_IsBool(v))
            return bad(r, k->name, "expected true or false");
        memcpy(field, &on, sizeof on);
        return 0;
    }
    case OPT_INT: {
        long long n;
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= k->lo) ||
            v->valuedouble > k->hi ||
            v->valuedouble != (double)(long long)v->valuedouble)
        {
            char what[96];
            snprintf(what, sizeof what, "expected a whole number from %.0f "
                     "to %.0f", k->lo, k->hi);
            return bad(r, k->name, what);
        }
        n = (long long)v->valuedouble;
        memcpy(field, &n, sizeof n); /* the field is a long long */
        return 0;
    }
    case OPT_ENUM: {
        char list[160], *dup;
        size_t used = 0;
        for (i = 0; k->choice(i); i++)
            if (cJSON_IsString(v) && strcmp(v->valuestring, k->choice(i)) == 0)
                break;
        if (!k->choice(i)) {
            list[0] = '\0';
            for (i = 0; k->choice(i) && used < sizeof list; i++)
                used += (size_t)snprintf(list + used, sizeof list - used,
                                         "%s\"%s\"", i == 0 ? "expected "
                                         : k->choice(i + 1) ? ", " : " or ",
                                         k->choice(i));
            return bad(r, k->name, list);
        }
        if (!(dup = strdup(v->valuestring)))
            return oom(r);
        memcpy(field, &dup, sizeof dup);
        return 0;
    }
    case OPT_STRING: {
        char *out = NULL;
        int rc = read_string(r, v, k->name, &out, (k->flags & OPT_PATH) != 0);
        memcpy(field, &out, sizeof out);
        return rc;
    }
    default:
        return bad(r, k->name, "no reader for this key (config.c)");
    }
}

static int read_top(rd *r, const cJSON *root)
{
    const cJSON *it;
    const opt_spec *k;
    char names[512], msg[600];
    int rc = 0;

    if (!cJSON_IsObject(root) && !is_list(root))
        return bad(r, "return value", "must be a table of settings");
    cJSON_ArrayForEach(it, root) {
        if (!it->string)
            return bad(r, "return value", "must be a table with named keys");
        for (k = config_key_rows; k->name; k++)
            if (strcmp(k->name, it->string) == 0)
                break;
        if (!k->name) {
            key_names(names, sizeof names);
            snprintf(msg, sizeof msg, "unknown setting (known: %s)", names);
            return bad(r, it->string, msg);
        }
        rc = k->read ? k->read(r, k, it, r->err) : read_typed(r, k, it);
        if (rc)
            return rc;
    }
    return 0;
}

int config_load(const char *path, config *c, op_error *err)
{
    cJSON *root = NULL;
    const char *slash;
    rd r;
    int rc;

    config_init(c);
    c->path = strdup(path);
    slash = strrchr(path, '/');
    c->dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path))
                   : strdup(".");
    if (!c->path || !c->dir)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    rc = luadata_eval_file(path, &root, err);
    if (rc) {
        if (rc == OP_EPARSE)
            err->code = rc = OP_EUSAGE;
        return rc;
    }
    r.c = c;
    r.err = err;
    rc = read_top(&r, root);
    cJSON_Delete(root);
    return rc;
}

/* Whether dir (a path relative to the working directory, "" for it)
 * holds name. */
static int holds(const char *dir, const char *name, int want_file)
{
    char p[PATH_MAX];
    struct stat st;

    if (snprintf(p, sizeof p, "%s%s", dir, name) >= (int)sizeof p)
        return 0;
    if (want_file)
        return stat(p, &st) == 0 && S_ISREG(st.st_mode);
    return lstat(p, &st) == 0; /* .git: a folder, or a worktree's file */
}

/* Whether dir is the same folder as the real path home. */
static int is_home(const char *dir, const char *home)
{
    char real[PATH_MAX];

    return home && realpath(*dir ? dir : ".", real) && strcmp(real, home) == 0;
}

int config_locate(const char *name, char *out, size_t n)
{
    char dir[CONFIG_SEARCH_DEPTH * 3 + 1] = "", home_real[PATH_MAX];
    const char *home = getenv("HOME");
    int depth, bounded = 0;

    home = home && *home && realpath(home, home_real) ? home_real : NULL;
    /* Parents are searched only inside a repository or the home folder:
     * elsewhere (a shared /tmp) a file left by someone else must not
     * configure the run. */
    for (depth = 0; depth < CONFIG_SEARCH_DEPTH; depth++) {
        char real[PATH_MAX];
        if (holds(dir, name, 1))
            return snprintf(out, n, "%s%s", dir, name) < (int)n ? 0 : -1;
        if (holds(dir, ".git", 0) || is_home(dir, home))
            return -1; /* the top of the project */
        if (!realpath(*dir ? dir : ".", real) || strcmp(real, "/") == 0)
            return -1;
        if (depth == 0) {
            char cwd[PATH_MAX];
            size_t hl = home ? strlen(home) : 0;
            bounded = getcwd(cwd, sizeof cwd) &&
                      ((home && strncmp(cwd, home, hl) == 0 && cwd[hl] == '/') ||
                       config_in_repository());
            if (!bounded)
                return -1;
        }
        strcat(dir, "../");
    }
    return -1;
}

int config_in_repository(void)
{
    char dir[CONFIG_SEARCH_DEPTH * 3 + 1] = "", real[PATH_MAX];
    int depth;

    for (depth = 0; depth < CONFIG_SEARCH_DEPTH; depth++) {
        if (holds(dir, ".git", 0))
            return 1;
        if (!realpath(*dir ? dir : ".", real) || strcmp(real, "/") == 0)
            return 0;
        strcat(dir, "../");
    }
    return 0;
}

int config_find(const char *explicit_path, config *c, op_error *err)
{
    char found[PATH_MAX];
    struct stat st;

    config_init(c);
    if (explicit_path) {
        if (stat(explicit_path, &st) != 0)
            return op_error_set(err, OP_EUSAGE, "--config %s: %s", explicit_path,
                                strerror(errno));
        return config_load(explicit_path, c, err);
    }
    if (config_locate(CONFIG_FILE_NAME, found, sizeof found) == 0)
        return config_load(found, c, err);
    return 0;
}

/* ---- applying to rules ---------------------------------------------------------- */

static const char *json_type(const cJSON *v)
{
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsArray(v))
        return "a list";
    if (cJSON_IsObject(v))
        return "a table";
    return "nil";
}

static void option_names(const cJSON *want, char *buf, size_t len)
{
    const cJSON *it;
    size_t used = 0;

    buf[0] = '\0';
    cJSON_ArrayForEach(it, want) {
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
                         it->string ? it->string : "?");
        if (n < 0 || (size_t)n >= len - used)
            break;
        used += (size_t)n;
    }
    if (!used)
        snprintf(buf, len, "none");
}

int config_check_options(const cJSON *want, const cJSON *got,
                         const char *where, char *msg, size_t msglen)
{
    const cJSON *g;

    cJSON_ArrayForEach(g, got) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(want, g->string);
        char at[512], names[256];
        int ok;

        snprintf(at, sizeof at, "%s.%s", where, g->string ? g->string : "?");
        if (!w) {
            option_names(want, names, sizeof names);
            snprintf(msg, msglen, "%s: no such option (options: %s)", at, names);
            return -1;
        }
        if (cJSON_IsNull(g))
            continue;
        if (cJSON_IsObject(w) && w->child)
            ok = cJSON_IsObject(g) || is_list(g);
        else if (cJSON_IsArray(w) || cJSON_IsObject(w))
            ok = cJSON_IsArray(g) || cJSON_IsObject(g);
        else if (cJSON_IsNumber(w))
            ok = cJSON_IsNumber(g);
        else if (cJSON_IsString(w))
            ok = cJSON_IsString(g);
        else if (cJSON_IsBool(w))
            ok = cJSON_IsBool(g);
        else
            ok = 1;
        if (!ok) {
            snprintf(msg, msglen, "%s: expected %s (the default is %s), got %s",
                     at, json_type(w), json_type(w), json_type(g));
            /* say what the default is, not its type twice */
            if (cJSON_IsNumber(w) || cJSON_IsString(w) || cJSON_IsBool(w)) {
                char *d = cJSON_PrintUnformatted(w);
                snprintf(msg, msglen, "%s: expected %s (default %s), got %s",
                         at, json_type(w), d ? d : "?", json_type(g));
                cJSON_free(d);
            }
            return -1;
        }
        if (cJSON_IsObject(w) && w->child && cJSON_IsObject(g) &&
            config_check_options(w, g, at, msg, msglen))
            return -1;
    }
    return 0;
}

static const char *base_name(const char *p)
{
    size_t n = strlen(p);
    const char *s;

    while (n > 1 && p[n - 1] == '/')
        n--;
    for (s = p + n; s > p && s[-1] != '/'; s--)
        ;
    return s;
}

/* A pack of the config names a rule's pack by its name or folder name. */
static int pack_is(const rule_meta *m, const char *name)
{
    const char *b = base_name(m->pack);
    size_t n = strlen(b);

    while (n > 1 && b[n - 1] == '/')
        n--;
    return strcmp(m->pack, name) == 0 ||
           (strncmp(b, name, n) == 0 && name[n] == '\0');
}

static const char *suggest(ruleset *rs, const char *id)
{
    const char *best = NULL;
    size_t i, d, bd = 4;

    for (i = 0; i < ruleset_count(rs); i++) {
        rule_meta *m = ruleset_rule(rs, i);
        d = util_edit_distance(id, m->id);
        if (d < bd) {
            bd = d;
            best = m->id;
        }
    }
    return best;
}

static int apply_packs(const config *c, ruleset *rs, int partial,
                       op_error *err)
{
    size_t i, j;

    for (i = 0; i < c->npacks; i++) {
        int found = 0;
        for (j = 0; j < ruleset_count(rs); j++) {
            rule_meta *m = ruleset_rule(rs, j);
            if (pack_is(m, c->packs[i].name)) {
                found = 1;
                if (!c->packs_only)
                    m->enabled = c->packs[i].enabled;
            }
        }
        if (!found && !partial)
            return op_error_set(err, OP_EUSAGE,
                                "%s: packs: no pack named '%s' is loaded",
                                c->path, c->packs[i].name);
    }
    if (!c->packs_only)
        return 0;
    for (j = 0; j < ruleset_count(rs); j++) {
        rule_meta *m = ruleset_rule(rs, j);
        int listed = 0;
        for (i = 0; i < c->npacks && !listed; i++)
            listed = pack_is(m, c->packs[i].name);
        if (m->trusted && !listed)
            m->enabled = 0; /* only bundled packs are selected this way */
    }
    return 0;
}

static int apply_one(const config *c, const config_rule *cr, rule_meta *m,
                     op_error *err)
{
    char msg[OP_ERROR_MAX - 64], where[256];

    if (cr->enabled >= 0)
        m->enabled = cr->enabled;
    if (cr->sev >= 0) {
        m->sev = (severity)cr->sev;
        m->sev_configured = 1;
    }
    if (!cr->options)
        return 0;
    snprintf(where, sizeof where, "rules[\"%s\"].options", m->id);
    if (config_check_options(m->options, cr->options, where, msg, sizeof msg))
        return op_error_set(err, OP_EUSAGE, "%s: %s", c->path, msg);
    cJSON_Delete(m->overrides);
    m->overrides = cJSON_Duplicate(cr->options, 1);
    return m->overrides ? 0 : op_error_set(err, OP_ENOMEM, "out of memory");
}

/* Globs by length then bytes: a longer pattern is the more specific. */
static int glob_cmp(const void *a, const void *b)
{
    const config_rule *x = *(config_rule *const *)a, *y = *(config_rule *const *)b;
    size_t lx = strlen(x->pattern), ly = strlen(y->pattern);

    if (lx != ly)
        return lx < ly ? -1 : 1;
    return strcmp(x->pattern, y->pattern);
}

static int apply_globs(const config *c, ruleset *rs, int partial,
                       op_error *err)
{
    config_rule **g;
    size_t n = 0, i, j;
    int rc = 0;

    g = calloc(c->nrules + 1, sizeof *g);
    if (!g)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    for (i = 0; i < c->nrules; i++)
        if (c->rules[i].is_glob)
            g[n++] = &c->rules[i];
    qsort(g, n, sizeof *g, glob_cmp);
    for (i = 0; i < n && !rc; i++) {
        int hits = 0;
        for (j = 0; j < ruleset_count(rs) && !rc; j++) {
            rule_meta *m = ruleset_rule(rs, j);
            if (fnmatch(g[i]->pattern, m->id, 0) == 0) {
                hits++;
                rc = apply_one(c, g[i], m, err);
            }
        }
        if (!rc && !hits && !partial)
            rc = op_error_set(err, OP_EUSAGE,
                              "%s: rules[\"%s\"]: the pattern matches no rule",
                              c->path, g[i]->pattern);
    }
    free(g);
    return rc;
}

int config_apply(const config *c, ruleset *rs, int partial, op_error *err)
{
    size_t i;
    int rc;

    if ((rc = apply_packs(c, rs, partial, err)) ||
        (rc = apply_globs(c, rs, partial, err)))
        return rc;
    for (i = 0; i < c->nrules; i++) {
        const config_rule *cr = &c->rules[i];
        rule_meta *m;
        if (cr->is_glob)
            continue;
        m = ruleset_find(rs, cr->pattern);
        if (!m) {
            const char *s = suggest(rs, cr->pattern);
            if (partial)
                continue;
            return op_error_set(err, OP_EUSAGE,
                                "%s: rules[\"%s\"]: no rule with this id%s%s%s",
                                c->path, cr->pattern, s ? " (did you mean '" : "",
                                s ? s : "", s ? "'?)" : "");
        }
        if ((rc = apply_one(c, cr, m, err)))
            return rc;
    }
    return 0;
}

/* ---- ignoring findings ------------------------------------------------------ */

static int glob_ok(const char *pat, const char *a, const char *b)
{
    if (!pat)
        return 1;
    return (a && fnmatch(pat, a, 0) == 0) || (b && fnmatch(pat, b, 0) == 0);
}

static int ignored(const config_ignore *ig, const model *m, const finding *f)
{
    const struct op_run *run =
        f->run_index < m->nruns ? m->runs[f->run_index] : NULL;

    if (ig->run && !run)
        return 0;
    if (ig->node && !f->node_id)
        return 0;
    return glob_ok(ig->rule, f->rule, NULL) &&
           glob_ok(ig->source, f->source, NULL) &&
           glob_ok(ig->run, run ? run->id : NULL, run ? run->name : NULL) &&
           glob_ok(ig->node, f->node_id, f->node_name);
}

size_t config_ignore_findings(const config *c, const model *m, results *res)
{
    size_t i, j, n = 0;

    for (i = 0; i < res->n; i++)
        for (j = 0; j < c->nignore; j++)
            if (ignored(&c->ignore[j], m, &res->f[i])) {
                res->f[i].suppressed = FINDING_IGNORED;
                n++;
                break;
            }
    return n;
}
