/*
 * map_packs.h - mapping packs: Lua data files that say where an exporter's
 * metric goes in the model (docs/mapping-packs.md). Loaded from
 * <home>/rules/mappings (bundled) and the user's folders, evaluated in the
 * rule sandbox as data, compiled here, and asked through the builder's
 * map_series (optipipe/mapping.h). Engine-agnostic: packs name engines,
 * core does not.
 */
#ifndef OP_CORE_MAP_PACKS_H
#define OP_CORE_MAP_PACKS_H

#include <stdio.h>

#include <optipipe/mapping.h>

#include "rules.h"

typedef struct mapping_set mapping_set;

/* The bundled packs' folder under home. */
#define MAPPING_DIR "mappings"

/* Loads every *.lua pack (not *_test.lua) of the user folders dirs (in
 * order, each sorted by name), then of bundled_dir (may be NULL), into
 * *out (owned by the caller: mapping_set_free). Packs met first win a
 * series, so a user's pack overrides a bundled one. A pack that fails to
 * evaluate or is malformed is skipped with a message on diag (may be NULL)
 * naming the file and the place; a missing user folder is an error.
 * Returns 0 or an op_status with err. */
int mapping_set_load(const char *const *dirs, size_t ndirs,
                     const char *bundled_dir, const rule_limits *lim,
                     FILE *diag, mapping_set **out, op_error *err);
void mapping_set_free(mapping_set *ms);
size_t mapping_set_count(const mapping_set *ms);

/* Resolves s against the packs: 1 with *out filled, 0 when no pack maps
 * it, -OP_ELIMIT with err when a template outgrew a field. */
int mapping_resolve(const mapping_set *ms, const op_series_ref *s,
                    op_map *out, op_error *err);

/* Compiles one pack from its evaluated document (adopted: freed with the
 * set, also on failure) into ms, naming file in errors. For tests and the
 * loader. Returns 0 or OP_EPARSE with err. */
int mapping_set_add(mapping_set *ms, cJSON *doc, const char *file,
                    op_error *err);
mapping_set *mapping_set_new(void);

#endif
