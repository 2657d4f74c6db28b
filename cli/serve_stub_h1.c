/* serve_stub_h1.c - TEMPORARY link stubs until serve-jobs and serve-upload
 * are merged into serve-http (removed then). Every symbol is weak, so a
 * branch that merges serve-http and has the real one links the real one. */
#include <stdlib.h>

#include "serve.h"

#define WEAK __attribute__((weak))

WEAK const srv_route srv_routes_api[] = {{0}};
WEAK const srv_route srv_routes_ui[] = {{0}};

WEAK int jobs_open(srv *s, srv_jobs **out, op_error *err) { *out = NULL; return 0; }
WEAK void jobs_close(srv_jobs *j) {}
WEAK void jobs_stats(srv_jobs *j, srv_jobs_stats *st) {}
WEAK int serve_worker_main(const serve_opts *o) { return 2; }
WEAK int stage_begin(srv *s, const char *content_type, const char *raw_name,
                     srv_stage **out, op_error *err)
{ return op_error_set(err, OP_EIO, "uploads are not built yet"); }
WEAK int stage_feed(srv_stage *st, const char *data, size_t len, op_error *err)
{ return 0; }
WEAK int stage_end(srv_stage *st, srv_upload **out, op_error *err)
{ return OP_EPARSE; }
WEAK void stage_abort(srv_stage *st) {}
WEAK const char *srv_upload_field(const srv_upload *up, const char *name)
{ return NULL; }
WEAK void srv_upload_free(srv_upload *up) {}
