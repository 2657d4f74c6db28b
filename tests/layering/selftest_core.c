/* A fixture of tests/layering/check.py selftest, never compiled: what a
 * core file must not do. A comment may say Spark, flink or dbt. */
#include "cli.h" /* line 3: a CLI header */
#include "spark_host.h" /* line 4: an engine's header */
// spark in a line comment is fine too
static const char ok[] = "spark_listener flink_rest_export dbtx"; /* not words */
static const char bad1[] = "fetch flink";               /* line 7 */
static const char bad2[] = "a \"Spark\" app";           /* line 8 */
static const char bad3[] = "dbt.regression";            /* line 9 */
static const char c = '"'; static const char bad4[] = "x" "DBT"; /* line 10 */
static const char bad5[] = "\"SparkContext Id\"";       /* line 11 */
static const char bad6[] = "on Databricks";            /* line 12 */
