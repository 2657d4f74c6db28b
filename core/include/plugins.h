/*
 * plugins.h - the registry of input plugins: built-in ones registered
 * statically and external .so files, both validated the same way, and
 * detection (which plugin reads an input).
 */
#ifndef OP_CORE_PLUGINS_H
#define OP_CORE_PLUGINS_H

#include <optipipe/plugin.h>

typedef struct plugin_reg plugin_reg;

/* Returns an empty registry or NULL on OOM. Free with plugins_free(), which
 * also dlcloses external plugins (call it only after the model is gone). */
plugin_reg *plugins_new(void);
void plugins_free(plugin_reg *reg);

/* Validates p (magic, ABI major equal, minor not newer, struct size, flags,
 * name/version/detect/parse present, name unique) and adds it. path is the
 * .so it came from (copied) or NULL for a built-in. Returns 0 or OP_EABI /
 * OP_EUSAGE with err naming the plugin, the path and both versions. */
int plugins_add(plugin_reg *reg, const op_plugin *p, const char *path,
                op_error *err);

/* Adds every built-in plugin (the folders under plugins/, generated
 * table plugins_builtin.c.in). */
int plugins_add_builtins(plugin_reg *reg, op_error *err);

/* dlopens file (RTLD_NOW | RTLD_LOCAL), resolves OP_PLUGIN_ENTRY_SYMBOL and
 * adds its descriptor. Returns 0 or an op_status with err naming file. */
int plugins_load_file(plugin_reg *reg, const char *file, op_error *err);

/* Loads every "*.so" in each directory of the ':'-separated list dirs.
 * A file that fails is reported through on_error and skipped. */
typedef void (*plugins_error_fn)(const char *msg, void *ud);
void plugins_load_path(plugin_reg *reg, const char *dirs,
                       plugins_error_fn on_error, void *ud);

/* Picks the plugin with the highest detect() score for probe. Returns 0
 * with *out set; OP_ENOTFOUND when every score is 0; OP_EUSAGE when two
 * plugins tie for the highest score (err names both). */
int plugins_detect(const plugin_reg *reg, const op_probe *probe,
                   const op_plugin **out, op_error *err);

size_t plugins_count(const plugin_reg *reg);
/* The i-th plugin in registration order; *path (may be NULL) receives the
 * .so path or NULL for a built-in. */
const op_plugin *plugins_get(const plugin_reg *reg, size_t i,
                             const char **path);
const op_plugin *plugins_find(const plugin_reg *reg, const char *name);

#endif
