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
 * ALLOC_FAIL_TRACE=1 prints the stack of the failed allocation)
 * Exit status: optipipe's (0..3) on a clean end; a crash, a sanitizer
 * report or a leak is the failure tests/alloc/run.sh looks for.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"

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
static int trace; /* ALLOC_FAIL_TRACE=1: show where the failure was */

/* Whether this allocation is the one to fail. */
static int should_fail(void)
{
    if (++alloc_count != fail_at)
        return 0;
    if (trace && __sanitizer_print_stack_trace)
        __sanitizer_print_stack_trace();
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

int main(int argc, char **argv)
{
    cJSON_Hooks hooks = { hook_malloc, free };
    cli_opts o;
    cli_session s;
    int code;

    if (argc != 2) {
        fprintf(stderr, "usage: alloc_fail N\n");
        return 2;
    }
    fail_at = strtoul(argv[1], NULL, 10);
    trace = getenv("ALLOC_FAIL_TRACE") != NULL;
    cJSON_InitHooks(&hooks);
    cli_opts_default(&o);
    o.no_config = 1;
    o.quiet = 1;
    o.plugin_path = NULL;
    o.rlimits.isolate = 0; /* a forked worker's failures would not count */
    o.inputs[o.ninputs++] = OP_SOURCE_DIR "/fixtures/demo";
    code = cli_session_run(&s, &o);
    cli_session_free(&s);
    if (!fail_at)
        printf("%lu\n", alloc_count);
    else
        fprintf(stderr, "alloc_fail: allocation %lu of %lu failed; exit %d\n",
                fail_at, alloc_count, code);
    return code;
}
