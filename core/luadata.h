/*
 * luadata.h - evaluating a Lua *data* file (optipipe.lua, *_test.lua) in
 * the rule sandbox and converting the table it returns to cJSON.
 *
 * Such files are Lua so that people can comment them, compute a value or
 * share a local, but they are data: they run in a fresh sandbox (no io, no
 * os beyond time/clock/date, no require) with a memory cap and an
 * instruction and time budget, and only plain values survive.
 */
#ifndef OP_CORE_LUADATA_H
#define OP_CORE_LUADATA_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>
#include <optipipe/common.h>

/* Largest file read, and the rough largest JSON the result may become. */
#define LUADATA_FILE_MAX ((size_t)4 << 20)
#define LUADATA_JSON_MAX ((size_t)64 << 20)

/*
 * Runs the Lua file at path and converts the table it returns into a new
 * cJSON object or array (*out, owned by the caller). Tables with keys
 * exactly 1..n become arrays, other tables objects with sorted keys; an
 * empty table becomes an empty object. Functions and other non-data values
 * are refused. Returns 0, or an op_status with err naming the file (and the
 * line for Lua errors, the path inside the table for conversion errors).
 */
int luadata_eval_file(const char *path, cJSON **out, op_error *err);

/* The same under the given memory cap (bytes), instruction budget and
 * wall-clock limit (0 disables each): what `rules test` uses for test
 * files, with the rule limits. luadata_eval_file uses 256 MiB,
 * 100,000,000 instructions and 10 s. */
int luadata_eval_limited(const char *path, size_t mem_bytes,
                         uint64_t instructions, unsigned timeout_ms,
                         cJSON **out, op_error *err);

#endif
