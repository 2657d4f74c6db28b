/*
 * input_rolling.c - Spark rolling event-log folders (docs/spark.md) as one
 * stream.
 *
 * A folder eventlog_v2_<app>/ holds events_<N>_<app>[.codec][.compact]
 * files and an appstatus_<app>[.inprogress] marker. Spark writes whole
 * lines into each file and starts a fresh codec stream per file, so the
 * folder reads as the files' lines one after the other, each file opened
 * with input_open() (its own codec by magic bytes). The order and the
 * choice of files follow Spark's RollingEventLogFilesFileReader: numeric
 * index order (events_10 after events_2), a .compact file after the normal
 * file of the same index, every file before the last .compact dropped.
 * The files are read as one stream by core's input_open_list.
 *
 * The stream reports itself truncated at its end when the appstatus file
 * still says .inprogress (the application had not stopped), so a reader
 * treats it like an in-progress single file.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "input.h"
#include "spark_host.h"
#include "util.h"

#define ROLL_MAX_FILES 100000

typedef struct roll_file {
    char *path;
    uint64_t index;
    int compact;
} roll_file;

/* The folder's listing; its files are read as one stream by
 * input_open_list (core/input_list.c). */
typedef struct rolling {
    char *name;
    roll_file *files;
    size_t nfiles;
    int in_progress; /* appstatus_*.inprogress */
    char warning[OP_ERROR_MAX];
} rolling;

int input_is_rolling_dir(const char *path)
{
    const char *base = strrchr(path, '/');
    size_t n;

    base = base ? base + 1 : path;
    n = strlen(base);
    /* "dir/" given with a trailing slash: look at the component before */
    if (n == 0 && base != path) {
        const char *end = base - 1, *start = end;
        while (start > path && start[-1] != '/')
            start--;
        return strncmp(start, "eventlog_v2_", 12) == 0 && end > start;
    }
    return strncmp(base, "eventlog_v2_", 12) == 0;
}

/* --- listing ------------------------------------------------------------ */

static int ends_with(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);

    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* "events_12_app.zstd" -> 12; 0 when the name is not an events file. */
static int events_index(const char *name, uint64_t *idx)
{
    const char *p = name + 7;
    uint64_t v = 0;
    int digits = 0;

    if (strncmp(name, "events_", 7) != 0)
        return 0;
    while (*p >= '0' && *p <= '9' && digits < 18) {
        v = v * 10 + (uint64_t)(*p - '0');
        p++;
        digits++;
    }
    if (!digits || *p != '_')
        return 0;
    *idx = v;
    return 1;
}

static int cmp_files(const void *x, const void *y)
{
    const roll_file *a = x, *b = y;

    if (a->index != b->index)
        return a->index < b->index ? -1 : 1;
    return a->compact - b->compact;
}

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir), m = strlen(name);
    char *p = malloc(n + m + 2);

    if (!p)
        return NULL;
    memcpy(p, dir, n);
    p[n] = '/';
    memcpy(p + n + 1, name, m + 1);
    return p;
}

static void add_warning(rolling *r, const char *fmt, const char *detail)
{
    size_t n = strlen(r->warning);

    if (n)
        snprintf(r->warning + n, sizeof r->warning - n, "; ");
    n = strlen(r->warning);
    snprintf(r->warning + n, sizeof r->warning - n, fmt, detail);
}

/* Lists the events files and the appstatus marker. */
static int list_files(rolling *r, op_error *err)
{
    DIR *d = opendir(r->name);
    struct dirent *e;
    size_t cap = 0;
    int appstatus = 0;

    if (!d)
        return op_error_set(err, errno == ENOENT ? OP_ENOTFOUND : OP_EIO,
                            "%s: cannot open the rolling event-log folder: %s",
                            r->name, strerror(errno));
    while ((e = readdir(d)) != NULL) {
        uint64_t idx;
        if (!strncmp(e->d_name, "appstatus_", 10)) {
            appstatus = 1;
            if (ends_with(e->d_name, ".inprogress"))
                r->in_progress = 1;
            continue;
        }
        if (!events_index(e->d_name, &idx))
            continue;
        if (r->nfiles >= ROLL_MAX_FILES)
            break;
        if (OP_GROW(r->files, cap, r->nfiles + 1, 8))
            goto oom;
        r->files[r->nfiles].path = join(r->name, e->d_name);
        if (!r->files[r->nfiles].path)
            goto oom;
        r->files[r->nfiles].index = idx;
        r->files[r->nfiles].compact = ends_with(e->d_name, ".compact");
        r->nfiles++;
    }
    closedir(d);
    if (!r->nfiles)
        return op_error_set(err, OP_EPARSE,
                            "%s: a rolling event-log folder without any "
                            "events_<N>_ file",
                            r->name);
    if (!appstatus)
        add_warning(r, "%s", "no appstatus_ file (Spark's reader would "
                             "refuse the folder); read anyway");
    return OP_OK;
oom:
    closedir(d);
    return op_error_set(err, OP_ENOMEM, "%s: out of memory", r->name);
}

/* Sorts the files and drops those a .compact file replaced. */
static void order_files(rolling *r)
{
    size_t i, last_compact = 0, k;
    int has_compact = 0;

    qsort(r->files, r->nfiles, sizeof *r->files, cmp_files);
    for (i = 0; i < r->nfiles; i++)
        if (r->files[i].compact) {
            last_compact = i;
            has_compact = 1;
        }
    if (has_compact && last_compact > 0) {
        for (i = 0; i < last_compact; i++)
            free(r->files[i].path);
        memmove(r->files, r->files + last_compact,
                (r->nfiles - last_compact) * sizeof *r->files);
        r->nfiles -= last_compact;
    }
    if (has_compact)
        add_warning(r, "%s", "compacted by the History Server: the events "
                             "of finished jobs before the .compact file "
                             "are gone");
    for (k = 1; k < r->nfiles; k++)
        if (r->files[k].index != r->files[k - 1].index + 1) {
            add_warning(r, "%s", "the events_ file numbers are not "
                                 "contiguous: some events are missing");
            break;
        }
}

/* Opens r's files, in order, as one stream named r->name. */
static int open_files(rolling *r, const input_limits *limits,
                      op_stream **out, op_error *err)
{
    char **paths = malloc(r->nfiles * sizeof *paths);
    size_t i;
    int rc;

    if (!paths)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", r->name);
    for (i = 0; i < r->nfiles; i++)
        paths[i] = r->files[i].path;
    rc = input_open_list(r->name, paths, r->nfiles, limits, out, err);
    free(paths);
    if (rc)
        return rc;
    if (r->warning[0])
        input_list_note(*out, r->warning);
    if (r->in_progress)
        input_list_set_unfinished(*out);
    return OP_OK;
}

int input_open_rolling(const char *dir, const input_limits *limits,
                       op_stream **out, op_error *err)
{
    rolling r;
    size_t n, i;
    int rc;

    if (!dir || !out)
        return op_error_set(err, OP_EUSAGE, "input_open_rolling: no folder");
    *out = NULL;
    memset(&r, 0, sizeof r);
    r.name = strdup(dir);
    if (!r.name)
        return op_error_set(err, OP_ENOMEM, "%s: out of memory", dir);
    n = strlen(r.name); /* "dir/" names the same folder */
    while (n > 1 && r.name[n - 1] == '/')
        r.name[--n] = '\0';
    rc = list_files(&r, err);
    if (!rc) {
        order_files(&r);
        rc = open_files(&r, limits, out, err);
    }
    for (i = 0; i < r.nfiles; i++)
        free(r.files[i].path);
    free(r.files);
    free(r.name);
    return rc;
}
