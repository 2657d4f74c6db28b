/* serve_stub_h1.c - TEMPORARY link stubs until serve-jobs and serve-upload
 * are merged (removed then). */
#include <stdlib.h>

#include "serve.h"

const srv_route srv_routes_api[] = {{0}};
const srv_route srv_routes_ui[] = {{0}};

int jobs_open(srv *s, srv_jobs **out, op_error *err) { *out = NULL; return 0; }
void jobs_close(srv_jobs *j) {}
void jobs_stats(srv_jobs *j, srv_jobs_stats *st) {}
int serve_worker_main(const serve_opts *o) { return 2; }
int stage_begin(srv *s, const char *content_type, const char *raw_name,
                srv_stage **out, op_error *err)
{ return op_error_set(err, OP_EIO, "uploads are not built yet"); }
int stage_feed(srv_stage *st, const char *data, size_t len, op_error *err)
{ return 0; }
int stage_end(srv_stage *st, srv_upload **out, op_error *err)
{ return OP_EPARSE; }
void stage_abort(srv_stage *st) {}
const char *srv_upload_field(const srv_upload *up, const char *name)
{ return NULL; }
void srv_upload_free(srv_upload *up) {}
