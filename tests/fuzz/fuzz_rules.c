/*
 * fuzz_rules.c - libFuzzer target for the Lua bridge: the bytes are read
 * by the "model" plugin (plugins/model_json, the JSON `optipipe normalize`
 * writes), and every bundled rule pack runs over the model. Rules must
 * turn whatever shape the model has (NaN, huge numbers, missing fields,
 * cycles) into findings or rule errors, never into a crash of the host.
 *
 * The packs load once (from the source tree, not op_home()) and stay
 * loaded across inputs, with small limits and no isolation (a fork per
 * input would hide crashes from the fuzzer).
 */
#include <stdint.h>
#include <stdlib.h>

#include "findings.h"
#include "fuzz_common.h"
#include "rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static ruleset *load_packs(void)
{
    static const char *const packs[] = { "dbt", "flink", "mixed", "spark" };
    rule_limits lim;
    ruleset *rs;
    results errs;
    op_error err;
    char dir[4096];
    size_t i;

    rule_limits_default(&lim);
    lim.mem_bytes = (size_t)32 << 20;
    lim.instructions = 5000000;
    lim.timeout_ms = 2000;
    lim.isolate = 0;
    rs = ruleset_new(&lim);
    if (!rs)
        abort();
    results_init(&errs);
    for (i = 0; i < sizeof packs / sizeof *packs; i++) {
        snprintf(dir, sizeof dir, "%s/rules/%s", OP_SOURCE_DIR, packs[i]);
        if (ruleset_load_dir(rs, dir, packs[i], OP_SOURCE_DIR "/sdk/lua", 1,
                             &errs, &err)) {
            fprintf(stderr, "fuzz_rules: %s\n", err.msg);
            abort();
        }
    }
    if (errs.ne) {
        fprintf(stderr, "fuzz_rules: %s: %s\n", errs.e[0].rule,
                errs.e[0].error);
        abort();
    }
    results_free(&errs);
    return rs;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[FUZZ_MAX_FILES] = {
        "model.json", "model-2.json", "model-3.json", "model-4.json"};
    static ruleset *rs;
    plugin_reg *reg = NULL;
    model *m;
    results res;
    op_error err;

    if (!rs)
        rs = load_packs();
    m = fuzz_model("model", names, data, size, &reg);
    if (m && m->nruns) {
        results_init(&res);
        (void)ruleset_run(rs, m, &res, &err);
        results_finish(&res, m);
        results_free(&res);
    }
    model_free(m);
    plugins_free(reg);
    return 0;
}
