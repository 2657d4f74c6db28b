/*
 * costs.h - money: the `costs` table of optipipe.lua (a team's own rates;
 * no price ships) and what the findings would save in it. Core checks the
 * table's shape against the keys the engines declare (op_engine.cost_keys)
 * and multiplies each finding's estimated time saved by its run's rate
 * (op_engine.cost_rate). How each engine computes its rate:
 * docs/costs.md.
 */
#ifndef OP_COSTS_H
#define OP_COSTS_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "findings.h"
#include "model.h"

#define COSTS_MAX_SECTIONS 16
#define COSTS_MAX_KEYS 32   /* per section */
#define COSTS_MAX_TEXT 32   /* a string value (a warehouse size, a currency) */
#define COSTS_MAX_NUMBER 1e12

/* Checks the config value v of `costs`: a table of sections, each a table
 * of numbers (finite, 0 <= x <= COSTS_MAX_NUMBER) or short strings, every
 * "section.key" one that an engine reads, plus an optional top-level
 * `currency` string. Returns 0, or -1 with why (cap bytes) saying what is
 * wrong and, for an unknown key, which keys exist. */
int costs_check(const cJSON *v, char *why, size_t cap);

/* The number at costs.section.key, or -1 when absent or not a number. */
double costs_num(const cJSON *costs, const char *section, const char *key);

/* The string at costs.section.key, or NULL. Borrowed from costs. */
const char *costs_str(const cJSON *costs, const char *section,
                      const char *key);

/* costs.currency, else "USD". Borrowed. */
const char *costs_currency(const cJSON *costs);

/* Sets savings (and savings_basis) of every finding of res with an
 * estimated time saved whose run's engine has a rate under costs. Without
 * costs (NULL) nothing changes. Returns 0 or OP_ENOMEM. */
int costs_apply(results *res, const model *m, const cJSON *costs);

/* The money each run of frozen model m cost under costs (NULL: nothing
 * changes): run metric estimated_cost (rate x the hours the run paid
 * for), run config optipipe.currency and optipipe.cost_basis, and where
 * the engine shares it by node time, each node's estimated_cost. Kept in
 * the run store with the run (docs/costs.md "Kept with the run"). Call
 * right after freezing, before anything reads m. Returns 0 or OP_ENOMEM. */
int costs_price_model(model *m, const cJSON *costs);

/* "$12.30", "EUR 12.30": an amount in the currency, into buf. */
const char *costs_format(char *buf, size_t cap, double amount,
                         const char *currency);

#endif
