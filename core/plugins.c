/*
 * plugins.c - the input plugin registry (core/plugins.h, docs/writing-plugins.md).
 *
 * Built-in descriptors and the ones external .so files return go through
 * one validator. The registry keeps its own zero-padded copy of each
 * descriptor so that a plugin built against an older, shorter op_plugin is
 * never read past its struct_size. External libraries stay loaded until
 * plugins_free(): model strings and callbacks may point into them.
 */
#include "plugins.h"
#include "util.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The 1.0 layout ends with parse; anything shorter is not a 1.x plugin. */
#define PLUGIN_SIZE_1_0 (offsetof(op_plugin, parse) + sizeof(void (*)(void)))

/* Bounds on what is read from outside: names shown in messages and the
 * number of .so files taken from one directory. */
#define NAME_MAX_LEN 64
#define DIR_MAX_FILES 1024

typedef struct plugin_entry {
    op_plugin desc; /* validated copy, zero-padded past struct_size */
    char *path;     /* the .so it came from, or NULL for a built-in */
} plugin_entry;

/* Entries are allocated one by one so the descriptor pointers handed out by
 * plugins_get/find/detect stay valid while more plugins are added. */
struct plugin_reg {
    plugin_entry **entries;
    size_t n, cap;
    void **handles; /* every dlopen handle, closed in plugins_free */
    size_t nhandles, handles_cap;
};

extern const op_plugin *const op_builtin_plugins[];

/* An empty registry owned by the caller (plugins_free), NULL on OOM. */
plugin_reg *plugins_new(void)
{
    return calloc(1, sizeof(plugin_reg));
}

/* Frees the registry and its copies, then dlcloses every library it opened
 * (newest first). Descriptor pointers handed out die here. */
void plugins_free(plugin_reg *reg)
{
    if (!reg)
        return;
    for (size_t i = 0; i < reg->n; i++) {
        free(reg->entries[i]->path);
        free(reg->entries[i]);
    }
    free(reg->entries);
    for (size_t i = reg->nhandles; i > 0; i--)
        dlclose(reg->handles[i - 1]);
    free(reg->handles);
    free(reg);
}

/* How a plugin is named in messages: its path, or "built-in". */
static const char *where(const char *path)
{
    return path ? path : "built-in";
}

/* A plugin name is shown in CLI output and used in JSON: 1..64 of
 * [A-Za-z0-9_.-]. */
static int name_ok(const char *name)
{
    size_t len = strnlen(name, NAME_MAX_LEN + 1);
    if (len == 0 || len > NAME_MAX_LEN)
        return 0;
    return strspn(name, "abcdefghijklmnopqrstuvwxyz"
                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == len;
}

/* The header (magic, versions, size, flags, name) is the same in every
 * ABI major, which is what lets a refusal name the plugin. */
static const char *shown_name(const op_plugin *p)
{
    if (p->struct_size < offsetof(op_plugin, name) + sizeof p->name ||
        !p->name)
        return "?";
    return p->name;
}

static int check_header(const op_plugin *p, const char *path, op_error *err)
{
    if (p->magic != OP_ABI_MAGIC)
        return op_error_set(err, OP_EABI,
                            "plugin %s is not an optipipe plugin: its "
                            "descriptor starts with 0x%08x, expected 0x%08x "
                            "(OP_PLUGIN_HEADER)",
                            where(path), (unsigned)p->magic,
                            (unsigned)OP_ABI_MAGIC);
    if (p->abi_major != OP_ABI_MAJOR || p->abi_minor > OP_ABI_MINOR)
        return op_error_set(err, OP_EABI,
                            "plugin '%.64s' (%s) was built for ABI %u.%u; "
                            "this optipipe speaks ABI %d.%d (%s)",
                            shown_name(p), where(path),
                            (unsigned)p->abi_major, (unsigned)p->abi_minor,
                            OP_ABI_MAJOR, OP_ABI_MINOR,
                            p->abi_major != OP_ABI_MAJOR
                                ? "rebuild the plugin against this SDK"
                                : "upgrade optipipe or rebuild the plugin");
    if (p->struct_size < PLUGIN_SIZE_1_0)
        return op_error_set(err, OP_EABI,
                            "plugin '%.64s' (%s, ABI %u.%u) has a %u-byte "
                            "descriptor; ABI %d.%d needs at least %zu bytes",
                            shown_name(p), where(path),
                            (unsigned)p->abi_major, (unsigned)p->abi_minor,
                            (unsigned)p->struct_size, OP_ABI_MAJOR,
                            OP_ABI_MINOR, (size_t)PLUGIN_SIZE_1_0);
    if (p->flags != 0)
        return op_error_set(err, OP_EABI,
                            "plugin '%.64s' (%s, ABI %u.%u) sets flags 0x%x; "
                            "ABI %d.%d defines none",
                            shown_name(p), where(path),
                            (unsigned)p->abi_major, (unsigned)p->abi_minor,
                            (unsigned)p->flags, OP_ABI_MAJOR, OP_ABI_MINOR);
    return OP_OK;
}

static int check_fields(const op_plugin *p, const char *path, op_error *err)
{
    const char *missing = !p->name      ? "name"
                          : !p->version ? "version"
                          : !p->detect  ? "detect function"
                          : !p->parse   ? "parse function"
                                        : NULL;
    if (missing)
        return op_error_set(err, OP_EABI,
                            "plugin '%.64s' (%s, ABI %u.%u) has no %s",
                            shown_name(p), where(path),
                            (unsigned)p->abi_major, (unsigned)p->abi_minor,
                            missing);
    if (!name_ok(p->name))
        return op_error_set(err, OP_EABI,
                            "plugin '%.64s' (%s) has an invalid name: use 1 "
                            "to %d characters of A-Z a-z 0-9 _ . -",
                            p->name, where(path), NAME_MAX_LEN);
    return OP_OK;
}

/* Room for one more entry pointer. */
static int reserve_entry(plugin_reg *reg)
{
    if (OP_GROW(reg->entries, reg->cap, reg->n + 1, 8))
        return OP_ENOMEM;
    return OP_OK;
}

/* The path of the registered plugin named name (NULL: built-in). */
static const char *path_of(const plugin_reg *reg, const char *name)
{
    for (size_t i = 0; i < reg->n; i++)
        if (strcmp(reg->entries[i]->desc.name, name) == 0)
            return reg->entries[i]->path;
    return NULL;
}

/* Validates p and registers a copy of it; path is copied. p itself stays
 * the caller's (its strings and functions must outlive the registry). */
int plugins_add(plugin_reg *reg, const op_plugin *p, const char *path,
                op_error *err)
{
    plugin_entry *ent;
    size_t copy;
    int rc;

    if (!reg)
        return op_error_set(err, OP_EUSAGE, "plugins_add: no registry");
    if (!p)
        return op_error_set(err, OP_EABI,
                            "plugin %s returned no descriptor (NULL)",
                            where(path));
    if ((rc = check_header(p, path, err)) || (rc = check_fields(p, path, err)))
        return rc;
    if (plugins_find(reg, p->name)) {
        const char *other = path_of(reg, p->name);
        return op_error_set(err, OP_EUSAGE,
                            "plugin '%s' (%s) has the same name as the %s%s; "
                            "remove one of them from the plugin path",
                            p->name, where(path),
                            other ? "plugin already loaded from "
                                  : "built-in plugin",
                            other ? other : "");
    }
    if (reserve_entry(reg) || !(ent = calloc(1, sizeof *ent)))
        return op_error_set(err, OP_ENOMEM,
                            "out of memory registering plugin '%s' (%s)",
                            p->name, where(path));
    copy = p->struct_size < sizeof(op_plugin) ? p->struct_size
                                              : sizeof(op_plugin);
    memcpy(&ent->desc, p, copy);
    ent->desc.struct_size = (uint32_t)copy;
    if (path && !(ent->path = strdup(path))) {
        free(ent);
        return op_error_set(err, OP_ENOMEM,
                            "out of memory registering plugin '%s' (%s)",
                            p->name, path);
    }
    reg->entries[reg->n++] = ent;
    return OP_OK;
}

/* Registers the CMake-generated table of built-ins; stops at the first
 * refusal (a built-in that fails validation is a build bug). */
int plugins_add_builtins(plugin_reg *reg, op_error *err)
{
    for (size_t i = 0; op_builtin_plugins[i]; i++) {
        int rc = plugins_add(reg, op_builtin_plugins[i], NULL, err);
        if (rc)
            return rc;
    }
    return OP_OK;
}

/* A plugin is native code run with the user's rights: refuse files that
 * someone else could have swapped in. The directory counts too unless it
 * has the sticky bit (like /tmp, where only the owner may replace). */
static int check_trust(const char *file, op_error *err)
{
    struct stat st;
    char dir[PATH_MAX];
    const char *slash = strrchr(file, '/');
    size_t dlen;

    if (stat(file, &st) != 0)
        return op_error_set(err, errno == ENOENT ? OP_ENOTFOUND : OP_EIO,
                            "cannot load plugin %s: %s", file,
                            strerror(errno));
    if (!S_ISREG(st.st_mode))
        return op_error_set(err, OP_EUSAGE,
                            "cannot load plugin %s: not a regular file", file);
    if (st.st_mode & (S_IWGRP | S_IWOTH))
        return op_error_set(err, OP_EUSAGE,
                            "refusing to load plugin %s: it is group- or "
                            "world-writable (mode %03o); a plugin runs as "
                            "native code with your rights (chmod go-w it)",
                            file, (unsigned)(st.st_mode & 0777));
    dlen = slash ? (size_t)(slash - file) : 1;
    if (dlen == 0)
        dlen = 1; /* "/x.so" lives in "/" */
    if (dlen >= sizeof dir)
        return op_error_set(err, OP_ELIMIT,
                            "cannot load plugin %s: path too long", file);
    memcpy(dir, slash ? file : ".", dlen);
    dir[dlen] = '\0';
    if (stat(dir, &st) == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) &&
        !(st.st_mode & S_ISVTX))
        return op_error_set(err, OP_EUSAGE,
                            "refusing to load plugin %s: its directory %s is "
                            "group- or world-writable (mode %03o) without "
                            "the sticky bit (chmod go-w it)",
                            file, dir, (unsigned)(st.st_mode & 0777));
    return OP_OK;
}

static int keep_handle(plugin_reg *reg, void *h)
{
    if (OP_GROW(reg->handles, reg->handles_cap, reg->nhandles + 1, 8))
        return OP_ENOMEM;
    reg->handles[reg->nhandles++] = h;
    return OP_OK;
}

/* Checks file's permissions, dlopens it and registers its descriptor. The
 * handle belongs to the registry even when the plugin is refused. */
int plugins_load_file(plugin_reg *reg, const char *file, op_error *err)
{
    char path[PATH_MAX];
    op_plugin_entry_fn entry;
    void *h, *sym;
    const char *dl;
    int rc;

    if (!reg || !file || !*file)
        return op_error_set(err, OP_EUSAGE, "plugins_load_file: no file");
    /* Without a slash dlopen would search the library path instead. */
    if (snprintf(path, sizeof path, "%s%s", strchr(file, '/') ? "" : "./",
                 file) >= (int)sizeof path)
        return op_error_set(err, OP_ELIMIT,
                            "cannot load plugin %.200s...: path too long",
                            file);
    if ((rc = check_trust(path, err)))
        return rc;
    dlerror();
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        dl = dlerror();
        return op_error_set(err, OP_EABI, "cannot load plugin %s: %s", path,
                            dl ? dl : "dlopen failed");
    }
    /* Kept even when refused below: closing a library whose constructors
     * ran is not always safe, and plugins_free closes them all. */
    if (keep_handle(reg, h)) {
        dlclose(h);
        return op_error_set(err, OP_ENOMEM,
                            "out of memory loading plugin %s", path);
    }
    sym = dlsym(h, OP_PLUGIN_ENTRY_SYMBOL);
    if (!sym)
        return op_error_set(err, OP_EABI,
                            "plugin %s does not export %s(); is it an "
                            "optipipe plugin built with OP_EXPORT?",
                            path, OP_PLUGIN_ENTRY_SYMBOL);
    /* POSIX guarantees a data pointer from dlsym converts to a function
     * pointer; memcpy says so without a cast ISO C frowns upon. */
    memcpy(&entry, &sym, sizeof entry);
    return plugins_add(reg, entry(), path, err);
}

static int is_plugin_file(const char *name)
{
    size_t len = strlen(name);
    return name[0] != '.' && len > 3 && strcmp(name + len - 3, ".so") == 0;
}

/* Collects the *.so names of dir, sorted; NULL with err set on failure. */
static char **list_plugins(const char *dir, size_t *count, op_error *err)
{
    DIR *d = opendir(dir);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;

    *count = 0;
    if (!d) {
        op_error_set(err, OP_EIO, "plugin directory %s: %s", dir,
                     strerror(errno));
        return NULL;
    }
    names = calloc(DIR_MAX_FILES, sizeof *names);
    if (!names) {
        op_error_set(err, OP_ENOMEM, "plugin directory %s: out of memory",
                     dir);
        goto out;
    }
    while ((e = readdir(d))) {
        if (!is_plugin_file(e->d_name))
            continue;
        if (n == DIR_MAX_FILES) {
            op_error_set(err, OP_ELIMIT,
                         "plugin directory %s holds more than %d .so files; "
                         "only the first %d (in directory order) are "
                         "considered",
                         dir, DIR_MAX_FILES, DIR_MAX_FILES);
            break;
        }
        if (!(names[n] = strdup(e->d_name))) {
            op_error_set(err, OP_ENOMEM, "plugin directory %s: out of memory",
                         dir);
            break;
        }
        n++;
    }
    qsort(names, n, sizeof *names, util_strp_cmp);
    *count = n;
out:
    closedir(d);
    return names;
}

/* Loads the *.so of one directory in sorted order. */
static void load_dir(plugin_reg *reg, const char *dir,
                     plugins_error_fn on_error, void *ud)
{
    op_error err;
    size_t n;
    char **names;

    op_error_clear(&err);
    names = list_plugins(dir, &n, &err);
    if (err.code && on_error)
        on_error(err.msg, ud);
    for (size_t i = 0; i < n; i++) {
        char file[PATH_MAX];
        op_error_clear(&err);
        if (snprintf(file, sizeof file, "%s/%s", dir, names[i]) >=
            (int)sizeof file)
            op_error_set(&err, OP_ELIMIT, "plugin %s/%s: path too long", dir,
                         names[i]);
        else
            plugins_load_file(reg, file, &err);
        if (err.code && on_error)
            on_error(err.msg, ud);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* Loads each directory of the ':'-separated dirs in order; empty entries
 * are skipped, every failure goes to on_error (may be NULL). */
void plugins_load_path(plugin_reg *reg, const char *dirs,
                       plugins_error_fn on_error, void *ud)
{
    const char *p = dirs;

    if (!reg || !dirs)
        return;
    while (*p) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char dir[PATH_MAX];

        if (len >= sizeof dir) {
            if (on_error)
                on_error("plugin path entry too long; skipped", ud);
        } else if (len > 0) {
            memcpy(dir, p, len);
            dir[len] = '\0';
            load_dir(reg, dir, on_error, ud);
        }
        p += len;
        if (*p == ':')
            p++;
    }
}

/* Asks every plugin, clamps scores to 0..100 and picks the single highest;
 * *out is borrowed from the registry. */
int plugins_detect(const plugin_reg *reg, const op_probe *probe,
                   const op_plugin **out, op_error *err)
{
    const op_plugin *best = NULL, *tie = NULL;
    int best_score = 0;
    const char *name = probe && probe->path ? probe->path : "input";

    if (out)
        *out = NULL;
    if (!reg || !probe || !out)
        return op_error_set(err, OP_EUSAGE, "plugins_detect: bad arguments");
    for (size_t i = 0; i < reg->n; i++) {
        const op_plugin *p = &reg->entries[i]->desc;
        int score = p->detect(probe);
        if (score < 0)
            score = 0;
        if (score > 100)
            score = 100;
        if (score == 0)
            continue;
        if (score > best_score) {
            best = p;
            best_score = score;
            tie = NULL;
        } else if (score == best_score && !tie) {
            tie = p;
        }
    }
    if (!best)
        return op_error_set(err, OP_ENOTFOUND,
                            "%s: no plugin recognizes this input (%zu "
                            "plugin%s tried)",
                            name, reg->n, reg->n == 1 ? "" : "s");
    if (tie)
        return op_error_set(err, OP_EUSAGE,
                            "%s: plugins '%s' and '%s' both claim this input "
                            "with score %d; remove one of them from the "
                            "plugin path",
                            name, best->name, tie->name, best_score);
    *out = best;
    return OP_OK;
}

/* Number of registered plugins (0 for NULL). */
size_t plugins_count(const plugin_reg *reg)
{
    return reg ? reg->n : 0;
}

/* The i-th registered plugin (borrowed) and its .so path, or NULL. */
const op_plugin *plugins_get(const plugin_reg *reg, size_t i,
                             const char **path)
{
    if (!reg || i >= reg->n) {
        if (path)
            *path = NULL;
        return NULL;
    }
    if (path)
        *path = reg->entries[i]->path;
    return &reg->entries[i]->desc;
}

/* The plugin named name (borrowed), or NULL. */
const op_plugin *plugins_find(const plugin_reg *reg, const char *name)
{
    if (!reg || !name)
        return NULL;
    for (size_t i = 0; i < reg->n; i++)
        if (strcmp(reg->entries[i]->desc.name, name) == 0)
            return &reg->entries[i]->desc;
    return NULL;
}
