/*
 * cmd_serve.c - `optipipe serve` on the command line: its options (rows of
 * cli_table.c, bound to cli_opts.serve) parsed into the serve layer's
 * serve_opts, then serve_main (serve/include/op_serve.h); and `serve user
 * add` (serve_user_add). The server itself is serve/'s.
 */
#include <string.h>

#include "cli.h"

static void serve_preset(cli_opts *o)
{
    serve_opts_default(&o->serve);
}

static int serve(cli_opts *o, const opt_cmd *cmd)
{
    (void)cmd;
    if (o->session.ninputs)
        return cli_usage_error("serve takes no arguments ('%s')",
                               o->session.inputs[0]);
    o->serve.quiet = o->session.quiet;
    return serve_main(&o->serve);
}

int cli_run_serve(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, serve_preset, serve);
}

static int serve_user(cli_opts *o, const opt_cmd *cmd)
{
    (void)cmd;
    if (o->session.ninputs != 2 || strcmp(o->session.inputs[0], "add") != 0)
        return cli_usage_error("%s", "usage: optipipe serve user add NAME "
                               "--role ROLE --users FILE");
    if (!o->serve.users_file || !o->user_role)
        return cli_usage_error("%s", "serve user add needs --role ROLE and "
                               "--users FILE");
    return serve_user_add(o->serve.users_file, o->session.inputs[1], o->user_role,
                          stdout);
}

int cli_run_serve_user(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, serve_preset, serve_user);
}
