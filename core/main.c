/*
 * main.c - the optipipe command line (DESIGN §7): parses arguments,
 * dispatches to the commands and maps outcomes to exit codes:
 *   0 done, 1 findings at/above --fail-on, 2 usage error,
 *   3 no input could be read.
 * Results go to stdout (or -o FILE), diagnostics to stderr.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <lua.h>

#include "cli.h"
#include "jsonw.h"
#include "model_json.h"
#include "report.h"

enum { EXIT_DONE = 0, EXIT_FINDINGS = 1, EXIT_USAGE = 2, EXIT_NOINPUT = 3 };

static const char usage_main[] =
    "Usage: optipipe COMMAND [options] ...\n"
    "\n"
    "Reads Spark event logs, dbt artifacts and Flink REST exports, runs rules\n"
    "written in Lua over one metrics model and prints recommendations.\n"
    "\n"
    "Commands:\n"
    "  analyze [options] INPUT...   analyze files, directories or '-'\n"
    "  normalize [--format json] INPUT...\n"
    "                               print the model exactly as rules see it\n"
    "  rules list                   list the rules that would run\n"
    "  rules show ID                show a rule's metadata and options\n"
    "  rules test [DIR...]          run rule tests (*_test.lua)\n"
    "  plugins list                 list input plugins\n"
    "\n"
    "  optipipe --version | --help | COMMAND --help\n"
    "\n"
    "Exit codes: 0 done, 1 findings at/above --fail-on, 2 usage error,\n"
    "3 no input could be read.\n";

static const char usage_analyze[] =
    "Usage: optipipe analyze [options] INPUT...\n"
    "\n"
    "INPUT is a file, a directory (walked recursively, hidden files skipped,\n"
    "engines may be mixed) or '-' for standard input.\n"
    "\n"
    "Options:\n"
    "  --format FMT         text (default) or json\n"
    "  -o, --output FILE    write the report to FILE instead of stdout\n"
    "  --rules DIR          add a folder of user rules (repeatable)\n"
    "  --pack NAME          only this bundled pack (repeatable)\n"
    "  --no-bundled         no bundled pack: only the --rules folders\n"
    "  --fail-on LEVEL      exit 1 when a finding at or above LEVEL exists\n"
    "                       (info, warning, error)\n"
    "  --plugin-path DIRS   ':'-separated folders of .so plugins\n"
    "                       (also OPTIPIPE_PLUGIN_PATH)\n"
    "  --max-line BYTES     longest input line accepted (default 256 MiB)\n"
    "  --max-bytes BYTES    decompressed bytes per input (default 64 GiB)\n"
    "  --rule-timeout-ms N  wall clock per rule call (default 2000)\n"
    "  --rule-memory-mb N   memory per rule pack (default 64)\n"
    "  --rule-instructions N  VM instructions per rule call (default 1e8)\n"
    "  --isolate MODE       auto (user packs in a worker), always, never\n"
    "  --deterministic      zero volatile fields (elapsed time) in reports\n"
    "  -q, --quiet          no progress or notices on stderr\n";

static const char usage_normalize[] =
    "Usage: optipipe normalize [--format json] [-o FILE] INPUT...\n"
    "\n"
    "Prints {\"schema\": 1, \"runs\": [...]} with every run and node exactly\n"
    "as rules see them (docs/model.md).\n";

static const char usage_rules[] =
    "Usage: optipipe rules list [--pack NAME] [--rules DIR]\n"
    "       optipipe rules show ID [--rules DIR]\n"
    "       optipipe rules test [DIR...]\n"
    "\n"
    "'rules test' runs every <rule>_test.lua in each DIR (default: every\n"
    "bundled pack) and prints one line per case and 'N passed, M failed'.\n";

static const char usage_plugins[] =
    "Usage: optipipe plugins list [--plugin-path DIRS]\n";

/* ---- small helpers ------------------------------------------------------ */

static int usage_error(const char *fmt, const char *arg)
{
    fputs("optipipe: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'optipipe --help'.\n", stderr);
    return EXIT_USAGE;
}

static int parse_size(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v;
    uint64_t mult = 1;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (*end) {
    case 'k': case 'K': mult = 1024ull; end++; break;
    case 'm': case 'M': mult = 1024ull * 1024; end++; break;
    case 'g': case 'G': mult = 1024ull * 1024 * 1024; end++; break;
    case 't': case 'T': mult = 1024ull * 1024 * 1024 * 1024; end++; break;
    default: break;
    }
    if (*end == 'i' || *end == 'I')
        end++;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end || v > UINT64_MAX / mult)
        return -1;
    *out = v * mult;
    return 0;
}

static unsigned long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long)ts.tv_sec * 1000ul +
           (unsigned long)ts.tv_nsec / 1000000ul;
}

/* ---- option parsing -------------------------------------------------------- */

static int need_arg(int argc, char **argv, int i)
{
    return i + 1 < argc && argv[i + 1] != NULL;
}

static int add_list(const char **list, size_t *n, const char *v,
                    const char *opt)
{
    if (*n >= CLI_MAX_LIST)
        return usage_error("too many %s options", opt);
    list[(*n)++] = v;
    return 0;
}

static int parse_num_opt(const char *opt, const char *v, uint64_t *out)
{
    if (parse_size(v, out))
        return usage_error("%s needs a number", opt);
    return 0;
}

/* Parses options shared by the commands; positional arguments go to
 * o->inputs. Returns 0, or EXIT_USAGE after printing why. */
static int parse_opts(cli_opts *o, int argc, char **argv, const char *help)
{
    int i, rc;
    uint64_t v;

    for (i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *val = need_arg(argc, argv, i) ? argv[i + 1] : NULL;
        int takes = 1;

        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(help, stdout);
            exit(EXIT_DONE);
        } else if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++)
                if (o->ninputs < sizeof o->inputs / sizeof o->inputs[0])
                    o->inputs[o->ninputs++] = argv[i];
            break;
        } else if (a[0] != '-' || strcmp(a, "-") == 0) {
            if (o->ninputs >= sizeof o->inputs / sizeof o->inputs[0])
                return usage_error("too many inputs (at most %s)", "4096");
            o->inputs[o->ninputs++] = a;
            continue;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            o->quiet = 1;
            continue;
        } else if (strcmp(a, "--deterministic") == 0) {
            o->deterministic = 1;
            continue;
        } else if (strcmp(a, "--no-bundled") == 0) {
            o->no_bundled = 1;
            continue;
        }
        if (!val)
            return usage_error("option %s needs a value", a);
        if (strcmp(a, "--format") == 0) {
            o->format = val;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            o->output = val;
        } else if (strcmp(a, "--rules") == 0) {
            if ((rc = add_list(o->rules_dirs, &o->nrules_dirs, val, a)))
                return rc;
        } else if (strcmp(a, "--pack") == 0) {
            if ((rc = add_list(o->packs, &o->npacks, val, a)))
                return rc;
        } else if (strcmp(a, "--plugin-path") == 0) {
            o->plugin_path = val;
        } else if (strcmp(a, "--fail-on") == 0) {
            if (severity_parse(val) < 0)
                return usage_error("--fail-on takes info, warning or error, not '%s'", val);
            o->fail_on = val;
        } else if (strcmp(a, "--max-line") == 0) {
            if ((rc = parse_num_opt(a, val, &v)))
                return rc;
            o->limits.max_line = (size_t)v;
        } else if (strcmp(a, "--max-bytes") == 0) {
            if ((rc = parse_num_opt(a, val, &v)))
                return rc;
            o->limits.max_bytes = v;
        } else if (strcmp(a, "--rule-timeout-ms") == 0) {
            if ((rc = parse_num_opt(a, val, &v)))
                return rc;
            o->rlimits.timeout_ms = (unsigned)v;
        } else if (strcmp(a, "--rule-memory-mb") == 0) {
            if ((rc = parse_num_opt(a, val, &v)))
                return rc;
            o->rlimits.mem_bytes = (size_t)v * 1024 * 1024;
        } else if (strcmp(a, "--rule-instructions") == 0) {
            if ((rc = parse_num_opt(a, val, &v)))
                return rc;
            o->rlimits.instructions = v;
        } else if (strcmp(a, "--isolate") == 0) {
            if (strcmp(val, "auto") == 0)
                o->rlimits.isolate = -1;
            else if (strcmp(val, "always") == 0)
                o->rlimits.isolate = 1;
            else if (strcmp(val, "never") == 0)
                o->rlimits.isolate = 0;
            else
                return usage_error("--isolate takes auto, always or never, not '%s'", val);
        } else {
            takes = 0;
            return usage_error("unknown option '%s'", a);
        }
        i += takes;
    }
    return 0;
}

static void opts_default(cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = "text";
    o->plugin_path = getenv("OPTIPIPE_PLUGIN_PATH");
    input_limits_default(&o->limits);
    rule_limits_default(&o->rlimits);
}

static FILE *open_output(const cli_opts *o)
{
    FILE *f;

    if (!o->output || strcmp(o->output, "-") == 0)
        return stdout;
    f = fopen(o->output, "w");
    if (!f)
        fprintf(stderr, "optipipe: %s: cannot write: %s\n", o->output,
                strerror(errno));
    return f;
}

static int close_output(const cli_opts *o, FILE *f)
{
    int bad = ferror(f);

    if (f != stdout)
        bad |= fclose(f) != 0;
    else
        bad |= fflush(f) != 0;
    if (bad)
        fprintf(stderr, "optipipe: %s: write failed\n",
                o->output ? o->output : "stdout");
    return bad;
}

/* Reads every input; returns EXIT_NOINPUT when none could be read. */
static int read_inputs(const cli_opts *o, analysis *an)
{
    size_t i;
    op_error err;

    op_error_clear(&err);
    if (analysis_init(an, o->plugin_path, &o->limits, stderr, &err)) {
        fprintf(stderr, "optipipe: %s\n", err.msg);
        return EXIT_NOINPUT;
    }
    an->quiet = o->quiet;
    for (i = 0; i < o->ninputs; i++)
        analysis_add(an, o->inputs[i]);
    analysis_freeze(an);
    if (an->nok == 0) {
        fprintf(stderr, "optipipe: no input could be read\n");
        return EXIT_NOINPUT;
    }
    return EXIT_DONE;
}

/* ---- commands ------------------------------------------------------------ */

static int cmd_analyze(int argc, char **argv)
{
    cli_opts o;
    analysis an;
    results res;
    ruleset *rs = NULL;
    report_fn report;
    report_ctx rc;
    op_error err;
    FILE *out = NULL;
    unsigned long t0 = now_ms(), t_read = 0, t_rules = 0, t;
    int code;

    opts_default(&o);
    results_init(&res);
    memset(&an, 0, sizeof an);
    if ((code = parse_opts(&o, argc, argv, usage_analyze)))
        return code;
    report = report_find(o.format);
    if (!report)
        return usage_error("unknown --format '%s' (text, json)", o.format);
    if (!o.ninputs)
        return usage_error("%s", "analyze needs at least one INPUT");
    op_error_clear(&err);
    t = now_ms();
    if (cli_load_rules(&o, &rs, &res, &err)) {
        fprintf(stderr, "optipipe: %s\n", err.msg);
        code = err.code == OP_EUSAGE ? EXIT_USAGE : EXIT_NOINPUT;
        goto out;
    }
    t_rules = now_ms() - t;
    t = now_ms();
    if ((code = read_inputs(&o, &an)))
        goto out;
    t_read = now_ms() - t;
    t = now_ms();
    if (ruleset_run(rs, an.m, &res, &err)) {
        fprintf(stderr, "optipipe: rule engine: %s\n", err.msg);
        code = EXIT_NOINPUT;
        goto out;
    }
    results_finish(&res, an.m);
    t_rules += now_ms() - t;
    out = open_output(&o);
    if (!out) {
        code = EXIT_USAGE;
        goto out;
    }
    memset(&rc, 0, sizeof rc);
    rc.an = &an;
    rc.res = &res;
    rc.rs = rs;
    rc.out = out;
    rc.color = out == stdout && isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    rc.elapsed_ms = now_ms() - t0;
    rc.read_ms = t_read;
    rc.rules_ms = t_rules;
    rc.deterministic = o.deterministic;
    report(&rc);
    if (close_output(&o, out))
        code = EXIT_NOINPUT;
    else if (o.fail_on &&
             results_count_at_least(&res, (severity)severity_parse(o.fail_on)))
        code = EXIT_FINDINGS;
out:
    ruleset_free(rs);
    results_free(&res);
    analysis_free(&an);
    return code;
}

static int cmd_normalize(int argc, char **argv)
{
    cli_opts o;
    analysis an;
    FILE *out;
    jw w;
    size_t i;
    int code;

    opts_default(&o);
    o.format = "json";
    memset(&an, 0, sizeof an);
    if ((code = parse_opts(&o, argc, argv, usage_normalize)))
        return code;
    if (strcmp(o.format, "json") != 0)
        return usage_error("normalize writes json only, not '%s'", o.format);
    if (!o.ninputs)
        return usage_error("%s", "normalize needs at least one INPUT");
    if ((code = read_inputs(&o, &an)))
        goto out;
    out = open_output(&o);
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
    for (i = 0; i < an.m->nruns; i++)
        model_json_run(&w, an.m->runs[i]);
    jw_arr_end(&w);
    jw_obj_end(&w);
    fputc('\n', out);
    if (close_output(&o, out))
        code = EXIT_NOINPUT;
out:
    analysis_free(&an);
    return code;
}

static void print_list(const char *label, char **v, size_t n)
{
    size_t i;

    printf("%s", label);
    for (i = 0; i < n; i++)
        printf("%s%s", i ? ", " : "", v[i]);
    putchar('\n');
}

static int rules_show(ruleset *rs, const char *id)
{
    rule_meta *r = ruleset_find(rs, id);
    char *opts;

    if (!r) {
        fprintf(stderr, "optipipe: no rule with id '%s'\n", id);
        return EXIT_USAGE;
    }
    printf("id:          %s\n", r->id);
    printf("title:       %s\n", r->title ? r->title : "");
    printf("severity:    %s\n", severity_name(r->sev));
    print_list("sources:     ", r->sources, r->nsources);
    print_list("tags:        ", r->tags, r->ntags);
    printf("pack:        %s\n", r->pack);
    printf("file:        %s\n", r->file);
    opts = r->options ? cJSON_Print(r->options) : NULL;
    printf("options:     %s\n", opts ? opts : "{}");
    cJSON_free(opts);
    if (r->description)
        printf("\n%s\n", r->description);
    return EXIT_DONE;
}

static int cmd_rules(int argc, char **argv)
{
    cli_opts o;
    ruleset *rs = NULL;
    results errs;
    op_error err;
    size_t i;
    int code;

    if (argc < 1 || strcmp(argv[0], "--help") == 0) {
        fputs(usage_rules, argc < 1 ? stderr : stdout);
        return argc < 1 ? EXIT_USAGE : EXIT_DONE;
    }
    opts_default(&o);
    if (strcmp(argv[0], "test") == 0)
        return rules_test_main(&o, argc - 1, argv + 1);
    if (strcmp(argv[0], "list") != 0 && strcmp(argv[0], "show") != 0)
        return usage_error("unknown rules command '%s' (list, show, test)", argv[0]);
    if ((code = parse_opts(&o, argc - 1, argv + 1, usage_rules)))
        return code;
    if (strcmp(argv[0], "show") == 0 && o.ninputs != 1)
        return usage_error("%s", "rules show needs exactly one rule ID");
    results_init(&errs);
    op_error_clear(&err);
    if (cli_load_rules(&o, &rs, &errs, &err)) {
        fprintf(stderr, "optipipe: %s\n", err.msg);
        results_free(&errs);
        return err.code == OP_EUSAGE ? EXIT_USAGE : EXIT_NOINPUT;
    }
    if (strcmp(argv[0], "show") == 0) {
        code = rules_show(rs, o.inputs[0]);
    } else {
        for (i = 0; i < ruleset_count(rs); i++) {
            rule_meta *r = ruleset_rule(rs, i);
            printf("%-32s %-8s %-8s %s\n", r->id, severity_name(r->sev),
                   r->pack, r->title ? r->title : "");
        }
        code = EXIT_DONE;
    }
    ruleset_free(rs);
    results_free(&errs);
    return code;
}

static int cmd_plugins(int argc, char **argv)
{
    cli_opts o;
    analysis an;
    op_error err;
    size_t i;
    int code;

    if (argc < 1 || strcmp(argv[0], "list") != 0) {
        if (argc >= 1 && strcmp(argv[0], "--help") == 0) {
            fputs(usage_plugins, stdout);
            return EXIT_DONE;
        }
        return usage_error("%s", "usage: optipipe plugins list");
    }
    opts_default(&o);
    if ((code = parse_opts(&o, argc - 1, argv + 1, usage_plugins)))
        return code;
    op_error_clear(&err);
    if (analysis_init(&an, o.plugin_path, NULL, stderr, &err)) {
        fprintf(stderr, "optipipe: %s\n", err.msg);
        analysis_free(&an);
        return EXIT_NOINPUT;
    }
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

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;

    if (!cmd) {
        fputs(usage_main, stderr);
        return EXIT_USAGE;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("optipipe %s (plugin ABI %d.%d, %s)\n", OP_VERSION,
               OP_ABI_MAJOR, OP_ABI_MINOR, LUA_RELEASE);
        return EXIT_DONE;
    }
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        fputs(usage_main, stdout);
        return EXIT_DONE;
    }
    if (strcmp(cmd, "analyze") == 0)
        return cmd_analyze(argc - 2, argv + 2);
    if (strcmp(cmd, "normalize") == 0)
        return cmd_normalize(argc - 2, argv + 2);
    if (strcmp(cmd, "rules") == 0)
        return cmd_rules(argc - 2, argv + 2);
    if (strcmp(cmd, "plugins") == 0)
        return cmd_plugins(argc - 2, argv + 2);
    return usage_error("unknown command '%s'", cmd);
}
