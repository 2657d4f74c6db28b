/*
 * fuzz_dbt.c - libFuzzer target for the dbt plugin (plugins/dbt): up to
 * four artifacts (manifest, run results, sources) joined by FUZZ_SEP, so
 * that finish() joins them across files as the analysis does.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[FUZZ_MAX_FILES] = {
        "manifest.json", "run_results.json", "sources.json",
        "run_results-2.json"};
    plugin_reg *reg = NULL;
    model *m = fuzz_model("dbt", names, data, size, &reg);

    model_free(m);
    plugins_free(reg);
    return 0;
}
