/* serve_stub_h4.c - TEMPORARY (reverted before the end): the UI's route
 * table until serve-ui is merged. H1's weak stub is taken out meanwhile:
 * in a static archive it satisfies srv_routes_api before serve_api.o is
 * looked at, so the real table is never linked. */
#include "serve.h"

const srv_route srv_routes_ui[] = {{0}};
