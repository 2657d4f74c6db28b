/* A fixture of tests/layering/check.py selftest, never compiled: what a
 * serve/ file must not include (it uses core/include only). */
#include "cli.h"           /* line 3: a CLI header */
#include "../cli/opts.h"   /* line 4: a CLI header by a relative path */
#include "sbx.h"           /* line 5: core's internal header */
#include "spark_host.h"    /* line 6: an engine's header */
#include "session.h"       /* fine: core/include */
#include "serve_http.h"    /* fine: serve's own */
#include <microhttpd.h>    /* fine: a system header */
