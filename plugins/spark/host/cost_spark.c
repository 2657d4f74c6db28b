/*
 * cost_spark.c - what a Spark application's time costs under the team's
 * rates (optipipe.lua `costs.spark`, docs/costs.md): its executors'
 * core-hours (executor_core_ms) × per_core_hour plus their memory's
 * GiB-hours × per_gib_hour, spread over the application's wall time, so a
 * finding's time saved is priced at what the whole application costs an
 * hour.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "engine.h"
#include "spark_host.h"

#define MS_PER_H 3600000.0

const char *const spark_cost_keys[] = {"spark.per_core_hour", "spark.per_gib_hour",
                                       NULL};

static const char *conf(const struct op_run *r, const char *key)
{
    const mentry *e = mmap_get(&r->config, key);
    return e ? e->u.s : NULL;
}

/* A JVM memory size ("4g", "4096m", "512k", plain bytes) in GiB; -1 when
 * unreadable. */
static double gib_of(const char *s)
{
    char *end;
    double v;

    if (!s)
        return -1;
    v = strtod(s, &end);
    if (end == s || v < 0)
        return -1;
    switch (tolower((unsigned char)*end)) {
    case 't': return v * 1024;
    case 'g': return v;
    case 'm': return v / 1024;
    case 'k': return v / (1024 * 1024);
    case '\0': return v / (1024.0 * 1024 * 1024);
    default: return -1;
    }
}

int spark_cost_rate(const struct op_run *r, const cJSON *c, op_cost_rate *out)
{
    const mentry *e = mmap_get(&r->metrics, "executor_core_ms");
    double core_h = costs_num(c, "spark", "per_core_hour");
    double gib_h = costs_num(c, "spark", "per_gib_hour");
    double core_ms, cores, mem, over, money = 0, gib_hours = 0;

    memset(out, 0, sizeof *out);
    if (!e || !(r->set & MSET_DURATION_MS) || r->duration_ms <= 0 ||
        (core_h < 0 && gib_h < 0))
        return 0;
    core_ms = mentry_type(e) == MV_INT ? (double)e->u.i : e->u.n;
    if (core_h >= 0)
        money += core_ms / MS_PER_H * core_h;
    if (gib_h >= 0) {
        /* executor-hours = core-hours / cores per executor; memory =
         * spark.executor.memory + overhead (Spark's default: 10 %, at
         * least 384 MiB) */
        cores = conf(r, "spark.executor.cores") ? atof(conf(r, "spark.executor.cores")) : 1;
        mem = gib_of(conf(r, "spark.executor.memory"));
        over = gib_of(conf(r, "spark.executor.memoryOverhead"));
        if (mem < 0)
            mem = 1; /* Spark's default executor memory */
        if (over < 0)
            over = mem * 0.1 > 0.375 ? mem * 0.1 : 0.375;
        if (cores < 1)
            cores = 1;
        gib_hours = core_ms / MS_PER_H / cores * (mem + over);
        money += gib_hours * gib_h;
    }
    out->per_hour = money / ((double)r->duration_ms / MS_PER_H);
    out->run_hours = (double)r->duration_ms / MS_PER_H; /* the app's cost */
    snprintf(out->basis, sizeof out->basis,
             "Spark: %.2f core-hours x %.4g + %.2f GiB-hours x %.4g = %.2f over "
             "%.2f h of wall time", core_ms / MS_PER_H, core_h < 0 ? 0 : core_h,
             gib_hours, gib_h < 0 ? 0 : gib_h, money,
             (double)r->duration_ms / MS_PER_H);
    return 1;
}
