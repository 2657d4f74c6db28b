/*
 * cost_dbt.c - what a dbt run's time costs under the team's rates
 * (optipipe.lua `costs`, docs/costs.md): BigQuery from the run's billed
 * bytes or slot time spread over its model time, Snowflake from the
 * warehouse size's credits per hour, Databricks from DBUs per hour. The
 * adapter is the manifest's adapter_type (config optipipe.adapter); without
 * it, the only warehouse section the team filled in.
 */
#include <stdio.h>
#include <string.h>

#include "costs.h"
#include "dbt_host.h"
#include "engine.h"

#define TIB 1099511627776.0
#define MS_PER_H 3600000.0

const char *const dbt_cost_keys[] = {
    "bigquery.per_tib", "bigquery.per_slot_hour",
    "snowflake.per_credit", "snowflake.credits_per_hour", "snowflake.warehouse_size",
    "databricks.per_dbu", "databricks.dbu_per_hour",
    NULL};

static double run_num(const struct op_run *r, const char *key)
{
    const mentry *e = mmap_get(&r->metrics, key);

    if (!e)
        return -1;
    return mentry_type(e) == MV_INT ? (double)e->u.i : e->u.n;
}

static const char *run_str(const struct op_run *r, const char *key)
{
    const mentry *e = mmap_get(&r->config, key);
    return e ? e->u.s : NULL;
}

/* Snowflake's documented credits per hour of a standard warehouse, by
 * size (a consumption table, not a price). */
static double size_credits(const char *size)
{
    static const struct {
        const char *name;
        double credits;
    } sizes[] = {{"XS", 1}, {"X-SMALL", 1}, {"S", 2}, {"SMALL", 2}, {"M", 4},
                 {"MEDIUM", 4}, {"L", 8}, {"LARGE", 8}, {"XL", 16},
                 {"X-LARGE", 16}, {"2XL", 32}, {"2X-LARGE", 32}, {"3XL", 64},
                 {"3X-LARGE", 64}, {"4XL", 128}, {"4X-LARGE", 128},
                 {"5XL", 256}, {"5X-LARGE", 256}, {"6XL", 512}, {"6X-LARGE", 512}};
    size_t i;

    for (i = 0; size && i < sizeof sizes / sizeof *sizes; i++)
        if (!strcasecmp(size, sizes[i].name))
            return sizes[i].credits;
    return -1;
}

static int bigquery(const struct op_run *r, const cJSON *c, op_cost_rate *out)
{
    double tib = costs_num(c, "bigquery", "per_tib");
    double slot_h = costs_num(c, "bigquery", "per_slot_hour");
    double billed = run_num(r, "bytes_billed"), slots = run_num(r, "slot_ms");
    double busy = run_num(r, "busy_ms"), money;
    char what[160];

    if (busy <= 0)
        return 0;
    /* reservations (editions) pay slot time; on-demand pays bytes */
    if (slot_h >= 0 && slots >= 0) {
        money = slots / MS_PER_H * slot_h;
        snprintf(what, sizeof what, "%.1f slot-hours x %.4g/slot-hour",
                 slots / MS_PER_H, slot_h);
    } else if (tib >= 0 && billed >= 0) {
        money = billed / TIB * tib;
        snprintf(what, sizeof what, "%.3f TiB billed x %.4g/TiB", billed / TIB, tib);
    } else {
        return 0;
    }
    out->per_hour = money / (busy / MS_PER_H);
    out->run_hours = busy / MS_PER_H; /* the bill, spread over model time */
    out->by_node_time = 1;
    snprintf(out->basis, sizeof out->basis,
             "BigQuery: %s = %.2f over %.2f h of model time", what, money,
             busy / MS_PER_H);
    return 1;
}

/* The warehouse is up while the build runs: its span, shared by the
 * nodes by their time. */
static void warehouse_hours(const struct op_run *r, op_cost_rate *out)
{
    if ((r->set & MSET_DURATION_MS) && r->duration_ms > 0)
        out->run_hours = (double)r->duration_ms / MS_PER_H;
    out->by_node_time = 1;
}

static int snowflake(const struct op_run *r, const cJSON *c, op_cost_rate *out)
{
    double credit = costs_num(c, "snowflake", "per_credit");
    double ch = costs_num(c, "snowflake", "credits_per_hour");
    const char *size = costs_str(c, "snowflake", "warehouse_size");

    if (ch < 0)
        ch = size_credits(size);
    if (credit < 0 || ch < 0)
        return 0;
    out->per_hour = ch * credit;
    warehouse_hours(r, out);
    snprintf(out->basis, sizeof out->basis,
             "Snowflake: %s%s%.4g credits/h x %.4g/credit", size ? size : "",
             size ? " warehouse, " : "", ch, credit);
    return 1;
}

static int databricks(const struct op_run *r, const cJSON *c, op_cost_rate *out)
{
    double dbu = costs_num(c, "databricks", "per_dbu");
    double dh = costs_num(c, "databricks", "dbu_per_hour");

    if (dbu < 0 || dh < 0)
        return 0;
    out->per_hour = dh * dbu;
    warehouse_hours(r, out);
    snprintf(out->basis, sizeof out->basis,
             "Databricks SQL: %.4g DBU/h x %.4g/DBU", dh, dbu);
    return 1;
}

int dbt_cost_rate(const struct op_run *r, const cJSON *c, op_cost_rate *out)
{
    const char *a = run_str(r, "optipipe.adapter");
    int bq = cJSON_GetObjectItemCaseSensitive(c, "bigquery") != NULL;
    int sf = cJSON_GetObjectItemCaseSensitive(c, "snowflake") != NULL;
    int db = cJSON_GetObjectItemCaseSensitive(c, "databricks") != NULL;

    memset(out, 0, sizeof *out);
    if (a) {
        if (!strcmp(a, "bigquery"))
            return bigquery(r, c, out);
        if (!strcmp(a, "snowflake"))
            return snowflake(r, c, out);
        if (!strcmp(a, "databricks"))
            return databricks(r, c, out);
        return 0;
    }
    if (bq + sf + db != 1) /* which warehouse ran it is unknown */
        return 0;
    return bq ? bigquery(r, c, out) : sf ? snowflake(r, c, out) : databricks(r, c, out);
}
