/*
 * test_fmt.c - core/fmt.c against the cases in tests/unit/fmt_cases.txt
 * (which units.lua meets too, see test_lua_sdk.c), plus what only C can
 * get wrong: cutting to the buffer and non-finite values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmt.h"

#define CASES OP_SOURCE_DIR "/tests/unit/fmt_cases.txt"
#define MAXF 6

/* Splits line at " | " into at most MAXF fields; returns their count. */
static int split(char *line, char *f[MAXF])
{
    int n = 0;
    char *p = line, *sep;

    line[strcspn(line, "\n")] = '\0';
    while (n < MAXF) {
        f[n++] = p;
        if (!(sep = strstr(p, " | ")))
            break;
        *sep = '\0';
        p = sep + 3;
    }
    return n;
}

/* The text fmt.c gives for one case; NULL for an unknown function. */
static const char *run_case(char *buf, size_t n, char **f, int nf)
{
    double x = nf > 1 ? strtod(f[1], NULL) : 0;

    if (strcmp(f[0], "count") == 0 && nf == 5)
        return fmt_count(buf, n, x, f[2], strcmp(f[3], "-") ? f[3] : NULL);
    if (strcmp(f[0], "duration") == 0 && nf == 3)
        return fmt_duration_ms(buf, n, x);
    if (strcmp(f[0], "bytes") == 0 && nf == 3)
        return fmt_bytes(buf, n, x);
    if (strcmp(f[0], "ratio") == 0 && nf == 3)
        return fmt_ratio(buf, n, x);
    if (strcmp(f[0], "percent") == 0 && nf == 4)
        return fmt_percent(buf, n, x, atoi(f[2]));
    if (strcmp(f[0], "number") == 0 && nf == 3)
        return fmt_number(buf, n, x);
    return NULL;
}

static void test_shared_cases(void **state)
{
    FILE *in = fopen(CASES, "r");
    /* zeroed: gcc -O3 cannot see that split() set the fields read */
    char line[256], buf[128], *f[MAXF] = {0};
    int ncases = 0, bad = 0;

    (void)state;
    assert_non_null(in);
    while (fgets(line, sizeof line, in)) {
        int nf;
        const char *got;

        if (line[0] == '#' || line[0] == '\n')
            continue;
        nf = split(line, f);
        got = run_case(buf, sizeof buf, f, nf);
        if (!got) {
            print_error("malformed case: %s\n", f[0]);
            bad++;
        } else if (strcmp(got, f[nf - 1]) != 0) {
            print_error("%s(%s): got \"%s\", want \"%s\"\n", f[0], f[1], got, f[nf - 1]);
            bad++;
        }
        ncases++;
    }
    fclose(in);
    assert_true(ncases >= 50);
    assert_int_equal(bad, 0);
}

static void test_non_finite(void **state)
{
    char b[32];

    (void)state;
    assert_string_equal(fmt_duration_ms(b, sizeof b, NAN), "?");
    assert_string_equal(fmt_bytes(b, sizeof b, INFINITY), "?");
    assert_string_equal(fmt_number(b, sizeof b, -INFINITY), "?");
    assert_string_equal(fmt_percent(b, sizeof b, NAN, 0), "?%");
    assert_string_equal(fmt_ratio(b, sizeof b, NAN), "?\xc3\x97");
    assert_string_equal(fmt_count(b, sizeof b, NAN, "task", NULL), "? tasks");
}

/* Small buffers cut the text but stay terminated; huge values do not
 * overflow the internal buffers. */
static void test_bounded(void **state)
{
    char b[4], big[64];

    (void)state;
    assert_string_equal(fmt_count(b, sizeof b, 12000, "record", NULL), "12,");
    assert_string_equal(fmt_duration_ms(b, sizeof b, 2708), "2.7");
    assert_string_equal(fmt_number(b, 1, 123), "");
    fmt_number(big, sizeof big, 1e300);
    assert_string_equal(big, "1e+300");
    fmt_ratio(big, sizeof big, 1e300);
    assert_true(strlen(big) == sizeof big - 1);
    fmt_duration_ms(big, sizeof big, 1e300);
    assert_non_null(strstr(big, "d"));
    fmt_percent(big, sizeof big, 1e300, 6);
    assert_true(strlen(big) == sizeof big - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_cases),
        cmocka_unit_test(test_non_finite),
        cmocka_unit_test(test_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
