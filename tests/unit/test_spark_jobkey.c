/*
 * test_spark_jobkey.c - plugins/spark/spark_jobkey.c: which app names say
 * nothing (the one list), and the key such an app gets from its main
 * class or file (sun.java.command as spark-submit, the YARN application
 * master, a shell and a plain java launch write it), user and cluster.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <string.h>

#include "../../plugins/spark/spark_internal.h"

static void test_generic_names(void **state)
{
    static const char *const generic[] = {
        "Spark shell", "spark shell", "PySparkShell", "pyspark-shell",
        "Databricks Shell", "SparkSQL::worker-3.example.com", "livy-session-12",
        "sparkr-shell", "Thrift JDBC/ODBC Server",
        "0f8fad5b-d9cb-469f-a165-70867728950e"};
    static const char *const specific[] = {
        "nightly-orders", "Spark Pi", "org.apache.spark.examples.SparkPi",
        "etl.py", "Spark shell 2", "0f8fad5b-d9cb-469f-a165-70867728950", ""};
    size_t i;

    (void)state;
    for (i = 0; i < sizeof generic / sizeof *generic; i++)
        assert_true(sp_generic_name(generic[i]));
    for (i = 0; i < sizeof specific / sizeof *specific; i++)
        assert_false(sp_generic_name(specific[i]));
    assert_false(sp_generic_name(NULL)); /* the run id stands in */
}

/* The key of an app of that name, user, command and cluster (each may
 * be NULL), into buf. */
static const char *key_of(char *buf, size_t cap, const char *name,
                          const char *user, const char *cmd,
                          const char *cluster)
{
    sp_app a;
    const char *k;

    memset(&a, 0, sizeof a);
    a.app_name = (char *)name;
    a.user = (char *)user;
    a.java_command = (char *)cmd;
    if (cluster) {
        a.props = cJSON_CreateObject();
        cJSON_AddStringToObject(a.props,
                                "spark.databricks.clusterUsageTags.clusterId",
                                cluster);
    }
    k = sp_generic_key(&a, buf, cap);
    cJSON_Delete(a.props);
    return k;
}

static void test_keys(void **state)
{
    char b[512];

    (void)state;
    /* spark-submit: --name with spaces is skipped whole, --class wins */
    assert_string_equal(key_of(b, sizeof b, "Spark shell", "etl",
        "org.apache.spark.deploy.SparkSubmit --master yarn --conf spark.x=1 "
        "--class com.acme.Orders --name Spark shell --verbose app.jar 2024-05-01",
        NULL), "Spark shell [main=com.acme.Orders, user=etl]");
    /* the shell: repl.Main is a launcher, spark-shell no file; -i is */
    assert_string_equal(key_of(b, sizeof b, "Spark shell", "jose",
        "org.apache.spark.deploy.SparkSubmit --master local-cluster[4,4,1024] "
        "--conf spark.eventLog.enabled=TRUE --class org.apache.spark.repl.Main "
        "--name Spark shell spark-shell -i /Users/jose/blacklist/test.scala", NULL),
        "Spark shell [main=test.scala, user=jose]");
    assert_string_equal(key_of(b, sizeof b, "Spark shell", "irashid",
        "org.apache.spark.deploy.SparkSubmit --class org.apache.spark.repl.Main "
        "--conf spark.eventLog.enabled=true spark-shell", NULL),
        "Spark shell [user=irashid]");
    /* YARN cluster mode: the application master names the script */
    assert_string_equal(key_of(b, sizeof b, "pyspark-shell", NULL,
        "org.apache.spark.deploy.yarn.ApplicationMaster --class "
        "org.apache.spark.deploy.PythonRunner --primary-py-file "
        "/tmp/stage-1/jobs/etl.py --properties-file /x/__spark_conf__.properties",
        NULL), "pyspark-shell [main=etl.py]");
    /* spark-submit of a script, spark.app.name given in --conf */
    assert_string_equal(key_of(b, sizeof b, "PySparkShell", "ana",
        "org.apache.spark.deploy.SparkSubmit --conf spark.app.name=PySparkShell "
        "--py-files deps.zip hdfs:///jobs/returns.py --day 1", NULL),
        "PySparkShell [main=returns.py, user=ana]");
    /* a plain java launch named by SparkSession.builder: a UUID */
    assert_string_equal(key_of(b, sizeof b, "0f8fad5b-d9cb-469f-a165-70867728950e",
        "svc", "com.acme.LocalEtl --input /data", NULL),
        "unnamed app [main=com.acme.LocalEtl, user=svc]");
    /* a notebook: the cluster; DriverDaemon is a launcher */
    assert_string_equal(key_of(b, sizeof b, "Databricks Shell", "root",
        "com.databricks.backend.daemon.driver.DriverDaemon", "0412-103045-abcd123"),
        "Databricks Shell [user=root, cluster=0412-103045-abcd123]");
    /* nothing known: the name alone */
    assert_string_equal(key_of(b, sizeof b, "pyspark-shell", NULL, NULL, NULL),
                        "pyspark-shell");
    /* a command of only options, an empty one */
    assert_string_equal(key_of(b, sizeof b, "Spark shell", NULL,
        "org.apache.spark.deploy.SparkSubmit --class", NULL), "Spark shell");
    assert_string_equal(key_of(b, sizeof b, "Spark shell", NULL, "", NULL),
                        "Spark shell");
    /* a small buffer: cut, terminated */
    assert_string_equal(key_of(b, 16, "Spark shell", "someone-long", NULL, NULL),
                        "Spark shell [us");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generic_names),
        cmocka_unit_test(test_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
