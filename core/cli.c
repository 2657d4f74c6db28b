/*
 * cli.c - locating the bundled rule packs next to the binary and loading
 * them together with user rule folders; shared by analyze, rules list/show
 * and rules test.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

const char *cli_home(void)
{
    static char home[PATH_MAX + 64];
    char exe[PATH_MAX], try[PATH_MAX + 64];
    const char *env = getenv("OPTIPIPE_HOME");
    struct stat st;
    ssize_t n;
    char *slash;

    if (env && *env)
        return env;
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return "share/optipipe";
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    snprintf(try, sizeof try, "%s/share/optipipe/rules", exe);
    if (stat(try, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(home, sizeof home, "%s/share/optipipe", exe);
        return home;
    }
    snprintf(home, sizeof home, "%s/../share/optipipe", exe);
    return home;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int pack_selected(const cli_opts *o, const char *name)
{
    size_t i;

    if (!o->npacks)
        return 1;
    for (i = 0; i < o->npacks; i++)
        if (strcmp(o->packs[i], name) == 0)
            return 1;
    return 0;
}

/* Loads every bundled pack folder under <home>/rules in name order. */
static int load_bundled(const cli_opts *o, ruleset *rs, results *errs,
                        const char *lua_dir, op_error *err)
{
    char root[PATH_MAX], dir[PATH_MAX * 2];
    char *names[256];
    size_t n = 0, i;
    struct dirent *de;
    DIR *d;
    int rc = 0;

    snprintf(root, sizeof root, "%s/rules", cli_home());
    d = opendir(root);
    if (!d)
        return op_error_set(err, OP_ENOTFOUND,
                            "%s: cannot open the bundled rule packs: %s "
                            "(set OPTIPIPE_HOME)", root, strerror(errno));
    while ((de = readdir(d)) && n < 256)
        if (de->d_name[0] != '.' && (names[n] = strdup(de->d_name)))
            n++;
    closedir(d);
    qsort(names, n, sizeof *names, name_cmp);
    for (i = 0; i < o->npacks; i++) {
        size_t j;
        for (j = 0; j < n && strcmp(names[j], o->packs[i]) != 0; j++)
            ;
        if (j == n && !rc)
            rc = op_error_set(err, OP_EUSAGE, "--pack %s: no such bundled pack",
                              o->packs[i]);
    }
    for (i = 0; i < n && !rc; i++) {
        struct stat st;
        snprintf(dir, sizeof dir, "%s/%s", root, names[i]);
        if (stat(dir, &st) || !S_ISDIR(st.st_mode) ||
            !pack_selected(o, names[i]))
            continue;
        rc = ruleset_load_dir(rs, dir, names[i], lua_dir, 1, errs, err);
    }
    for (i = 0; i < n; i++)
        free(names[i]);
    return rc;
}

int cli_load_rules(const cli_opts *o, ruleset **out, results *errs,
                   op_error *err)
{
    char lua_dir[PATH_MAX];
    ruleset *rs;
    size_t i;
    int rc;

    *out = NULL;
    rs = ruleset_new(&o->rlimits);
    if (!rs)
        return op_error_set(err, OP_ENOMEM, "out of memory");
    snprintf(lua_dir, sizeof lua_dir, "%s/lua", cli_home());
    rc = o->no_bundled ? 0 : load_bundled(o, rs, errs, lua_dir, err);
    for (i = 0; i < o->nrules_dirs && !rc; i++)
        rc = ruleset_load_dir(rs, o->rules_dirs[i], o->rules_dirs[i], lua_dir,
                              0, errs, err);
    if (rc) {
        ruleset_free(rs);
        return rc;
    }
    for (i = 0; i < errs->ne; i++)
        fprintf(stderr, "optipipe: rule %s: %s\n", errs->e[i].rule,
                errs->e[i].error);
    *out = rs;
    return 0;
}

