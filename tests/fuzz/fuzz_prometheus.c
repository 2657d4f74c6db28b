/*
 * fuzz_prometheus.c - libFuzzer target for the Prometheus plugin
 * (plugins/prometheus): up to four scrapes (text exposition, OpenMetrics or
 * query_range JSON) of one analysis, mapped by the bundled mapping packs:
 * detect, parse, finish and freeze, as the analysis does.
 */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz_common.h"
#include "map_packs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[FUZZ_MAX_FILES] = {
        "t/scrape-1764583200.prom", "t/scrape-1764583260.prom",
        "t/scrape-1764583320.prom", "range.json"};
    static mapping_set *packs;
    plugin_reg *reg = NULL;
    model *m;

    if (!packs) { /* once: the packs are data, the inputs are the target */
        rule_limits lim;
        op_error err;
        rule_limits_default(&lim);
        lim.isolate = 0;
        if (mapping_set_load(NULL, 0, OP_SOURCE_DIR "/rules/mappings", &lim,
                             NULL, &packs, &err))
            abort();
        fuzz_mappings = packs;
    }
    m = fuzz_model("prometheus", names, data, size, &reg);
    model_free(m);
    plugins_free(reg);
    return 0;
}
