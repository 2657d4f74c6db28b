/* serve_stub_h1.c - TEMPORARY: the route tables of serve_api.c and
 * serve_ui.c until serve-api and serve-ui are merged into serve-http
 * (removed then). Weak, so a branch with the real ones links those. */
#include "serve.h"

__attribute__((weak)) const srv_route srv_routes_api[] = {{0}};
__attribute__((weak)) const srv_route srv_routes_ui[] = {{0}};
