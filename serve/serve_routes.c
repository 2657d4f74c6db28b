/*
 * serve_routes.c - the one list of the server's route tables: each module
 * keeps its own routes next to its handlers, and serve_http.c matches a
 * request against these tables in this order. docs/openapi.json describes
 * every /api/v1 route of them (tests/e2e/serve_openapi.sh checks both ways).
 */
#include "serve.h"

const srv_route *const srv_route_tables[] = {
    srv_routes_http, srv_routes_api, srv_routes_ui, NULL};
