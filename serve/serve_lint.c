/*
 * serve_lint.c - POST /api/v1/rules/lint (docs/api.md): an uploaded rule
 * pack checked by core's rule_lint_dir, the very checks of `optipipe rules
 * lint`, and its problems answered as JSON. The upload is staged and
 * bounded as every upload is (serve_upload.c: --max-upload-bytes,
 * --max-files); its .lua files (or a .zip of a pack folder) become one
 * pack folder inside the upload's staging folder, removed afterwards.
 *
 * Loading a pack runs its files' top level, so the route takes rules only
 * where analyses may (--allow-rule-upload), and loads them as an analysis
 * does: isolated in a forked worker under the rule limits. One lint runs
 * at a time (the sandbox's workers are process-wide); another meanwhile
 * gets 503 with Retry-After.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jsonw.h"
#include "rule_lint.h"
#include "serve.h"
#include "unzip.h"

#define LINT_PROBLEMS_MAX 10000 /* problems answered; the count is exact */
#define LINT_PACK "pack"        /* the pack folder's name in the answer */

static pthread_mutex_t lint_lock = PTHREAD_MUTEX_INITIALIZER;

/* What the answer is built from while the pack is linted. */
typedef struct lint_answer {
    jw *j;
    const char *dir;   /* the pack folder, cut from every path shown */
    unsigned shown;
} lint_answer;

/* s with every "dir/" (and a bare dir) cut, so the client sees paths in
 * its pack ("slow.lua", "docs/x.slow.md"), never the server's. */
static void relative(const char *s, const char *dir, char *out, size_t cap)
{
    size_t n = strlen(dir), used = 0;

    while (*s && used + 1 < cap) {
        if (strncmp(s, dir, n) == 0) {
            s += n;
            if (*s == '/')
                s++;
            else if (used + 2 < cap)
                out[used++] = '.';
            continue;
        }
        out[used++] = *s++;
    }
    out[used] = '\0';
}

static void put_path(lint_answer *a, const char *key, const char *s)
{
    char buf[PATH_MAX + OP_ERROR_MAX];

    jw_key(a->j, key);
    if (!s) {
        jw_null(a->j);
        return;
    }
    relative(s, a->dir, buf, sizeof buf);
    jw_str(a->j, buf);
}

static void found(void *ud, const char *file, const char *rule,
                  const char *what)
{
    lint_answer *a = ud;

    if (a->shown++ >= LINT_PROBLEMS_MAX)
        return;
    /* a file that loads no rule: core names the file where the id is */
    if (rule && strncmp(rule, a->dir, strlen(a->dir)) == 0) {
        file = rule;
        rule = NULL;
    }
    jw_obj(a->j);
    put_path(a, "file", file);
    jw_key(a->j, "rule");
    jw_str(a->j, rule);
    put_path(a, "message", what);
    jw_obj_end(a->j);
}

static int has_suffix(const char *s, const char *sfx)
{
    size_t n = strlen(s), k = strlen(sfx);

    return n >= k && strcmp(s + n - k, sfx) == 0;
}

/* A refused zip member, kept for the answer ("refused"). */
typedef struct refusals {
    char text[8][300];
    size_t n, total;
} refusals;

static void refused(void *ud, const char *member, const char *why)
{
    refusals *r = ud;
    char clean[200];
    size_t i;

    for (i = 0; member[i] && i + 1 < sizeof clean; i++)
        clean[i] = (unsigned char)member[i] < 0x20 ? '?' : member[i];
    clean[i] = '\0';
    if (r->n < sizeof r->text / sizeof r->text[0])
        snprintf(r->text[r->n++], sizeof r->text[0], "%s: %s", clean, why);
    r->total++;
}

/* Puts the upload's files into the pack folder dir: a .zip unpacked (its
 * members checked by core's unzip), a .lua at the top, a .md under docs/.
 * Returns 0, or an HTTP status after setting msg. */
static int place_files(const srv_req *r, const srv_upload *up,
                       const char *dir, refusals *ref, char *msg, size_t cap)
{
    char docs[PATH_MAX], to[PATH_MAX + SRV_NAME_MAX + 8];
    size_t i, nlua = 0, unpacked = 0;

    if ((size_t)snprintf(docs, sizeof docs, "%s/docs", dir) >= sizeof docs ||
        mkdir(dir, 0700) || mkdir(docs, 0700))
        return snprintf(msg, cap, "cannot make the pack folder: %s",
                        strerror(errno)), 500;
    for (i = 0; i < up->nfiles; i++) {
        const srv_file *f = &up->files[i];
        if (unzip_is_zip(f->path)) {
            unzip_opts zo;
            unzip_result res;
            op_error err;
            memset(&zo, 0, sizeof zo);
            zo.archive_bytes = f->size;
            zo.refused = refused;
            zo.ud = ref;
            op_error_clear(&err);
            if (unzip_to_dir(f->path, dir, &zo, &res, &err))
                return snprintf(msg, cap, "%s: not a zip archive that can be "
                                "read", f->name), 400;
            unpacked += res.files;
            nlua += res.files;
            if (unpacked > r->s->o->max_files)
                return snprintf(msg, cap, "%s: more than %u files "
                                "(--max-files)", f->name, r->s->o->max_files),
                       413;
            continue;
        }
        if (!has_suffix(f->name, ".lua") && !has_suffix(f->name, ".md"))
            return snprintf(msg, cap, "%s: a rule pack is .lua files (and "
                            "their .md docs pages), or a .zip of its folder",
                            f->name), 400;
        nlua += has_suffix(f->name, ".lua");
        snprintf(to, sizeof to, "%s/%s", has_suffix(f->name, ".lua") ? dir
                                                                    : docs,
                 f->name);
        if (rename(f->path, to))
            return snprintf(msg, cap, "%s: %s", f->name, strerror(errno)), 500;
    }
    if (!nlua)
        return snprintf(msg, cap, "no rule in the upload: give .lua files "
                        "(field 'rules' or 'file') or a .zip of a pack"), 400;
    return 0;
}

/* The pack's folder in dir: dir itself, or the one folder a zip of a
 * pack folder unpacked there ("mypack/x.lua") when dir holds no .lua. */
static void pack_root(const char *dir, char *out, size_t cap)
{
    char only[NAME_MAX + 1] = "";
    struct dirent *e;
    DIR *d = opendir(dir);
    int lua = 0, folders = 0;

    snprintf(out, cap, "%s", dir);
    while (d && (e = readdir(d))) {
        char p[PATH_MAX + NAME_MAX + 2];
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st))
            continue;
        lua |= S_ISREG(st.st_mode) && has_suffix(e->d_name, ".lua");
        if (S_ISDIR(st.st_mode) && strcmp(e->d_name, "docs") != 0) {
            folders++;
            snprintf(only, sizeof only, "%s", e->d_name);
        }
    }
    if (d)
        closedir(d);
    if (!lua && folders == 1 &&
        (size_t)snprintf(out, cap, "%s/%s", dir, only) >= cap)
        snprintf(out, cap, "%s", dir); /* too long: lint dir itself */
}

/* Lints dir into the answer w (200). */
static void lint_answer_write(srv_resp *w, const char *dir,
                              const refusals *ref)
{
    rule_lint l;
    rule_limits lim;
    lint_answer a;
    jw j;
    size_t i;

    rule_limits_default(&lim);
    lim.isolate = 1; /* a stranger's pack: always in a worker */
    w->status = 200;
    w->type = "application/json";
    jw_init(&j, w->f, 1);
    jw_obj(&j);
    jw_key(&j, "problems");
    jw_arr(&j);
    memset(&l, 0, sizeof l);
    memset(&a, 0, sizeof a);
    a.j = &j;
    a.dir = dir;
    l.found = found;
    l.ud = &a;
    rule_lint_dir(&l, &lim, dir);
    jw_arr_end(&j);
    jw_key(&j, "problem_count");
    jw_int(&j, l.problems);
    jw_key(&j, "rules");
    jw_int(&j, l.rules);
    jw_key(&j, "refused");
    jw_arr(&j);
    for (i = 0; i < ref->n; i++)
        jw_str(&j, ref->text[i]);
    jw_arr_end(&j);
    jw_key(&j, "refused_count");
    jw_int(&j, (int64_t)ref->total);
    jw_obj_end(&j);
    fputc('\n', w->f);
}

int srv_api_rules_lint(const srv_req *r, srv_resp *w)
{
    srv_upload *up;
    refusals ref;
    char dir[PATH_MAX], root[PATH_MAX], msg[OP_ERROR_MAX];
    int status;

    if (!r->s->o->allow_rule_upload)
        return srv_fail(r, w, 403, "rule uploads are off on this server "
                        "(--allow-rule-upload): nothing to lint");
    up = srv_take_upload(r);
    if (!up || !up->nfiles) {
        srv_upload_free(up);
        return srv_fail(r, w, 400, "no rule pack: give .lua files (multipart "
                        "field 'rules' or 'file'), a .zip of the pack, or one "
                        ".lua as the body (?name=NAME.lua)");
    }
    memset(&ref, 0, sizeof ref);
    if ((size_t)snprintf(dir, sizeof dir, "%s/" LINT_PACK, up->dir) >=
        sizeof dir) {
        srv_upload_free(up);
        return srv_fail(r, w, 500, "the staging folder's name is too long");
    }
    if ((status = place_files(r, up, dir, &ref, msg, sizeof msg))) {
        srv_upload_free(up);
        return srv_fail(r, w, status, "%s", msg);
    }
    if (pthread_mutex_trylock(&lint_lock) != 0) {
        srv_upload_free(up);
        w->retry_after = 1;
        return srv_fail(r, w, 503, "another rule pack is being linted: retry "
                        "in a second");
    }
    pack_root(dir, root, sizeof root);
    lint_answer_write(w, root, &ref);
    pthread_mutex_unlock(&lint_lock);
    srv_upload_free(up);
    return 0;
}
