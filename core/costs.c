/*
 * costs.c - the team's rates (optipipe.lua `costs`) turned into the money
 * each finding would save: finding.savings = impact_ms / 3,600,000 × the
 * per-hour rate the run's engine derives from the rates and the run's own
 * metrics (op_engine.cost_rate). Core knows no engine's keys: it accepts
 * the "section.key" names the engines declare. docs/costs.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costs.h"
#include "engine.h"
#include "util.h"

/* Whether some engine reads section.key. */
static int known_key(const char *section, const char *key)
{
    size_t i, j, ns = strlen(section);

    for (i = 0; op_builtin_engines[i]; i++) {
        const op_engine *e = op_builtin_engines[i];
        if (!ENGINE_HAS(e, cost_keys) || !e->cost_keys)
            continue;
        for (j = 0; e->cost_keys[j]; j++) {
            const char *k = e->cost_keys[j];
            if (!strncmp(k, section, ns) && k[ns] == '.' && !strcmp(k + ns + 1, key))
                return 1;
        }
    }
    return 0;
}

/* "a.b, c.d, ...": every key the engines read, for the message. */
static void list_keys(char *buf, size_t cap)
{
    size_t i, j, len = 0;

    buf[0] = '\0';
    for (i = 0; op_builtin_engines[i]; i++) {
        const op_engine *e = op_builtin_engines[i];
        if (!ENGINE_HAS(e, cost_keys) || !e->cost_keys)
            continue;
        for (j = 0; e->cost_keys[j] && len + 1 < cap; j++) {
            int n = snprintf(buf + len, cap - len, "%s%s", len ? ", " : "",
                             e->cost_keys[j]);
            if (n < 0 || (size_t)n >= cap - len)
                return;
            len += (size_t)n;
        }
    }
}

static int check_value(const cJSON *v, const char *sec, char *why, size_t cap)
{
    if (cJSON_IsNumber(v)) {
        if (!isfinite(v->valuedouble) || v->valuedouble < 0 ||
            v->valuedouble > COSTS_MAX_NUMBER) {
            snprintf(why, cap, "costs.%s.%s: expected a number from 0 to %g",
                     sec, v->string, COSTS_MAX_NUMBER);
            return -1;
        }
        return 0;
    }
    if (cJSON_IsString(v) && *v->valuestring &&
        strlen(v->valuestring) <= COSTS_MAX_TEXT)
        return 0;
    snprintf(why, cap, "costs.%s.%s: expected a number or a short string "
             "(at most %d bytes)", sec, v->string, COSTS_MAX_TEXT);
    return -1;
}

int costs_check(const cJSON *v, char *why, size_t cap)
{
    const cJSON *sec, *it;
    char keys[1024];
    int nsec = 0, nkey;

    if (!cJSON_IsObject(v)) {
        snprintf(why, cap, "costs: expected a table of rates by platform "
                 "(docs/costs.md)");
        return -1;
    }
    cJSON_ArrayForEach(sec, v) {
        if (!sec->string) {
            snprintf(why, cap, "costs: expected named sections");
            return -1;
        }
        if (!strcmp(sec->string, "currency")) {
            if (!cJSON_IsString(sec) || !*sec->valuestring ||
                strlen(sec->valuestring) > 8) {
                snprintf(why, cap, "costs.currency: expected a short name "
                         "(\"USD\", \"EUR\")");
                return -1;
            }
            continue;
        }
        if (++nsec > COSTS_MAX_SECTIONS || !cJSON_IsObject(sec)) {
            snprintf(why, cap, "costs.%s: expected a table of rates", sec->string);
            return -1;
        }
        nkey = 0;
        cJSON_ArrayForEach(it, sec) {
            if (!it->string || ++nkey > COSTS_MAX_KEYS) {
                snprintf(why, cap, "costs.%s: expected at most %d named rates",
                         sec->string, COSTS_MAX_KEYS);
                return -1;
            }
            if (!known_key(sec->string, it->string)) {
                list_keys(keys, sizeof keys);
                snprintf(why, cap, "costs.%s.%s: unknown rate (known: %s)",
                         sec->string, it->string, keys);
                return -1;
            }
            if (check_value(it, sec->string, why, cap))
                return -1;
        }
    }
    return 0;
}

static const cJSON *item(const cJSON *costs, const char *section,
                         const char *key)
{
    const cJSON *sec = cJSON_GetObjectItemCaseSensitive(costs, section);
    return cJSON_IsObject(sec) ? cJSON_GetObjectItemCaseSensitive(sec, key) : NULL;
}

double costs_num(const cJSON *costs, const char *section, const char *key)
{
    const cJSON *v = item(costs, section, key);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

const char *costs_str(const cJSON *costs, const char *section,
                      const char *key)
{
    const cJSON *v = item(costs, section, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

const char *costs_currency(const cJSON *costs)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(costs, "currency");
    return cJSON_IsString(c) ? c->valuestring : "USD";
}

const char *costs_format(char *buf, size_t cap, double amount,
                         const char *currency)
{
    if (!strcmp(currency, "USD"))
        snprintf(buf, cap, "$%.2f", amount);
    else
        snprintf(buf, cap, "%s %.2f", currency, amount);
    return buf;
}

int costs_apply(results *res, const model *m, const cJSON *costs)
{
    op_cost_rate *rate;
    signed char *state; /* per run: 0 unknown yet, 1 has a rate, -1 none */
    size_t i;

    if (!costs || !res->n)
        return 0;
    rate = calloc(m->nruns + 1, sizeof *rate);
    state = calloc(m->nruns + 1, 1);
    if (!rate || !state) {
        free(rate);
        free(state);
        return OP_ENOMEM;
    }
    for (i = 0; i < res->n; i++) {
        finding *f = &res->f[i];
        size_t ri = f->run_index;
        if (f->impact_ms < 0 || ri >= m->nruns)
            continue;
        if (!state[ri]) {
            const op_engine *e = engine_find(m->runs[ri]->source);
            state[ri] = -1;
            if (e && ENGINE_HAS(e, cost_rate) && e->cost_rate &&
                e->cost_rate(m->runs[ri], costs, &rate[ri]) &&
                isfinite(rate[ri].per_hour) && rate[ri].per_hour >= 0)
                state[ri] = 1;
        }
        if (state[ri] == 1) {
            f->savings = f->impact_ms / 3600000.0 * rate[ri].per_hour;
            free(f->savings_basis);
            f->savings_basis = strdup(rate[ri].basis);
            if (!f->savings_basis) {
                free(rate);
                free(state);
                return OP_ENOMEM;
            }
        }
    }
    free(rate);
    free(state);
    return 0;
}

/* Run r's cost shared by its nodes' duration_ms. */
static int price_nodes(model *m, struct op_run *r, double cost)
{
    double total = 0;
    size_t i;

    for (i = 0; i < r->nnodes; i++)
        if ((r->nodes[i]->set & MSET_DURATION_MS) && r->nodes[i]->duration_ms > 0)
            total += (double)r->nodes[i]->duration_ms;
    if (total <= 0)
        return 0;
    for (i = 0; i < r->nnodes; i++) {
        struct op_node *n = r->nodes[i];
        if (!(n->set & MSET_DURATION_MS) || n->duration_ms <= 0)
            continue;
        if (model_derive_num(m, &n->metrics, "estimated_cost",
                             cost * (double)n->duration_ms / total))
            return OP_ENOMEM;
    }
    return 0;
}

int costs_price_model(model *m, const cJSON *costs)
{
    const char *currency = costs ? costs_currency(costs) : NULL;
    size_t i;

    for (i = 0; costs && i < m->nruns; i++) {
        struct op_run *r = m->runs[i];
        const op_engine *e = engine_find(r->source);
        op_cost_rate rate;
        double cost;

        memset(&rate, 0, sizeof rate);
        if (!e || !ENGINE_HAS(e, cost_rate) || !e->cost_rate ||
            !e->cost_rate(r, costs, &rate) || !isfinite(rate.per_hour) ||
            rate.per_hour < 0 || !isfinite(rate.run_hours) || rate.run_hours <= 0)
            continue;
        cost = rate.per_hour * rate.run_hours;
        if (model_derive_num(m, &r->metrics, "estimated_cost", cost) ||
            model_derive_str(m, &r->config, "optipipe.currency", currency) ||
            model_derive_str(m, &r->config, "optipipe.cost_basis", rate.basis) ||
            (rate.by_node_time && price_nodes(m, r, cost)))
            return OP_ENOMEM;
    }
    return 0;
}
