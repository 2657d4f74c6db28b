/*
 * opts.c - the one option parser, help writer and describer (opts.h):
 * every command's argv is read, its --help printed and its JSON
 * description (--dump-options) written from its table, so what a command
 * accepts and what it says it accepts cannot drift apart.
 */
#include "opts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "util.h"

#define OPTS_MAX_NAMES 256 /* option names of one command, for suggestions */
#define HELP_COL 24        /* where the explanations start */
#define HELP_WIDTH 79

/* ---- finding an option ------------------------------------------------ */

const opt_group *opts_group_at(const opt_cmd *cmd, size_t i)
{
    size_t n = 0;

    while (n < OPTS_MAX_GROUPS && cmd->groups[n])
        n++;
    if (i < n)
        return cmd->groups[i];
    return cmd->more ? cmd->more(i - n) : NULL;
}

/* The entry named name and its group (for the group's binding). */
static const opt_spec *find_in(const opt_cmd *cmd, const char *name,
                               const opt_group **group)
{
    size_t g;
    const opt_group *gr;
    const opt_spec *o;

    for (g = 0; (gr = opts_group_at(cmd, g)) != NULL; g++)
        for (o = gr->specs; o->name; o++)
            if (strcmp(o->name, name) == 0 ||
                (o->alias && strcmp(o->alias, name) == 0)) {
                *group = gr;
                return o;
            }
    return NULL;
}

const opt_spec *opts_find(const opt_cmd *cmd, const char *name)
{
    const opt_group *g;

    return find_in(cmd, name, &g);
}

/* The struct group's offsets are into, for the command's base. */
static void *bound(const opt_group *g, void *base)
{
    return g->bind ? g->bind(base, g->ctx) : base;
}

static int unknown_option(const opt_cmd *cmd, const char *name,
                          op_error *err)
{
    const char *names[OPTS_MAX_NAMES], *best;
    size_t n = 0, g;
    const opt_group *gr;
    const opt_spec *o;

    for (g = 0; (gr = opts_group_at(cmd, g)) != NULL; g++)
        for (o = gr->specs; o->name && n < OPTS_MAX_NAMES; o++)
            names[n++] = o->name;
    names[n < OPTS_MAX_NAMES ? n++ : n - 1] = "--help";
    best = util_suggest(name, names, n, 3);
    if (best)
        return op_error_set(err, OP_EUSAGE, "unknown option '%.200s' (did "
                            "you mean '%s'?)", name, best);
    return op_error_set(err, OP_EUSAGE, "unknown option '%.200s'", name);
}

/* ---- values ------------------------------------------------------------ */

static int enum_value(const opt_spec *o, const char *v, opt_value *out,
                      op_error *err)
{
    const char *names[64], *best;
    char list[512];
    size_t n, used = 0;

    for (n = 0; n < 64 && o->choice(n); n++) {
        names[n] = o->choice(n);
        if (strcmp(names[n], v) == 0) {
            out->s = names[n];
            return 0;
        }
    }
    list[0] = '\0';
    for (size_t i = 0; i < n && used < sizeof list; i++)
        used += (size_t)snprintf(list + used, sizeof list - used, "%s%s",
                                 i == 0 ? "" : i + 1 == n ? " or " : ", ",
                                 names[i]);
    best = util_suggest(v, names, n, 3);
    return op_error_set(err, OP_EUSAGE, "%s takes %s, not '%.100s'%s%s%s",
                        o->name, list, v, best ? " (did you mean '" : "",
                        best ? best : "", best ? "'?)" : "");
}

/* A whole number, with a 1024-power suffix for OPT_SIZE ("64m", "2GiB"). */
static int whole_value(const opt_spec *o, const char *v, opt_value *out,
                       op_error *err)
{
    char *end;
    unsigned long long n;
    uint64_t mult = 1, top = o->width >= 8 ? UINT64_MAX : UINT32_MAX;

    errno = 0;
    n = strtoull(v, &end, 10);
    if (!errno && end != v && o->type == OPT_SIZE) {
        const char *sfx = strchr("kmgt", *end | 0x20);
        if (*end && sfx) {
            mult = 1ull << (10 * (1 + (sfx - "kmgt")));
            end++;
            if ((*end | 0x20) == 'i')
                end++;
            if ((*end | 0x20) == 'b')
                end++;
        }
    }
    if (o->hi > 0 && o->hi < (double)top)
        top = (uint64_t)o->hi;
    if (errno || end == v || *end || v[0] == '-' || v[0] == '+' ||
        n > UINT64_MAX / mult || n * mult > top || (double)(n * mult) < o->lo) {
        if (o->type == OPT_SIZE)
            return op_error_set(err, OP_EUSAGE, "%s: expected a size such as "
                                "1048576 or 64m, from %.0f to %llu, not "
                                "'%.40s'", o->name, o->lo,
                                (unsigned long long)top, v);
        return op_error_set(err, OP_EUSAGE, "%s: expected a whole number "
                            "from %.0f to %llu, not '%.40s'", o->name, o->lo,
                            (unsigned long long)top, v);
    }
    out->u = n * mult;
    return 0;
}

static int double_value(const opt_spec *o, const char *v, opt_value *out,
                        op_error *err)
{
    char *end;
    double d;

    errno = 0;
    d = strtod(v, &end);
    if (errno || end == v || *end || !(d >= o->lo && d <= o->hi))
        return op_error_set(err, OP_EUSAGE, "%s: expected a number from %g "
                            "to %g, not '%.40s'", o->name, o->lo, o->hi, v);
    out->d = d;
    return 0;
}

static int parse_value(const opt_spec *o, const char *v, opt_value *out,
                       op_error *err)
{
    memset(out, 0, sizeof *out);
    out->s = v;
    switch (o->type) {
    case OPT_ENUM: return enum_value(o, v, out, err);
    case OPT_INT:
    case OPT_SIZE: return whole_value(o, v, out, err);
    case OPT_DOUBLE: return double_value(o, v, out, err);
    default: return 0;
    }
}

/* Whether a list of n words needs a larger array for one more: arrays
 * hold 4, 8, 16, ... words, so the capacity follows from the count. */
static int list_full(size_t n)
{
    return n == 0 || (n >= 4 && (n & (n - 1)) == 0);
}

static int add_to_list(const opt_spec *o, void *base, const char *v,
                       const char *shown, op_error *err)
{
    char *b = base;
    size_t n;
    const char **list;

    memcpy(&n, b + o->count_off, sizeof n);
    memcpy(&list, b + o->off, sizeof list);
    if (n >= o->max)
        return op_error_set(err, OP_EUSAGE, "at most %zu %s", o->max, shown);
    if (list_full(n)) {
        size_t cap = n ? 2 * n : 4;
        const char **grown = realloc((void *)list, cap * sizeof *list);
        if (!grown)
            return op_error_set(err, OP_ENOMEM, "%s: out of memory", shown);
        list = grown;
        memcpy(b + o->off, &list, sizeof list);
    }
    list[n++] = v;
    memcpy(b + o->count_off, &n, sizeof n);
    return 0;
}

static void free_list(const opt_spec *o, void *base)
{
    char *b = base;
    const char **list;
    size_t zero = 0;

    if (!b || o->type != OPT_LIST || o->set)
        return;
    memcpy(&list, b + o->off, sizeof list);
    free((void *)list);
    list = NULL;
    memcpy(b + o->off, &list, sizeof list);
    memcpy(b + o->count_off, &zero, sizeof zero);
}

void opts_free(const opt_cmd *cmd, void *base)
{
    const opt_group *gr;
    const opt_spec *o;
    size_t g;

    for (g = 0; (gr = opts_group_at(cmd, g)) != NULL; g++)
        for (o = gr->specs; o->name; o++)
            free_list(o, bound(gr, base));
    free_list(&cmd->operands, base);
}

static void store(const opt_spec *o, void *base, const opt_value *v)
{
    char *field = (char *)base + o->off;
    int one = 1;

    switch (o->type) {
    case OPT_FLAG: memcpy(field, &one, sizeof one); break;
    case OPT_INT:
    case OPT_SIZE:
        if (o->width >= 8) {
            memcpy(field, &v->u, sizeof v->u);
        } else {
            uint32_t u = (uint32_t)v->u; /* whole_value kept it in range */
            memcpy(field, &u, sizeof u);
        }
        break;
    case OPT_DOUBLE: memcpy(field, &v->d, sizeof v->d); break;
    default: memcpy(field, &v->s, sizeof v->s); break;
    }
}

static int apply(const opt_spec *o, void *base, const char *text,
                 op_error *err)
{
    opt_value v;
    int rc;

    if ((rc = parse_value(o, text, &v, err)))
        return rc;
    if (o->set)
        return o->set(base, o, &v, err);
    if (o->type == OPT_LIST) {
        char shown[96];
        snprintf(shown, sizeof shown, "%s options", o->name);
        return add_to_list(o, base, v.s, shown, err);
    }
    store(o, base, &v);
    return 0;
}

/* ---- the parser -------------------------------------------------------- */

static int operand(const opt_cmd *cmd, void *base, const char *word,
                   op_error *err)
{
    char shown[96];

    snprintf(shown, sizeof shown, "%s%s", cmd->operands.metavar,
             cmd->operands.max == 1 ? "" : "s");
    if (cmd->operands.max == 1 && !cmd->operands.set) {
        size_t n;
        memcpy(&n, (char *)base + cmd->operands.count_off, sizeof n);
        if (n)
            return op_error_set(err, OP_EUSAGE, "one %s only; '%.200s' is "
                                "extra", cmd->operands.metavar, word);
    }
    return add_to_list(&cmd->operands, base, word, shown, err);
}

/* One option word at argv[*i]: "--name", "--name=value" or "-o". */
static int option(const opt_cmd *cmd, void *base, int argc, char **argv,
                  int *i, op_error *err)
{
    const char *a = argv[*i], *eq = NULL, *value;
    char name[128];
    const opt_spec *o;
    const opt_group *g = NULL;

    if (a[1] == '-' && (eq = strchr(a, '=')) != NULL) {
        snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
        o = find_in(cmd, name, &g);
    } else {
        snprintf(name, sizeof name, "%s", a);
        o = find_in(cmd, a, &g);
    }
    if (!o)
        return unknown_option(cmd, name, err);
    if (!(base = bound(g, base)))
        return op_error_set(err, OP_ENOMEM, "%s: no room for its value",
                            o->name);
    if (o->type == OPT_FLAG) {
        opt_value v = {NULL, 1, 1};
        if (eq)
            return op_error_set(err, OP_EUSAGE, "%s takes no value ('%.200s')",
                                o->name, a);
        if (o->set)
            return o->set(base, o, &v, err);
        store(o, base, &v);
        return 0;
    }
    if (eq) {
        value = eq + 1;
    } else {
        if (*i + 1 >= argc || !argv[*i + 1])
            return op_error_set(err, OP_EUSAGE, "option %s needs a value",
                                name);
        value = argv[++*i];
    }
    return apply(o, base, value, err);
}

int opts_parse(const opt_cmd *cmd, void *base, int argc, char **argv,
               op_error *err)
{
    int i, rc;

    for (i = 0; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
            return OPTS_HELP;
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++)
                if ((rc = operand(cmd, base, argv[i], err)))
                    return rc;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            rc = operand(cmd, base, a, err);
        else
            rc = option(cmd, base, argc, argv, &i, err);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- help ---------------------------------------------------------------- */

/* Writes text from column col on, wrapped at word boundaries. */
static void wrap(FILE *f, const char *text, size_t col)
{
    size_t at = col;
    const char *p = text;

    while (*p) {
        size_t w = strcspn(p, " ");
        if (at > col && at + 1 + w > HELP_WIDTH) {
            fprintf(f, "\n%*s", (int)col, "");
            at = col;
        } else if (at > col) {
            fputc(' ', f);
            at++;
        }
        fwrite(p, 1, w, f);
        at += w;
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}

void opts_help_row(FILE *f, const char *left, const char *text)
{
    size_t n = strlen(left);

    fprintf(f, "  %s", left);
    if (!text || !*text) {
        fputc('\n', f);
        return;
    }
    if (2 + n + 2 > HELP_COL)
        fprintf(f, "\n%*s", HELP_COL, "");
    else
        fprintf(f, "%*s", (int)(HELP_COL - 2 - n), "");
    wrap(f, text, HELP_COL);
}

/* The explanation of one entry: its help, the values, the default. */
static void explain(const opt_spec *o, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "%s", o->help ? o->help : "");
    size_t i;

    if (o->type == OPT_ENUM) {
        for (i = 0; o->choice(i) && used < n; i++) {
            const char *v = o->choice(i);
            used += (size_t)snprintf(buf + used, n - used, "%s%s%s",
                                     i ? ", " : ": ", v,
                                     o->def && strcmp(o->def, v) == 0
                                         ? " (default)" : "");
        }
    } else if (o->def && used < n) {
        used += (size_t)snprintf(buf + used, n - used, " (default %s)", o->def);
    }
    if (o->type == OPT_LIST && used < n)
        snprintf(buf + used, n - used, " (repeatable)");
}

static void spec_help(FILE *f, const opt_spec *o)
{
    char left[128], text[1024];

    snprintf(left, sizeof left, "%s%s%s%s%s", o->alias ? o->alias : "",
             o->alias ? ", " : "", o->name, o->metavar ? " " : "",
             o->metavar ? o->metavar : "");
    explain(o, text, sizeof text);
    opts_help_row(f, left, text);
}

/* Paragraphs of text, blank-line separated, each wrapped from column 0. */
static void paragraphs(FILE *f, const char *text)
{
    const char *p = text;

    while (*p) {
        const char *end = strstr(p, "\n\n");
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char para[2048];
        size_t i;

        snprintf(para, sizeof para, "%.*s", (int)len, p);
        fputc('\n', f);
        if (para[0] == ' ') { /* an indented paragraph is laid out already */
            fprintf(f, "%s\n", para);
        } else {
            for (i = 0; para[i]; i++)
                if (para[i] == '\n')
                    para[i] = ' ';
            wrap(f, para, 0);
        }
        p += len;
        while (*p == '\n')
            p++;
    }
}

void opts_help(const opt_cmd *cmd, const char *prog, FILE *f)
{
    size_t g;
    const opt_spec *o;
    const char *title = NULL;

    fprintf(f, "Usage: %s %s%s%s\n", prog, cmd->name, cmd->args ? " " : "",
            cmd->args ? cmd->args : "");
    if (cmd->about)
        paragraphs(f, cmd->about);
    for (g = 0; opts_group_at(cmd, g); g++) {
        const opt_group *gr = opts_group_at(cmd, g);
        /* groups of one title (Inputs: --plugin-path, then the limits)
         * read as one */
        if (gr->specs->name &&
            (!title || strcmp(title, gr->title) != 0))
            fprintf(f, "\n%s:\n", gr->title);
        if (gr->specs->name)
            title = gr->title;
        for (o = gr->specs; o->name; o++)
            spec_help(f, o);
    }
    fputc('\n', f);
    opts_help_row(f, "-h, --help", "this help");
    if (cmd->after)
        paragraphs(f, cmd->after);
}

/* ---- defaults and descriptions ------------------------------------------- */

void opts_defaults(const opt_spec *specs, void *base)
{
    const opt_spec *o;
    opt_value v;
    op_error err;

    for (o = specs; o->name; o++) {
        if (!o->def || o->set || o->read)
            continue;
        if (o->type != OPT_INT && o->type != OPT_SIZE &&
            o->type != OPT_DOUBLE && o->type != OPT_ENUM)
            continue; /* a string's default says what happens */
        if (parse_value(o, o->def, &v, &err) == 0)
            store(o, base, &v);
    }
}

const char *opts_type_name(opt_type t)
{
    static const char *const names[] = {"flag", "string", "int", "size",
                                        "double", "enum", "list", "table"};

    return (size_t)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

static void put_str_or_null(jw *w, const char *key, const char *v)
{
    jw_key(w, key);
    jw_str(w, v); /* NULL: null */
}

void opts_dump_spec(jw *w, const opt_spec *o)
{
    size_t i;

    jw_obj(w);
    put_str_or_null(w, "name", o->name);
    put_str_or_null(w, "alias", o->alias);
    jw_key(w, "type");
    jw_str(w, opts_type_name(o->type));
    put_str_or_null(w, "metavar", o->metavar);
    put_str_or_null(w, "default", o->def);
    jw_key(w, "values");
    jw_arr(w);
    for (i = 0; o->type == OPT_ENUM && o->choice && o->choice(i); i++)
        jw_str(w, o->choice(i));
    jw_arr_end(w);
    jw_key(w, "repeatable");
    jw_bool(w, o->type == OPT_LIST);
    if (o->type == OPT_INT || o->type == OPT_SIZE || o->type == OPT_DOUBLE) {
        jw_key(w, "min");
        jw_num(w, o->lo);
        jw_key(w, "max");
        if (o->hi > 0)
            jw_num(w, o->hi);
        else
            jw_null(w);
    }
    jw_key(w, "path");
    jw_bool(w, (o->flags & OPT_PATH) != 0);
    put_str_or_null(w, "help", o->help);
    jw_obj_end(w);
}
