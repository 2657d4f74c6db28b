/*
 * fuzz_spark.c - libFuzzer target for the Spark event-log plugin (plugins/spark): JSON lines, any codec:
 * detect, parse, finish and freeze, as the analysis does.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[FUZZ_MAX_FILES] = {
        "eventlog", "eventlog-2", "eventlog-3", "eventlog-4"};
    plugin_reg *reg = NULL;
    model *m = fuzz_model("spark", names, data, size, &reg);

    model_free(m);
    plugins_free(reg);
    return 0;
}
