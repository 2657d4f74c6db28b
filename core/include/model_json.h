/*
 * model_json.h - the model as JSON, exactly the shape rules see
 * (optipipe normalize, docs/model.md).
 */
#ifndef OP_CORE_MODEL_JSON_H
#define OP_CORE_MODEL_JSON_H

#include "jsonw.h"
#include "model.h"

/* Writes one frozen run as a JSON object. */
void model_json_run(jw *w, const struct op_run *r);

/* Writes key and the map m as a JSON object (keys in the map's order). */
void model_json_map(jw *w, const char *key, const mmap *m);

/* Writes one mvalue (int exactly, number, string, boolean). */
void model_json_value(jw *w, const mvalue *v);

#endif
