/*
 * spark_jobkey.c - the job key of an app whose name says nothing
 * (docs/history.md#job-identity): "Spark shell", "PySparkShell", a
 * notebook's "Databricks Shell", the name spark-submit gives an app that
 * set none ("pyspark-shell"), a random UUID... Fifteen unrelated shells
 * must not pool into one job, so such a name is joined by what the log
 * says about the app: its main class or file (the driver's
 * sun.java.command), its user and its cluster. One list of such names,
 * here.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "spark_internal.h"

/* Names that say nothing about the work (compared ignoring case). */
static const char *const generic_names[] = {
    "Spark shell",              /* spark-shell */
    "PySparkShell",             /* pyspark */
    "pyspark-shell",            /* python script.py, Jupyter: spark-submit's default */
    "sparkr-shell", "SparkR", "sparklyr",
    "spark-shell", "spark-submit", "spark-internal",
    "Databricks Shell",         /* every notebook and job on Databricks */
    "Thrift JDBC/ODBC Server", "Spark Connect server", "Zeppelin",
    "org.apache.spark.repl.Main", "org.apache.spark.deploy.PythonRunner",
};

/* Prefixes that do: the spark-sql CLI names its app after the host,
 * Livy after the session number. */
static const char *const generic_prefixes[] = {"SparkSQL::", "livy-session-"};

/* Classes that start somebody else's code: never "the main class". */
static const char *const launchers[] = {
    "org.apache.spark.deploy.SparkSubmit",
    "org.apache.spark.deploy.yarn.ApplicationMaster",
    "org.apache.spark.deploy.yarn.ExecutorLauncher",
    "org.apache.spark.repl.Main",
    "org.apache.spark.deploy.PythonRunner",
    "org.apache.spark.api.python.PythonGatewayServer",
    "org.apache.spark.api.r.RBackend",
    "org.apache.spark.sql.hive.thriftserver.SparkSQLCLIDriver",
    "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
    "org.apache.spark.sql.connect.service.SparkConnectServer",
    "com.databricks.backend.daemon.driver.DriverDaemon",
};

/* Primary resources of the shells: not a file of the user's. */
static const char *const shell_resources[] = {
    "spark-shell", "pyspark-shell", "sparkr-shell", "spark-internal",
};

/* spark-submit's options that take no value. */
static const char *const flags[] = {"--verbose", "-v", "--supervise", "--help",
                                    "-h", "--version", "--usage-error"};

#define IN(list, s) in_list(list, sizeof list / sizeof *list, s)

static int in_list(const char *const *list, size_t n, const char *s)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (!strcmp(list[i], s))
            return 1;
    return 0;
}

/* 8-4-4-4-12 hex digits: SparkSession.builder's name when none is set. */
static int is_uuid(const char *s)
{
    static const int dash[] = {8, 13, 18, 23};
    size_t i, k = 0;

    if (strlen(s) != 36)
        return 0;
    for (i = 0; i < 36; i++) {
        if (k < 4 && (int)i == dash[k]) {
            if (s[i] != '-')
                return 0;
            k++;
        } else if (!isxdigit((unsigned char)s[i])) {
            return 0;
        }
    }
    return 1;
}

int sp_generic_name(const char *name)
{
    size_t i;

    if (!name || !*name) /* no name: the run id stands in (model_run_job) */
        return 0;
    for (i = 0; i < sizeof generic_names / sizeof *generic_names; i++)
        if (!strcasecmp(name, generic_names[i]))
            return 1;
    for (i = 0; i < sizeof generic_prefixes / sizeof *generic_prefixes; i++)
        if (!strncasecmp(name, generic_prefixes[i], strlen(generic_prefixes[i])))
            return 1;
    return is_uuid(name);
}

/* ---- the main class or file, from sun.java.command --------------------- */

#define MAX_TOKENS 512

/* Splits cmd (a copy in buf) at spaces into at most MAX_TOKENS tokens. */
static size_t tokens_of(char *buf, size_t cap, const char *cmd, char **t)
{
    size_t n = 0;
    char *p, *save = NULL;

    snprintf(buf, cap, "%s", cmd);
    for (p = strtok_r(buf, " ", &save); p && n < MAX_TOKENS;
         p = strtok_r(NULL, " ", &save))
        t[n++] = p;
    return n;
}

static size_t words(const char *s)
{
    size_t n = 1;

    for (; s && *s; s++)
        n += *s == ' ';
    return n;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

/* What the user ran: --class (unless a launcher), else the jar or script
 * (base name: staging folders differ between runs), else a shell's -i
 * script; NULL when the command says none. The command line is joined
 * with spaces unquoted, so the app name of --name (or spark.app.name=)
 * is skipped as many words as it has. */
static const char *user_main(const sp_app *a, char *buf, size_t cap)
{
    char *t[MAX_TOKENS];
    const char *cls = NULL, *res = NULL, *script = NULL;
    size_t n = tokens_of(buf, cap, a->java_command, t), i = 1, name_words;

    if (!n)
        return NULL;
    if (!IN(launchers, t[0]))
        return strstr(t[0], ".jar") ? base_name(t[0]) : t[0];
    name_words = words(a->app_name);
    while (i < n) {
        const char *o = t[i];
        if (o[0] != '-') { /* the primary resource; then the app's args */
            res = res ? res : o;
            for (i++; i + 1 < n && !script; i++)
                if (!strcmp(t[i], "-i") || !strcmp(t[i], "-I"))
                    script = t[i + 1];
            break;
        }
        if (!strcmp(o, "--class") && i + 1 < n)
            cls = t[i + 1];
        else if ((!strcmp(o, "--jar") || !strcmp(o, "--primary-py-file") ||
                  !strcmp(o, "--primary-r-file")) && i + 1 < n)
            res = t[i + 1];
        if (IN(flags, o) || strchr(o, '='))
            i++;
        else if (!strcmp(o, "--name") ||
                 ((!strcmp(o, "--conf") || !strcmp(o, "-c")) && i + 1 < n &&
                  !strncmp(t[i + 1], "spark.app.name=", 15)))
            i += 1 + name_words;
        else
            i += 2;
    }
    if (cls && !IN(launchers, cls))
        return cls;
    if (res && !IN(shell_resources, res))
        return base_name(res);
    return script ? base_name(script) : NULL;
}

/* ---- the key ------------------------------------------------------------ */

/* What stands for a random (UUID) name in a key. */
#define SP_UNNAMED_APP "unnamed app"

static const char *prop(const sp_app *a, const char *key)
{
    const cJSON *v = a->props ? cJSON_GetObjectItemCaseSensitive(a->props, key)
                              : NULL;
    return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

const char *sp_generic_key(const sp_app *a, char *buf, size_t cap)
{
    char cmd[SP_COMMAND_MAX + 1];
    const char *part[3], *names[3] = {"main", "user", "cluster"};
    size_t len, i, k = 0;

    part[0] = a->java_command ? user_main(a, cmd, sizeof cmd) : NULL;
    part[1] = a->user && *a->user ? a->user : NULL;
    part[2] = prop(a, "spark.databricks.clusterUsageTags.clusterId");
    /* a UUID is new on every run: the key must not carry it */
    len = (size_t)snprintf(buf, cap, "%s", !a->app_name ? ""
                           : is_uuid(a->app_name) ? SP_UNNAMED_APP : a->app_name);
    for (i = 0; i < 3 && len < cap; i++)
        if (part[i])
            len += (size_t)snprintf(buf + len, cap - len, "%s%s=%s",
                                    k++ ? ", " : " [", names[i], part[i]);
    if (k && len < cap)
        snprintf(buf + len, cap - len, "]");
    return buf;
}
