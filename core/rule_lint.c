/*
 * rule_lint.c - `rules lint` (rule_lint.h): reads a pack's metadata and
 * its rules' text, never runs a check function, and says what a rule
 * lacks (a docs page, a test, option defaults) or carries unused.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "home.h"
#include "input.h"
#include "lua_rule.h"
#include "rule_lint.h"

typedef struct tok tok;
static char *read_text(const char *path);

/* ---- lint: reading a rule's text ------------------------------------------ */

#define LINT_MAX_NAMES 256

typedef struct names {
    char *v[LINT_MAX_NAMES];
    size_t n;
} names;

static void names_add(names *s, const char *p, size_t len)
{
    size_t i;

    if (s->n >= LINT_MAX_NAMES || len == 0 || len > 100)
        return;
    for (i = 0; i < s->n; i++)
        if (strlen(s->v[i]) == len && strncmp(s->v[i], p, len) == 0)
            return;
    if ((s->v[s->n] = strndup(p, len)))
        s->n++;
}

static int names_has(const names *s, const char *k)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        if (strcmp(s->v[i], k) == 0)
            return 1;
    return 0;
}

static void names_free(names *s)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        free(s->v[i]);
    s->n = 0;
}

/* Lua source tokens: identifiers, strings (kind 's', text without the
 * quotes) and single punctuation characters. Comments are dropped. */
struct tok {
    char kind; /* 'n' name, 's' string, or the punctuation character */
    const char *p;
    size_t len;
};

/* Length of a long bracket opener "[==[" at p, or 0; *level = its '='s. */
static size_t long_open(const char *p, int *level)
{
    size_t i = 1;

    if (*p != '[')
        return 0;
    while (p[i] == '=')
        i++;
    if (p[i] != '[')
        return 0;
    *level = (int)(i - 1);
    return i + 1;
}

/* The closing "]==]" of a long bracket at p.., or the end of the text;
 * *body gets the length of what the brackets enclose. */
static const char *long_close(const char *p, int level, size_t *body)
{
    const char *start = p;

    for (; *p; p++)
        if (*p == ']') {
            int i = 1;
            while (p[i] == '=')
                i++;
            if (p[i] == ']' && i - 1 == level) {
                *body = (size_t)(p - start);
                return p + i + 1;
            }
        }
    *body = (size_t)(p - start);
    return p;
}

static size_t tokenize(const char *src, tok *out, size_t max)
{
    const char *p = src;
    size_t n = 0;
    int level;

    while (*p && n < max) {
        size_t open, body;
        if (isspace((unsigned char)*p)) {
            p++;
        } else if (p[0] == '-' && p[1] == '-') {
            if ((open = long_open(p + 2, &level)))
                p = long_close(p + 2 + open, level, &body);
            else
                while (*p && *p != '\n')
                    p++;
        } else if ((open = long_open(p, &level))) {
            const char *start = p + open;
            p = long_close(start, level, &body);
            out[n++] = (tok){'s', start, body};
        } else if (*p == '"' || *p == '\'') {
            char q = *p++;
            const char *start = p;
            while (*p && *p != q && *p != '\n')
                p += (*p == '\\' && p[1]) ? 2 : 1;
            out[n++] = (tok){'s', start, (size_t)(p - start)};
            if (*p == q)
                p++;
        } else if (isalpha((unsigned char)*p) || *p == '_') {
            const char *start = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            out[n++] = (tok){'n', start, (size_t)(p - start)};
        } else if (isdigit((unsigned char)*p)) {
            while (isalnum((unsigned char)*p) || *p == '.')
                p++;
        } else {
            out[n++] = (tok){*p, p, 1};
            p++;
        }
    }
    return n;
}

static int is_name(const tok *t, const char *s)
{
    return t->kind == 'n' && strlen(s) == t->len && strncmp(t->p, s, t->len) == 0;
}

/* Whether tokens i.. are `ctx . options` followed by a separator. */
static int is_ctx_options(const tok *t, size_t n, size_t i)
{
    return i + 2 < n && is_name(&t[i], "ctx") && t[i + 1].kind == '.' &&
           is_name(&t[i + 2], "options") &&
           (i + 3 >= n || t[i + 3].kind == ',' || t[i + 3].kind == 'n' ||
            t[i + 3].kind == ')' || t[i + 3].kind == ';');
}

/* Block depth before each token: function/do/then/repeat open a block,
 * end/until close it; elseif continues the block its `if` opened. */
static void block_depths(const tok *t, size_t n, int *depth)
{
    size_t i;
    int d = 0;

    for (i = 0; i < n; i++) {
        depth[i] = d;
        if (is_name(&t[i], "function") || is_name(&t[i], "do") ||
            is_name(&t[i], "then") || is_name(&t[i], "repeat"))
            d++;
        else if (is_name(&t[i], "end") || is_name(&t[i], "until") ||
                 is_name(&t[i], "elseif"))
            d--;
    }
}

/* The severities named in `severity = <expression>` inside a function
 * (the metadata's own `severity` is outside any): "info", "warning",
 * "error" string literals up to the end of the expression (a ',' or '}'
 * outside brackets). A severity computed elsewhere (a variable) is not
 * seen. */
void rule_lint_severities(const rule_meta *r, int emits[3])
{
    char *src = read_text(r->file);
    size_t cap, n = 0, i, j;
    tok *t = NULL;
    int *depth = NULL;

    if (!src)
        return;
    cap = strlen(src) + 1;
    t = malloc(cap * sizeof *t);
    depth = malloc(cap * sizeof *depth);
    if (t && depth) {
        n = tokenize(src, t, cap);
        block_depths(t, n, depth);
    }
    for (i = 0; i + 2 < n; i++) {
        int nest = 0;
        if (!depth[i] || !is_name(&t[i], "severity") || t[i + 1].kind != '=' ||
            t[i + 2].kind == '=')
            continue;
        for (j = i + 2; j < n && !(nest == 0 && (t[j].kind == ',' || t[j].kind == '}'));
             j++) {
            int s;
            nest += t[j].kind == '(' || t[j].kind == '{';
            nest -= t[j].kind == ')' || t[j].kind == '}';
            if (t[j].kind == 's' && t[j].len < 16) {
                char word[16];
                memcpy(word, t[j].p, t[j].len);
                word[t[j].len] = '\0';
                if ((s = severity_parse(word)) >= 0)
                    emits[s] = 1;
            }
        }
    }
    free(depth);
    free(t);
    free(src);
}

typedef struct alias {
    const tok *name;
    size_t from, to; /* token range where the name means ctx.options */
} alias;

/* The end of the scope of a local declared at token i: the end of its
 * block, or where a local of the same name shadows it. */
static size_t scope_end(const tok *t, size_t n, const int *depth, size_t i,
                        const tok *name)
{
    size_t j;

    for (j = i + 1; j < n; j++) {
        if (depth[j] < depth[i])
            return j;
        if (j + 1 < n && is_name(&t[j], "local") && t[j + 1].kind == 'n' &&
            t[j + 1].len == name->len && strncmp(t[j + 1].p, name->p, name->len) == 0)
            return j;
    }
    return n;
}

/* `local a, b = x, ctx.options` makes b an alias of ctx.options. */
static size_t find_aliases(const tok *t, size_t n, const int *depth,
                           alias *out, size_t max)
{
    size_t i, j, na = 0;

    for (i = 0; i < n && na < max; i++) {
        size_t lhs[16], nl = 0, k = 0;
        if (!is_name(&t[i], "local"))
            continue;
        for (j = i + 1; j < n && t[j].kind == 'n' && nl < 16; j++) {
            lhs[nl++] = j;
            if (j + 1 < n && t[j + 1].kind == ',')
                j++;
            else {
                j++;
                break;
            }
        }
        if (j >= n || t[j].kind != '=')
            continue;
        for (j++; j < n && k < nl && na < max; k++) {
            size_t start = j;
            while (j < n && (t[j].kind == 'n' || t[j].kind == '.') &&
                   !is_name(&t[j], "local") && !is_name(&t[j], "if") &&
                   !is_name(&t[j], "for") && !is_name(&t[j], "return"))
                j++;
            if (is_ctx_options(t, n, start) && j - start == 3) {
                out[na].name = &t[lhs[k]];
                out[na].from = lhs[k];
                out[na].to = scope_end(t, n, depth, i, &t[lhs[k]]);
                na++;
            }
            if (j >= n || t[j].kind != ',')
                break;
            j++;
        }
    }
    return na;
}

static int via_alias(const alias *a, size_t na, const tok *name, size_t at)
{
    size_t i;

    for (i = 0; i < na; i++)
        if (at > a[i].from && at < a[i].to && a[i].name->len == name->len &&
            strncmp(a[i].name->p, name->p, name->len) == 0)
            return 1;
    return 0;
}

/* Field names read through ctx.options (or an alias of it in scope), and
 * every field name accessed anywhere (".x", "[\"x\"]"). */
static void scan_source(const char *src, names *used, names *fields)
{
    size_t cap = strlen(src) + 1, n, i, na;
    tok *t = malloc(cap * sizeof *t);
    int *depth = malloc(cap * sizeof *depth);
    alias aliases[64];

    if (!t || !depth)
        goto out;
    n = tokenize(src, t, cap);
    block_depths(t, n, depth);
    na = find_aliases(t, n, depth, aliases, 64);
    for (i = 0; i + 1 < n; i++) {
        const tok *key = NULL;
        int via = 0;
        if (t[i].kind == '.' && t[i + 1].kind == 'n')
            key = &t[i + 1];
        else if (t[i].kind == '[' && t[i + 1].kind == 's' && i + 2 < n &&
                 t[i + 2].kind == ']')
            key = &t[i + 1];
        if (!key)
            continue;
        names_add(fields, key->p, key->len);
        if (i < 1 || t[i - 1].kind != 'n')
            continue;
        if (is_name(&t[i - 1], "options") && i >= 3 && t[i - 2].kind == '.' &&
            is_name(&t[i - 3], "ctx"))
            via = 1;
        else if ((i < 2 || t[i - 2].kind != '.') &&
                 via_alias(aliases, na, &t[i - 1], i - 1))
            via = 1;
        if (via)
            names_add(used, key->p, key->len);
    }
out:
    free(depth);
    free(t);
}

/* A rule or module file's text, or NULL when it cannot be read (lrule_load
 * refuses rule files over the same cap). */
static char *read_text(const char *path)
{
    op_error e;
    size_t n;

    return input_read_file(path, LRULE_FILE_MAX, &n, &e);
}

/* Every field name accessed in the Lua modules of folder lib (a pack's
 * lib/, the SDK's optipipe/): options handed to a library may be read
 * there. */
static void scan_libs(const char *lib, names *fields)
{
    char path[PATH_MAX * 2];
    struct dirent *de;
    names ignore = {{0}, 0};
    DIR *d;

    if (!(d = opendir(lib)))
        return;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        char *src;
        if (l < 5 || strcmp(de->d_name + l - 4, ".lua") != 0)
            continue;
        snprintf(path, sizeof path, "%s/%s", lib, de->d_name);
        if ((src = read_text(path))) {
            scan_source(src, &ignore, fields);
            free(src);
        }
    }
    closedir(d);
    names_free(&ignore);
}

/* ---- lint: checks ------------------------------------------------------------ */

typedef rule_lint lint;

static void problem(lint *l, const char *file, const char *id, const char *fmt,
                    const char *arg)
{
    FILE *out = l->out ? l->out : stdout;
    char what[OP_ERROR_MAX + PATH_MAX];

    l->problems++;
    snprintf(what, sizeof what, fmt, arg);
    if (l->found) {
        l->found(l->ud, file, id, what);
        return;
    }
    if (id)
        fprintf(out, "%s: %s: ", file, id);
    else
        fprintf(out, "%s: ", file);
    fprintf(out, "%s\n", what);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A page `rules new` wrote and nobody finished still says TODO. */
static void check_todo(lint *l, const char *page, const rule_meta *r)
{
    char *text = read_text(page), *p, where[PATH_MAX + 300];
    unsigned line = 1;

    if (!text)
        return;
    if ((p = strstr(text, "TODO"))) {
        for (char *q = text; q < p; q++)
            line += *q == '\n';
        snprintf(where, sizeof where, "%s:%u", page, line);
        problem(l, r->file, r->id, "docs page %s still says TODO", where);
    }
    free(text);
}

/* The docs page: <pack>/docs/<id>.md, or for the bundled packs
 * <pack>/../../docs/rules/<id>.md (the source tree) or
 * <home>/docs/rules/<id>.md (an installation). */
static void check_docs(lint *l, const char *dir, const rule_meta *r)
{
    char a[PATH_MAX + 256], b[PATH_MAX + 256];

    char c[PATH_MAX + 256];

    snprintf(a, sizeof a, "%s/docs/%s.md", dir, r->id);
    snprintf(b, sizeof b, "%s/../../docs/rules/%s.md", dir, r->id);
    snprintf(c, sizeof c, "%s/docs/rules/%s.md", op_home(), r->id);
    if (!exists(a) && !exists(b) && !exists(c))
        problem(l, r->file, r->id, "no docs page (write %s)", a);
    else
        check_todo(l, exists(a) ? a : exists(b) ? b : c, r);
}

static void check_test(lint *l, const rule_meta *r)
{
    char t[PATH_MAX + 16];
    size_t n = strlen(r->file);

    if (n < 4)
        return;
    snprintf(t, sizeof t, "%.*s_test.lua", (int)(n - 4), r->file);
    if (!exists(t))
        problem(l, r->file, r->id, "no test file (write %s)", t);
}

static void check_options(lint *l, const rule_meta *r, const names *lib_fields)
{
    names used = {{0}, 0}, fields = {{0}, 0};
    const cJSON *o;
    char *src = read_text(r->file);
    size_t i;

    if (!src)
        return;
    scan_source(src, &used, &fields);
    for (i = 0; i < used.n; i++)
        if (!cJSON_GetObjectItemCaseSensitive(r->options, used.v[i]))
            problem(l, r->file, r->id,
                    "option '%s' is read but has no default in options", used.v[i]);
    cJSON_ArrayForEach(o, r->options)
        if (!names_has(&fields, o->string) && !names_has(lib_fields, o->string))
            problem(l, r->file, r->id, "option '%s' is declared but never read",
                    o->string);
    names_free(&used);
    names_free(&fields);
    free(src);
}

/* Packs are loaded as analyze loads them: untrusted, isolated under
 * --isolate auto, with the rule limits (a stalling pack ends in an error). */
void rule_lint_dir(rule_lint *l, const rule_limits *lim, const char *dir)
{
    char lua_dir[PATH_MAX], lib_dir[PATH_MAX + 16];
    ruleset *rs;
    results errs;
    op_error err;
    names lib_fields = {{0}, 0};
    size_t i;

    snprintf(lua_dir, sizeof lua_dir, "%s/lua", op_home());
    results_init(&errs);
    op_error_clear(&err);
    rs = ruleset_new(lim);
    if (!rs || ruleset_load_dir(rs, dir, dir, lua_dir, 0, &errs, &err)) {
        problem(l, dir, NULL, "%s", rs ? err.msg : "out of memory");
        goto out;
    }
    for (i = 0; i < errs.ne; i++)
        problem(l, dir, errs.e[i].rule, "does not load: %s", errs.e[i].error);
    snprintf(lib_dir, sizeof lib_dir, "%s/lib", dir);
    scan_libs(lib_dir, &lib_fields);
    snprintf(lib_dir, sizeof lib_dir, "%s/optipipe", lua_dir);
    scan_libs(lib_dir, &lib_fields);
    for (i = 0; i < ruleset_count(rs); i++) {
        rule_meta *r = ruleset_rule(rs, i);
        l->rules++;
        check_docs(l, dir, r);
        check_test(l, r);
        check_options(l, r, &lib_fields);
    }
out:
    names_free(&lib_fields);
    ruleset_free(rs);
    results_free(&errs);
}

void rule_lint_packs(rule_lint *l, const rule_limits *lim, const char *root)
{
    char *packs[RULES_MAX_PACKS], dir[PATH_MAX * 2];
    size_t n = 0, i;
    op_error err;

    op_error_clear(&err);
    if (rules_pack_names(root, packs, &n, &err))
        problem(l, root, NULL, "%s", err.msg);
    for (i = 0; i < n; i++) {
        snprintf(dir, sizeof dir, "%s/%s", root, packs[i]);
        rule_lint_dir(l, lim, dir);
        free(packs[i]);
    }
}
