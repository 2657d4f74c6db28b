/*
 * test_spark_dist.c - the Spark plugin's exact quantiles (spark_dist.c)
 * are selected, not sorted: for random inputs of every small size, with
 * many ties, zeros and negatives, p50..p99 equal what a sorted array with
 * linear interpolation between the closest ranks gives, to the bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../plugins/spark/spark_internal.h"

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ref_q(const double *s, size_t n, double p)
{
    double h = (double)(n - 1) * p;
    size_t lo = (size_t)floor(h);

    if (lo + 1 >= n)
        return s[n - 1];
    return s[lo] + (h - (double)lo) * (s[lo + 1] - s[lo]);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void check(const double *v, size_t n)
{
    static const double ps[] = {0.5, 0.75, 0.9, 0.95, 0.99};
    double *s = malloc(n * sizeof *s);
    sp_dist d;
    op_dist o;
    size_t i;

    assert_non_null(s);
    memcpy(s, v, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp);
    memset(&d, 0, sizeof d);
    for (i = 0; i < n; i++)
        sp_dist_add(&d, v[i]);
    assert_int_equal(sp_dist_finish(&d, &o), 0);
    assert_true(o.p50 == ref_q(s, n, ps[0]));
    assert_true(o.p75 == ref_q(s, n, ps[1]));
    assert_true(o.p90 == ref_q(s, n, ps[2]));
    assert_true(o.p95 == ref_q(s, n, ps[3]));
    assert_true(o.p99 == ref_q(s, n, ps[4]));
    assert_true(o.min == s[0] && o.max == s[n - 1]);
    free(s);
}

static void test_selected_quantiles_equal_sorted(void **state)
{
    double v[3000];
    size_t n, i, round;

    (void)state;
    for (n = 1; n <= 300; n++)
        for (round = 0; round < 4; round++) {
            for (i = 0; i < n; i++) {
                uint64_t r = next();
                switch (round) {
                case 0: v[i] = (double)(r % 1000000); break;      /* spread */
                case 1: v[i] = (double)(r % 4); break;            /* ties, zeros */
                case 2: v[i] = (double)(int64_t)(r % 200) - 100; break; /* negatives */
                default: v[i] = (double)(i % 7 == 0 ? 1e9 : 5); /* a long tail */
                }
            }
            check(v, n);
        }
    for (i = 0; i < 3000; i++) /* sorted and reverse-sorted input */
        v[i] = (double)i;
    check(v, 3000);
    for (i = 0; i < 3000; i++)
        v[i] = (double)(3000 - i);
    check(v, 3000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_selected_quantiles_equal_sorted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
