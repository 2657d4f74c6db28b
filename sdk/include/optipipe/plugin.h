/*
 * optipipe/plugin.h - the input plugin ABI (docs/writing-plugins.md).
 *
 * One descriptor type serves built-in and external plugins. Built-ins are
 * registered statically; external ones are .so files that export exactly one
 * function, OP_PLUGIN_ENTRY_SYMBOL, returning their descriptor. Both go
 * through the same validation (magic, ABI major equal, ABI minor not newer
 * than the host, struct size, required fields, unique name).
 *
 * Versioning: appending a field to a struct here bumps OP_ABI_MINOR; any
 * other change (reorder, removal, type or meaning change) bumps OP_ABI_MAJOR.
 */
#ifndef OPTIPIPE_PLUGIN_H
#define OPTIPIPE_PLUGIN_H

#include "builder.h"
#include "common.h"
#include "stream.h"

#define OP_ABI_MAGIC 0x4f505450u /* "OPTP" */
#define OP_ABI_MAJOR 1
#define OP_ABI_MINOR 2 /* 1: builder run_attr, run_job; 2: map_series */

/* What detect() may look at: the input's name and its first decompressed
 * bytes (up to OP_PROBE_HEAD). */
#define OP_PROBE_HEAD 4096

typedef struct op_probe {
    const char *path;          /* as given, or the walked file's path */
    const char *basename;      /* last path component */
    const unsigned char *head; /* first decompressed bytes; not terminated */
    size_t head_len;
    int is_dir;                /* reserved: 1 when the input is a directory */
} op_probe;

/* Whether the probe's head contains needle (a byte string). */
static inline int op_probe_has(const op_probe *p, const char *needle)
{
    size_t n = 0, i;

    while (needle[n])
        n++;
    if (n == 0 || n > p->head_len)
        return n == 0;
    for (i = 0; i + n <= p->head_len; i++) {
        size_t k = 0;
        while (k < n && p->head[i + k] == (unsigned char)needle[k])
            k++;
        if (k == n)
            return 1;
    }
    return 0;
}

/* The first byte of the head that is not white space, after a UTF-8 byte
 * order mark; 0 when there is none. Tells a JSON document ('{', '[') from
 * other text without parsing it. */
static inline int op_probe_first(const op_probe *p)
{
    size_t i = 0;

    if (p->head_len >= 3 && p->head[0] == 0xEF && p->head[1] == 0xBB &&
        p->head[2] == 0xBF)
        i = 3;
    for (; i < p->head_len; i++) {
        unsigned char c = p->head[i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' &&
            c != '\v')
            return c;
    }
    return 0;
}

typedef struct op_plugin {
    uint32_t magic;       /* OP_ABI_MAGIC */
    uint16_t abi_major;   /* OP_ABI_MAJOR the plugin was built with */
    uint16_t abi_minor;   /* OP_ABI_MINOR the plugin was built with */
    uint32_t struct_size; /* sizeof(op_plugin) at build time */
    uint32_t flags;       /* none defined yet; must be 0 */
    const char *name;     /* unique: "spark", "dbt", "flink", "csv" ... */
    const char *version;  /* the plugin's own version */
    const char *description;

    /* 0..100: how sure the plugin is that the input is its format. 0 means
     * "not mine". Must not keep pointers into the probe. */
    int (*detect)(const op_probe *probe);

    /* Parses the stream into the model through the builder. Returns 0, or
     * an op_status with err set to a message that names the place (line,
     * JSON path); op_stream_name() gives the file. A plugin that parsed part
     * of its input before failing keeps what it built: the host reports
     * the error and analyzes the rest. */
    int (*parse)(op_stream *in, op_builder *b, op_error *err);

    /* Optional (may be NULL). Called once per analysis after every input
     * was parsed, with a builder tied to no input, so a plugin can join
     * what it read from several files (kept in op_plugin_slot()). Must free
     * whatever it stored in the slot, also when it returns an error. */
    int (*finish)(op_builder *b, op_error *err);
} op_plugin;

#define OP_PLUGIN_HEADER                                                   \
    .magic = OP_ABI_MAGIC, .abi_major = OP_ABI_MAJOR,                     \
    .abi_minor = OP_ABI_MINOR, .struct_size = sizeof(op_plugin), .flags = 0

/* The one symbol an external plugin exports. */
#define OP_PLUGIN_ENTRY_SYMBOL "op_plugin_entry"
typedef const op_plugin *(*op_plugin_entry_fn)(void);

#endif
