/*
 * cmd_plugins.c - `optipipe plugins list`: every input plugin, built-in
 * and external (--plugin-path, OPTIPIPE_PLUGIN_PATH), with its version,
 * ABI and what it reads.
 */
#include <stdio.h>

#include "cli.h"

static int plugins_list(cli_opts *o, const opt_cmd *cmd)
{
    analysis an;
    size_t i;
    int code;

    (void)cmd;
    if (o->session.ninputs)
        return cli_usage_error("plugins list takes no arguments ('%s')",
                               o->session.inputs[0]);
    if ((code = cli_open_plugins(o, &an)))
        return code;
    for (i = 0; i < plugins_count(an.reg); i++) {
        const char *path = NULL;
        const op_plugin *p = plugins_get(an.reg, i, &path);
        printf("%-10s %-8s ABI %u.%u  %-10s %s\n", p->name, p->version,
               p->abi_major, p->abi_minor, path ? "external" : "built-in",
               p->description ? p->description : "");
        if (path)
            printf("           %s\n", path);
    }
    analysis_free(&an);
    return EXIT_DONE;
}

int cli_run_plugins_list(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, NULL, plugins_list);
}
