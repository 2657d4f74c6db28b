/*
 * findings.c - validating, copying, fingerprinting and ordering findings.
 *
 * Findings arrive as cJSON objects (possibly parsed from a worker's pipe),
 * so validation here is the single gate between rule code and reporters:
 * whatever a rule produced, reporters only ever see a well-formed finding.
 */
#include "findings.h"
#include "util.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const sev_names[] = {"info", "warning", "error"};

int severity_parse(const char *s)
{
    int i;

    if (!s)
        return -1;
    for (i = 0; i < 3; i++)
        if (strcmp(s, sev_names[i]) == 0)
            return i;
    return -1;
}

const char *severity_name(severity s)
{
    return (unsigned)s < 3 ? sev_names[s] : "unknown";
}

int decision_status_parse(const char *s)
{
    if (s && strcmp(s, "approved") == 0)
        return DECISION_APPROVED;
    if (s && strcmp(s, "dismissed") == 0)
        return DECISION_DISMISSED;
    return -1;
}

const char *decision_status_name(decision_status s)
{
    return s == DECISION_APPROVED ? "approved" : "dismissed";
}

void results_init(results *r)
{
    memset(r, 0, sizeof *r);
}

static void finding_free(finding *f)
{
    free(f->rule);
    free(f->title);
    free(f->source);
    free(f->run_id);
    free(f->node_id);
    free(f->node_name);
    free(f->message);
    free(f->recommendation);
    free(f->savings_basis);
    cJSON_Delete(f->evidence);
    cJSON_Delete(f->changes);
}

void results_free(results *r)
{
    size_t i;

    for (i = 0; i < r->n; i++)
        finding_free(&r->f[i]);
    for (i = 0; i < r->ne; i++) {
        free(r->e[i].rule);
        free(r->e[i].error);
    }
    free(r->f);
    free(r->e);
    results_init(r);
}

static const char *str_item(const cJSON *obj, const char *key)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsString(it) ? it->valuestring : NULL;
}

/* Resolves "run" to a run of m; *run is NULL for bundle-wide findings. */
static int check_run(const model *m, const cJSON *obj,
                     const struct op_run **run, op_error *err)
{
    const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, "run");
    double idx;

    *run = NULL;
    if (!it || cJSON_IsNull(it))
        return 0;
    if (!cJSON_IsNumber(it))
        return op_error_set(err, OP_EPARSE, "finding: run must be a run");
    idx = it->valuedouble;
    if (!(idx >= 0) || idx >= (double)m->nruns || idx != floor(idx))
        return op_error_set(err, OP_EPARSE, "finding: unknown run");
    *run = m->runs[(size_t)idx];
    return 0;
}

static int check_changes(const cJSON *changes, op_error *err)
{
    const cJSON *c;
    int i = 0;

    if (!changes || cJSON_IsNull(changes))
        return 0;
    if (!cJSON_IsArray(changes))
        return op_error_set(err, OP_EPARSE,
                            "finding: changes must be a list of tables");
    cJSON_ArrayForEach(c, changes) {
        i++;
        if (!cJSON_IsObject(c))
            return op_error_set(err, OP_EPARSE,
                                "finding: changes[%d] must be a table", i);
        if (!str_item(c, "key"))
            return op_error_set(err, OP_EPARSE,
                                "finding: changes[%d] needs a string 'key'", i);
        if (!cJSON_GetObjectItemCaseSensitive(c, "to"))
            return op_error_set(err, OP_EPARSE,
                                "finding: changes[%d] needs 'to'", i);
        if (cJSON_GetObjectItemCaseSensitive(c, "group") && !str_item(c, "group"))
            return op_error_set(err, OP_EPARSE,
                                "finding: changes[%d]: 'group' must be a string", i);
        if (cJSON_GetObjectItemCaseSensitive(c, "choice") && !str_item(c, "choice"))
            return op_error_set(err, OP_EPARSE,
                                "finding: changes[%d]: 'choice' must be a string", i);
    }
    return 0;
}

int finding_check(const model *m, const cJSON *obj, op_error *err)
{
    const struct op_run *run;
    const char *node, *msg;
    const cJSON *ev;
    int rc;

    if (!cJSON_IsObject(obj))
        return op_error_set(err, OP_EPARSE, "finding: not a table");
    if (!str_item(obj, "rule"))
        return op_error_set(err, OP_EPARSE, "finding: no rule id");
    msg = str_item(obj, "message");
    if (!msg || !*msg)
        return op_error_set(err, OP_EPARSE,
                            "finding: 'message' is required (a non-empty string)");
    if (severity_parse(str_item(obj, "severity")) < 0)
        return op_error_set(err, OP_EPARSE,
                            "finding: severity must be info, warning or error");
    rc = check_run(m, obj, &run, err);
    if (rc)
        return rc;
    node = str_item(obj, "node");
    if (cJSON_GetObjectItemCaseSensitive(obj, "node") && !node)
        return op_error_set(err, OP_EPARSE, "finding: node must be a node id");
    if (node && !run)
        return op_error_set(err, OP_EPARSE,
                            "finding: node '%s' given without a run", node);
    if (node && !model_find_node(run, node))
        return op_error_set(err, OP_EPARSE,
                            "finding: node '%s' does not exist in run %s",
                            node, run->id);
    ev = cJSON_GetObjectItemCaseSensitive(obj, "evidence");
    if (ev && !cJSON_IsObject(ev) && !cJSON_IsNull(ev))
        return op_error_set(err, OP_EPARSE, "finding: evidence must be a table");
    return check_changes(cJSON_GetObjectItemCaseSensitive(obj, "changes"), err);
}

static double impact_of(const cJSON *obj)
{
    const cJSON *imp = cJSON_GetObjectItemCaseSensitive(obj, "impact");
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(imp, "time_saved_ms");

    if (cJSON_IsNumber(t) && isfinite(t->valuedouble) && t->valuedouble >= 0)
        return t->valuedouble;
    return -1;
}

static int fill_finding(finding *f, const model *m, const cJSON *obj)
{
    const struct op_run *run = NULL;
    const struct op_node *node = NULL;
    const cJSON *ev, *ch;
    int oom = 0;

    check_run(m, obj, &run, NULL);
    if (run && str_item(obj, "node"))
        node = model_find_node(run, str_item(obj, "node"));
    f->rule = util_strdup(str_item(obj, "rule"), &oom);
    f->title = util_strdup(str_item(obj, "title"), &oom);
    f->message = util_strdup(str_item(obj, "message"), &oom);
    f->recommendation = util_strdup(str_item(obj, "recommendation"), &oom);
    f->sev = (severity)severity_parse(str_item(obj, "severity"));
    f->impact_ms = impact_of(obj);
    f->savings = -1;
    f->run_index = run ? run->index : SIZE_MAX;
    if (run) {
        f->source = util_strdup(run->source, &oom);
        f->run_id = util_strdup(run->id, &oom);
    }
    if (node) {
        f->node_id = util_strdup(node->id, &oom);
        f->node_name = util_strdup(node->name ? node->name : node->id, &oom);
    }
    ev = cJSON_GetObjectItemCaseSensitive(obj, "evidence");
    ch = cJSON_GetObjectItemCaseSensitive(obj, "changes");
    f->evidence = cJSON_IsObject(ev) ? cJSON_Duplicate(ev, 1)
                                     : cJSON_CreateObject();
    f->changes = cJSON_IsArray(ch) ? cJSON_Duplicate(ch, 1)
                                   : cJSON_CreateArray();
    if (!f->evidence || !f->changes)
        oom = 1;
    return oom ? OP_ENOMEM : 0;
}

/* A change's value as text for comparing (a number as %.17g, so "16"
 * and 16 are one value); 0 when it is no scalar. */
static int change_text(const cJSON *v, char *buf, size_t cap)
{
    if (cJSON_IsString(v))
        return snprintf(buf, cap, "%s", v->valuestring) < (int)cap;
    if (cJSON_IsNumber(v))
        return snprintf(buf, cap, "%.17g", v->valuedouble) < (int)cap;
    if (cJSON_IsBool(v))
        return snprintf(buf, cap, "%s", cJSON_IsTrue(v) ? "true" : "false") > 0;
    return 0;
}

/* Whether change c proposes the value already set (from = to: `30s ->
 * 30s`, `2 -> 2`, `"16" -> 16`): a recommendation that changes nothing. */
static int change_is_noop(const cJSON *c)
{
    char a[256], b[256];
    const cJSON *from = cJSON_GetObjectItemCaseSensitive(c, "from");
    const cJSON *to = cJSON_GetObjectItemCaseSensitive(c, "to");

    if (cJSON_IsNumber(from) && cJSON_IsNumber(to))
        return from->valuedouble == to->valuedouble;
    return change_text(from, a, sizeof a) && change_text(to, b, sizeof b) &&
           strcmp(a, b) == 0;
}

/* Removes f's changes that change nothing; 1 when it had changes and
 * none is left (the finding's recommendation is already in place). */
static int drop_noop_changes(finding *f)
{
    int n = cJSON_GetArraySize(f->changes), i, had = n > 0;

    for (i = n - 1; i >= 0; i--)
        if (change_is_noop(cJSON_GetArrayItem(f->changes, i)))
            cJSON_DeleteItemFromArray(f->changes, i);
    return had && cJSON_GetArraySize(f->changes) == 0;
}

int results_add_finding(results *r, const model *m, const cJSON *obj,
                        op_error *err)
{
    finding *f;
    int rc = finding_check(m, obj, err);

    if (rc)
        return rc;
    if (OP_GROW(r->f, r->cap, r->n + 1, 16))
        return op_error_set(err, OP_ENOMEM, "out of memory");
    f = &r->f[r->n];
    memset(f, 0, sizeof *f);
    rc = fill_finding(f, m, obj);
    if (rc) {
        finding_free(f);
        return op_error_set(err, rc, "out of memory");
    }
    if (drop_noop_changes(f)) { /* never made: it would set what is set */
        finding_free(f);
        r->noop_dropped++;
        return 0;
    }
    r->n++;
    return 0;
}

int results_add_error(results *r, const char *rule, const char *reason)
{
    rule_error *e;
    int oom = 0;

    if (OP_GROW(r->e, r->ecap, r->ne + 1, 8))
        return OP_ENOMEM;
    e = &r->e[r->ne];
    e->rule = util_strdup(rule ? rule : "?", &oom);
    e->error = util_strdup(reason ? reason : "unknown error", &oom);
    if (oom) {
        free(e->rule);
        free(e->error);
        return OP_ENOMEM;
    }
    r->ne++;
    return 0;
}

/* ---- fingerprints and order --------------------------------------------- */

static uint64_t fnv(uint64_t h, const char *s)
{
    if (s)
        while (*s) {
            h ^= (unsigned char)*s++;
            h *= 1099511628211ull;
        }
    h ^= 0xff; /* field separator: ("ab","c") differs from ("a","bc") */
    h *= 1099511628211ull;
    return h;
}

/* What stays the same about a run from one day to the next: its job key
 * (model_run_job). Ids alone (app ids, invocation ids, job ids) change
 * with every execution, and a dismissed finding must stay dismissed on
 * tomorrow's log of the same pipeline. The legacy identity is what
 * fingerprints used before job keys (the history key, which for a Spark
 * app with attempts was its app id), read so old baselines keep working. */
static const char *run_identity(const model *m, size_t run_index, int legacy)
{
    const struct op_run *r;

    if (!m || run_index >= m->nruns)
        return NULL;
    r = m->runs[run_index];
    if (!legacy)
        return model_run_job(r);
    return r->history_key ? r->history_key : r->name ? r->name : r->id;
}

/* Identity of a finding: rule, source, the run's stable identity, node and
 * the config keys it changes. Never the message (its numbers move between
 * runs) nor any address. */
static uint64_t identity(const finding *f, const model *m, int legacy)
{
    uint64_t h = 1469598103934665603ull;
    const cJSON *c;

    h = fnv(h, f->rule);
    h = fnv(h, f->source);
    h = fnv(h, run_identity(m, f->run_index, legacy));
    h = fnv(h, f->node_id);
    cJSON_ArrayForEach(c, f->changes) {
        h = fnv(h, str_item(c, "target"));
        h = fnv(h, str_item(c, "key"));
    }
    return h;
}

static int cmp_str(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

static int finding_cmp(const void *pa, const void *pb)
{
    const finding *a = pa, *b = pb;
    int c;

    if (a->sev != b->sev)
        return a->sev > b->sev ? -1 : 1;
    if (a->impact_ms != b->impact_ms)
        return a->impact_ms > b->impact_ms ? -1 : 1;
    if ((c = cmp_str(a->rule, b->rule)))
        return c;
    if (a->run_index != b->run_index)
        return a->run_index < b->run_index ? -1 : 1;
    if ((c = cmp_str(a->node_id, b->node_id)))
        return c;
    return cmp_str(a->message, b->message);
}

static int error_cmp(const void *pa, const void *pb)
{
    const rule_error *a = pa, *b = pb;
    int c = strcmp(a->rule, b->rule);
    return c ? c : strcmp(a->error, b->error);
}

/* ---- change reconciliation ---------------------------------------------- */

/* Why kept won over lost, in the order findings are ranked. */
static const char *win_reason(const finding *kept, const finding *lost)
{
    if (kept->sev != lost->sev)
        return "it is more severe";
    if (kept->impact_ms != lost->impact_ms)
        return "it saves more time";
    return "it ranks first (rule id)";
}

/* A change value as text for messages: strings bare, others as JSON. */
static char *value_text(const cJSON *v)
{
    return cJSON_IsString(v) ? strdup(v->valuestring) : cJSON_PrintUnformatted(v);
}

/* Appends to lost's message why its change c was dropped for kc of kept:
 * the same setting, or (alt) an alternative in the same group. */
static int note_dropped(finding *lost, const cJSON *c, const finding *kept,
                        const cJSON *kc, int alt)
{
    char *to = value_text(cJSON_GetObjectItemCaseSensitive(c, "to"));
    char *kto = value_text(cJSON_GetObjectItemCaseSensitive(kc, "to"));
    const char *key = str_item(c, "key");
    const char *on = kept->node_id ? " on " : "", *node = kept->node_id ? kept->node_id : "";
    char *msg = NULL;
    int rc = OP_ENOMEM, n;

    if (!to || !kto)
        goto out;
#define NOTE_FMT "%s [Not proposed: %s = %s, because %s%s%s proposes %s for " \
                 "the same setting and is kept: %s.]"
#define NOTE_ARGS lost->message, key, to, kept->rule, on, node, kto, \
                  win_reason(kept, lost)
#define ALT_FMT "%s [Not proposed: %s = %s, because %s%s%s proposes %s = %s " \
                "instead (one %s, not both) and is kept: %s.]"
#define ALT_ARGS lost->message, key, to, kept->rule, on, node, \
                 str_item(kc, "key"), kto, str_item(c, "group"), \
                 win_reason(kept, lost)
    n = alt ? snprintf(NULL, 0, ALT_FMT, ALT_ARGS) : snprintf(NULL, 0, NOTE_FMT, NOTE_ARGS);
    msg = n < 0 ? NULL : malloc((size_t)n + 1);
    if (!msg)
        goto out;
    if (alt)
        snprintf(msg, (size_t)n + 1, ALT_FMT, ALT_ARGS);
    else
        snprintf(msg, (size_t)n + 1, NOTE_FMT, NOTE_ARGS);
#undef NOTE_FMT
#undef NOTE_ARGS
#undef ALT_FMT
#undef ALT_ARGS
    free(lost->message);
    lost->message = msg;
    rc = 0;
out:
    free(to);
    free(kto);
    return rc;
}

/* What a change configures: its target, else its finding's node (a
 * Flink vertex's "parallelism", a dbt model's "materialized"), else the
 * run as a whole (NULL). */
static const char *scope_of(const finding *f, const cJSON *c)
{
    const char *t = str_item(c, "target");
    return t ? t : f->node_id;
}

/* Settings already proposed, by (run, scope, key): an open-addressing
 * table of the changes kept so far, so that reconciling n changes costs
 * O(n), not O(n^2) (a pack may report 10,000 findings per rule). */
typedef struct kept_change {
    uint64_t h;          /* 0: empty slot */
    int group;           /* a group's slot, not a setting's */
    const finding *f;
    const cJSON *c;
} kept_change;

typedef struct kept_set {
    kept_change *slot;
    size_t cap; /* a power of two, at least twice the changes */
} kept_set;

/* A slot holds either a setting (run, scope, key) or a group (run,
 * group): the first change of the group, whose finding owns it. */
static uint64_t setting_hash(const finding *f, const cJSON *c, int group)
{
    char run[24];
    uint64_t h = 1469598103934665603ull;

    snprintf(run, sizeof run, "%zu", f->run_index);
    if (group)
        h = fnv(fnv(fnv(h, run), "\001group"), str_item(c, "group"));
    else
        h = fnv(fnv(fnv(h, run), scope_of(f, c)), str_item(c, "key"));
    return h ? h : 1;
}

static int same_setting(const finding *a, const cJSON *ca, const finding *b,
                        const cJSON *cb, int group)
{
    if (a->run_index != b->run_index)
        return 0;
    if (group)
        return !cmp_str(str_item(ca, "group"), str_item(cb, "group"));
    return !cmp_str(scope_of(a, ca), scope_of(b, cb)) &&
           !cmp_str(str_item(ca, "key"), str_item(cb, "key"));
}

/* The slot of f's change c (its setting, or its group): the kept change,
 * or the empty slot (all zero) where it goes. */
static kept_change *kept_slot(kept_set *ks, const finding *f, const cJSON *c,
                              int group)
{
    uint64_t h = setting_hash(f, c, group);
    size_t i = (size_t)h & (ks->cap - 1);

    while (ks->slot[i].h &&
           !(ks->slot[i].h == h &&
             ks->slot[i].group == group &&
             same_setting(ks->slot[i].f, ks->slot[i].c, f, c, group)))
        i = (i + 1) & (ks->cap - 1);
    return &ks->slot[i];
}

/* Keeps f's change c for its setting (or its group) when nothing is kept
 * there yet. */
static void keep(kept_set *ks, const finding *f, const cJSON *c, int group)
{
    kept_change *k = kept_slot(ks, f, c, group);

    if (k->h)
        return;
    k->h = setting_hash(f, c, group);
    k->group = group;
    k->f = f;
    k->c = c;
}

/* Whether f's change c may stay: its setting has no other value kept, and
 * its group (a choice among alternatives: a fixed cluster size or
 * autoscaling) is f's own, or the owner made the same `choice`, or the
 * owner proposes exactly c too. On a loss
 * *kept and *kc say what won and *alt whether it was the group. */
static int change_stays(kept_set *ks, const finding *f, const cJSON *c,
                        const finding **kept, const cJSON **kc, int *alt)
{
    kept_change *s = kept_slot(ks, f, c, 0), *g = NULL;
    const cJSON *to = cJSON_GetObjectItemCaseSensitive(c, "to");

    if (str_item(c, "group"))
        g = kept_slot(ks, f, c, 1);
    if (s->f && !cJSON_Compare(cJSON_GetObjectItemCaseSensitive(s->c, "to"), to, 1)) {
        *kept = s->f, *kc = s->c, *alt = 0;
        return 0;
    }
    if (g && g->f && g->f != f && s->f != g->f &&
        !(str_item(c, "choice") && !cmp_str(str_item(c, "choice"), str_item(g->c, "choice")))) {
        /* another finding owns the group with another choice (or none)
         * and proposes no such change */
        *kept = g->f, *kc = g->c, *alt = 1;
        return 0;
    }
    /* s and g may be one empty slot: each is looked up again to keep it */
    keep(ks, f, c, 0);
    if (g)
        keep(ks, f, c, 1);
    return 1;
}

/* Within one run, no two findings may set one (scope, key) to different
 * values, nor propose different changes of one group (alternatives: the
 * first finding with a change of the group owns it): the first in rank
 * order (severity, then impact, then rule id) keeps its change; each
 * later one loses the conflicting change and its message names the kept
 * finding. Runs after fingerprinting, so a
 * finding's fingerprint does not depend on whether another rule fired. */
static int reconcile(results *r)
{
    kept_set ks = {NULL, 16};
    size_t i, n = 0;
    int rc = 0;

    for (i = 0; i < r->n; i++)
        n += (size_t)cJSON_GetArraySize(r->f[i].changes);
    if (n < 2)
        return 0;
    while (ks.cap < 4 * n) /* a setting and a group slot per change */
        ks.cap *= 2;
    ks.slot = calloc(ks.cap, sizeof *ks.slot);
    if (!ks.slot)
        return OP_ENOMEM;
    for (i = 0; i < r->n && !rc; i++) {
        cJSON *c = r->f[i].changes ? r->f[i].changes->child : NULL;
        while (c && !rc) {
            cJSON *next = c->next;
            const finding *kept;
            const cJSON *kc;
            int alt;
            if (!change_stays(&ks, &r->f[i], c, &kept, &kc, &alt)) {
                /* the note first: on failure the change stays, visibly */
                rc = note_dropped(&r->f[i], c, kept, kc, alt);
                if (!rc)
                    cJSON_Delete(cJSON_DetachItemViaPointer(r->f[i].changes, c));
            }
            c = next;
        }
    }
    free(ks.slot);
    return rc;
}

/* Fills every finding's fingerprint (legacy: legacy_fp). Equal
 * identities (one rule, two findings on one node) are told apart by their
 * rank in the sorted order, which is itself stable. */
static void fingerprint_all(results *r, const model *m, int legacy)
{
    uint64_t *ids = r->n ? malloc(r->n * sizeof *ids) : NULL;
    size_t i, j;

    for (i = 0; i < r->n; i++) {
        uint64_t h = identity(&r->f[i], m, legacy);
        unsigned dup_rank = 0;
        char *out = legacy ? r->f[i].legacy_fp : r->f[i].fingerprint;
        if (ids)
            ids[i] = h;
        for (j = 0; j < i; j++)
            if ((ids ? ids[j] : identity(&r->f[j], m, legacy)) == h)
                dup_rank++;
        if (dup_rank) {
            char ord[16];
            snprintf(ord, sizeof ord, "#%u", dup_rank);
            h = fnv(h, ord);
        }
        snprintf(out, 17, "%016llx", (unsigned long long)h);
    }
    free(ids);
}

int results_finish(results *r, const model *m)
{
    if (r->n > 1)
        qsort(r->f, r->n, sizeof *r->f, finding_cmp);
    if (r->ne > 1)
        qsort(r->e, r->ne, sizeof *r->e, error_cmp);
    fingerprint_all(r, m, 0);
    fingerprint_all(r, m, 1);
    return reconcile(r);
}

size_t results_count_shown_at_least(const results *r, severity sev)
{
    size_t i, n = 0;

    for (i = 0; i < r->n; i++)
        if (!r->f[i].suppressed && r->f[i].sev >= sev)
            n++;
    return n;
}
