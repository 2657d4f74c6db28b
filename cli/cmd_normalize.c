/*
 * cmd_normalize.c - `optipipe normalize` (docs/cli.md#normalize): the
 * inputs read into the model and printed as {"schema": 1, "runs": [...]},
 * exactly as rules see them; optipipe reads it back as an input.
 */
#include "cli.h"
#include "jsonw.h"
#include "model_json.h"

static void normalize_preset(cli_opts *o)
{
    o->format = "json";
}

static int normalize(cli_opts *o, const opt_cmd *cmd)
{
    op_session s;
    FILE *out;
    jw w;
    size_t i;
    int code = EXIT_DONE;

    (void)cmd;
    if (!o->session.ninputs)
        return cli_usage_error("%s", "normalize needs at least one INPUT");
    if ((code = cli_session_run(&s, o, OP_SESSION_READ)))
        goto out;
    out = cli_open_output(o);
    if (!out) {
        code = EXIT_USAGE;
        goto out;
    }
    jw_init(&w, out, 1);
    jw_obj(&w);
    jw_key(&w, "schema");
    jw_int(&w, 1);
    jw_key(&w, "runs");
    jw_arr(&w);
    for (i = 0; i < s.an.m->nruns; i++)
        model_json_run(&w, s.an.m->runs[i]);
    jw_arr_end(&w);
    jw_obj_end(&w);
    fputc('\n', out);
    if (cli_close_output(o, out))
        code = EXIT_NOINPUT;
out:
    op_session_free(&s);
    return code;
}

int cli_run_normalize(const opt_cmd *cmd, int argc, char **argv)
{
    return cli_run_with_opts(cmd, argc, argv, normalize_preset, normalize);
}
