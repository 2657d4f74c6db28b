/*
 * fuzz_flink.c - libFuzzer target for the Flink export plugin (plugins/flink): one JSON document (export, REST dump or archive):
 * detect, parse, finish and freeze, as the analysis does.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[FUZZ_MAX_FILES] = {
        "flink.json", "flink-2.json", "flink-3.json", "flink-4.json"};
    plugin_reg *reg = NULL;
    model *m = fuzz_model("flink", names, data, size, &reg);

    model_free(m);
    plugins_free(reg);
    return 0;
}
