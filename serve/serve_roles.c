/*
 * serve_roles.c - what each role of `optipipe serve` may do
 * (docs/security.md "Users and roles"): the role names and the one table
 * of the least role of every route, which serve_http.c checks before any
 * handler runs. Pure (no state), so every page can name a role.
 */
#include <string.h>

#include "serve_http.h"

/* ---- roles ------------------------------------------------------------------------ */

static const char *const role_names[SRV_ROLES] = {"none", "read", "upload",
                                                  "decide", "admin"};

const char *srv_role_name(srv_role r)
{
    return (unsigned)r < SRV_ROLES ? role_names[r] : "none";
}

int srv_role_parse(const char *name)
{
    int i;

    for (i = 0; name && i < SRV_ROLES; i++)
        if (strcmp(name, role_names[i]) == 0)
            return i;
    return -1;
}

/* The least role of each route, by method and pattern: every route of
 * srv_route_tables is here (test_serve_users checks), so a new route says
 * who may use it. Public routes (SRV_PUBLIC) need none. */
static const struct {
    const char *method, *pattern;
    srv_role least;
} route_roles[] = {
    {"GET", "/healthz", SRV_ROLE_NONE},
    {"GET", "/login", SRV_ROLE_NONE},
    {"POST", "/login", SRV_ROLE_NONE},
    {"GET", "/static/app.js", SRV_ROLE_NONE},
    {"GET", "/static/app.css", SRV_ROLE_NONE},
    {"GET", "/favicon.ico", SRV_ROLE_NONE},
    {"POST", "/logout", SRV_ROLE_READ},
    {"GET", "/metrics", SRV_ROLE_READ},
    {"GET", "/", SRV_ROLE_READ},
    {"GET", "/analyses", SRV_ROLE_READ},
    {"GET", "/analyses/{id}", SRV_ROLE_READ},
    {"GET", "/analyses/{id}/report.html", SRV_ROLE_READ},
    {"GET", "/analyses/{id}/patches", SRV_ROLE_READ},
    {"GET", "/jobs", SRV_ROLE_READ},
    {"GET", "/jobs/{job}", SRV_ROLE_READ},
    {"GET", "/runs/{run}", SRV_ROLE_READ},
    {"GET", "/diff", SRV_ROLE_READ},
    {"GET", "/findings/{fp}", SRV_ROLE_READ},
    {"GET", "/notifications", SRV_ROLE_READ},
    {"GET", "/api/v1/analyses", SRV_ROLE_READ},
    {"GET", "/api/v1/analyses/{id}", SRV_ROLE_READ},
    {"GET", "/api/v1/analyses/{id}/patches", SRV_ROLE_READ},
    {"GET", "/api/v1/jobs", SRV_ROLE_READ},
    {"GET", "/api/v1/jobs/{job}/runs", SRV_ROLE_READ},
    {"GET", "/api/v1/runs/{run}", SRV_ROLE_READ},
    {"GET", "/api/v1/findings/{fp}/history", SRV_ROLE_READ},
    {"GET", "/api/v1/me", SRV_ROLE_READ},
    {"GET", "/api/v1/notifications", SRV_ROLE_READ},
    {"POST", "/analyses", SRV_ROLE_UPLOAD},
    {"POST", "/analyses/{id}/retry", SRV_ROLE_UPLOAD},
    {"POST", "/api/v1/analyses", SRV_ROLE_UPLOAD},
    {"POST", "/api/v1/analyses/{id}/retry", SRV_ROLE_UPLOAD},
    {"POST", "/api/v1/rules/lint", SRV_ROLE_UPLOAD},
    {"POST", "/analyses/{id}/decisions", SRV_ROLE_DECIDE},
    {"POST", "/api/v1/decisions", SRV_ROLE_DECIDE},
    {"GET", "/api/v1/users", SRV_ROLE_ADMIN},
};

srv_role srv_route_role(const srv_route *rt)
{
    size_t i;

    for (i = 0; rt && i < sizeof route_roles / sizeof *route_roles; i++)
        if (!strcmp(route_roles[i].method, rt->method) &&
            !strcmp(route_roles[i].pattern, rt->pattern))
            return route_roles[i].least;
    return SRV_ROLE_ADMIN;
}
