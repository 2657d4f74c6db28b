/*
 * diff_findings.c - the findings part of a diff (diff.h,
 * docs/history.md#findings-in-a-diff): which findings of run B are new,
 * which of run A are resolved, and which both have but changed (severity,
 * message or evidence). Findings are matched by fingerprint, which is
 * keyed by the job and not the run id (core/findings.c), and else by
 * legacy fingerprint, so a run recorded before a job key changed still
 * matches its successor.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "diff_findings.h"

/* ---- a run's findings as JSON ---------------------------------------------- */

/* Adds item under key; on failure frees item (cJSON leaves it to us when
 * the key cannot be copied). 0, or 1 on failure. */
static int put(cJSON *o, const char *key, cJSON *item)
{
    if (item && cJSON_AddItemToObject(o, key, item))
        return 0;
    cJSON_Delete(item);
    return 1;
}

static int put_str(cJSON *o, const char *key, const char *s)
{
    return s && !cJSON_AddStringToObject(o, key, s);
}

int diff_finding_add(cJSON *arr, const diff_finding_in *in)
{
    cJSON *o = cJSON_CreateObject(), *ev;
    int bad = !o || !cJSON_AddItemToArray(arr, o);

    if (bad) {
        cJSON_Delete(o);
        return -1;
    }
    bad |= put_str(o, "fingerprint", in->fingerprint);
    if (in->legacy_fp && in->legacy_fp[0] &&
        strcmp(in->legacy_fp, in->fingerprint))
        bad |= put_str(o, "legacy_fp", in->legacy_fp);
    bad |= put_str(o, "rule", in->rule) | put_str(o, "severity", in->severity) |
           put_str(o, "node", in->node) | put_str(o, "message", in->message);
    ev = in->evidence ? cJSON_Duplicate(in->evidence, 1)
         : in->evidence_json ? cJSON_Parse(in->evidence_json) : NULL;
    if (ev && !cJSON_IsObject(ev)) { /* a store no optipipe wrote */
        cJSON_Delete(ev);
        ev = NULL;
    }
    if (ev)
        bad |= put(o, "evidence", ev);
    return bad ? -1 : 0;
}

int diff_run_findings(cJSON *run, const results *res, size_t run_index,
                      op_error *err)
{
    cJSON *arr = cJSON_CreateArray();
    size_t i;
    int bad = put(run, "findings", arr);

    for (i = 0; !bad && res && i < res->n; i++) {
        const finding *f = &res->f[i];
        diff_finding_in in;
        if (f->run_index != run_index)
            continue;
        memset(&in, 0, sizeof in);
        in.fingerprint = f->fingerprint;
        in.legacy_fp = f->legacy_fp;
        in.rule = f->rule;
        in.severity = severity_name(f->sev);
        in.node = f->node_id;
        in.message = f->message;
        in.evidence = f->evidence;
        bad = diff_finding_add(arr, &in);
    }
    if (!bad && res && res->ne) {
        /* the findings of a failed rule are missing: say which */
        cJSON *errs = cJSON_CreateArray();
        bad = put(run, "rule_errors", errs);
        for (i = 0; !bad && i < res->ne; i++) {
            cJSON *e = cJSON_CreateObject();
            bad = !e || !cJSON_AddItemToArray(errs, e);
            if (bad)
                cJSON_Delete(e);
            bad = bad || put_str(e, "rule", res->e[i].rule) ||
                  put_str(e, "error", res->e[i].error);
        }
    }
    return bad ? op_error_set(err, OP_ENOMEM, "diff: out of memory") : 0;
}

/* ---- matching --------------------------------------------------------------- */

typedef struct fref {
    const cJSON *f;
    const char *fp, *legacy; /* legacy: its legacy_fp, else fp */
    int sev;
    struct fref *peer;
} fref;

static const char *str_of(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int cmp_fp(const void *x, const void *y)
{
    return strcmp(((const fref *)x)->fp, ((const fref *)y)->fp);
}

static int cmp_legacy(const void *x, const void *y)
{
    return strcmp((*(const fref *const *)x)->legacy,
                  (*(const fref *const *)y)->legacy);
}

/* The findings of a side with a fingerprint, sorted by it; NULL on out of
 * memory. */
static fref *refs_of(const cJSON *arr, size_t *n)
{
    size_t cap = (size_t)cJSON_GetArraySize(arr);
    fref *r = calloc(cap ? cap : 1, sizeof *r);
    const cJSON *it;

    *n = 0;
    if (!r)
        return NULL;
    cJSON_ArrayForEach(it, arr) {
        const char *fp = str_of(it, "fingerprint");
        fref *e = &r[*n];
        if (!fp)
            continue;
        e->f = it;
        e->fp = fp;
        e->legacy = str_of(it, "legacy_fp") ? str_of(it, "legacy_fp") : fp;
        e->sev = severity_parse(str_of(it, "severity") ? str_of(it, "severity")
                                                       : "");
        (*n)++;
    }
    qsort(r, *n, sizeof *r, cmp_fp);
    return r;
}

/* The first unmatched entry of sorted base equal to key under cmp, or
 * NULL. Equal entries are adjacent; bsearch lands on any of them. */
static void *first_free(const void *key, void *base, size_t n, size_t size,
                        int (*cmp)(const void *, const void *),
                        fref *(*ref)(void *))
{
    char *p = bsearch(key, base, n, size, cmp), *lo = base;

    if (!p)
        return NULL;
    while (p > lo && !cmp(key, p - size))
        p -= size;
    for (; p < lo + n * size && !cmp(key, p); p += size)
        if (!ref(p)->peer)
            return p;
    return NULL;
}

static fref *as_ref(void *p) { return p; }
static fref *as_ptr(void *p) { return *(fref **)p; }

/* Pairs each finding of a with one of b: same fingerprint first, then
 * same legacy fingerprint among those still unpaired. */
static int pair_up(fref *ra, size_t na, fref *rb, size_t nb)
{
    fref **lb = calloc(nb ? nb : 1, sizeof *lb), *p, **q;
    size_t i;

    if (!lb)
        return -1;
    for (i = 0; i < na; i++)
        if ((p = first_free(&ra[i], rb, nb, sizeof *rb, cmp_fp, as_ref))) {
            ra[i].peer = p;
            p->peer = &ra[i];
        }
    for (i = 0; i < nb; i++)
        lb[i] = &rb[i];
    qsort(lb, nb, sizeof *lb, cmp_legacy);
    for (i = 0; i < na; i++) {
        fref *key = &ra[i];
        if (ra[i].peer)
            continue;
        if ((q = first_free(&key, lb, nb, sizeof *lb, cmp_legacy, as_ptr))) {
            ra[i].peer = *q;
            (*q)->peer = &ra[i];
        }
    }
    free(lb);
    return 0;
}

/* ---- the section ------------------------------------------------------------ */

/* The evidence keys whose values differ, as [{key, a, b}] into e
 * ("evidence_changes"); nothing when none does. */
static int evidence_changes(cJSON *e, const cJSON *a, const cJSON *b)
{
    const cJSON *ea = cJSON_GetObjectItemCaseSensitive(a, "evidence");
    const cJSON *eb = cJSON_GetObjectItemCaseSensitive(b, "evidence");
    cJSON *arr = NULL;
    const cJSON *it;
    int pass, bad = 0;

    /* keys of a (changed or removed), then those of b only (added) */
    for (pass = 0; pass < 2 && !bad; pass++) {
        const cJSON *keys = pass ? eb : ea;
        cJSON_ArrayForEach(it, keys) {
            const cJSON *va = pass ? NULL : it;
            const cJSON *vb = pass ? it
                              : cJSON_GetObjectItemCaseSensitive(eb, it->string);
            cJSON *row;
            if (!it->string ||
                (pass && cJSON_GetObjectItemCaseSensitive(ea, it->string)))
                continue;
            if (va && vb && cJSON_Compare(va, vb, 1))
                continue;
            if (!arr && put(e, "evidence_changes", arr = cJSON_CreateArray()))
                return -1;
            row = cJSON_CreateObject();
            if (!row || !cJSON_AddItemToArray(arr, row)) {
                cJSON_Delete(row);
                return -1;
            }
            bad |= !cJSON_AddStringToObject(row, "key", it->string);
            bad |= put(row, "a", va ? cJSON_Duplicate(va, 1) : cJSON_CreateNull());
            bad |= put(row, "b", vb ? cJSON_Duplicate(vb, 1) : cJSON_CreateNull());
        }
    }
    return bad ? -1 : 0;
}

static int pair_str(cJSON *e, const char *key, const char *a, const char *b)
{
    cJSON *o = cJSON_CreateObject();
    int bad = put(e, key, o);

    bad = bad || put(o, "a", a ? cJSON_CreateString(a) : cJSON_CreateNull());
    bad = bad || put(o, "b", b ? cJSON_CreateString(b) : cJSON_CreateNull());
    return bad ? -1 : 0;
}

static int same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

/* A changed finding's entry into arr, or nothing when a and b are alike:
 * 1 when added, 0 when alike, -1 on out of memory. */
static int changed_entry(cJSON *arr, const fref *a, const fref *b)
{
    const char *sa = str_of(a->f, "severity"), *sb = str_of(b->f, "severity");
    const char *ma = str_of(a->f, "message"), *mb = str_of(b->f, "message");
    const cJSON *eva = cJSON_GetObjectItemCaseSensitive(a->f, "evidence");
    const cJSON *evb = cJSON_GetObjectItemCaseSensitive(b->f, "evidence");
    int ev_same = (!eva && !evb) || (eva && evb && cJSON_Compare(eva, evb, 1));
    cJSON *e, *what;
    int bad;

    if (same(sa, sb) && same(ma, mb) && ev_same)
        return 0;
    if (!(e = cJSON_CreateObject()) || !cJSON_AddItemToArray(arr, e)) {
        cJSON_Delete(e);
        return -1;
    }
    bad = put_str(e, "fingerprint", b->fp) | put_str(e, "rule", str_of(b->f, "rule")) |
          put_str(e, "node", str_of(b->f, "node"));
    what = cJSON_AddArrayToObject(e, "changed");
    bad |= !what;
    if (!bad && !same(sa, sb))
        bad |= !cJSON_AddItemToArray(what, cJSON_CreateString("severity"));
    if (!bad && !same(ma, mb))
        bad |= !cJSON_AddItemToArray(what, cJSON_CreateString("message"));
    if (!bad && !ev_same)
        bad |= !cJSON_AddItemToArray(what, cJSON_CreateString("evidence"));
    bad = bad || pair_str(e, "severity", sa, sb) || pair_str(e, "message", ma, mb) ||
          (!ev_same && evidence_changes(e, a->f, b->f));
    return bad ? -1 : 1;
}

/* Worst first, then by rule and fingerprint: the order a reader triages. */
static int cmp_listed(const void *x, const void *y)
{
    const fref *a = *(const fref *const *)x, *b = *(const fref *const *)y;
    const char *ra = str_of(a->f, "rule"), *rb = str_of(b->f, "rule");
    int c;

    if (a->sev != b->sev)
        return a->sev > b->sev ? -1 : 1;
    if ((c = strcmp(ra ? ra : "", rb ? rb : "")))
        return c;
    return strcmp(a->fp, b->fp);
}

/* The findings of r (n of them) that have no peer, or that have one
 * (peered), in cmp_listed order, into *out (free it); NULL on out of
 * memory. */
static fref **listed(fref *r, size_t n, int peered, size_t *k)
{
    fref **v = calloc(n ? n : 1, sizeof *v);
    size_t i;

    *k = 0;
    if (!v)
        return NULL;
    for (i = 0; i < n; i++)
        if (!r[i].peer == !peered)
            v[(*k)++] = &r[i];
    qsort(v, *k, sizeof *v, cmp_listed);
    return v;
}

static int copy_list(cJSON *sect, const char *key, fref **v, size_t k)
{
    cJSON *arr = cJSON_AddArrayToObject(sect, key);
    size_t i;

    if (!arr)
        return -1;
    for (i = 0; i < k; i++) {
        cJSON *c = cJSON_Duplicate(v[i]->f, 1);
        if (!c || !cJSON_AddItemToArray(arr, c)) {
            cJSON_Delete(c);
            return -1;
        }
    }
    return 0;
}

static int fill(cJSON *sect, fref *ra, size_t na, fref *rb, size_t nb)
{
    size_t knew = 0, kres = 0, kboth = 0, i, unchanged = 0;
    fref **vnew = listed(rb, nb, 0, &knew), **vres = listed(ra, na, 0, &kres);
    fref **vboth = listed(rb, nb, 1, &kboth);
    cJSON *chg;
    int bad = !vnew || !vres || !vboth;

    bad = bad || !cJSON_AddNumberToObject(sect, "a", (double)na) ||
          !cJSON_AddNumberToObject(sect, "b", (double)nb);
    bad = bad || copy_list(sect, "new", vnew, knew) ||
          copy_list(sect, "resolved", vres, kres);
    chg = bad ? NULL : cJSON_AddArrayToObject(sect, "changed");
    bad |= !chg;
    for (i = 0; !bad && i < kboth; i++) {
        int rc = changed_entry(chg, vboth[i]->peer, vboth[i]);
        bad = rc < 0;
        unchanged += rc == 0;
    }
    bad = bad || !cJSON_AddNumberToObject(sect, "unchanged", (double)unchanged);
    free(vnew);
    free(vres);
    free(vboth);
    return bad ? -1 : 0;
}

/* "rule_errors": {"a": [...], "b": [...]} when a rule failed on a side
 * (its findings are then missing there); nothing when none did. */
static int rule_errors(cJSON *sect, const cJSON *a, const cJSON *b)
{
    const cJSON *ea = cJSON_GetObjectItemCaseSensitive(a, "rule_errors");
    const cJSON *eb = cJSON_GetObjectItemCaseSensitive(b, "rule_errors");
    cJSON *o;

    if (!cJSON_GetArraySize(ea) && !cJSON_GetArraySize(eb))
        return 0;
    o = cJSON_CreateObject();
    return put(sect, "rule_errors", o) ||
           put(o, "a", ea ? cJSON_Duplicate(ea, 1) : cJSON_CreateArray()) ||
           put(o, "b", eb ? cJSON_Duplicate(eb, 1) : cJSON_CreateArray());
}

int diff_findings(cJSON *out, const cJSON *a, const cJSON *b)
{
    const cJSON *fa = cJSON_GetObjectItemCaseSensitive(a, "findings");
    const cJSON *fb = cJSON_GetObjectItemCaseSensitive(b, "findings");
    size_t na = 0, nb = 0;
    fref *ra, *rb;
    cJSON *sect;
    int bad;

    if (!cJSON_IsArray(fa) || !cJSON_IsArray(fb)) /* a side without them */
        return !cJSON_AddNullToObject(out, "findings");
    if (!(sect = cJSON_AddObjectToObject(out, "findings")))
        return -1;
    ra = refs_of(fa, &na);
    rb = refs_of(fb, &nb);
    bad = !ra || !rb || pair_up(ra, na, rb, nb) || fill(sect, ra, na, rb, nb) ||
          rule_errors(sect, a, b);
    free(ra);
    free(rb);
    return bad ? -1 : 0;
}
