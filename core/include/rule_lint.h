/*
 * rule_lint.h - `optipipe rules lint` (docs/writing-rules.md): the checks
 * of a rule pack that read its metadata and text and never run a check
 * function. The command prints them; the server can lint an uploaded pack
 * with the same code (out: a memory stream).
 */
#ifndef OP_CORE_RULE_LINT_H
#define OP_CORE_RULE_LINT_H

#include <stdio.h>

#include "rules.h"

typedef struct rule_lint {
    FILE *out;          /* one line a problem ("FILE: ID: what"), borrowed;
                         * NULL: stdout */
    unsigned problems;  /* found so far */
    unsigned rules;     /* rules linted so far */
    /* When set, each problem goes here instead of out: the file, the
     * rule's id (NULL for the pack as a whole) and what is wrong, all
     * borrowed for the call (the server answers them as JSON). */
    void (*found)(void *ud, const char *file, const char *rule,
                  const char *what);
    void *ud;
} rule_lint;

/* Loads the pack in dir as analyze loads it (untrusted, isolated, under
 * lim) and checks each rule: a docs page (not still saying TODO), a test
 * file, every option read has a default and every default is read (also
 * by the pack's lib/). A pack that does not load is one problem. */
void rule_lint_dir(rule_lint *l, const rule_limits *lim, const char *dir);

/* rule_lint_dir over every rule pack under root (rules_pack_names: not
 * mappings/); a root that cannot be read is one problem. */
void rule_lint_packs(rule_lint *l, const rule_limits *lim, const char *root);

/* The severities rule r may give a finding itself (`severity = "..."`
 * literals inside its functions), as emits[SEV_INFO..SEV_ERROR] = 1; a
 * severity computed elsewhere is not seen. Reads r->file. */
void rule_lint_severities(const rule_meta *r, int emits[3]);

#endif
