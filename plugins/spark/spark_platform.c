/*
 * spark_platform.c - where an application ran and on what, as run attrs
 * (docs/model-spark.md "Run attrs"): the platform (Databricks, EMR,
 * Dataproc, or the cluster manager itself), the cluster manager, a GPU
 * accelerator (the RAPIDS plugin) and Photon.
 *
 * Everything is read from what the log itself says: Spark Properties,
 * the Spark version and the app id. Nothing is guessed: a run whose log
 * carries no sign of a platform gets no `platform` attr.
 */
#include <ctype.h>
#include <string.h>

#include "spark_internal.h"

static int starts_with(const char *s, const char *pre)
{
    return s && strncmp(s, pre, strlen(pre)) == 0;
}

static int has_ci(const char *s, const char *needle)
{
    size_t n = strlen(needle);

    for (; s && *s; s++) {
        size_t i = 0;
        while (i < n && s[i] &&
               tolower((unsigned char)s[i]) == (unsigned char)needle[i])
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

/* Whether a Spark property key starts with pre or a value has sub (either
 * may be NULL). */
static int any_prop(const cJSON *props, const char *pre, const char *sub)
{
    const cJSON *it;

    cJSON_ArrayForEach(it, props)
    {
        if (pre && starts_with(it->string, pre))
            return 1;
        if (sub && cJSON_IsString(it) && strstr(it->valuestring, sub))
            return 1;
    }
    return 0;
}

/* The cluster manager spark.master names, or NULL. */
static const char *from_master(const char *m)
{
    if (starts_with(m, "yarn"))
        return "yarn";
    if (starts_with(m, "k8s://"))
        return "kubernetes";
    if (starts_with(m, "spark://") || starts_with(m, "local-cluster"))
        return "standalone";
    if (starts_with(m, "local"))
        return "local";
    if (starts_with(m, "mesos://"))
        return "mesos";
    return NULL;
}

/* The cluster manager from spark.master, else (no master, or a redacted
 * one) from the shape of the app id: application_<ts>_<n> is YARN's,
 * local-<ts> local mode's, app-<ts>-<n> a standalone master's,
 * spark-<hex> Kubernetes'. NULL when neither says. */
static const char *cluster_manager(const sp_app *a)
{
    const char *cm = from_master(sp_jstr(a->props, "spark.master"));
    const char *id = a->app_id;

    if (cm)
        return cm;
    if (starts_with(id, "application_"))
        return "yarn";
    if (starts_with(id, "local-"))
        return "local";
    if (starts_with(id, "app-"))
        return "standalone";
    if (starts_with(id, "spark-"))
        return "kubernetes";
    return NULL;
}

/* A vendor platform, or NULL. */
static const char *vendor(const sp_app *a)
{
    const cJSON *p = a->props;

    if (a->dbc_seen || any_prop(p, "spark.databricks.", NULL))
        return "databricks";
    if ((a->version && strstr(a->version, "-amzn-")) ||
        any_prop(p, "spark.emr.", "/usr/share/aws/emr/") ||
        any_prop(p, "spark.sql.emr.", NULL))
        return "emr";
    if (any_prop(p, "spark.dataproc.", NULL) ||
        has_ci(sp_jstr(p, "spark.eventLog.dir"), "gs://dataproc-"))
        return "dataproc";
    return NULL;
}

/* spark.plugins is a comma-separated list of class names. */
static int rapids(const sp_app *a)
{
    const char *v = sp_jstr(a->props, "spark.plugins");
    static const char cls[] = "com.nvidia.spark.SQLPlugin";

    for (; v && (v = strstr(v, cls)) != NULL; v += sizeof cls - 1) {
        char after = v[sizeof cls - 1];
        if (after == '\0' || after == ',' || after == ' ')
            return 1;
    }
    return 0;
}

/* Databricks says so in its cluster tags (runtimeEngine PHOTON, and a
 * runtime name such as 13.3.x-aarch64-photon-scala2.12). */
static int photon(const sp_app *a)
{
    const char *eng =
        sp_jstr(a->props, "spark.databricks.clusterUsageTags.runtimeEngine");
    const char *rt =
        sp_jstr(a->props, "spark.databricks.clusterUsageTags.sparkVersion");

    return (eng && has_ci(eng, "photon")) || (rt && has_ci(rt, "photon"));
}

void sp_platform_emit(sp_app *a, op_run *r)
{
    const char *cm = cluster_manager(a), *pf = vendor(a);

    if (!pf && cm && strcmp(cm, "mesos") != 0)
        pf = cm;
    if (pf)
        op_run_attr(a->b, r, "platform", pf);
    if (cm)
        op_run_attr(a->b, r, "cluster_manager", cm);
    if (rapids(a))
        op_run_attr(a->b, r, "accelerator", "gpu");
    if (photon(a))
        op_run_attr(a->b, r, "photon", "true");
    /* a log without its beginning: the rules derive no size from defaults */
    if (!a->has_start || !a->has_env)
        op_run_attr(a->b, r, "incomplete",
                    !a->has_env && !a->has_start ? "no application start, no environment"
                    : !a->has_env ? "no environment" : "no application start");
}
