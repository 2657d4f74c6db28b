/*
 * fuzz_samza.c - libFuzzer target for the Samza plugin (plugins/samza):
 * up to four dumps of MetricsSnapshotReporter messages: detect, parse,
 * finish and freeze, as the analysis does.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[FUZZ_MAX_FILES] = {
        "samza.jsonl", "samza-2.jsonl", "samza-3.json", "samza-4.json"};
    plugin_reg *reg = NULL;
    model *m = fuzz_model("samza", names, data, size, &reg);

    model_free(m);
    plugins_free(reg);
    return 0;
}
