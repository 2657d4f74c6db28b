/*
 * spark_dist.c - per-stage task distributions in bounded memory.
 *
 * Up to SP_DIST_EXACT_MAX values a distribution keeps every value and its
 * quantiles are exact (linear interpolation between the closest ranks, the
 * host's and numpy's default method). Past that it folds into a log-bucket
 * histogram (the DDSketch mapping): bucket i holds values in
 * (gamma^(i-1), gamma^i] with gamma = (1 + a) / (1 - a), and reports the
 * bucket's value 2 gamma^i / (gamma + 1), which is within a relative error
 * a of every value in the bucket. So a sketched quantile is within 0.5 %
 * (a = SP_SKETCH_ALPHA) of the true value at that rank; count, min, max,
 * sum and mean stay exact. Memory: SP_SKETCH_BINS x 4 bytes per stage and
 * metric, whatever the task count. See docs/model-spark.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "spark_internal.h"

/* log(2^63) / log(gamma) for a = 0.005 is 4367: values up to INT64_MAX. */
#define SP_SKETCH_BINS 4400

static double log_gamma(void)
{
    static double lg;

    if (lg == 0)
        lg = log((1 + SP_SKETCH_ALPHA) / (1 - SP_SKETCH_ALPHA));
    return lg;
}

static void sketch_add(sp_dist *d, double v, uint64_t times)
{
    long i;

    if (!(v > 0)) {
        d->zeros += times;
        return;
    }
    i = v <= 1 ? 0 : (long)ceil(log(v) / log_gamma());
    if (i < 0)
        i = 0;
    if (i >= SP_SKETCH_BINS)
        i = SP_SKETCH_BINS - 1;
    d->bins[i] = d->bins[i] + (uint32_t)times < d->bins[i]
                     ? UINT32_MAX
                     : d->bins[i] + (uint32_t)times;
}

/* Folds the exact values into a new sketch. Returns -1 on no memory (the
 * distribution then stays exact and stops growing: see sp_dist_add). */
static int to_sketch(sp_dist *d)
{
    size_t i;

    d->bins = calloc(SP_SKETCH_BINS, sizeof *d->bins);
    if (!d->bins)
        return -1;
    if (!d->vals) {
        d->zeros = d->n;
    } else {
        for (i = 0; i < d->n; i++)
            sketch_add(d, d->vals[i], 1);
    }
    free(d->vals);
    d->vals = NULL;
    d->cap = 0;
    return 0;
}

static int grow(sp_dist *d)
{
    size_t ncap = d->cap ? d->cap * 2 : 64;
    double *nv;

    while (ncap < d->n + 1)
        ncap *= 2;
    if (ncap > SP_DIST_EXACT_MAX)
        ncap = SP_DIST_EXACT_MAX;
    nv = realloc(d->vals, ncap * sizeof *nv);
    if (!nv)
        return -1;
    if (!d->vals) /* every earlier value was zero */
        memset(nv, 0, (size_t)d->n * sizeof *nv);
    d->vals = nv;
    d->cap = ncap;
    return 0;
}

void sp_dist_add(sp_dist *d, double v)
{
    if (d->n == 0 || v < d->min)
        d->min = v;
    if (d->n == 0 || v > d->max)
        d->max = v;
    d->sum += v;
    if (!d->bins && d->n >= SP_DIST_EXACT_MAX && to_sketch(d) != 0) {
        d->n++; /* no memory for the sketch: keep the exact prefix */
        return;
    }
    if (d->bins) {
        sketch_add(d, v, 1);
    } else if (v != 0 || d->vals) {
        if (d->n >= d->cap && grow(d) != 0) {
            if (to_sketch(d) == 0)
                sketch_add(d, v, 1);
            d->n++;
            return;
        }
        d->vals[d->n] = v;
    }
    d->n++;
}

/* Puts the k-th smallest of v[0..n) at v[k], the smaller ones before it
 * and the larger after (Hoare's selection, median of three): the
 * quantiles need five ranks, not a sorted array, and this is linear where
 * a sort was the largest single cost of reading a log (perf: qsort and its
 * comparison callback took 8 % of a 632 MB log). */
static void select_k(double *v, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;

    while (hi > lo) {
        size_t i = lo, j = hi, mid = lo + (hi - lo) / 2;
        double piv, t;

        /* median of three at mid */
        if (v[mid] < v[lo]) { t = v[mid]; v[mid] = v[lo]; v[lo] = t; }
        if (v[hi] < v[lo]) { t = v[hi]; v[hi] = v[lo]; v[lo] = t; }
        if (v[hi] < v[mid]) { t = v[hi]; v[hi] = v[mid]; v[mid] = t; }
        piv = v[mid];
        while (i <= j) {
            while (v[i] < piv)
                i++;
            while (piv < v[j])
                j--;
            if (i <= j) {
                t = v[i]; v[i] = v[j]; v[j] = t;
                i++;
                if (j == 0)
                    break;
                j--;
            }
        }
        /* now v[lo..j] <= piv <= v[i..hi], j < i */
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return; /* v[j+1..i-1] all equal piv */
    }
}

/* The smallest of v[0..n). */
static double min_of(const double *v, size_t n)
{
    double m = v[0];
    size_t i;

    for (i = 1; i < n; i++)
        if (v[i] < m)
            m = v[i];
    return m;
}

/* Quantiles ps[0..np) (ascending) of v[0..n) with linear interpolation
 * between the closest ranks, exactly as a sorted array gives them; v is
 * reordered. Highest first: after rank lo is selected, v[0..lo) holds the
 * lower ranks, so the next selection searches only that prefix, and the
 * rank lo+1 value is the smallest of v[lo+1..top] (top: the rank selected
 * before, or the end). */
static void exact_qs(double *v, size_t n, const double *ps, size_t np,
                     double *q)
{
    size_t top = n, prev = SIZE_MAX, i;
    double a = 0, b = 0;

    for (i = np; i-- > 0;) {
        double h = (double)(n - 1) * ps[i];
        size_t lo = (size_t)floor(h);

        if (lo >= n)
            lo = n - 1;
        if (lo != prev) {
            select_k(v, top, lo);
            a = v[lo];
            b = lo + 1 >= n ? a
                            : min_of(v + lo + 1, (top < n ? top + 1 : n) - (lo + 1));
            top = lo;
            prev = lo;
        }
        q[i] = a + (h - (double)lo) * (b - a);
    }
}

static double sketch_q(const sp_dist *d, double p)
{
    double rank = floor((double)(d->n - 1) * p + 0.5);
    double cum = (double)d->zeros, val;
    long i;

    if (rank < cum)
        return d->min > 0 ? d->min : 0;
    for (i = 0; i < SP_SKETCH_BINS; i++) {
        cum += d->bins[i];
        if (rank < cum)
            break;
    }
    if (i == SP_SKETCH_BINS)
        return d->max;
    val = i == 0 ? 1 : 2 * exp((double)i * log_gamma()) /
                           (exp(log_gamma()) + 1);
    if (val < d->min)
        val = d->min;
    if (val > d->max)
        val = d->max;
    return val;
}

int sp_dist_finish(sp_dist *d, op_dist *out)
{
    static const double ps[] = {0.5, 0.75, 0.9, 0.95, 0.99};
    double q[5];
    size_t i;

    memset(out, 0, sizeof *out);
    if (d->n == 0) {
        sp_dist_free(d);
        return -1;
    }
    if (d->bins) {
        for (i = 0; i < 5; i++)
            q[i] = sketch_q(d, ps[i]);
    } else if (!d->vals) {
        for (i = 0; i < 5; i++)
            q[i] = 0;
    } else {
        size_t n = d->n < d->cap ? (size_t)d->n : d->cap;
        exact_qs(d->vals, n, ps, 5, q);
    }
    out->count = (double)d->n;
    out->min = d->min;
    out->max = d->max;
    out->sum = d->sum;
    out->mean = d->sum / (double)d->n;
    out->p50 = q[0];
    out->p75 = q[1];
    out->p90 = q[2];
    out->p95 = q[3];
    out->p99 = q[4];
    sp_dist_free(d);
    return 0;
}

void sp_dist_free(sp_dist *d)
{
    free(d->vals);
    free(d->bins);
    d->vals = NULL;
    d->bins = NULL;
    d->cap = 0;
}
