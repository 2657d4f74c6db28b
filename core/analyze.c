/*
 * analyze.c - from paths to a model. Each file is opened as a bounded,
 * decompressed stream, offered to every plugin's detect(), parsed by the
 * winner, and recorded. A bad file costs a message naming it, never the
 * analysis of the others.
 */
#include "analyze.h"

#include <unistd.h>

#include "diag.h"
#include "engine.h"
#include "fetch.h"
#include "map_packs.h"
#include "filetype.h"
#include "report_util.h"
#include "unzip.h"
#include "util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void plugin_error(const char *msg, void *ud)
{
    analysis *an = ud;

    if (an->diag)
        diag_msg(DIAG_ERROR, "%s", msg);
}

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
    an->finisher = model_builder_new(an->m, NULL);
    if (!an->finisher)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    rc = plugins_add_builtins(an->reg, err);
    if (rc)
        return rc;
    if (plugin_path && *plugin_path)
        plugins_load_path(an->reg, plugin_path, plugin_error, an);
    return 0;
}

static void finish_plugins(analysis *an);

static void free_parts(analysis *an)
{
    size_t i;

    for (i = 0; i < an->nparts; i++)
        free(an->parts[i].path);
    free(an->parts);
    an->parts = NULL;
    an->nparts = an->parts_cap = 0;
}

void analysis_free(analysis *an)
{
    size_t i, j;

    for (i = 0; i < an->ninputs; i++) {
        for (j = 0; j < an->inputs[i].nwarnings; j++)
            free(an->inputs[i].warnings[j]);
        free(an->inputs[i].warnings);
        free(an->inputs[i].path);
        free(an->inputs[i].real);
    }
    free(an->inputs);
    free(an->shown);
    free_parts(an);
    input_zips_free(&an->zips);
    /* plugins free what they kept across inputs in finish(): also when the
     * analysis ends before its model was frozen */
    if (an->m && !an->m->frozen && an->finisher && an->reg)
        finish_plugins(an);
    model_builder_free(an->finisher);
    model_free(an->m);
    mapping_set_free(an->maps);
    plugins_free(an->reg); /* after the model: plugins may own nothing in it */
    memset(an, 0, sizeof *an);
}

static input_rec *rec_new(analysis *an, const char *path)
{
    input_rec *in;

    if (OP_GROW(an->inputs, an->cap, an->ninputs + 1, 8))
        return NULL;
    in = &an->inputs[an->ninputs];
    memset(in, 0, sizeof *in);
    in->path = input_zips_shown(&an->zips, path);
    if (in->path && strcmp(in->path, path) != 0 && !(in->real = strdup(path)))
        free(in->path), in->path = NULL;
    if (!in->path)
        return NULL;
    an->ninputs++;
    return in;
}

/* Names an error message's input unless the message already starts so. */
static const char *msg_body(const char *path, const char *msg)
{
    size_t n = strlen(path);
    if (strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
        return msg + n + 2;
    return msg;
}

/* Records a problem about file on the input (as "FILE: MESSAGE"; in may be
 * NULL) and prints it on stderr (diag_input) at level lv (a diag_level),
 * or not at all when lv is -1. file NULL: a problem of no one input. */
static void rec_warn(analysis *an, input_rec *in, int lv, const char *file,
                     const char *fmt, ...) OP_PRINTF(5, 6);

static void rec_warn(analysis *an, input_rec *in, int lv, const char *file,
                     const char *fmt, ...)
{
    char body[OP_ERROR_MAX + 256], msg[OP_ERROR_MAX + 4096 + 256 + 8];
    const char *b = body;
    va_list ap;
    char *copy;

    char shown[4096];

    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    /* inside a zip: the archive and the member, not the temporary folder */
    input_zips_rewrite(&an->zips, body, sizeof body);
    if (file) {
        snprintf(shown, sizeof shown, "%s", file);
        input_zips_rewrite(&an->zips, shown, sizeof shown);
        file = shown;
        b = msg_body(file, body);
        snprintf(msg, sizeof msg, "%s: %s", file, b);
    } else {
        snprintf(msg, sizeof msg, "%s", body);
    }
    if (an->diag && lv >= 0)
        diag_input((diag_level)lv, file, b);
    if (!in)
        return;
    if (OP_GROW(in->warnings, in->cap, in->nwarnings + 1, 4))
        return;
    copy = strdup(msg);
    if (copy)
        in->warnings[in->nwarnings++] = copy;
}

/* Prints the run warnings (op_run_warning) not printed yet as warnings
 * about file; file NULL: about each run's first input (after the freeze,
 * for what plugins' finish() and the freeze added). */
static void print_run_warnings(analysis *an, const char *file)
{
    size_t i, j;

    if (!an->diag)
        return;
    if (an->m->nruns > an->shown_cap) {
        size_t *p = realloc(an->shown, an->m->nruns * sizeof *p);
        if (!p) {
            diag_msg(DIAG_ERROR, "out of memory: run warnings are only in "
                                 "the report");
            return;
        }
        memset(p + an->shown_cap, 0,
               (an->m->nruns - an->shown_cap) * sizeof *p);
        an->shown = p;
        an->shown_cap = an->m->nruns;
    }
    for (i = 0; i < an->m->nruns; i++) {
        const struct op_run *r = an->m->runs[i];
        const char *f = file ? file : r->norigins ? r->origins[0] : NULL;
        for (j = an->shown[i]; j < r->nwarnings; j++)
            diag_input(DIAG_WARNING, f, r->warnings[j]);
        an->shown[i] = r->nwarnings;
    }
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The ids the builder refused become warnings of the input; returns how
 * many there were. */
static size_t warn_refusals(analysis *an, input_rec *in, const op_builder *b)
{
    size_t n, more, i;
    const char *const *msg = model_builder_refusals(b, &n, &more);

    for (i = 0; i < n; i++)
        rec_warn(an, in, DIAG_WARNING, in->path, "%s", msg[i]);
    if (more)
        rec_warn(an, in, DIAG_WARNING, in->path,
                 "%zu more ids refused (control characters)", more);
    return n + more;
}

/* Counts a skipped file of kind `what` for the summary line. */
static void tally_skip(analysis *an, const char *what)
{
    size_t i;

    for (i = 0; i < ANALYSIS_KINDS && an->kinds[i].n; i++)
        if (strcmp(an->kinds[i].name, what) == 0)
            break;
    if (i < ANALYSIS_KINDS && !an->kinds[i].n)
        snprintf(an->kinds[i].name, sizeof an->kinds[i].name, "%s", what);
    an->kinds[i].n++; /* i == ANALYSIS_KINDS: "other" */
    an->nunlisted++;
}

/* A file no plugin recognized: recorded on the input always; named on
 * stderr when it was named on the command line (or -v), else counted
 * for the one summary line of analysis_freeze. */
static void skip_file(analysis *an, input_rec *in, int in_folder,
                      op_stream *s, const unsigned char *head, size_t len)
{
    char what[96];
    int lv = in_folder && !an->verbose ? -1 : (int)DIAG_WARNING;

    filetype_describe(what, sizeof what, op_stream_codec(s), head, len);
    in->skipped = 1;
    an->nskipped++;
    if (lv < 0)
        tally_skip(an, what);
    rec_warn(an, in, lv, in->path, "not recognized by any plugin (%s); skipped",
                what);
}

/* Reads one input: a file, "-", or a folder of an engine's layout (layout
 * not NULL); in_folder: found by walking a folder (not named on the
 * command line). */
static int parse_file(analysis *an, input_rec *in,
                      const op_engine_layout *layout, int in_folder,
                      const char *mem, size_t mem_len)
{
    op_stream *s = NULL, *ps;
    op_builder *b = NULL;
    const op_plugin *p = NULL;
    const unsigned char *head;
    size_t head_len;
    op_probe probe;
    op_error err;
    int rc;

    const char *file = in->real ? in->real : in->path;

    op_error_clear(&err);
    an->nstarted++;
    rc = mem ? input_open_mem(in->path, mem, mem_len, &an->limits, &s, &err)
         : an->group ? input_open_list(in->path, an->group, an->ngroup,
                                       &an->limits, &s, &err)
         : layout ? layout->open(file, &an->limits, &s, &err)
                   : input_open(file, &an->limits, &s, &err);
    if (!rc)
        rc = input_peek(s, OP_PROBE_HEAD, &head, &head_len, &err);
    if (rc) {
        rec_warn(an, in, DIAG_ERROR, in->path, "%s", err.msg);
        goto out;
    }
    memset(&probe, 0, sizeof probe);
    probe.path = file;
    probe.basename = base_name(in->path);
    probe.head = head;
    probe.head_len = head_len;
    probe.is_dir = layout != NULL;
    rc = plugins_detect(an->reg, &probe, &p, &err);
    if (rc == OP_ENOTFOUND) {
        skip_file(an, in, in_folder, s, head, head_len);
        goto out;
    }
    if (rc) {
        rec_warn(an, in, DIAG_ERROR, in->path, "%s", err.msg);
        goto out;
    }
    in->plugin = p->name;
    b = model_builder_new(an->m, in->path);
    if (b)
        model_builder_set_plugin(b, p->name);
    if (!b) {
        rc = OP_ENOMEM;
        rec_warn(an, in, DIAG_ERROR, in->path, "out of memory");
        goto out;
    }
    ps = an->watch ? an->watch->begin(an->watch->ud, s, in->path, an->nstarted,
                                      an->nplanned)
                   : s;
    rc = p->parse(ps, b, &err);
    if (an->watch)
        an->watch->end(an->watch->ud);
    if (warn_refusals(an, in, b) && rc == OP_ENOMEM && !an->m->failed) {
        /* the plugin took a refused run for a failed allocation */
        rec_warn(an, in, DIAG_ERROR, in->path, "not read: stopped at a refused id (above)");
        goto out;
    }
    if (rc) {
        rec_warn(an, in, DIAG_ERROR, in->path, "%s", err.msg);
        goto out;
    }
    if (op_builder_failed(b, &err)) {
        rc = OP_ENOMEM;
        rec_warn(an, in, DIAG_ERROR, in->path, "%s", err.msg);
        goto out;
    }
    in->ok = 1;
    an->nok++;
    if (input_warning(s))
        rec_warn(an, in, DIAG_WARNING, in->path, "%s", input_warning(s));
out:
    if (b)
        print_run_warnings(an, in->path);
    model_builder_free(b);
    input_close(s);
    return rc;
}

typedef struct walk_state {
    analysis *an;
    const char *root; /* the path given: files under it are "in a folder" */
    char **rolling; /* folders of an engine's layout met during the walk */
    size_t nrolling, cap;
    struct plan_keys *keys; /* analysis_plan only */
} walk_state;

/* Remembers a folder of an engine's layout (engine.h; once) instead of
 * reading its files alone. */
static int defer_rolling(walk_state *ws, const char *file)
{
    const char *slash = strrchr(file, '/');
    size_t n = slash ? (size_t)(slash - file) : 0, i;
    char *dir;

    if (!slash)
        return 0;
    dir = strndup(file, n);
    if (!dir)
        return 0;
    if (!engine_layout_of(dir)) {
        free(dir);
        return 0;
    }
    for (i = 0; i < ws->nrolling; i++)
        if (strcmp(ws->rolling[i], dir) == 0) {
            free(dir);
            return 1;
        }
    if (OP_GROW(ws->rolling, ws->cap, ws->nrolling + 1, 4)) {
        free(dir);
        return 0;
    }
    ws->rolling[ws->nrolling++] = dir;
    return 1;
}

/* Keeps a part of a split log (input_parts.c) for analysis_freeze instead
 * of reading it alone; 0 when file is none (or memory ran out: then it is
 * read alone). */
static int defer_part(analysis *an, const char *file)
{
    input_part p;

    if (input_part_of(file, &an->limits, &p) <= 0)
        return 0;
    if (an->nparts == an->parts_cap) {
        size_t ncap = an->parts_cap ? an->parts_cap * 2 : 8;
        input_part *np = realloc(an->parts, ncap * sizeof *np);
        if (!np) {
            free(p.path);
            return 0;
        }
        an->parts = np;
        an->parts_cap = ncap;
    }
    an->parts[an->nparts++] = p;
    return 1;
}

static void add_zip(analysis *an, const char *file);
static void replan_zip(analysis *an, const char *file, const char *tmp);

static int visit(const char *file, void *ud)
{
    walk_state *ws = ud;
    analysis *an = ws->an;
    input_rec *in;

    if (unzip_is_zip(file)) {
        if (!input_zips_owns(&an->zips, file))
            add_zip(an, file);
        else /* each level would multiply what a small file holds */
            rec_warn(an, rec_new(an, file), DIAG_ERROR, file,
                     "a zip inside a zip archive is not opened (unpack the "
                     "outer one and give the inner one)");
        return 0;
    }
    if (defer_rolling(ws, file) || defer_part(an, file))
        return 0;
    in = rec_new(an, file);
    if (!in) {
        rec_warn(an, NULL, DIAG_ERROR, file, "out of memory");
        return 0;
    }
    parse_file(an, in, NULL, strcmp(file, ws->root) != 0, NULL, 0);
    return 0;
}

static void walk_error(const char *file, const char *msg, void *ud)
{
    analysis *an = ((walk_state *)ud)->an;
    input_rec *in = rec_new(an, file);

    rec_warn(an, in, DIAG_WARNING, file, "%s", msg);
}

/* A URL: fetched into memory by the engine that claims it (engine.h) and
 * read like a file named by the URL. */
static void add_url(analysis *an, const char *url)
{
    fetch_opts dflt;
    const fetch_opts *fo = an->fetch;
    const op_engine *e = engine_for_url(url);
    input_rec *in = rec_new(an, url);
    char *buf = NULL;
    size_t len = 0;
    op_error err;
    int rc;

    if (!in) {
        rec_warn(an, NULL, DIAG_ERROR, url, "out of memory");
        return;
    }
    if (!fo) {
        fetch_opts_init(&dflt);
        dflt.diag = an->diag;
        dflt.progress = an->diag && !an->quiet && isatty(fileno(an->diag));
        fo = &dflt;
    }
    op_error_clear(&err);
    if (!e) {
        rec_warn(an, in, DIAG_ERROR, url, "no engine reads this URL");
        return;
    }
    rc = e->fetch->to_memory(url, fo, engine_opts_const(fo, e), &buf, &len,
                             &err);
    if (rc == FETCH_OK || rc == FETCH_INCOMPLETE) {
        if (rc == FETCH_INCOMPLETE)
            rec_warn(an, in, DIAG_WARNING, url, "%s", err.msg);
        parse_file(an, in, NULL, 0, buf, len);
    } else {
        rec_warn(an, in, DIAG_ERROR, url, "%s", err.msg);
    }
    free(buf);
}

/* Walks path (a file or a folder) and reads what it finds; the parts of
 * split logs are kept for analysis_freeze. */
static void walk_path(analysis *an, const char *path)
{
    size_t before_in = an->ninputs, before_parts = an->nparts, i;
    walk_state ws = {an, path, NULL, 0, 0, NULL};
    op_error err;

    op_error_clear(&err);
    if (input_walk(path, visit, walk_error, &ws, &err)) {
        input_rec *in = rec_new(an, path);
        if (err.code == OP_ENOTFOUND)
            an->nmissing++; /* a typo in a path fails analyze (exit 2) */
        rec_warn(an, in, DIAG_ERROR, path, "%s", err.msg);
    } else if (an->ninputs == before_in && !ws.nrolling &&
               an->nparts == before_parts) {
        rec_warn(an, rec_new(an, path), DIAG_WARNING, path,
                 "a folder without any file to read (hidden entries are "
                 "skipped)");
    }
    for (i = 0; i < ws.nrolling; i++) {
        input_rec *in = rec_new(an, ws.rolling[i]);
        if (in)
            parse_file(an, in, engine_layout_of(ws.rolling[i]), 1, NULL, 0);
        free(ws.rolling[i]);
    }
    free(ws.rolling);
}

typedef struct zip_state {
    analysis *an;
    const char *zip;
    input_rec *in; /* the archive's own record, made at its first problem */
} zip_state;

static input_rec *zip_rec(zip_state *zs)
{
    if (!zs->in)
        zs->in = rec_new(zs->an, zs->zip);
    return zs->in;
}

static void zip_refused(void *ud, const char *member, const char *why)
{
    zip_state *zs = ud;
    char name[300];

    report_term_copy(name, sizeof name, member);
    rec_warn(zs->an, zip_rec(zs), DIAG_ERROR, zs->zip,
             "member '%s' not read: %s", name, why);
}

/* A zip archive: unpacked (input_zip.c) and read as a folder; a member
 * refused is an error naming it, the others are still read. */
static void add_zip(analysis *an, const char *file)
{
    zip_state zs = {an, file, NULL};
    unzip_opts o = {0, zip_refused, NULL, NULL, &zs};
    unzip_result res;
    const char *tmp = NULL;
    op_error err;

    op_error_clear(&err);
    if (input_zips_add(&an->zips, file, &o, &tmp, &res, &err)) {
        rec_warn(an, zip_rec(&zs), DIAG_ERROR, file, "%s", err.msg);
        return;
    }
    if (res.left)
        rec_warn(an, zip_rec(&zs), DIAG_ERROR, file,
                 "%zu further members not read: the archive's cap of "
                 "%d:1 of its size (at most %llu bytes) is reached",
                 res.left, UNZIP_RATIO_MAX,
                 (unsigned long long)UNZIP_TOTAL_MAX);
    if (res.files) {
        replan_zip(an, file, tmp);
        walk_path(an, tmp);
    }
    else if (!res.refused)
        rec_warn(an, zip_rec(&zs), DIAG_WARNING, file,
                 "a zip archive without any file to read");
}

size_t analysis_add(analysis *an, const char *path)
{
    size_t before = an->nok, before_parts = an->nparts;

    if (fetch_is_url(path)) {
        add_url(an, path);
        return an->nok - before;
    }
    walk_path(an, path);
    /* parts are read at analysis_freeze: counted as read here */
    return an->nok - before + (an->nparts - before_parts);
}

/* Lets every plugin with a finish() join what it kept across inputs. */
static void finish_plugins(analysis *an)
{
    size_t i;

    for (i = 0; i < plugins_count(an->reg); i++) {
        const op_plugin *p = plugins_get(an->reg, i, NULL);
        op_error err;

        if (!p->finish)
            continue;
        model_builder_set_plugin(an->finisher, p->name);
        op_error_clear(&err);
        if (p->finish(an->finisher, &err))
            rec_warn(an, NULL, DIAG_ERROR, NULL, "plugin %s: %s", p->name,
                     err.msg);
    }
}

/* Most frequent kind first, then by name. */
static int kind_cmp(const void *a, const void *b)
{
    const skip_kind *x = a, *y = b;

    if (x->n != y->n)
        return x->n < y->n ? 1 : -1;
    return strcmp(x->name, y->name);
}

/* One line for the skipped files not named yet, by kind:
 * "37 files skipped, not recognized by any plugin (30 PNG image, ...)". */
static void print_skipped(analysis *an)
{
    char kinds[512] = "";
    size_t i, used = 0;

    if (!an->diag || !an->nunlisted)
        return;
    for (i = 0; i < ANALYSIS_KINDS && an->kinds[i].n; i++)
        ;
    qsort(an->kinds, i, sizeof an->kinds[0], kind_cmp); /* "other" stays last */
    for (i = 0; i <= ANALYSIS_KINDS && an->kinds[i].n; i++) {
        int w = snprintf(kinds + used, sizeof kinds - used, "%s%zu %s",
                         used ? ", " : "", an->kinds[i].n,
                         i < ANALYSIS_KINDS ? an->kinds[i].name : "other");
        if (w < 0 || (size_t)w >= sizeof kinds - used)
            break;
        used += (size_t)w;
    }
    diag_msg(DIAG_WARNING, "%zu file%s skipped, not recognized by any plugin "
             "(%s); -v lists them", an->nunlisted, an->nunlisted == 1 ? "" : "s",
             kinds);
    an->nunlisted = 0;
}

/* Reads the parts of split logs met by every analysis_add: each group of
 * one key as one input, in order (input_parts.c). */
static void read_parts(analysis *an)
{
    size_t i = 0, j, k;

    input_parts_sort(an->parts, an->nparts);
    while (i < an->nparts) {
        char **paths, *name;
        input_rec *in;
        for (j = i + 1; j < an->nparts; j++)
            if (strcmp(an->parts[j].key, an->parts[i].key) != 0)
                break;
        paths = malloc((j - i) * sizeof *paths);
        name = paths ? input_parts_name(an->parts, an->nparts, i, j) : NULL;
        in = name ? rec_new(an, name) : NULL;
        if (!in) {
            rec_warn(an, NULL, DIAG_ERROR, an->parts[i].path, "out of memory");
        } else {
            for (k = i; k < j; k++)
                paths[k - i] = an->parts[k].path;
            an->group = paths;
            an->ngroup = j - i;
            parse_file(an, in, NULL, 1, NULL, 0);
            an->group = NULL;
        }
        free(name);
        free(paths);
        i = j;
    }
    free_parts(an);
}

void analysis_freeze(analysis *an)
{
    if (an->m->frozen)
        return;
    read_parts(an);
    finish_plugins(an);
    model_freeze(an->m);
    print_run_warnings(an, NULL);
    print_skipped(an);
}

size_t analysis_ninputs(const analysis *an)
{
    return an->ninputs - an->nskipped;
}

/* The keys of the parts (input_parts.c) met while planning: each group
 * of parts is read as one input, so it counts once. */
typedef struct plan_keys {
    char (*key)[sizeof ((input_part *)0)->key];
    size_t n, cap;
} plan_keys;

/* Whether file is a part of a group counted already (else it counts it:
 * also when memory runs out, so [n/N] at worst counts a group twice). */
static int planned_part(plan_keys *pk, const input_limits *lim,
                        const char *file)
{
    input_part p;
    size_t i;

    if (input_part_of(file, lim, &p) <= 0)
        return 0;
    free(p.path);
    for (i = 0; i < pk->n; i++)
        if (strcmp(pk->key[i], p.key) == 0)
            return 1;
    if (pk->n == pk->cap) {
        size_t ncap = pk->cap ? pk->cap * 2 : 8;
        void *nk = realloc(pk->key, ncap * sizeof *pk->key);
        if (!nk)
            return 0;
        pk->key = nk;
        pk->cap = ncap;
    }
    memcpy(pk->key[pk->n++], p.key, sizeof p.key);
    return 0;
}

static int count_file(const char *file, void *ud)
{
    walk_state *ws = ud;

    if (unzip_is_zip(file)) { /* its files; a zip in a zip is not read */
        if (!input_zips_owns(&ws->an->zips, file))
            ws->an->nplanned += unzip_count(file);
    }
    else if (!defer_rolling(ws, file) &&
             !planned_part(ws->keys, &ws->an->limits, file))
        ws->an->nplanned++;
    return 0;
}

/* The inputs analysis_add will read for path (pk: the part groups
 * counted so far, across paths). */
static size_t plan_path(analysis *an, const char *path, plan_keys *pk)
{
    walk_state ws = {an, path, NULL, 0, 0, pk};
    size_t before = an->nplanned, j, n;
    op_error err;

    if (fetch_is_url(path) || input_walk(path, count_file, NULL, &ws, &err))
        an->nplanned++; /* read (or refused) as one input */
    an->nplanned += ws.nrolling;
    for (j = 0; j < ws.nrolling; j++)
        free(ws.rolling[j]);
    free(ws.rolling);
    n = an->nplanned - before;
    an->nplanned = before;
    return n;
}

void analysis_plan(analysis *an, const char *const *paths, size_t n)
{
    size_t i;
    plan_keys pk = {NULL, 0, 0};

    for (i = 0; i < n; i++)
        an->nplanned += plan_path(an, paths[i], &pk);
    free(pk.key);
}

/* A zip was planned as its file members (unzip_count); unpacked, its
 * folder is planned as any folder (rollover parts counted once). */
static void replan_zip(analysis *an, const char *file, const char *tmp)
{
    size_t was = unzip_count(file), now;
    plan_keys pk = {NULL, 0, 0};

    if (!an->nplanned) /* no bar: nothing planned */
        return;
    now = plan_path(an, tmp, &pk);
    free(pk.key);
    an->nplanned -= was < an->nplanned ? was : an->nplanned;
    an->nplanned += now;
}

int analysis_run_from(const struct op_run *r, const input_rec *in)
{
    size_t i;

    for (i = 0; i < r->norigins; i++)
        if (strcmp(r->origins[i], in->path) == 0)
            return 1;
    return 0;
}
