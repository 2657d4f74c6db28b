/*
 * luadata.c - Lua data files (luadata.h): read bounded, run once in a
 * fresh sandbox under a budget, convert the returned table to cJSON.
 */
#include "luadata.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "input.h"
#include "lua_json.h"
#include "sbx.h"

#define LUADATA_MEM ((size_t)256 << 20)
#define LUADATA_INSTRUCTIONS 100000000u
#define LUADATA_TIMEOUT_MS 10000u

/* Runs the chunk; leaves its first result on the stack. */
static int run_chunk(sbx *s, const char *path, char *src, size_t len,
                     uint64_t instructions, unsigned timeout_ms, op_error *err)
{
    lua_State *L = sbx_lua(s);
    char chunk[4096 + 2];
    char *reason = NULL;
    int rc;

    snprintf(chunk, sizeof chunk, "@%s", path);
    sbx_push_env(L);
    if (sbx_load_text(L, src, len, chunk)) {
        rc = op_error_set(err, OP_EPARSE, "%s", lua_tostring(L, -1));
        lua_pop(L, 1);
        return rc;
    }
    sbx_arm(s, instructions, timeout_ms);
    rc = sbx_pcall(s, 0, 1, &reason);
    sbx_disarm(s);
    if (rc != SBX_OK) {
        char *tb = reason ? strstr(reason, "\nstack traceback:") : NULL;
        if (tb) /* a data file's line number says it all */
            *tb = '\0';
        rc = op_error_set(err, rc == SBX_EHOST ? OP_ENOMEM : OP_EPARSE,
                          "%s%s%s", rc == SBX_ELUA ? "" : path,
                          rc == SBX_ELUA ? "" : ": ",
                          reason ? reason : "out of memory");
        free(reason);
        return rc;
    }
    return 0;
}

int luadata_eval_file(const char *path, cJSON **out, op_error *err)
{
    return luadata_eval_limited(path, LUADATA_MEM, LUADATA_INSTRUCTIONS,
                                LUADATA_TIMEOUT_MS, out, err);
}

int luadata_eval_limited(const char *path, size_t mem_bytes,
                         uint64_t instructions, unsigned timeout_ms,
                         cJSON **out, op_error *err)
{
    sbx_config cfg = {mem_bytes, NULL, NULL};
    size_t len = 0, budget = LUADATA_JSON_MAX;
    char msg[OP_ERROR_MAX];
    char *src = NULL;
    sbx *s = NULL;
    lua_State *L;
    int rc;

    *out = NULL;
    src = input_read_file(path, LUADATA_FILE_MAX, &len, err);
    if (!src)
        return err ? err->code : OP_EIO;
    s = sbx_new(&cfg, err);
    if (!s) {
        rc = OP_ENOMEM;
        goto out;
    }
    sbx_set_label(s, path);
    L = sbx_lua(s);
    if ((rc = run_chunk(s, path, src, len, instructions, timeout_ms, err)))
        goto out;
    if (!lua_istable(L, -1)) {
        rc = op_error_set(err, OP_EPARSE, "%s: must return a table (got %s)",
                          path, luaL_typename(L, -1));
        goto out;
    }
    if (ljson_from_lua(L, -1, path, &budget, out, msg, sizeof msg))
        rc = op_error_set(err, OP_EPARSE, "%s", msg);
out:
    sbx_free(s, instructions, timeout_ms);
    free(src);
    return rc;
}
