/* A fixture of tests/layering/check.py selftest, never compiled: what a
 * cli/ file must not include. */
#include "serve_http.h"    /* line 3: serve's internals */
#include "lua_rule.h"      /* line 4: core's internal header */
#include "../serve/serve.h" /* line 5: serve's internals by a path */
#include "op_serve.h"      /* fine: serve/include */
#include "store.h"         /* fine: core/include */
#include "opts.h"          /* fine: cli's own */
