/*
 * alloc_fail.c - allocation-failure injection: runs the demo analysis
 * (fixtures/demo, bundled rules, in-process) with the Nth allocation of
 * the core, the plugins, cJSON and the Lua sandbox allocator failing.
 *
 * Linked with -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,
 * --wrap=strdup,--wrap=strndup, so every allocation made by code in this
 * link (op_core, the built-in plugins, core/sbx.c's lua_Alloc) goes through
 * the counters below; cJSON is pointed at them with cJSON_InitHooks.
 * Libraries' internal allocations (zstd, zlib, Lua's own luaL_newstate
 * states) are not counted.
 *
 * Usage: alloc_fail N   (N = 0: no failure; prints the allocation count;
 * ALLOC_FAIL_TRACE=1 prints the stack of the failed allocation;
 * ALLOC_FAIL_RUN=K fails K allocations in a row from the Nth;
 * ALLOC_FAIL_REPORT="json html ..." or "all" also writes those reports,
 * to /dev/null, as `optipipe analyze --format` would)
 * Exit status: optipipe's (0..3) on a clean end; a crash, a sanitizer
 * report or a leak is the failure tests/alloc/run.sh looks for. The last
 * line on stderr says what the run still produced (rules, runs, findings,
 * rule errors, inputs, warnings), to compare with a run without failures:
 * a difference with no error to show for it is a failure dropped silently.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "session.h"

/* optipipe's exit codes (cli/cli.h; this driver reaches core alone). */
enum { EXIT_USAGE = 2, EXIT_NOINPUT = 3 };
#include "report.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

/* Provided by the sanitizer runtimes; NULL in a plain build. */
void __sanitizer_print_stack_trace(void) __attribute__((weak));

static unsigned long alloc_count, fail_at;
static unsigned long fail_run = 1; /* ALLOC_FAIL_RUN: allocations failed in a row */
static int trace; /* ALLOC_FAIL_TRACE=1: show where the failure was */

/* Called once, at the failing allocation: in a plain build, where there
 * is no sanitizer to print the stack, `break alloc_fail_hit` in gdb. */
__attribute__((noinline)) void alloc_fail_hit(void);
__attribute__((noinline)) void alloc_fail_hit(void)
{
    __asm__ volatile("" ::: "memory"); /* keeps the call */
    if (trace && __sanitizer_print_stack_trace)
        __sanitizer_print_stack_trace();
}

/* Whether this allocation is one to fail: N, or N .. N + ALLOC_FAIL_RUN - 1
 * (Lua answers a failed allocation with a full collection and one retry,
 * so failing one allocation alone rarely reaches its error paths). */
static int should_fail(void)
{
    ++alloc_count;
    if (!fail_at || alloc_count < fail_at || alloc_count - fail_at >= fail_run)
        return 0;
    if (alloc_count == fail_at)
        alloc_fail_hit();
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return should_fail() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t k, size_t n)
{
    return should_fail() ? NULL : __real_calloc(k, n);
}

void *__wrap_realloc(void *p, size_t n)
{
    /* realloc(p, 0) frees (Lua's allocator uses it): never fail a free. */
    if (n == 0 && p)
        return __real_realloc(p, n);
    return should_fail() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    return should_fail() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    return should_fail() ? NULL : __real_strndup(s, n);
}

static void *hook_malloc(size_t n)
{
    return __wrap_malloc(n);
}

/* What the session produced, on one line (see the top of the file). */
static void print_outcome(FILE *f, const op_session *s)
{
    size_t i, nwarn = 0;

    for (i = 0; i < s->an.ninputs; i++)
        nwarn += s->an.inputs[i].nwarnings;
    fprintf(f, "rules %zu, runs %zu, findings %zu, rule errors %zu, "
            "inputs %zu of %zu, warnings %zu\n",
            s->rs ? ruleset_count(s->rs) : 0, s->an.m ? s->an.m->nruns : 0,
            s->res.n, s->res.ne, s->an.nok, s->an.ninputs, nwarn);
}

/* Writes the reports named in the list (space- or comma-separated, or
 * "all") to /dev/null. Returns code, EXIT_NOINPUT when a report failed,
 * EXIT_USAGE for an unknown format. */
static int write_reports(const op_session *s, const char *list, int code)
{
    char names[256], *save = NULL, *name;
    report_ctx rc;

    snprintf(names, sizeof names, "%s",
             strcmp(list, "all") == 0 ? report_formats() : list);
    memset(&rc, 0, sizeof rc);
    rc.an = &s->an;
    rc.res = &s->res;
    rc.rs = s->rs;
    rc.deterministic = 1;
    for (name = strtok_r(names, " ,", &save); name;
         name = strtok_r(NULL, " ,", &save)) {
        report_fn fn = report_find(name);
        int rrc;

        if (!fn) {
            fprintf(stderr, "alloc_fail: no report format '%s'\n", name);
            return EXIT_USAGE;
        }
        if (!(rc.out = fopen("/dev/null", "w")))
            return EXIT_NOINPUT;
        rrc = fn(&rc);
        if (fclose(rc.out) || rrc)
            code = EXIT_NOINPUT;
    }
    return code;
}

/* optipipe's exit code for the session's outcome (cli_session_error). */
static int session_exit(const op_session *s, int rc, const op_error *err)
{
    if (!rc)
        return 0;
    fprintf(stderr, "optipipe: %s%s\n", s->failed == OP_STAGE_RUN ? "rule engine: " : "",
            err->msg);
    return rc == OP_EUSAGE ? EXIT_USAGE : EXIT_NOINPUT;
}

int main(int argc, char **argv)
{
    cJSON_Hooks hooks = { hook_malloc, free };
    static const char *const inputs[] = {OP_SOURCE_DIR "/fixtures/demo"};
    op_session_opts o;
    op_session s;
    op_error err;
    int code;

    if (argc != 2) {
        fprintf(stderr, "usage: alloc_fail N\n");
        return 2;
    }
    fail_at = strtoul(argv[1], NULL, 10);
    trace = getenv("ALLOC_FAIL_TRACE") != NULL;
    if (getenv("ALLOC_FAIL_RUN"))
        fail_run = strtoul(getenv("ALLOC_FAIL_RUN"), NULL, 10);
    cJSON_InitHooks(&hooks);
    op_session_opts_default(&o);
    o.no_config = 1;
    o.quiet = 1;
    o.diag = stderr;
    o.rlimits.isolate = 0; /* a forked worker's failures would not count */
    o.inputs = inputs;
    o.ninputs = 1;
    code = session_exit(&s, op_session_run(&s, &o, &err), &err);
    if (!code && getenv("ALLOC_FAIL_REPORT"))
        code = write_reports(&s, getenv("ALLOC_FAIL_REPORT"), code);
    if (!fail_at)
        printf("%lu\n", alloc_count);
    else
        fprintf(stderr, "alloc_fail: allocation %lu of %lu failed; exit %d\n",
                fail_at, alloc_count, code);
    print_outcome(stderr, &s);
    op_session_free(&s);
    return code;
}
