/*
 * engine_samza.c - Samza's entry in the engine table (core/engine.h): the
 * runs of the samza plugin (../samza.c) are an engine of their own, so
 * rules select them by `sources = { "samza" }`. No charts, patches or
 * fetch yet: a Samza job's metrics come from its metrics topic.
 */
#include "engine.h"

const op_engine op_engine_samza = {
    .size = sizeof(op_engine),
    .source = "samza",
};
