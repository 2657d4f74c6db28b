/*
 * engine_flink.c - Flink's entry in the engine table (core/engine.h):
 * charts, the patch writer, and `fetch flink` from a JobManager, which is
 * also how `analyze http://...` reads a URL no other engine claims.
 */
#include "flink_host.h"

#include "engine.h"

/* Any http(s) URL, at the lowest score: the JobManager's REST API has no
 * path of its own to recognize it by, and was the first URL source. */
static int flink_url_score(const char *url)
{
    return fetch_is_url(url) ? 1 : 0;
}

static const op_engine_patch flink_patch = {"yaml", flink_patch_write};

static const op_engine_fetch flink_fetch = {
    .name = "flink",
    .to_memory = fetch_flink_to_memory,
    .url_score = flink_url_score,
};

const op_engine op_engine_flink = {
    .size = sizeof(op_engine),
    .source = "flink",
    .html_charts = html_charts_flink,
    .patch = &flink_patch,
    .fetch = &flink_fetch,
};
