/*
 * dump_options.c - `optipipe --dump-options=json`: every command of the
 * command table with its groups and options, and every key of
 * optipipe.lua, as one JSON document. It is the source the man page
 * (docs/optipipe.1), the bash completion and the option tables of
 * docs/cli.md and docs/config.md are generated from (scripts/gen-docs,
 * as curl's managen), so those cannot drift from what the program takes.
 *
 * Schema (1): {"schema": 1, "program": "optipipe", "version": "...",
 * "commands": [{"name", "args", "summary", "about", "after", "operand":
 * {"metavar", "max"}, "groups": [{"title", "engine", "options": [OPTION]}]}],
 * "config": [OPTION]}; OPTION is opts_dump_spec's object (core/opts.c).
 */
#include <stdio.h>

#include "cli.h"
#include "cli_table.h"
#include "config.h"
#include "engine.h"
#include "jsonw.h"

static void dump_group(jw *w, const opt_group *g)
{
    const opt_spec *o;
    const op_engine *e = g->bind ? g->ctx : NULL;

    jw_obj(w);
    jw_key(w, "title");
    jw_str(w, g->title);
    jw_key(w, "engine"); /* the engine owning the group, or null */
    jw_str(w, e ? e->source : NULL);
    jw_key(w, "options");
    jw_arr(w);
    for (o = g->specs; o->name; o++)
        opts_dump_spec(w, o);
    jw_arr_end(w);
    jw_obj_end(w);
}

static void dump_command(jw *w, const opt_cmd *c)
{
    const opt_group *g;
    size_t i;

    jw_obj(w);
    jw_key(w, "name");
    jw_str(w, c->name);
    jw_key(w, "args");
    jw_str(w, c->args);
    jw_key(w, "summary");
    jw_str(w, c->summary);
    jw_key(w, "about");
    jw_str(w, c->about);
    jw_key(w, "after");
    jw_str(w, c->after);
    jw_key(w, "operand");
    jw_obj(w);
    jw_key(w, "metavar");
    jw_str(w, c->operands.metavar);
    jw_key(w, "max");
    jw_int(w, (int64_t)c->operands.max);
    jw_obj_end(w);
    jw_key(w, "groups");
    jw_arr(w);
    for (i = 0; (g = opts_group_at(c, i)) != NULL; i++)
        if (g->specs && g->specs->name)
            dump_group(w, g);
    jw_arr_end(w);
    jw_obj_end(w);
}

void cli_dump_options(FILE *f)
{
    const opt_cmd *const *all = cli_commands();
    const opt_spec *k;
    jw w;
    size_t i;

    jw_init(&w, f, 1);
    jw_obj(&w);
    jw_key(&w, "schema");
    jw_int(&w, 1);
    jw_key(&w, "program");
    jw_str(&w, "optipipe");
    jw_key(&w, "version");
    jw_str(&w, OP_VERSION);
    jw_key(&w, "commands");
    jw_arr(&w);
    for (i = 0; all[i]; i++)
        dump_command(&w, all[i]);
    jw_arr_end(&w);
    jw_key(&w, "config");
    jw_arr(&w);
    for (k = config_keys(); k->name; k++)
        opts_dump_spec(&w, k);
    jw_arr_end(&w);
    jw_obj_end(&w);
    fputc('\n', f);
}
